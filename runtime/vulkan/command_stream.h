// Commands recorded in order into command buffers and submitted in batches. Each submission
// has a value (1, 2, ...); completion is tracked by one timeline semaphore signalled with it,
// or, on a device without timeline semaphores (an engine's Vulkan 1.1 device, or a 1.2 one
// created without the feature), by a fence per submission: a fence signals once its batch
// and everything submitted before it on the queue completed, so values still complete in
// order. Barriers come only from hazards: a command that reads
// or writes what an earlier command wrote, or writes what an earlier command read, since the
// last barrier. Transfers go through staging chunks recycled once their submission
// completes. The host waits only for the submission it needs, never for the whole device.
// A submission can also wait for and signal a host's semaphores (binary or timeline).
//
// Deferred (an engine that owns its queue): the stream never touches the queue. submit()
// closes the recording as a secondary command buffer, parked until the next command buffer
// of the engine's that Loom records into executes it (take_parked); a value completes when
// the engine's frame that executed it has (host_frames_completed). Nothing waits: wait() on
// a value not complete yet is an error, never a block.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "runtime/vulkan/gpu_buffer.h"
#include "runtime/vulkan/gpu_image.h"
#include "runtime/vulkan/hazard_set.h"

namespace loom::vk {

class VulkanDevice;

// A semaphore a submission waits for before `stages` run. `value`: the value to wait for on
// a timeline semaphore; 0 for a binary one (the only kind on a device without timelines).
struct SemaphoreWait {
  VkSemaphore semaphore = VK_NULL_HANDLE;
  uint64_t value = 0;
  VkPipelineStageFlags stages =
      VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
};
// A semaphore a submission signals when its work completes; `value` as above.
struct SemaphoreSignal {
  VkSemaphore semaphore = VK_NULL_HANDLE;
  uint64_t value = 0;
};

class CommandStream {
 public:
  CommandStream(VulkanDevice& device, MemoryAllocator& allocator, bool deferred = false);
  ~CommandStream();  // waits for its own submissions only
  CommandStream(const CommandStream&) = delete;
  CommandStream& operator=(const CommandStream&) = delete;

  // The command buffer being recorded (begun on first use).
  VkCommandBuffer recording();
  // Places a barrier before the next command when any (resource id, Access bits) conflicts
  // with what was recorded since the last barrier; then records these accesses.
  void hazard(const Accesses& accesses);
  // Accesses recorded elsewhere (a host's command buffer submitted before this stream's next
  // submission): a later command of this stream that conflicts with them gets a barrier.
  void external(const Accesses& accesses) { hazards_.add(accesses); }
  // Moves a new image to the GENERAL layout it keeps for life.
  void prepare_image(GpuImage& image);
  void count_dispatch() {
    ++stats_.dispatches;
    ++pending_;
  }

  // Transfers, in order with everything else.
  void upload(const GpuBuffer& dst, VkDeviceSize offset, const void* data, VkDeviceSize bytes) {
    upload(dst.handle(), dst.id(), offset, data, bytes);
  }
  // `id`: the resource id hazards are tracked by (a host's buffer has one from next_resource_id).
  void upload(VkBuffer dst, uint64_t id, VkDeviceSize offset, const void* data, VkDeviceSize bytes);
  void upload_image(GpuImage& dst, const void* data);
  // Small writes carried inside the command buffer (vkCmdUpdateBuffer, <= 65536 bytes).
  void update(const GpuBuffer& dst, VkDeviceSize offset, const void* data, VkDeviceSize bytes);
  void fill(const GpuBuffer& dst, uint32_t value);
  // Copies into `host` once the recording has completed (see finish()).
  void download(const GpuBuffer& src, VkDeviceSize offset, void* host, VkDeviceSize bytes) {
    download(src.handle(), src.id(), offset, host, bytes);
  }
  void download(VkBuffer src, uint64_t id, VkDeviceSize offset, void* host, VkDeviceSize bytes);
  void download_image(GpuImage& src, void* host);
  // Host-visible memory valid until the current recording completes (per-launch arguments).
  uint8_t* scratch(VkDeviceSize bytes, VkDeviceSize alignment, VkBuffer* buffer,
                   VkDeviceSize* offset);

