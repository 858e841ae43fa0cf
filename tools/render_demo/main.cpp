// loom_render_demo: the render loop headless. A cloth (assets/meshes/cloth_grid.obj) waving
// from its top edge, moved every frame through MeshLayer::update_positions as a simulation's
// field would, with swirling particles around it, the orbit camera turning slowly. Writes
// one PNG per frame.
//
//   loom_render_demo [--frames N] [--out DIR] [--size WxH] [--mesh FILE] [--device D]
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "runtime/common/error.h"
#include "runtime/render/frame_loop.h"
#include "runtime/render/png.h"
#include "runtime/render/scene_renderer.h"
#include "runtime/vulkan/vulkan_device.h"

namespace {

using namespace loom::render;

constexpr float kPi = 3.14159265f;

int usage() {
  std::fprintf(
      stderr,
      "usage: loom_render_demo [--frames N] [--out DIR] [--size WxH] [--mesh FILE] [--device D]\n"
      "  --frames N   frames to render (default 60)\n"
      "  --out DIR    where frame_0000.png... go (default render_demo)\n"
      "  --size WxH   frame size (default 640x400)\n"
      "  --mesh FILE  a cloth OBJ laid out like assets/meshes/cloth_grid.obj\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  int frames = 60;
  unsigned width = 640, height = 400;
  std::string out = "render_demo", device_name;
  std::string mesh_path = std::string(LOOM_SOURCE_DIR) + "/assets/meshes/cloth_grid.obj";
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    bool has_value = i + 1 < argc;
    if (a == "--frames" && has_value)
      frames = std::atoi(argv[++i]);
    else if (a == "--out" && has_value)
      out = argv[++i];
    else if (a == "--mesh" && has_value)
      mesh_path = argv[++i];
    else if (a == "--device" && has_value)
      device_name = argv[++i];
    else if (a == "--size" && has_value) {
      if (std::sscanf(argv[++i], "%ux%u", &width, &height) != 2) return usage();
    } else if (a == "--help" || a == "-h") {
      usage();
      return 0;
    } else {
      return usage();
    }
  }
  if (frames < 1) return usage();
  try {
    std::filesystem::create_directories(out);
    loom::vk::DeviceOptions o;
    o.graphics = true;
    o.select = device_name;
    loom::vk::VulkanDevice device(o);
    auto loop = FrameLoop::offscreen(device, width, height);
    SceneRenderer scene(*loop);

    MeshLayer& cloth = scene.add_mesh(Mesh::load_obj(mesh_path));
    size_t n = cloth.mesh().vertex_count();
    int side = static_cast<int>(std::lround(std::sqrt(static_cast<double>(n))));
    if (static_cast<size_t>(side) * side != n)
      throw loom::Error(loom::Place{mesh_path},
                        "the demo needs a square grid mesh like cloth_grid.obj");
    std::vector<float> x(n * 3);

    PointsLayer& dust = scene.add_points();
    const size_t particles = 1200;
    std::vector<float> p(particles * 3), heat(particles), grains(particles * 4);
    uint32_t seed = 12345;
    auto random = [&seed] {  // a fixed sequence: the same frames every run
      seed = seed * 1664525u + 1013904223u;
      return static_cast<float>(seed >> 8) / 16777216.0f;
    };
    for (size_t k = 0; k < particles; ++k) {
      grains[k * 4] = random() * 2 * kPi;                      // angle
      grains[k * 4 + 1] = 0.55f + 0.5f * std::sqrt(random());  // radius
      grains[k * 4 + 2] = (random() - 0.5f) * 1.1f;            // height
      grains[k * 4 + 3] = random() * 2 * kPi;                  // bobbing phase
    }
    dust.style.size = 3.5f;
    dust.style.colormap = Colormap::Ramp;

    Camera camera;
    camera.mode = CameraMode::Orbit;
    camera.pitch = 0.25f;
    Rect all{0, 0, static_cast<float>(width), static_cast<float>(height)};
    double record_ms = 0;
    auto start = std::chrono::steady_clock::now();
    for (int f = 0; f < frames; ++f) {
      float t = static_cast<float>(f) / 30.0f;
      // The cloth: a flag on a pole at its left edge, waves travelling along it.
      for (int j = 0; j < side; ++j)
        for (int i = 0; i < side; ++i) {
          float u = static_cast<float>(i) / (side - 1), v = static_cast<float>(j) / (side - 1);
          float* q = &x[(static_cast<size_t>(j) * side + i) * 3];
          float amp = 0.2f * u;
          q[0] = u - 0.5f;
          q[1] = v - 0.5f - 0.08f * u * u;
          q[2] = amp * std::sin(7.0f * u - 4.0f * t + 1.5f * v);
        }
      cloth.update_positions({"cloth", x.data(), n, 3});
      // Dust swirling around the flag: each grain on its own circle about the y axis.
      for (size_t k = 0; k < particles; ++k) {
        const float* g = &grains[k * 4];
        float a = g[0] + t * (0.3f + 0.5f / g[1]);
        p[k * 3] = g[1] * std::cos(a);
        p[k * 3 + 1] = g[2] + 0.05f * std::sin(3 * a + g[3]);
        p[k * 3 + 2] = g[1] * std::sin(a);
        heat[k] = g[2];  // coloured by height
      }
      PointData d{{"dust", p.data(), particles, 3}};
      d.scalars = heat.data();
      dust.update(d);
      dust.style.scalar_min = -0.55f;
      dust.style.scalar_max = 0.55f;
      camera.yaw = 0.4f * std::sin(t * 0.5f) - 0.3f;
      if (f == 0) camera.fit(scene.bounds(), all.width / all.height);

      Frame frame;
      if (!loop->begin_frame(&frame)) continue;
      auto t0 = std::chrono::steady_clock::now();
      scene.draw(frame, all, camera);
      loop->capture_frame();
      loop->end_frame();
      record_ms +=
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      char name[64];
      std::snprintf(name, sizeof name, "/frame_%04d.png", f);
      loom::write_png(out + name, loop->take_capture());
    }
    double total =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    std::printf(
        "%d frames of %ux%u on %s written to %s/: %.2f ms per frame (%.3f ms recording), PNG "
        "included\n",
        frames, width, height, device.caps().name.c_str(), out.c_str(), total / frames,
        record_ms / frames);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "loom_render_demo: %s\n", e.what());
    return 1;
  }
  return 0;
}
