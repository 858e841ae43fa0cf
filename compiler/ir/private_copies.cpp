#include "compiler/ir/private_copies.h"

#include <limits>

#include "compiler/ir/inst.h"

namespace loom::ir {

namespace {
constexpr uint64_t kAlign = 64;  // a cache line: no two copies (or flags and a copy) share one
uint64_t round_up(uint64_t v) { return (v + kAlign - 1) / kAlign * kAlign; }
}  // namespace

std::optional<uint64_t> fixed_scalars(const ResourceDesc& r) {
  if (r.kind != ResourceKind::Field || r.ndim < 0 || r.ndim > kMaxDims || r.components < 1)
    return std::nullopt;
  uint64_t n = static_cast<uint64_t>(r.components);
  for (int d = 0; d < r.ndim; ++d) {
    int64_t e = r.shape[static_cast<size_t>(d)];
    if (e < 0 || (e > 0 && n > std::numeric_limits<uint32_t>::max() / static_cast<uint64_t>(e)))
      return std::nullopt;
    n *= static_cast<uint64_t>(e);
  }
  return n;
}

std::optional<PrivateCopies> private_copies_layout(const ResourceDesc& r, int copies,
                                                   uint32_t offset) {
  std::optional<uint64_t> scalars = fixed_scalars(r);
  if (!scalars || copies < 1 || offset % kAlign != 0 || r.dtype == Scalar::Bool)
    return std::nullopt;
  PrivateCopies p;
  p.copies = copies;
  p.offset = offset;
  p.scalars = *scalars;
  uint64_t bytes = *scalars * static_cast<uint64_t>(size_of(r.dtype));
  uint64_t stride = round_up(bytes), first = offset + round_up(4 * static_cast<uint64_t>(copies));
  if (first + stride * static_cast<uint64_t>(copies) > std::numeric_limits<int32_t>::max())
    return std::nullopt;
  p.copy_bytes = static_cast<uint32_t>(bytes);
  p.stride = static_cast<uint32_t>(stride);
  p.first = static_cast<uint32_t>(first);
  return p;
}

bool has_private_copies(const Inst& inst) { return inst.op == Op::ElementPtr && inst.bits != 0; }

std::optional<PrivateCopies> private_copies_of(const Kernel& kernel, const Inst& element_ptr,
                                               std::string* problem) {
  auto fail = [&](const char* why) -> std::optional<PrivateCopies> {
    if (problem) *problem = why;
    return std::nullopt;
  };
  int slot = element_ptr.resource_slot();
  if (slot < 0 || static_cast<size_t>(slot) >= kernel.abi.resources.size())
    return fail("private copies of a resource slot out of range");
  if (element_ptr.bits > static_cast<uint64_t>(kMaxPrivateCopies) || element_ptr.temp_offset() < 0)
    return fail("private copies without a valid count or place");
  std::optional<PrivateCopies> p = private_copies_layout(
      kernel.abi.resources[static_cast<size_t>(slot)], static_cast<int>(element_ptr.bits),
      static_cast<uint32_t>(element_ptr.temp_offset()));
  if (!p) return fail("private copies of a resource without a fixed numeric shape");
  if (p->end() > kernel.abi.temps_size) return fail("private copies outside the temporaries");
  return p;
}

}  // namespace loom::ir
