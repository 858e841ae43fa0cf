#include "compiler/codegen_spirv/spirv_tools.h"

#include <algorithm>

#include <spirv-tools/libspirv.hpp>
#include <spirv-tools/optimizer.hpp>

#include "runtime/common/error.h"

namespace loom::codegen {

namespace {

// The environment a module's own version (header word 1) asks for: SPIR-V 1.0 is checked as
// Vulkan 1.0 code, 1.3 as Vulkan 1.1, 1.5 as Vulkan 1.2, 1.6 as Vulkan 1.3.
spv_target_env env_of(const std::vector<uint32_t>& words) {
  uint32_t version = words.size() > 1 ? words[1] : 0;
  if (version <= 0x00010000) return SPV_ENV_VULKAN_1_0;
  if (version <= 0x00010300) return SPV_ENV_VULKAN_1_1;
  if (version <= 0x00010500) return SPV_ENV_VULKAN_1_2;
  return SPV_ENV_VULKAN_1_3;
}

spvtools::MessageConsumer collect(std::string* out) {
  return [out](spv_message_level_t, const char*, const spv_position_t& at, const char* message) {
    if (!out->empty()) *out += "\n";
    *out += "word " + std::to_string(at.index) + ": " + message;
  };
}

}  // namespace

std::string validate_spirv(const std::vector<uint32_t>& words) {
  spvtools::SpirvTools tools(env_of(words));
  std::string messages;
  tools.SetMessageConsumer(collect(&messages));
  if (tools.Validate(words)) return "";
  return messages.empty() ? "invalid SPIR-V" : messages;
}

std::string disassemble_spirv(const std::vector<uint32_t>& words) {
  spvtools::SpirvTools tools(env_of(words));
  std::string messages, text;
  tools.SetMessageConsumer(collect(&messages));
  if (!tools.Disassemble(
          words, &text,
          SPV_BINARY_TO_TEXT_OPTION_FRIENDLY_NAMES | SPV_BINARY_TO_TEXT_OPTION_INDENT))
    throw Error("cannot disassemble SPIR-V: " + messages);
  return text;
}

std::vector<uint32_t> optimize_spirv(const std::vector<uint32_t>& words,
                                     const std::vector<std::string>& flags) {
  spvtools::Optimizer opt(env_of(words));
  std::string messages;
  opt.SetMessageConsumer(collect(&messages));
  if (flags.empty())
    opt.RegisterPerformancePasses();
  else if (!opt.RegisterPassesFromFlags(flags))
    throw Error("spirv-opt does not know a pass of " + [&] {
      std::string all;
      for (const std::string& f : flags) all += (all.empty() ? "" : " ") + f;
      return all;
    }() + (messages.empty() ? "" : ": " + messages));
  std::vector<uint32_t> out;
  if (!opt.Run(words.data(), words.size(), &out)) throw Error("spirv-opt failed: " + messages);
  return out;
}

std::vector<std::string> performance_pass_flags() {
  spvtools::Optimizer opt(SPV_ENV_VULKAN_1_2);
  opt.RegisterPerformancePasses();
  std::vector<std::string> flags;
  for (const char* name : opt.GetPassNames()) {
    std::string flag = std::string("--") + name;
    if (std::find(flags.begin(), flags.end(), flag) == flags.end()) flags.push_back(flag);
  }
  return flags;
}

}  // namespace loom::codegen
