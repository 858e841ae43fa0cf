// Parallel reductions against hand-written baselines measured in the same run: a 16M-element
// f32 sum and i32 max, written as a Loom document the way a user writes them (a `var` outside
// a `range_for`, `set(total, get(total) + load)`, `return total`:
// bench/graphs/reduction.loom.json), compiled and launched through loom::Program.
//
// - CPU: the baseline is a parallel reduction written by hand on the ThreadPool Loom uses, of
//   the same size, split into the chunks Loom would make (cpu::chunk_rows), one partial result
//   per chunk combined at the end (bench/handwritten.cpp, -O3 -march=native).
// - Vulkan: the baseline is a GLSL compute shader (bench/shaders/reduce.comp): a grid-stride
//   loop, a subgroup reduction, the workgroup's subgroups combined in shared memory, one
//   atomic per workgroup. It runs on the same VkDevice as Loom's program. Every run, on both
//   sides, clears the result, dispatches, copies the value back and waits for it.
//
// Both sides run in turns (one run of each per round), so a busy machine slows both alike;
// the median and the best of the runs are printed, the verdict going by the medians.
// Results are checked against a reference computed in double (floats within a stated
// tolerance: the order of the additions differs). Timing is reported, never asserted; the
// exit status is 1 when a result is wrong.
//
//   loom_reduction_bench [--quick] [--arch cpu|vulkan|all] [--threads N] [--runs N]
//                        [--device D] [--validation]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bench/handwritten.h"
#include "bench/timing.h"
#include "bench/vulkan_baseline.h"
#include "bench_shaders/reduce_max_i32.h"
#include "bench_shaders/reduce_sum_f32.h"
#include "bench_shaders/reduce_sum_f32_cas.h"
#include "engine_plugin/include/loom/program.h"
#include "runtime/common/spirv_kernel.h"
#include "runtime/cpu/cpu_device.h"
#include "runtime/cpu/thread_pool.h"
#include "runtime/vulkan/command_stream.h"
#include "runtime/vulkan/gpu_buffer.h"
#include "runtime/vulkan/memory_allocator.h"
#include "runtime/vulkan/vulkan_device.h"

