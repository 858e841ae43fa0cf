// What every launch entry point shares (launch_api.cpp, pipeline_args_api.cpp): how a failed
// launch is reported, and launches recorded into a host's command buffer.
#pragma once

#include <loom/loom.h>

#include <string>

#include "engine_plugin/c_api/c_api_error.h"
#include "engine_plugin/c_api/handles.h"
#include "runtime/host/extent_check.h"

namespace loom::capi {

// Runs `launch`: arguments shorter than the loops indexing them (refused before anything ran)
// are LOOM_ERROR_INVALID_ARGUMENT, failed bounds checks and assertions LOOM_ERROR_LAUNCH.
template <typename Launch>
void launching(Launch&& launch) {
  try {
    launch();
  } catch (const ApiError&) {
    throw;
  } catch (const host::ExtentError& e) {
    throw ApiError(LOOM_ERROR_INVALID_ARGUMENT, e.place(), e.message());
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::General) throw;
    throw ApiError(LOOM_ERROR_LAUNCH, e.place(), e.message());
  }
}

// The runtime must be Vulkan and `cb` a command buffer (`call` names the entry point).
inline void check_into(RuntimeObject& r, VkCommandBuffer cb, const char* call) {
  vulkan_of(r, call);
  if (!cb) throw ApiError(LOOM_ERROR_NULL_HANDLE, std::string(call) + ": command_buffer is null");
}

// Launches recorded into `cb` in the runtime's host frames.
inline aot::LoadedModule::Launcher into(RuntimeObject& r, VkCommandBuffer cb) {
  vk::HostFrames& frames = r.host_frames();
  loom::Device& device = *r.device;
  return [&frames, &device, cb](loom::DeviceKernel& k, LaunchContext& ctx) {
    frames.launch_into(cb, *device.vulkan_kernel(k), ctx);
  };
}

}  // namespace loom::capi
