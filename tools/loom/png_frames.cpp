#include "tools/loom/png_frames.h"

#include <algorithm>
#include <cmath>

#include "engine_plugin/include/loom/program.h"
#include "runtime/common/error.h"
#include "runtime/render/colormap.h"

namespace loom {

std::vector<uint8_t> colorize(const ArrayView& v, int* width, int* height) {
  if (v.shape.size() != 2) throw Error("only 2-d fields and ndarrays can be written as PNG");
  *height = static_cast<int>(v.shape[0]);
  *width = static_cast<int>(v.shape[1]);
  size_t n = static_cast<size_t>(*width) * static_cast<size_t>(*height);
  auto at = [&](size_t i) { return v.component(i, 0); };
  double lo = n ? at(0) : 0, hi = lo;
  for (size_t i = 0; i < n; ++i) {
    double x = at(i);
    if (std::isfinite(x)) lo = std::min(lo, x), hi = std::max(hi, x);
  }
  std::vector<uint8_t> rgba(n * 4, 255);
  for (size_t i = 0; i < n; ++i)
    colormap_ramp(hi > lo ? (at(i) - lo) / (hi - lo) : 0.0, &rgba[i * 4]);
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
      rgba[i * 4 + static_cast<size_t>(c)] = static_cast<uint8_t>(
          std::clamp(texels[i * static_cast<size_t>(channels) + static_cast<size_t>(c)], 0.0f,
                     1.0f) *
              255.0f +
          0.5f);
  return rgba;
}

}  // namespace loom
