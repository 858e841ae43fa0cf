#include "editor/app/view_data.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>

#include "runtime/common/error.h"

namespace loom::editor {

namespace {

using graph::ViewSettings;

ViewSettings make(const std::string& show, const char* as) {
  ViewSettings v;
  v.show = show;
  v.as = as;
  return v;
}

bool valid(const graph::Document& doc, const ViewSettings& v) {
  std::string key;
  return graph::view_problem(doc, v, &key).empty();
}

// The finite values' range of every `stride`-th float; 0, 0 when there is none.
void finite_range(const float* f, size_t count, size_t stride, float* lo, float* hi) {
  float a = std::numeric_limits<float>::max(), b = std::numeric_limits<float>::lowest();
  for (size_t i = 0; i < count; ++i) {
    float v = f[i * stride];
    if (std::isfinite(v)) a = std::min(a, v), b = std::max(b, v);
  }
  *lo = a <= b ? a : 0.0f;
  *hi = a <= b ? b : 0.0f;
}

}  // namespace

std::vector<ViewSettings> view_choices(const graph::Document& doc) {
  std::vector<ViewSettings> out;
  auto add = [&](const ViewSettings& v) {
    if (!valid(doc, v)) return;
    for (const ViewSettings& seen : out)
      if (seen == v) return;
    out.push_back(v);
  };
  if (!doc.view.empty()) add(doc.view);
  auto both = [&](const std::string& name) {  // add() keeps the ways that suit the type
    add(make(name, "points"));
    add(make(name, "image"));
  };
  for (const FieldDesc& f : doc.fields) both(f.name);
  for (const graph::NdarrayDecl& n : doc.ndarrays) both(n.name);
  for (const graph::TextureDecl& t : doc.textures) add(make(t.name, "image"));
  return out;
}

ViewSettings default_view(const graph::Document& doc) {
  std::vector<ViewSettings> all = view_choices(doc);
  return all.empty() ? ViewSettings{} : all.front();
}

std::string view_label(const ViewSettings& v) {
  if (v.empty()) return "nothing";
  std::string s = v.show + " as " + (v.as == "mesh" ? "a mesh" : v.as);
  if (!v.color_by.empty()) s += ", coloured by " + v.color_by;
  return s;
}

PointsSnapshot read_points(Program& program, const ViewSettings& view) {
  ArrayView a = program.array(view.show);
  if (a.components != 2 && a.components != 3)
    throw Error(Place{program.document().path},
                "the viewport shows '" + view.show + "' as " + view.as + " but its elements have " +
                    std::to_string(a.components) + " components (2 or 3 expected)");
  PointsSnapshot s;
  s.dims = a.components;
  s.count = a.elements();
  s.positions.resize(s.count * static_cast<size_t>(s.dims));
  for (size_t e = 0; e < s.count; ++e)
    for (int c = 0; c < s.dims; ++c)
      s.positions[e * static_cast<size_t>(s.dims) + static_cast<size_t>(c)] =
          static_cast<float>(a.component(e, c));
  if (!view.color_by.empty()) {
    ArrayView by = program.array(view.color_by);
    if (by.elements() != s.count)
      throw Error(Place{program.document().path},
                  "the viewport colours '" + view.show + "' by '" + view.color_by +
                      "', which has " + std::to_string(by.elements()) + " elements for " +
                      std::to_string(s.count) + " points");
    s.scalars.resize(s.count);
    for (size_t e = 0; e < s.count; ++e) {
      double sum = 0;
      for (int c = 0; c < by.components; ++c) {
        double x = by.component(e, c);
        sum += x * x;
      }
      s.scalars[e] = static_cast<float>(by.components == 1 ? by.component(e, 0) : std::sqrt(sum));
    }
    finite_range(s.scalars.data(), s.count, 1, &s.scalar_min, &s.scalar_max);
  }
  return s;
}

ImageSnapshot read_image(Program& program, const ViewSettings& view) {
  ImageSnapshot img;
  const graph::Document& doc = program.document();
  if (doc.texture(view.show)) {
    TextureView t = program.texture(view.show);
    img.format = t.format;
    img.width = static_cast<uint32_t>(t.size.at(0));
    img.height = static_cast<uint32_t>(t.size.at(1));
    img.depth = t.size.size() > 2 ? static_cast<uint32_t>(t.size[2]) : 1;
    img.components = texture_channels(t.format);
    img.texels.assign(t.data, t.data + t.bytes);
    if (img.colormapped())
      finite_range(reinterpret_cast<const float*>(img.texels.data()),
                   img.texels.size() / sizeof(float), 1, &img.value_min, &img.value_max);
    return img;
  }
  ArrayView a = program.array(view.show);
  if (a.shape.size() != 2 || a.components > 4)
    throw Error(Place{doc.path},
                "the viewport shows '" + view.show +
                    "' as an image but it is not a 2-d array of scalars or vectors");
  return image_of(a.shape[0], a.shape[1], a.components,
                  [&](size_t e, int c) { return a.component(e, c); });
}

ImageSnapshot image_of(int64_t width, int64_t height, int components,
                       const std::function<double(size_t, int)>& component) {
  ImageSnapshot img;
  img.width = static_cast<uint32_t>(width);
  img.height = static_cast<uint32_t>(height);
  int channels = components == 1 ? 1 : components == 2 ? 2 : 4;
  img.format = channels == 1   ? TextureFormat::R32F
               : channels == 2 ? TextureFormat::RG32F
                               : TextureFormat::RGBA32F;
  size_t w = img.width, h = img.height;
  std::vector<float> texels(w * h * static_cast<size_t>(channels), 1.0f);
  for (size_t i = 0; i < w; ++i)
    for (size_t j = 0; j < h; ++j) {
      size_t e = i * h + j, t = (j * w + i) * static_cast<size_t>(channels);
      for (int c = 0; c < components && c < 4; ++c)
        texels[t + static_cast<size_t>(c)] = static_cast<float>(component(e, c));
    }
  img.components = std::min(components, 4);
  img.texels.resize(texels.size() * sizeof(float));
  std::memcpy(img.texels.data(), texels.data(), img.texels.size());
  if (img.colormapped()) finite_range(texels.data(), w * h, 1, &img.value_min, &img.value_max);
  return img;
}

ValueRange colormap_range(const ColorRange& setting, float data_min, float data_max) {
  if (!setting.fixed) return ValueRange{data_min, data_max};
  float hi = setting.max > setting.min
                 ? setting.max
                 : setting.min + std::max(std::abs(setting.min) * 1e-6f, 1e-6f);
  return ValueRange{setting.min, hi};
}

std::optional<HoveredValue> image_value_at(const ImageSnapshot& image, float x, float y) {
  if (image.width == 0 || image.height == 0 || !std::isfinite(x) || !std::isfinite(y))
    return std::nullopt;
  float m = static_cast<float>(std::max(image.width, image.height));
  double fi = std::floor(static_cast<double>(x) * m), fj = std::floor(static_cast<double>(y) * m);
  if (fi < 0 || fj < 0 || fi >= image.width || fj >= image.height) return std::nullopt;
  size_t i = static_cast<size_t>(fi), j = static_cast<size_t>(fj), w = image.width,
         h = image.height;
  HoveredValue v;
  v.element = i * h + j;
  v.index = {static_cast<int64_t>(i), static_cast<int64_t>(j)};
  size_t channels = static_cast<size_t>(texture_channels(image.format));
  size_t texel = (j * w + i) * channels;
  for (size_t c = 0; c < static_cast<size_t>(image.components) && c < channels; ++c) {
    if (image.format == TextureFormat::RGBA8) {
      v.values.push_back(image.texels[texel + c]);
    } else {
      float f = 0;
      std::memcpy(&f, image.texels.data() + (texel + c) * sizeof(float), sizeof f);
      v.values.push_back(f);
    }
  }
  return v;
}

std::optional<HoveredValue> point_value_at(const PointsSnapshot& points,
                                           const render::Mat4& view_proj,
                                           const render::Rect& viewport, float px, float py,
                                           float radius) {
  size_t best = 0;
  float best_d2 = radius * radius;
  bool found = false;
  size_t dims = static_cast<size_t>(points.dims);
  for (size_t e = 0; e < points.count; ++e) {
    const float* p = points.positions.data() + e * dims;
    render::Vec4 c = view_proj * render::Vec4{p[0], p[1], dims > 2 ? p[2] : 0.0f, 1.0f};
    if (!(c.w > 0)) continue;  // behind an orbit camera's eye
    float sx = viewport.x + (c.x / c.w * 0.5f + 0.5f) * viewport.width;
    float sy = viewport.y + (c.y / c.w * 0.5f + 0.5f) * viewport.height;
    float d2 = (sx - px) * (sx - px) + (sy - py) * (sy - py);
    if (d2 <= best_d2) best = e, best_d2 = d2, found = true;
  }
  if (!found) return std::nullopt;
  HoveredValue v;
  v.element = best;
  v.index = {static_cast<int64_t>(best)};
  for (size_t c = 0; c < dims; ++c) v.values.push_back(points.positions[best * dims + c]);
  if (!points.scalars.empty()) {
    v.color_value = points.scalars[best];
    v.has_color_value = true;
  }
  return v;
}

}  // namespace loom::editor
