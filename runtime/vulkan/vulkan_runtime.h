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
//
// Device-only resources (for a host engine): buffers and images with no host copy, Loom's
// (add_device_*) or the host's (import_*), keyed by an opaque token the caller chooses and
// puts in ResourceView::data. They are never uploaded or read back on their own: the host
// reads and writes them with read_buffer / write_buffer, or draws from them (export_*).
// Launches into a host's command buffers: HostFrames (host_frames.h).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/common/kernel_abi.h"
#include "runtime/common/spirv_kernel.h"
#include "runtime/vulkan/memory_allocator.h"
#include "runtime/vulkan/vulkan_device.h"

namespace loom::host {
class Argpack;
}

namespace loom::vk {

class CommandStream;
class DescriptorAllocator;
class HostCommandBuffer;
class HostFrames;
class PipelineCache;
class VulkanKernel;
struct SemaphoreSignal;
struct SemaphoreWait;

struct RuntimeOptions {
  DeviceOptions device;
  std::string pipeline_cache_dir;            // "" keeps the pipeline cache in memory only
  std::vector<uint8_t> pipeline_cache_data;  // an earlier cache's data to start from
  std::function<void(const std::string&)> warn;
  size_t batch = 256;  // commands per submission before the stream submits on its own
  // The engine owns the queue (an imported device, LOOM_QUEUE_ENGINE_OWNED): the runtime never
  // submits to it or waits on it. What the stream records (uploads, layout changes, launches,
  // a reload's copies) runs in the next command buffer of the host's that Loom records into
  // (HostFrames), completes with that host frame, and nothing waits: reads that would wait
  // are errors; HostFrames::read_into records them instead.
  bool engine_owned_queue = false;
};

// Counters of one launch and of the runtime's life.
struct LaunchCounters {
  uint64_t argpack_uploads = 0;  // packs uploaded because they changed
  uint64_t argpack_bytes = 0;
  uint64_t argument_bytes = 0;  // the args block (push constants or a ring slot)
  uint64_t resource_bytes = 0;  // fields, ndarrays, textures uploaded because the host changed them
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

// A device buffer as the host sees it: bind `buffer` at `offset`, `size` bytes.
struct BufferExport {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceSize offset = 0, size = 0;
};
// A device image as the host sees it, in the layout it stays in.
struct ImageExport {
  VkImage image = VK_NULL_HANDLE;
  VkImageView view = VK_NULL_HANDLE;
  VkFormat format = VK_FORMAT_UNDEFINED;
  VkExtent3D extent{};
  VkImageLayout layout = VK_IMAGE_LAYOUT_GENERAL;
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
  void add_texture(const std::string& name, uint8_t* host, TextureFormat format, int width,
                   int height, int depth, int ndim);
  void add_argpack(const std::string& name, host::Argpack& pack);
  void remove(const void* host);
  bool has(const void* host) const;
  // The host copy changed: upload before its next use.
  void host_wrote(const void* host);
  // Makes the device copy current: records the upload of what the host changed and
  // submits it (no wait), so the host engine can draw from the exported buffer or image.
  void upload(const void* host);
  // Makes the host copy current (waits for the work that writes it).
  void read_back(const void* host);
  void read_back_all();

  // ---- device-only resources, keyed by an opaque non-null token (see the top of the file).
  // `name` appears in errors. Loom's buffers can also be bound as vertex, index and indirect
  // buffers; its images are kept in VK_IMAGE_LAYOUT_GENERAL (`ndim` 2 or 3).
  void add_device_buffer(const void* key, size_t bytes, const std::string& name = {});
  void add_device_image(const void* key, TextureFormat format, int width, int height, int depth,
                        int ndim, const std::string& name = {});
  // The host's memory, never destroyed by Loom: a buffer made with STORAGE_BUFFER usage (and
  // TRANSFER_SRC/DST for read_buffer/write_buffer), `offset` a multiple of the device's
  // minStorageBufferOffsetAlignment; an image of format R32_SFLOAT, R32G32_SFLOAT,
  // R32G32B32A32_SFLOAT or R8G8B8A8_UNORM, made with STORAGE (and SAMPLED) usage, kept by the
  // host in `layout` whenever Loom's work runs: GENERAL, or SHADER_READ_ONLY_OPTIMAL for
  // images kernels only sample.
  void import_buffer(const void* key, VkBuffer buffer, VkDeviceSize offset, VkDeviceSize bytes,
                     const std::string& name = {});
  void import_image(const void* key, VkImage image, VkImageView view, VkFormat format,
                    VkExtent3D extent, VkImageLayout layout, const std::string& name = {});
  // An imported buffer moves to another of the host's buffers (at least as long): launches
  // recorded from now on bind `buffer` at `offset`; what was recorded before keeps the old one.
  void rebind_buffer(const void* key, VkBuffer buffer, VkDeviceSize offset);
  // The handles of any device buffer or image (Loom's, a host copy's or imported).
  BufferExport export_buffer(const void* key) const;
  ImageExport export_image(const void* key);
  // Staged copies on the command stream, in order with launches: a write is recorded (no
  // wait), a read waits for the work before it and the copy.
  void write_buffer(const void* key, size_t offset, const void* src, size_t bytes);
  void read_buffer(const void* key, size_t offset, size_t bytes, void* dst);

