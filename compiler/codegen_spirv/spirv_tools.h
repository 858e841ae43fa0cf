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
// SPIRV-Tools' performance passes; throws loom::Error if the optimizer fails.
std::vector<uint32_t> optimize_spirv(const std::vector<uint32_t>& words);

}  // namespace loom::codegen
