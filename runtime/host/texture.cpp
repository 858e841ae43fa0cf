#include "runtime/host/texture.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "runtime/common/error.h"

namespace loom::host {

namespace {
size_t channel_bytes(TextureFormat f) { return f == TextureFormat::RGBA8 ? 1 : 4; }
}  // namespace

Texture::Texture(TextureFormat format, int64_t width, int64_t height, const std::string& name,
                 bool allocate)
    : Texture(format, 2, width, height, 1, name, allocate) {}

Texture::Texture(TextureFormat format, int64_t width, int64_t height, int64_t depth,
                 const std::string& name, bool allocate)
    : Texture(format, 3, width, height, depth, name, allocate) {}

Texture Texture::device_only(const void* key, TextureFormat format, int ndim, int64_t width,
                             int64_t height, int64_t depth, const std::string& name) {
  const std::string what = name.empty() ? "texture" : "texture '" + name + "'";
  if (!key) throw Error(what + " has a null key");
  if (ndim != 2 && ndim != 3)
    throw Error(what + " has " + std::to_string(ndim) + " dimensions; textures have 2 or 3");
  Texture t(format, ndim, 1, 1, 1, name);  // one texel, dropped below
  for (int64_t n : {width, height, depth})
    if (n < 1 || n > INT32_MAX)
      throw Error(what + " has extent " + std::to_string(n) +
                  "; texture extents must be in [1, 2^31)");
  t.width_ = static_cast<int>(width);
  t.height_ = static_cast<int>(height);
  t.depth_ = ndim == 3 ? static_cast<int>(depth) : 1;
  t.buffer_ = AlignedBuffer();
  t.key_ = static_cast<uint8_t*>(const_cast<void*>(key));
  return t;
}

Texture::Texture(TextureFormat format, int ndim, int64_t width, int64_t height, int64_t depth,
                 const std::string& name, bool allocate)
    : format_(format), ndim_(ndim) {
  const std::string what = name.empty() ? "texture" : "texture '" + name + "'";
  std::vector<int64_t> shape = {width, height, depth};
  shape.resize(static_cast<size_t>(ndim));
  for (int64_t n : shape)
    if (n < 1)
      throw Error(what + " has extent " + std::to_string(n) + "; texture extents must be positive");
  StorageSize size =
      storage_size(shape, int64_t{channels()} * static_cast<int64_t>(channel_bytes(format)), what);
  width_ = static_cast<int>(width);
  height_ = static_cast<int>(height);
  depth_ = static_cast<int>(depth);
  if (allocate) buffer_ = AlignedBuffer(size.bytes, what);
}

size_t Texture::texel_offset(int x, int y, int z) const {
  if (key_) throw Error("the texture has no host memory (it lives on a device only)");
  if (!buffer_.data()) throw Error("the texture has no memory (its program is only checked)");
  if (x < 0 || y < 0 || z < 0 || x >= width_ || y >= height_ || z >= depth_)
    throw Error("texel (" + std::to_string(x) + ", " + std::to_string(y) + ", " +
                std::to_string(z) + ") outside the texture");
  size_t texel = (static_cast<size_t>(z) * static_cast<size_t>(height_) + static_cast<size_t>(y)) *
                     static_cast<size_t>(width_) +
                 static_cast<size_t>(x);
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
