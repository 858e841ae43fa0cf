// The render loop's frame cost, every figure against an empty frame measured in the same run:
//   record  CPU time from begin_frame's return to end_frame's return (recording, packing
//           and staging uploads, submission)
//   frame   wall time per frame in steady state, frames in flight (on lavapipe the device is
//           the CPU too, so this is mostly rasterisation)
// Offscreen 1280x720, 2 frames in flight, no validation.
//
//   loom_render_bench [--quick] [--frames N] [--device D]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "runtime/render/frame_loop.h"
#include "runtime/render/scene_renderer.h"
#include "runtime/vulkan/vulkan_device.h"

namespace {

using Clock = std::chrono::steady_clock;
using namespace loom::render;

struct Figures {
  double record_ms = 0, frame_ms = 0;
};

// Runs `frames` frames after a warm-up; `per_frame` updates data and draws.
Figures measure(FrameLoop& loop, int frames,
                const std::function<void(const Frame&, int)>& per_frame) {
  auto one = [&](int i, double* record) {
    Frame f;
    if (!loop.begin_frame(&f)) return;
    auto t0 = Clock::now();
    per_frame(f, i);
    loop.end_frame();
    *record += std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  };
  double ignored = 0;
  for (int i = 0; i < 5; ++i) one(i, &ignored);
  loop.wait_frames();
  double record = 0;
  auto start = Clock::now();
  for (int i = 0; i < frames; ++i) one(i, &record);
  loop.wait_frames();
  double total = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  return {record / frames, total / frames};
}

void row(const char* name, const Figures& f, const Figures& base) {
  std::printf("  %-34s record %8.3f ms (%7.1fx)   frame %8.3f ms (%6.2fx)\n", name, f.record_ms,
              base.record_ms > 0 ? f.record_ms / base.record_ms : 0.0, f.frame_ms,
              base.frame_ms > 0 ? f.frame_ms / base.frame_ms : 0.0);
}

std::vector<float> cloud(size_t n, float phase) {
  std::vector<float> p(n * 3);
  for (size_t i = 0; i < n; ++i) {
    float t = static_cast<float>(i) / static_cast<float>(n);
    float a = t * 400.0f + phase, r = std::sqrt(t);
    p[i * 3] = r * std::cos(a), p[i * 3 + 1] = r * std::sin(a),
          p[i * 3 + 2] = 0.3f * std::sin(7 * a) * (1 - r);
  }
  return p;
}

// A (cells + 1)^2 grid mesh like assets/meshes/cloth_grid.obj, built in memory.
Mesh grid_mesh(int cells) {
  Mesh m;
  m.name = "grid " + std::to_string(cells);
  for (int j = 0; j <= cells; ++j)
    for (int i = 0; i <= cells; ++i)
      m.positions.insert(m.positions.end(), {float(i) / cells, float(j) / cells, 0});
  for (int j = 0; j < cells; ++j)
    for (int i = 0; i < cells; ++i) {
      uint32_t a = j * (cells + 1) + i, b = a + 1, c = a + cells + 2, d = a + cells + 1;
      m.indices.insert(m.indices.end(), {a, b, c, a, c, d});
    }
  return m;
}

std::vector<float> wave(int cells, float phase) {
  std::vector<float> p;
  p.reserve(static_cast<size_t>((cells + 1) * (cells + 1) * 3));
  for (int j = 0; j <= cells; ++j)
    for (int i = 0; i <= cells; ++i) {
      float u = float(i) / cells, v = float(j) / cells;
      p.insert(p.end(), {u - 0.5f, v - 0.5f, 0.1f * std::sin(6 * u + phase) * std::cos(4 * v)});
    }
  return p;
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  int frames = 60;
  std::string device_name;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--quick")
      quick = true, frames = 20;
    else if (a == "--frames" && i + 1 < argc)
      frames = std::max(1, std::atoi(argv[++i]));
    else if (a == "--device" && i + 1 < argc)
      device_name = argv[++i];
    else {
      std::fprintf(stderr, "usage: loom_render_bench [--quick] [--frames N] [--device D]\n");
      return 2;
    }
  }
  try {
    loom::vk::DeviceOptions o;
    o.graphics = true;
    o.select = device_name;
    loom::vk::VulkanDevice device(o);
    auto loop = FrameLoop::offscreen(device, 1280, 720);
    std::printf("device: %s; offscreen 1280x720, %u frames in flight, %d frames per figure\n",
                device.caps().name.c_str(), loop->frames_in_flight(), frames);
    SceneRenderer scene(*loop);
    Rect all{0, 0, 1280, 720};
    Camera camera;
    camera.mode = CameraMode::Orbit;
    camera.pitch = 0.4f;
    camera.distance = 3;

    Figures empty =
        measure(*loop, frames, [&](const Frame& f, int) { scene.draw(f, all, camera); });
    row("empty frame (baseline)", empty, empty);

    PointsLayer& points = scene.add_points();
    points.style.size = 3;
    std::vector<size_t> sizes =
        quick ? std::vector<size_t>{10000, 100000} : std::vector<size_t>{10000, 100000, 1000000};
    for (size_t n : sizes) {
      std::vector<float> a = cloud(n, 0), b = cloud(n, 0.5f);
      PointData d{{"cloud", a.data(), n, 3}};
      points.update(d);
      char name[64];
      std::snprintf(name, sizeof name, "points %zuk, unchanged", n / 1000);
      row(name, measure(*loop, frames, [&](const Frame& f, int) { scene.draw(f, all, camera); }),
          empty);
      std::snprintf(name, sizeof name, "points %zuk, new data every frame", n / 1000);
      row(name,
          measure(*loop, frames,
                  [&](const Frame& f, int i) {
                    d.positions.data = (i % 2 ? b : a).data();
                    points.update(d);
                    scene.draw(f, all, camera);
                  }),
          empty);
    }
    points.visible = false;

    for (int cells : quick ? std::vector<int>{32, 256} : std::vector<int>{32, 256, 512}) {
      MeshLayer& mesh = scene.add_mesh(grid_mesh(cells));
      std::vector<float> a = wave(cells, 0), b = wave(cells, 1);
      size_t n = static_cast<size_t>((cells + 1) * (cells + 1));
      char name[64];
      std::snprintf(name, sizeof name, "mesh %zu vertices, unchanged", n);
      mesh.update_positions({"x", a.data(), n, 3});
      row(name, measure(*loop, frames, [&](const Frame& f, int) { scene.draw(f, all, camera); }),
          empty);
      std::snprintf(name, sizeof name, "mesh %zu vertices, moving", n);
      row(name,
          measure(*loop, frames,
                  [&](const Frame& f, int i) {
                    mesh.update_positions({"x", (i % 2 ? b : a).data(), n, 3});
                    scene.draw(f, all, camera);
                  }),
          empty);
      scene.remove(mesh);
    }
    loop->wait_frames();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "loom_render_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