  size_t pending() const { return pending_; }  // commands since the last submit
  bool deferred() const { return deferred_; }
  // The value that marks completion of everything recorded so far (the current recording's
  // once it is submitted; 0 when nothing was ever recorded).
  uint64_t recorded_value() const { return current_ >= 0 ? last_submitted_ + 1 : last_submitted_; }
  // Deferred: closes the recording, and hands the secondary command buffers parked so far to
  // a host command buffer of frame `frame`, in order; they complete with that frame.
  std::vector<VkCommandBuffer> take_parked(uint64_t frame);
  // Deferred: the host's frames up to `frame` have completed on the GPU.
  void host_frames_completed(uint64_t frame);
  // The timeline value the current recording will signal when submitted.
  uint64_t recording_value() const { return last_submitted_ + 1; }
  uint64_t submit() {
    return submit({}, {});
  }  // the timeline value that marks completion (0: none yet)
  // Submits what was recorded (possibly nothing) after `waits`, signalling `signals` as well
  // as the stream's own timeline. No host wait.
  uint64_t submit(const std::vector<SemaphoreWait>& waits,
                  const std::vector<SemaphoreSignal>& signals);
  void wait(uint64_t value);  // blocks until `value` completed; lands downloads
  // wait() for at most `timeout_ns`: false (and nothing landed) when `value` is not done then.
  bool wait_within(uint64_t value, uint64_t timeout_ns);
  void finish();  // submit, then wait for everything this stream recorded
  uint64_t completed();

  struct Stats {
    uint64_t submits = 0, waits = 0, barriers = 0, dispatches = 0;
    uint64_t parked = 0;  // deferred: recordings handed to the host's command buffers
    uint64_t bytes_uploaded = 0, bytes_updated = 0, bytes_downloaded = 0;
  };
  const Stats& stats() const { return stats_; }

 private:
  struct Chunk {
    GpuBuffer buffer;
    VkDeviceSize used = 0;
    uint64_t busy_until = 0;  // kRecording while the current recording uses it
    bool readback = false;
  };
  struct Pending {
    uint8_t* staging;
    void* host;
    VkDeviceSize bytes;
    uint64_t value;  // kRecording until submitted
  };
  struct Cmd {
    VkCommandBuffer cb = VK_NULL_HANDLE;
    uint64_t busy_until = 0;
  };
  static constexpr uint64_t kRecording = UINT64_MAX;

  Chunk& staging(VkDeviceSize bytes, VkDeviceSize alignment, bool readback, VkDeviceSize* offset);
  void land_downloads(uint64_t completed);
  // Deferred submit(): closes the recording and parks it for the host.
  uint64_t park(const std::vector<SemaphoreWait>& waits,
                const std::vector<SemaphoreSignal>& signals);
  // The current recording now belongs to submission `value`.
  void mark_submitted(uint64_t value);
  VkFence fence_for_submission();
  // Waits for `value` for at most `timeout_ns`; false on a timeout.
  bool wait_for_value(uint64_t value, uint64_t timeout_ns);

  VulkanDevice& device_;
  MemoryAllocator& allocator_;
  const bool deferred_;
  struct Parked {
    uint64_t value;
    VkCommandBuffer cb;
  };
  std::vector<Parked> parked_;  // deferred: closed, not yet executed by the host
  struct Executed {
    uint64_t value, frame;
  };
  std::deque<Executed> executed_;  // deferred: in a host frame not known complete
  uint64_t frames_completed_ = 0, deferred_completed_ = 0;
  VkCommandPool pool_ = VK_NULL_HANDLE;
  VkSemaphore timeline_ = VK_NULL_HANDLE;  // null on a device without timeline semaphores
  struct Fenced {
    uint64_t value;
    VkFence fence;
  };
  std::deque<Fenced> fenced_;          // without timelines: submissions not known complete
  std::vector<VkFence> spare_fences_;  // reset, ready for a submission
  uint64_t fence_completed_ = 0;       // the last value whose fence was seen signalled
  uint64_t last_submitted_ = 0;
  std::vector<Cmd> cmds_;
  int current_ = -1;  // index into cmds_ while recording
  std::vector<std::unique_ptr<Chunk>> chunks_;
  std::vector<Pending> downloads_;
  HazardSet hazards_;
  size_t pending_ = 0;
  Stats stats_;
};

}  // namespace loom::vk
