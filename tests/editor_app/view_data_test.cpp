// What the viewport shows: the choices per document, the sample documents' views, and the
// host data read from a running program (points, colours, images in x-y order, textures).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "compiler/graph/document_json.h"
#include "editor/app/view_data.h"
#include "runtime/common/error.h"
#include "runtime/render/camera.h"

namespace loom::editor {
namespace {

std::string sample(const std::string& name) {
  return std::string(LOOM_SOURCE_DIR) + "/assets/graphs/" + name + ".loom.json";
}

ProgramOptions quiet() {
  ProgramOptions o;
  o.backend = Backend::Cpu;
  o.offline_cache = false;
  o.warn = [](const std::string&) {};
  return o;
}

TEST(ViewData, EverySampleNamesAViewItCanShow) {
  for (const char* name : {"heat", "life", "julia", "mpm88", "nbody", "cloth"}) {
    graph::Document doc = graph::load_document_file(sample(name));
    ASSERT_FALSE(doc.view.empty()) << name;
    graph::ViewSettings v = default_view(doc);
    EXPECT_EQ(v, doc.view) << name;
    std::vector<graph::ViewSettings> all = view_choices(doc);
    ASSERT_FALSE(all.empty());
    EXPECT_EQ(all.front(), doc.view) << name;
    for (const graph::ViewSettings& c : all) {
      std::string key;
      EXPECT_EQ(graph::view_problem(doc, c, &key), "") << name << ": " << view_label(c);
    }
  }
}

TEST(ViewData, ChoicesFollowTheResourceTypes) {
  graph::Document doc = graph::load_document_file(sample("mpm88"));
  doc.view = {};
  std::vector<std::string> labels;
  for (const graph::ViewSettings& c : view_choices(doc)) labels.push_back(view_label(c));
  // x, v: 1-d 2-vectors (points only); C: matrices (nothing); J: 1-d scalars (nothing);
  // grid_v: 2-d 2-vectors (points and image); grid_m: 2-d scalars (image).
  std::vector<std::string> expected = {"x as points", "v as points", "grid_v as points",
                                       "grid_v as image", "grid_m as image"};
  EXPECT_EQ(labels, expected);
  EXPECT_EQ(view_label(default_view(doc)), "x as points");
  graph::Document empty;
  EXPECT_TRUE(default_view(empty).empty());
  EXPECT_EQ(view_label(default_view(empty)), "nothing");
}

TEST(ViewData, PointsAndTheirColoursComeFromTheProgram) {
  Program p(quiet());
  p.load_file(sample("mpm88"));
  p.run_pipeline("init");
  graph::ViewSettings v = p.document().view;  // x coloured by v
  PointsSnapshot s = read_points(p, v);
  ArrayView x = p.array("x"), vel = p.array("v");
  ASSERT_EQ(s.count, 2048u);
  ASSERT_EQ(s.dims, 2);
  ASSERT_EQ(s.scalars.size(), 2048u);
  for (size_t e : {size_t{0}, size_t{777}, size_t{2047}}) {
    EXPECT_EQ(s.positions[e * 2], static_cast<float>(x.component(e, 0)));
    EXPECT_EQ(s.positions[e * 2 + 1], static_cast<float>(x.component(e, 1)));
    EXPECT_FLOAT_EQ(s.scalars[e],
                    static_cast<float>(std::hypot(vel.component(e, 0), vel.component(e, 1))));
  }
}

TEST(ViewData, TwoDimensionalArraysBecomeImagesWithIndexZeroAlongX) {
  graph::Document doc = graph::load_document(R"({"format": "loom-graph", "version": 2,
    "fields": [{"name": "s", "type": "i32", "shape": [3, 2]}, {"name": "w", "type": "f32x3", "shape": [3, 2], "layout": "soa"}]})",
                                             "img.loom.json");
  Program p(quiet());
  p.load(doc);
  ArrayView s = p.array("s");
  for (int i = 0; i < 6; ++i)
    reinterpret_cast<int32_t*>(s.data)[i] = 10 * (i / 2) + i % 2;  // s[i, j] = 10 i + j
  ArrayView w = p.array("w");
  for (int i = 0; i < 18; ++i)
    reinterpret_cast<float*>(w.data)[i] = static_cast<float>(i);  // SoA: component-major
  graph::ViewSettings v;
  v.show = "s";
  v.as = "image";
  ImageSnapshot img = read_image(p, v);
  EXPECT_EQ(img.format, TextureFormat::R32F);
  ASSERT_EQ(img.width, 3u);
  ASSERT_EQ(img.height, 2u);
  const float* t = reinterpret_cast<const float*>(img.texels.data());
  for (uint32_t y = 0; y < 2; ++y)
    for (uint32_t x = 0; x < 3; ++x)
      EXPECT_EQ(t[y * 3 + x], static_cast<float>(10 * x + y)) << x << "," << y;
  v.show = "w";
  img = read_image(p, v);
  EXPECT_EQ(img.format, TextureFormat::RGBA32F);
  t = reinterpret_cast<const float*>(img.texels.data());
  // texel (x=2, y=1) is element [2, 1] = flat 5: components 5, 6 + 5, 12 + 5, alpha 1.
  const float* texel = t + (1 * 3 + 2) * 4;
  EXPECT_EQ(texel[0], 5.0f);
  EXPECT_EQ(texel[1], 11.0f);
  EXPECT_EQ(texel[2], 17.0f);
  EXPECT_EQ(texel[3], 1.0f);
}

