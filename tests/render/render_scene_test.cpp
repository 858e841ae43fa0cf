// The scene renderer offscreen on the test device (lavapipe in CI) with validation on:
// points, textures, meshes moved by an array, compared with reference images; errors that
// name the data; uploads only when the data changed.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "runtime/common/error.h"
#include "runtime/render/colormap.h"
#include "runtime/render/scene_renderer.h"
#include "tests/render/reference_image.h"
#include "tests/render/render_test_util.h"

namespace loom::render_test {
namespace {

using render::Camera;
using render::CameraMode;
using render::Frame;
using render::FrameLoop;
using render::SceneRenderer;

constexpr float kPi = 3.14159265f;

// One frame of `scene` over the whole loop, read back.
RgbaImage draw_once(FrameLoop& loop, SceneRenderer& scene, const Camera& camera) {
  Frame f;
  EXPECT_TRUE(loop.begin_frame(&f));
  scene.draw(f, {0, 0, static_cast<float>(f.extent.width), static_cast<float>(f.extent.height)},
             camera);
  loop.capture_frame();
  loop.end_frame();
  return loop.take_capture();
}

void expect_error(const std::function<void()>& fn, const std::vector<std::string>& parts) {
  try {
    fn();
    ADD_FAILURE() << "expected a loom::Error";
  } catch (const Error& e) {
    for (const std::string& p : parts)
      EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
  }
}

TEST_F(RenderTest, PointsSpiral2dThroughColormap) {
  FrameLoop& loop = offscreen(256, 256);
  SceneRenderer scene(loop);
  std::vector<float> xy, s;
  spiral(240, &xy, &s);
  render::PointsLayer& points = scene.add_points();
  render::PointData d;
  d.positions = {"spiral", xy.data(), 240, 2};
  d.scalars = s.data();
  points.update(d, 1);
  points.style.size = 9;
  points.style.shaded = false;
  EXPECT_EQ(points.count(), 240u);
  Camera camera;
  camera.fit(scene.bounds(), 1.0f);
  EXPECT_TRUE(matches_reference(draw_once(loop, scene, camera), "points_spiral_2d"));
}

TEST_F(RenderTest, Points3dSoaWithRgbaOrbitCamera) {
  FrameLoop& loop = offscreen(256, 256);
  SceneRenderer scene(loop);
  // A Fibonacci sphere, stored SoA (all x, then all y, then all z), coloured by position.
  const size_t n = 600;
  std::vector<float> soa(n * 3), rgba(n * 4);
  for (size_t i = 0; i < n; ++i) {
    float y = 1 - 2 * (static_cast<float>(i) + 0.5f) / n, r = std::sqrt(1 - y * y);
    float a = static_cast<float>(i) * 2.39996323f;
    soa[i] = r * std::cos(a), soa[n + i] = y, soa[2 * n + i] = r * std::sin(a);
    rgba[i * 4] = 0.5f + 0.5f * soa[i], rgba[i * 4 + 1] = 0.5f + 0.5f * y,
             rgba[i * 4 + 2] = 0.5f + 0.5f * soa[2 * n + i];
    rgba[i * 4 + 3] = 1;
  }
  render::PointsLayer& points = scene.add_points();
  render::PointData d;
  d.positions = {"sphere", soa.data(), n, 3, 1, n};
  d.rgba = rgba.data();
  points.update(d);
  points.style.size = 10;
  Camera camera;
  camera.mode = CameraMode::Orbit;
  camera.yaw = 0.6f;
  camera.pitch = 0.25f;
  camera.fit(scene.bounds(), 1.0f);
  EXPECT_NEAR(scene.bounds().size().y, 2.0f, 0.01f);
  EXPECT_TRUE(matches_reference(draw_once(loop, scene, camera), "points_sphere_3d"));
}

TEST_F(RenderTest, TextureQuadsInTwoViewportsOfOneFrame) {
  FrameLoop& loop = offscreen(320, 160);
  // Left: an r32f field through the colour map. Right: an rgba8 image, filtered linearly.
  SceneRenderer left(loop), right(loop);
  std::vector<float> field(64 * 48);
  for (int y = 0; y < 48; ++y)
    for (int x = 0; x < 64; ++x)
      field[y * 64 + x] = std::sin(x / 7.0f) * std::cos(y / 5.0f) + y / 48.0f;
  render::TextureLayer& scalar = left.add_texture();
  scalar.update({"heat", TextureFormat::R32F, field.data(), 64, 48});
  std::vector<uint8_t> image(16 * 16 * 4);
  for (int y = 0; y < 16; ++y)
    for (int x = 0; x < 16; ++x) {
      uint8_t* p = &image[(y * 16 + x) * 4];
      bool check = (x / 4 + y / 4) % 2;
      p[0] = static_cast<uint8_t>(x * 16), p[1] = static_cast<uint8_t>(y * 16),
      p[2] = check ? 220 : 40, p[3] = 255;
    }
  render::TextureLayer& color = right.add_texture();
  color.update({"albedo", TextureFormat::RGBA8, image.data(), 16, 16});
  color.style.linear = true;
  Camera lc, rc;
  lc.fit(left.bounds(), 1.0f);
  rc.fit(right.bounds(), 1.0f);
  Frame f;
  ASSERT_TRUE(loop.begin_frame(&f));
  left.draw(f, {0, 0, 160, 160}, lc);
  right.draw(f, {160, 0, 160, 160}, rc);
  loop.capture_frame();
  loop.end_frame();
  EXPECT_TRUE(matches_reference(loop.take_capture(), "texture_quads"));
}

// Each texel covers 16x16 pixels: the centre pixels must be the CPU colour map's colours, so
// shaders/colormap.glsl and runtime/render/colormap.cpp agree; slices of a 3-d texture and
// red-green display are exact.
TEST_F(RenderTest, Texture3dSlicesAndColormapMatchTheCpuRamp) {
  FrameLoop& loop = offscreen(64, 64);
  SceneRenderer scene(loop);
  scene.clear_background = true;
  std::vector<float> values(4 * 4 * 3);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i);
  render::TextureLayer& volume = scene.add_texture();
  volume.update({"volume", TextureFormat::R32F, values.data(), 4, 4, 3});
  volume.style.value_min = 0;
  volume.style.value_max = 47;
  Camera camera;
  camera.target = {0.5f, 0.5f, 0};
  camera.view_height = 1.0f;
  for (uint32_t slice : {0u, 2u, 7u}) {  // 7: clamped to the last slice
    volume.style.slice = slice;
    RgbaImage img = draw_once(loop, scene, camera);
    uint32_t z = std::min(slice, 2u);
    for (int y = 0; y < 4; ++y)
      for (int x = 0; x < 4; ++x) {
        float v = values[(z * 4 + y) * 4 + x] / 47.0f;
        uint8_t want[3];
        colormap_ramp(v, want);
        const uint8_t* got = img.at(x * 16 + 8, (3 - y) * 16 + 8);  // texel row 0 at the bottom
        for (int c = 0; c < 3; ++c)
          EXPECT_NEAR(got[c], want[c], 2)
              << "slice " << slice << " texel " << x << "," << y << " channel " << c;
      }
  }
  // The grey map is the value itself.
  volume.style.colormap = render::Colormap::Grey;
  volume.style.slice = 1;
  RgbaImage grey = draw_once(loop, scene, camera);
  EXPECT_NEAR(grey.at(2 * 16 + 8, 8)[0], std::lround((16 + 12 + 2) / 47.0 * 255),
              1);  // texel (2, 3, 1)
  // rg32f as red-green.
  scene.remove(volume);
  float rg[4 * 2] = {0, 0, 1, 0, 0, 1, 1, 1};
  render::TextureLayer& flow = scene.add_texture();
  flow.update({"flow", TextureFormat::RG32F, rg, 2, 2});
  RgbaImage img = draw_once(loop, scene, camera);
  const uint8_t* top_right = img.at(48, 16);
  EXPECT_EQ(top_right[0], 255);
  EXPECT_EQ(top_right[1], 255);
  EXPECT_EQ(top_right[2], 0);
  const uint8_t* bottom_right = img.at(48, 48);
  EXPECT_EQ(bottom_right[0], 255);
  EXPECT_EQ(bottom_right[1], 0);
  // rgba32f as a colour, through an explicit value range.
  scene.remove(flow);
  float rgba[4] = {0.5f, 1.0f, 1.5f, 1.0f};
  render::TextureLayer& tint = scene.add_texture();
  tint.update({"tint", TextureFormat::RGBA32F, rgba, 1, 1});
  tint.style.value_min = 0;
  tint.style.value_max = 2;
  img = draw_once(loop, scene, camera);
  EXPECT_NEAR(img.at(32, 32)[0], 64, 1);
  EXPECT_NEAR(img.at(32, 32)[1], 128, 1);
  EXPECT_NEAR(img.at(32, 32)[2], 191, 1);
}

// The cloth grid asset, its vertices moved by an array as a simulation's field would, lit
// with normals recomputed from the new positions; the pinned corners drawn as points.
TEST_F(RenderTest, MeshWithPositionsFromAnArray) {
  FrameLoop& loop = offscreen(320, 240);
  SceneRenderer scene(loop);
  render::Mesh mesh = render::Mesh::load_obj(source_path("assets/meshes/cloth_grid.obj"));
  ASSERT_EQ(mesh.vertex_count(), 32u * 32u);  // the cloth sample's 32x32 field
  EXPECT_EQ(mesh.triangle_count(), 2u * 31u * 31u);
  render::MeshLayer& cloth = scene.add_mesh(std::move(mesh));
  // A cloth hanging from its top edge whose lower part curls forward and up, so both sides
  // show (front orange, back blue), with a gentle wave across.
  // Vertex i * 32 + j is field element [i, j]; here i runs across the cloth, j down it.
  std::vector<float> x(32 * 32 * 3);
  for (int i = 0; i < 32; ++i)
    for (int j = 0; j < 32; ++j) {
      float u = i / 31.0f, s = j / 31.0f;  // s: distance down the cloth from the top edge
      const float straight = 0.4f, radius = 0.17f;
      float y = 0.5f - s, z = 0;
      if (s > straight) {
        float phi = (s - straight) / radius;
        y = 0.5f - straight - radius * std::sin(phi);
        z = radius * (1 - std::cos(phi));
      }
      float* p = &x[(i * 32 + j) * 3];
      p[0] = u - 0.5f;
      p[1] = y;
      p[2] = z + 0.06f * std::sin(2 * kPi * u) * s;
    }
  EXPECT_TRUE(cloth.update_positions({"cloth_x", x.data(), 32 * 32, 3}, 1));
  EXPECT_FALSE(cloth.update_positions({"cloth_x", x.data(), 32 * 32, 3}, 1));
  float pins[6] = {
      x[0], x[1], x[2], x[31 * 32 * 3], x[31 * 32 * 3 + 1], x[31 * 32 * 3 + 2]};  // [0, 0], [31, 0]
  render::PointsLayer& pinned = scene.add_points();
  pinned.update(render::PointData{{"pins", pins, 2, 3}});
  pinned.style.size = 12;
  pinned.style.color = {0.9f, 0.15f, 0.15f, 1};
  Camera camera;
  camera.mode = CameraMode::Orbit;
  camera.yaw = -0.6f;
  camera.pitch = 0.3f;
  camera.fit(scene.bounds(), 320.0f / 240.0f);
  EXPECT_TRUE(matches_reference(draw_once(loop, scene, camera), "mesh_cloth"));
}

TEST_F(RenderTest, ClearErrorsNameTheData) {
  FrameLoop& loop = offscreen(32, 32);
  SceneRenderer scene(loop);
  std::string missing = source_path("assets/meshes/no_such_mesh.obj");
  expect_error([&] { render::Mesh::load_obj(missing); }, {missing, "cannot read OBJ mesh"});
  render::MeshLayer& cloth =
      scene.add_mesh(render::Mesh::load_obj(source_path("assets/meshes/cloth_grid.obj")));
  std::vector<float> x(1000 * 3);
  expect_error(
      [&] {
        cloth.update_positions({"cloth_x", x.data(), 1000, 3});
      },
      {"cloth_grid.obj' has 1024 vertices", "'cloth_x' gives 1000 positions"});
  render::PointsLayer& points = scene.add_points();
  expect_error(
      [&] {
        points.update(render::PointData{{"velocity", x.data(), 10, 4}});
      },
      {"points 'velocity'", "4 components"});
  expect_error(
      [&] {
        points.update(render::PointData{{"particles", nullptr, 10, 3}});
      },
      {"points 'particles'", "no position data"});
  render::TextureLayer& texture = scene.add_texture();
  expect_error(
      [&] {
        texture.update({"dye", TextureFormat::RGBA8, nullptr, 4, 4});
      },
      {"texture 'dye'", "no texel data"});
  uint8_t texel[4] = {};
  expect_error(
      [&] {
        texture.update({"huge", TextureFormat::RGBA8, texel, 1u << 20, 4});
      },
      {"texture 'huge'", "exceeds"});
  Frame f;
  expect_error([&] { scene.draw(f, {0, 0, 32, 32}, Camera{}); }, {"outside a frame"});
  expect_error([&] { loop.take_capture(); }, {"no frame was captured"});
  expect_error([&] { loop.capture_frame(); }, {"outside a frame"});
  ASSERT_TRUE(loop.begin_frame(&f));
  expect_error([&] { loop.begin_frame(&f); }, {"not ended"});
  loop.end_frame();
  expect_error([&] { loop.end_frame(); }, {"without begin_frame"});
  expect_error([&] { FrameLoop::offscreen(*device_, 0, 10); }, {"0x10"});
  render::FrameLoopOptions four;
  four.frames_in_flight = 4;
  expect_error([&] { FrameLoop::offscreen(*device_, 8, 8, four); }, {"frames in flight"});
}

TEST_F(RenderTest, UploadsOnlyWhenTheRevisionChanges) {
  FrameLoop& loop = offscreen(64, 64);
  SceneRenderer scene(loop);
  std::vector<float> xy, s;
  spiral(100, &xy, &s);
  render::PointsLayer& points = scene.add_points();
  render::PointData d{{"p", xy.data(), 100, 2}};
  Camera camera;
  uint64_t uploads = 0;
  for (uint64_t frame = 0; frame < 12; ++frame) {
    bool uploaded = points.update(d, frame / 4);  // the data changes every fourth frame
    EXPECT_EQ(uploaded, frame % 4 == 0) << frame;
    Frame f;
    ASSERT_TRUE(loop.begin_frame(&f));
    scene.draw(f, {0, 0, 64, 64}, camera);
    loop.end_frame();
    uploads += uploaded;
  }
  EXPECT_EQ(loop.stats().uploads, uploads);
  EXPECT_EQ(loop.stats().upload_bytes, uploads * 100 * 20);
  EXPECT_EQ(loop.stats().frames, 12u);
}

// Three frames in flight, new data every frame, buffers growing: what the last frame shows is
// the last data, and no validation message anywhere.
TEST_F(RenderTest, FramesInFlightWithChangingData) {
  render::FrameLoopOptions options;
  options.frames_in_flight = 3;
  FrameLoop& loop = offscreen(96, 96, options);
  SceneRenderer scene(loop);
  render::PointsLayer& points = scene.add_points();
  points.style.shaded = false;
  points.style.size = 16;
  points.style.color = {0, 1, 0, 1};
  Camera camera;  // planar, [-1, 1] high, centred on 0
  camera.view_height = 2;
  std::vector<float> xy;
  for (int frame = 0; frame < 24; ++frame) {
    xy.assign(static_cast<size_t>(2 * (frame + 1)), -2.0f);  // all but one point off-screen
    xy[0] = -0.6f + 0.05f * frame;
    xy[1] = 0.5f;
    points.update(render::PointData{{"p", xy.data(), static_cast<size_t>(frame + 1), 2}});
    Frame f;
    ASSERT_TRUE(loop.begin_frame(&f));
    EXPECT_EQ(f.slot, static_cast<uint32_t>(frame % 3));
    scene.draw(f, {0, 0, 96, 96}, camera);
    if (frame == 23) loop.capture_frame();
    loop.end_frame();
  }
  RgbaImage img = loop.take_capture();
  // The last point: x = -0.6 + 1.15 = 0.55, y = 0.5 -> pixel (48 + 0.55 * 48, 48 - 0.5 * 48).
  const uint8_t* p = img.at(74, 24);
  EXPECT_EQ(p[0], 0);
  EXPECT_EQ(p[1], 255);
  const uint8_t* earlier = img.at(48 - 29, 24);  // where the first frame's point was
  EXPECT_NE(earlier[1], 255);
  EXPECT_EQ(loop.stats().frames, 24u);
}

TEST_F(RenderTest, OffscreenResizeAndClearColour) {
  render::FrameLoopOptions options;
  options.clear_color = {1, 0, 0, 1};
  FrameLoop& loop = offscreen(40, 30, options);
  Frame f;
  ASSERT_TRUE(loop.begin_frame(&f));
  loop.end_frame();
  loop.resize(128, 64);
  ASSERT_TRUE(loop.begin_frame(&f));
  EXPECT_EQ(f.extent.width, 128u);
  EXPECT_EQ(f.extent.height, 64u);
  loop.capture_frame();
  loop.end_frame();
  RgbaImage img = loop.take_capture();
  ASSERT_EQ(img.width, 128);
  ASSERT_EQ(img.height, 64);
  EXPECT_EQ(img.at(127, 63)[0], 255);
  EXPECT_EQ(img.at(127, 63)[1], 0);
  EXPECT_EQ(img.at(0, 0)[3], 255);
}

TEST_F(RenderTest, ContextForDearImGui) {
  FrameLoop& loop = offscreen(16, 16);
  render::RenderContext c = loop.context();
  EXPECT_EQ(c.device, device_->device());
  EXPECT_EQ(c.queue, device_->queue());
  EXPECT_NE(c.render_pass, VK_NULL_HANDLE);
  EXPECT_NE(c.descriptor_pool, VK_NULL_HANDLE);
  EXPECT_NE(c.pipeline_cache, VK_NULL_HANDLE);
  EXPECT_GE(c.min_image_count, 2u);
  EXPECT_GE(c.image_count, c.min_image_count);
  EXPECT_GE(c.image_count, loop.frames_in_flight());
  int ran = 0;
  loop.submit_once([&](VkCommandBuffer cb) {
    EXPECT_NE(cb, VK_NULL_HANDLE);
    ++ran;
  });
  EXPECT_EQ(ran, 1);
}

}  // namespace
}  // namespace loom::render_test

namespace loom::render_test {
namespace {

// A layer updated and removed with no frame after it: its upload is still unsubmitted when
// wait_frames frees what was retired, so the upload has to land first.
TEST_F(RenderTest, RemovedLayerWithAPendingUpload) {
  render::FrameLoop& loop = offscreen(32, 32);
  {
    render::SceneRenderer scene(loop);
    std::vector<float> xy, s;
    spiral(50, &xy, &s);
    render::PointsLayer& points = scene.add_points();
    points.update(render::PointData{{"p", xy.data(), 50, 2}});
    scene.remove(points);
  }
  loop.wait_frames();
  render::Frame f;
  ASSERT_TRUE(loop.begin_frame(&f));
  loop.end_frame();
  loop.wait_frames();
}

}  // namespace
}  // namespace loom::render_test
