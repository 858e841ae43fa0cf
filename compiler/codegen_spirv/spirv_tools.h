// SPIRV-Tools behind three calls: the validator every emitted module must pass, the
// disassembler (`loom spirv`), and the optional performance optimizer.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace loom::codegen {

// "" when `words` is a valid module for Vulkan 1.2, else the validator's messages.
std::string validate_spirv(const std::vector<uint32_t>& words);
// Assembly text with friendly names.
std::string disassemble_spirv(const std::vector<uint32_t>& words);
// SPIRV-Tools' performance passes; throws loom::Error if the optimizer fails.
std::vector<uint32_t> optimize_spirv(const std::vector<uint32_t>& words);

}  // namespace loom::codegen
