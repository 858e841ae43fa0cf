#include "runtime/vulkan/spirv_validator.h"

#include <spirv-tools/libspirv.hpp>

namespace loom::vk {

namespace {

// The same mapping as the compiler's (compiler/codegen_spirv/spirv_tools.cpp), which the
// runtime cannot include: a module is checked here in the environment it was written for.
spv_target_env environment_of(std::span<const uint32_t> words) {
  uint32_t version = words.size() > 1 ? words[1] : 0;
  if (version <= 0x00010000) return SPV_ENV_VULKAN_1_0;
  if (version <= 0x00010300) return SPV_ENV_VULKAN_1_1;
  if (version <= 0x00010500) return SPV_ENV_VULKAN_1_2;
  return SPV_ENV_VULKAN_1_3;
}

}  // namespace

std::string validate_spirv(std::span<const uint32_t> words) {
  spvtools::SpirvTools tools(environment_of(words));
  std::string messages;
  tools.SetMessageConsumer(
      [&messages](spv_message_level_t, const char*, const spv_position_t&, const char* text) {
        // One line: the validator puts the offending instruction on a line of its own.
        std::string line;
        for (const char* c = text; *c; ++c)
          if (*c != '\n' && *c != ' ')
            line += *c;
          else if (!line.empty() && line.back() != ' ')
            line += ' ';
        while (!line.empty() && line.back() == ' ') line.pop_back();
        messages += (messages.empty() ? "" : "; ") + line;
      });
  if (tools.Validate(words.data(), words.size())) return "";
  return messages.empty() ? "invalid SPIR-V" : messages;
}

}  // namespace loom::vk
