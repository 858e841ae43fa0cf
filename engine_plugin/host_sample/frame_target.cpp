#include "frame_target.h"

#include "vulkan_context.h"

namespace host_sample {

FrameTarget::FrameTarget(const VulkanContext& context, VkFormat format, VkImageLayout final_layout)
    : context_(context), format_(format) {
  const VkPhysicalDeviceLimits& limits = context.properties().limits;
  if (limits.framebufferColorSampleCounts & limits.framebufferDepthSampleCounts &
      VK_SAMPLE_COUNT_4_BIT)
    samples_ = VK_SAMPLE_COUNT_4_BIT;
  bool resolve = samples_ != VK_SAMPLE_COUNT_1_BIT;

  VkAttachmentDescription attachments[3]{};
  // 0: colour (multisampled, or the target itself), 1: depth, 2: the resolved target.
  attachments[0].format = format;
  attachments[0].samples = samples_;
  attachments[0].loadOp = VK_ATTACHMENT_LOAD_OP_CLEAR;
  attachments[0].storeOp =
      resolve ? VK_ATTACHMENT_STORE_OP_DONT_CARE : VK_ATTACHMENT_STORE_OP_STORE;
  attachments[0].stencilLoadOp = VK_ATTACHMENT_LOAD_OP_DONT_CARE;
  attachments[0].stencilStoreOp = VK_ATTACHMENT_STORE_OP_DONT_CARE;
  attachments[0].initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;
  attachments[0].finalLayout = resolve ? VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL : final_layout;
  attachments[1] = attachments[0];
  attachments[1].format = kDepthFormat;
  attachments[1].storeOp = VK_ATTACHMENT_STORE_OP_DONT_CARE;
  attachments[1].finalLayout = VK_IMAGE_LAYOUT_DEPTH_STENCIL_ATTACHMENT_OPTIMAL;
  attachments[2] = attachments[0];
  attachments[2].samples = VK_SAMPLE_COUNT_1_BIT;
  attachments[2].loadOp = VK_ATTACHMENT_LOAD_OP_DONT_CARE;
  attachments[2].storeOp = VK_ATTACHMENT_STORE_OP_STORE;
  attachments[2].finalLayout = final_layout;

  VkAttachmentReference color{0, VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL};
  VkAttachmentReference depth{1, VK_IMAGE_LAYOUT_DEPTH_STENCIL_ATTACHMENT_OPTIMAL};
  VkAttachmentReference resolved{2, VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL};
  VkSubpassDescription subpass{};
  subpass.pipelineBindPoint = VK_PIPELINE_BIND_POINT_GRAPHICS;
  subpass.colorAttachmentCount = 1;
  subpass.pColorAttachments = &color;
  subpass.pResolveAttachments = resolve ? &resolved : nullptr;
  subpass.pDepthStencilAttachment = &depth;

  // The attachments are shared by the frames in flight: a frame's writes wait for the last
  // frame's attachment writes and for its copy out of the target (offscreen).
  VkSubpassDependency dependencies[2]{};
  dependencies[0].srcSubpass = VK_SUBPASS_EXTERNAL;
  dependencies[0].dstSubpass = 0;
  dependencies[0].srcStageMask = VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT |
                                 VK_PIPELINE_STAGE_LATE_FRAGMENT_TESTS_BIT |
                                 VK_PIPELINE_STAGE_TRANSFER_BIT;
  dependencies[0].srcAccessMask =
      VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT | VK_ACCESS_DEPTH_STENCIL_ATTACHMENT_WRITE_BIT;
  dependencies[0].dstStageMask = VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT |
                                 VK_PIPELINE_STAGE_EARLY_FRAGMENT_TESTS_BIT |
                                 VK_PIPELINE_STAGE_LATE_FRAGMENT_TESTS_BIT;
  dependencies[0].dstAccessMask =
      VK_ACCESS_COLOR_ATTACHMENT_READ_BIT | VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT |
      VK_ACCESS_DEPTH_STENCIL_ATTACHMENT_READ_BIT | VK_ACCESS_DEPTH_STENCIL_ATTACHMENT_WRITE_BIT;
  // The resolved image is copied out (offscreen) after the render pass.
  dependencies[1].srcSubpass = 0;
  dependencies[1].dstSubpass = VK_SUBPASS_EXTERNAL;
  dependencies[1].srcStageMask = VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT;
  dependencies[1].srcAccessMask = VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT;
  dependencies[1].dstStageMask = VK_PIPELINE_STAGE_TRANSFER_BIT;
  dependencies[1].dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT;

  VkRenderPassCreateInfo info{VK_STRUCTURE_TYPE_RENDER_PASS_CREATE_INFO};
  info.attachmentCount = resolve ? 3 : 2;
  info.pAttachments = attachments;
  info.subpassCount = 1;
  info.pSubpasses = &subpass;
  info.dependencyCount = 2;
  info.pDependencies = dependencies;
  check_vk(vkCreateRenderPass(context.device(), &info, nullptr, &render_pass_),
           "vkCreateRenderPass");
}

FrameTarget::~FrameTarget() { vkDestroyRenderPass(context_.device(), render_pass_, nullptr); }

void FrameTarget::create_attachments(VkExtent2D extent) {
  extent_ = extent;
  if (samples_ != VK_SAMPLE_COUNT_1_BIT)
    color_ = Image(context_, format_, extent, samples_, VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT,
                   VK_IMAGE_ASPECT_COLOR_BIT);
  depth_ = Image(context_, kDepthFormat, extent, samples_,
                 VK_IMAGE_USAGE_DEPTH_STENCIL_ATTACHMENT_BIT, VK_IMAGE_ASPECT_DEPTH_BIT);
}

VkFramebuffer FrameTarget::create_framebuffer(VkImageView target) const {
  bool resolve = samples_ != VK_SAMPLE_COUNT_1_BIT;
  VkImageView views[3] = {resolve ? color_.view() : target, depth_.view(), target};
  VkFramebufferCreateInfo info{VK_STRUCTURE_TYPE_FRAMEBUFFER_CREATE_INFO};
  info.renderPass = render_pass_;
  info.attachmentCount = resolve ? 3 : 2;
  info.pAttachments = views;
  info.width = extent_.width;
  info.height = extent_.height;
  info.layers = 1;
  VkFramebuffer framebuffer = VK_NULL_HANDLE;
  check_vk(vkCreateFramebuffer(context_.device(), &info, nullptr, &framebuffer),
           "vkCreateFramebuffer");
  return framebuffer;
}

}  // namespace host_sample
