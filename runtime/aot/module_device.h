// What is particular to running a module on a device (runtime/device): checking the
// module's requirements against the device ("the device has at least what the module
// needs") and loading a module's kernel from its blobs.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "runtime/aot/module.h"
#include "runtime/device/device.h"

namespace loom::aot {

// The environment variable that forces a CPU level (its CPU name), for testing a level on a
// machine that would pick a higher one.
constexpr const char* kCpuLevelVariable = "LOOM_CPU_LEVEL";

// Which of `levels` (a CPU module's, fewest features first) a CPU with the features `have`
// (sorted) runs: `forced` when not empty (a level's CPU name), else the last level whose
// features it has all of, the one with the most. Throws loom::Error (ErrorKind::Capability)
// naming `what` when `forced` is not one of the levels, when the CPU lacks a feature of the
// forced level, or when it lacks one of every level (naming the lowest level's missing ones).
size_t select_cpu_level(const std::vector<CpuLevel>& levels, const std::vector<std::string>& have,
                        const std::string& forced, const std::string& what);

// The same for this CPU: `forced`, else $LOOM_CPU_LEVEL when set, else the best level.
size_t select_cpu_level(const ModuleMetadata& meta, const std::string& what,
                        const std::string& forced = "");

// Throws loom::Error naming `what` and listing everything the device lacks. Returns the CPU
// level a CPU device runs (select_cpu_level with this CPU's features, forced by `cpu_level`
// or else $LOOM_CPU_LEVEL); 0 for Vulkan.
size_t check_requirements(Device& device, const ModuleMetadata& meta, const std::string& what,
                          const std::string& cpu_level = "");
// Loads kernel `index` of `module` (its blobs; on the CPU those of `cpu_level`) on `device`;
// throws loom::Error naming the kernel.
std::shared_ptr<DeviceKernel> load_module_kernel(Device& device, const Module& module, size_t index,
                                                 const std::string& what, size_t cpu_level = 0);

}  // namespace loom::aot
