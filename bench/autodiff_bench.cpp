// Reverse mode against the forward pass, measured in the same run: for each document with
// gradients (the sample cannon, and mpm88's P2G/G2P with every field needs_grad), the plain
// forward run (init, step N times, loss), then the same run on a tape and its backward sweep,
// without a memory budget (a copy before every launch) and with a budget of a tenth of that
// (checkpoints, recomputation). Prints the times, the backward / forward ratio (the classic
// bound for reverse mode is 4x) and the memory the tape held.
//
//   loom_autodiff_bench [--backend cpu|vulkan|both] [--runs N]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench/timing.h"
#include "engine_plugin/include/loom/tape.h"

namespace {

struct Case {
  const char* name;
  std::string path;
  int steps;
};

struct TapeFigures {
  double record_ms = 0, backward_ms = 0;
  loom::TapeReport report;
};

void forward(loom::Program& p, const Case& c) {
  p.run_pipeline("init");
  for (int s = 0; s < c.steps; ++s) p.run_pipeline("step");
  p.run_pipeline("loss");
  p.synchronize();
}

TapeFigures taped(loom::Program& p, const Case& c, size_t budget, int runs) {
  std::vector<TapeFigures> all;
  for (int r = 0; r < runs + 1; ++r) {  // the first run compiles the adjoints: not counted
    loom::Tape tape(p, {.loss = "loss", .memory_budget = budget});
    tape.run_pipeline("init");
    for (int s = 0; s < c.steps; ++s) tape.run_pipeline("step");
    tape.run_pipeline("loss");
    p.synchronize();
    TapeFigures f;
    f.report = tape.backward();
    p.synchronize();
    f.record_ms = f.report.forward_ms;
    f.backward_ms = f.report.backward_ms;
    if (r > 0) all.push_back(f);
  }
  std::sort(all.begin(), all.end(), [](const TapeFigures& a, const TapeFigures& b) {
    return a.backward_ms < b.backward_ms;
  });
  return all[all.size() / 2];
}

void run(loom::Backend backend, const Case& c, int runs) {
  loom::ProgramOptions o;
  o.backend = backend;
  o.offline_cache = false;
  loom::Program p(o);
  p.load_file(c.path);
  auto t = loom::bench::time_interleaved(runs, {[&] { forward(p, c); }});
  double forward_ms = t[0].median * 1e3;
  TapeFigures all = taped(p, c, 0, runs);
  TapeFigures tenth = taped(p, c, std::max<size_t>(all.report.peak_bytes / 10, 1), runs);
  std::printf(
      "%-7s %-6s %4zu launches  forward %8.2f ms | tape: record %8.2f ms, backward %8.2f ms"
      " = %5.2fx forward, %8.1f KiB held",
      c.name, loom::backend_name(backend), all.report.launches, forward_ms, all.record_ms,
      all.backward_ms, all.backward_ms / forward_ms,
      static_cast<double>(all.report.peak_bytes) / 1024.0);
  std::printf(
      " | budget 1/10: %8.1f KiB held (%.3fx), %5zu recomputed, backward %8.2f ms = %5.2fx"
      " forward\n",
      static_cast<double>(tenth.report.peak_bytes) / 1024.0,
      static_cast<double>(tenth.report.peak_bytes) / static_cast<double>(all.report.peak_bytes),
      tenth.report.launches_recomputed, tenth.backward_ms, tenth.backward_ms / forward_ms);
}

}  // namespace

int main(int argc, char** argv) {
  std::string backends = "both";
  int runs = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--backend")) backends = argv[i + 1];
    if (!std::strcmp(argv[i], "--runs")) runs = std::max(1, std::atoi(argv[i + 1]));
  }
  const std::string root = LOOM_SOURCE_DIR;
  const std::vector<Case> cases = {
      {"cannon", root + "/assets/graphs/cannon.loom.json", 200},
      {"mpm88", root + "/tests/e2e/docs/mpm_gradient.loom.json", 25},
  };
  std::vector<loom::Backend> list;
  if (backends != "vulkan") list.push_back(loom::Backend::Cpu);
  if (backends != "cpu" && !loom::enumerate_vulkan_devices().empty())
    list.push_back(loom::Backend::Vulkan);
  try {
    for (loom::Backend b : list)
      for (const Case& c : cases) run(b, c, runs);
  } catch (const loom::Error& e) {
    std::fprintf(stderr, "loom_autodiff_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
