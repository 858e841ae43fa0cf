#include "runtime/render/png.h"

#include <zlib.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>

#include "runtime/common/error.h"

namespace loom {

namespace {

void put_u32(std::vector<uint8_t>& out, uint32_t v) {
  for (int s = 24; s >= 0; s -= 8) out.push_back(static_cast<uint8_t>(v >> s));
}

uint32_t get_u32(const uint8_t* p) {
  return uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | uint32_t{p[3]};
}

void chunk(std::ofstream& f, const char* type, const std::vector<uint8_t>& data) {
  std::vector<uint8_t> buf;
  put_u32(buf, static_cast<uint32_t>(data.size()));
  buf.insert(buf.end(), type, type + 4);
  buf.insert(buf.end(), data.begin(), data.end());
  uLong crc = crc32(0, buf.data() + 4, static_cast<uInt>(buf.size() - 4));
  put_u32(buf, static_cast<uint32_t>(crc));
  f.write(reinterpret_cast<const char*>(buf.data()), static_cast<std::streamsize>(buf.size()));
}

const uint8_t kSignature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};

uint8_t paeth(int a, int b, int c) {
  int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
  if (pa <= pb && pa <= pc) return static_cast<uint8_t>(a);
  return static_cast<uint8_t>(pb <= pc ? b : c);
}

}  // namespace

void write_png(const std::string& path, int width, int height, const std::vector<uint8_t>& rgba) {
  if (width <= 0 || height <= 0 ||
      rgba.size() < static_cast<size_t>(width) * static_cast<size_t>(height) * 4)
    throw Error(Place{path}, "cannot write a PNG of " + std::to_string(width) + "x" +
                                 std::to_string(height) + " pixels from " +
                                 std::to_string(rgba.size()) + " bytes");
  std::vector<uint8_t> raw;
  raw.reserve(static_cast<size_t>(height) * (static_cast<size_t>(width) * 4 + 1));
  for (int y = 0; y < height; ++y) {
    raw.push_back(0);  // filter: none
    const uint8_t* row = rgba.data() + static_cast<size_t>(y) * static_cast<size_t>(width) * 4;
    raw.insert(raw.end(), row, row + static_cast<size_t>(width) * 4);
  }
  uLongf packed_size = compressBound(static_cast<uLong>(raw.size()));
  std::vector<uint8_t> packed(packed_size);
  if (compress2(packed.data(), &packed_size, raw.data(), static_cast<uLong>(raw.size()), 6) != Z_OK)
    throw Error(Place{path}, "PNG compression failed");
  packed.resize(packed_size);
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) throw Error(Place{path}, "cannot write PNG file");
  f.write(reinterpret_cast<const char*>(kSignature), 8);
  std::vector<uint8_t> header;
  put_u32(header, static_cast<uint32_t>(width));
  put_u32(header, static_cast<uint32_t>(height));
  header.insert(header.end(), {8, 6, 0, 0, 0});  // 8-bit RGBA, deflate, no filter, no interlace
  chunk(f, "IHDR", header);
  chunk(f, "IDAT", packed);
  chunk(f, "IEND", {});
  if (!f) throw Error(Place{path}, "failed writing PNG file");
}

void write_png(const std::string& path, const RgbaImage& image) {
  write_png(path, image.width, image.height, image.pixels);
}

