// Version, runtimes and the host's frame loop.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>

#include "engine_plugin/c_api/c_api_error.h"
#include "engine_plugin/c_api/handles.h"
#include "engine_plugin/c_api/info_structs.h"
#include "engine_plugin/c_api/types.h"
#include "runtime/aot/module.h"
#include "runtime/cpu/job_system.h"
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
  if (engine_owned_queue) {
    // Nothing waits: Loom's recorded work runs in the engine's command buffers, so what it
    // recorded so far and the frames in flight may all use the module.
    vk::VulkanRuntime& v = vulkan_of(*this, "retiring a module");
    module.work = v.work_recorded();
    module.frame = frames ? frames->frame() : 0;
    retired.push_back(std::move(module));
    return;
  }
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
  uint64_t completed = frames ? frames->completed() : 0;
  for (size_t i = 0; i < retired.size();) {
    bool recorded_work_done = !engine_owned_queue || retired[i].work == 0 ||
                              vulkan_of(*this, "freeing a module").work_done(retired[i].work);
    if (all || (completed >= retired[i].frame && recorded_work_done)) {
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

// Warnings go to the host's log callback, or to stderr without one.
std::function<void(const std::string&)> warner(LoomLogFn log, void* user) {
  if (!log)
    return [](const std::string& m) { std::fprintf(stderr, "loom: warning: %s\n", m.c_str()); };
  return [log, user](const std::string& m) {
    capi::CallbackScope inside("the log callback");
    log(user, LOOM_LOG_WARNING, m.c_str());
  };
}

// The engine's job system as the CPU device's: one LoomJobFn trampoline into the chunk job.
cpu::JobSystem job_system(LoomParallelForFn parallel_for, void* user, uint32_t workers) {
  cpu::JobSystem j;
  j.workers = static_cast<int>(std::clamp<uint32_t>(workers, 1, 1024));
  j.parallel_for = [parallel_for, user](uint32_t count, const cpu::JobSystem::Job& job) {
    capi::CallbackScope inside("the parallel_for callback");
    parallel_for(
        user, count,
        [](void* context, uint32_t index) {
          (*static_cast<const cpu::JobSystem::Job*>(context))(index);
        },
        const_cast<cpu::JobSystem::Job*>(&job));
  };
  return j;
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
  return guard("loom_runtime_create", LOOM_ERROR_DEVICE, [&] {
    const LoomRuntimeCreateInfo i = capi::read_info(info, "loom_runtime_create: info");
    need(out, "loom_runtime_create: out");
    auto r = std::make_unique<RuntimeObject>();
    r->frames_in_flight = frames_or_default(i.frames_in_flight);
    r->warn = warner(i.log, i.log_user);
    int32_t arch = capi::enum_int(i.arch);
    if (arch == LOOM_ARCH_CPU) {
      if (i.cpu_threads > 1024)
        throw ApiError(LOOM_ERROR_INVALID_ARGUMENT,
                       "cpu_threads " + std::to_string(i.cpu_threads) + " is more than 1024");
      r->device = i.parallel_for ? loom::make_cpu_device(job_system(
                                       i.parallel_for, i.parallel_for_user, i.parallel_for_workers))
                                 : loom::make_cpu_device(static_cast<int>(i.cpu_threads));
    } else if (arch == LOOM_ARCH_VULKAN) {
      if (i.parallel_for)
        throw ApiError(LOOM_ERROR_INVALID_ARGUMENT,
                       "loom_runtime_create: parallel_for is for CPU runtimes");
      loom::VulkanDeviceOptions o;
      o.select = i.vulkan_device ? i.vulkan_device : "";
      o.validation = i.validation != 0;
      o.warn = warner(i.log, i.log_user);
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
  return guard("loom_runtime_import_vulkan", LOOM_ERROR_DEVICE, [&] {
    const LoomVulkanDeviceImport d = capi::read_info(device, "loom_runtime_import_vulkan: device");
    need(out, "loom_runtime_import_vulkan: out");
    vk::ImportedDevice host;
    host.instance = d.instance;
    host.physical = d.physical_device;
    host.device = d.device;
    host.queue_family = d.queue_family_index;
    host.queue = d.queue;
    host.api_version = d.api_version;
    // What the engine declares, from the create info and/or the features chain and
    // extension list: the union, nothing else.
    if (d.create_info) vk::set_enabled_features(host, *d.create_info);
    if (d.enabled_extension_count && !d.enabled_extensions)
      throw ApiError(LOOM_ERROR_NULL_HANDLE,
                     "loom_runtime_import_vulkan: enabled_extensions is null but "
                     "enabled_extension_count is " +
                         std::to_string(d.enabled_extension_count));
    for (uint32_t e = 0; e < d.enabled_extension_count; ++e)
      if (!d.enabled_extensions[e])
        throw ApiError(LOOM_ERROR_NULL_HANDLE, "loom_runtime_import_vulkan: enabled_extensions[" +
                                                   std::to_string(e) + "] is null");
    if (d.enabled_features || d.enabled_extension_count) {
      VkDeviceCreateInfo declared{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
      declared.pNext = d.enabled_features;
      declared.enabledExtensionCount = d.enabled_extension_count;
      declared.ppEnabledExtensionNames = d.enabled_extensions;
      vk::ImportedDevice from_declared = host;
      vk::set_enabled_features(from_declared, declared);
      host.timeline_semaphore = host.timeline_semaphore || from_declared.timeline_semaphore;
      host.kernel_features |= from_declared.kernel_features;
      host.memory_budget = host.memory_budget || from_declared.memory_budget;
    }
    if (!d.lock_queue != !d.unlock_queue)
      throw ApiError(LOOM_ERROR_INVALID_ARGUMENT,
                     "loom_runtime_import_vulkan: give both lock_queue and unlock_queue, or "
                     "neither");
    if (d.lock_queue) {
      host.lock_queue = [f = d.lock_queue, user = d.queue_user] {
        capi::CallbackScope inside("the lock_queue callback");
        f(user);
      };
      host.unlock_queue = [f = d.unlock_queue, user = d.queue_user] {
        capi::CallbackScope inside("the unlock_queue callback");
        f(user);
      };
    }
    auto say = warner(d.log, d.log_user);
    if (d.get_instance_proc_addr && d.instance && d.device) {
      auto theirs = reinterpret_cast<PFN_vkGetDeviceProcAddr>(
          d.get_instance_proc_addr(d.instance, "vkGetDeviceProcAddr"));
      if (!theirs)
        throw ApiError(LOOM_ERROR_INVALID_ARGUMENT,
                       "loom_runtime_import_vulkan: get_instance_proc_addr does not resolve "
                       "vkGetDeviceProcAddr for the instance");
      if (theirs(d.device, "vkQueueSubmit") != vkGetDeviceProcAddr(d.device, "vkQueueSubmit"))
        say("the engine's vkGetInstanceProcAddr resolves vkQueueSubmit differently from the "
            "Vulkan loader libloom.so links (a layer of the engine's?); Loom calls the loader's");
    }
    host.pipeline_cache = d.pipeline_cache;
    // Memory hooks: the engine's allocation callbacks and block allocator.
    if (const VkAllocationCallbacks* a = d.allocation_callbacks;
        a && (!a->pfnAllocation || !a->pfnReallocation || !a->pfnFree))
      throw ApiError(LOOM_ERROR_INVALID_ARGUMENT,
                     "loom_runtime_import_vulkan: allocation_callbacks lacks pfnAllocation, "
                     "pfnReallocation or pfnFree (Vulkan needs all three)");
    host.allocation_callbacks = d.allocation_callbacks;
    if (!d.allocate_memory != !d.free_memory)
      throw ApiError(LOOM_ERROR_INVALID_ARGUMENT,
                     "loom_runtime_import_vulkan: give both allocate_memory and free_memory, or "
                     "neither");
    if (d.allocate_memory) {
      host.allocate_memory = [f = d.allocate_memory, user = d.memory_user](
                                 const VkMemoryAllocateInfo& info, VkDeviceMemory* memory) {
        capi::CallbackScope inside("the allocate_memory callback");
        return f(user, &info, memory);
      };
      host.free_memory = [f = d.free_memory, user = d.memory_user](VkDeviceMemory memory) {
        capi::CallbackScope inside("the free_memory callback");
        f(user, memory);
      };
    }
    if (d.pipeline_cache_data_size && !d.pipeline_cache_data)
      throw ApiError(LOOM_ERROR_NULL_HANDLE,
                     "loom_runtime_import_vulkan: pipeline_cache_data is null but "
                     "pipeline_cache_data_size is " +
                         std::to_string(d.pipeline_cache_data_size));
    int32_t mode = capi::enum_int(d.queue_mode);
    if (mode != LOOM_QUEUE_ENGINE_OWNED && mode != LOOM_QUEUE_SHARED)
      throw ApiError(
          LOOM_ERROR_INVALID_ARGUMENT,
          "loom_runtime_import_vulkan: queue_mode " + std::to_string(mode) +
              " is not a LoomQueueMode (0 LOOM_QUEUE_ENGINE_OWNED, 1 LOOM_QUEUE_SHARED)");
    auto r = std::make_unique<RuntimeObject>();
    r->frames_in_flight = frames_or_default(d.frames_in_flight);
    r->engine_owned_queue = mode == LOOM_QUEUE_ENGINE_OWNED;
    r->warn = say;
    loom::VulkanDeviceOptions o;
    o.warn = say;
    o.engine_owned_queue = r->engine_owned_queue;
    if (d.pipeline_cache_data_size) {
      const auto* bytes = static_cast<const uint8_t*>(d.pipeline_cache_data);
      o.pipeline_cache_data.assign(bytes, bytes + d.pipeline_cache_data_size);
    }
    r->device = loom::make_vulkan_device(o, std::make_shared<vk::VulkanDevice>(host));
    r->arch = LOOM_ARCH_VULKAN;
    *out = r->handle.as<LoomRuntime>();
    static_cast<void>(r.release());  // owned through the handle until loom_runtime_destroy
  });
}

LoomResult loom_runtime_destroy(LoomRuntime runtime) {
  return guard("loom_runtime_destroy", LOOM_ERROR_DEVICE, [&] {
    RuntimeObject* r = capi::resolve_or_null(runtime, "loom_runtime_destroy: runtime");
    if (!r) return;
    size_t alive = r->modules.size() + r->arrays.size() + r->textures.size();
    if (alive != 0)
      throw ApiError(LOOM_ERROR_INVALID_ARGUMENT,
                     "loom_runtime_destroy: " + std::to_string(r->modules.size()) + " module(s), " +
                         std::to_string(r->arrays.size()) + " ndarray(s) and " +
                         std::to_string(r->textures.size()) +
                         " texture(s) of the runtime are not destroyed yet");
    r->readbacks.clear();  // their handles turn stale; the host waited for its frames
    if (!r->engine_owned_queue) r->device->synchronize();
    r->free_retired(true);
    r->frames.reset();
    capi::CallScope::forget(r->owner);       // never left: a call that comes now finds it gone
    std::unique_ptr<RuntimeObject> gone(r);  // its handle turns stale with it
  });
}

LoomResult loom_runtime_get_info(LoomRuntime runtime, LoomRuntimeInfo* out) {
  return guard("loom_runtime_get_info", LOOM_ERROR_DEVICE, [&] {
    RuntimeObject& r = resolve(runtime, "loom_runtime_get_info: runtime");
    capi::check_out(out, "loom_runtime_get_info: out");
    LoomRuntimeInfo info{};
    info.arch = r.arch;
    capi::copy_name(info.device_name, r.device->name());
    info.frames_in_flight = r.frames_in_flight;
    capi::write_out(out, info);
  });
}

LoomResult loom_runtime_get_memory_usage(LoomRuntime runtime, uint32_t* count,
                                         LoomMemoryUsage* usages) {
  return guard("loom_runtime_get_memory_usage", LOOM_ERROR_DEVICE, [&] {
    RuntimeObject& r = resolve(runtime, "loom_runtime_get_memory_usage: runtime");
    uint32_t& n = need(count, "loom_runtime_get_memory_usage: count");
    vk::VulkanRuntime* v = r.device->vulkan();
    std::vector<vk::MemoryAllocator::TypeUsage> all;
    if (v) all = v->memory_usage();
    if (!usages) {
      n = static_cast<uint32_t>(all.size());
      return;
    }
    uint32_t written = std::min<uint32_t>(n, static_cast<uint32_t>(all.size()));
    if (written) capi::check_out(usages, "loom_runtime_get_memory_usage: usages[0]");
    for (uint32_t k = 0; k < written; ++k) {
      LoomMemoryUsage u{};
      u.memory_type = all[k].type;
      u.heap = all[k].heap;
      u.flags = all[k].flags;
      u.blocks = static_cast<uint32_t>(all[k].blocks);
      u.reserved = all[k].reserved;
      u.used = all[k].used;
      LoomMemoryUsage* slot = capi::element(usages, k);
      slot->struct_size = usages->struct_size;
      capi::write_out(slot, u);
    }
    n = written;
  });
}

LoomResult loom_runtime_get_heap_budget(LoomRuntime runtime, uint32_t heap, uint64_t* budget,
                                        uint64_t* usage) {
  return guard("loom_runtime_get_heap_budget", LOOM_ERROR_DEVICE, [&] {
    RuntimeObject& r = resolve(runtime, "loom_runtime_get_heap_budget: runtime");
    uint64_t& b = need(budget, "loom_runtime_get_heap_budget: budget");
    uint64_t& u = need(usage, "loom_runtime_get_heap_budget: usage");
    vk::VulkanDevice& d = capi::vulkan_of(r, "loom_runtime_get_heap_budget").device();
    uint32_t heaps = d.memory_properties().memoryHeapCount;
    if (heap >= heaps)
      throw ApiError(LOOM_ERROR_INVALID_ARGUMENT,
                     "loom_runtime_get_heap_budget: heap " + std::to_string(heap) +
                         " does not exist; the device has " + std::to_string(heaps));
    VkPhysicalDeviceMemoryBudgetPropertiesEXT props{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_BUDGET_PROPERTIES_EXT};
    b = u = 0;
    if (d.memory_budget(&props)) {
      b = props.heapBudget[heap];
      u = props.heapUsage[heap];
    }
  });
}

LoomResult loom_runtime_get_pipeline_cache_data(LoomRuntime runtime, size_t* size, void* data) {
  return guard("loom_runtime_get_pipeline_cache_data", LOOM_ERROR_DEVICE, [&] {
    RuntimeObject& r = resolve(runtime, "loom_runtime_get_pipeline_cache_data: runtime");
    size_t& n = need(size, "loom_runtime_get_pipeline_cache_data: size");
    std::vector<uint8_t> bytes =
        capi::vulkan_of(r, "loom_runtime_get_pipeline_cache_data").pipeline_cache_data();
    if (!data) {
      n = bytes.size();
      return;
    }
    if (n < bytes.size())
      throw ApiError(LOOM_ERROR_INVALID_ARGUMENT,
                     "loom_runtime_get_pipeline_cache_data: *size is " + std::to_string(n) +
                         "; the data is " + std::to_string(bytes.size()) + " bytes");
    std::memcpy(data, bytes.data(), bytes.size());
    n = bytes.size();
  });
}

namespace {

// After a frame began: what completed is freed, and reads that landed go to their callbacks
// (those the host holds no handle to go after it).
void frame_begun(RuntimeObject& r) {
  vk::HostFrames& frames = r.host_frames();
  r.free_retired(false);
  std::vector<capi::ReadbackObject*> landed;
  for (auto& [key, rb] : r.readbacks)
    if (rb->done && !rb->called && frames.readback_ready(rb->id)) landed.push_back(key);
  for (capi::ReadbackObject* rb : landed) {
    rb->called = true;
    capi::CallbackScope inside("a read-back's done callback");
    rb->done(rb->user, frames.readback_data(rb->id), frames.readback_bytes(rb->id));
    if (!rb->host_owned) {
      frames.release_readback(rb->id);
      r.readbacks.erase(rb);
    }
  }
}

}  // namespace

LoomResult loom_runtime_begin_frame(LoomRuntime runtime) {
  return guard("loom_runtime_begin_frame", LOOM_ERROR_DEVICE, [&] {
    RuntimeObject& r = resolve(runtime, "loom_runtime_begin_frame: runtime");
    if (r.arch != LOOM_ARCH_VULKAN) return;
    try {
      r.host_frames().begin_frame();
    } catch (const Error& e) {
      throw ApiError(LOOM_ERROR_INVALID_ARGUMENT, std::string("loom_runtime_begin_frame: ") +
                                                      e.what() +
                                                      " (after loom_runtime_begin_frame_number?)");
    }
    frame_begun(r);
  });
}

LoomResult loom_runtime_begin_frame_number(LoomRuntime runtime, uint64_t frame,
                                           uint64_t completed_frame) {
  return guard("loom_runtime_begin_frame_number", LOOM_ERROR_DEVICE, [&] {
    RuntimeObject& r = resolve(runtime, "loom_runtime_begin_frame_number: runtime");
    if (r.arch != LOOM_ARCH_VULKAN) return;
    try {
      r.host_frames().begin_frame(frame, completed_frame);
    } catch (const Error& e) {
      throw ApiError(LOOM_ERROR_INVALID_ARGUMENT,
                     std::string("loom_runtime_begin_frame_number: ") + e.what());
    }
    frame_begun(r);
  });
}

LoomResult loom_runtime_barrier(LoomRuntime runtime, VkCommandBuffer command_buffer,
                                VkPipelineStageFlags dst_stages, VkAccessFlags dst_access) {
  return guard("loom_runtime_barrier", LOOM_ERROR_DEVICE, [&] {
    RuntimeObject& r = resolve(runtime, "loom_runtime_barrier: runtime");
    capi::vulkan_of(r, "loom_runtime_barrier");
    need(command_buffer, "loom_runtime_barrier: command_buffer");
    if (!dst_stages)
      throw ApiError(LOOM_ERROR_INVALID_ARGUMENT,
                     "loom_runtime_barrier: dst_stages is 0; name the stages that read Loom's "
                     "writes");
    r.host_frames().barrier_for(command_buffer, dst_stages, dst_access);
  });
}

LoomResult loom_runtime_record(LoomRuntime runtime, VkCommandBuffer command_buffer) {
  return guard("loom_runtime_record", LOOM_ERROR_DEVICE, [&] {
    RuntimeObject& r = resolve(runtime, "loom_runtime_record: runtime");
    capi::vulkan_of(r, "loom_runtime_record");
    need(command_buffer, "loom_runtime_record: command_buffer");
    r.host_frames().record_pending(command_buffer);
  });
}

LoomResult loom_runtime_barrier_for_graphics(LoomRuntime runtime, VkCommandBuffer command_buffer) {
  return guard("loom_runtime_barrier_for_graphics", LOOM_ERROR_DEVICE, [&] {
    RuntimeObject& r = resolve(runtime, "loom_runtime_barrier_for_graphics: runtime");
    need(command_buffer, "loom_runtime_barrier_for_graphics: command_buffer");
    r.host_frames().barrier_for_graphics(command_buffer);
  });
}

LoomResult loom_runtime_submit(LoomRuntime runtime, uint32_t wait_count, const LoomSemaphore* waits,
                               uint32_t signal_count, const LoomSemaphore* signals) {
  return guard("loom_runtime_submit", LOOM_ERROR_DEVICE, [&] {
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
    if (r.engine_owned_queue)
      throw ApiError(LOOM_ERROR_NOT_SUPPORTED,
                     "loom_runtime_submit: the engine owns the queue (LOOM_QUEUE_ENGINE_OWNED), so "
                     "Loom submits nothing: loom_runtime_record puts Loom's pending work into a "
                     "command buffer of the engine's");
    capi::vulkan_of(r, "loom_runtime_submit").submit(w, s);
  });
}

LoomResult loom_runtime_wait(LoomRuntime runtime) {
  return guard("loom_runtime_wait", LOOM_ERROR_DEVICE, [&] {
    RuntimeObject& r = resolve(runtime, "loom_runtime_wait: runtime");
    if (r.engine_owned_queue) {
      vk::VulkanRuntime& v = capi::vulkan_of(r, "loom_runtime_wait");
      if (!v.work_done(v.work_recorded()))
        throw ApiError(LOOM_ERROR_NOT_SUPPORTED,
                       "loom_runtime_wait: Loom's recorded work has not run in a frame the engine "
                       "completed, and with LOOM_QUEUE_ENGINE_OWNED Loom never waits for the "
                       "engine's queue (record it with loom_runtime_record, then wait for the "
                       "frame's fence)");
      return;
    }
    r.device->synchronize();
  });
}

}  // extern "C"
