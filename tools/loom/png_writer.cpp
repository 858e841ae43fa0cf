#include "tools/loom/png_writer.h"

#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>

#include "engine_plugin/include/loom/program.h"
#include "runtime/common/error.h"

namespace loom {

namespace {

void put_u32(std::vector<uint8_t>& out, uint32_t v) {
  for (int s = 24; s >= 0; s -= 8) out.push_back(static_cast<uint8_t>(v >> s));
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

double value_at(const ArrayView& v, size_t i) {
  const uint8_t* p = v.data + i * static_cast<size_t>(size_of(v.dtype));
  switch (v.dtype) {
    case Scalar::F32: { float f; std::memcpy(&f, p, 4); return f; }
    case Scalar::F64: { double d; std::memcpy(&d, p, 8); return d; }
    case Scalar::I32: { int32_t x; std::memcpy(&x, p, 4); return x; }
    case Scalar::U32: { uint32_t x; std::memcpy(&x, p, 4); return x; }
    case Scalar::U8: case Scalar::Bool: return *p;
    case Scalar::I8: return static_cast<int8_t>(*p);
    case Scalar::I64: { int64_t x; std::memcpy(&x, p, 8); return static_cast<double>(x); }
    default: return 0;
  }
}

// A dark-blue -> teal -> yellow ramp (perceptually ordered, readable in grey).
void ramp(double t, uint8_t* rgb) {
  static const double stops[5][3] = {{0.05, 0.03, 0.25}, {0.23, 0.32, 0.55}, {0.13, 0.57, 0.55},
                                     {0.48, 0.82, 0.33}, {0.99, 0.91, 0.14}};
  t = std::clamp(t, 0.0, 1.0) * 4.0;
  int i = std::min(3, static_cast<int>(t));
  double f = t - i;
  for (int c = 0; c < 3; ++c) rgb[c] = static_cast<uint8_t>(255.0 * (stops[i][c] * (1 - f) + stops[i + 1][c] * f));
}

}  // namespace

void write_png(const std::string& path, int width, int height, const std::vector<uint8_t>& rgba) {
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
  const uint8_t signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  f.write(reinterpret_cast<const char*>(signature), 8);
  std::vector<uint8_t> header;
  put_u32(header, static_cast<uint32_t>(width));
  put_u32(header, static_cast<uint32_t>(height));
  header.insert(header.end(), {8, 6, 0, 0, 0});  // 8-bit RGBA, deflate, no filter, no interlace
  chunk(f, "IHDR", header);
  chunk(f, "IDAT", packed);
  chunk(f, "IEND", {});
  if (!f) throw Error(Place{path}, "failed writing PNG file");
}

std::vector<uint8_t> colorize(const ArrayView& v, int* width, int* height) {
  if (v.shape.size() != 2) throw Error("only 2-d fields and ndarrays can be written as PNG");
  *height = static_cast<int>(v.shape[0]);
  *width = static_cast<int>(v.shape[1]);
  size_t n = static_cast<size_t>(*width) * static_cast<size_t>(*height);
  auto at = [&](size_t i) {  // first component of element i
    return value_at(v, v.layout == Layout::SoA ? i : i * static_cast<size_t>(v.components));
  };
  double lo = n ? at(0) : 0, hi = lo;
  for (size_t i = 0; i < n; ++i) {
    double x = at(i);
    if (std::isfinite(x)) lo = std::min(lo, x), hi = std::max(hi, x);
  }
  std::vector<uint8_t> rgba(n * 4, 255);
  for (size_t i = 0; i < n; ++i) ramp(hi > lo ? (at(i) - lo) / (hi - lo) : 0.0, &rgba[i * 4]);
  return rgba;
}

std::vector<uint8_t> texture_rgba8(const TextureView& t, int* width, int* height) {
  if (t.size.size() != 2) throw Error("only 2-d textures can be written as PNG");
  *width = static_cast<int>(t.size[0]);
  *height = static_cast<int>(t.size[1]);
  size_t n = static_cast<size_t>(*width) * static_cast<size_t>(*height);
  if (t.format == TextureFormat::RGBA8) return std::vector<uint8_t>(t.data, t.data + n * 4);
  int channels = texture_channels(t.format);
  std::vector<uint8_t> rgba(n * 4, 255);
  const auto* texels = reinterpret_cast<const float*>(t.data);
  for (size_t i = 0; i < n; ++i)
    for (int c = 0; c < channels; ++c)
      rgba[i * 4 + static_cast<size_t>(c)] =
          static_cast<uint8_t>(std::clamp(texels[i * static_cast<size_t>(channels) + static_cast<size_t>(c)], 0.0f, 1.0f) * 255.0f + 0.5f);
  return rgba;
}

}  // namespace loom
