// A module loaded on a device and ready to launch: its requirements checked, its resources
// allocated (fields, ndarrays and textures zeroed, argpacks at their declared values), every
// kernel loaded, every pipeline launch bound once. Needs neither the compiler nor LLVM.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "runtime/aot/module.h"
#include "runtime/common/error.h"
#include "runtime/device/device.h"

namespace loom::host {
class Argpack;
class Field;
class LaunchFrame;
class Ndarray;
class Texture;
}  // namespace loom::host

namespace loom::aot {

struct LoadOptions {
  // CPU modules: the CPU level to run (a level's CPU name, "x86-64-v2"), for testing a lower
  // level on a machine that would pick a higher one; "": $LOOM_CPU_LEVEL when set, else the
  // best level this CPU has (module_device.h).
  std::string cpu_level;
};

class LoadedModule {
 public:
  // `what` names the module (its path) in every error. Throws loom::Error when the device
  // lacks what the module needs, a kernel does not load, or a resource cannot be allocated.
  LoadedModule(Module module, Device& device, std::string what, const LoadOptions& options = {});
  ~LoadedModule();  // the device copies of this module's resources go with it
  LoadedModule(const LoadedModule&) = delete;
  LoadedModule& operator=(const LoadedModule&) = delete;

  const ModuleMetadata& metadata() const { return module_.meta; }
  const std::string& what() const { return what_; }
  // CPU modules: the level running, an index into metadata().needs.cpu_levels; -1 for Vulkan.
  int cpu_level() const { return cpu_level_; }
  Device& device() { return device_; }

  // The instantiation of kernel `name` compiled with exactly these template arguments
  // (every template parameter named once; an int matches a float parameter of equal value);
  // -1 when there is none.
  int find_kernel(const std::string& name,
                  const std::vector<TemplateArgument>& template_args = {}) const;
  // The same, but throws loom::Error naming the kernel and listing the instantiations the
  // module has.
  int kernel(const std::string& name,
             const std::vector<TemplateArgument>& template_args = {}) const;
  const KernelInfo& kernel_info(int index) const {
    return module_.meta.kernels.at(static_cast<size_t>(index));
  }
  size_t kernel_count() const { return kernels_.size(); }

  DeviceKernel& device_kernel(int index) const { return *kernels_.at(static_cast<size_t>(index)); }

  // Binds the module's fields into `frame` (a frame of kernel `index`), seeds it and
  // launches. Failures (bounds checks, assertions in debug modules) are loom::Errors naming
  // the module and kernel.
  void launch(int index, host::LaunchFrame& frame);
  // How a launch runs when not on the device's own queue (a host engine's command buffer).
  using Launcher = std::function<void(DeviceKernel& kernel, LaunchContext& ctx)>;
  // The same, launched by `launcher`.
  void launch(int index, host::LaunchFrame& frame, const Launcher& launcher);

  bool has_pipeline(const std::string& name) const;
  // Index of pipeline `name` in the metadata, -1 when there is none.
  int find_pipeline(const std::string& name) const;
  // Runs the pipeline's launches in order, each bound when the module was loaded.
  void run_pipeline(const std::string& name);
  void run_pipeline(int index, const Launcher* launcher = nullptr);

  // The module's own resources (null when it has none of that name).
  host::Field* field(const std::string& name) const;
  host::Ndarray* ndarray(const std::string& name) const;
  host::Texture* texture(const std::string& name) const;
  host::Argpack* argpack(const std::string& name) const;
  // Every resource name, in metadata order (fields, ndarrays, textures, argpacks).
  std::vector<std::string> resource_names() const;

 private:
  struct Resources;
  struct BoundLaunch;
  void allocate();
  void release_device_copies();
  void bind_pipelines();

  Module module_;
  Device& device_;
  std::string what_;
  std::vector<std::shared_ptr<DeviceKernel>> kernels_;
  std::unique_ptr<Resources> resources_;
  std::vector<std::vector<std::unique_ptr<BoundLaunch>>> pipelines_;  // per metadata pipeline
  uint64_t launch_serial_ = 0;
  int cpu_level_ = -1;
};

// Writes `value` into value parameter `param` of `frame`: numbers converted to the
// parameter's type with range checks, lists by component count. Throws loom::Error at `where`.
void set_value_argument(host::LaunchFrame& frame, int param, const Value& value,
                        const Place& where);

}  // namespace loom::aot
