// PNG files of 8-bit RGBA pixels: one writer for the `loom` command line's frames and the
// render library's screenshots, and a reader for the reference images tests compare against.
// Depends on zlib only (library loom_image), so the command line need not link Vulkan or GLFW.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace loom {

// Row-major, top row first, 4 bytes per pixel.
struct RgbaImage {
  int width = 0;
  int height = 0;
  std::vector<uint8_t> pixels;
  const uint8_t* at(int x, int y) const {
    return &pixels[(static_cast<size_t>(y) * width + x) * 4];
  }
};

// Throws loom::Error naming `path` when the file cannot be written.
void write_png(const std::string& path, int width, int height, const std::vector<uint8_t>& rgba);
void write_png(const std::string& path, const RgbaImage& image);

// Reads 8-bit grey, grey+alpha, RGB, RGBA and palette PNGs (not interlaced) as RGBA. Throws
// loom::Error naming `path` for a missing, damaged or unsupported file.
RgbaImage read_png(const std::string& path);

}  // namespace loom
