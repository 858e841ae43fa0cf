// The Vulkan backend's benchmarks. Every figure is printed next to a baseline measured in
// the same run: the CPU backend for throughput (on lavapipe this is informative: lavapipe
// is itself a CPU), the device's own buffer copy (vkCmdCopyBuffer) for bandwidth, plain
// arguments for argpacks, a cold start for the caches, spirv-opt off for spirv-opt on.
//
//   loom_vulkan_bench [--quick] [--device D]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "engine_plugin/include/loom/program.h"
#include "runtime/vulkan/command_stream.h"
#include "runtime/vulkan/gpu_buffer.h"
#include "runtime/vulkan/memory_allocator.h"
#include "runtime/vulkan/vulkan_device.h"

namespace {

using Clock = std::chrono::steady_clock;

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

void row(const char* name, double value, const char* unit, double ratio, const char* vs) {
  std::printf("  %-40s %10.3f %-6s  %8.3fx %s\n", name, value, unit, ratio, vs);
}

loom::ProgramOptions options(loom::Backend backend, const std::string& device) {
  loom::ProgramOptions o;
  o.backend = backend;
  o.device = device;
  o.offline_cache = false;
  return o;
}

void fill(loom::Program& p, const std::string& name, float v) {
  loom::ArrayView a = p.array(name);
  std::vector<float> values(a.bytes / 4, v);
  std::memcpy(a.data, values.data(), a.bytes);
}

// Bytes per second of the device's own buffer copy (read + write), the bandwidth baseline.
double device_copy_bandwidth(const std::string& device, size_t bytes, int reps) {
  loom::vk::DeviceOptions d;
  d.select = device;
  loom::vk::VulkanDevice dev(d);
  loom::vk::MemoryAllocator alloc(dev);
  loom::vk::CommandStream stream(dev, alloc);
  VkBufferUsageFlags usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  loom::vk::GpuBuffer a(dev, alloc, bytes, usage, loom::vk::MemoryUse::DeviceLocal, "copy source");
  loom::vk::GpuBuffer b(dev, alloc, bytes, usage, loom::vk::MemoryUse::DeviceLocal, "copy target");
  const int batch = 8;
  double t = median_seconds(reps, [&] {
    for (int i = 0; i < batch; ++i) {
      stream.hazard({{a.id(), loom::vk::kRead}, {b.id(), loom::vk::kWrite}});
      VkBufferCopy region{0, 0, bytes};
      vkCmdCopyBuffer(stream.recording(), a.handle(), b.handle(), 1, &region);
    }
    stream.finish();
  });
  return 2.0 * static_cast<double>(bytes) * batch / t;
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  std::string device;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--quick"))
      quick = true;
    else if (!std::strcmp(argv[i], "--device") && i + 1 < argc)
      device = argv[++i];
    else {
      std::fprintf(stderr, "usage: loom_vulkan_bench [--quick] [--device D]\n");
      return 2;
    }
  }
  try {
    const int64_t n = quick ? (1 << 20) : (1 << 24);
    const int64_t side = quick ? 1024 : 4096;
    const int reps = quick ? 3 : 7;
    const int batch = quick ? 4 : 10;  // launches recorded per timed batch

    loom::Program vk(options(loom::Backend::Vulkan, device));
    loom::Program cpu(options(loom::Backend::Cpu, device));
    std::printf("loom_vulkan_bench: %s; baseline CPU backend on %s\n", vk.device_name().c_str(),
                cpu.device_name().c_str());
    std::printf("%lld elements, %lldx%lld grid, median of %d batches of %d launches\n\n",
                static_cast<long long>(n), static_cast<long long>(side),
                static_cast<long long>(side), reps, batch);

    for (loom::Program* p : {&vk, &cpu}) {
      p->load_file(source("bench/graphs/bench_kernels.loom.json"));
      p->create_ndarray("x", {loom::Scalar::F32}, {n});
      p->create_ndarray("y", {loom::Scalar::F32}, {n});
      p->create_ndarray("ga", {loom::Scalar::F32}, {side, side});
      p->create_ndarray("gb", {loom::Scalar::F32}, {side, side});
      fill(*p, "x", 1.5f);
      fill(*p, "y", 0.25f);
      fill(*p, "ga", 0.5f);
    }

    // ---- throughput
    std::printf(
        "throughput (ratio = Vulkan / CPU backend; bandwidth as a fraction of the device's "
        "copy)\n");
    double copy_bw = device_copy_bandwidth(device, static_cast<size_t>(n) * 4, reps);
    row("device buffer copy (vkCmdCopyBuffer)", copy_bw / 1e9, "GB/s", 1.0, "baseline");
    auto per_launch = [&](loom::Program& p, const std::string& kernel, const loom::Args& args) {
      return median_seconds(reps,
                            [&] {
                              for (int i = 0; i < batch; ++i) p.launch(kernel, args);
                              p.synchronize();
                            }) /
             batch;
    };
    loom::Args saxpy = {{"a", 2.0}, {"x", "x"}, {"y", "y"}};
    double t_vk = per_launch(vk, "saxpy", saxpy), t_cpu = per_launch(cpu, "saxpy", saxpy);
    double saxpy_bytes = 12.0 * static_cast<double>(n);
    row("saxpy vulkan", saxpy_bytes / t_vk / 1e9, "GB/s", (saxpy_bytes / t_vk) / copy_bw,
        "of device copy");
    row("saxpy cpu backend", saxpy_bytes / t_cpu / 1e9, "GB/s", t_cpu / t_vk,
        "vulkan speed vs cpu");
    loom::Args stencil = {{"k", 0.2}, {"src", "ga"}, {"dst", "gb"}};
    double s_vk = per_launch(vk, "stencil", stencil), s_cpu = per_launch(cpu, "stencil", stencil);
    double stencil_bytes = 8.0 * static_cast<double>(side * side);
    row("stencil vulkan", stencil_bytes / s_vk / 1e9, "GB/s", (stencil_bytes / s_vk) / copy_bw,
        "of device copy");
    row("stencil cpu backend", stencil_bytes / s_cpu / 1e9, "GB/s", s_cpu / s_vk,
        "vulkan speed vs cpu");

    // ---- launch overhead inside a batch
    std::printf("\nlaunch overhead inside a batch (goal: <= 10 us per launch on a GPU)\n");
    loom::Program small(options(loom::Backend::Vulkan, device)),
        small_cpu(options(loom::Backend::Cpu, device));
    for (loom::Program* p : {&small, &small_cpu}) {
      p->load_file(source("bench/graphs/vulkan_bench.loom.json"));
      p->create_ndarray("y", {loom::Scalar::F32}, {64});
    }
    const int launches = quick ? 200 : 2000;
    auto overhead = [&](loom::Program& p, const std::string& kernel, const loom::Args& args) {
      p.launch(kernel, args);
      p.synchronize();
      return median_seconds(reps,
                            [&] {
                              for (int i = 0; i < launches; ++i) p.launch(kernel, args);
                              p.synchronize();
                            }) /
             launches * 1e6;
    };
    double tiny_vk = overhead(small, "tiny", {{"y", "y"}});
    double tiny_cpu = overhead(small_cpu, "tiny", {{"y", "y"}});
    row("one 64-element dispatch, vulkan", tiny_vk, "us", tiny_vk / 10.0, "of the 10 us goal");
    row("same kernel, cpu backend", tiny_cpu, "us", tiny_vk / tiny_cpu, "vulkan cost vs cpu");

    // ---- argpack vs plain arguments
    std::printf("\nunchanged argpack vs the same values as plain arguments (per launch)\n");
    loom::Args pack_args = {{"m", "material"}, {"y", "y"}};
    loom::Args value_args = {{"gain", 2.0},
                             {"bias", 0.5},
                             {"tint", std::vector<double>{1, 0.5, 0.25, 1}},
                             {"axis", std::vector<double>{0, 1, 0, 0}},
                             {"steps", 4},
                             {"scale", 1.5},
                             {"y", "y"}};
    double t_pack = overhead(small, "with_pack", pack_args);
    small.launch("with_pack", pack_args);
    loom::DeviceCounters cp = small.device_counters();
    double t_vals = overhead(small, "with_values", value_args);
    small.launch("with_values", value_args);
    loom::DeviceCounters cv = small.device_counters();
    row("argpack (bound, not copied)", t_pack, "us", t_pack / t_vals, "of plain-argument time");
    row("plain arguments", t_vals, "us", 1.0, "baseline");
    std::printf(
        "  bytes per launch: argpack %llu uploaded + %llu of arguments; plain arguments %llu\n",
        static_cast<unsigned long long>(cp.last_launch_argpack_bytes),
        static_cast<unsigned long long>(cp.last_launch_argument_bytes),
        static_cast<unsigned long long>(cv.last_launch_argument_bytes));

    // ---- caches: cold start, warm offline cache (SPIR-V from disk), warm pipeline cache
    std::printf("\ncompile and first launch of every sample graph (ratio = cold / warm)\n");
    std::string dir = (std::filesystem::temp_directory_path() / "loom_vulkan_bench_cache").string();
    const char* samples[] = {"heat", "life", "julia", "nbody", "mpm88", "cloth"};
    for (const char* s : samples) {
      auto first_run = [&](bool keep) {
        if (!keep) std::filesystem::remove_all(dir);
        loom::ProgramOptions o = options(loom::Backend::Vulkan, device);
        o.offline_cache = true;
        o.cache_dir = dir;
        auto t0 = Clock::now();
        loom::Program p(o);
        p.load_file(source(std::string("assets/graphs/") + s + ".loom.json"));
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
          s, cold, warm, cold / warm, pipelines_only, cold / pipelines_only);
    }
    std::filesystem::remove_all(dir);

    // ---- spirv-opt: does it pay?
    std::printf("\nSPIRV-Tools optimizer (ratio = with / without)\n");
    loom::ProgramOptions with_opt = options(loom::Backend::Vulkan, device);
    with_opt.spirv_opt = true;
    loom::Program opt(with_opt);
    opt.load_file(source("bench/graphs/bench_kernels.loom.json"));
    opt.create_ndarray("x", {loom::Scalar::F32}, {n});
    opt.create_ndarray("y", {loom::Scalar::F32}, {n});
    opt.create_ndarray("ga", {loom::Scalar::F32}, {side, side});
    opt.create_ndarray("gb", {loom::Scalar::F32}, {side, side});
    double o_saxpy = per_launch(opt, "saxpy", saxpy),
           o_stencil = per_launch(opt, "stencil", stencil);
    row("saxpy time with spirv-opt", o_saxpy * 1e3, "ms", o_saxpy / t_vk, "of without");
    row("stencil time with spirv-opt", o_stencil * 1e3, "ms", o_stencil / s_vk, "of without");
    const loom::Stats& so = opt.stats();
    const loom::Stats& sn = vk.stats();
    row("codegen + optimizer ms (2 kernels)", so.ms_codegen + so.ms_optimize, "ms",
        (so.ms_codegen + so.ms_optimize) / std::max(1e-9, sn.ms_codegen + sn.ms_optimize),
        "of without");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "loom_vulkan_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
