// Pixels for `loom run --png`: 2-d scalar fields through a colour map, textures as RGBA8.
// The files are written by runtime/render/png.h, the writer the render library shares.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace loom {

struct ArrayView;
struct TextureView;

// Colours a 2-d scalar field (or the first component of a vector field) with a perceptual
// ramp between its minimum and maximum. Throws loom::Error for other shapes.
std::vector<uint8_t> colorize(const ArrayView& view, int* width, int* height);
// Converts a 2-d texture (any format) to RGBA8.
std::vector<uint8_t> texture_rgba8(const TextureView& view, int* width, int* height);

}  // namespace loom
