// The Vulkan backend: SPIR-V codegen for the chosen device, on a Vulkan device (runtime/device).
#include <algorithm>

#include "compiler/codegen_spirv/spirv_codegen.h"
#include "engine_plugin/api/device_backend.h"
#include "engine_plugin/api/offline_cache.h"
#include "runtime/common/bounded_message.h"
#include "runtime/common/spirv_kernel.h"
#include "runtime/vulkan/vulkan_device.h"
#include "runtime/vulkan/vulkan_runtime.h"

namespace loom {

namespace {

std::unique_ptr<Device> make_program_device(const ProgramOptions& o) {
  VulkanDeviceOptions d;
  d.select = o.device;
  d.validation = o.validation;
  if (o.offline_cache)
    d.pipeline_cache_dir = o.cache_dir.empty() ? OfflineCache::default_directory() : o.cache_dir;
  d.warn = o.warn;
  return make_vulkan_device(d, o.vulkan_device);
}

class VulkanBackend : public DeviceBackend {
 public:
  explicit VulkanBackend(const ProgramOptions& options)
      : DeviceBackend(make_program_device(options)),
        options_(options),
        caps_(device().vulkan()->caps()) {}

  std::string target_signature() const override {
    std::string opt = options_.spirv_opt ? "\nspirv-opt" : "";
    if (options_.spirv_opt)
      for (const std::string& pass : options_.spirv_opt_passes) opt += " " + pass;
    return "vulkan\n" + caps_.signature() + "\nworkgroup " + std::to_string(workgroup_size()) + opt;
  }
  int index_bits() const override { return 32; }

  KernelRecord compile(ir::Kernel& kernel, Stats& stats) override {
    codegen::SpirvTimings timings;
    codegen::CompiledSpirvKernel c = codegen::compile_kernel_to_spirv(kernel, target(), &timings);
    stats.ms_codegen += timings.emit_ms + timings.validate_ms;
    stats.ms_optimize += timings.optimize_ms;
    if (options_.warn)
      for (const std::string& note : c.notes) options_.warn(bounded_message("note: " + note));
    return KernelRecord{std::move(c.abi), serialize_spirv_kernel(c.kernel)};
  }

 private:
  codegen::SpirvTarget target() const {
    codegen::SpirvTarget t;
    t.features = caps_.features;
    t.max_push_constant_bytes = caps_.max_push_constants;
    t.workgroup_size = std::min<uint32_t>(workgroup_size(), caps_.max_workgroup_size_x);
    t.device_name = "device '" + caps_.name + "'";
    t.optimize = options_.spirv_opt;
    t.optimizer_passes = options_.spirv_opt_passes;
    t.loop_iteration_limit = codegen::loop_iteration_limit(caps_.vendor_id, caps_.name);
    // The newest SPIR-V the device takes that our emitter writes: 1.0 on an engine's Vulkan
    // 1.0 device, 1.3 on 1.1, 1.5 on 1.2 and later.
    t.spirv_version = std::min(kSpirv1_5, max_spirv_version(caps_.api_version));
    return t;
  }

  uint32_t workgroup_size() const {
    return options_.workgroup_size > 0 ? static_cast<uint32_t>(options_.workgroup_size)
                                       : vk::preferred_workgroup_size(caps_);
  }

  ProgramOptions options_;
  const vk::DeviceCaps& caps_;  // the device's, which lives as long as this backend
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
  return std::make_unique<VulkanBackend>(options);
}

}  // namespace loom