TEST(ViewData, TexturesAreCopiedAsTheyAre) {
  Program p(quiet());
  p.load_file(sample("julia"));
  p.run_pipeline("init");
  if (p.has_pipeline("step")) p.run_pipeline("step");
  ImageSnapshot img = read_image(p, p.document().view);
  TextureView t = p.texture("image");
  EXPECT_EQ(img.format, TextureFormat::RGBA8);
  EXPECT_EQ(img.width, 512u);
  EXPECT_EQ(img.height, 512u);
  ASSERT_EQ(img.texels.size(), t.bytes);
  EXPECT_EQ(std::memcmp(img.texels.data(), t.data, t.bytes), 0);
}

TEST(ViewData, AResourceThatNoLongerFitsTheViewIsAnErrorNamingIt) {
  Program p(quiet());
  p.load_file(sample("heat"));
  graph::ViewSettings v;
  v.show = "temperature";
  v.as = "points";  // a view written for another version of the document
  try {
    read_points(p, v);
    ADD_FAILURE() << "scalars shown as points";
  } catch (const Error& e) {
    EXPECT_NE(
        std::string(e.what()).find("'temperature' as points but its elements have 1 components"),
        std::string::npos)
        << e.what();
  }
}

TEST(ViewData, TheColourMapSpansTheDataUnlessARangeIsFixed) {
  Program p(quiet());
  p.load_file(sample("heat"));
  p.run_pipeline("init");
  if (p.has_pipeline("step")) p.run_pipeline("step");
  ImageSnapshot img = read_image(p, p.document().view);  // temperature, scalars
  ASSERT_TRUE(img.colormapped());
  const float* t = reinterpret_cast<const float*>(img.texels.data());
  float lo = t[0], hi = t[0];
  for (size_t i = 0; i < size_t{img.width} * img.height; ++i)
    lo = std::min(lo, t[i]), hi = std::max(hi, t[i]);
  EXPECT_EQ(img.value_min, lo);
  EXPECT_EQ(img.value_max, hi);
  EXPECT_LT(lo, hi);

  ValueRange automatic = colormap_range(ColorRange{}, img.value_min, img.value_max);
  EXPECT_EQ(automatic.min, lo);
  EXPECT_EQ(automatic.max, hi);
  ValueRange fixed = colormap_range(ColorRange{true, -1.0f, 2.0f}, img.value_min, img.value_max);
  EXPECT_EQ(fixed.min, -1.0f);
  EXPECT_EQ(fixed.max, 2.0f);
  // The data moving does not move a fixed range.
  fixed = colormap_range(ColorRange{true, -1.0f, 2.0f}, 50.0f, 60.0f);
  EXPECT_EQ(fixed.min, -1.0f);
  EXPECT_EQ(fixed.max, 2.0f);
  // An empty fixed range still spans something (equal ends would mean "auto" to the renderer).
  ValueRange flat = colormap_range(ColorRange{true, 3.0f, 3.0f}, 0.0f, 1.0f);
  EXPECT_EQ(flat.min, 3.0f);
  EXPECT_GT(flat.max, 3.0f);

  // Points coloured by a resource: the range of their scalars.
  Program m(quiet());
  m.load_file(sample("mpm88"));
  m.run_pipeline("init");
  m.run_pipeline("step");
  PointsSnapshot s = read_points(m, m.document().view);
  ASSERT_FALSE(s.scalars.empty());
  EXPECT_EQ(s.scalar_min, *std::min_element(s.scalars.begin(), s.scalars.end()));
  EXPECT_EQ(s.scalar_max, *std::max_element(s.scalars.begin(), s.scalars.end()));
  // Colours (a 2-vector image) have no colour map.
  graph::ViewSettings grid;
  grid.show = "grid_v";
  grid.as = "image";
  EXPECT_FALSE(read_image(m, grid).colormapped());
}

