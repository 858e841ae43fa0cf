// Windowed frames: a swapchain on the context's surface (FIFO), rebuilt when the window's
// size changes or the swapchain is out of date; a minimised window skips frames.
#pragma once

#include <functional>
#include <vector>

#include "frame_target.h"

namespace host_sample {

class SwapchainTarget : public FrameTarget {
 public:
  // `framebuffer_size`: the window's size in pixels now (0 x 0 while minimised).
  SwapchainTarget(const VulkanContext& context, std::function<VkExtent2D()> framebuffer_size,
                  uint32_t frames_in_flight);
  ~SwapchainTarget() override;

  bool acquire(uint32_t slot, VkFramebuffer* framebuffer) override;
  void submit(uint32_t slot, VkCommandBuffer commands, VkFence fence) override;

 private:
  static VkSurfaceFormatKHR choose_format(const VulkanContext& context);
  void create_swapchain();
  void destroy_swapchain();

  std::function<VkExtent2D()> framebuffer_size_;
  VkSwapchainKHR swapchain_ = VK_NULL_HANDLE;
  VkColorSpaceKHR color_space_;
  std::vector<VkImageView> views_;
  std::vector<VkFramebuffer> framebuffers_;
  std::vector<VkSemaphore> image_available_;  // per frame in flight
  std::vector<VkSemaphore> render_finished_;  // per swapchain image
  uint32_t image_index_ = 0;
  bool out_of_date_ = false;
};

}  // namespace host_sample