RgbaImage read_png(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error(Place{path}, "cannot open PNG file");
  std::vector<uint8_t> file((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  auto bad = [&](const std::string& why) {
    return Error(Place{path}, "not a PNG file this reader handles: " + why);
  };
  if (file.size() < 8 || std::memcmp(file.data(), kSignature, 8) != 0)
    throw bad("no PNG signature");

  uint32_t width = 0, height = 0;
  int depth = 0, color = -1, interlace = 0;
  std::vector<uint8_t> idat, palette, transparency;
  size_t at = 8;
  bool ended = false;
  while (!ended) {
    if (at + 12 > file.size()) throw bad("truncated (no IEND chunk)");
    uint32_t length = get_u32(&file[at]);
    if (length > file.size() - at - 12) throw bad("truncated chunk");
    const uint8_t* type = &file[at + 4];
    const uint8_t* data = &file[at + 8];
    uLong crc = crc32(0, type, length + 4);
    if (crc != get_u32(data + length)) throw bad("chunk checksum mismatch (damaged file)");
    if (std::memcmp(type, "IHDR", 4) == 0) {
      if (length < 13) throw bad("short IHDR");
      width = get_u32(data);
      height = get_u32(data + 4);
      depth = data[8];
      color = data[9];
      interlace = data[12];
    } else if (std::memcmp(type, "PLTE", 4) == 0) {
      palette.assign(data, data + length);
    } else if (std::memcmp(type, "tRNS", 4) == 0) {
      transparency.assign(data, data + length);
    } else if (std::memcmp(type, "IDAT", 4) == 0) {
      idat.insert(idat.end(), data, data + length);
    } else if (std::memcmp(type, "IEND", 4) == 0) {
      ended = true;
    }
    at += 12 + length;
  }
  int channels = color == 0   ? 1
                 : color == 2 ? 3
                 : color == 3 ? 1
                 : color == 4 ? 2
                 : color == 6 ? 4
                              : 0;
  if (width == 0 || height == 0 || width > (1u << 15) || height > (1u << 15))
    throw bad("missing or huge image size");
  if (channels == 0 || depth != 8)
    throw bad("only 8-bit grey, RGB, palette and RGBA images are read");
  if (interlace != 0) throw bad("interlaced images are not read");
  if (color == 3 && palette.size() < 3) throw bad("palette image without a palette");

  size_t stride = static_cast<size_t>(width) * static_cast<size_t>(channels);
  std::vector<uint8_t> raw(static_cast<size_t>(height) * (stride + 1));
  uLongf raw_size = raw.size();
  if (uncompress(raw.data(), &raw_size, idat.data(), static_cast<uLong>(idat.size())) != Z_OK ||
      raw_size != raw.size())
    throw bad("image data does not inflate to " + std::to_string(width) + "x" +
              std::to_string(height) + " pixels");

  // Undo the per-row filters in place; `prior` is the previous (already unfiltered) row.
  std::vector<uint8_t> zero(stride, 0);
  for (uint32_t y = 0; y < height; ++y) {
    uint8_t* row = &raw[y * (stride + 1)];
    uint8_t filter = row[0];
    uint8_t* cur = row + 1;
    const uint8_t* prior = y ? &raw[(y - 1) * (stride + 1) + 1] : zero.data();
    for (size_t i = 0; i < stride; ++i) {
      int left = i >= static_cast<size_t>(channels) ? cur[i - channels] : 0;
      int up = prior[i];
      int up_left = i >= static_cast<size_t>(channels) ? prior[i - channels] : 0;
      switch (filter) {
        case 0: break;
        case 1: cur[i] = static_cast<uint8_t>(cur[i] + left); break;
        case 2: cur[i] = static_cast<uint8_t>(cur[i] + up); break;
        case 3: cur[i] = static_cast<uint8_t>(cur[i] + (left + up) / 2); break;
        case 4: cur[i] = static_cast<uint8_t>(cur[i] + paeth(left, up, up_left)); break;
        default: throw bad("unknown row filter " + std::to_string(filter));
      }
    }
  }

  RgbaImage image;
  image.width = static_cast<int>(width);
  image.height = static_cast<int>(height);
  image.pixels.resize(static_cast<size_t>(width) * height * 4);
  for (uint32_t y = 0; y < height; ++y) {
    const uint8_t* src = &raw[y * (stride + 1) + 1];
    uint8_t* dst = &image.pixels[static_cast<size_t>(y) * width * 4];
    for (uint32_t x = 0; x < width; ++x, src += channels, dst += 4) {
      switch (color) {
        case 0: dst[0] = dst[1] = dst[2] = src[0], dst[3] = 255; break;
        case 4: dst[0] = dst[1] = dst[2] = src[0], dst[3] = src[1]; break;
        case 2: dst[0] = src[0], dst[1] = src[1], dst[2] = src[2], dst[3] = 255; break;
        case 6: std::memcpy(dst, src, 4); break;
        case 3: {
          size_t k = src[0];
          if (3 * k + 2 >= palette.size()) throw bad("palette index out of range");
          dst[0] = palette[3 * k], dst[1] = palette[3 * k + 1], dst[2] = palette[3 * k + 2];
          dst[3] = k < transparency.size() ? transparency[k] : 255;
          break;
        }
      }
    }
  }
  return image;
}

}  // namespace loom
