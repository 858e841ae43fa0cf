// The one mapping between Loom's texture formats and Vulkan's: the runtime's images, the
// renderer's uploads and the C ABI's imported and exported images all use it.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>

#include "runtime/common/kernel_abi.h"

namespace loom::vk {

// The VkFormat of Loom's images of `format`.
VkFormat vk_format(TextureFormat format);
// The TextureFormat whose images have `format`; false when Loom has none.
bool texture_format_of(VkFormat format, TextureFormat* out);
// Bytes of one texel of `format` (as a host Texture stores it).
uint32_t texel_bytes(TextureFormat format);

}  // namespace loom::vk
