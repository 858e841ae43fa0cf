// SPIRV-Tools behind three calls: the validator every emitted module must pass, the
// disassembler (`loom spirv`), and the optional performance optimizer.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace loom::codegen {

// "" when `words` is a valid module for the Vulkan its SPIR-V version goes with (1.0 for
// SPIR-V 1.0, 1.1 for 1.3, 1.2 for 1.5), else the validator's messages.
std::string validate_spirv(const std::vector<uint32_t>& words);
// Assembly text with friendly names.
std::string disassemble_spirv(const std::vector<uint32_t>& words);
// SPIRV-Tools' performance passes (spirv-opt -O), or the passes of `flags` ("--ccp") in
// order when given; throws loom::Error if a flag is unknown or the optimizer fails.
std::vector<uint32_t> optimize_spirv(const std::vector<uint32_t>& words,
                                     const std::vector<std::string>& flags = {});
// The flags of the passes spirv-opt -O runs, in order, each once.
std::vector<std::string> performance_pass_flags();

}  // namespace loom::codegen
