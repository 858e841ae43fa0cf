// The Vulkan backend's benchmarks. Every figure is printed next to a baseline measured in the
// same run, on the same VkDevice:
//
// - kernels: saxpy, the 5-point stencil, a scatter of particles into a grid with float atomic
//   adds (the shape of mpm88's P2G) and a sum reduction, each written as a Loom document
//   (bench/graphs/) and launched through loom::Program, against its hand-written GLSL twin
//   (bench/shaders/, compiled at build time) dispatched on the same device from buffers of
//   the same memory; both sides record a batch of launches, submit and wait, in turns. Each
//   figure is a time ratio Loom / GLSL (goal: at most 1.11, Loom at 0.9x the hand-written
//   speed or better) and, for the streaming kernels, a fraction of the device's own buffer
//   copy (vkCmdCopyBuffer). Results of both sides are compared once before timing.
// - launches: the CPU cost of a launch inside a batch against vkCmdDispatch recorded by hand
//   (the empty shader, bound once) and against a hand-recorded launch of the same small
//   kernel (bind, push constants, dispatch, barrier); goal: within 2 us of the latter.
// - an unchanged argpack against the same values as plain arguments; a cold start against
//   the caches; SPIRV-Tools' optimizer on against off.
//
//   loom_vulkan_bench [--quick] [--device D] [--runs N] [--workgroup N]
//                     [--kernels-only | --spirv-passes]
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "bench/timing.h"
#include "bench/vulkan_baseline.h"
#include "bench_shaders/empty.h"
#include "bench_shaders/reduce_sum_f32.h"
#include "bench_shaders/reduce_sum_f32_cas.h"
#include "bench_shaders/saxpy.h"
#include "bench_shaders/scatter.h"
#include "bench_shaders/scatter_cas.h"
#include "bench_shaders/stencil.h"
#include "compiler/codegen_spirv/spirv_tools.h"
#include "engine_plugin/include/loom/program.h"
#include "runtime/common/spirv_kernel.h"
#include "runtime/vulkan/command_stream.h"
#include "runtime/vulkan/gpu_buffer.h"
#include "runtime/vulkan/memory_allocator.h"
#include "runtime/vulkan/vulkan_device.h"

namespace {

using Clock = std::chrono::steady_clock;
using loom::bench::GlslKernel;
using loom::bench::grid_for;
using loom::bench::time_interleaved;
using loom::bench::Timing;

constexpr double kTimeRatioGoal = 1.0 / 0.9;  // Loom at >= 0.9x the hand-written speed
constexpr double kLaunchGoalUs = 2.0;         // per launch, over the hand-recorded launch

std::string source(const std::string& rel) { return std::string(LOOM_SOURCE_DIR) + "/" + rel; }

double thread_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

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

void row(const char* name, double value, const char* unit, double ratio, const char* vs) {
  std::printf("  %-44s %10.3f %-6s  %8.3fx %s\n", name, value, unit, ratio, vs);
}

// Deterministic data: a hash of the index, in [0, 1).
float unit_hash(uint64_t i) {
  uint64_t z = i + 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return static_cast<float>((z ^ (z >> 31)) >> 40) / 16777216.0f;
}

std::vector<float> make_data(size_t n, uint64_t seed, float lo, float hi) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = lo + (hi - lo) * unit_hash(seed * 0x100000000ull + i);
  return v;
}

// The hand-written side: buffers of the device's memory, filled once, and a stream to
// record into.
class Baseline {
 public:
  explicit Baseline(loom::vk::VulkanDevice& device)
      : device_(device), alloc_(device), stream_(device, alloc_) {}
  loom::vk::VulkanDevice& device() { return device_; }
  loom::vk::CommandStream& stream() { return stream_; }

  const loom::vk::GpuBuffer& buffer(const std::vector<float>& data, const char* what) {
    const VkBufferUsageFlags usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
                                     VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                     VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    VkDeviceSize bytes = data.size() * sizeof(float);
    buffers_.push_back(std::make_unique<loom::vk::GpuBuffer>(
        device_, alloc_, bytes, usage, loom::vk::MemoryUse::DeviceLocal, what));
    stream_.upload(*buffers_.back(), 0, data.data(), bytes);
    stream_.finish();
    return *buffers_.back();
  }
  std::vector<float> read(const loom::vk::GpuBuffer& b) {
    std::vector<float> out(b.size() / sizeof(float));
    stream_.download(b, 0, out.data(), b.size());
    stream_.finish();
    return out;
  }
  // Records one dispatch after the barrier its buffers need (reads and writes of each).
  void launch(const GlslKernel& k, const void* push, loom::bench::Grid grid,
              const std::vector<std::pair<const loom::vk::GpuBuffer*, uint8_t>>& access) {
    loom::vk::Accesses a;
    for (const auto& [buf, bits] : access) a.push_back({buf->id(), bits});
    stream_.hazard(a);
    k.dispatch(stream_.recording(), push, grid.x, grid.y);
    stream_.count_dispatch();
  }

