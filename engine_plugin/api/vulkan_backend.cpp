// The Vulkan backend: SPIR-V codegen for the chosen device, the Vulkan runtime.
#include <algorithm>
#include <atomic>
#include <cstdlib>

#include "compiler/codegen_spirv/spirv_codegen.h"
#include "engine_plugin/api/device_backend.h"
#include "engine_plugin/api/offline_cache.h"
#include "runtime/common/error.h"
#include "runtime/common/launch_error.h"
#include "runtime/common/spirv_kernel.h"
#include "runtime/host/argpack.h"
#include "runtime/host/texture.h"
#include "runtime/vulkan/vulkan_kernel.h"
#include "runtime/vulkan/vulkan_runtime.h"

namespace loom {

namespace {

class VulkanBackendKernel : public BackendKernel {
 public:
  explicit VulkanBackendKernel(std::shared_ptr<vk::VulkanKernel> k) : kernel(std::move(k)) {}
  const KernelABI& abi() const override { return kernel->abi(); }
  std::shared_ptr<vk::VulkanKernel> kernel;
};

vk::RuntimeOptions runtime_options(const ProgramOptions& o, const std::string& cache_dir) {
  vk::RuntimeOptions r;
  r.device.select = o.device;
  r.device.validation = o.validation;
  r.pipeline_cache_dir = cache_dir;
  r.warn = o.warn;
  return r;
}

class VulkanBackend : public DeviceBackend {
 public:
  VulkanBackend(const ProgramOptions& options, const std::string& cache_dir)
      : options_(options),
        runtime_ptr_(options.vulkan_device
                         ? std::make_unique<vk::VulkanRuntime>(options.vulkan_device, runtime_options(options, cache_dir))
                         : std::make_unique<vk::VulkanRuntime>(runtime_options(options, cache_dir))),
        runtime_(*runtime_ptr_) {}

  Backend kind() const override { return Backend::Vulkan; }
  std::string device_name() const override { return runtime_.caps().name + " (" + runtime_.caps().type + ", Vulkan)"; }
  std::string target_signature() const override {
    return "vulkan\n" + runtime_.caps().signature() + "\nworkgroup " + std::to_string(options_.workgroup_size) +
           (options_.spirv_opt ? "\nspirv-opt" : "");
  }
  int index_bits() const override { return 32; }

  codegen::SpirvTarget target() const {
    codegen::SpirvTarget t;
    const vk::DeviceCaps& caps = runtime_.caps();
    t.features = caps.features;
    t.max_push_constant_bytes = caps.max_push_constants;
    t.workgroup_size = std::min<uint32_t>(static_cast<uint32_t>(options_.workgroup_size), caps.max_workgroup_size_x);
    t.device_name = "device '" + caps.name + "'";
    t.optimize = options_.spirv_opt;
    return t;
  }

  KernelRecord compile(ir::Kernel& kernel, Stats& stats) override {
    codegen::SpirvTimings timings;
    codegen::CompiledSpirvKernel c = codegen::compile_kernel_to_spirv(kernel, target(), &timings);
    stats.ms_codegen += timings.emit_ms + timings.validate_ms;
    stats.ms_optimize += timings.optimize_ms;
    if (options_.warn)
      for (const std::string& note : c.notes) options_.warn("note: " + note);
    return KernelRecord{std::move(c.abi), serialize_spirv_kernel(c.kernel)};
  }

  std::shared_ptr<BackendKernel> load(const KernelRecord& record) override {
    SpirvKernel code = deserialize_spirv_kernel(record.code, "kernel '" + record.abi.name + "'");
    return std::make_shared<VulkanBackendKernel>(runtime_.load(record.abi, code));
  }

  void launch(BackendKernel& kernel, LaunchContext& ctx) override {
    vk::VulkanKernel& k = *static_cast<VulkanBackendKernel&>(kernel).kernel;
    if (cancelled_.load()) throw Error(Place{"", k.abi().name}, "kernel '" + k.abi().name + "' cancelled");
    runtime_.launch(k, ctx);
    if (ctx.error) throw_if_launch_failed(k.abi(), k.code().assert_messages, *ctx.error);
  }

