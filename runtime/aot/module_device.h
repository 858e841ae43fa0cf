// Where a loaded module runs: the CPU (the thread pool and object code loaded without LLVM)
// or a Vulkan device (SPIR-V pipelines; its own device or one shared with a renderer or a
// host engine). The device checks a module's requirements ("the device has at least what
// the module needs"), loads its kernels and launches them on host storage that it mirrors
// where it must (Vulkan keeps device copies coherent as runtime/vulkan describes).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "runtime/aot/module.h"
#include "runtime/common/kernel_abi.h"

namespace loom::host {
class Argpack;
class Texture;
}  // namespace loom::host
namespace loom::vk {
class VulkanDevice;
class VulkanKernel;
class VulkanRuntime;
}  // namespace loom::vk

namespace loom::aot {

// A kernel loaded on a device.
class DeviceKernel {
 public:
  virtual ~DeviceKernel() = default;
  virtual const KernelABI& abi() const = 0;
};

class ModuleDevice {
 public:
  virtual ~ModuleDevice() = default;

  virtual Arch arch() const = 0;
  virtual std::string name() const = 0;
  // Throws loom::Error naming `what` and listing everything the device lacks.
  virtual void check_requirements(const ModuleMetadata& meta, const std::string& what) const = 0;
  // Loads kernel `index` of `module` (its blobs); throws loom::Error naming the kernel.
  virtual std::shared_ptr<DeviceKernel> load(const Module& module, size_t index, const std::string& what) = 0;
  // Runs the kernel; a failed bounds check or assertion is thrown as a loom::Error.
  virtual void launch(DeviceKernel& kernel, LaunchContext& ctx) = 0;

  // Device copies of host storage; no-ops on the CPU, which runs on host storage directly.
  virtual void add_buffer(const std::string& name, uint8_t* host, size_t bytes, bool caller_memory) {}
  virtual void add_texture(const std::string& name, host::Texture& texture) {}
  virtual void add_argpack(const std::string& name, host::Argpack& pack) {}
  virtual void remove(const void* host) {}
  virtual void host_wrote(const void* host) {}
  virtual void read_back(const void* host) {}
  virtual void flush() {}
  virtual void synchronize() {}
  // The Vulkan runtime underneath (null on the CPU): interop with a host engine.
  virtual vk::VulkanRuntime* vulkan() { return nullptr; }
  // The Vulkan kernel of a kernel this device loaded (null on the CPU): launches recorded
  // into a host engine's command buffers (vk::HostFrames).
  virtual vk::VulkanKernel* vulkan_kernel(DeviceKernel& kernel) { return nullptr; }
};

std::unique_ptr<ModuleDevice> make_cpu_module_device(int threads = 0);

struct VulkanModuleDeviceOptions {
  std::string select;            // "" the best device, an index, or part of its name
  bool validation = false;
  std::string pipeline_cache_dir;  // "" keeps the pipeline cache in memory
  std::function<void(const std::string&)> warn;
};
// Its own Vulkan device (throws loom::Error when there is none), or `shared`.
std::unique_ptr<ModuleDevice> make_vulkan_module_device(const VulkanModuleDeviceOptions& options,
                                                        std::shared_ptr<vk::VulkanDevice> shared = nullptr);

}  // namespace loom::aot
