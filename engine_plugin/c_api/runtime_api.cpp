// Version, runtimes and the host's frame loop.
#include <cstdio>
#include <functional>

#include "engine_plugin/c_api/c_api_error.h"
#include "engine_plugin/c_api/handles.h"
#include "engine_plugin/c_api/types.h"
#include "runtime/aot/module.h"
#include "runtime/vulkan/command_stream.h"
#include "runtime/vulkan/vulkan_device.h"
#include "runtime/vulkan/vulkan_runtime.h"

using namespace loom;
using loom::capi::ApiError;
using loom::capi::guard;
using loom::capi::need;
using loom::capi::resolve;
using loom::capi::RuntimeObject;

#ifndef LOOM_PRODUCT_VERSION
#define LOOM_PRODUCT_VERSION "0.0.0"
#endif

namespace loom::capi {

vk::HostFrames& RuntimeObject::host_frames() {
  if (!frames)
    frames = std::make_unique<vk::HostFrames>(vulkan_of(*this, "host frames"), frames_in_flight);
  return *frames;
}

void RuntimeObject::retire(Retired module) {
  // Work on Loom's own queue is waited for when the module frees its device copies; only
  // command buffers the host records can still hold it.
  if (!frames || frames->stats().launches == 0) {
    release(module);
    return;
  }
  module.frame = frames->frame();
  retired.push_back(std::move(module));
}

void RuntimeObject::release(Retired& module) {
  for (auto& pack : module.packs) device->remove(pack->data());
  module.packs.clear();
  module.module.reset();
}

void RuntimeObject::free_retired(bool all) {
  uint64_t now = frames ? frames->frame() : 0;
  for (size_t i = 0; i < retired.size();) {
    if (all || now >= retired[i].frame + frames_in_flight) {
      release(retired[i]);
      retired.erase(retired.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      ++i;
    }
  }
}

vk::VulkanRuntime& vulkan_of(RuntimeObject& r, const char* call) {
  vk::VulkanRuntime* v = r.device ? r.device->vulkan() : nullptr;
  if (!v)
    throw ApiError(LOOM_ERROR_WRONG_ARCH,
                   std::string(call) + " needs a Vulkan runtime; this one runs on the CPU");
  return *v;
}

std::string user_of(const RuntimeObject& r, const std::function<bool(const MemberRef&)>& matches,
                    const ModuleObject* skip) {
  for (const ModuleObject* m : r.modules) {
    if (m == skip) continue;
    auto scan = [&](const ArgpackObject& p) -> std::string {
      for (const auto& [path, ref] : p.refs)
        if (matches(ref))
          return "member '" + path + "' of argpack '" + p.name + "' (" +
                 (p.own ? "made from " : "of ") + m->what + ")";
      return "";
    };
    for (const auto& [name, p] : m->argpacks)
      if (std::string u = scan(*p); !u.empty()) return u;
    for (const auto& [raw, p] : m->created_packs)
      if (std::string u = scan(*p); !u.empty()) return u;
  }
  return "";
}

}  // namespace loom::capi

namespace {

void warn(const std::string& message) {
  std::fprintf(stderr, "loom: warning: %s\n", message.c_str());
}

uint32_t frames_or_default(uint32_t frames) {
  if (frames > 16)
    throw ApiError(LOOM_ERROR_INVALID_ARGUMENT,
                   "frames_in_flight " + std::to_string(frames) + " is more than 16");
  return frames == 0 ? 2 : frames;
}

}  // namespace

extern "C" {

uint32_t loom_version(void) { return LOOM_HEADER_VERSION; }

const char* loom_version_string(void) {
  static const std::string text = std::string("loom ") + LOOM_PRODUCT_VERSION + " (abi " +
                                  std::to_string(LOOM_VERSION_MAJOR(LOOM_HEADER_VERSION)) + "." +
                                  std::to_string(LOOM_VERSION_MINOR(LOOM_HEADER_VERSION)) + "." +
                                  std::to_string(LOOM_VERSION_PATCH(LOOM_HEADER_VERSION)) +
                                  ", module format " + std::to_string(aot::kModuleFormatVersion) +
                                  ")";
  return text.c_str();
}

LoomResult loom_runtime_create(const LoomRuntimeCreateInfo* info, LoomRuntime* out) {
  return guard(LOOM_ERROR_DEVICE, [&] {
    const LoomRuntimeCreateInfo& i = need(info, "loom_runtime_create: info");
    need(out, "loom_runtime_create: out");
    auto r = std::make_unique<RuntimeObject>();
    r->frames_in_flight = frames_or_default(i.frames_in_flight);
    int32_t arch = capi::enum_int(i.arch);
    if (arch == LOOM_ARCH_CPU) {
      if (i.cpu_threads > 1024)
        throw ApiError(LOOM_ERROR_INVALID_ARGUMENT,
                       "cpu_threads " + std::to_string(i.cpu_threads) + " is more than 1024");
      r->device = loom::make_cpu_device(static_cast<int>(i.cpu_threads));
    } else if (arch == LOOM_ARCH_VULKAN) {
      loom::VulkanDeviceOptions o;
      o.select = i.vulkan_device ? i.vulkan_device : "";
      o.validation = i.validation != 0;
      o.warn = warn;
      r->device = loom::make_vulkan_device(o);
    } else {
      throw ApiError(LOOM_ERROR_INVALID_ARGUMENT,
                     "loom_runtime_create: arch " + std::to_string(arch) + " is not a LoomArch");
    }
    r->arch = i.arch;
    *out = r->handle.as<LoomRuntime>();
    static_cast<void>(r.release());  // owned through the handle until loom_runtime_destroy
  });
}

LoomResult loom_runtime_import_vulkan(const LoomVulkanDeviceImport* device, LoomRuntime* out) {
  return guard(LOOM_ERROR_DEVICE, [&] {
    const LoomVulkanDeviceImport& d = need(device, "loom_runtime_import_vulkan: device");
    need(out, "loom_runtime_import_vulkan: out");
    vk::ImportedDevice host;
    host.instance = d.instance;
    host.physical = d.physical_device;
    host.device = d.device;
    host.queue_family = d.queue_family_index;
    host.queue = d.queue;
    host.api_version = d.api_version;
    if (!d.create_info)
      throw ApiError(LOOM_ERROR_NULL_HANDLE,
                     "loom_runtime_import_vulkan: create_info is null; Loom reads the "
                     "features the device was created with from it");
    vk::set_enabled_features(host, *d.create_info);
    auto r = std::make_unique<RuntimeObject>();
    r->frames_in_flight = frames_or_default(d.frames_in_flight);
    loom::VulkanDeviceOptions o;
    o.warn = warn;
    r->device = loom::make_vulkan_device(o, std::make_shared<vk::VulkanDevice>(host));
    r->arch = LOOM_ARCH_VULKAN;
    *out = r->handle.as<LoomRuntime>();
    static_cast<void>(r.release());  // owned through the handle until loom_runtime_destroy
  });
}

LoomResult loom_runtime_destroy(LoomRuntime runtime) {
  return guard(LOOM_ERROR_DEVICE, [&] {
    RuntimeObject* r = capi::resolve_or_null(runtime, "loom_runtime_destroy: runtime");
    if (!r) return;
    size_t alive = r->modules.size() + r->arrays.size() + r->textures.size();
    if (alive != 0)
      throw ApiError(LOOM_ERROR_INVALID_ARGUMENT,
                     "loom_runtime_destroy: " + std::to_string(r->modules.size()) + " module(s), " +
                         std::to_string(r->arrays.size()) + " ndarray(s) and " +
                         std::to_string(r->textures.size()) +
                         " texture(s) of the runtime are not destroyed yet");
    r->device->synchronize();
    r->free_retired(true);
    r->frames.reset();
    std::unique_ptr<RuntimeObject> gone(r);  // its handle turns stale with it
  });
}

LoomResult loom_runtime_get_info(LoomRuntime runtime, LoomRuntimeInfo* out) {
  return guard(LOOM_ERROR_DEVICE, [&] {
    RuntimeObject& r = resolve(runtime, "loom_runtime_get_info: runtime");
    LoomRuntimeInfo& info = need(out, "loom_runtime_get_info: out");
    info = LoomRuntimeInfo{};
    info.arch = r.arch;
    capi::copy_name(info.device_name, r.device->name());
    info.frames_in_flight = r.frames_in_flight;
  });
}

LoomResult loom_runtime_begin_frame(LoomRuntime runtime) {
  return guard(LOOM_ERROR_DEVICE, [&] {
    RuntimeObject& r = resolve(runtime, "loom_runtime_begin_frame: runtime");
    if (r.arch != LOOM_ARCH_VULKAN) return;
    r.host_frames().begin_frame();
    r.free_retired(false);
  });
}

LoomResult loom_runtime_barrier_for_graphics(LoomRuntime runtime, VkCommandBuffer command_buffer) {
  return guard(LOOM_ERROR_DEVICE, [&] {
    RuntimeObject& r = resolve(runtime, "loom_runtime_barrier_for_graphics: runtime");
    need(command_buffer, "loom_runtime_barrier_for_graphics: command_buffer");
    r.host_frames().barrier_for_graphics(command_buffer);
  });
}

LoomResult loom_runtime_submit(LoomRuntime runtime, uint32_t wait_count, const LoomSemaphore* waits,
                               uint32_t signal_count, const LoomSemaphore* signals) {
  return guard(LOOM_ERROR_DEVICE, [&] {
    RuntimeObject& r = resolve(runtime, "loom_runtime_submit: runtime");
    if (wait_count && !waits)
      throw ApiError(LOOM_ERROR_NULL_HANDLE, "loom_runtime_submit: waits is null");
    if (signal_count && !signals)
      throw ApiError(LOOM_ERROR_NULL_HANDLE, "loom_runtime_submit: signals is null");
    if (r.arch != LOOM_ARCH_VULKAN) {
      if (wait_count || signal_count)
        throw ApiError(LOOM_ERROR_WRONG_ARCH,
                       "loom_runtime_submit: a CPU runtime has no semaphores to wait on or signal");
      return;
    }
    std::vector<vk::SemaphoreWait> w;
    std::vector<vk::SemaphoreSignal> s;
    for (uint32_t i = 0; i < wait_count; ++i) {
      if (!waits[i].semaphore)
        throw ApiError(LOOM_ERROR_NULL_HANDLE,
                       "loom_runtime_submit: waits[" + std::to_string(i) + "] is null");
      vk::SemaphoreWait x;
      x.semaphore = waits[i].semaphore;
      x.value = waits[i].value;
      w.push_back(x);
    }
    for (uint32_t i = 0; i < signal_count; ++i) {
      if (!signals[i].semaphore)
        throw ApiError(LOOM_ERROR_NULL_HANDLE,
                       "loom_runtime_submit: signals[" + std::to_string(i) + "] is null");
      s.push_back({signals[i].semaphore, signals[i].value});
    }
    capi::vulkan_of(r, "loom_runtime_submit").submit(w, s);
  });
}

LoomResult loom_runtime_wait(LoomRuntime runtime) {
  return guard(LOOM_ERROR_DEVICE,
               [&] { resolve(runtime, "loom_runtime_wait: runtime").device->synchronize(); });
}

}  // extern "C"
