// CPU time per frame of building the node canvas (ImGui frame + NodeCanvas::frame + Render,
// no GPU) while panning and zooming a generated 2,000-node graph, printed as ratios against
// baselines measured in the same run: an empty canvas and a 20-node graph. Also the one-off
// costs behind an edit on the big graph: re-placing after a move, re-shaping and re-typing
// after a change of the program, one link check.
//
//   build/bench/editor_canvas_bench            # 600 frames per scenario
//   build/bench/editor_canvas_bench --quick    # 60
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <functional>
#include <string>
#include <vector>

#include "bench/big_graph.h"
#include "editor/canvas/canvas_fonts.h"
#include "editor/canvas/node_canvas.h"
#include "editor/model/editor_document.h"
#include "editor/model/edits.h"
#include "editor/model/graph_access.h"
#include "editor/model/link_check.h"
#include "editor/model/operations.h"

using namespace loom::editor;
using loom::bench::big_graph;

namespace {

double cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

class Headless {
 public:
  Headless() {
    ctx_ = ImGui::CreateContext();
    ImGuiIO& io = ImGui::GetIO();
    io.DisplaySize = ImVec2(1920, 1080);
    io.IniFilename = nullptr;
    io.DeltaTime = 1.0f / 60.0f;
    // As the Vulkan backend does: draw lists past 64k vertices are split by vertex offset.
    io.BackendFlags |= ImGuiBackendFlags_RendererHasVtxOffset;
    io.MousePos = ImVec2(960, 540);  // over the canvas: hover hit tests and tooltips count too
    fonts_.add_to(io.Fonts);
    unsigned char* pixels = nullptr;
    int w = 0, h = 0;
    io.Fonts->GetTexDataAsRGBA32(&pixels, &w, &h);
  }
  ~Headless() { ImGui::DestroyContext(ctx_); }
  const CanvasFonts* fonts() const { return &fonts_; }
  static void frame(NodeCanvas& canvas, EditorDocument& doc) {
    ImGui::NewFrame();
    ImGui::SetNextWindowPos(ImVec2(0, 0));
    ImGui::SetNextWindowSize(ImGui::GetIO().DisplaySize);
    ImGui::Begin("Graph", nullptr, ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove);
    canvas.frame(doc);
    ImGui::End();
    ImGui::Render();
  }