  // Records a copy of one device copy's contents into another of the same size and kind (a
  // reload carrying state over), in order with launches; the destination's host copy is
  // then older than its device copy. No wait.
  void copy_device(const void* from, const void* to);
  bool engine_owned_queue() const { return options_.engine_owned_queue; }
  // Engine-owned queue: whether reading `key` now (read_back, read_buffer) would wait for the
  // engine's queue: a device-only resource, or a host copy older than the device's.
  bool read_would_wait(const void* key) const;
  // The stream value marking everything recorded so far, and whether a value completed
  // (deferred: in a host frame known complete).
  uint64_t work_recorded() const;
  bool work_done(uint64_t value);

  void flush();  // submits recorded work, no wait
  // Submits the work recorded so far (possibly none) after `wait`, signalling `signal` (the
  // host's binary or timeline semaphores) when it completes; no host wait. Everything the
  // work wrote is visible to commands that wait for a signalled semaphore.
  void submit(const std::vector<SemaphoreWait>& wait, const std::vector<SemaphoreSignal>& signal);
  // synchronize() for at most `timeout_ns`: false when the device is still busy then (a
  // kernel that runs on and on; the caller may wait again or give the runtime up).
  bool synchronize_within(uint64_t timeout_ns);
  void synchronize();  // waits for all recorded work
  // Throws loom::Error listing validation messages since the last check (validation on).
  void check_validation();

  const RuntimeStats& stats();
  // Device memory this runtime holds, per memory type: blocks reserved and bytes in use
  // (resources, staging, argument slots).
  std::vector<MemoryAllocator::TypeUsage> memory_usage() const;
  // The pipeline cache's data, to give a later runtime as RuntimeOptions::pipeline_cache_data.
  std::vector<uint8_t> pipeline_cache_data() const;

 private:
  friend class HostFrames;
  struct DeviceResource;
  DeviceResource& resource(const void* host, const std::string& kernel, const char* what);
  DeviceResource& keyed(const void* key, const char* what) const;
  void check_new_key(const void* key, const std::string& name) const;
  DeviceResource& add(const void* key, std::unique_ptr<DeviceResource> r);
  void upload_if_needed(DeviceResource& r);
  // A launch recorded on the command stream, or into a host's command buffer (`host`), in
  // its steps below.
  void record(VulkanKernel& kernel, LaunchContext& ctx, HostCommandBuffer* host);
  struct LaunchBindings;  // what each of a launch's bindings resolved to
  struct GroupCount {     // workgroups of one dispatch
    uint32_t x = 1, y = 1, z = 1;
    bool rows_end_to_end = false;  // a direct n-d task's rows laid end to end along x
  };
  void bind(VulkanKernel& kernel, const LaunchContext& ctx, HostCommandBuffer* host, size_t b,
            LaunchBindings& launch);
  void bind_argpack(VulkanKernel& kernel, const LaunchContext& ctx, HostCommandBuffer* host,
                    size_t b, LaunchBindings& launch);
  void bind_buffer(VulkanKernel& kernel, const LaunchContext& ctx, HostCommandBuffer* host,
                   size_t b, LaunchBindings& launch);
  void bind_image(VulkanKernel& kernel, const LaunchContext& ctx, size_t b, LaunchBindings& launch);
  void check_linear_filtering(const VulkanKernel& kernel, const LaunchBindings& launch) const;
  VkDescriptorSet descriptor_set_for(VulkanKernel& kernel, const LaunchBindings& launch,
                                     HostCommandBuffer* host);
  std::optional<GroupCount> dispatch_groups(const VulkanKernel& kernel, const SpirvTask& task,
                                            const LaunchContext& ctx) const;
  GroupCount direct_groups(const SpirvTask& task, int64_t inner, int64_t outer,
                           const std::string& kernel) const;
  void record_dispatches(VulkanKernel& kernel, const LaunchContext& ctx, HostCommandBuffer* host,
                         const LaunchBindings& launch, VkDescriptorSet set);
  bool mark_device_writes(const LaunchBindings& launch);
  void count_launch(const LaunchCounters& launch);

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
  // Host frames (HostFrames): the frame being recorded and the last one known complete.
  uint64_t frame_ = 0, frame_completed_ = 0;
  HostFrames* frames_ = nullptr;
  // Engine-owned queue: removed resources, kept until the stream value that may use them and
  // the host frame they were removed in have completed (nothing waits for them).
  struct Retired {
    std::unique_ptr<DeviceResource> resource;
    uint64_t value = 0, frame = 0;
  };
  std::vector<Retired> retired_;
  void host_frame_begun();  // HostFrames::begin_frame: frees what completed
  // HostFrames::read_into: the bytes of resource `key` (checking a copy can read it), and
  // the copy of them into `dst` recorded in `host` after the stream's pending work.
  size_t readable_bytes(const void* key) const;
  void record_read(HostCommandBuffer& host, const void* key, VkBuffer dst);
  // Throws when the engine owns the queue: `what` would need Loom to wait for it.
  void refuse_wait(const std::string& what) const;
};

}  // namespace loom::vk
