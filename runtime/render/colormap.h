// The colour ramp of `loom run --png` and of the render shaders' default colour map
// (shaders/colormap.glsl holds the same stops; a render test checks they agree): dark blue ->
// teal -> yellow, perceptually ordered and readable in grey.
#pragma once

#include <cstdint>

namespace loom {

// `t` is clamped to [0, 1]; writes 3 bytes of 8-bit RGB.
void colormap_ramp(double t, uint8_t* rgb);

}  // namespace loom
