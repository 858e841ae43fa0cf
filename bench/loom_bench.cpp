// Loom's benchmark harness. Every figure is printed next to a baseline measured in the same
// run: hand-written C++ loops (-O3 -march=native, OpenMP over the same thread count) for
// throughput, a plain copy for bandwidth, a cold compile for cache warm starts.
//
//   loom_bench [--quick] [--threads N]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "bench/handwritten.h"
#include "engine_plugin/include/loom/program.h"

namespace {

using Clock = std::chrono::steady_clock;

// Median seconds of `reps` runs of `fn` after one warm-up run.
double median_seconds(int reps, const std::function<void()>& fn) {
  fn();
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    auto t0 = Clock::now();
    fn();
    t.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

std::string source(const std::string& rel) { return std::string(LOOM_SOURCE_DIR) + "/" + rel; }

void row(const char* name, double value, const char* unit, double baseline, const char* vs) {
  std::printf("  %-34s %10.3f %-6s  %6.2fx %s\n", name, value, unit, baseline, vs);
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  int threads = static_cast<int>(std::thread::hardware_concurrency());
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--quick")) quick = true;
    else if (!std::strcmp(argv[i], "--threads") && i + 1 < argc) threads = std::atoi(argv[++i]);
    else {
      std::fprintf(stderr, "usage: loom_bench [--quick] [--threads N]\n");
      return 2;
    }
  }
  const int64_t n = quick ? (1 << 20) : (1 << 24);          // 16M elements
  const int64_t side = quick ? 1024 : 4096;                  // 16M-cell grid
  const int reps = quick ? 5 : 15;
  loom::bench::set_baseline_threads(threads);
  std::printf("loom_bench: %d threads, %lld elements, %lldx%lld grid, median of %d runs\n\n", threads,
              static_cast<long long>(n), static_cast<long long>(side), static_cast<long long>(side), reps);

  loom::ProgramOptions options;
  options.threads = threads;
  options.offline_cache = false;
  loom::Program program(options);
  program.load_file(source("bench/graphs/bench_kernels.loom.json"));

  std::vector<float> x(static_cast<size_t>(n), 1.5f), y(static_cast<size_t>(n), 0.25f), z(static_cast<size_t>(n));
  program.wrap_ndarray("x", {loom::Scalar::F32}, {n}, x.data());
  program.wrap_ndarray("y", {loom::Scalar::F32}, {n}, y.data());
  std::vector<float> grid_a(static_cast<size_t>(side * side)), grid_b(static_cast<size_t>(side * side));
  for (size_t i = 0; i < grid_a.size(); ++i) grid_a[i] = static_cast<float>(i % 97) * 0.01f;
  program.wrap_ndarray("ga", {loom::Scalar::F32}, {side, side}, grid_a.data());
  program.wrap_ndarray("gb", {loom::Scalar::F32}, {side, side}, grid_b.data());

  // ---- bandwidth and throughput
  double t_copy = median_seconds(reps, [&] { loom::bench::copy_f32(x.data(), z.data(), n); });
  double copy_gbs = 2.0 * 4.0 * static_cast<double>(n) / t_copy / 1e9;  // stores also pay write-allocate
  double t_scale = median_seconds(reps, [&] { loom::bench::scale_f32(1.0f, z.data(), n); });
  double rw_gbs = 2.0 * 4.0 * static_cast<double>(n) / t_scale / 1e9;
  double t_saxpy_hand = median_seconds(reps, [&] { loom::bench::saxpy_f32(0.5f, x.data(), y.data(), n); });
  loom::Args saxpy_args = {{"a", 0.5}, {"x", "x"}, {"y", "y"}};
  double t_saxpy_loom = median_seconds(reps, [&] { program.launch("saxpy", saxpy_args); });
  double saxpy_bytes = 3.0 * 4.0 * static_cast<double>(n);
  double t_st_hand = median_seconds(reps, [&] {
    loom::bench::stencil5_f32(grid_a.data(), grid_b.data(), side, side, 0.1f);
  });
  loom::Args stencil_args = {{"k", 0.1}, {"src", "ga"}, {"dst", "gb"}};
  double t_st_loom = median_seconds(reps, [&] { program.launch("stencil", stencil_args); });
  double st_bytes = 2.0 * 4.0 * static_cast<double>(side * side);

  std::printf("throughput (ratio = Loom / hand-written; goal >= 0.90)\n");
  row("copy bandwidth", copy_gbs, "GB/s", copy_gbs / rw_gbs, "of in-place (write-allocate)");
  row("in-place bandwidth (baseline)", rw_gbs, "GB/s", 1.0, "");
  row("saxpy hand-written", saxpy_bytes / t_saxpy_hand / 1e9, "GB/s", saxpy_bytes / t_saxpy_hand / 1e9 / rw_gbs, "of in-place");
  row("saxpy loom", saxpy_bytes / t_saxpy_loom / 1e9, "GB/s", saxpy_bytes / t_saxpy_loom / 1e9 / rw_gbs, "of in-place");
  row("saxpy loom vs hand-written", t_saxpy_hand / t_saxpy_loom, "x", t_saxpy_hand / t_saxpy_loom, "throughput");
  row("stencil hand-written", st_bytes / t_st_hand / 1e9, "GB/s", st_bytes / t_st_hand / 1e9 / copy_gbs, "of copy");
  row("stencil loom", st_bytes / t_st_loom / 1e9, "GB/s", st_bytes / t_st_loom / 1e9 / copy_gbs, "of copy");
  row("stencil loom vs hand-written", t_st_hand / t_st_loom, "x", t_st_hand / t_st_loom, "throughput");

  // ---- launch overhead
  std::vector<float> small_x(1024, 1.0f), small_y(1024, 2.0f);
  program.wrap_ndarray("sx", {loom::Scalar::F32}, {1024}, small_x.data());
  program.wrap_ndarray("sy", {loom::Scalar::F32}, {1024}, small_y.data());
  const int launches = quick ? 2000 : 20000;
  auto per_launch = [&](const char* kernel, const loom::Args& args) {
    return median_seconds(5, [&] {
             for (int i = 0; i < launches; ++i) program.launch(kernel, args);
           }) / launches * 1e6;
  };
  double us_empty = per_launch("empty", {});
  double us_one = per_launch("one_store", {{"y", "sy"}});
  loom::Args small_args = {{"a", 0.5}, {"x", "sx"}, {"y", "sy"}};
  double us_small = per_launch("saxpy", small_args);
  double us_small_hand = median_seconds(5, [&] {
                           for (int i = 0; i < launches; ++i)
                             loom::bench::saxpy_f32(0.5f, small_x.data(), small_y.data(), 1024);
                         }) / launches * 1e6;
  std::printf("\nlaunch overhead (goal: empty kernel <= 5 us)\n");
  row("empty kernel", us_empty, "us", us_empty / 5.0, "of the 5 us goal");
  row("one serial task (1 store)", us_one, "us", us_one / 5.0, "of the 5 us goal");
  row("saxpy 1k loom", us_small, "us", us_small / us_small_hand, "of hand-written time (OpenMP)");
  row("saxpy 1k hand-written", us_small_hand, "us", 1.0, "");

  // The same kernels on one thread: the baseline for the scaling figures below.
  loom::ProgramOptions serial_options = options;
  serial_options.threads = 1;
  loom::Program serial(serial_options);
  serial.load_file(source("bench/graphs/bench_kernels.loom.json"));

  // ---- a launch after an idle gap: the workers are asleep, and the launch must not wait for
  // them to wake when the caller can do the work itself. Baseline: the same on one thread.
  {
    const int64_t m = 16384;
    const int samples = quick ? 200 : 1000;
    std::vector<float> gx(static_cast<size_t>(m), 1.0f), gy(static_cast<size_t>(m), 2.0f);
    for (loom::Program* p : {&program, &serial}) {
      p->wrap_ndarray("gx", {loom::Scalar::F32}, {m}, gx.data());
      p->wrap_ndarray("gy", {loom::Scalar::F32}, {m}, gy.data());
    }
    loom::Args gap_args = {{"a", 0.5}, {"x", "gx"}, {"y", "gy"}};
    auto after_gap = [&](loom::Program& p, double* p99) {
      p.launch("saxpy", gap_args);
      std::vector<double> t;
      for (int i = 0; i < samples; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        auto t0 = Clock::now();
        p.launch("saxpy", gap_args);
        t.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
      }
      std::sort(t.begin(), t.end());
      *p99 = t[t.size() * 99 / 100];
      return t[t.size() / 2];
    };
    double p99_pool = 0, p99_one = 0;
    double us_pool = after_gap(program, &p99_pool);
    double us_one = after_gap(serial, &p99_one);
    std::printf("\nlaunch after a 1 ms idle gap, saxpy 16k (baseline: the same on 1 thread)\n");
    row("median, pool", us_pool, "us", us_pool / us_one, "of 1 thread");
    row("p99, pool", p99_pool, "us", p99_pool / p99_one, "of 1 thread");
    row("median, 1 thread", us_one, "us", 1.0, "");
    row("p99, 1 thread", p99_one, "us", 1.0, "");
  }

  // ---- 2-d tasks with few outer rows: chunks are sized by total work, so these split across
  // the pool (they used to run whole on one thread). Baseline: the same on one thread.
  std::printf("\n2-d stencil with few rows, %d threads (ratio = 1-thread time / pool time)\n", threads);
  for (auto [rows, cols] : {std::pair<int64_t, int64_t>{256, 256}, {64, 4096}}) {
    std::vector<float> a(static_cast<size_t>(rows * cols), 1.0f), b(a.size());
    std::string src = "s" + std::to_string(rows), dst = "d" + std::to_string(rows);
    for (loom::Program* p : {&program, &serial}) {
      p->wrap_ndarray(src, {loom::Scalar::F32}, {rows, cols}, a.data());
      p->wrap_ndarray(dst, {loom::Scalar::F32}, {rows, cols}, b.data());
    }
    loom::Args args = {{"k", 0.1}, {"src", src}, {"dst", dst}};
    const int launches_2d = quick ? 200 : 2000;
    auto per_launch_us = [&](loom::Program& p) {
      return median_seconds(5, [&] {
               for (int i = 0; i < launches_2d; ++i) p.launch("stencil", args);
             }) / launches_2d * 1e6;
    };
    double us_pool = per_launch_us(program), us_one = per_launch_us(serial);
    std::string name = "stencil " + std::to_string(rows) + "x" + std::to_string(cols);
    row(name.c_str(), us_pool, "us", us_one / us_pool, "speed-up over 1 thread");
  }

  // ---- compile latency per sample graph
  std::printf("\ncompile latency per kernel (goal: warm offline <= 5 ms and >= 20x faster than cold)\n");
  std::string cache_dir = (std::filesystem::temp_directory_path() / "loom_bench_cache").string();
  for (const auto& entry : std::filesystem::directory_iterator(source("assets/graphs"))) {
    std::string path = entry.path().string();
    if (path.size() < 10 || path.substr(path.size() - 10) != ".loom.json") continue;
    std::filesystem::remove_all(cache_dir);
    loom::ProgramOptions o;
    o.threads = threads;
    o.cache_dir = cache_dir;
    double cold = 0, warm_memory = 0, warm_disk = 0;
    size_t kernels = 0;
    {
      loom::Program p(o);
      p.load_file(path);
      auto t0 = Clock::now();
      kernels = p.prepare_pipelines(true).size();
      cold = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
      auto t1 = Clock::now();
      p.prepare_pipelines(true);
      warm_memory = std::chrono::duration<double, std::milli>(Clock::now() - t1).count();
    }
    {
      loom::Program p(o);
      p.load_file(path);
      auto t0 = Clock::now();
      p.prepare_pipelines(true);
      warm_disk = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    }
    double k = static_cast<double>(std::max<size_t>(kernels, 1));
    std::printf("  %-22s %zu kernels: cold %8.2f ms, warm memory %7.3f ms, warm offline %7.3f ms per kernel; "
                "offline %6.1fx faster than cold\n",
                entry.path().filename().string().c_str(), kernels, cold / k, warm_memory / k, warm_disk / k,
                cold / std::max(warm_disk, 1e-6));
  }
  std::filesystem::remove_all(cache_dir);
  return 0;
}
