// Buffers and images the engine owns, each with its own memory (a sample's handful; a real
// engine sub-allocates). Move-only; freed with the object.
#pragma once

#include <vulkan/vulkan.h>

#include <cstddef>

namespace host_sample {

class VulkanContext;

class Buffer {
 public:
  Buffer() = default;
  // Host-visible and coherent (mapped) when `host_visible`, device-local otherwise.
  Buffer(const VulkanContext& context, VkDeviceSize size, VkBufferUsageFlags usage,
         bool host_visible);
  // A host-visible buffer holding `bytes`.
  static Buffer with_data(const VulkanContext& context, const void* data, size_t bytes,
                          VkBufferUsageFlags usage);
  ~Buffer() { reset(); }
  Buffer(Buffer&& other) noexcept { *this = static_cast<Buffer&&>(other); }
  Buffer& operator=(Buffer&& other) noexcept;

  VkBuffer handle() const { return buffer_; }
  VkDeviceSize size() const { return size_; }
  void* mapped() const { return mapped_; }

 private:
  void reset();
  VkDevice device_ = VK_NULL_HANDLE;
  VkBuffer buffer_ = VK_NULL_HANDLE;
  VkDeviceMemory memory_ = VK_NULL_HANDLE;
  VkDeviceSize size_ = 0;
  void* mapped_ = nullptr;
};

class Image {
 public:
  Image() = default;
  // A device-local 2-d image with a view of `aspect`.
  Image(const VulkanContext& context, VkFormat format, VkExtent2D extent,
        VkSampleCountFlagBits samples, VkImageUsageFlags usage, VkImageAspectFlags aspect);
  ~Image() { reset(); }
  Image(Image&& other) noexcept { *this = static_cast<Image&&>(other); }
  Image& operator=(Image&& other) noexcept;

  VkImage handle() const { return image_; }
  VkImageView view() const { return view_; }

 private:
  void reset();
  VkDevice device_ = VK_NULL_HANDLE;
  VkImage image_ = VK_NULL_HANDLE;
  VkDeviceMemory memory_ = VK_NULL_HANDLE;
  VkImageView view_ = VK_NULL_HANDLE;
};

// A view of someone else's 2-d colour image (a swapchain's, Loom's).
VkImageView create_image_view(VkDevice device, VkImage image, VkFormat format);

}  // namespace host_sample
