// PNG output for `loom run --png`: 2-d scalar fields through a colour map, rgba8 textures
// as they are.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace loom {

struct ArrayView;
struct TextureView;

// 8-bit RGBA pixels, row-major, top row first.
void write_png(const std::string& path, int width, int height, const std::vector<uint8_t>& rgba);

// Colours a 2-d scalar field (or the first component of a vector field) with a perceptual
// ramp between its minimum and maximum. Throws loom::Error for other shapes.
std::vector<uint8_t> colorize(const ArrayView& view, int* width, int* height);
// Converts a 2-d texture (any format) to RGBA8.
std::vector<uint8_t> texture_rgba8(const TextureView& view, int* width, int* height);

}  // namespace loom
