#include "gpu_resources.h"

#include <cstring>
#include <utility>

#include "vulkan_context.h"

namespace host_sample {

namespace {

VkDeviceMemory allocate(const VulkanContext& context, const VkMemoryRequirements& need,
                        VkMemoryPropertyFlags flags) {
  VkMemoryAllocateInfo info{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  info.allocationSize = need.size;
  info.memoryTypeIndex = context.memory_type(need.memoryTypeBits, flags);
  VkDeviceMemory memory = VK_NULL_HANDLE;
  check_vk(vkAllocateMemory(context.device(), &info, nullptr, &memory), "vkAllocateMemory");
  return memory;
}

}  // namespace

Buffer::Buffer(const VulkanContext& context, VkDeviceSize size, VkBufferUsageFlags usage,
               bool host_visible)
    : device_(context.device()), size_(size) {
  VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  info.size = size;
  info.usage = usage;
  info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  check_vk(vkCreateBuffer(device_, &info, nullptr, &buffer_), "vkCreateBuffer");
  VkMemoryRequirements need;
  vkGetBufferMemoryRequirements(device_, buffer_, &need);
  VkMemoryPropertyFlags flags =
      host_visible ? VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT
                   : VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
  try {
    memory_ = allocate(context, need, flags);
    check_vk(vkBindBufferMemory(device_, buffer_, memory_, 0), "vkBindBufferMemory");
    if (host_visible)
      check_vk(vkMapMemory(device_, memory_, 0, VK_WHOLE_SIZE, 0, &mapped_), "vkMapMemory");
  } catch (...) {
    reset();
    throw;
  }
}

Buffer Buffer::with_data(const VulkanContext& context, const void* data, size_t bytes,
                         VkBufferUsageFlags usage) {
  Buffer b(context, bytes, usage, true);
  std::memcpy(b.mapped(), data, bytes);
  return b;
}

Buffer& Buffer::operator=(Buffer&& other) noexcept {
  if (this == &other) return *this;
  reset();
  device_ = std::exchange(other.device_, VK_NULL_HANDLE);
  buffer_ = std::exchange(other.buffer_, VK_NULL_HANDLE);
  memory_ = std::exchange(other.memory_, VK_NULL_HANDLE);
  size_ = std::exchange(other.size_, 0);
  mapped_ = std::exchange(other.mapped_, nullptr);
  return *this;
}

void Buffer::reset() {
  if (buffer_) vkDestroyBuffer(device_, buffer_, nullptr);
  if (memory_) vkFreeMemory(device_, memory_, nullptr);
  buffer_ = VK_NULL_HANDLE;
  memory_ = VK_NULL_HANDLE;
  mapped_ = nullptr;
}

Image::Image(const VulkanContext& context, VkFormat format, VkExtent2D extent,
             VkSampleCountFlagBits samples, VkImageUsageFlags usage, VkImageAspectFlags aspect)
    : device_(context.device()) {
  VkImageCreateInfo info{VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO};
  info.imageType = VK_IMAGE_TYPE_2D;
  info.format = format;
  info.extent = {extent.width, extent.height, 1};
  info.mipLevels = 1;
  info.arrayLayers = 1;
  info.samples = samples;
  info.tiling = VK_IMAGE_TILING_OPTIMAL;
  info.usage = usage;
  info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  info.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;
  check_vk(vkCreateImage(device_, &info, nullptr, &image_), "vkCreateImage");
  try {
    VkMemoryRequirements need;
    vkGetImageMemoryRequirements(device_, image_, &need);
    memory_ = allocate(context, need, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
    check_vk(vkBindImageMemory(device_, image_, memory_, 0), "vkBindImageMemory");
    VkImageViewCreateInfo view{VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO};
    view.image = image_;
    view.viewType = VK_IMAGE_VIEW_TYPE_2D;
    view.format = format;
    view.subresourceRange = {aspect, 0, 1, 0, 1};
    check_vk(vkCreateImageView(device_, &view, nullptr, &view_), "vkCreateImageView");
  } catch (...) {
    reset();
    throw;
  }
}

Image& Image::operator=(Image&& other) noexcept {
  if (this == &other) return *this;
  reset();
  device_ = std::exchange(other.device_, VK_NULL_HANDLE);
  image_ = std::exchange(other.image_, VK_NULL_HANDLE);
  memory_ = std::exchange(other.memory_, VK_NULL_HANDLE);
  view_ = std::exchange(other.view_, VK_NULL_HANDLE);
  return *this;
}

void Image::reset() {
  if (view_) vkDestroyImageView(device_, view_, nullptr);
  if (image_) vkDestroyImage(device_, image_, nullptr);
  if (memory_) vkFreeMemory(device_, memory_, nullptr);
  view_ = VK_NULL_HANDLE;
  image_ = VK_NULL_HANDLE;
  memory_ = VK_NULL_HANDLE;
}

VkImageView create_image_view(VkDevice device, VkImage image, VkFormat format) {
  VkImageViewCreateInfo info{VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO};
  info.image = image;
  info.viewType = VK_IMAGE_VIEW_TYPE_2D;
  info.format = format;
  info.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
  VkImageView view = VK_NULL_HANDLE;
  check_vk(vkCreateImageView(device, &info, nullptr, &view), "vkCreateImageView");
  return view;
}

}  // namespace host_sample