TEST(ViewData, TheValueUnderTheCursorIsTheElementThere) {
  graph::Document doc = graph::load_document(R"({"format": "loom-graph", "version": 2,
    "fields": [{"name": "s", "type": "f32", "shape": [3, 2]}]})",
                                             "hover.loom.json");
  Program p(quiet());
  p.load(doc);
  ArrayView a = p.array("s");
  for (int i = 0; i < 6; ++i)
    reinterpret_cast<float*>(a.data)[i] = static_cast<float>(10 * (i / 2) + i % 2);  // 10 i + j
  graph::ViewSettings v;
  v.show = "s";
  v.as = "image";
  ImageSnapshot img = read_image(p, v);
  // The image spans x in [0, 1], y in [0, 2/3]: texel (i, j) is the square from (i/3, j/3).
  std::optional<HoveredValue> h = image_value_at(img, 2.5f / 3, 1.5f / 3);
  ASSERT_TRUE(h.has_value());
  EXPECT_EQ(h->index, (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(h->element, 5u);  // [2, 1] in a 3 x 2 array
  EXPECT_EQ(h->values, (std::vector<double>{21.0}));
  h = image_value_at(img, 0.1f, 0.1f);
  ASSERT_TRUE(h.has_value());
  EXPECT_EQ(h->index, (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(h->values, (std::vector<double>{0.0}));
  EXPECT_FALSE(image_value_at(img, -0.01f, 0.1f).has_value());
  EXPECT_FALSE(image_value_at(img, 0.5f, 0.7f).has_value());  // above the last row
  EXPECT_FALSE(image_value_at(img, 1.01f, 0.1f).has_value());

  // Through a camera framing the image: the pixel where texel (1, 0)'s centre is drawn.
  render::Camera cam;
  render::Bounds b;
  b.add(render::Vec3{0, 0, 0});
  b.add(render::Vec3{1, 2.0f / 3, 0});
  render::Rect rect{10, 20, 300, 200};
  cam.fit(b, rect.width / rect.height);
  render::Vec4 c = cam.view_projection(rect) * render::Vec4{1.5f / 3, 0.5f / 3, 0, 1};
  float px = rect.x + (c.x / c.w * 0.5f + 0.5f) * rect.width,
        py = rect.y + (c.y / c.w * 0.5f + 0.5f) * rect.height;
  render::Vec3 w = cam.world_at(px, py, rect);
  h = image_value_at(img, w.x, w.y);
  ASSERT_TRUE(h.has_value());
  EXPECT_EQ(h->index, (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(h->values, (std::vector<double>{10.0}));

  // Points: the nearest within the radius, with its colour's value.
  PointsSnapshot pts;
  pts.dims = 2;
  pts.count = 3;
  pts.positions = {0.0f, 0.0f, 0.5f, 0.5f, -0.5f, 0.5f};
  pts.scalars = {1.0f, 2.0f, 3.0f};
  render::Mat4 identity;  // clip = world: (x, y) lands at pixel (50 + 50 x, 50 + 50 y)
  render::Rect square{0, 0, 100, 100};
  h = point_value_at(pts, identity, square, 74, 76, 5);
  ASSERT_TRUE(h.has_value());
  EXPECT_EQ(h->element, 1u);
  EXPECT_EQ(h->values, (std::vector<double>{0.5, 0.5}));
  EXPECT_TRUE(h->has_color_value);
  EXPECT_EQ(h->color_value, 2.0);
  h = point_value_at(pts, identity, square, 27, 73, 5);
  ASSERT_TRUE(h.has_value());
  EXPECT_EQ(h->element, 2u);
  EXPECT_FALSE(point_value_at(pts, identity, square, 62, 62, 5).has_value());  // none that close
}

}  // namespace
}  // namespace loom::editor
