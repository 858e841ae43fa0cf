// Hand-written SPIR-V for tests: assembly text to words (SPIRV-Tools' assembler; link
// SPIRV-Tools-static), and small edits of the words that no assembler would write.
#pragma once

#include <spirv-tools/libspirv.hpp>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace loom::test {

// The words of `text` (ids as written); throws std::runtime_error with the assembler's message.
inline std::vector<uint32_t> assemble_spirv(const std::string& text,
                                            spv_target_env env = SPV_ENV_VULKAN_1_1) {
  spvtools::SpirvTools tools(env);
  std::string messages;
  tools.SetMessageConsumer(
      [&](spv_message_level_t, const char*, const spv_position_t& at, const char* m) {
        messages += "line " + std::to_string(at.line + 1) + ": " + m + "\n";
      });
  std::vector<uint32_t> words;
  if (!tools.Assemble(text, &words, SPV_TEXT_TO_BINARY_OPTION_PRESERVE_NUMERIC_IDS))
    throw std::runtime_error("cannot assemble the test's SPIR-V: " + messages);
  return words;
}

// `text` with its one occurrence of `from` replaced by `to`; throws when `from` is not there
// exactly once (a test editing the wrong thing would prove nothing).
inline std::string replace_once(std::string text, const std::string& from, const std::string& to) {
  size_t at = text.find(from);
  if (at == std::string::npos || text.find(from, at + 1) != std::string::npos)
    throw std::runtime_error("the test's SPIR-V does not hold '" + from + "' exactly once");
  return text.replace(at, from.size(), to);
}

// The word index of the first instruction with opcode `op` (after the 5-word header).
inline size_t find_instruction(const std::vector<uint32_t>& words, uint32_t op) {
  for (size_t at = 5; at < words.size() && (words[at] >> 16) != 0; at += words[at] >> 16)
    if ((words[at] & 0xffff) == op) return at;
  throw std::runtime_error("the test's SPIR-V has no instruction of opcode " + std::to_string(op));
}

// The word index of the module's last instruction.
inline size_t last_instruction(const std::vector<uint32_t>& words) {
  size_t last = 5;
  for (size_t at = 5; at < words.size() && (words[at] >> 16) != 0; at += words[at] >> 16) last = at;
  return last;
}

inline std::vector<uint8_t> spirv_bytes(const std::vector<uint32_t>& words) {
  std::vector<uint8_t> bytes(words.size() * 4);
  for (size_t i = 0; i < words.size(); ++i)
    for (int b = 0; b < 4; ++b) bytes[4 * i + b] = static_cast<uint8_t>(words[i] >> (8 * b));
  return bytes;
}

}  // namespace loom::test
