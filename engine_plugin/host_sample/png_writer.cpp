#include "png_writer.h"

#include <png.h>

#include <stdexcept>

namespace host_sample {

void write_png(const std::string& path, uint32_t width, uint32_t height, const uint8_t* rgba) {
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  image.width = width;
  image.height = height;
  image.format = PNG_FORMAT_RGBA;
  if (!png_image_write_to_file(&image, path.c_str(), 0, rgba, 0, nullptr))
    throw std::runtime_error(path + ": cannot write the PNG: " + image.message);
}

}  // namespace host_sample