 private:
  loom::vk::VulkanDevice& device_;
  loom::vk::MemoryAllocator alloc_;
  loom::vk::CommandStream stream_;
  std::vector<std::unique_ptr<loom::vk::GpuBuffer>> buffers_;
};

void set_array(loom::Program& p, const std::string& name, const std::vector<float>& values) {
  loom::ArrayView a = p.array(name);
  std::memcpy(a.data, values.data(), std::min(a.bytes, values.size() * sizeof(float)));
}

std::vector<float> get_array(loom::Program& p, const std::string& name) {
  loom::ArrayView a = p.array(name);
  std::vector<float> out(a.bytes / sizeof(float));
  std::memcpy(out.data(), a.data, a.bytes);
  return out;
}

// Largest difference between the two, relative to the largest magnitude of `reference`.
double relative_difference(const std::vector<float>& got, const std::vector<float>& reference) {
  double diff = 0, scale = 1e-30;
  for (size_t i = 0; i < std::min(got.size(), reference.size()); ++i) {
    diff = std::max(diff, std::fabs(static_cast<double>(got[i]) - reference[i]));
    scale = std::max(scale, std::fabs(static_cast<double>(reference[i])));
  }
  return got.size() == reference.size() ? diff / scale : INFINITY;
}

struct Verdicts {
  bool results_ok = true;
  int goals = 0, met = 0;
};

// A Loom kernel and its GLSL twin: `check` once (both from the same inputs), then timed in
// turns, each run a batch of `batch` launches then a wait.
void compare(const char* name, Verdicts& v, int runs, int batch, double bytes_per_launch,
             double copy_bw, const std::function<void()>& loom_launch,
             const std::function<void()>& loom_wait, const std::function<void()>& glsl_launch,
             const std::function<void()>& glsl_wait) {
  std::vector<Timing> t = time_interleaved(runs, {[&] {
                                                    for (int i = 0; i < batch; ++i) glsl_launch();
                                                    glsl_wait();
                                                  },
                                                  [&] {
                                                    for (int i = 0; i < batch; ++i) loom_launch();
                                                    loom_wait();
                                                  }});
  double glsl = t[0].median / batch, loom = t[1].median / batch;
  double ratio = loom / glsl;
  ++v.goals;
  v.met += ratio <= kTimeRatioGoal;
  if (bytes_per_launch > 0)
    std::printf(
        "  %-9s GLSL %9.3f ms  %6.2f GB/s %5.3f of copy | Loom %9.3f ms  %6.2f GB/s %5.3f of "
        "copy | time Loom/GLSL %.2f (bests %.2f): %s\n",
        name, glsl * 1e3, bytes_per_launch / glsl / 1e9, bytes_per_launch / glsl / copy_bw,
        loom * 1e3, bytes_per_launch / loom / 1e9, bytes_per_launch / loom / copy_bw, ratio,
        t[1].best / t[0].best, ratio <= kTimeRatioGoal ? "goal met" : "goal NOT met");
  else
    std::printf("  %-9s GLSL %9.3f ms | Loom %9.3f ms | time Loom/GLSL %.2f (bests %.2f): %s\n",
                name, glsl * 1e3, loom * 1e3, ratio, t[1].best / t[0].best,
                ratio <= kTimeRatioGoal ? "goal met" : "goal NOT met");
}

void report_check(const char* name, Verdicts& v, double diff, double tolerance) {
  bool ok = diff <= tolerance;
  v.results_ok = v.results_ok && ok;
  std::printf("  %-9s results: largest difference %.1e of the largest value %s\n", name, diff,
              ok ? "(agree)" : "DISAGREE");
}

// Bytes per second of the device's own buffer copy (read + write), the bandwidth baseline.
double device_copy_bandwidth(Baseline& base, size_t bytes, int reps) {
  std::vector<float> zeros(bytes / sizeof(float), 0.0f);
  const loom::vk::GpuBuffer& a = base.buffer(zeros, "copy source");
  const loom::vk::GpuBuffer& b = base.buffer(zeros, "copy target");
  const int batch = 8;
  double t = median_seconds(reps, [&] {
    for (int i = 0; i < batch; ++i) {
      base.stream().hazard({{a.id(), loom::vk::kRead}, {b.id(), loom::vk::kWrite}});
      VkBufferCopy region{0, 0, bytes};
      vkCmdCopyBuffer(base.stream().recording(), a.handle(), b.handle(), 1, &region);
    }
    base.stream().finish();
  });
  return 2.0 * static_cast<double>(bytes) * batch / t;
}

