#include "runtime/host/texture.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "runtime/common/error.h"

namespace loom::host {

namespace {
size_t channel_bytes(TextureFormat f) { return f == TextureFormat::RGBA8 ? 1 : 4; }
}  // namespace

Texture::Texture(TextureFormat format, int width, int height, int depth)
    : format_(format), width_(width), height_(height), depth_(depth) {
  if (width < 1 || height < 1 || depth < 1) throw Error("texture extents must be positive");
  buffer_ = AlignedBuffer(static_cast<size_t>(width) * static_cast<size_t>(height) * static_cast<size_t>(depth) *
                          static_cast<size_t>(channels()) * channel_bytes(format));
}

size_t Texture::texel_offset(int x, int y, int z) const {
  if (x < 0 || y < 0 || z < 0 || x >= width_ || y >= height_ || z >= depth_)
    throw Error("texel (" + std::to_string(x) + ", " + std::to_string(y) + ", " + std::to_string(z) +
                ") outside the texture");
  size_t texel = (static_cast<size_t>(z) * static_cast<size_t>(height_) + static_cast<size_t>(y)) *
                     static_cast<size_t>(width_) + static_cast<size_t>(x);
  return texel * static_cast<size_t>(channels()) * channel_bytes(format_);
}

std::array<float, 4> Texture::read(int x, int y, int z) const {
  std::array<float, 4> out{0, 0, 0, 1};
  const uint8_t* p = buffer_.data() + texel_offset(x, y, z);
  for (int c = 0; c < channels(); ++c) {
    if (format_ == TextureFormat::RGBA8) {
      out[static_cast<size_t>(c)] = static_cast<float>(p[c]) * (1.0f / 255.0f);
    } else {
      std::memcpy(&out[static_cast<size_t>(c)], p + 4 * static_cast<size_t>(c), 4);
    }
  }
  return out;
}

void Texture::write(int x, int y, int z, const std::array<float, 4>& rgba) {
  uint8_t* p = buffer_.data() + texel_offset(x, y, z);
  for (int c = 0; c < channels(); ++c) {
    float v = rgba[static_cast<size_t>(c)];
    if (format_ == TextureFormat::RGBA8) {
      p[c] = static_cast<uint8_t>(std::lround(std::clamp(v, 0.0f, 1.0f) * 255.0f));
    } else {
      std::memcpy(p + 4 * static_cast<size_t>(c), &v, 4);
    }
  }
}

ResourceView Texture::view() const {
  ResourceView v{};
  v.data = buffer_.data();
  v.shape[0] = width_;
  v.shape[1] = height_;
  v.shape[2] = depth_;
  return v;
}

}  // namespace loom::host