namespace {

using loom::bench::GlslKernel;
using loom::bench::time_interleaved;
using loom::bench::Timing;

// Relative tolerance of a float sum against the double reference, as a fraction of the sum
// of |x|. Over 16M values in [0, 1), spread over many partial sums, the f32 results were off
// by about 1e-7, and one running f32 total (a serial loop) by 4e-6; a result missing a single
// GPU workgroup's 4,096 elements, or one CPU chunk, is off by 2e-4 or more.
constexpr double kSumTolerance = 1e-5;
constexpr double kTimeRatioGoal = 1.0 / 0.9;  // loom at >= 0.9x the hand-written speed

std::string source(const std::string& rel) { return std::string(LOOM_SOURCE_DIR) + "/" + rel; }

// Deterministic input: a hash of the index, so no two runs or backends see different data.
uint32_t hash(uint64_t i) {
  uint64_t z = i + 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return static_cast<uint32_t>((z ^ (z >> 31)) >> 32);
}

struct Data {
  std::vector<float> f;    // in [0, 1), multiples of 2^-10
  std::vector<int32_t> i;  // the whole int32 range
  double sum = 0, sum_abs = 0;
  int32_t max = std::numeric_limits<int32_t>::min();
};

Data make_data(int64_t n) {
  Data d;
  d.f.resize(static_cast<size_t>(n));
  d.i.resize(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) {
    uint32_t h = hash(static_cast<uint64_t>(k));
    d.f[static_cast<size_t>(k)] = static_cast<float>(h >> 22) / 1024.0f;
    d.i[static_cast<size_t>(k)] =
        static_cast<int32_t>(hash(static_cast<uint64_t>(k) + (1ull << 40)));
    d.sum += d.f[static_cast<size_t>(k)];
    d.max = std::max(d.max, d.i[static_cast<size_t>(k)]);
  }
  d.sum_abs = d.sum;  // every value is >= 0
  return d;
}

struct Check {
  bool ok = true;
  void sum(const char* who, float got, const Data& d) {
    double err = std::fabs(static_cast<double>(got) - d.sum) / d.sum_abs;
    bool good = err <= kSumTolerance;
    ok = ok && good;
    std::printf("    %-12s sum %.1f, reference %.1f: relative error %.1e %s\n", who,
                static_cast<double>(got), d.sum, err,
                good ? "(within the tolerance)" : "OUTSIDE THE TOLERANCE");
  }
  void max(const char* who, int32_t got, const Data& d) {
    bool good = got == d.max;
    ok = ok && good;
    std::printf("    %-12s max %d, reference %d %s\n", who, got, d.max, good ? "(equal)" : "WRONG");
  }
};

// The verdict goes by the medians: on a shared machine the best run of either side is
// sometimes one a neighbour happened to leave alone, which swings the ratio of bests.
void print_pair(const char* what, const Timing& hand, const Timing& loom, double bytes) {
  std::printf("  %-8s hand-written %8.3f ms median (best %8.3f)  %7.2f GB/s\n", what,
              hand.median * 1e3, hand.best * 1e3, bytes / hand.median / 1e9);
  double ratio = loom.median / hand.median;
  std::printf(
      "  %-8s loom         %8.3f ms median (best %8.3f)  %7.2f GB/s   time loom/hand-written "
      "%.2f (bests %.2f): %s\n",
      what, loom.median * 1e3, loom.best * 1e3, bytes / loom.median / 1e9, ratio,
      loom.best / hand.best, ratio <= kTimeRatioGoal ? "goal met" : "goal NOT met");
}

// ---- CPU

bool cpu_section(const Data& data, int threads, int runs) {
  const int64_t n = static_cast<int64_t>(data.f.size());
  loom::ProgramOptions options;
  options.backend = loom::Backend::Cpu;
  options.threads = threads;
  options.offline_cache = false;
  loom::Program program(options);
  program.load_file(source("bench/graphs/reduction.loom.json"));
  program.wrap_ndarray("xf", {loom::Scalar::F32}, {n}, const_cast<float*>(data.f.data()));
  program.wrap_ndarray("xi", {loom::Scalar::I32}, {n}, const_cast<int32_t*>(data.i.data()));

  // The baseline: Loom's ThreadPool class with as many threads, the chunks Loom makes, a
  // partial per chunk, combined in order on the caller.
  loom::cpu::ThreadPool pool(threads);
  const int64_t chunk = loom::cpu::chunk_rows(n, 1, threads);
  const size_t chunks = static_cast<size_t>((n + chunk - 1) / chunk);
  std::vector<float> sum_parts(chunks);
  std::vector<int32_t> max_parts(chunks);

  float hand_sum = 0, loom_sum = 0;
  int32_t hand_max = 0, loom_max = 0;
  const loom::Args sum_args = {{"x", "xf"}}, max_args = {{"x", "xi"}};
  auto sum_hand = [&] {
    pool.parallel_for(0, n, chunk, [&](int64_t b, int64_t e) {
      sum_parts[static_cast<size_t>(b / chunk)] = loom::bench::sum_f32(data.f.data(), b, e);
    });
    float total = 0;
    for (float p : sum_parts) total += p;
    hand_sum = total;
  };
  auto max_hand = [&] {
    pool.parallel_for(0, n, chunk, [&](int64_t b, int64_t e) {
      max_parts[static_cast<size_t>(b / chunk)] = loom::bench::max_i32(data.i.data(), b, e);
    });
    hand_max = *std::max_element(max_parts.begin(), max_parts.end());
  };
  auto sum_loom = [&] {
    loom_sum = static_cast<float>(program.launch("sum_f32", sum_args).value());
  };
  auto max_loom = [&] {
    loom_max = static_cast<int32_t>(program.launch("max_i32", max_args).ints.at(0));
  };

  std::printf("CPU: %d threads; baseline on a ThreadPool of the same size, %zu chunks of %lld\n",
              threads, chunks, static_cast<long long>(chunk));
  auto t = time_interleaved(runs, {sum_hand, sum_loom, max_hand, max_loom});
  const double bytes = 4.0 * static_cast<double>(n);
  print_pair("f32 sum", t[0], t[1], bytes);
  print_pair("i32 max", t[2], t[3], bytes);
  Check check;
  check.sum("hand-written", hand_sum, data);
  check.sum("loom", loom_sum, data);
  check.max("hand-written", hand_max, data);
  check.max("loom", loom_max, data);
  return check.ok;
}

// ---- Vulkan

// Whether compute shaders of this device have subgroup arithmetic (Vulkan 1.1).
bool subgroup_arithmetic(const loom::vk::VulkanDevice& device) {
  if (device.caps().api_version < VK_API_VERSION_1_1) return false;
  VkPhysicalDeviceSubgroupProperties sub{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
  VkPhysicalDeviceProperties2 p{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  p.pNext = &sub;
  vkGetPhysicalDeviceProperties2(device.physical(), &p);
  const VkSubgroupFeatureFlags need =
      VK_SUBGROUP_FEATURE_BASIC_BIT | VK_SUBGROUP_FEATURE_ARITHMETIC_BIT;
  return (sub.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) &&
         (sub.supportedOperations & need) == need;
}

bool vulkan_section(const Data& data, const std::string& select, bool validation, int runs) {
  const int64_t n = static_cast<int64_t>(data.f.size());
  const VkDeviceSize bytes = static_cast<VkDeviceSize>(n) * 4;
  loom::vk::DeviceOptions device_options;
  device_options.select = select;
  device_options.validation = validation;
  auto device = std::make_shared<loom::vk::VulkanDevice>(device_options);
  if (!subgroup_arithmetic(*device)) {
    std::printf("Vulkan: %s has no subgroup arithmetic in compute shaders: skipped\n",
                device->caps().name.c_str());
    return true;
  }
  const bool float_atomics = device->caps().features & loom::kNeedFloat32AtomicAdd;

  loom::vk::MemoryAllocator allocator(*device);
  loom::vk::CommandStream stream(*device, allocator);
  const VkBufferUsageFlags usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
                                   VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                   VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  loom::vk::GpuBuffer in_f(*device, allocator, bytes, usage, loom::vk::MemoryUse::DeviceLocal,
                           "baseline f32 input");
  loom::vk::GpuBuffer in_i(*device, allocator, bytes, usage, loom::vk::MemoryUse::DeviceLocal,
                           "baseline i32 input");
  loom::vk::GpuBuffer out_f(*device, allocator, 16, usage, loom::vk::MemoryUse::DeviceLocal,
                            "baseline f32 result");
  loom::vk::GpuBuffer out_i(*device, allocator, 16, usage, loom::vk::MemoryUse::DeviceLocal,
                            "baseline i32 result");
  stream.upload(in_f, 0, data.f.data(), bytes);
  stream.upload(in_i, 0, data.i.data(), bytes);
  stream.finish();
  // reduce.comp fixes its workgroup at 256 (the specialization constant is unused there).
  GlslKernel sum_kernel(*device, float_atomics ? reduce_sum_f32 : reduce_sum_f32_cas,
                        float_atomics ? sizeof(reduce_sum_f32) : sizeof(reduce_sum_f32_cas),
                        {&in_f, &out_f}, sizeof(uint32_t), 256);
  GlslKernel max_kernel(*device, reduce_max_i32, sizeof(reduce_max_i32), {&in_i, &out_i},
                        sizeof(uint32_t), 256);
  // 16 elements per invocation before the subgroup step: enough work per invocation to make
  // the atomics rare, and still thousands of workgroups to fill a GPU.
  const uint32_t workgroups = static_cast<uint32_t>(
      std::min<int64_t>((n + 256 * 16 - 1) / (256 * 16), device->caps().max_workgroup_count_x));

  loom::ProgramOptions options;
  options.backend = loom::Backend::Vulkan;
  options.vulkan_device = device;
  options.offline_cache = false;
  loom::Program program(options);
  program.load_file(source("bench/graphs/reduction.loom.json"));
  program.create_ndarray("xf", {loom::Scalar::F32}, {n});
  program.create_ndarray("xi", {loom::Scalar::I32}, {n});
  std::memcpy(program.array("xf").data, data.f.data(), bytes);
  std::memcpy(program.array("xi").data, data.i.data(), bytes);

  float hand_sum = 0, loom_sum = 0;
  int32_t hand_max = 0, loom_max = 0;
  auto run_baseline = [&](const GlslKernel& kernel, const loom::vk::GpuBuffer& input,
                          const loom::vk::GpuBuffer& out, uint32_t identity, void* result) {
    stream.fill(out, identity);
    stream.hazard({{input.id(), loom::vk::kRead}, {out.id(), loom::vk::kRead | loom::vk::kWrite}});
    const auto count = static_cast<uint32_t>(n);
    kernel.dispatch(stream.recording(), &count, workgroups);
    stream.count_dispatch();
    stream.download(out, 0, result, 4);
    stream.finish();
  };
  const loom::Args sum_args = {{"x", "xf"}}, max_args = {{"x", "xi"}};
  auto sum_hand = [&] { run_baseline(sum_kernel, in_f, out_f, 0, &hand_sum); };
  auto max_hand = [&] { run_baseline(max_kernel, in_i, out_i, 0x80000000u, &hand_max); };
  auto sum_loom = [&] {
    loom_sum = static_cast<float>(program.launch("sum_f32", sum_args).value());
  };
  auto max_loom = [&] {
    loom_max = static_cast<int32_t>(program.launch("max_i32", max_args).ints.at(0));
  };

  std::printf(
      "Vulkan: %s; baseline GLSL (subgroup reduction, one atomic per workgroup, %u workgroups "
      "of 256, float add by %s)\n",
      device->caps().name.c_str(), workgroups,
      float_atomics ? "atomicAdd (GL_EXT_shader_atomic_float)" : "a compare-and-swap loop");
  // Loom uploads the arrays at their first launch; a later run that uploaded them again would
  // time the copy, not the reduction, so the bytes uploaded during the runs are printed.
  sum_loom();
  max_loom();
  const uint64_t uploaded = program.device_counters().resource_bytes_uploaded;
  auto t = time_interleaved(runs, {sum_hand, sum_loom, max_hand, max_loom});
  const uint64_t uploaded_in_runs = program.device_counters().resource_bytes_uploaded - uploaded;
  const double read = static_cast<double>(bytes);
  print_pair("f32 sum", t[0], t[1], read);
  print_pair("i32 max", t[2], t[3], read);
  std::printf("    loom uploaded %llu bytes during the runs (its arrays went up before them)\n",
              static_cast<unsigned long long>(uploaded_in_runs));
  Check check;
  check.sum("hand-written", hand_sum, data);
  check.sum("loom", loom_sum, data);
  check.max("hand-written", hand_max, data);
  check.max("loom", loom_max, data);
  if (validation) {
    std::printf("    validation layer %s\n", device->validation() ? "on" : "NOT AVAILABLE");
    for (const std::string& m : device->take_messages()) {
      std::printf("    validation: %s\n", m.c_str());
      check.ok = false;
    }
  }
  return check.ok;
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false, validation = false;
  std::string arch = "all", device;
  int threads = static_cast<int>(std::thread::hardware_concurrency());
  int runs = 0;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--quick")) {
      quick = true;
    } else if (!std::strcmp(argv[i], "--validation")) {
      validation = true;
    } else if (!std::strcmp(argv[i], "--arch") && i + 1 < argc) {
      arch = argv[++i];
    } else if (!std::strcmp(argv[i], "--threads") && i + 1 < argc) {
      threads = std::max(1, std::atoi(argv[++i]));
    } else if (!std::strcmp(argv[i], "--runs") && i + 1 < argc) {
      runs = std::max(1, std::atoi(argv[++i]));
    } else if (!std::strcmp(argv[i], "--device") && i + 1 < argc) {
      device = argv[++i];
    } else {
      std::fprintf(stderr,
                   "usage: loom_reduction_bench [--quick] [--arch cpu|vulkan|all] [--threads N] "
                   "[--runs N] [--device D] [--validation]\n");
      return 2;
    }
  }
  if (arch != "cpu" && arch != "vulkan" && arch != "all") {
    std::fprintf(stderr, "loom_reduction_bench: --arch takes cpu, vulkan or all, not '%s'\n",
                 arch.c_str());
    return 2;
  }
  const int64_t n = quick ? (1 << 20) : (1 << 24);  // 16M elements
  try {
    Data data = make_data(n);
    std::printf(
        "loom_reduction_bench: %lld elements (%.0f MiB per array); median and best of the runs; "
        "goal: loom median time <= %.2fx the hand-written one (>= 0.9x the speed); GB/s = "
        "bytes read / median time\n\n",
        static_cast<long long>(n), 4.0 * static_cast<double>(n) / (1 << 20), kTimeRatioGoal);
    bool ok = true;
    if (arch != "vulkan") ok = cpu_section(data, threads, runs ? runs : (quick ? 11 : 31)) && ok;
    if (arch != "cpu") {
      if (arch == "all") std::printf("\n");
      if (loom::enumerate_vulkan_devices().empty() && arch == "all")
        std::printf("Vulkan: no device: skipped\n");
      else
        ok = vulkan_section(data, device, validation, runs ? runs : (quick ? 5 : 11)) && ok;
    }
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "loom_reduction_bench: %s\n", e.what());
    return 1;
  }
}
