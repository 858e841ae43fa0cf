// Edit-to-running latency of the editor's hot reload, for every sample graph: from an edit
// of one kernel to the first frame that runs the recompiled kernel, against the goal of
// 100 ms on the CPU backend and against a frame with no edit measured in the same run.
//
//   loom_edit_latency_bench [--backend cpu|vulkan] [--runs N]
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "compiler/graph/document_json.h"
#include "editor/app/live_session.h"

namespace {

// An edit that changes one kernel's code, as a user editing a formula would: the first
// `expr` node of the kernel the `step` pipeline launches first gets " * 1" appended (a new
// content key, so a real recompile), alternating with taking it off again.
bool edit_formula(loom::graph::Document& doc, int round) {
  std::function<bool(std::vector<loom::graph::Node>&)> visit =
      [&](std::vector<loom::graph::Node>& nodes) {
        for (loom::graph::Node& n : nodes) {
          if (n.type == "expr")
            for (auto& [name, value] : n.params)
              if (name == "expr") {
                std::string& f = value.s;
                if (round % 2 == 0)
                  f = "(" + f + ") * 1";
                else if (f.size() > 6 && f.rfind(") * 1") == f.size() - 5)
                  f = f.substr(1, f.size() - 6);
                return true;
              }
          for (loom::graph::Region& r : n.regions)
            if (visit(r.nodes)) return true;
        }
        return false;
      };
  std::vector<std::string> order;
  if (const loom::graph::Pipeline* step = doc.pipeline("step"))
    for (const loom::graph::Launch& l : step->launches) order.push_back(l.kernel);
  for (const loom::graph::KernelDecl& k : doc.kernels) order.push_back(k.name);
  for (const std::string& name : order)
    for (loom::graph::KernelDecl& k : doc.kernels)
      if (k.name == name && visit(k.nodes)) return true;
  return false;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  loom::Backend backend = loom::Backend::Cpu;
  int runs = 7;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--backend") && i + 1 < argc) {
      std::string b = argv[++i];
      backend = b == "vulkan" ? loom::Backend::Vulkan
                : b == "auto" ? loom::Backend::Auto
                              : loom::Backend::Cpu;
    } else if (!std::strcmp(argv[i], "--runs") && i + 1 < argc) {
      runs = std::max(1, std::atoi(argv[++i]));
    } else {
      std::fprintf(stderr, "usage: loom_edit_latency_bench [--backend cpu|vulkan] [--runs N]\n");
      return 2;
    }
  }
  loom::ProgramOptions o;
  o.backend = backend;
  o.offline_cache = false;  // every edit compiles for real
  o.warn = [](const std::string&) {};
  std::printf("edit-to-running latency, median of %d edits (goal: <= 100 ms on the CPU backend)\n",
              runs);
  const char* samples[] = {"heat", "life", "julia", "nbody", "mpm88", "cloth"};
  try {
    for (const char* name : samples) {
      std::string path = std::string(LOOM_SOURCE_DIR) + "/assets/graphs/" + name + ".loom.json";
      loom::editor::LiveSession s(o);
      s.open_file(path);
      s.play();
      for (int i = 0; i < 3; ++i) s.frame();
      std::vector<double> plain, latency, reload;
      for (int r = 0; r < runs; ++r) {
        plain.push_back(s.frame().step_ms);
        loom::graph::Document doc = s.document();
        if (!edit_formula(doc, r)) {
          std::printf("  %-6s has no formula to edit\n", name);
          break;
        }
        s.edit(doc);
        loom::editor::FrameTimes t = s.frame();
        if (s.error()) {
          std::printf("  %-6s the edit failed: %s\n", name, s.error()->what());
          break;
        }
        latency.push_back(t.latency_ms);
        reload.push_back(t.reload_ms);
      }
      if (latency.empty()) continue;
      double l = median(latency);
      std::printf(
          "  %-6s %8.2f ms edit to running (reload %6.2f ms)   %5.2fx of the goal   %6.1fx a frame "
          "without edit (%.2f ms)\n",
          name, l, median(reload), l / 100.0, l / std::max(1e-3, median(plain)), median(plain));
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "loom_edit_latency_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
