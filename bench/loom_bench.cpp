// Loom's benchmark harness. Every figure is printed next to a baseline measured in the same
// run: hand-written C++ loops (-O3 -march=native) split over a thread pool of the same size
// exactly as Loom splits its launches, for throughput; a plain copy, for bandwidth; the same
// kernel on one thread, for scaling; a cold compile, for cache warm starts.
//
// Throughput figures are the best of several runs with Loom and its baseline interleaved: a
// busy machine slows both sides alike, and the runs it hit are dropped. (A statically
// scheduled OpenMP baseline, waiting for its slowest thread, once made Loom look 20x faster.)
//
//   loom_bench [--quick] [--threads N]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <limits>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <unistd.h>

#include "bench/handwritten.h"
#include "engine_plugin/include/loom/program.h"
#include "runtime/cpu/cpu_device.h"
#include "runtime/cpu/thread_pool.h"

namespace {

using Clock = std::chrono::steady_clock;

double seconds_of(const std::function<void()>& fn) {
  auto t0 = Clock::now();
  fn();
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Best seconds of each of `fns` over `reps` rounds, after a warm-up round; each round runs
// every function once, in turn.
std::vector<double> best_interleaved(int reps, const std::vector<std::function<void()>>& fns) {
  std::vector<double> best(fns.size(), std::numeric_limits<double>::infinity());
  for (const auto& fn : fns) fn();
  for (int r = 0; r < reps; ++r)
    for (size_t i = 0; i < fns.size(); ++i) best[i] = std::min(best[i], seconds_of(fns[i]));
  return best;
}

// Median seconds of one call of each of `fns`, for figures of a few microseconds where one
// preemption would swamp a batch's total. The functions take turns in blocks of `block`
// calls, so a block runs on warm caches and every function sees the same machine.
std::vector<double> median_interleaved(int rounds, int block,
                                       const std::vector<std::function<void()>>& fns) {
  std::vector<std::vector<double>> t(fns.size());
  for (const auto& fn : fns) fn();
  for (int r = 0; r < rounds; ++r)
    for (size_t i = 0; i < fns.size(); ++i)
      for (int k = 0; k < block; ++k) t[i].push_back(seconds_of(fns[i]));
  std::vector<double> median;
  for (auto& v : t) {
    std::nth_element(v.begin(), v.begin() + static_cast<long>(v.size() / 2), v.end());
    median.push_back(v[v.size() / 2]);
  }
  return median;
}

// `fn` run `count` times in a row, as one timed run.
std::function<void()> repeated(int count, std::function<void()> fn) {
  return [count, fn] {
    for (int i = 0; i < count; ++i) fn();
  };
}

std::string source(const std::string& rel) { return std::string(LOOM_SOURCE_DIR) + "/" + rel; }

void row(const std::string& name, double value, const char* unit, double ratio, const char* vs) {
  std::printf("  %-34s %10.3f %-6s  %6.2fx %s\n", name.c_str(), value, unit, ratio, vs);
}

double gbs(double bytes, double seconds) { return bytes / seconds / 1e9; }

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  int threads = static_cast<int>(std::thread::hardware_concurrency());
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--quick")) {
      quick = true;
    } else if (!std::strcmp(argv[i], "--threads") && i + 1 < argc) {
      threads = std::max(1, std::atoi(argv[++i]));
    } else {
      std::fprintf(stderr, "usage: loom_bench [--quick] [--threads N]\n");
      return 2;
    }
  }
  const int64_t n = quick ? (1 << 20) : (1 << 24);  // 16M elements
  const int64_t side = quick ? 1024 : 4096;         // 16M-cell grid
  const int reps = quick ? 5 : 15;
  std::printf(
      "loom_bench: %d threads, %lld elements, %lldx%lld grid, best of %d interleaved runs\n\n",
      threads, static_cast<long long>(n), static_cast<long long>(side),
      static_cast<long long>(side), reps);

  loom::ProgramOptions options;
  options.threads = threads;
  options.offline_cache = false;
  loom::Program program(options);
  program.load_file(source("bench/graphs/bench_kernels.loom.json"));
  // The same kernels on one thread: the baseline for the scaling figures.
  loom::ProgramOptions serial_options = options;
  serial_options.threads = 1;
  loom::Program serial(serial_options);
  serial.load_file(source("bench/graphs/bench_kernels.loom.json"));

  // The baselines' pool: as many threads as Loom's, chunks sized as Loom sizes them.
  loom::cpu::ThreadPool pool(threads);
  auto split = [&](int64_t rows, int64_t row_work,
                   const std::function<void(int64_t, int64_t)>& chunk) {
    pool.parallel_for(0, rows, loom::cpu::chunk_rows(rows, row_work, threads), chunk);
  };

  std::vector<float> x(static_cast<size_t>(n), 1.5f), y(static_cast<size_t>(n), 0.25f),
      z(static_cast<size_t>(n));
  program.wrap_ndarray("x", {loom::Scalar::F32}, {n}, x.data());
  program.wrap_ndarray("y", {loom::Scalar::F32}, {n}, y.data());
  std::vector<float> grid_a(static_cast<size_t>(side * side)),
      grid_b(static_cast<size_t>(side * side));
  for (size_t i = 0; i < grid_a.size(); ++i) grid_a[i] = static_cast<float>(i % 97) * 0.01f;
  program.wrap_ndarray("ga", {loom::Scalar::F32}, {side, side}, grid_a.data());
  program.wrap_ndarray("gb", {loom::Scalar::F32}, {side, side}, grid_b.data());

  // ---- bandwidth and throughput
  loom::Args saxpy_args = {{"a", 0.5}, {"x", "x"}, {"y", "y"}};
  loom::Args stencil_args = {{"k", 0.1}, {"src", "ga"}, {"dst", "gb"}};
  auto copy_hand = [&] {
    split(n, 1, [&](int64_t b, int64_t e) { loom::bench::copy_f32(x.data(), z.data(), b, e); });
  };
  auto scale_hand = [&] {
    split(n, 1, [&](int64_t b, int64_t e) { loom::bench::scale_f32(1.0f, z.data(), b, e); });
  };
  auto saxpy_hand = [&] {
    split(n, 1,
          [&](int64_t b, int64_t e) { loom::bench::saxpy_f32(0.5f, x.data(), y.data(), b, e); });
  };
  auto stencil_hand = [&] {  // interior rows [1, side - 1)
    split(side - 2, side, [&](int64_t b, int64_t e) {
      loom::bench::stencil5_f32(grid_a.data(), grid_b.data(), side, 0.1f, b + 1, e + 1);
    });
  };
  auto saxpy_loom = [&] { program.launch("saxpy", saxpy_args); };
  auto stencil_loom = [&] { program.launch("stencil", stencil_args); };
  auto t = best_interleaved(
      reps, {copy_hand, scale_hand, saxpy_hand, saxpy_loom, stencil_hand, stencil_loom});
  const double t_copy = t[0], t_scale = t[1], t_saxpy_hand = t[2], t_saxpy_loom = t[3],
               t_st_hand = t[4], t_st_loom = t[5];
  // Bytes the program asks for; a copy's stores also pay a write-allocate read, which is why
  // the in-place figure is higher and saxpy (whose stores hit lines it just read) can exceed 1x.
  const double copy_gbs = gbs(2.0 * 4.0 * static_cast<double>(n), t_copy);
  const double rw_gbs = gbs(2.0 * 4.0 * static_cast<double>(n), t_scale);
  const double saxpy_bytes = 3.0 * 4.0 * static_cast<double>(n);
  const double st_bytes = 2.0 * 4.0 * static_cast<double>(side * side);

  std::printf(
      "throughput (baselines: hand-written loops on a pool split like Loom's; goal >= 0.90)\n");
  row("copy bandwidth (baseline)", copy_gbs, "GB/s", 1.0, "");
  row("in-place bandwidth", rw_gbs, "GB/s", rw_gbs / copy_gbs, "of copy (no write-allocate)");
  row("saxpy hand-written", gbs(saxpy_bytes, t_saxpy_hand), "GB/s",
      gbs(saxpy_bytes, t_saxpy_hand) / copy_gbs, "of copy");
  row("saxpy loom", gbs(saxpy_bytes, t_saxpy_loom), "GB/s",
      gbs(saxpy_bytes, t_saxpy_loom) / copy_gbs, "of copy");
  row("saxpy loom", gbs(saxpy_bytes, t_saxpy_loom), "GB/s", gbs(saxpy_bytes, t_saxpy_loom) / rw_gbs,
      "of in-place");
  row("saxpy loom vs hand-written", t_saxpy_hand / t_saxpy_loom, "x", t_saxpy_hand / t_saxpy_loom,
      "throughput");
  row("stencil hand-written", gbs(st_bytes, t_st_hand), "GB/s", gbs(st_bytes, t_st_hand) / copy_gbs,
      "of copy");
  row("stencil loom", gbs(st_bytes, t_st_loom), "GB/s", gbs(st_bytes, t_st_loom) / copy_gbs,
      "of copy");
  row("stencil loom vs hand-written", t_st_hand / t_st_loom, "x", t_st_hand / t_st_loom,
      "throughput");

  // ---- launch overhead
  std::vector<float> small_x(1024, 1.0f), small_y(1024, 2.0f);
  program.wrap_ndarray("sx", {loom::Scalar::F32}, {1024}, small_x.data());
  program.wrap_ndarray("sy", {loom::Scalar::F32}, {1024}, small_y.data());
  const int launches = quick ? 2000 : 20000;
  loom::Args one_args = {{"y", "sy"}};
  loom::Args small_args = {{"a", 0.5}, {"x", "sx"}, {"y", "sy"}};
  auto saxpy_1k_hand = [&] {
    loom::bench::saxpy_f32(0.5f, small_x.data(), small_y.data(), 0, 1024);
  };
  auto o = best_interleaved(5, {repeated(launches, [&] { program.launch("empty"); }),
                                repeated(launches, [&] { program.launch("one_store", one_args); }),
                                repeated(launches, [&] { program.launch("saxpy", small_args); }),
                                repeated(launches, saxpy_1k_hand)});
  for (double& v : o) v = v / launches * 1e6;
  std::printf("\nlaunch overhead (goal: empty kernel <= 5 us)\n");
  row("empty kernel", o[0], "us", o[0] / 5.0, "of the 5 us goal");
  row("one serial task (1 store)", o[1], "us", o[1] / 5.0, "of the 5 us goal");
  row("saxpy 1k loom", o[2], "us", o[2] / o[3], "of a plain call of the hand-written loop");
  row("saxpy 1k hand-written (plain call)", o[3], "us", 1.0, "");

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
    // Alternating the two programs, so both see the same machine.
    std::vector<double> on_pool, on_one;
    program.launch("saxpy", gap_args);
    serial.launch("saxpy", gap_args);
    for (int i = 0; i < samples; ++i) {
      for (auto [p, out] : {std::pair{&program, &on_pool}, std::pair{&serial, &on_one}}) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        out->push_back(seconds_of([&] { p->launch("saxpy", gap_args); }) * 1e6);
      }
    }
    for (auto* v : {&on_pool, &on_one}) std::sort(v->begin(), v->end());
    auto median = [](const std::vector<double>& v) { return v[v.size() / 2]; };
    auto p99 = [](const std::vector<double>& v) { return v[v.size() * 99 / 100]; };
    std::printf("\nlaunch after a 1 ms idle gap, saxpy 16k (baseline: the same on 1 thread)\n");
    row("median, " + std::to_string(threads) + " threads", median(on_pool), "us",
        median(on_pool) / median(on_one), "of 1 thread");
    row("p99, " + std::to_string(threads) + " threads", p99(on_pool), "us",
        p99(on_pool) / p99(on_one), "of 1 thread");
    row("median, 1 thread", median(on_one), "us", 1.0, "");
    row("p99, 1 thread", p99(on_one), "us", 1.0, "");
  }

  // ---- 2-d tasks with few outer rows: chunks are sized by total work, so these split across
  // the pool (they used to run whole on one thread). Baseline: the same on one thread.
  std::printf(
      "\n2-d stencil with few rows, %d threads, median launch (ratio = 1-thread time / pool "
      "time)\n",
      threads);
  for (auto [rows, cols] : {std::pair<int64_t, int64_t>{256, 256}, {64, 4096}}) {
    std::vector<float> a(static_cast<size_t>(rows * cols), 1.0f), b(a.size());
    std::string src = "s" + std::to_string(rows), dst = "d" + std::to_string(rows);
    for (loom::Program* p : {&program, &serial}) {
      p->wrap_ndarray(src, {loom::Scalar::F32}, {rows, cols}, a.data());
      p->wrap_ndarray(dst, {loom::Scalar::F32}, {rows, cols}, b.data());
    }
    loom::Args args = {{"k", 0.1}, {"src", src}, {"dst", dst}};
    auto s = median_interleaved(
        quick ? 10 : 100, 50,
        {[&] { program.launch("stencil", args); }, [&] { serial.launch("stencil", args); }});
    double us_pool = s[0] * 1e6, us_one = s[1] * 1e6;
    row("stencil " + std::to_string(rows) + "x" + std::to_string(cols), us_pool, "us",
        us_one / us_pool, "speed-up over 1 thread");
  }

  // ---- compile latency per sample graph
  std::printf(
      "\ncompile latency per kernel (goal: warm offline <= 5 ms and >= 20x faster than cold)\n");
  std::string cache_dir =
      (std::filesystem::temp_directory_path() / ("loom_bench_cache_" + std::to_string(getpid())))
          .string();
  for (const auto& entry : std::filesystem::directory_iterator(source("assets/graphs"))) {
    std::string path = entry.path().string();
    if (path.size() < 10 || path.substr(path.size() - 10) != ".loom.json") continue;
    std::filesystem::remove_all(cache_dir);
    loom::ProgramOptions co;
    co.threads = threads;
    co.cache_dir = cache_dir;
    double cold = 0, warm_memory = 0, warm_disk = 0;
    size_t kernels = 0;
    {
      loom::Program p(co);
      p.load_file(path);
      cold = seconds_of([&] { kernels = p.prepare_pipelines(true).size(); }) * 1e3;
      warm_memory = seconds_of([&] { p.prepare_pipelines(true); }) * 1e3;
    }
    {
      loom::Program p(co);
      p.load_file(path);
      warm_disk = seconds_of([&] { p.prepare_pipelines(true); }) * 1e3;
    }
    double k = static_cast<double>(std::max<size_t>(kernels, 1));
    std::printf(
        "  %-22s %zu kernels: cold %8.2f ms, warm memory %7.3f ms, warm offline %7.3f ms per "
        "kernel; "
        "offline %6.1fx faster than cold\n",
        entry.path().filename().string().c_str(), kernels, cold / k, warm_memory / k, warm_disk / k,
        cold / std::max(warm_disk, 1e-6));
  }
  std::filesystem::remove_all(cache_dir);
  return 0;
}
