// The device a Program runs on: it compiles optimised kernel IR for itself, loads compiled
// records (from the compiler or the offline cache), launches them with a LaunchContext, and
// keeps any device copies of the program's host storage coherent with it. The CPU runs
// kernels on host storage directly; Vulkan mirrors it in device memory.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "engine_plugin/include/loom/program.h"
#include "runtime/common/abi_serialize.h"
#include "runtime/common/kernel_abi.h"

namespace loom::ir {
class Kernel;
}
namespace loom::host {
class Argpack;
class Texture;
}  // namespace loom::host

namespace loom {

// A kernel loaded on a device.
class BackendKernel {
 public:
  virtual ~BackendKernel() = default;
  virtual const KernelABI& abi() const = 0;
};

class DeviceBackend {
 public:
  virtual ~DeviceBackend() = default;

  virtual Backend kind() const = 0;
  virtual std::string device_name() const = 0;
  // The target part of compile cache keys (host CPU and features; device, driver, features).
  virtual std::string target_signature() const = 0;
  // Width of lowered element offsets (ir::Kernel::index_bits).
  virtual int index_bits() const = 0;

  // Offloaded, lowered IR -> a compiled record for this device; adds codegen times to `stats`.
  virtual KernelRecord compile(ir::Kernel& kernel, Stats& stats) = 0;
  // Throws loom::Error (naming the kernel) when the record cannot run here.
  virtual std::shared_ptr<BackendKernel> load(const KernelRecord& record) = 0;
  // Runs the kernel; a failed bounds check or assertion is thrown as a loom::Error.
  virtual void launch(BackendKernel& kernel, LaunchContext& ctx) = 0;

  // Device copies of host storage; no-ops where kernels run on host storage.
  virtual void add_buffer(const std::string& name, uint8_t* host, size_t bytes, bool caller_memory) {}
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
  virtual void cancel() {}  // any thread: see Program::cancel
  virtual void clear_cancel() {}
  virtual DeviceCounters counters() { return {}; }
};

std::unique_ptr<DeviceBackend> make_cpu_backend(const ProgramOptions& options);
// Throws loom::Error when no usable Vulkan device exists.
std::unique_ptr<DeviceBackend> make_vulkan_backend(const ProgramOptions& options);
// options.backend, with Auto trying Vulkan first and falling back to the CPU with a notice.
std::unique_ptr<DeviceBackend> make_backend(const ProgramOptions& options);

}  // namespace loom
