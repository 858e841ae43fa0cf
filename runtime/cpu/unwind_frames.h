// Unwind tables of loaded kernels. The object's .eh_frame is loaded and relocated with its
// code (elf_loader.h), checked here the way libgcc's unwinder will read it, and registered
// with libgcc, so C++ unwinding, backtrace() and profilers' stack walks go through kernel
// frames. libgcc parses a registered table lazily, in whatever thread next unwinds, and
// aborts the process on what it cannot decode: a table is registered only after every entry,
// encoding and call-frame instruction in it has passed check_eh_frame.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace loom::cpu {

struct EhFrameCheck {
  size_t fdes = 0;      // frame description entries: one per function with unwind information
  std::string problem;  // why the table may not be registered; empty when it may
};

// `table`: a relocated .eh_frame where it lies in memory (PC-relative pointers are read
// against these addresses), without the zero-length terminator the loader appends. Every
// function it describes must lie in [code_begin, code_end). Accepts what compilers emit for
// x86-64 code that never throws: CIE versions 1 and 3, augmentations "", "z", "zR", "zS",
// "zRS", absolute or PC-relative pointers of 2, 4 or 8 bytes, and the call-frame
// instructions other than DWARF expressions, on registers 0-16 (rax..r15 and the return
// address, all the columns libgcc's x86-64 unwinder has). Personality routines and
// language-specific data ('P', 'L') are refused: kernels have no exception handlers.
EhFrameCheck check_eh_frame(std::span<const uint8_t> table, uintptr_t code_begin,
                            uintptr_t code_end);

// libgcc's convention (glibc systems): the argument is the start of an .eh_frame section that
// ends in a zero-length entry, not a single FDE as LLVM's libunwind takes on Apple systems.
// Only a table that passed check_eh_frame with at least one FDE may be registered, and each
// registered table must be deregistered before its memory is unmapped.
void register_eh_frame(const uint8_t* table);
void deregister_eh_frame(const uint8_t* table);

}  // namespace loom::cpu
