// A module loaded on a device and ready to launch: its requirements checked, its resources
// allocated (fields, ndarrays and textures zeroed, argpacks at their declared values), every
// kernel loaded, every pipeline launch bound once. Needs neither the compiler nor LLVM.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
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

// An argument a pipeline takes when it runs (LoadedModule::run_pipeline), in place of the one
// the module bound, for every launch whose kernel has a parameter of its name. It must be
// exactly what the parameter takes: a pipeline launches the instantiations the module holds,
// and cannot pick another at launch.
struct PipelineArgument {
  ParamKind kind = ParamKind::Value;
  ValueType type;              // Value: the parameter's type, scalar and components
  std::vector<uint8_t> bytes;  // Value: its components packed (a bool: one byte, 0 or 1)
  const host::Ndarray* ndarray = nullptr;
  const host::Texture* texture = nullptr;
  host::Argpack* argpack = nullptr;

  // A value of `type` from its components, packed (size_of(type.scalar) bytes each).
  static PipelineArgument value(ValueType type, const void* components);
  static PipelineArgument of(const host::Ndarray& ndarray);
  static PipelineArgument of(const host::Texture& texture);
  static PipelineArgument of(host::Argpack& argpack);
};
// By parameter name.
using PipelineArguments = std::map<std::string, PipelineArgument>;

// A parameter name a pipeline takes arguments for, and where: its launches whose kernels
// have a parameter of that name, in launch order.
struct PipelineParam {
  struct Use {
    int launch = -1;  // index into the pipeline's launches
    int param = -1;   // index into that launch's kernel's parameters
  };
  std::string name;
  std::vector<Use> uses;
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
  // The same, with `args` in place of the module's arguments of those names (launches whose
  // kernels lack a name keep theirs; the module's bindings stay as they were for later runs).
  // Every argument is checked against every launch that takes it before anything runs:
  // a name no launch takes (the message lists those it takes), a template parameter
  // (compiled into the instantiation), or a kind, type, dimension count, texture format or
  // argpack type other than the parameter's is a loom::Error naming the pipeline, the
  // launch's index, its kernel and the parameter.
  void run_pipeline(const std::string& name, const PipelineArguments& args);
  void run_pipeline(int index, const PipelineArguments& args, const Launcher* launcher = nullptr);
  // The parameter names pipeline `index` takes arguments for, in the order its launches
  // first take them.
  std::vector<PipelineParam> pipeline_params(int index) const;
  // The one named `name`. Throws loom::Error when no launch takes it: a template parameter
  // of a launch's kernel, or a name none has (the message lists those the pipeline takes).
  PipelineParam pipeline_param(int index, const std::string& name) const;

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
  // Binds a debug adjoint's shadows (Derivation::shadows) to the module's shadows of the
  // ndarrays the launch gives their parameters.
  void bind_access_shadows(int index, host::LaunchFrame& frame);
  void check_pipeline_argument(int index, const PipelineParam& param,
                               const PipelineArgument& arg) const;

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
