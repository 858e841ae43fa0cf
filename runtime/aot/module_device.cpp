#include "runtime/aot/module_device.h"

#include <cstring>

#include "runtime/common/error.h"
#include "runtime/common/launch_error.h"
#include "runtime/common/spirv_kernel.h"
#include "runtime/cpu/cpu_device.h"
#include "runtime/cpu/cpu_module.h"
#include "runtime/cpu/host_cpu.h"
#include "runtime/host/argpack.h"
#include "runtime/host/texture.h"
#include "runtime/vulkan/vulkan_kernel.h"
#include "runtime/vulkan/vulkan_runtime.h"

namespace loom::aot {

namespace {

std::string join(const std::vector<std::string>& items) {
  std::string s;
  for (const std::string& i : items) s += (s.empty() ? "" : ", ") + i;
  return s;
}

const std::vector<uint8_t>& blob(const Module& module, const std::string& name, const KernelInfo& k, const std::string& what) {
  auto it = module.blobs.find(name);
  if (it == module.blobs.end()) throw Error(Place{what, k.name}, "the module lacks blob '" + name + "'");
  return it->second;
}

// ---- CPU

class CpuKernel : public DeviceKernel {
 public:
  explicit CpuKernel(std::shared_ptr<cpu::LoadedCpuKernel> k) : kernel(std::move(k)) {}
  const KernelABI& abi() const override { return kernel->abi; }
  std::shared_ptr<cpu::LoadedCpuKernel> kernel;
};

class CpuModuleDevice : public ModuleDevice {
 public:
  explicit CpuModuleDevice(int threads) : device_(threads) {}

  Arch arch() const override { return Arch::Cpu; }
  std::string name() const override {
    return "CPU, " + std::to_string(const_cast<cpu::CpuDevice&>(device_).pool().size()) + " threads";
  }

  void check_requirements(const ModuleMetadata& meta, const std::string& what) const override {
    if (meta.arch != Arch::Cpu)
      throw Error(Place{what}, std::string("the module is compiled for ") + arch_name(meta.arch) + ", not for the CPU",
                  ErrorKind::Arch);
    if (meta.needs.target != kHostTarget)
      throw Error(Place{what}, "the module's object code is for " + meta.needs.target + "; this runtime runs " + kHostTarget,
                  ErrorKind::Capability);
    std::vector<std::string> missing = cpu::missing_cpu_features(meta.needs.cpu_features);
    if (!missing.empty())
      throw Error(Place{what}, "this CPU lacks features the module's code uses (compiled for '" + meta.needs.cpu +
                                   "'): " + join(missing) + "; compile the module for an older CPU (loom compile --cpu x86-64-v2)",
                  ErrorKind::Capability);
  }

  std::shared_ptr<DeviceKernel> load(const Module& module, size_t index, const std::string& what) override {
    const KernelInfo& k = module.meta.kernels.at(index);
    return std::make_shared<CpuKernel>(module_.load(k.abi, blob(module, k.object, k, what)));
  }

  void launch(DeviceKernel& kernel, LaunchContext& ctx) override {
    device_.launch(*static_cast<CpuKernel&>(kernel).kernel, ctx);
  }

  static constexpr const char* kHostTarget = "x86_64-linux";

 private:
  cpu::CpuDevice device_;
  cpu::CpuModule module_;
};

// ---- Vulkan

class VulkanKernelHandle : public DeviceKernel {
 public:
  explicit VulkanKernelHandle(std::shared_ptr<vk::VulkanKernel> k) : kernel(std::move(k)) {}
  const KernelABI& abi() const override { return kernel->abi(); }
  std::shared_ptr<vk::VulkanKernel> kernel;
};

vk::RuntimeOptions runtime_options(const VulkanModuleDeviceOptions& o) {
  vk::RuntimeOptions r;
  r.device.select = o.select;
  r.device.validation = o.validation;
  r.pipeline_cache_dir = o.pipeline_cache_dir;
  r.warn = o.warn;
  return r;
}

class VulkanModuleDevice : public ModuleDevice {
 public:
  VulkanModuleDevice(const VulkanModuleDeviceOptions& options, std::shared_ptr<vk::VulkanDevice> shared)
      : runtime_(shared ? std::make_unique<vk::VulkanRuntime>(std::move(shared), runtime_options(options))
                        : std::make_unique<vk::VulkanRuntime>(runtime_options(options))) {}

  Arch arch() const override { return Arch::Vulkan; }
  std::string name() const override { return runtime_->caps().name + " (" + runtime_->caps().type + ", Vulkan)"; }

