#include "runtime/vulkan/texture_format.h"

namespace loom::vk {

VkFormat vk_format(TextureFormat format) {
  switch (format) {
    case TextureFormat::R32F: return VK_FORMAT_R32_SFLOAT;
    case TextureFormat::RG32F: return VK_FORMAT_R32G32_SFLOAT;
    case TextureFormat::RGBA32F: return VK_FORMAT_R32G32B32A32_SFLOAT;
    case TextureFormat::RGBA8: return VK_FORMAT_R8G8B8A8_UNORM;
  }
  return VK_FORMAT_UNDEFINED;
}

bool texture_format_of(VkFormat format, TextureFormat* out) {
  for (TextureFormat f :
       {TextureFormat::R32F, TextureFormat::RG32F, TextureFormat::RGBA32F, TextureFormat::RGBA8})
    if (vk_format(f) == format) {
      *out = f;
      return true;
    }
  return false;
}

uint32_t texel_bytes(TextureFormat format) {
  // RGBA8 packs four channels in one 32-bit word; the float formats store 4 bytes a channel.
  return format == TextureFormat::RGBA8 ? 4u : 4u * static_cast<uint32_t>(texture_channels(format));
}

}  // namespace loom::vk
