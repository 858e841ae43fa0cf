// What the viewport can show of a document, and the host data it draws: the ways each
// resource can be shown (the viewport's menu), the view chosen when the document names none,
// and a resource's values read from the running program as floats for the scene renderer.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "compiler/graph/document.h"
#include "engine_plugin/include/loom/program.h"
#include "runtime/render/math.h"

namespace loom::editor {

// Every valid way of showing the document's resources: 2-/3-vectors as points, 2-d arrays
// and textures as images, in declaration order; the document's own view first.
std::vector<graph::ViewSettings> view_choices(const graph::Document& doc);
// The document's view, else its first choice; empty when there is nothing to show.
graph::ViewSettings default_view(const graph::Document& doc);
// "x as points, coloured by v"
std::string view_label(const graph::ViewSettings& view);

// Points (or a mesh's vertices): `dims` floats per point, and one scalar per point when the
// view colours them (a vector's length).
struct PointsSnapshot {
  std::vector<float> positions;
  int dims = 3;
  size_t count = 0;
  std::vector<float> scalars;
  float scalar_min = 0, scalar_max = 0;  // of the finite scalars (both 0 without any)
};
// An image: texels x fastest, then y, then z. 2-d arrays give r32f (scalars), rg32f
// (2-vectors) or rgba32f (3- and 4-vectors, alpha 1 for 3); element [i, j] is texel (i, j).
struct ImageSnapshot {
  TextureFormat format = TextureFormat::R32F;
  std::vector<uint8_t> texels;
  uint32_t width = 0, height = 0, depth = 1;
  int components = 1;  // per element: the array's (3-vectors fill rgba32f), the texture's channels
  float value_min = 0, value_max = 0;  // of the finite first channel (float formats)
  // Through the colour map: one float channel (r32f), as the scene renderer shows it.
  bool colormapped() const { return format == TextureFormat::R32F; }
};

// Read the program's current values. Throw loom::Error naming the resource when it cannot be
// shown that way (the program's resource differs from what the view expects).
PointsSnapshot read_points(Program& program, const graph::ViewSettings& view);
ImageSnapshot read_image(Program& program, const graph::ViewSettings& view);
// An image of `width` x `height` elements of `components` (1 to 4) from `component(e, c)`,
// element e = i * height + j (C order): what read_image makes of a 2-d array, and of a probe.
ImageSnapshot image_of(int64_t width, int64_t height, int components,
                       const std::function<double(size_t, int)>& component);

// The colour map's range: the data's ("auto", so colours follow the data) or one the user
// fixed (so colours mean the same value from frame to frame).
struct ColorRange {
  bool fixed = false;
  float min = 0, max = 1;  // the fixed range
};
struct ValueRange {
  float min = 0, max = 0;
};
// The range the colour map spans for data in [data_min, data_max]; a fixed range with
// max <= min spans a tiny interval above min (the renderer reads equal ends as "auto").
ValueRange colormap_range(const ColorRange& setting, float data_min, float data_max);

// What is under the cursor. An image's texel (i, j) is the array's element [i, j] (flat
// index i * height + j) or the texture's texel; a point is its element.
struct HoveredValue {
  size_t element = 0;          // flat index (C order)
  std::vector<int64_t> index;  // [i, j] of an image; [element] of a point
  std::vector<double> values;  // the element's components (an rgba8 texel: 0 to 255)
  double color_value = 0;      // points coloured by a resource: the colour's scalar
  bool has_color_value = false;
};
// The texel of a 2-d image at world point (x, y), the image placed as the scene renderer
// places it by default (x in [0, w / max(w, h)], y likewise, texel row 0 at y = 0); nullopt
// outside the image. 3-d textures: slice 0.
std::optional<HoveredValue> image_value_at(const ImageSnapshot& image, float x, float y);
// The point whose centre is nearest to frame pixel (px, py), within `radius` pixels, as
// `view_proj` draws the points into `viewport`; nullopt when none is that close.
std::optional<HoveredValue> point_value_at(const PointsSnapshot& points,
                                           const render::Mat4& view_proj,
                                           const render::Rect& viewport, float px, float py,
                                           float radius);

}  // namespace loom::editor
