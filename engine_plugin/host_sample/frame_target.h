// Where frames are drawn: an offscreen image copied to the host (PNG frames) or a window's
// swapchain. Both draw through the same render pass: a multisampled colour and depth
// attachment resolved into the target's image, so the renderer's pipelines fit either.
#pragma once

#include <vulkan/vulkan.h>

#include <vector>

#include "gpu_resources.h"

namespace host_sample {

class VulkanContext;

class FrameTarget {
 public:
  virtual ~FrameTarget();
  FrameTarget(const FrameTarget&) = delete;
  FrameTarget& operator=(const FrameTarget&) = delete;

  VkRenderPass render_pass() const { return render_pass_; }
  VkSampleCountFlagBits samples() const { return samples_; }
  VkExtent2D extent() const { return extent_; }

  // Frame slot `slot` begins (its fence was waited for): the framebuffer to draw into, or
  // false to skip the frame (a minimised window).
  virtual bool acquire(uint32_t slot, VkFramebuffer* framebuffer) = 0;
  // Records what follows the render pass into the frame's command buffer.
  virtual void record_after_render_pass(uint32_t slot, VkCommandBuffer commands) {}
  // Submits the frame's command buffer, signalling `fence` (and presents it).
  virtual void submit(uint32_t slot, VkCommandBuffer commands, VkFence fence) = 0;

 protected:
  // `final_layout`: the resolved image's layout after the render pass.
  FrameTarget(const VulkanContext& context, VkFormat format, VkImageLayout final_layout);
  // The multisampled attachments for `extent` (again after a resize).
  void create_attachments(VkExtent2D extent);
  // A framebuffer drawing into `target` (the resolved image's view); the caller destroys it.
  VkFramebuffer create_framebuffer(VkImageView target) const;

  const VulkanContext& context_;
  VkFormat format_;
  VkSampleCountFlagBits samples_ = VK_SAMPLE_COUNT_1_BIT;
  VkExtent2D extent_{};
  VkRenderPass render_pass_ = VK_NULL_HANDLE;
  Image color_;  // multisampled; absent with one sample (the target's image is drawn directly)
  Image depth_;
};

// The depth format every target uses.
constexpr VkFormat kDepthFormat = VK_FORMAT_D32_SFLOAT;

}  // namespace host_sample
