#include "compiler/codegen_spirv/spirv_tools.h"

#include <spirv-tools/libspirv.hpp>
#include <spirv-tools/optimizer.hpp>

#include "runtime/common/error.h"

namespace loom::codegen {

namespace {

constexpr spv_target_env kEnv = SPV_ENV_VULKAN_1_2;

spvtools::MessageConsumer collect(std::string* out) {
  return [out](spv_message_level_t, const char*, const spv_position_t& at, const char* message) {
    if (!out->empty()) *out += "\n";
    *out += "word " + std::to_string(at.index) + ": " + message;
  };
}

}  // namespace

std::string validate_spirv(const std::vector<uint32_t>& words) {
  spvtools::SpirvTools tools(kEnv);
  std::string messages;
  tools.SetMessageConsumer(collect(&messages));
  if (tools.Validate(words)) return "";
  return messages.empty() ? "invalid SPIR-V" : messages;
}

std::string disassemble_spirv(const std::vector<uint32_t>& words) {
  spvtools::SpirvTools tools(kEnv);
  std::string messages, text;
  tools.SetMessageConsumer(collect(&messages));
  if (!tools.Disassemble(
          words, &text,
          SPV_BINARY_TO_TEXT_OPTION_FRIENDLY_NAMES | SPV_BINARY_TO_TEXT_OPTION_INDENT))
    throw Error("cannot disassemble SPIR-V: " + messages);
  return text;
}

std::vector<uint32_t> optimize_spirv(const std::vector<uint32_t>& words) {
  spvtools::Optimizer opt(kEnv);
  std::string messages;
  opt.SetMessageConsumer(collect(&messages));
  opt.RegisterPerformancePasses();
  std::vector<uint32_t> out;
  if (!opt.Run(words.data(), words.size(), &out)) throw Error("spirv-opt failed: " + messages);
  return out;
}

}  // namespace loom::codegen
