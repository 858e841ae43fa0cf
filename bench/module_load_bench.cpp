// Loading an AOT module against JIT-compiling the same kernels, for every sample graph, on
// the CPU and (when a device exists) on Vulkan, in the same run:
//   JIT:    Program::load_file + prepare_pipelines(compile) with no offline cache: lowering,
//           passes, LLVM or SPIR-V codegen, object loading or pipeline creation;
//   module: reading the archive (hashes checked) + LoadedModule (requirements, kernels
//           loaded, resources allocated, pipelines bound): what an engine pays at start.
// Both sides create Vulkan pipelines with the driver's shader cache off. On Vulkan, the
// share of the module's load that checks its SPIR-V is timed apart: SPIRV-Tools' validator
// (modules only) and the interface check against the layout (every kernel, JIT too).
//
//   loom_module_load_bench [--runs N] [--arch cpu|vulkan|both]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "engine_plugin/include/loom/aot_module.h"
#include "engine_plugin/include/loom/program.h"
#include "runtime/aot/loaded_module.h"
#include "runtime/aot/module_device.h"
#include "runtime/aot/module_files.h"
#include "runtime/common/spirv_kernel.h"
#include "runtime/vulkan/shader_check.h"
#include "runtime/vulkan/spirv_validator.h"
#include "runtime/vulkan/vulkan_device.h"

namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// Times the two SPIR-V checks a Vulkan module's load runs over all its tasks, in ms.
struct SpirvCheckTimes {
  double validate = 0, interface = 0;
  size_t tasks = 0;
};
SpirvCheckTimes time_spirv_checks(const loom::aot::Module& m, const loom::vk::DeviceCaps& caps) {
  SpirvCheckTimes t;
  for (const loom::aot::KernelInfo& k : m.meta.kernels) {
    loom::SpirvKernel code = k.spirv;
    for (size_t i = 0; i < code.tasks.size(); ++i) {
      const std::vector<uint8_t>& bytes = m.blobs.at(k.spirv_blobs.at(i));
      code.tasks[i].spirv.resize(bytes.size() / 4);
      std::memcpy(code.tasks[i].spirv.data(), bytes.data(), bytes.size());
    }
    for (size_t i = 0; i < code.tasks.size(); ++i) {
      auto t0 = Clock::now();
      if (!loom::vk::validate_spirv(code.tasks[i].spirv).empty()) std::abort();
      auto t1 = Clock::now();
      loom::vk::check_task_shader(k.abi, code, i, caps);
      t.interface += ms_since(t1);
      t.validate += std::chrono::duration<double, std::milli>(t1 - t0).count();
      ++t.tasks;
    }
  }
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 5;
  std::string which = "both";
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--runs") && i + 1 < argc)
      runs = std::max(1, std::atoi(argv[++i]));
    else if (!std::strcmp(argv[i], "--arch") && i + 1 < argc)
      which = argv[++i];
    else {
      std::fprintf(stderr, "usage: loom_module_load_bench [--runs N] [--arch cpu|vulkan|both]\n");
      return 2;
    }
  }
  setenv("MESA_SHADER_CACHE_DISABLE", "true", 1);  // no driver cache on either side
  std::vector<loom::aot::Arch> arches;
  if (which != "vulkan") arches.push_back(loom::aot::Arch::Cpu);
  if (which != "cpu") {
    if (loom::enumerate_vulkan_devices().empty())
      std::printf("(no Vulkan device: CPU only)\n");
    else
      arches.push_back(loom::aot::Arch::Vulkan);
  }
  const char* samples[] = {"heat", "life", "julia", "nbody", "mpm88", "cloth"};
  std::printf("%-7s %-6s %8s %12s %14s %9s %12s %13s\n", "arch", "sample", "kernels", "JIT ms",
              "module ms", "speedup", "validate ms", "interface ms");
  for (loom::aot::Arch arch : arches) {
    std::shared_ptr<loom::vk::VulkanDevice> shared;
    if (arch == loom::aot::Arch::Vulkan) shared = std::make_shared<loom::vk::VulkanDevice>();
    double jit_total = 0, module_total = 0, validate_total = 0, interface_total = 0;
    size_t tasks_total = 0;
    for (const char* sample : samples) {
      std::string doc = std::string(LOOM_SOURCE_DIR) + "/assets/graphs/" + sample + ".loom.json";
      loom::ProgramOptions po;
      po.backend = arch == loom::aot::Arch::Vulkan ? loom::Backend::Vulkan : loom::Backend::Cpu;
      po.offline_cache = false;
      po.vulkan_device = shared;
      // The module, built once outside the timing.
      std::vector<uint8_t> archive;
      loom::aot::Module built;
      size_t kernels = 0;
      {
        loom::ProgramOptions host = po;
        host.backend = loom::Backend::Cpu;
        loom::Program program(host);
        program.load_file(doc);
        loom::AotOptions ao;
        ao.arch = arch == loom::aot::Arch::Vulkan ? loom::Backend::Vulkan : loom::Backend::Cpu;
        loom::AotModule builder(program, ao);
        builder.add_document();
        built = builder.module();
        kernels = built.meta.kernels.size();
        archive = loom::aot::write_module_archive(built);
      }
      std::unique_ptr<loom::Device> device = arch == loom::aot::Arch::Cpu
                                                 ? loom::make_cpu_device()
                                                 : loom::make_vulkan_device({}, shared);
      std::vector<double> jit, module, validate, interface;
      size_t tasks = 0;
      for (int r = 0; r < runs; ++r) {
        if (arch == loom::aot::Arch::Vulkan) {
          SpirvCheckTimes t = time_spirv_checks(built, shared->caps());
          validate.push_back(t.validate);
          interface.push_back(t.interface);
          tasks = t.tasks;
        }
        auto t0 = Clock::now();
        {
          loom::Program program(po);
          program.load_file(doc);
          program.prepare_pipelines(true);
          jit.push_back(ms_since(t0));
        }
        auto t1 = Clock::now();
        {
          loom::aot::LoadedModule loaded(loom::aot::read_module_bytes(archive, sample), *device,
                                         sample);
          module.push_back(ms_since(t1));
        }
      }
      double j = median(jit), m = median(module), v = median(validate), i = median(interface);
      jit_total += j;
      module_total += m;
      validate_total += v;
      interface_total += i;
      tasks_total += tasks;
      std::printf("%-7s %-6s %8zu %12.2f %14.3f %8.1fx", loom::aot::arch_name(arch), sample,
                  kernels, j, m, j / m);
      if (arch == loom::aot::Arch::Vulkan) std::printf(" %12.3f %13.4f", v, i);
      std::printf("\n");
    }
    std::printf("%-7s %-6s %8s %12.2f %14.3f %8.1fx", loom::aot::arch_name(arch), "total", "",
                jit_total, module_total, jit_total / module_total);
    if (arch == loom::aot::Arch::Vulkan && tasks_total)
      std::printf(" %12.3f %13.4f  (per task: validate %.3f ms, interface %.4f ms)", validate_total,
                  interface_total, validate_total / tasks_total, interface_total / tasks_total);
    std::printf("  (all samples)\n");
  }
  return 0;
}