  void add_buffer(const std::string& name, uint8_t* host, size_t bytes, bool caller_memory) override {
    runtime_.add_buffer(name, host, bytes, caller_memory);
  }
  void add_texture(const std::string& name, host::Texture& t) override {
    runtime_.add_texture(name, t.data(), t.format(), t.width(), t.height(), t.depth(), t.ndim());
  }
  void add_argpack(const std::string& name, host::Argpack& pack) override { runtime_.add_argpack(name, pack); }
  void remove(const void* host) override { runtime_.remove(host); }
  void host_wrote(const void* host) override { runtime_.host_wrote(host); }
  void read_back(const void* host) override { runtime_.read_back(host); }
  void flush() override { runtime_.flush(); }
  void synchronize() override { runtime_.synchronize(); }
  void cancel() override { cancelled_ = true; }
  void clear_cancel() override { cancelled_ = false; }
  bool synchronize(double timeout_ms) override {
    return runtime_.synchronize_within(static_cast<uint64_t>(std::max(timeout_ms, 0.0) * 1e6));
  }

  DeviceCounters counters() override {
    const vk::RuntimeStats& s = runtime_.stats();
    DeviceCounters c;
    c.last_launch_argpack_uploads = s.last_launch.argpack_uploads;
    c.last_launch_argpack_bytes = s.last_launch.argpack_bytes;
    c.last_launch_argument_bytes = s.last_launch.argument_bytes;
    c.argpack_bytes = s.total.argpack_bytes;
    c.argpack_uploads = s.total.argpack_uploads;
    c.argument_bytes = s.total.argument_bytes;
    c.resource_bytes_uploaded = s.total.resource_bytes;
    c.bytes_downloaded = s.bytes_downloaded;
    c.dispatches = s.total.dispatches;
    c.submits = s.submits;
    c.waits = s.waits;
    c.barriers = s.barriers;
    c.pipelines = s.pipelines;
    c.pipeline_ms = s.pipeline_ms;
    return c;
  }

 private:
  ProgramOptions options_;
  std::unique_ptr<vk::VulkanRuntime> runtime_ptr_;
  vk::VulkanRuntime& runtime_;
  // A dispatch cannot be stopped: a cancel refuses the launches after it (Program::cancel).
  std::atomic<bool> cancelled_{false};
};

}  // namespace

std::vector<std::string> enumerate_vulkan_devices() {
  std::vector<std::string> out;
  for (const vk::DeviceInfo& d : vk::enumerate_devices())
    out.push_back(std::to_string(d.index) + ": " + d.name + " (" + d.type + ", Vulkan " +
                  std::to_string(VK_API_VERSION_MAJOR(d.api_version)) + "." +
                  std::to_string(VK_API_VERSION_MINOR(d.api_version)) + "." +
                  std::to_string(VK_API_VERSION_PATCH(d.api_version)) + ")");
  return out;
}

std::unique_ptr<DeviceBackend> make_vulkan_backend(const ProgramOptions& options) {
  std::string cache_dir;
  if (options.offline_cache) cache_dir = options.cache_dir.empty() ? OfflineCache::default_directory() : options.cache_dir;
  return std::make_unique<VulkanBackend>(options, cache_dir);
}

std::unique_ptr<DeviceBackend> make_backend(const ProgramOptions& options) {
  switch (options.backend) {
    case Backend::Cpu: return make_cpu_backend(options);
    case Backend::Vulkan: return make_vulkan_backend(options);
    case Backend::Auto:
      try {
        return make_vulkan_backend(options);
      } catch (const Error& e) {
        if (options.warn) options.warn(std::string("notice: no Vulkan device (") + e.what() + "); running on the CPU");
        return make_cpu_backend(options);
      }
  }
  return make_cpu_backend(options);
}

}  // namespace loom
