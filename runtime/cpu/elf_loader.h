// Loads an ELF64 x86-64 relocatable object (as compiler/codegen_llvm emits it: PIC, small
// code model) into executable memory without LLVM. Every SHF_ALLOC section is laid out in one
// mapping with the GOT and call stubs for far externals beside the code; relocations are
// applied, undefined symbols resolved from the process (dlsym) when kernels may import them
// (kernel_may_import), then code is made R+X, constants read-only and data RW. Every offset
// in the object, and every address a relocation computes, is checked before use, so a corrupt
// or truncated object is a loom::Error, never a crash. A loaded image is visible to tools
// while it lives: its .eh_frame registered with the unwinder (unwind_frames.h) and the object
// listed for debuggers through GDB's JIT interface (gdb_jit.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/common/error.h"

namespace loom::cpu {

class GdbJitEntry;

// A symbol the object defines, where it was loaded.
struct ElfSymbol {
  const uint8_t* address = nullptr;
  uint64_t size = 0;  // as the symbol table says
  bool code = false;  // in an executable section
  bool data = false;  // in a loaded section other than code: [address, address + size) is mapped
};

struct ElfLoadOptions {
  // Calls to external functions always go through their stubs, as when the process's
  // libraries lie beyond +-2 GiB of the image (rare by itself; tests force it).
  bool always_use_stubs = false;
  // Which undefined symbols the object may import from the process; empty: kernel_may_import.
  // (Tests widen it to load hand-written objects that call the C library.)
  std::function<bool(std::string_view name)> may_import;
};

// The symbols compiled kernels call outside their own code: the math library (libm's float
// and double functions), libmvec's vector forms of them (_ZGV...), memcpy, memmove and
// memset. Nothing else of the process is reachable from a kernel's object.
bool kernel_may_import(std::string_view name);

// One object in memory; unmapped when destroyed.
class ElfImage {
 public:
  // Throws loom::Error at `place` when the object is malformed or truncated, uses what the
  // loader does not support (the message names it), computes an address outside the image,
  // or needs a symbol it may not import or the process lacks.
  static std::unique_ptr<ElfImage> load(std::span<const uint8_t> object, const Place& place,
                                        const ElfLoadOptions& options = {});
  ~ElfImage();
  ElfImage(const ElfImage&) = delete;
  ElfImage& operator=(const ElfImage&) = delete;

  // A global or weak symbol defined by the object; nullopt when it defines none by that name.
  std::optional<ElfSymbol> find(std::string_view name) const;
  // The NUL-terminated string at `p` when it lies wholly inside the mapping.
  std::optional<std::string_view> string_at(const void* p) const;
  size_t mapped_bytes() const { return size_; }

 private:
  friend class ElfLinker;
  ElfImage() = default;

  struct Named {
    uint32_t name = 0;  // offset in names_
    ElfSymbol symbol;
  };
  uint8_t* base_ = nullptr;
  size_t size_ = 0;
  const uint8_t* eh_frame_ = nullptr;            // registered with the unwinder (unwind_frames.h)
  std::unique_ptr<GdbJitEntry> debugger_entry_;  // listed for debuggers (gdb_jit.h)
  std::string names_;                            // the names of symbols_, each NUL-terminated
  std::vector<Named> symbols_;
};

// The vectorised math library that objects may call (_ZGVdN8v_sinf, ...), made visible to
// symbol resolution once per process; absent on non-glibc systems, which is not an error.
void load_vector_math_library();

}  // namespace loom::cpu