int g_workgroup = 0;  // --workgroup: Loom's and the GLSL twins'; 0: the device's preferred

loom::ProgramOptions options(const std::shared_ptr<loom::vk::VulkanDevice>& device) {
  loom::ProgramOptions o;
  o.backend = loom::Backend::Vulkan;
  o.vulkan_device = device;
  o.offline_cache = false;
  o.workgroup_size = g_workgroup;
  return o;
}

// The workgroup size Loom's parallel tasks get, which the GLSL twins use too.
uint32_t workgroup_of(const loom::vk::VulkanDevice& device) {
  return g_workgroup ? static_cast<uint32_t>(g_workgroup)
                     : loom::vk::preferred_workgroup_size(device.caps());
}

struct Sizes {
  int64_t n;          // saxpy elements
  int64_t side;       // stencil grid side
  int64_t particles;  // scatter
  int64_t grid;       // scatter grid side
  int64_t reduce;     // reduction elements
  int runs, batch;
};

void kernels_section(const std::shared_ptr<loom::vk::VulkanDevice>& device, Baseline& base,
                     const Sizes& s, Verdicts& v) {
  loom::vk::VulkanDevice& dev = *device;
  const uint32_t max_x = dev.caps().max_workgroup_count_x;
  const bool float_atomics = dev.caps().features & loom::kNeedFloat32AtomicAdd;
  loom::ProgramOptions o = options(device);
  loom::Program p(o);
  p.load_file(source("bench/graphs/bench_kernels.loom.json"));
  const uint32_t wg = workgroup_of(dev);

  double copy_bw = device_copy_bandwidth(base, static_cast<size_t>(s.n) * 4, s.runs);
  std::printf(
      "kernels against hand-written GLSL on the same device (both: workgroups of %u, a batch "
      "of %d launches then a wait, median of %d batches in turns; time ratio goal <= %.2f)\n",
      wg, s.batch, s.runs, kTimeRatioGoal);
  row("device buffer copy (vkCmdCopyBuffer)", copy_bw / 1e9, "GB/s", 1.0, "the bandwidth baseline");

  // ---- saxpy: y = a x + y
  {
    const auto n = static_cast<size_t>(s.n);
    std::vector<float> x = make_data(n, 1, -1, 1), y = make_data(n, 2, -1, 1);
    p.create_ndarray("x", {loom::Scalar::F32}, {s.n});
    p.create_ndarray("y", {loom::Scalar::F32}, {s.n});
    set_array(p, "x", x);
    set_array(p, "y", y);
    const loom::vk::GpuBuffer& gx = base.buffer(x, "saxpy x");
    const loom::vk::GpuBuffer& gy = base.buffer(y, "saxpy y");
    GlslKernel k(dev, saxpy, sizeof(saxpy), {&gx, &gy}, 8, wg);
    struct {
      float a;
      uint32_t n;
    } push{2.0f, static_cast<uint32_t>(n)};
    loom::bench::Grid grid = grid_for(n, wg, max_x);
    const loom::Args args = {{"a", 2.0}, {"x", "x"}, {"y", "y"}};
    auto loom_launch = [&] { p.launch("saxpy", args); };
    auto glsl_launch = [&] {
      base.launch(k, &push, grid,
                  {{&gx, loom::vk::kRead}, {&gy, loom::vk::kRead | loom::vk::kWrite}});
    };
    loom_launch();
    glsl_launch();
    base.stream().finish();
    report_check("saxpy", v, relative_difference(get_array(p, "y"), base.read(gy)), 0.0);
    compare(
        "saxpy", v, s.runs, s.batch, 12.0 * static_cast<double>(n), copy_bw, loom_launch,
        [&] { p.synchronize(); }, glsl_launch, [&] { base.stream().finish(); });
  }

  // ---- 5-point stencil, src -> dst
  {
    const auto cells = static_cast<size_t>(s.side * s.side);
    std::vector<float> src = make_data(cells, 3, 0, 1), dst(cells, 0.0f);
    p.create_ndarray("ga", {loom::Scalar::F32}, {s.side, s.side});
    p.create_ndarray("gb", {loom::Scalar::F32}, {s.side, s.side});
    set_array(p, "ga", src);
    const loom::vk::GpuBuffer& ga = base.buffer(src, "stencil src");
    const loom::vk::GpuBuffer& gb = base.buffer(dst, "stencil dst");
    GlslKernel k(dev, stencil, sizeof(stencil), {&ga, &gb}, 12, wg);
    struct {
      float k;
      uint32_t rows, cols;
    } push{0.2f, static_cast<uint32_t>(s.side), static_cast<uint32_t>(s.side)};
    loom::bench::Grid grid{static_cast<uint32_t>((s.side - 2 + wg - 1) / wg),
                           static_cast<uint32_t>(s.side - 2)};
    const loom::Args args = {{"k", 0.2}, {"src", "ga"}, {"dst", "gb"}};
    auto loom_launch = [&] { p.launch("stencil", args); };
    auto glsl_launch = [&] {
      base.launch(k, &push, grid, {{&ga, loom::vk::kRead}, {&gb, loom::vk::kWrite}});
    };
    loom_launch();
    glsl_launch();
    base.stream().finish();
    report_check("stencil", v, relative_difference(get_array(p, "gb"), base.read(gb)), 1e-6);
    compare(
        "stencil", v, s.runs, s.batch, 8.0 * static_cast<double>(cells), copy_bw, loom_launch,
        [&] { p.synchronize(); }, glsl_launch, [&] { base.stream().finish(); });

    // The same kernel staging `src` in workgroup memory (its `block_local`): measured against
    // the plain form, in turns; no goal of its own (it pays where caches do not hold the halo).
    auto bls_launch = [&] { p.launch("stencil_bls", args); };
    bls_launch();
    p.synchronize();
    report_check("stencil, block-local", v, relative_difference(get_array(p, "gb"), base.read(gb)),
                 1e-6);
    auto batch_of = [&](const std::function<void()>& launch) {
      return [&, launch] {
        for (int i = 0; i < s.batch; ++i) launch();
        p.synchronize();
      };
    };
    std::vector<Timing> t = time_interleaved(s.runs, {batch_of(loom_launch), batch_of(bls_launch)});
    double plain = t[0].median / s.batch, staged = t[1].median / s.batch;
    std::printf(
        "  %-9s plain %9.3f ms | block-local %9.3f ms | time block-local/plain %.2f "
        "(bests %.2f)\n",
        "stencil", plain * 1e3, staged * 1e3, staged / plain, t[1].best / t[0].best);
  }

  // ---- scatter: particles add B-spline weights and weighted velocities to a grid
  {
    const auto np = static_cast<size_t>(s.particles);
    const auto cells = static_cast<size_t>(s.grid * s.grid);
    std::vector<float> x = make_data(2 * np, 4, 0.1f, 0.9f), vel = make_data(2 * np, 5, -1, 1);
    std::vector<float> gm(cells, 0.0f), gv(2 * cells, 0.0f);
    p.create_ndarray("px", {loom::Scalar::F32, 2}, {s.particles});
    p.create_ndarray("pv", {loom::Scalar::F32, 2}, {s.particles});
    p.create_ndarray("gm", {loom::Scalar::F32}, {s.grid, s.grid});
    p.create_ndarray("gv", {loom::Scalar::F32, 2}, {s.grid, s.grid});
    set_array(p, "px", x);
    set_array(p, "pv", vel);
    const loom::vk::GpuBuffer& bx = base.buffer(x, "scatter x");
    const loom::vk::GpuBuffer& bv = base.buffer(vel, "scatter v");
    const loom::vk::GpuBuffer& bm = base.buffer(gm, "scatter grid mass");
    const loom::vk::GpuBuffer& bgv = base.buffer(gv, "scatter grid velocity");
    GlslKernel k(dev, float_atomics ? scatter : scatter_cas,
                 float_atomics ? sizeof(scatter) : sizeof(scatter_cas), {&bx, &bv, &bm, &bgv}, 8,
                 wg);
    struct {
      uint32_t n, grid;
    } push{static_cast<uint32_t>(np), static_cast<uint32_t>(s.grid)};
    loom::bench::Grid grid = grid_for(np, wg, max_x);
    const loom::Args args = {
        {"g", static_cast<double>(s.grid)}, {"x", "px"}, {"v", "pv"}, {"gm", "gm"}, {"gv", "gv"}};
    auto loom_launch = [&] { p.launch("scatter", args); };
    auto glsl_launch = [&] {
      uint8_t rmw = loom::vk::kRead | loom::vk::kWrite;
      base.launch(k, &push, grid,
                  {{&bx, loom::vk::kRead}, {&bv, loom::vk::kRead}, {&bm, rmw}, {&bgv, rmw}});
    };
    loom_launch();
    glsl_launch();
    base.stream().finish();
    // The order of the atomic adds differs: sums agree to rounding.
    double diff = std::max(relative_difference(get_array(p, "gm"), base.read(bm)),
                           relative_difference(get_array(p, "gv"), base.read(bgv)));
    report_check("scatter", v, diff, 1e-5);
    compare(
        "scatter", v, s.runs, s.batch, 0, copy_bw, loom_launch, [&] { p.synchronize(); },
        glsl_launch, [&] { base.stream().finish(); });
    std::printf("  %-9s %lld particles, 27 atomic adds each (%s), a %lldx%lld grid\n", "",
                static_cast<long long>(np),
                float_atomics ? "native float atomics" : "compare-and-swap",
                static_cast<long long>(s.grid), static_cast<long long>(s.grid));
  }

  // ---- sum reduction into one value, read back each run
  {
    loom::Program r(options(device));
    r.load_file(source("bench/graphs/reduction.loom.json"));
    const auto n = static_cast<size_t>(s.reduce);
    std::vector<float> x = make_data(n, 6, 0, 1);
    r.create_ndarray("xf", {loom::Scalar::F32}, {s.reduce});
    set_array(r, "xf", x);
    const loom::vk::GpuBuffer& bx = base.buffer(x, "reduction input");
    const loom::vk::GpuBuffer& out = base.buffer({0, 0, 0, 0}, "reduction result");
    GlslKernel k(dev, float_atomics ? reduce_sum_f32 : reduce_sum_f32_cas,
                 float_atomics ? sizeof(reduce_sum_f32) : sizeof(reduce_sum_f32_cas), {&bx, &out},
                 4, 256);  // reduce.comp fixes its workgroup at 256
    const auto count = static_cast<uint32_t>(n);
    const auto groups = static_cast<uint32_t>(std::min<uint64_t>((n + 4095) / 4096, max_x));
    float loom_sum = 0, glsl_sum = 0;
    const loom::Args args = {{"x", "xf"}};
    auto loom_run = [&] { loom_sum = static_cast<float>(r.launch("sum_f32", args).value()); };
    auto glsl_run = [&] {
      base.stream().fill(out, 0);
      base.launch(k, &count, {groups, 1},
                  {{&bx, loom::vk::kRead}, {&out, loom::vk::kRead | loom::vk::kWrite}});
      base.stream().download(out, 0, &glsl_sum, 4);
      base.stream().finish();
    };
    loom_run();
    glsl_run();
    double reference = 0;
    for (float f : x) reference += f;
    double diff =
        std::max(std::fabs(loom_sum - reference), std::fabs(glsl_sum - reference)) / reference;
    report_check("sum", v, diff, 1e-5);
    compare(
        "sum", v, s.runs, 1, 4.0 * static_cast<double>(n), copy_bw, loom_run, [] {}, glsl_run,
        [] {});
  }
}

