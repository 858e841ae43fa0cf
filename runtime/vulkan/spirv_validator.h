// SPIRV-Tools' validator for SPIR-V that Loom's compiler did not just write: an AOT module's
// blobs pass it before the driver sees them (runtime/aot/module_device.cpp). The JIT's SPIR-V
// was validated when it was compiled (compiler/codegen_spirv/spirv_tools.h) and skips it.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace loom::vk {

// "" when `words` is a valid module for the Vulkan its SPIR-V version goes with (SPIR-V 1.0:
// Vulkan 1.0, 1.1 to 1.3: Vulkan 1.1, 1.4 and 1.5: Vulkan 1.2, later: Vulkan 1.3), the
// environment the compiler validated it in; otherwise the validator's messages. Whether the
// device takes that version is the runtime's check (VulkanRuntime::load).
std::string validate_spirv(std::span<const uint32_t> words);

}  // namespace loom::vk
