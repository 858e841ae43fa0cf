// Headless frames: drawn into an RGBA8 image and copied, in the frame's own command buffer,
// into a host-visible buffer per frame in flight, read once the frame's fence has signalled.
#pragma once

#include <cstdint>
#include <vector>

#include "frame_target.h"

namespace host_sample {

class OffscreenTarget : public FrameTarget {
 public:
  OffscreenTarget(const VulkanContext& context, VkExtent2D extent, uint32_t frames_in_flight);
  ~OffscreenTarget() override;

  bool acquire(uint32_t slot, VkFramebuffer* framebuffer) override;
  void record_after_render_pass(uint32_t slot, VkCommandBuffer commands) override;
  void submit(uint32_t slot, VkCommandBuffer commands, VkFence fence) override;

  // The pixels slot `slot` drew (its fence waited for): RGBA8, top row first.
  const uint8_t* pixels(uint32_t slot) const {
    return static_cast<const uint8_t*>(readback_[slot].mapped());
  }

 private:
  Image image_;
  VkFramebuffer framebuffer_ = VK_NULL_HANDLE;
  std::vector<Buffer> readback_;
};

}  // namespace host_sample
