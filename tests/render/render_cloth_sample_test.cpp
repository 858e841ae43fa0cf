// End to end, as the editor's viewport will do it: the cloth sample (assets/graphs/
// cloth.loom.json) simulated by loom::Program, its field x moving assets/meshes/cloth_grid.obj
// (vertex i * 32 + j is x[i, j]), drawn with the sphere it drapes over.
#include <gtest/gtest.h>

#include <cmath>

#include "engine_plugin/include/loom/program.h"
#include "runtime/render/scene_renderer.h"
#include "tests/render/reference_image.h"
#include "tests/render/render_test_util.h"

namespace loom::render_test {
namespace {

// A UV sphere, counter-clockwise seen from outside.
render::Mesh sphere(float radius, int rings, int segments) {
  render::Mesh m;
  m.name = "sphere";
  for (int r = 0; r <= rings; ++r)
    for (int s = 0; s <= segments; ++s) {
      float theta = 3.14159265f * r / rings, phi = 2 * 3.14159265f * s / segments;
      m.positions.insert(m.positions.end(),
                         {radius * std::sin(theta) * std::cos(phi), radius * std::cos(theta),
                          radius * std::sin(theta) * std::sin(phi)});
    }
  for (int r = 0; r < rings; ++r)
    for (int s = 0; s < segments; ++s) {
      uint32_t a = r * (segments + 1) + s, b = a + segments + 1;
      m.indices.insert(m.indices.end(), {a, a + 1, b, a + 1, b + 1, b});
    }
  return m;
}

TEST_F(RenderTest, ClothSampleDrapedOverItsSphere) {
  ProgramOptions o;
  o.backend = Backend::Cpu;
  o.offline_cache = false;
  Program program(o);
  program.load_file(source_path("assets/graphs/cloth.loom.json"));
  program.run_pipeline("init");

  render::FrameLoop& loop = offscreen(320, 240);
  render::SceneRenderer scene(loop);
  render::MeshLayer& cloth =
      scene.add_mesh(render::Mesh::load_obj(source_path("assets/meshes/cloth_grid.obj")));
  render::MeshLayer& ball = scene.add_mesh(sphere(0.29f, 24, 48));  // inside the 0.3 contact radius
  ball.style.front = {0.62f, 0.64f, 0.68f, 1};

  auto positions = [&] {
    ArrayView x = program.array("x");
    size_t n = static_cast<size_t>(x.shape[0] * x.shape[1]);
    render::PositionData p{"x", reinterpret_cast<const float*>(x.data), n, x.components};
    if (x.layout == Layout::SoA) p.stride = 1, p.component_stride = n;
    return p;
  };
  // The rest pose is the mesh's own: the field and the file agree vertex for vertex.
  render::PositionData rest = positions();
  ASSERT_EQ(rest.count, cloth.mesh().vertex_count());
  for (size_t k = 0; k < rest.count * 3; ++k)
    ASSERT_NEAR(rest.data[k], cloth.mesh().positions[k], 1e-5f) << k;

  for (int step = 0; step < 300; ++step) program.run_pipeline("step");
  cloth.update_positions(positions(), 300);

  render::Camera camera;
  camera.mode = render::CameraMode::Orbit;
  camera.yaw = 0.5f;
  camera.pitch = 0.45f;
  camera.fit(scene.bounds(), 320.0f / 240.0f);
  render::Frame f;
  ASSERT_TRUE(loop.begin_frame(&f));
  scene.draw(f, {0, 0, 320, 240}, camera);
  loop.capture_frame();
  loop.end_frame();
  EXPECT_TRUE(matches_reference(loop.take_capture(), "cloth_sample_draped"));
}

}  // namespace
}  // namespace loom::render_test
