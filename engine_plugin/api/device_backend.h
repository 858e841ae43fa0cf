// A backend of the JIT Program: a device (runtime/device: it loads, launches and keeps
// device copies of the program's storage coherent) and the code generator for it, which
// turns optimised kernel IR into records the device loads. Everything but compiling is the
// device's, shared with AOT modules.
#pragma once

#include <memory>
#include <string>

#include "engine_plugin/include/loom/program.h"
#include "runtime/common/abi_serialize.h"
#include "runtime/device/device.h"

namespace loom::ir {
class Kernel;
}

namespace loom {

class DeviceBackend {
 public:
  explicit DeviceBackend(std::unique_ptr<Device> device) : device_(std::move(device)) {}
  virtual ~DeviceBackend() = default;
  DeviceBackend(const DeviceBackend&) = delete;
  DeviceBackend& operator=(const DeviceBackend&) = delete;

  Device& device() { return *device_; }
  const Device& device() const { return *device_; }
  Backend kind() const;
  // Launch and transfer counts of a Vulkan device (zeros on the CPU).
  DeviceCounters counters();

  // The target part of compile cache keys (host CPU and features; device, driver, features).
  virtual std::string target_signature() const = 0;
  // Width of lowered element offsets (ir::Kernel::index_bits).
  virtual int index_bits() const = 0;
  // ir::Kernel::private_copies: per-thread copies a scattering task may use (0: none).
  virtual int private_copies() const { return 0; }
  // Offloaded, lowered IR -> a record for this device to load; adds codegen times to `stats`.
  virtual KernelRecord compile(ir::Kernel& kernel, Stats& stats) = 0;

 private:
  std::unique_ptr<Device> device_;
};

std::unique_ptr<DeviceBackend> make_cpu_backend(const ProgramOptions& options);
// ir::Kernel::private_copies for CPU code run by `threads` threads (0: one per core, as the
// CPU device counts them).
int cpu_private_copies(int threads);
// Throws loom::Error when no usable Vulkan device exists.
std::unique_ptr<DeviceBackend> make_vulkan_backend(const ProgramOptions& options);
// options.backend, with Auto trying Vulkan first and falling back to the CPU with a notice.
std::unique_ptr<DeviceBackend> make_backend(const ProgramOptions& options);

}  // namespace loom
