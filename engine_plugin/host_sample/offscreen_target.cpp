#include "offscreen_target.h"

#include "vulkan_context.h"

namespace host_sample {

namespace {
constexpr VkFormat kFormat = VK_FORMAT_R8G8B8A8_UNORM;
}

OffscreenTarget::OffscreenTarget(const VulkanContext& context, VkExtent2D extent,
                                 uint32_t frames_in_flight)
    : FrameTarget(context, kFormat, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL) {
  create_attachments(extent);
  image_ = Image(context, kFormat, extent, VK_SAMPLE_COUNT_1_BIT,
                 VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT,
                 VK_IMAGE_ASPECT_COLOR_BIT);
  framebuffer_ = create_framebuffer(image_.view());
  for (uint32_t i = 0; i < frames_in_flight; ++i)
    readback_.emplace_back(context, VkDeviceSize{extent.width} * extent.height * 4,
                           VK_BUFFER_USAGE_TRANSFER_DST_BIT, true);
}

OffscreenTarget::~OffscreenTarget() {
  vkDestroyFramebuffer(context_.device(), framebuffer_, nullptr);
}

bool OffscreenTarget::acquire(uint32_t, VkFramebuffer* framebuffer) {
  *framebuffer = framebuffer_;
  return true;
}

void OffscreenTarget::record_after_render_pass(uint32_t slot, VkCommandBuffer commands) {
  VkBufferImageCopy copy{};
  copy.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
  copy.imageExtent = {extent_.width, extent_.height, 1};
  vkCmdCopyImageToBuffer(commands, image_.handle(), VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                         readback_[slot].handle(), 1, &copy);
  VkBufferMemoryBarrier to_host{VK_STRUCTURE_TYPE_BUFFER_MEMORY_BARRIER};
  to_host.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
  to_host.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
  to_host.srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
  to_host.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
  to_host.buffer = readback_[slot].handle();
  to_host.size = VK_WHOLE_SIZE;
  vkCmdPipelineBarrier(commands, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 0,
                       nullptr, 1, &to_host, 0, nullptr);
}

void OffscreenTarget::submit(uint32_t, VkCommandBuffer commands, VkFence fence) {
  VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  submit.commandBufferCount = 1;
  submit.pCommandBuffers = &commands;
  check_vk(vkQueueSubmit(context_.queue(), 1, &submit, fence), "vkQueueSubmit");
}

}  // namespace host_sample
