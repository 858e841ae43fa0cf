// Binary form of a compiled kernel (its KernelABI plus the code blob), used by the offline
// compile cache and by AOT modules. Readers check every length, so a corrupt or truncated
// record is an Error, never a crash.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/common/kernel_abi.h"

namespace loom {

struct KernelRecord {
  KernelABI abi;
  std::vector<uint8_t> code;  // CPU: ELF relocatable object; Vulkan: SPIR-V words
};

std::vector<uint8_t> serialize_kernel_record(const KernelRecord& record);
// `what` names the source (a cache file, a module) in error messages.
KernelRecord deserialize_kernel_record(const std::vector<uint8_t>& bytes, const std::string& what);

// 64-bit FNV-1a, for checksums of records.
uint64_t fnv1a64(const uint8_t* data, size_t size, uint64_t seed = 0xcbf29ce484222325ull);
// 32 hex digits from two chained FNV-1a passes: cache keys and content keys.
std::string hash128_hex(const std::string& text);

}  // namespace loom
