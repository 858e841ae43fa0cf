// A VkBuffer bound to sub-allocated memory. Move-only; frees its range on destruction.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <string>

#include "runtime/vulkan/memory_allocator.h"

namespace loom::vk {

class VulkanDevice;

// Unique ids for hazard tracking (handles can be reused after destruction; ids are not).
uint64_t next_resource_id();

class GpuBuffer {
 public:
  GpuBuffer() = default;
  // Sizes below 16 bytes are rounded up (Vulkan has no empty buffers).
  GpuBuffer(VulkanDevice& device, MemoryAllocator& allocator, VkDeviceSize size,
            VkBufferUsageFlags usage, MemoryUse use, const std::string& what);
  ~GpuBuffer();
  GpuBuffer(GpuBuffer&& other) noexcept;
  GpuBuffer& operator=(GpuBuffer&& other) noexcept;
  GpuBuffer(const GpuBuffer&) = delete;
  GpuBuffer& operator=(const GpuBuffer&) = delete;

  explicit operator bool() const { return buffer_ != VK_NULL_HANDLE; }
  VkBuffer handle() const { return buffer_; }
  VkDeviceSize size() const { return size_; }
  uint8_t* mapped() const { return memory_.mapped; }  // null unless host visible
  uint64_t id() const { return id_; }

 private:
  void reset();
  VulkanDevice* device_ = nullptr;
  MemoryAllocator* allocator_ = nullptr;
  VkBuffer buffer_ = VK_NULL_HANDLE;
  VkDeviceSize size_ = 0;
  Allocation memory_;
  uint64_t id_ = 0;
};

}  // namespace loom::vk
