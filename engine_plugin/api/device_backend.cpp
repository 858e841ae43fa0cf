#include "engine_plugin/api/device_backend.h"

#include "runtime/common/error.h"
#include "runtime/vulkan/vulkan_runtime.h"

namespace loom {

Backend DeviceBackend::kind() const {
  switch (device_->kind()) {
    case DeviceKind::Cpu: return Backend::Cpu;
    case DeviceKind::Vulkan: return Backend::Vulkan;
  }
  return Backend::Cpu;
}

DeviceCounters DeviceBackend::counters() {
  vk::VulkanRuntime* runtime = device_->vulkan();
  if (!runtime) return {};
  const vk::RuntimeStats& s = runtime->stats();
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

std::unique_ptr<DeviceBackend> make_backend(const ProgramOptions& options) {
  switch (options.backend) {
    case Backend::Cpu: return make_cpu_backend(options);
    case Backend::Vulkan: return make_vulkan_backend(options);
    case Backend::Auto: try { return make_vulkan_backend(options);
      } catch (const Error& e) {
        if (options.warn)
          options.warn(std::string("notice: no Vulkan device (") + e.what() +
                       "); running on the CPU");
        return make_cpu_backend(options);
      }
  }
  return make_cpu_backend(options);
}

}  // namespace loom
