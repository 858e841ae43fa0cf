// Device memory sub-allocation: large blocks per memory type, first-fit ranges inside them,
// freed ranges merged with their neighbours. Resources never call vkAllocateMemory
// themselves (drivers allow few allocations, and each is slow). Host-visible blocks stay
// mapped for their whole life.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace loom::vk {

class VulkanDevice;

enum class MemoryUse : uint8_t {
  DeviceLocal,  // kernels' storage: fast for the device
  Upload,       // host writes, device reads (staging, per-launch arguments)
  Readback,     // device writes, host reads (staging for downloads, returns, error records)
};

struct Allocation {
  VkDeviceMemory memory = VK_NULL_HANDLE;
  VkDeviceSize offset = 0;
  VkDeviceSize size = 0;
  uint8_t* mapped = nullptr;  // host address when the memory is host visible
  uint32_t type = 0;
  int64_t block = -1;
  explicit operator bool() const { return memory != VK_NULL_HANDLE; }
};

class MemoryAllocator {
 public:
  explicit MemoryAllocator(VulkanDevice& device, VkDeviceSize block_size = 64ull << 20);
  ~MemoryAllocator();
  MemoryAllocator(const MemoryAllocator&) = delete;
  MemoryAllocator& operator=(const MemoryAllocator&) = delete;

  // `linear`: buffers and linear images; optimal-tiling images live in other blocks (no
  // bufferImageGranularity conflicts). `what` names the resource in out-of-memory errors.
  Allocation allocate(const VkMemoryRequirements& req, MemoryUse use, bool linear,
                      const std::string& what);
  void free(const Allocation& a);

  struct Stats {
    size_t blocks = 0;
    size_t allocations = 0;
    VkDeviceSize reserved = 0;  // bytes in blocks
    VkDeviceSize used = 0;      // bytes handed out
  };
  Stats stats() const;

 private:
  struct Range {
    VkDeviceSize offset, size;
  };
  struct Block {
    VkDeviceMemory memory = VK_NULL_HANDLE;
    VkDeviceSize size = 0;
    uint8_t* mapped = nullptr;
    uint32_t type = 0;
    bool linear = true;
    bool dedicated = false;
    std::vector<Range> free;  // sorted by offset
    size_t live = 0;
  };

  std::vector<uint32_t> candidate_types(uint32_t type_bits, MemoryUse use) const;
  bool take(Block& b, const VkMemoryRequirements& req, Allocation* out);
  int64_t new_block(uint32_t type, VkDeviceSize size, bool linear, bool dedicated,
                    VkResult* result);

  VulkanDevice& device_;
  VkDeviceSize block_size_;
  mutable std::mutex mutex_;
  std::map<int64_t, Block> blocks_;
  int64_t next_block_ = 0;
  Stats stats_;
};

}  // namespace loom::vk
