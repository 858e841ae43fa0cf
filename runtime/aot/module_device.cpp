#include "runtime/aot/module_device.h"

#include <cstdlib>
#include <cstring>
#include <typeinfo>

#include "runtime/common/error.h"
#include "runtime/common/spirv_kernel.h"
#include "runtime/cpu/host_cpu.h"
#include "runtime/vulkan/spirv_validator.h"
#include "runtime/vulkan/vulkan_runtime.h"

namespace loom::aot {

namespace {

// The only target the CPU runtime runs object code for.
constexpr const char* kHostTarget = "x86_64-linux";

std::string join(const std::vector<std::string>& items) {
  std::string s;
  for (const std::string& i : items) s += (s.empty() ? "" : ", ") + i;
  return s;
}

const std::vector<uint8_t>& blob(const Module& module, const std::string& name, const KernelInfo& k,
                                 const std::string& what) {
  auto it = module.blobs.find(name);
  if (it == module.blobs.end())
    throw Error(Place{what, k.name}, "the module lacks blob '" + name + "'");
  return it->second;
}

std::string level_names(const std::vector<CpuLevel>& levels) {
  std::string s;
  for (const CpuLevel& l : levels) s += (s.empty() ? "'" : ", '") + l.cpu + "'";
  return s;
}

size_t check_cpu_requirements(const ModuleMetadata& meta, const std::string& what,
                              const std::string& cpu_level) {
  if (meta.arch != Arch::Cpu)
    throw Error(
        Place{what},
        std::string("the module is compiled for ") + arch_name(meta.arch) + ", not for the CPU",
        ErrorKind::Arch);
  if (meta.needs.target != kHostTarget)
    throw Error(Place{what},
                "the module's object code is for " + meta.needs.target + "; this runtime runs " +
                    kHostTarget,
                ErrorKind::Capability);
  return select_cpu_level(meta, what, cpu_level);
}

void check_vulkan_requirements(const vk::DeviceCaps& caps, const ModuleMetadata& meta,
                               const std::string& what) {
  if (meta.arch != Arch::Vulkan)
    throw Error(
        Place{what},
        std::string("the module is compiled for ") + arch_name(meta.arch) + ", not for Vulkan",
        ErrorKind::Arch);
  std::vector<std::string> missing;
  if (uint32_t lacking = meta.needs.vulkan_features & ~caps.features)
    missing.push_back(describe_requirements(lacking));
  if (meta.needs.workgroup_size > caps.max_workgroup_size_x)
    missing.push_back("workgroups of " + std::to_string(meta.needs.workgroup_size) +
                      " invocations (the device has " + std::to_string(caps.max_workgroup_size_x) +
                      ")");
  if (meta.needs.push_constant_bytes > caps.max_push_constants)
    missing.push_back(std::to_string(meta.needs.push_constant_bytes) +
                      " bytes of push constants (the device has " +
                      std::to_string(caps.max_push_constants) + ")");
  if (!missing.empty())
    throw Error(Place{what},
                "device '" + caps.name + "' lacks what the module needs: " + join(missing),
                ErrorKind::Capability);
}

// The kernel's SPIR-V: the task descriptions from the metadata, each task's words from its blob.
SpirvKernel module_spirv(const Module& module, const KernelInfo& k, const std::string& what) {
  SpirvKernel code = k.spirv;
  for (size_t t = 0; t < code.tasks.size(); ++t) {
    const std::vector<uint8_t>& bytes = blob(module, k.spirv_blobs.at(t), k, what);
    if (bytes.size() % 4 != 0 || bytes.size() < 20)
      throw Error(Place{what, k.name}, "blob '" + k.spirv_blobs[t] + "' is not a SPIR-V module");
    code.tasks[t].spirv.resize(bytes.size() / 4);
    std::memcpy(code.tasks[t].spirv.data(), bytes.data(), bytes.size());
    if (code.tasks[t].spirv[0] != 0x07230203u)
      throw Error(Place{what, k.name},
                  "blob '" + k.spirv_blobs[t] + "' is not a SPIR-V module (bad magic)");
    // A module's code came from outside this process: it must be valid SPIR-V before a
    // driver sees it (VulkanKernel then holds it against the layout and the device).
    if (std::string problems = vk::validate_spirv(code.tasks[t].spirv); !problems.empty())
      throw Error(Place{what, k.name},
                  "task " + std::to_string(t) + " (blob '" + k.spirv_blobs[t] +
                      "') is not valid SPIR-V: " + problems,
                  ErrorKind::Corrupt);
    if (code.tasks[t].access.size() != code.bindings.size())
      throw Error(Place{what, k.name}, "task " + std::to_string(t) + " describes " +
                                           std::to_string(code.tasks[t].access.size()) +
                                           " bindings; the kernel has " +
                                           std::to_string(code.bindings.size()));
  }
  return code;
}

}  // namespace

size_t select_cpu_level(const std::vector<CpuLevel>& levels, const std::vector<std::string>& have,
                        const std::string& forced, const std::string& what) {
  if (levels.empty()) throw Error(Place{what}, "the module names no CPU level", ErrorKind::Corrupt);
  if (!forced.empty()) {
    for (size_t i = 0; i < levels.size(); ++i) {
      if (levels[i].cpu != forced) continue;
      std::vector<std::string> missing = cpu::missing_cpu_features(levels[i].features, have);
      if (!missing.empty())
        throw Error(Place{what},
                    "this CPU lacks features the module's code uses (compiled for '" + forced +
                        "', the level forced by " + kCpuLevelVariable +
                        " or the load options): " + join(missing),
                    ErrorKind::Capability);
      return i;
    }
    throw Error(Place{what},
                "the module has no CPU level '" + forced + "' (forced by " + kCpuLevelVariable +
                    " or the load options); its levels are " + level_names(levels),
                ErrorKind::Capability);
  }
  for (size_t i = levels.size(); i-- > 0;)
    if (cpu::missing_cpu_features(levels[i].features, have).empty()) return i;
  // The message older runtimes gave, naming the lowest level: what a CPU must have at least.
  std::string which = levels.size() == 1 ? "'" + levels[0].cpu + "'"
                                         : "'" + levels[0].cpu + "', the lowest of its levels " +
                                               level_names(levels);
  throw Error(Place{what},
              "this CPU lacks features the module's code uses (compiled for " + which +
                  "): " + join(cpu::missing_cpu_features(levels[0].features, have)) +
                  "; compile the module for an older CPU (loom compile --cpu x86-64-v2)",
              ErrorKind::Capability);
}

size_t select_cpu_level(const ModuleMetadata& meta, const std::string& what,
                        const std::string& forced) {
  std::string level = forced;
  if (const char* env = std::getenv(kCpuLevelVariable); level.empty() && env) level = env;
  return select_cpu_level(meta.needs.cpu_levels, cpu::host_cpu_features(), level, what);
}

size_t check_requirements(Device& device, const ModuleMetadata& meta, const std::string& what,
                          const std::string& cpu_level) {
  switch (device.kind()) {
    case DeviceKind::Cpu: return check_cpu_requirements(meta, what, cpu_level);
    case DeviceKind::Vulkan:
      check_vulkan_requirements(device.vulkan()->caps(), meta, what);
      return 0;
  }
  return 0;
}

std::shared_ptr<DeviceKernel> load_module_kernel(Device& device, const Module& module, size_t index,
                                                 const std::string& what, size_t cpu_level) {
  const KernelInfo& k = module.meta.kernels.at(index);
  switch (device.kind()) {
    case DeviceKind::Cpu:
      if (cpu_level >= k.objects.size())
        throw Error(Place{what, k.name},
                    "the kernel has no object for CPU level " + std::to_string(cpu_level));
      return device.load_object(k.abi, blob(module, k.objects[cpu_level], k, what));
    case DeviceKind::Vulkan: {
      SpirvKernel code = module_spirv(module, k, what);
      try {
        return device.load_spirv(k.abi, code);
      } catch (const Error& e) {
        // The device names the kernel; the module is only known here.
        if (typeid(e) != typeid(Error) || !e.place().document.empty()) throw;
        Place where = e.place();
        where.document = what;
        throw Error(where, e.message(), e.kind());
      }
    }
  }
  throw Error(Place{what, k.name}, "unknown device kind");
}

}  // namespace loom::aot
