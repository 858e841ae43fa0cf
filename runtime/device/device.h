// Where compiled kernels run, for a JIT loom::Program (engine_plugin/api) and an AOT
// LoadedModule (runtime/aot) alike: a device loads a kernel's code, launches it with a
// LaunchContext and keeps any device copies of host storage coherent. The CPU runs kernels
// on host storage directly; Vulkan mirrors it in device memory (runtime/vulkan). Compiling
// is not a device's business: neither the compiler nor LLVM is needed here.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "runtime/common/kernel_abi.h"

namespace loom {
struct KernelRecord;
struct SpirvKernel;
}  // namespace loom
namespace loom::cpu {
struct JobSystem;
}
namespace loom::host {
class Argpack;
class Texture;
}  // namespace loom::host
namespace loom::vk {
class VulkanDevice;
class VulkanKernel;
class VulkanRuntime;
}  // namespace loom::vk

namespace loom {

enum class DeviceKind : uint8_t { Cpu, Vulkan };

// A kernel loaded on a device; its code stays loaded while this object lives.
class DeviceKernel {
 public:
  virtual ~DeviceKernel() = default;
  virtual const KernelABI& abi() const = 0;
};

class Device {
 public:
  virtual ~Device() = default;

  virtual DeviceKind kind() const = 0;
  // "CPU, 8 threads"; "NAME (TYPE, Vulkan)".
  virtual std::string name() const = 0;

  // Each device runs one form of code: the CPU ELF object code, Vulkan SPIR-V; the other
  // form is refused. Both throw loom::Error naming the kernel when it cannot run here.
  virtual std::shared_ptr<DeviceKernel> load_object(const KernelABI& abi,
                                                    const std::vector<uint8_t>& object) = 0;
  virtual std::shared_ptr<DeviceKernel> load_spirv(const KernelABI& abi,
                                                   const SpirvKernel& code) = 0;
  // A compiled record (compiler or offline cache): its code is in the form of this device.
  std::shared_ptr<DeviceKernel> load(const KernelRecord& record);

  // Runs the kernel; a failed bounds check or assertion, or a cancelled launch, is thrown
  // as a loom::Error naming the kernel.
  virtual void launch(DeviceKernel& kernel, LaunchContext& ctx) = 0;

  // Device copies of host storage, keyed by the host data pointer; no-ops where kernels run
  // on host storage. `caller_memory`: memory the caller may change at any time.
  virtual void add_buffer(const std::string& name, uint8_t* host, size_t bytes,
                          bool caller_memory) {}
  virtual void add_texture(const std::string& name, host::Texture& texture) {}
  virtual void add_argpack(const std::string& name, host::Argpack& pack) {}
  virtual void remove(const void* host) {}
  virtual void host_wrote(const void* host) {}  // upload before the next use
  virtual void read_back(const void* host) {}   // make the host copy current now
  virtual void flush() {}                       // start recorded work, no wait
  virtual void synchronize() {}                 // wait for all recorded work
  // At most `timeout_ms`; false when work is still running then.
  virtual bool synchronize(double timeout_ms) {
    synchronize();
    return true;
  }

  // From any thread: the running launch stops where it can (the CPU at its next
  // cancellation point; a Vulkan dispatch cannot be stopped) and every later launch is
  // refused until clear_cancel().
  virtual void cancel() = 0;
  virtual void clear_cancel() = 0;

  // The Vulkan runtime underneath (null on the CPU): interop with a host engine, statistics.
  virtual vk::VulkanRuntime* vulkan() { return nullptr; }
  // The Vulkan kernel of a kernel this device loaded (null on the CPU): launches recorded
  // into a host engine's command buffers (vk::HostFrames).
  virtual vk::VulkanKernel* vulkan_kernel(DeviceKernel& kernel) { return nullptr; }
};

std::unique_ptr<Device> make_cpu_device(int threads = 0);  // 0: one thread per core
// Parallel tasks run on an engine's job system (runtime/cpu/job_system.h); no threads of Loom's.
std::unique_ptr<Device> make_cpu_device(const cpu::JobSystem& jobs);

struct VulkanDeviceOptions {
  std::string select;  // "" the best device, an index, or part of its name
  bool validation = false;
  std::string pipeline_cache_dir;            // "" keeps the pipeline cache in memory
  std::vector<uint8_t> pipeline_cache_data;  // an earlier cache's data to start from
  std::function<void(const std::string&)> warn;
  // `shared` is an engine's, and the engine owns its queue: Loom never submits to it or waits
  // on it (vk::RuntimeOptions::engine_owned_queue).
  bool engine_owned_queue = false;
};
// Its own Vulkan device (throws loom::Error when there is none), or `shared` (a renderer's
// or a host engine's, used from the same thread; `select` and `validation` are then its
// owner's business).
std::unique_ptr<Device> make_vulkan_device(const VulkanDeviceOptions& options,
                                           std::shared_ptr<vk::VulkanDevice> shared = nullptr);

}  // namespace loom
