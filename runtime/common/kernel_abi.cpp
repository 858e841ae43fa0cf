#include "runtime/common/kernel_abi.h"

namespace loom {

const char* param_kind_name(ParamKind k) {
  switch (k) {
    case ParamKind::Value: return "value";
    case ParamKind::Ndarray: return "ndarray";
    case ParamKind::Texture: return "texture";
    case ParamKind::Argpack: return "argpack";
  }
  return "?";
}

const char* resource_kind_name(ResourceKind k) {
  switch (k) {
    case ResourceKind::Field: return "field";
    case ResourceKind::Ndarray: return "ndarray";
    case ResourceKind::Texture: return "texture";
  }
  return "?";
}

const char* resource_access_name(uint8_t access) {
  static constexpr const char* kNames[] = {"", "r", "w", "rw", "a", "ra", "wa", "rwa"};
  return access <= kAllResourceAccess ? kNames[access] : "?";
}

const char* layout_name(Layout l) {
  switch (l) {
    case Layout::AoS: return "aos";
    case Layout::SoA: return "soa";
  }
  return "?";
}

int texture_channels(TextureFormat f) {
  switch (f) {
    case TextureFormat::R32F: return 1;
    case TextureFormat::RG32F: return 2;
    case TextureFormat::RGBA32F: return 4;
    case TextureFormat::RGBA8: return 4;
  }
  return 4;
}

const char* texture_format_name(TextureFormat f) {
  switch (f) {
    case TextureFormat::R32F: return "r32f";
    case TextureFormat::RG32F: return "rg32f";
    case TextureFormat::RGBA32F: return "rgba32f";
    case TextureFormat::RGBA8: return "rgba8";
  }
  return "?";
}

bool parse_texture_format(const std::string& name, TextureFormat* out) {
  for (TextureFormat f :
       {TextureFormat::R32F, TextureFormat::RG32F, TextureFormat::RGBA32F, TextureFormat::RGBA8}) {
    if (name != texture_format_name(f)) continue;
    *out = f;
    return true;
  }
  return false;
}

std::vector<uint32_t> return_offsets(const KernelABI& abi, uint32_t* total_size) {
  std::vector<uint32_t> offsets;
  uint32_t at = 0;
  for (const ValueType& t : abi.returns) {
    auto size = static_cast<uint32_t>(size_of(t.scalar));
    for (int c = 0; c < t.components(); ++c) {
      at = (at + size - 1) / size * size;
      offsets.push_back(at);
      at += size;
    }
  }
  if (total_size) *total_size = at;
  return offsets;
}

}  // namespace loom
