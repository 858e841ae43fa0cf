// What the viewport shows: the choices per document, the sample documents' views, and the
// host data read from a running program (points, colours, images in x-y order, textures).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "compiler/graph/document_json.h"
#include "editor/app/view_data.h"
#include "runtime/common/error.h"

namespace loom::editor {
namespace {

std::string sample(const std::string& name) { return std::string(LOOM_SOURCE_DIR) + "/assets/graphs/" + name + ".loom.json"; }

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
  std::vector<std::string> expected = {"x as points", "v as points", "grid_v as points", "grid_v as image", "grid_m as image"};
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
    EXPECT_FLOAT_EQ(s.scalars[e], static_cast<float>(std::hypot(vel.component(e, 0), vel.component(e, 1))));
  }
}

TEST(ViewData, TwoDimensionalArraysBecomeImagesWithIndexZeroAlongX) {
  graph::Document doc = graph::load_document(R"({"format": "loom-graph", "version": 2,
    "fields": [{"name": "s", "type": "i32", "shape": [3, 2]}, {"name": "w", "type": "f32x3", "shape": [3, 2], "layout": "soa"}]})",
                                             "img.loom.json");
  Program p(quiet());
  p.load(doc);
  ArrayView s = p.array("s");
  for (int i = 0; i < 6; ++i) reinterpret_cast<int32_t*>(s.data)[i] = 10 * (i / 2) + i % 2;  // s[i, j] = 10 i + j
  ArrayView w = p.array("w");
  for (int i = 0; i < 18; ++i) reinterpret_cast<float*>(w.data)[i] = static_cast<float>(i);  // SoA: component-major
  graph::ViewSettings v;
  v.show = "s";
  v.as = "image";
  ImageSnapshot img = read_image(p, v);
  EXPECT_EQ(img.format, TextureFormat::R32F);
  ASSERT_EQ(img.width, 3u);
  ASSERT_EQ(img.height, 2u);
  const float* t = reinterpret_cast<const float*>(img.texels.data());
  for (uint32_t y = 0; y < 2; ++y)
    for (uint32_t x = 0; x < 3; ++x) EXPECT_EQ(t[y * 3 + x], static_cast<float>(10 * x + y)) << x << "," << y;
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
    EXPECT_NE(std::string(e.what()).find("'temperature' as points but its elements have 1 components"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace loom::editor