 private:
  ImGuiContext* ctx_;
  CanvasFonts fonts_;
};

struct Result {
  double ms = 0;  // CPU ms per frame (median of 5 blocks)
  double vertices = 0;
  int nodes_drawn = 0;
};

// Runs `frames` frames, `move` setting the view before each; median of 5 blocks.
Result measure(Headless& h, EditorDocument& doc, int frames,
               const std::function<void(NodeCanvas&, int)>& move) {
  NodeCanvas canvas(h.fonts());
  for (int i = 0; i < 5; ++i) Headless::frame(canvas, doc);  // framing, caches
  std::vector<double> blocks;
  Result r;
  for (int b = 0; b < 5; ++b) {
    double t0 = cpu_seconds();
    for (int i = 0; i < frames / 5; ++i) {
      move(canvas, b * frames / 5 + i);
      Headless::frame(canvas, doc);
    }
    blocks.push_back((cpu_seconds() - t0) * 1000.0 / (frames / 5));
    r.vertices = ImGui::GetDrawData()->TotalVtxCount;
    r.nodes_drawn = canvas.stats().nodes_drawn;
  }
  std::sort(blocks.begin(), blocks.end());
  r.ms = blocks[2];
  return r;
}

// Pans along a loop over the graph and zooms in and out around the middle of the screen.
void pan_and_zoom(NodeCanvas& c, int i, float lo, float hi) {
  float t = static_cast<float>(i) * 0.02f;
  c.view().zoom = lo + (hi - lo) * (0.5f + 0.5f * std::sin(t * 0.7f));
  c.view().scroll = Vec2{3000 + 2500 * std::cos(t), 1500 + 1200 * std::sin(t * 1.3f)};
}

double one_off(const std::function<void()>& fn, int reps) {
  double t0 = cpu_seconds();
  for (int i = 0; i < reps; ++i) fn();
  return (cpu_seconds() - t0) * 1000.0 / reps;
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = argc > 1 && !std::strcmp(argv[1], "--quick");
  int frames = quick ? 60 : 600;
  Headless h;
  EditorDocument empty = EditorDocument::from_text(
      R"({"format": "loom-graph", "version": 2, "kernels": [{"name": "k", "nodes": []}]})");
  EditorDocument small = EditorDocument::from_text(big_graph(20));
  EditorDocument big = EditorDocument::from_text(big_graph(2000));

  Result base = measure(h, empty, frames, [](NodeCanvas&, int) {});
  Result twenty = measure(h, small, frames, [](NodeCanvas& c, int i) {
    float t = static_cast<float>(i) * 0.02f;
    c.view().zoom = 0.5f + 1.0f * (0.5f + 0.5f * std::sin(t * 0.7f));
    c.view().scroll = Vec2{-200 + 300 * std::cos(t), -200 + 200 * std::sin(t)};
  });
  Result pan1 =
      measure(h, big, frames, [](NodeCanvas& c, int i) { pan_and_zoom(c, i, 1.0f, 1.0f); });
  Result panzoom =
      measure(h, big, frames, [](NodeCanvas& c, int i) { pan_and_zoom(c, i, 0.4f, 2.0f); });
  Result whole = measure(h, big, frames, [](NodeCanvas& c, int i) {
    c.view().zoom = 0.1f + 0.01f * static_cast<float>(i % 3);  // all 2,000 nodes on screen
    c.view().scroll = Vec2{-300, -300};
  });
  // A drag: every frame moves a node (the document changes; placement is rebuilt).
  int id = 1000;
  Result drag = measure(h, big, frames, [&](NodeCanvas& c, int i) {
    c.view().zoom = 1;
    c.view().scroll = Vec2{4000, 1500};
    auto at = *node_position(big.doc(), "big", id);
    big.execute(change_layout(
        big.doc(), LayoutChange{"big", {{id, Vec2{at.x + (i % 2 ? 1.0f : -1.0f), at.y}}}, {}}));
  });

  NodeCanvas canvas(h.fonts());
  Headless::frame(canvas, big);
  double place_ms = one_off(
      [&] {
        GraphGeometry g;
        g.build(big.doc(), GraphRef{"big", false}, big.types(GraphRef{"big", false}),
                [](const std::string& s) { return 7.0f * static_cast<float>(s.size()); });
        g.place(big.doc(), GraphRef{"big", false});
      },
      quick ? 3 : 10);
  double infer_ms =
      one_off([&] { loom::graph::infer_graph_types(big.doc(), "big", false); }, quick ? 3 : 10);
  double check_ms = one_off(
      [&] {
        check_link(big.doc(), GraphRef{"big", false}, PinRef{5, "out"}, PinRef{1500, "a"},
                   &big.types(GraphRef{"big", false}));
      },
      quick ? 3 : 10);
  double edit_ms = one_off(
                       [&] {
                         set_literal(big, GraphRef{"big", false}, PinRef{1900, "b"}, std::nullopt);
                         Headless::frame(canvas, big);
                         big.undo();
                         Headless::frame(canvas, big);
                       },
                       quick ? 2 : 5) /
                   2;

  std::printf(
      "editor canvas: CPU time per frame (ImGui frame + NodeCanvas::frame + Render), 1920x1080, %d "
      "frames each\n",
      frames);
  std::printf("big graph: %d nodes, %d links, %zu problems\n", canvas.stats().nodes_total,
              canvas.stats().links_total, big.types(GraphRef{"big", false}).problems.size());
  std::printf("%-44s %9s %9s %10s %9s %9s\n", "scenario", "ms/frame", "vs empty", "vs 20-node",
              "drawn", "vertices");
  auto row = [&](const char* name, const Result& r) {
    std::printf("%-44s %9.3f %8.1fx %9.2fx %9d %9.0f\n", name, r.ms, r.ms / base.ms,
                r.ms / twenty.ms, r.nodes_drawn, r.vertices);
  };
  row("empty canvas (baseline)", base);
  row("20 nodes, pan + zoom 0.5-1.5 (baseline)", twenty);
  row("2,000 nodes, pan at zoom 1", pan1);
  row("2,000 nodes, pan + zoom 0.4-2", panzoom);
  row("2,000 nodes, zoomed out: all on screen", whole);
  row("2,000 nodes, dragging a node (re-placed)", drag);
  std::printf("\none-off costs on the 2,000-node graph (ms), against a 60 Hz frame (16.7 ms):\n");
  std::printf("  geometry: shapes + placement + grid hashes  %8.3f  (%.2f frames)\n", place_ms,
              place_ms / 16.7);
  std::printf("  type inference of the graph (per edit)      %8.3f  (%.2f frames)\n", infer_ms,
              infer_ms / 16.7);
  std::printf("  one link check (copy + inference)           %8.3f  (%.2f frames)\n", check_ms,
              check_ms / 16.7);
  std::printf("  an edit and its frame (shapes, types)       %8.3f  (%.2f frames)\n", edit_ms,
              edit_ms / 16.7);
  return 0;
}