// The CPU cost of a launch inside a batch: Loom's against vkCmdDispatch alone and against the
// same small kernel recorded by hand with what a launch needs (bind, push, dispatch, barrier).
void launch_section(const std::shared_ptr<loom::vk::VulkanDevice>& device, Baseline& base,
                    const Sizes& s, Verdicts& v, bool quick) {
  loom::vk::VulkanDevice& dev = *device;
  loom::ProgramOptions o = options(device);
  loom::Program p(o);
  p.load_file(source("bench/graphs/bench_kernels.loom.json"));
  const uint32_t wg = workgroup_of(dev);
  const int64_t n = 64;
  std::vector<float> x = make_data(n, 7, -1, 1), y = make_data(n, 8, -1, 1);
  p.create_ndarray("x", {loom::Scalar::F32}, {n});
  p.create_ndarray("y", {loom::Scalar::F32}, {n});
  set_array(p, "x", x);
  set_array(p, "y", y);
  const loom::vk::GpuBuffer& gx = base.buffer(x, "launch x");
  const loom::vk::GpuBuffer& gy = base.buffer(y, "launch y");
  GlslKernel small(dev, saxpy, sizeof(saxpy), {&gx, &gy}, 8, wg);
  GlslKernel empty_kernel(dev, empty, sizeof(empty), {}, 0, wg);
  struct {
    float a;
    uint32_t n;
  } push{0.5f, static_cast<uint32_t>(n)};
  const int launches = quick ? 200 : 2000;
  std::printf(
      "\nlaunch cost inside a batch (%d launches of a %lld-element saxpy, then a wait; per "
      "launch: the CPU time of recording them on this thread, and the whole batch's wall time; "
      "goal: Loom's recording within %.0f us of the hand-recorded launch's)\n",
      launches, static_cast<long long>(n), kLaunchGoalUs);
  const loom::Args args = {{"a", 0.5}, {"x", "x"}, {"y", "y"}};
  // Each side records its launches (CPU time of this thread), then waits for them.
  std::vector<std::vector<double>> cpu(3);
  auto side = [&](size_t which, const std::function<void()>& record,
                  const std::function<void()>& wait) {
    return [&, which, record, wait] {
      double t0 = thread_cpu_seconds();
      record();
      cpu[which].push_back(thread_cpu_seconds() - t0);
      wait();
    };
  };
  std::vector<Timing> t = time_interleaved(
      s.runs, {side(
                   0,
                   [&] {
                     empty_kernel.bind(base.stream().recording(), nullptr);
                     for (int i = 0; i < launches; ++i)
                       vkCmdDispatch(base.stream().recording(), 1, 1, 1);
                   },
                   [&] { base.stream().finish(); }),
               side(
                   1,
                   [&] {
                     for (int i = 0; i < launches; ++i)
                       base.launch(
                           small, &push, {1, 1},
                           {{&gx, loom::vk::kRead}, {&gy, loom::vk::kRead | loom::vk::kWrite}});
                   },
                   [&] { base.stream().finish(); }),
               side(
                   2,
                   [&] {
                     for (int i = 0; i < launches; ++i) p.launch("saxpy", args);
                   },
                   [&] { p.synchronize(); })});
  auto median_us = [&](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2] / launches * 1e6;
  };
  double raw = median_us(cpu[0]), hand = median_us(cpu[1]), loom = median_us(cpu[2]);
  row("record: vkCmdDispatch alone (empty shader, bound once)", raw, "us", 1.0, "the raw dispatch");
  row("record: hand-recorded launch (barrier, bind, push, dispatch)", hand, "us", hand / raw,
      "of the raw dispatch");
  row("record: Loom launch", loom, "us", loom / hand, "of the hand-recorded launch");
  double wall_hand = t[1].median / launches * 1e6, wall_loom = t[2].median / launches * 1e6;
  row("batch wall time per launch, hand-recorded", wall_hand, "us", 1.0, "baseline");
  row("batch wall time per launch, Loom", wall_loom, "us", wall_loom / wall_hand,
      "of the hand-recorded batch");
  ++v.goals;
  v.met += loom - hand <= kLaunchGoalUs;
  std::printf("  Loom's recording - hand-recorded: %.2f us per launch: %s\n", loom - hand,
              loom - hand <= kLaunchGoalUs ? "goal met" : "goal NOT met");
}

