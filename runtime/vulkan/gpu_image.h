// A 2-d or 3-d VkImage for a texture, with its view, in sub-allocated memory. It stays in
// VK_IMAGE_LAYOUT_GENERAL (storage and sampled use alike) after its first transition.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <string>

#include "runtime/common/kernel_abi.h"
#include "runtime/vulkan/memory_allocator.h"
#include "runtime/vulkan/texture_format.h"

namespace loom::vk {

class VulkanDevice;

class GpuImage {
 public:
  GpuImage() = default;
  // `ndim` 2 or 3; throws loom::Error naming `what` when the device cannot use the format.
  GpuImage(VulkanDevice& device, MemoryAllocator& allocator, TextureFormat format, uint32_t width,
           uint32_t height, uint32_t depth, int ndim, const std::string& what);
  ~GpuImage();
  GpuImage(GpuImage&& other) noexcept;
  GpuImage& operator=(GpuImage&& other) noexcept;
  GpuImage(const GpuImage&) = delete;
  GpuImage& operator=(const GpuImage&) = delete;

  explicit operator bool() const { return image_ != VK_NULL_HANDLE; }
  VkImage image() const { return image_; }
  VkImageView view() const { return view_; }
  TextureFormat format() const { return format_; }
  VkExtent3D extent() const { return extent_; }
  VkDeviceSize bytes() const {
    return VkDeviceSize{extent_.width} * extent_.height * extent_.depth * texel_bytes(format_);
  }
  bool linear_filter() const { return linear_filter_; }
  uint64_t id() const { return id_; }
  // False until the first command stream use moves it from UNDEFINED to GENERAL.
  bool in_general_layout() const { return general_; }
  void set_general_layout() { general_ = true; }

 private:
  void reset();
  VulkanDevice* device_ = nullptr;
  MemoryAllocator* allocator_ = nullptr;
  VkImage image_ = VK_NULL_HANDLE;
  VkImageView view_ = VK_NULL_HANDLE;
  Allocation memory_;
  TextureFormat format_ = TextureFormat::RGBA32F;
  VkExtent3D extent_{};
  bool linear_filter_ = false;
  bool general_ = false;
  uint64_t id_ = 0;
};

}  // namespace loom::vk
