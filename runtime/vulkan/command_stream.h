// Commands recorded in order into command buffers and submitted in batches, completion
// tracked by one timeline semaphore. Barriers come only from hazards: a command that reads
// or writes what an earlier command wrote, or writes what an earlier command read, since the
// last barrier. Transfers go through staging chunks recycled once their submission
// completes. The host waits only for the submission it needs, never for the whole device.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <memory>
#include <unordered_set>
#include <utility>
#include <vector>

#include "runtime/vulkan/gpu_buffer.h"
#include "runtime/vulkan/gpu_image.h"

namespace loom::vk {

class VulkanDevice;

enum Access : uint8_t { kRead = 1, kWrite = 2 };

class CommandStream {
 public:
  CommandStream(VulkanDevice& device, MemoryAllocator& allocator);
  ~CommandStream();  // waits for its own submissions only
  CommandStream(const CommandStream&) = delete;
  CommandStream& operator=(const CommandStream&) = delete;

  // The command buffer being recorded (begun on first use).
  VkCommandBuffer recording();
  // Places a barrier before the next command when any (resource id, Access bits) conflicts
  // with what was recorded since the last barrier; then records these accesses.
  void hazard(const std::vector<std::pair<uint64_t, uint8_t>>& accesses);
  // Moves a new image to the GENERAL layout it keeps for life.
  void prepare_image(GpuImage& image);
  void count_dispatch() { ++stats_.dispatches; ++pending_; }

  // Transfers, in order with everything else.
  void upload(const GpuBuffer& dst, VkDeviceSize offset, const void* data, VkDeviceSize bytes);
  void upload_image(GpuImage& dst, const void* data);
  // Small writes carried inside the command buffer (vkCmdUpdateBuffer, <= 65536 bytes).
  void update(const GpuBuffer& dst, VkDeviceSize offset, const void* data, VkDeviceSize bytes);
  void fill(const GpuBuffer& dst, uint32_t value);
  // Copies into `host` once the recording has completed (see finish()).
  void download(const GpuBuffer& src, VkDeviceSize offset, void* host, VkDeviceSize bytes);
  void download_image(GpuImage& src, void* host);
  // Host-visible memory valid until the current recording completes (per-launch arguments).
  uint8_t* scratch(VkDeviceSize bytes, VkDeviceSize alignment, VkBuffer* buffer, VkDeviceSize* offset);

  size_t pending() const { return pending_; }  // commands since the last submit
  // The timeline value the current recording will signal when submitted.
  uint64_t recording_value() const { return last_submitted_ + 1; }
  uint64_t submit();            // returns the timeline value that marks completion (0: nothing to do)
  void wait(uint64_t value);    // blocks until `value` completed; lands downloads
  void finish();                // submit, then wait for everything this stream recorded
  uint64_t completed();

  struct Stats {
    uint64_t submits = 0, waits = 0, barriers = 0, dispatches = 0;
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

  VulkanDevice& device_;
  MemoryAllocator& allocator_;
  VkCommandPool pool_ = VK_NULL_HANDLE;
  VkSemaphore timeline_ = VK_NULL_HANDLE;
  uint64_t last_submitted_ = 0;
  std::vector<Cmd> cmds_;
  int current_ = -1;  // index into cmds_ while recording
  std::vector<std::unique_ptr<Chunk>> chunks_;
  std::vector<Pending> downloads_;
  std::unordered_set<uint64_t> written_, read_;
  size_t pending_ = 0;
  Stats stats_;
};

}  // namespace loom::vk
