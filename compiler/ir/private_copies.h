// Per-thread copies of a resource slot in the kernel temporaries: where an `element_ptr` with
// private copies (`bits` > 0, passes/privatize_scatter.h) lets the CPU backend send a
// parallel task's atomic adds. One region per slot, 64-byte aligned:
//
//   temp_offset:  one i32 flag per copy: 0 free and zero, 1 taken by a running chunk,
//                 2 free and holding sums (to be added into the slot when the task ends)
//   first:        copy 0, then copy 1 every `stride` bytes; each copy is laid out as the
//                 slot's own storage (element_ptr's linear index addresses both alike)
//
// The pass, the verifier and the backend all read the layout from here.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "runtime/common/kernel_abi.h"

namespace loom::ir {

class Inst;
class Kernel;

enum PrivateCopyFlag : int32_t { kCopyFree = 0, kCopyTaken = 1, kCopyHoldsSums = 2 };

// Copies of one slot at most (the verifier's limit; the pass asks for one per thread).
constexpr int kMaxPrivateCopies = 64;

struct PrivateCopies {
  int copies = 0;
  uint32_t offset = 0;      // the region, in the kernel temporaries
  uint64_t scalars = 0;     // scalars of the slot (and of each copy)
  uint32_t copy_bytes = 0;  // bytes of one copy
  uint32_t stride = 0;      // bytes from one copy to the next
  uint32_t first = 0;       // offset of copy 0

  uint32_t flag(int k) const { return offset + 4 * static_cast<uint32_t>(k); }
  uint32_t copy(int k) const { return first + static_cast<uint32_t>(k) * stride; }
  uint64_t end() const {
    return uint64_t{first} + uint64_t{stride} * static_cast<uint64_t>(copies);
  }
};

// Scalars in the storage of `r` (elements times components) when its shape is fixed (a
// field, 0-d included), or none.
std::optional<uint64_t> fixed_scalars(const ResourceDesc& r);

// The layout of `copies` copies of `r` at `offset`, or none when `r` has no fixed shape or
// the region would not fit in 32-bit offsets.
std::optional<PrivateCopies> private_copies_layout(const ResourceDesc& r, int copies,
                                                   uint32_t offset);

// Whether `inst` is an element_ptr with private copies.
bool has_private_copies(const Inst& inst);

// The layout of such an element_ptr's copies, or an error text when it is not valid in
// `kernel` (no fixed shape, outside the temporaries).
std::optional<PrivateCopies> private_copies_of(const Kernel& kernel, const Inst& element_ptr,
                                               std::string* problem = nullptr);

}  // namespace loom::ir
