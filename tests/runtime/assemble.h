// x86-64 assembly text -> ELF relocatable object, with LLVM's assembler (tests only: the
// runtime never links LLVM). Lets the loader's tests produce every relocation type exactly.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace loom::test {

// Throws std::runtime_error with the assembler's diagnostics when the text does not assemble.
std::vector<uint8_t> assemble_x86_64(const std::string& source);

}  // namespace loom::test
