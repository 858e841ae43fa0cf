// A 2-d or 3-d texture: texels row-major (x fastest), channels interleaved, as f32 or, for
// rgba8, unorm bytes. The view's shape is width, height, depth. The dimensionality is what
// the texture was created with: a 3-d texture of depth 1 stays 3-d.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "runtime/common/kernel_abi.h"
#include "runtime/host/aligned_buffer.h"

namespace loom::host {

class Texture {
 public:
  // Extents must lie in [1, INT32_MAX] and the memory must be had; otherwise loom::Error
  // names the texture (`name`, when given) and the extent or byte count. `allocate` false
  // checks the same but takes no memory (data() null, bytes() 0; texel access is an error):
  // a program loaded only to be checked.
  Texture(TextureFormat format, int64_t width, int64_t height, const std::string& name = "",
          bool allocate = true);  // 2-d
  Texture(TextureFormat format, int64_t width, int64_t height, int64_t depth,
          const std::string& name = "", bool allocate = true);  // 3-d
  // A texture with no host memory: `key` stands for device memory a runtime knows by it (an
  // imported image); data() returns the key, bytes() 0, and texel access is an error.
  static Texture device_only(const void* key, TextureFormat format, int ndim, int64_t width,
                             int64_t height, int64_t depth, const std::string& name = "");

  TextureFormat format() const { return format_; }
  int width() const { return width_; }
  int height() const { return height_; }
  int depth() const { return depth_; }
  int ndim() const { return ndim_; }
  int channels() const { return texture_channels(format_); }
  uint8_t* data() const { return key_ ? key_ : buffer_.data(); }
  size_t bytes() const { return buffer_.size(); }
  bool has_host_memory() const { return key_ == nullptr; }

  // Texel access as normalised floats; missing channels read as 0, alpha as 1.
  std::array<float, 4> read(int x, int y, int z = 0) const;
  void write(int x, int y, int z, const std::array<float, 4>& rgba);

  ResourceView view() const;

 private:
  Texture(TextureFormat format, int ndim, int64_t width, int64_t height, int64_t depth,
          const std::string& name, bool allocate = true);
  size_t texel_offset(int x, int y, int z) const;

  TextureFormat format_;
  int ndim_ = 2, width_ = 0, height_ = 0, depth_ = 1;
  AlignedBuffer buffer_;
  uint8_t* key_ = nullptr;  // device_only
};

}  // namespace loom::host
