// Cameras and PNG files: no device needed.
#include <gtest/gtest.h>

#include <zlib.h>

#include <cstdio>
#include <fstream>

#include "runtime/common/error.h"
#include "runtime/render/camera.h"
#include "runtime/render/mesh.h"
#include "runtime/render/png.h"
#include "tests/render/reference_image.h"

namespace loom::render_test {
namespace {

using render::Bounds;
using render::Camera;
using render::CameraMode;
using render::Mat4;
using render::Rect;
using render::Vec3;
using render::Vec4;

// Frame pixel of world point `p` seen by `camera` in `viewport`.
void project(const Camera& camera, const Rect& viewport, Vec3 p, float* x, float* y,
             float* depth = nullptr) {
  Vec4 c = camera.view_projection(viewport) * Vec4{p.x, p.y, p.z, 1};
  *x = viewport.x + (c.x / c.w * 0.5f + 0.5f) * viewport.width;
  *y = viewport.y + (c.y / c.w * 0.5f + 0.5f) * viewport.height;
  if (depth) *depth = c.z / c.w;
}

TEST(Camera, PlanarFitPanAndZoomAtTheCursor) {
  Camera camera;
  Bounds b;
  b.add(Vec3{2, 1, 0});
  b.add(Vec3{6, 3, 0});
  Rect viewport{100, 50, 400, 200};  // a sub-rectangle, aspect 2
  camera.fit(b, 2.0f);
  float x, y;
  project(camera, viewport, b.center(), &x, &y);
  EXPECT_NEAR(x, 300, 1e-3);
  EXPECT_NEAR(y, 150, 1e-3);
  project(camera, viewport, {6, 3, 0}, &x, &y);  // the box fills the width, with a margin
  EXPECT_GT(x, 480);
  EXPECT_LT(x, 500);
  EXPECT_LT(y, 150);  // world y up, frame y down

  // Zooming keeps the world point under the cursor in place.
  Vec3 under = camera.world_at(420, 90, viewport);
  camera.scroll(3, 420, 90, viewport);
  project(camera, viewport, under, &x, &y);
  EXPECT_NEAR(x, 420, 1e-2);
  EXPECT_NEAR(y, 90, 1e-2);
  // Panning moves the content with the cursor.
  Vec3 before = camera.world_at(300, 150, viewport);
  camera.drag(render::DragButton::Left, 25, -10, viewport);
  project(camera, viewport, before, &x, &y);
  EXPECT_NEAR(x, 325, 1e-2);
  EXPECT_NEAR(y, 140, 1e-2);
}

TEST(Camera, OrbitFitTurnAndDepth) {
  Camera camera;
  camera.mode = CameraMode::Orbit;
  Bounds b;
  b.add(Vec3{-1, -1, -1});
  b.add(Vec3{1, 1, 1});
  Rect viewport{0, 0, 300, 300};
  camera.fit(b, 1.0f);
  // Every corner of the box is inside the viewport, in front of the camera.
  for (int k = 0; k < 8; ++k) {
    Vec3 p{k & 1 ? 1.f : -1.f, k & 2 ? 1.f : -1.f, k & 4 ? 1.f : -1.f};
    float x, y, d;
    project(camera, viewport, p, &x, &y, &d);
    EXPECT_GT(x, 0);
    EXPECT_LT(x, 300);
    EXPECT_GT(y, 0);
    EXPECT_LT(y, 300);
    EXPECT_GT(d, 0);
    EXPECT_LT(d, 1);
  }
  // Nearer points have smaller depth; y up is up on screen.
  float x, y_top, y_bottom, d_near, d_far;
  project(camera, viewport, {0, 0, 1}, &x, &y_top, &d_near);
  project(camera, viewport, {0, 0, -1}, &x, &y_bottom, &d_far);
  EXPECT_LT(d_near, d_far);
  project(camera, viewport, {0, 1, 0}, &x, &y_top);
  project(camera, viewport, {0, -1, 0}, &x, &y_bottom);
  EXPECT_LT(y_top, y_bottom);
  // Dragging right turns the eye towards -x; pitch stops short of the pole.
  camera.drag(render::DragButton::Left, 100, 0, viewport);
  EXPECT_LT(camera.eye().x, 0);
  camera.drag(render::DragButton::Left, 0, 100000, viewport);
  EXPECT_LT(camera.pitch, 1.5708f);
  float distance = camera.distance;
  camera.scroll(2, 150, 150, viewport);
  EXPECT_LT(camera.distance, distance);
  Vec3 target = camera.target;
  camera.drag(render::DragButton::Right, 30, 0, viewport);
  EXPECT_GT(length(camera.target - target), 0);
}

// A PNG written with every row filter (none, sub, up, average, Paeth) reads back exactly.
TEST(Png, ReadsEveryRowFilterAndRejectsDamage) {
  const int w = 7, h = 5;
  RgbaImage image{w, h, std::vector<uint8_t>(w * h * 4)};
  for (size_t i = 0; i < image.pixels.size(); ++i)
    image.pixels[i] = static_cast<uint8_t>(i * 37 + (i / 9) * 11);
  std::vector<uint8_t> raw;
  auto px = [&](int x, int y, int c) -> int { return x < 0 || y < 0 ? 0 : image.at(x, y)[c]; };
  for (int y = 0; y < h; ++y) {
    int filter = y % 5;
    raw.push_back(static_cast<uint8_t>(filter));
    for (int x = 0; x < w; ++x)
      for (int c = 0; c < 4; ++c) {
        int a = px(x - 1, y, c), b = px(x, y - 1, c), cc = px(x - 1, y - 1, c), v = px(x, y, c);
        int p = a + b - cc, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - cc);
        int pred = filter == 0              ? 0
                   : filter == 1            ? a
                   : filter == 2            ? b
                   : filter == 3            ? (a + b) / 2
                   : (pa <= pb && pa <= pc) ? a
                   : pb <= pc               ? b
                                            : cc;
        raw.push_back(static_cast<uint8_t>(v - pred));
      }
  }
  uLongf size = compressBound(static_cast<uLong>(raw.size()));
  std::vector<uint8_t> packed(size);
  ASSERT_EQ(compress(packed.data(), &size, raw.data(), static_cast<uLong>(raw.size())), Z_OK);
  packed.resize(size);
  auto chunk = [](std::vector<uint8_t>& out, const char* type, const std::vector<uint8_t>& data) {
    auto u32 = [&](uint32_t v) {
      for (int s = 24; s >= 0; s -= 8) out.push_back(static_cast<uint8_t>(v >> s));
    };
    u32(static_cast<uint32_t>(data.size()));
    size_t start = out.size();
    out.insert(out.end(), type, type + 4);
    out.insert(out.end(), data.begin(), data.end());
    u32(static_cast<uint32_t>(crc32(0, out.data() + start, static_cast<uInt>(out.size() - start))));
  };
  std::vector<uint8_t> file = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  chunk(file, "IHDR", {0, 0, 0, w, 0, 0, 0, h, 8, 6, 0, 0, 0});
  chunk(file, "IDAT", packed);
  chunk(file, "IEND", {});
  std::string path = output_path("filters.png");
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(file.data()), static_cast<std::streamsize>(file.size()));
  RgbaImage back = read_png(path);
  EXPECT_EQ(back.width, w);
  EXPECT_EQ(back.height, h);
  EXPECT_EQ(back.pixels, image.pixels);

