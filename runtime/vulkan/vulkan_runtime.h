// The Vulkan device as a program sees it: device copies of the program's host storage
// (fields, ndarrays, textures, argpacks), kernels loaded from SPIR-V, and launches that take
// the same LaunchContext a CPU launch takes (parameter bytes, resource views whose data
// pointers name host storage, returns, error record).
//
// Coherence: each device copy knows whether the host copy or the device copy is newer. A
// launch uploads what the host changed, once; work stays on the device until the host asks
// for it (read_back). Argpacks live in uniform buffers: a dirty pack is uploaded once,
// inside the command stream, before the next launch that uses it; an unchanged one is bound
// with no copy. Launches are batched; the host waits only for what it reads.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/common/kernel_abi.h"
#include "runtime/common/spirv_kernel.h"
#include "runtime/vulkan/vulkan_device.h"

namespace loom::host {
class Argpack;
}

namespace loom::vk {

class CommandStream;
class DescriptorAllocator;
class MemoryAllocator;
class PipelineCache;
class VulkanKernel;

struct RuntimeOptions {
  DeviceOptions device;
  std::string pipeline_cache_dir;  // "" keeps the pipeline cache in memory only
  std::function<void(const std::string&)> warn;
  size_t batch = 256;              // commands per submission before the stream submits on its own
};

// Counters of one launch and of the runtime's life.
struct LaunchCounters {
  uint64_t argpack_uploads = 0;  // packs uploaded because they changed
  uint64_t argpack_bytes = 0;
  uint64_t argument_bytes = 0;   // the args block (push constants or a ring slot)
  uint64_t resource_bytes = 0;   // fields, ndarrays, textures uploaded because the host changed them
  uint64_t dispatches = 0;
};

struct RuntimeStats {
  LaunchCounters total;
  LaunchCounters last_launch;
  uint64_t launches = 0;
  uint64_t pipelines = 0;
  double pipeline_ms = 0;
  uint64_t submits = 0, waits = 0, barriers = 0;
  uint64_t bytes_downloaded = 0;
  uint64_t descriptor_sets = 0;  // written (not reused)
};

class VulkanRuntime {
 public:
  explicit VulkanRuntime(const RuntimeOptions& options);
  // On a device another part of the process made (a renderer, a host engine): shares its
  // queue, from the same thread.
  VulkanRuntime(std::shared_ptr<VulkanDevice> device, const RuntimeOptions& options);
  ~VulkanRuntime();
  VulkanRuntime(const VulkanRuntime&) = delete;
  VulkanRuntime& operator=(const VulkanRuntime&) = delete;

  VulkanDevice& device() { return *device_; }
  const std::shared_ptr<VulkanDevice>& shared_device() const { return device_; }
  const DeviceCaps& caps() const { return device_->caps(); }

  // Builds the kernel's pipelines (checking its requirements against the device).
  std::shared_ptr<VulkanKernel> load(const KernelABI& abi, const SpirvKernel& code);
  // Records the kernel's tasks. Kernels with return values or an error record (debug) wait
  // for completion and fill ctx.returns / throw the reported error like the CPU device.
  void launch(VulkanKernel& kernel, LaunchContext& ctx);

  // ---- device copies of host storage, keyed by the host data pointer
  // `caller_memory`: memory the caller owns and may change at any time; uploaded before
  // every launch that uses it and read back after every launch that writes it.
  void add_buffer(const std::string& name, uint8_t* host, size_t bytes, bool caller_memory = false);
  void add_texture(const std::string& name, uint8_t* host, TextureFormat format, int width, int height, int depth,
                   int ndim);
  void add_argpack(const std::string& name, host::Argpack& pack);
  void remove(const void* host);
  bool has(const void* host) const;
  // The host copy changed: upload before its next use.
  void host_wrote(const void* host);
  // Makes the host copy current (waits for the work that writes it).
  void read_back(const void* host);
  void read_back_all();

  void flush();        // submits recorded work, no wait
  void synchronize();  // waits for all recorded work
  // Throws loom::Error listing validation messages since the last check (validation on).
  void check_validation();

  const RuntimeStats& stats();

 private:
  struct DeviceResource;
  DeviceResource& resource(const void* host, const std::string& kernel, const char* what);
  void upload_if_needed(DeviceResource& r);
  void wait_for(uint64_t value);

  RuntimeOptions options_;
  void init();

  std::shared_ptr<VulkanDevice> device_;
  std::unique_ptr<MemoryAllocator> allocator_;
  std::unique_ptr<PipelineCache> pipeline_cache_;
  std::unique_ptr<DescriptorAllocator> sets_;
  std::unique_ptr<CommandStream> stream_;
  VkSampler samplers_[4] = {};
  std::unordered_map<const void*, std::unique_ptr<DeviceResource>> resources_;
  RuntimeStats stats_;
  uint64_t use_ = 0;  // launches recorded: descriptor-set recency
};

}  // namespace loom::vk
