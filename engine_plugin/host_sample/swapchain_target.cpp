#include "swapchain_target.h"

#include <algorithm>
#include <stdexcept>

#include "vulkan_context.h"

namespace host_sample {

VkSurfaceFormatKHR SwapchainTarget::choose_format(const VulkanContext& context) {
  uint32_t n = 0;
  vkGetPhysicalDeviceSurfaceFormatsKHR(context.physical_device(), context.surface(), &n, nullptr);
  std::vector<VkSurfaceFormatKHR> formats(n);
  vkGetPhysicalDeviceSurfaceFormatsKHR(context.physical_device(), context.surface(), &n,
                                       formats.data());
  // UNORM like the offscreen frames: the shaders write display values (gamma applied).
  for (const auto& f : formats)
    if ((f.format == VK_FORMAT_B8G8R8A8_UNORM || f.format == VK_FORMAT_R8G8B8A8_UNORM) &&
        f.colorSpace == VK_COLOR_SPACE_SRGB_NONLINEAR_KHR)
      return f;
  if (formats.empty()) throw std::runtime_error("the window's surface has no formats");
  return formats[0];
}

SwapchainTarget::SwapchainTarget(const VulkanContext& context,
                                 std::function<VkExtent2D()> framebuffer_size,
                                 uint32_t frames_in_flight)
    : FrameTarget(context, choose_format(context).format, VK_IMAGE_LAYOUT_PRESENT_SRC_KHR),
      framebuffer_size_(std::move(framebuffer_size)),
      color_space_(choose_format(context).colorSpace) {
  VkSemaphoreCreateInfo info{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
  image_available_.resize(frames_in_flight);
  for (VkSemaphore& s : image_available_)
    check_vk(vkCreateSemaphore(context.device(), &info, nullptr, &s), "vkCreateSemaphore");
  create_swapchain();
}

SwapchainTarget::~SwapchainTarget() {
  vkDeviceWaitIdle(context_.device());  // presentation has no fence to wait for
  destroy_swapchain();
  if (swapchain_) vkDestroySwapchainKHR(context_.device(), swapchain_, nullptr);
  for (VkSemaphore s : image_available_) vkDestroySemaphore(context_.device(), s, nullptr);
}

void SwapchainTarget::destroy_swapchain() {
  VkDevice device = context_.device();
  for (VkFramebuffer f : framebuffers_) vkDestroyFramebuffer(device, f, nullptr);
  for (VkImageView v : views_) vkDestroyImageView(device, v, nullptr);
  for (VkSemaphore s : render_finished_) vkDestroySemaphore(device, s, nullptr);
  framebuffers_.clear();
  views_.clear();
  render_finished_.clear();
}

void SwapchainTarget::create_swapchain() {
  VkDevice device = context_.device();
  VkSurfaceCapabilitiesKHR caps;
  check_vk(vkGetPhysicalDeviceSurfaceCapabilitiesKHR(context_.physical_device(), context_.surface(),
                                                     &caps),
           "vkGetPhysicalDeviceSurfaceCapabilitiesKHR");
  VkExtent2D extent = caps.currentExtent;
  if (extent.width == UINT32_MAX) {
    extent = framebuffer_size_();
    extent.width = std::clamp(extent.width, caps.minImageExtent.width, caps.maxImageExtent.width);
    extent.height =
        std::clamp(extent.height, caps.minImageExtent.height, caps.maxImageExtent.height);
  }
  if (extent.width == 0 || extent.height == 0) return;  // minimised: try again next frame

  uint32_t images = caps.minImageCount + 1;
  if (caps.maxImageCount) images = std::min(images, caps.maxImageCount);
  VkSwapchainCreateInfoKHR info{VK_STRUCTURE_TYPE_SWAPCHAIN_CREATE_INFO_KHR};
  info.surface = context_.surface();
  info.minImageCount = images;
  info.imageFormat = format_;
  info.imageColorSpace = color_space_;
  info.imageExtent = extent;
  info.imageArrayLayers = 1;
  info.imageUsage = VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT;
  info.imageSharingMode = VK_SHARING_MODE_EXCLUSIVE;
  info.preTransform = caps.currentTransform;
  info.compositeAlpha = VK_COMPOSITE_ALPHA_OPAQUE_BIT_KHR;
  info.presentMode = VK_PRESENT_MODE_FIFO_KHR;
  info.clipped = VK_TRUE;
  info.oldSwapchain = swapchain_;
  VkSwapchainKHR created = VK_NULL_HANDLE;
  check_vk(vkCreateSwapchainKHR(device, &info, nullptr, &created), "vkCreateSwapchainKHR");
  if (swapchain_) vkDestroySwapchainKHR(device, swapchain_, nullptr);
  swapchain_ = created;

  create_attachments(extent);
  uint32_t n = 0;
  vkGetSwapchainImagesKHR(device, swapchain_, &n, nullptr);
  std::vector<VkImage> swapchain_images(n);
  vkGetSwapchainImagesKHR(device, swapchain_, &n, swapchain_images.data());
  VkSemaphoreCreateInfo semaphore{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
  for (VkImage image : swapchain_images) {
    views_.push_back(create_image_view(device, image, format_));
    framebuffers_.push_back(create_framebuffer(views_.back()));
    render_finished_.emplace_back();
    check_vk(vkCreateSemaphore(device, &semaphore, nullptr, &render_finished_.back()),
             "vkCreateSemaphore");
  }
  out_of_date_ = false;
}

bool SwapchainTarget::acquire(uint32_t slot, VkFramebuffer* framebuffer) {
  if (out_of_date_ || framebuffers_.empty()) {
    VkExtent2D size = framebuffer_size_();
    if (size.width == 0 || size.height == 0) return false;
    vkDeviceWaitIdle(context_.device());  // a resize: the old images may still be presented
    destroy_swapchain();
    create_swapchain();
    if (framebuffers_.empty()) return false;
  }
  VkResult r = vkAcquireNextImageKHR(context_.device(), swapchain_, UINT64_MAX,
                                     image_available_[slot], VK_NULL_HANDLE, &image_index_);
  if (r == VK_ERROR_OUT_OF_DATE_KHR) {
    out_of_date_ = true;
    return false;
  }
  if (r != VK_SUBOPTIMAL_KHR) check_vk(r, "vkAcquireNextImageKHR");
  *framebuffer = framebuffers_[image_index_];
  return true;
}

void SwapchainTarget::submit(uint32_t slot, VkCommandBuffer commands, VkFence fence) {
  VkPipelineStageFlags wait_stage = VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT;
  VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  submit.waitSemaphoreCount = 1;
  submit.pWaitSemaphores = &image_available_[slot];
  submit.pWaitDstStageMask = &wait_stage;
  submit.commandBufferCount = 1;
  submit.pCommandBuffers = &commands;
  submit.signalSemaphoreCount = 1;
  submit.pSignalSemaphores = &render_finished_[image_index_];
  check_vk(vkQueueSubmit(context_.queue(), 1, &submit, fence), "vkQueueSubmit");

  VkPresentInfoKHR present{VK_STRUCTURE_TYPE_PRESENT_INFO_KHR};
  present.waitSemaphoreCount = 1;
  present.pWaitSemaphores = &render_finished_[image_index_];
  present.swapchainCount = 1;
  present.pSwapchains = &swapchain_;
  present.pImageIndices = &image_index_;
  VkResult r = vkQueuePresentKHR(context_.queue(), &present);
  if (r == VK_ERROR_OUT_OF_DATE_KHR || r == VK_SUBOPTIMAL_KHR) {
    out_of_date_ = true;
    return;
  }
  check_vk(r, "vkQueuePresentKHR");
}

}  // namespace host_sample
