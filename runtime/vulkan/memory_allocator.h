// Device memory sub-allocation: blocks per memory type, first-fit ranges inside them, freed
// ranges merged with their neighbours. Resources never call vkAllocateMemory themselves
// (drivers allow few allocations, and each is slow). Host-visible blocks stay mapped for their
// whole life.
//
// Block sizes grow with use, per memory type and tiling: the first shared block of a kind is
// `min_block`, each further one twice the one before, up to `max_block`. A runtime holding a
// few kilobytes (a small module on an engine's device) reserves about `min_block` per kind it
// uses; one holding gigabytes still makes few allocations. A resource larger than half of
// `max_block` gets a block of its own, freed with it.
//
// On a device that reports heap budgets (VK_EXT_memory_budget), no new block goes past its
// heap's budget: a smaller block that fits, another memory type the resource allows, or an
// out-of-memory Error naming the resource, the heap, its budget and its usage. Blocks come
// from VulkanDevice::allocate_memory (the host's block allocator or allocation callbacks on
// an imported device).
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <functional>
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
  static constexpr VkDeviceSize kMinBlock = 1ull << 20;
  static constexpr VkDeviceSize kMaxBlock = 64ull << 20;
  // Writes every heap's budget and usage, or returns false when they are unknown.
  using BudgetSource = std::function<bool(VkPhysicalDeviceMemoryBudgetPropertiesEXT*)>;
  // `budget`: where heap budgets come from; empty, the device's (VulkanDevice::memory_budget).
  explicit MemoryAllocator(VulkanDevice& device, VkDeviceSize min_block = kMinBlock,
                           VkDeviceSize max_block = kMaxBlock, BudgetSource budget = {});
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

  // What Loom holds in each memory type it uses (types it never allocated from are absent).
  struct TypeUsage {
    uint32_t type = 0;  // index into VkPhysicalDeviceMemoryProperties::memoryTypes
    uint32_t heap = 0;
    VkMemoryPropertyFlags flags = 0;
    size_t blocks = 0;
    VkDeviceSize reserved = 0;  // bytes in blocks
    VkDeviceSize used = 0;      // bytes handed out
    // The heap's budget and the process's usage of it (VK_EXT_memory_budget); 0 when unknown.
    VkDeviceSize heap_budget = 0;
    VkDeviceSize heap_usage = 0;
  };
  std::vector<TypeUsage> usage_by_type() const;

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
    VkDeviceSize used = 0;
  };

  std::vector<uint32_t> candidate_types(uint32_t type_bits, MemoryUse use) const;
  bool take(Block& b, const VkMemoryRequirements& req, Allocation* out);
  int64_t new_block(uint32_t type, VkDeviceSize size, bool linear, bool dedicated,
                    VkResult* result);
  VkDeviceSize shared_block_size(uint32_t type, bool linear, VkDeviceSize request) const;
  void release(const Block& b);

  VulkanDevice& device_;
  VkDeviceSize min_block_, max_block_;
  BudgetSource budget_;
  mutable std::mutex mutex_;
  std::map<int64_t, Block> blocks_;
  int64_t next_block_ = 0;
  Stats stats_;
};

}  // namespace loom::vk
