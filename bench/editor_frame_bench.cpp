// The whole editor, drawn: frames per second of loom-editor (every panel, the node canvas,
// Dear ImGui's draw data and the viewport rendered through Vulkan, offscreen, two frames in
// flight) while the node canvas pans and zooms a generated 2,000-node graph. Wall time per
// frame, so the GPU's share counts (on lavapipe, the CPU rasterises). Printed as ratios
// against the editor with an empty document, measured in the same run.
//
//   build/bench/editor_frame_bench             # 300 frames per scenario, 1600x900
//   build/bench/editor_frame_bench --quick     # 60
//   build/bench/editor_frame_bench --size 1920x1080 --device 0
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "bench/big_graph.h"
#include "editor/app/editor_host.h"
#include "runtime/common/error.h"

using namespace loom::editor;

namespace {

struct Result {
  double ms = 0;  // wall ms per frame, median of 5 blocks
  double fps = 0;
  int nodes_drawn = 0;
};

Result measure(EditorHost& host, int frames, const std::function<void(NodeCanvas&, int)>& move) {
  for (int i = 0; i < 10; ++i) {  // warm: geometry, fonts, pipelines
    move(host.app().canvas(), i);
    host.frame();
  }
  std::vector<double> blocks;
  int per_block = std::max(1, frames / 5);
  int i = 0;
  for (int b = 0; b < 5; ++b) {
    auto t0 = std::chrono::steady_clock::now();
    for (int k = 0; k < per_block; ++k, ++i) {
      move(host.app().canvas(), i);
      host.frame();
    }
    blocks.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() /
        per_block);
  }
  std::sort(blocks.begin(), blocks.end());
  Result r;
  r.ms = blocks[2];
  r.fps = 1000.0 / r.ms;
  r.nodes_drawn = host.app().canvas().stats().nodes_drawn;
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  HostOptions o;
  o.headless = true;
  o.backend = loom::Backend::Cpu;  // nothing runs: the document has no pipeline
  o.offline_cache = false;
  int frames = 300;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--quick"))
      frames = 60;
    else if (!std::strcmp(argv[i], "--size") && i + 1 < argc)
      std::sscanf(argv[++i], "%ux%u", &o.width, &o.height);
    else if (!std::strcmp(argv[i], "--device") && i + 1 < argc)
      o.device = argv[++i];
    else {
      std::fprintf(stderr, "usage: editor_frame_bench [--quick] [--size WxH] [--device D]\n");
      return 2;
    }
  }
  std::string path =
      (std::filesystem::temp_directory_path() / "loom-bench-2000.loom.json").string();
  { std::ofstream(path) << loom::bench::big_graph(2000); }
  try {
    EditorHost host(o);
    // Baseline: the editor with its untitled document (an empty kernel).
    Result base = measure(host, frames, [](NodeCanvas&, int) {});
    if (!host.app().open(path)) {
      std::fprintf(stderr, "editor_frame_bench: %s\n",
                   host.app().session().log().back().message.c_str());
      return 1;
    }
    auto pan_and_zoom = [](float lo, float hi) {
      return [lo, hi](NodeCanvas& c, int i) {
        float t = static_cast<float>(i) * 0.02f;
        c.view().zoom = lo + (hi - lo) * (0.5f + 0.5f * std::sin(t * 0.7f));
        c.view().scroll = Vec2{3000 + 2500 * std::cos(t), 1500 + 1200 * std::sin(t * 1.3f)};
      };
    };
    Result pan = measure(host, frames, pan_and_zoom(1.0f, 1.0f));
    Result panzoom = measure(host, frames, pan_and_zoom(0.4f, 2.0f));
    Result whole = measure(host, frames, [](NodeCanvas& c, int i) {
      c.view().zoom = 0.1f + 0.01f * static_cast<float>(i % 3);  // as far out as the canvas goes
      c.view().scroll = Vec2{-300, -300};
    });
    std::printf("loom-editor, whole frames offscreen (%s), %ux%u, %d frames each\n",
                host.app().session().log().front().message.c_str(), o.width, o.height, frames);
    std::printf("big graph: %d nodes, %d links\n", host.app().canvas().stats().nodes_total,
                host.app().canvas().stats().links_total);
    std::printf("%-42s %9s %8s %10s %7s\n", "scenario", "ms/frame", "fps", "vs empty", "drawn");
    auto row = [&](const char* name, const Result& r) {
      std::printf("%-42s %9.2f %8.1f %9.2fx %7d\n", name, r.ms, r.fps, r.ms / base.ms,
                  r.nodes_drawn);
    };
    row("empty document (baseline)", base);
    row("2,000 nodes, pan at zoom 1", pan);
    row("2,000 nodes, pan + zoom 0.4-2", panzoom);
    row("2,000 nodes, zoomed out to 0.1", whole);
    std::printf("goal: >= 60 fps panning and zooming the 2,000-node graph: %s (%.1f fps)\n",
                panzoom.fps >= 60 ? "met" : "NOT met", panzoom.fps);
  } catch (const loom::Error& e) {
    std::fprintf(stderr, "editor_frame_bench: %s\n", e.what());
    return 1;
  }
  std::filesystem::remove(path);
  return 0;
}
