#include "runtime/vulkan/gpu_buffer.h"

#include <algorithm>
#include <atomic>
#include <utility>

#include "runtime/vulkan/vk_check.h"
#include "runtime/vulkan/vulkan_device.h"

namespace loom::vk {

uint64_t next_resource_id() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

GpuBuffer::GpuBuffer(VulkanDevice& device, MemoryAllocator& allocator, VkDeviceSize size,
                     VkBufferUsageFlags usage, MemoryUse use, const std::string& what)
    : device_(&device),
      allocator_(&allocator),
      size_(std::max<VkDeviceSize>(size, 16)),
      id_(next_resource_id()) {
  VkBufferCreateInfo ci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  ci.size = size_;
  ci.usage = usage;
  ci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  check(vkCreateBuffer(device.device(), &ci, device.host_allocator(), &buffer_),
        "creating a buffer for " + what);
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(device.device(), buffer_, &req);
  try {
    memory_ = allocator.allocate(req, use, true, what);
    check(vkBindBufferMemory(device.device(), buffer_, memory_.memory, memory_.offset),
          "binding memory to " + what);
  } catch (...) {
    reset();
    throw;
  }
}

GpuBuffer::~GpuBuffer() { reset(); }

void GpuBuffer::reset() {
  if (buffer_) vkDestroyBuffer(device_->device(), buffer_, device_->host_allocator());
  if (memory_) allocator_->free(memory_);
  buffer_ = VK_NULL_HANDLE;
  memory_ = {};
}

GpuBuffer::GpuBuffer(GpuBuffer&& o) noexcept { *this = std::move(o); }

GpuBuffer& GpuBuffer::operator=(GpuBuffer&& o) noexcept {
  if (this == &o) return *this;
  reset();
  device_ = o.device_;
  allocator_ = o.allocator_;
  buffer_ = std::exchange(o.buffer_, VK_NULL_HANDLE);
  size_ = o.size_;
  memory_ = std::exchange(o.memory_, Allocation{});
  id_ = o.id_;
  return *this;
}

}  // namespace loom::vk
