// GDB's JIT interface (gdb manual, "JIT Compilation Interface"): every loaded kernel image is
// listed in __jit_debug_descriptor as an in-memory ELF object whose section addresses are
// where the loader placed each section, so a debugger names kernel functions (and lines when
// the object has DWARF) and unwinds through them with their .eh_frame. GDB finds the
// descriptor and puts a breakpoint on __jit_debug_register_code by symbol name, reading the
// list when it attaches and the new or removed entry each time the function is called.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

// The layout and names GDB reads: fixed by the interface, unmangled, version 1.
extern "C" {
enum { JIT_NOACTION = 0, JIT_REGISTER_FN = 1, JIT_UNREGISTER_FN = 2 };

struct jit_code_entry {
  jit_code_entry* next_entry;
  jit_code_entry* prev_entry;
  const char* symfile_addr;
  uint64_t symfile_size;
};

struct jit_descriptor {
  uint32_t version;
  uint32_t action_flag;  // JIT_*
  jit_code_entry* relevant_entry;
  jit_code_entry* first_entry;
};

// One per process (see gdb_jit.cpp); read it only while holding a GdbJitLock.
// The names are GDB's JIT interface: GDB looks these symbols up by name.
extern jit_descriptor __jit_debug_descriptor;  // NOLINT(bugprone-reserved-identifier)
void __jit_debug_register_code();              // NOLINT(bugprone-reserved-identifier)
}

namespace loom::cpu {

// Held while the descriptor's list changes; tests walking the list hold it too.
class GdbJitLock {
 public:
  GdbJitLock();
  ~GdbJitLock();
  GdbJitLock(const GdbJitLock&) = delete;
  GdbJitLock& operator=(const GdbJitLock&) = delete;
};

// One object listed for debuggers while this lives.
class GdbJitEntry {
 public:
  // `symfile`: an ELF object a debugger can read, with the loaded sections' sh_addr set.
  explicit GdbJitEntry(std::vector<uint8_t> symfile);
  ~GdbJitEntry();
  GdbJitEntry(const GdbJitEntry&) = delete;
  GdbJitEntry& operator=(const GdbJitEntry&) = delete;

 private:
  std::vector<uint8_t> symfile_;
  jit_code_entry entry_{};
};

}  // namespace loom::cpu