  // Our writer's output reads back too.
  write_png(output_path("roundtrip.png"), image);
  EXPECT_EQ(read_png(output_path("roundtrip.png")).pixels, image.pixels);

  file[file.size() - 20] ^= 0x40;  // inside IDAT: the checksum no longer matches
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(file.data()), static_cast<std::streamsize>(file.size()));
  try {
    read_png(path);
    ADD_FAILURE() << "damaged PNG read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("checksum"), std::string::npos) << e.what();
  }
  EXPECT_THROW(read_png(output_path("no_such.png")), Error);
}

TEST(Mesh, NormalsFollowPositions) {
  // Two triangles of a unit square in the xy plane, counter-clockwise from +z.
  std::vector<float> p = {0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0};
  std::vector<uint32_t> idx = {0, 1, 2, 0, 2, 3};
  std::vector<float> n(12);
  render::vertex_normals(p.data(), 4, idx, n.data());
  for (int v = 0; v < 4; ++v) EXPECT_FLOAT_EQ(n[v * 3 + 2], 1.0f);
  // Folded along the diagonal 0-2: the corners get their own triangle's normal, the shared
  // vertices the average.
  p[5] = 1;  // vertex 1 lifted
  render::vertex_normals(p.data(), 4, idx, n.data());
  EXPECT_NEAR(n[1 * 3 + 2], 1 / std::sqrt(3.0f), 1e-5);
  EXPECT_FLOAT_EQ(n[3 * 3 + 2], 1.0f);
}

}  // namespace
}  // namespace loom::render_test
