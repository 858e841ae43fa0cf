// Loom launches recorded into command buffers a host engine owns: the host begins, ends and
// submits them; Loom records barriers, argument writes and dispatches only.
//
// Frames. The host keeps `frames_in_flight` frames on the GPU at once and calls begin_frame()
// at the start of every frame, after waiting for the fence (or timeline value) of the frame
// begun `frames_in_flight` calls earlier. That wait is the only completion Loom relies on:
// what a launch leaves in a host command buffer (args ring slots for arguments beyond push
// constants, descriptor sets) is reused only once its frame is that old. A command buffer
// Loom records into is submitted in the frame it was recorded in. Launches that need a
// host wait (return values, debug error records, caller memory they write) are refused.
//
// Barriers. The first launch into a command buffer in a frame records one barrier after
// everything earlier on its queue (all stages, all memory writes: the host's draws and
// copies, Loom's stream, earlier frames) and before Loom's compute and transfer work; later
// launches in it add barriers only on hazards. Work on other queues is ordered by the host
// with semaphores. Loom's writes reach the host's draws after barrier_for_graphics(cb).
// Loom's own stream: launch_into submits what it had recorded (uploads of host copies
// included), so it runs first when the host submits to the same queue; stream work recorded
// afterwards that reads what the host's command buffer writes must be submitted after it.
//
// Engine-owned queue (RuntimeOptions::engine_owned_queue): Loom's stream is never submitted.
// What it recorded (uploads, image layouts, launches on the stream, a reload's copies) is
// executed as secondary command buffers inside the next host command buffer Loom records
// into (launch_into, record_pending, read_into), right after the entry barrier, and
// completes with that frame. Reads are recorded too (read_into): the data lands in
// host-visible memory the host reads once the frame has completed.
//
// Ownership. Nothing Loom recorded into a host command buffer may be destroyed (kernels,
// resources, this object, the runtime) before the GPU finished it. One HostFrames per runtime;
// destroy it before the runtime.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <map>
#include <memory>
#include <unordered_map>
#include <vector>

#include "runtime/common/kernel_abi.h"
#include "runtime/vulkan/gpu_buffer.h"

namespace loom::vk {

class HostCommandBuffer;
class VulkanKernel;
class VulkanRuntime;

class HostFrames {
 public:
  HostFrames(VulkanRuntime& runtime, uint32_t frames_in_flight);
  ~HostFrames();
  HostFrames(const HostFrames&) = delete;
  HostFrames& operator=(const HostFrames&) = delete;

  // A frame begins; the frame begun frames_in_flight calls ago has completed on the GPU.
  void begin_frame();
  // A frame begins, numbered by the engine (`frame`, greater than the last), and the engine's
  // frames up to `completed` (below `frame`) have completed on the GPU: engines that track
  // completion themselves (Unity's safe frame number, Unreal's fences) say so directly.
  void begin_frame(uint64_t frame, uint64_t completed);
  uint64_t frame() const { return frame_; }  // the frame being recorded
  uint64_t completed() const;                // the last frame known complete

  // Records `kernel` into `cb`, a primary command buffer the host has begun, outside a render
  // pass, of a queue family that computes. Bindings resolve as in VulkanRuntime::launch.
  void launch_into(VkCommandBuffer cb, VulkanKernel& kernel, LaunchContext& ctx);
  // Makes Loom's writes recorded so far visible to vertex input (vertex, index, indirect
  // buffers), vertex and fragment shaders and transfers; `cb` must belong to a family that draws.
  void barrier_for_graphics(VkCommandBuffer cb);
  // Makes Loom's writes recorded so far visible to `dst_stages` with `dst_access` (an engine's
  // compute pass, ray tracing, a copy): barrier_for_graphics with the destination given.
  void barrier_for(VkCommandBuffer cb, VkPipelineStageFlags dst_stages, VkAccessFlags dst_access);
  // Records what Loom's stream has pending into `cb` (engine-owned queue), or submits it to the
  // queue first (otherwise), as launch_into does before its dispatches.
  void record_pending(VkCommandBuffer cb);
  // Part of launch_into and record_pending: the stream's pending work, before what Loom
  // records into `host` next.
  void run_stream_in(HostCommandBuffer& host);

  // A copy of the device buffer or image `key` (a VulkanRuntime resource key), recorded into
  // `cb` after the work recorded before it; its bytes are readable once this frame has
  // completed (readback_ready). Returns the readback's id.
  uint64_t read_into(VkCommandBuffer cb, const void* key);
  bool readback_ready(uint64_t id) const;
  size_t readback_bytes(uint64_t id) const;
  // The bytes, once ready.
  const uint8_t* readback_data(uint64_t id) const;
  // Frees the readback now if it landed, else once its frame completes.
  void release_readback(uint64_t id);

  struct Stats {
    uint64_t launches = 0, barriers = 0, args_bytes = 0;
    uint64_t stream_executions = 0;  // engine-owned queue: stream recordings run in host buffers
    uint64_t readbacks = 0;
    size_t ring_chunks = 0;  // host-visible chunks holding args blocks
  };
  const Stats& stats() const { return stats_; }

 private:
  friend class HostCommandBuffer;
  struct Chunk {
    GpuBuffer buffer;
    VkDeviceSize used = 0;
    uint64_t frame = 0;  // the last frame that used it
  };
  HostCommandBuffer& command_buffer(VkCommandBuffer cb);
  uint8_t* args_slot(VkDeviceSize bytes, VkDeviceSize alignment, VkBuffer* buffer,
                     VkDeviceSize* offset);

  VulkanRuntime& runtime_;
  uint32_t in_flight_;
  uint64_t frame_ = 0;
  std::unordered_map<VkCommandBuffer, std::unique_ptr<HostCommandBuffer>>
      recording_;  // this frame's
  std::vector<std::unique_ptr<Chunk>> chunks_;
  struct Readback {
    GpuBuffer staging;
    uint64_t frame = 0;  // recorded in
    size_t bytes = 0;
    bool released = false;
  };
  const Readback& readback(uint64_t id) const;
  std::map<uint64_t, Readback> readbacks_;
  uint64_t next_readback_ = 1;
  Stats stats_;
};

}  // namespace loom::vk
