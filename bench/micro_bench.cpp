// Google Benchmark figures for the launch path through loom::Program: an empty kernel, a
// one-task serial kernel and saxpy on 1k elements. Each is printed again at the end as a
// ratio to its baseline measured in the same run: a plain call of the hand-written saxpy on
// the same 1k elements (-O3 -march=native), i.e. what the work costs without a launch.
//
//   micro_bench [Google Benchmark flags, e.g. --benchmark_filter=loom/empty]
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "bench/handwritten.h"
#include "engine_plugin/include/loom/program.h"

namespace {

constexpr const char* kBaseline = "baseline/handwritten_saxpy_1k";

// Prints the usual table and keeps each benchmark's best real time (over repetitions).
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  RatioReporter() : ConsoleReporter(OO_Tabular) {}

  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& run : runs) {
      if (run.run_type != Run::RT_Iteration || run.error_occurred) continue;
      double ns = run.GetAdjustedRealTime() * scale_to_ns(run.time_unit);
      auto [it, fresh] = best_ns_.emplace(run.run_name.function_name, ns);
      if (!fresh) it->second = std::min(it->second, ns);
    }
  }

  void print_ratios(const std::vector<std::string>& names) const {
    auto base = best_ns_.find(kBaseline);
    if (base == best_ns_.end()) {
      std::printf("\nno ratios: the baseline %s did not run\n", kBaseline);
      return;
    }
    std::printf("\nratio to the baseline (%s, %.1f ns)\n", kBaseline, base->second);
    for (const std::string& name : names) {
      auto it = best_ns_.find(name);
      if (it != best_ns_.end())
        std::printf("  %-32s %10.1f ns  %7.2fx\n", name.c_str(), it->second,
                    it->second / base->second);
    }
  }

 private:
  static double scale_to_ns(benchmark::TimeUnit unit) {
    switch (unit) {
      case benchmark::kNanosecond: return 1.0;
      case benchmark::kMicrosecond: return 1e3;
      case benchmark::kMillisecond: return 1e6;
      case benchmark::kSecond: return 1e9;
    }
    return 1.0;
  }
  std::map<std::string, double> best_ns_;
};

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;

  loom::ProgramOptions options;
  options.offline_cache = false;
  loom::Program program(options);
  program.load_file(std::string(LOOM_SOURCE_DIR) + "/bench/graphs/bench_kernels.loom.json");
  std::vector<float> x(1024, 1.0f), y(1024, 2.0f);
  program.wrap_ndarray("sx", {loom::Scalar::F32}, {1024}, x.data());
  program.wrap_ndarray("sy", {loom::Scalar::F32}, {1024}, y.data());
  const loom::Args one_store = {{"y", "sy"}};
  const loom::Args saxpy = {{"a", 0.5}, {"x", "sx"}, {"y", "sy"}};
  // Compile every kernel now, so the first iterations time launches, not compiles.
  program.launch("empty");
  program.launch("one_store", one_store);
  program.launch("saxpy", saxpy);

  benchmark::RegisterBenchmark(kBaseline, [&](benchmark::State& state) {
    for (auto _ : state) {
      loom::bench::saxpy_f32(0.5f, x.data(), y.data(), 0, 1024);
      benchmark::ClobberMemory();
    }
  });
  const std::vector<std::string> loom_names = {"loom/empty_kernel", "loom/one_serial_task",
                                               "loom/saxpy_1k"};
  benchmark::RegisterBenchmark(loom_names[0].c_str(), [&](benchmark::State& state) {
    for (auto _ : state) program.launch("empty");
  });
  benchmark::RegisterBenchmark(loom_names[1].c_str(), [&](benchmark::State& state) {
    for (auto _ : state) program.launch("one_store", one_store);
  });
  benchmark::RegisterBenchmark(loom_names[2].c_str(), [&](benchmark::State& state) {
    for (auto _ : state) program.launch("saxpy", saxpy);
  });

  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  reporter.print_ratios(loom_names);
  benchmark::Shutdown();
  return 0;
}