// spirv-opt pass by pass: each pass of its performance set (-O) alone, and the whole set,
// against no optimizer on the same device in turns: the time of the bench kernels and of the
// samples' `step` pipelines, and the optimizer's compile time per kernel.
void spirv_passes_section(const std::shared_ptr<loom::vk::VulkanDevice>& device, const Sizes& s) {
  struct Workload {
    std::string name;
    std::function<void(loom::Program&)> setup;
    std::function<void(loom::Program&)> run;
  };
  const int64_t n = s.n, side = s.side;
  std::vector<Workload> work = {{"saxpy",
                                 [&](loom::Program& p) {
                                   p.load_file(source("bench/graphs/bench_kernels.loom.json"));
                                   p.create_ndarray("x", {loom::Scalar::F32}, {n});
                                   p.create_ndarray("y", {loom::Scalar::F32}, {n});
                                 },
                                 [](loom::Program& p) {
                                   p.launch("saxpy", {{"a", 2.0}, {"x", "x"}, {"y", "y"}});
                                 }},
                                {"stencil",
                                 [&](loom::Program& p) {
                                   p.load_file(source("bench/graphs/bench_kernels.loom.json"));
                                   p.create_ndarray("ga", {loom::Scalar::F32}, {side, side});
                                   p.create_ndarray("gb", {loom::Scalar::F32}, {side, side});
                                 },
                                 [](loom::Program& p) {
                                   p.launch("stencil", {{"k", 0.2}, {"src", "ga"}, {"dst", "gb"}});
                                 }}};
  for (const char* sample : {"mpm88", "cloth", "nbody"})
    work.push_back({sample,
                    [sample](loom::Program& p) {
                      p.load_file(source(std::string("assets/graphs/") + sample + ".loom.json"));
                      p.run_pipeline("init");
                    },
                    [](loom::Program& p) { p.run_pipeline("step"); }});

  std::vector<std::string> passes = loom::codegen::performance_pass_flags();
  std::printf(
      "\nspirv-opt pass by pass (time with the pass / without any, median of %d batches of %d "
      "in turns; compile: the optimizer's ms per kernel)\n",
      s.runs, s.batch);
  std::printf("  %-40s", "pass");
  for (const Workload& w : work) std::printf(" %8s", w.name.c_str());
  std::printf(" %10s\n", "compile");
  std::vector<std::vector<std::string>> configs = {{}};  // {} with spirv_opt: the whole set
  for (const std::string& pass : passes) configs.push_back({pass});
  for (const std::vector<std::string>& config : configs) {
    std::printf("  %-40s", config.empty() ? "all of -O" : config[0].c_str());
    double optimize_ms = 0;
    int kernels = 0;
    for (const Workload& w : work) {
      loom::ProgramOptions plain = options(device), opt = options(device);
      opt.spirv_opt = true;
      opt.spirv_opt_passes = config;
      try {
        loom::Program a(plain), b(opt);
        w.setup(a);
        w.setup(b);
        std::vector<Timing> t = time_interleaved(s.runs, {[&] {
                                                            for (int i = 0; i < s.batch; ++i)
                                                              w.run(a);
                                                            a.synchronize();
                                                          },
                                                          [&] {
                                                            for (int i = 0; i < s.batch; ++i)
                                                              w.run(b);
                                                            b.synchronize();
                                                          }});
        std::printf(" %8.3f", t[1].median / t[0].median);
        optimize_ms += b.stats().ms_optimize;
        kernels += b.stats().instantiations;
      } catch (const std::exception& e) {
        std::printf(" %8s", "error");
        std::fprintf(stderr, "%s: %s\n", w.name.c_str(), e.what());
      }
    }
    std::printf(" %10.2f\n", kernels ? optimize_ms / kernels : 0.0);
  }
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  std::string select;
  int runs = 0;
  bool kernels_only = false, spirv_passes = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--quick"))
      quick = true;
    else if (!std::strcmp(argv[i], "--device") && i + 1 < argc)
      select = argv[++i];
    else if (!std::strcmp(argv[i], "--runs") && i + 1 < argc)
      runs = std::max(1, std::atoi(argv[++i]));
    else if (!std::strcmp(argv[i], "--workgroup") && i + 1 < argc)
      g_workgroup = std::max(1, std::atoi(argv[++i]));
    else if (!std::strcmp(argv[i], "--kernels-only"))
      kernels_only = true;
    else if (!std::strcmp(argv[i], "--spirv-passes"))
      spirv_passes = true;
    else {
      std::fprintf(stderr,
                   "usage: loom_vulkan_bench [--quick] [--device D] [--runs N] [--workgroup N] "
                   "[--kernels-only | --spirv-passes]\n");
      return 2;
    }
  }
  try {
    Sizes s;
    s.n = quick ? (1 << 20) : (1 << 24);
    s.side = quick ? 1024 : 4096;
    s.particles = quick ? (1 << 16) : (1 << 20);
    s.grid = quick ? 128 : 256;
    s.reduce = quick ? (1 << 20) : (1 << 24);
    s.runs = runs ? runs : (quick ? 3 : 7);
    s.batch = quick ? 4 : 10;

    loom::vk::DeviceOptions d;
    d.select = select;
    auto device = std::make_shared<loom::vk::VulkanDevice>(d);
    Baseline base(*device);
    std::printf("loom_vulkan_bench: %s (subgroups of %u)\n\n", device->caps().name.c_str(),
                device->caps().subgroup_size);
    if (spirv_passes) {
      spirv_passes_section(device, s);
      return 0;
    }
    Verdicts v;
    kernels_section(device, base, s, v);
    if (kernels_only) {
      std::printf("\n%d of %d goals met; results %s\n", v.met, v.goals,
                  v.results_ok ? "agree" : "DISAGREE");
      return v.results_ok ? 0 : 1;
    }
    launch_section(device, base, s, v, quick);

    // ---- argpack vs plain arguments
    std::printf(
        "\nunchanged argpack vs the same values as plain arguments (per launch: the CPU time "
        "of recording, and the batch's wall time, in turns; goal: argpack <= 1.0x)\n");
    loom::Program small(options(device));
    small.load_file(source("bench/graphs/vulkan_bench.loom.json"));
    small.create_ndarray("y", {loom::Scalar::F32}, {64});
    const int launches = quick ? 200 : 2000;
    loom::Args pack_args = {{"m", "material"}, {"y", "y"}};
    loom::Args value_args = {{"gain", 2.0},
                             {"bias", 0.5},
                             {"tint", std::vector<double>{1, 0.5, 0.25, 1}},
                             {"axis", std::vector<double>{0, 1, 0, 0}},
                             {"steps", 4},
                             {"scale", 1.5},
                             {"y", "y"}};
    std::vector<std::vector<double>> record(2);
    auto batch = [&](size_t which, const char* kernel, const loom::Args& args) {
      return [&, which, kernel] {
        double t0 = thread_cpu_seconds();
        for (int i = 0; i < launches; ++i) small.launch(kernel, args);
        record[which].push_back(thread_cpu_seconds() - t0);
        small.synchronize();
      };
    };
    std::vector<Timing> t = time_interleaved(
        s.runs, {batch(0, "with_pack", pack_args), batch(1, "with_values", value_args)});
    auto median_us = [&](std::vector<double> v) {
      std::sort(v.begin(), v.end());
      return v[v.size() / 2] / launches * 1e6;
    };
    small.launch("with_pack", pack_args);
    loom::DeviceCounters cp = small.device_counters();
    small.launch("with_values", value_args);
    loom::DeviceCounters cv = small.device_counters();
    double rec_pack = median_us(record[0]), rec_vals = median_us(record[1]);
    double wall_pack = t[0].median / launches * 1e6, wall_vals = t[1].median / launches * 1e6;
    row("record: argpack (bound, not copied)", rec_pack, "us", rec_pack / rec_vals,
        "of plain arguments'");
    row("record: plain arguments", rec_vals, "us", 1.0, "baseline");
    row("batch wall time: argpack", wall_pack, "us", wall_pack / wall_vals, "of plain arguments'");
    row("batch wall time: plain arguments", wall_vals, "us", 1.0, "baseline");
    ++v.goals;
    v.met += rec_pack <= rec_vals;
    std::printf(
        "  bytes per launch: argpack %llu uploaded + %llu of arguments; plain arguments %llu\n",
        static_cast<unsigned long long>(cp.last_launch_argpack_bytes),
        static_cast<unsigned long long>(cp.last_launch_argument_bytes),
        static_cast<unsigned long long>(cv.last_launch_argument_bytes));

    // ---- caches: cold start, warm offline cache (SPIR-V from disk), warm pipeline cache
    std::printf("\ncompile and first launch of every sample graph (ratio = cold / warm)\n");
    std::string dir = (std::filesystem::temp_directory_path() / "loom_vulkan_bench_cache").string();
    const char* samples[] = {"heat", "life", "julia", "nbody", "mpm88", "cloth"};
    for (const char* sample : samples) {
      auto first_run = [&](bool keep) {
        if (!keep) std::filesystem::remove_all(dir);
        loom::ProgramOptions o = options(device);
        o.offline_cache = true;
        o.cache_dir = dir;
        auto t0 = Clock::now();
        loom::Program p(o);
        p.load_file(source(std::string("assets/graphs/") + sample + ".loom.json"));
        p.prepare_pipelines(true);
        return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
      };
      double cold = first_run(false);
      double warm = first_run(true);
      // pipeline cache only: drop the kernels, keep the pipelines
      for (const auto& e : std::filesystem::directory_iterator(dir))
        if (e.path().extension() == ".lkr") std::filesystem::remove(e.path());
      double pipelines_only = first_run(true);
      std::printf(
          "  %-6s cold %8.2f ms, warm %7.2f ms (%5.1fx), pipeline cache only %7.2f ms (%5.2fx)\n",
          sample, cold, warm, cold / warm, pipelines_only, cold / pipelines_only);
    }
    std::filesystem::remove_all(dir);

    // ---- spirv-opt: does it pay?
    std::printf("\nSPIRV-Tools optimizer (ratio = with / without)\n");
    const int64_t n = s.n, side = s.side;
    auto saxpy_stencil = [&](bool opt_on, double* t_saxpy, double* t_stencil, double* ms) {
      loom::ProgramOptions o = options(device);
      o.spirv_opt = opt_on;
      loom::Program p(o);
      p.load_file(source("bench/graphs/bench_kernels.loom.json"));
      p.create_ndarray("x", {loom::Scalar::F32}, {n});
      p.create_ndarray("y", {loom::Scalar::F32}, {n});
      p.create_ndarray("ga", {loom::Scalar::F32}, {side, side});
      p.create_ndarray("gb", {loom::Scalar::F32}, {side, side});
      auto per_launch = [&](const std::string& kernel, const loom::Args& args) {
        return median_seconds(s.runs,
                              [&] {
                                for (int i = 0; i < s.batch; ++i) p.launch(kernel, args);
                                p.synchronize();
                              }) /
               s.batch;
      };
      *t_saxpy = per_launch("saxpy", {{"a", 2.0}, {"x", "x"}, {"y", "y"}});
      *t_stencil = per_launch("stencil", {{"k", 0.2}, {"src", "ga"}, {"dst", "gb"}});
      *ms = p.stats().ms_codegen + p.stats().ms_optimize;
    };
    double s0, st0, ms0, s1, st1, ms1;
    saxpy_stencil(false, &s0, &st0, &ms0);
    saxpy_stencil(true, &s1, &st1, &ms1);
    row("saxpy time with spirv-opt", s1 * 1e3, "ms", s1 / s0, "of without");
    row("stencil time with spirv-opt", st1 * 1e3, "ms", st1 / st0, "of without");
    row("codegen + optimizer ms (2 kernels)", ms1, "ms", ms1 / std::max(1e-9, ms0), "of without");

    std::printf("\n%d of %d goals met; results %s\n", v.met, v.goals,
                v.results_ok ? "agree" : "DISAGREE");
    return v.results_ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "loom_vulkan_bench: %s\n", e.what());
    return 1;
  }
}