  void check_requirements(const ModuleMetadata& meta, const std::string& what) const override {
    if (meta.arch != Arch::Vulkan)
      throw Error(Place{what}, std::string("the module is compiled for ") + arch_name(meta.arch) + ", not for Vulkan",
                  ErrorKind::Arch);
    const vk::DeviceCaps& caps = runtime_->caps();
    std::vector<std::string> missing;
    if (uint32_t lacking = meta.needs.vulkan_features & ~caps.features) missing.push_back(describe_requirements(lacking));
    if (meta.needs.workgroup_size > caps.max_workgroup_size_x)
      missing.push_back("workgroups of " + std::to_string(meta.needs.workgroup_size) + " invocations (the device has " +
                        std::to_string(caps.max_workgroup_size_x) + ")");
    if (meta.needs.push_constant_bytes > caps.max_push_constants)
      missing.push_back(std::to_string(meta.needs.push_constant_bytes) + " bytes of push constants (the device has " +
                        std::to_string(caps.max_push_constants) + ")");
    if (!missing.empty())
      throw Error(Place{what}, "device '" + caps.name + "' lacks what the module needs: " + join(missing),
                  ErrorKind::Capability);
  }

  std::shared_ptr<DeviceKernel> load(const Module& module, size_t index, const std::string& what) override {
    const KernelInfo& k = module.meta.kernels.at(index);
    SpirvKernel code = k.spirv;
    for (size_t t = 0; t < code.tasks.size(); ++t) {
      const std::vector<uint8_t>& bytes = blob(module, k.spirv_blobs.at(t), k, what);
      if (bytes.size() % 4 != 0 || bytes.size() < 20)
        throw Error(Place{what, k.name}, "blob '" + k.spirv_blobs[t] + "' is not a SPIR-V module");
      code.tasks[t].spirv.resize(bytes.size() / 4);
      std::memcpy(code.tasks[t].spirv.data(), bytes.data(), bytes.size());
      if (code.tasks[t].spirv[0] != 0x07230203u)
        throw Error(Place{what, k.name}, "blob '" + k.spirv_blobs[t] + "' is not a SPIR-V module (bad magic)");
      if (code.tasks[t].access.size() != code.bindings.size())
        throw Error(Place{what, k.name}, "task " + std::to_string(t) + " describes " + std::to_string(code.tasks[t].access.size()) +
                                            " bindings; the kernel has " + std::to_string(code.bindings.size()));
    }
    return std::make_shared<VulkanKernelHandle>(runtime_->load(k.abi, code));
  }

  void launch(DeviceKernel& kernel, LaunchContext& ctx) override {
    vk::VulkanKernel& k = *static_cast<VulkanKernelHandle&>(kernel).kernel;
    runtime_->launch(k, ctx);
    if (ctx.error) throw_if_launch_failed(k.abi(), k.code().assert_messages, *ctx.error);
  }

  void add_buffer(const std::string& name, uint8_t* host, size_t bytes, bool caller_memory) override {
    runtime_->add_buffer(name, host, bytes, caller_memory);
  }
  void add_texture(const std::string& name, host::Texture& t) override {
    runtime_->add_texture(name, t.data(), t.format(), t.width(), t.height(), t.depth(), t.ndim());
  }
  void add_argpack(const std::string& name, host::Argpack& pack) override { runtime_->add_argpack(name, pack); }
  void remove(const void* host) override { runtime_->remove(host); }
  void host_wrote(const void* host) override { runtime_->host_wrote(host); }
  void read_back(const void* host) override { runtime_->read_back(host); }
  void flush() override { runtime_->flush(); }
  void synchronize() override { runtime_->synchronize(); }
  vk::VulkanRuntime* vulkan() override { return runtime_.get(); }
  vk::VulkanKernel* vulkan_kernel(DeviceKernel& kernel) override {
    return static_cast<VulkanKernelHandle&>(kernel).kernel.get();
  }

 private:
  std::unique_ptr<vk::VulkanRuntime> runtime_;
};

}  // namespace

std::unique_ptr<ModuleDevice> make_cpu_module_device(int threads) { return std::make_unique<CpuModuleDevice>(threads); }

std::unique_ptr<ModuleDevice> make_vulkan_module_device(const VulkanModuleDeviceOptions& options,
                                                        std::shared_ptr<vk::VulkanDevice> shared) {
  return std::make_unique<VulkanModuleDevice>(options, std::move(shared));
}

}  // namespace loom::aot
