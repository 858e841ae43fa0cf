// PNG frames through libpng.
#pragma once

#include <cstdint>
#include <string>

namespace host_sample {

// Writes `width` x `height` RGBA8 pixels, top row first; throws std::runtime_error naming
// `path` when it cannot.
void write_png(const std::string& path, uint32_t width, uint32_t height, const uint8_t* rgba);

}  // namespace host_sample
