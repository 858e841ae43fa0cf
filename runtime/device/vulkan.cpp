// The Vulkan device: SPIR-V pipelines and command streams of runtime/vulkan, with device
// copies of host storage kept coherent by the runtime.
#include <algorithm>
#include <atomic>

#include "runtime/common/error.h"
#include "runtime/common/launch_error.h"
#include "runtime/common/spirv_kernel.h"
#include "runtime/device/device.h"
#include "runtime/host/argpack.h"
#include "runtime/host/texture.h"
#include "runtime/vulkan/vulkan_kernel.h"
#include "runtime/vulkan/vulkan_runtime.h"

namespace loom {

namespace {

class VulkanDeviceKernel : public DeviceKernel {
 public:
  explicit VulkanDeviceKernel(std::shared_ptr<vk::VulkanKernel> k) : kernel(std::move(k)) {}
  const KernelABI& abi() const override { return kernel->abi(); }
  std::shared_ptr<vk::VulkanKernel> kernel;
};

vk::VulkanKernel& vulkan_kernel_of(DeviceKernel& kernel) {
  return *static_cast<VulkanDeviceKernel&>(kernel).kernel;
}

vk::RuntimeOptions runtime_options(const VulkanDeviceOptions& o) {
  vk::RuntimeOptions r;
  r.device.select = o.select;
  r.device.validation = o.validation;
  r.pipeline_cache_dir = o.pipeline_cache_dir;
  r.pipeline_cache_data = o.pipeline_cache_data;
  r.warn = o.warn;
  r.engine_owned_queue = o.engine_owned_queue;
  return r;
}

class Vulkan : public Device {
 public:
  Vulkan(const VulkanDeviceOptions& options, std::shared_ptr<vk::VulkanDevice> shared)
      : runtime_(shared ? std::make_unique<vk::VulkanRuntime>(std::move(shared),
                                                              runtime_options(options))
                        : std::make_unique<vk::VulkanRuntime>(runtime_options(options))) {}

  DeviceKind kind() const override { return DeviceKind::Vulkan; }
  std::string name() const override {
    return runtime_->caps().name + " (" + runtime_->caps().type + ", Vulkan)";
  }

  std::shared_ptr<DeviceKernel> load_object(const KernelABI& abi,
                                            const std::vector<uint8_t>&) override {
    throw Error(Place{"", abi.name},
                "kernel '" + abi.name + "' is CPU object code; a Vulkan device runs SPIR-V",
                ErrorKind::Arch);
  }
  std::shared_ptr<DeviceKernel> load_spirv(const KernelABI& abi, const SpirvKernel& code) override {
    return std::make_shared<VulkanDeviceKernel>(runtime_->load(abi, code));
  }

  void launch(DeviceKernel& kernel, LaunchContext& ctx) override {
    vk::VulkanKernel& k = vulkan_kernel_of(kernel);
    if (cancelled_.load())
      throw Error(Place{"", k.abi().name}, "kernel '" + k.abi().name + "' cancelled");
    runtime_->launch(k, ctx);
    if (ctx.error) throw_if_launch_failed(k.abi(), k.code().assert_messages, *ctx.error);
  }

  void add_buffer(const std::string& name, uint8_t* host, size_t bytes,
                  bool caller_memory) override {
    runtime_->add_buffer(name, host, bytes, caller_memory);
  }
  void add_texture(const std::string& name, host::Texture& t) override {
    runtime_->add_texture(name, t.data(), t.format(), t.width(), t.height(), t.depth(), t.ndim());
  }
  void add_argpack(const std::string& name, host::Argpack& pack) override {
    runtime_->add_argpack(name, pack);
  }
  void remove(const void* host) override { runtime_->remove(host); }
  void host_wrote(const void* host) override { runtime_->host_wrote(host); }
  void read_back(const void* host) override { runtime_->read_back(host); }
  void flush() override { runtime_->flush(); }
  void synchronize() override { runtime_->synchronize(); }
  bool synchronize(double timeout_ms) override {
    return runtime_->synchronize_within(static_cast<uint64_t>(std::max(timeout_ms, 0.0) * 1e6));
  }

  void cancel() override { cancelled_ = true; }
  void clear_cancel() override { cancelled_ = false; }

  vk::VulkanRuntime* vulkan() override { return runtime_.get(); }
  vk::VulkanKernel* vulkan_kernel(DeviceKernel& kernel) override {
    return &vulkan_kernel_of(kernel);
  }

 private:
  std::unique_ptr<vk::VulkanRuntime> runtime_;
  // A dispatch cannot be stopped: a cancel refuses the launches after it.
  std::atomic<bool> cancelled_{false};
};

}  // namespace

std::unique_ptr<Device> make_vulkan_device(const VulkanDeviceOptions& options,
                                           std::shared_ptr<vk::VulkanDevice> shared) {
  return std::make_unique<Vulkan>(options, std::move(shared));
}

}  // namespace loom
