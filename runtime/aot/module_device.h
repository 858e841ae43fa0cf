// What is particular to running a module on a device (runtime/device): checking the
// module's requirements against the device ("the device has at least what the module
// needs") and loading a module's kernel from its blobs.
#pragma once

#include <memory>
#include <string>

#include "runtime/aot/module.h"
#include "runtime/device/device.h"

namespace loom::aot {

// Throws loom::Error naming `what` and listing everything the device lacks.
void check_requirements(Device& device, const ModuleMetadata& meta, const std::string& what);
// Loads kernel `index` of `module` (its blobs) on `device`; throws loom::Error naming the kernel.
std::shared_ptr<DeviceKernel> load_module_kernel(Device& device, const Module& module, size_t index,
                                                 const std::string& what);

}  // namespace loom::aot
