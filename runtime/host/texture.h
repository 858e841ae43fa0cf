// A 2-d or 3-d texture: texels row-major (x fastest), channels interleaved, as f32 or, for
// rgba8, unorm bytes. The view's shape is width, height, depth.
#pragma once

#include <array>
#include <cstdint>

#include "runtime/common/kernel_abi.h"
#include "runtime/host/aligned_buffer.h"

namespace loom::host {

class Texture {
 public:
  Texture(TextureFormat format, int width, int height, int depth = 1);

  TextureFormat format() const { return format_; }
  int width() const { return width_; }
  int height() const { return height_; }
  int depth() const { return depth_; }
  int ndim() const { return depth_ > 1 ? 3 : 2; }
  int channels() const { return texture_channels(format_); }
  uint8_t* data() const { return buffer_.data(); }
  size_t bytes() const { return buffer_.size(); }

  // Texel access as normalised floats; missing channels read as 0, alpha as 1.
  std::array<float, 4> read(int x, int y, int z = 0) const;
  void write(int x, int y, int z, const std::array<float, 4>& rgba);

  ResourceView view() const;

 private:
  size_t texel_offset(int x, int y, int z) const;

  TextureFormat format_;
  int width_, height_, depth_;
  AlignedBuffer buffer_;
};

}  // namespace loom::host
