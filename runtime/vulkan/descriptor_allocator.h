// Descriptor sets from a growing list of pools; sets can be freed one by one (kernels keep
// a bounded cache of sets per binding combination and give back the least recently used).
// Each pool's capacity is counted here, so no allocation ever asks a pool for more than it
// holds: Vulkan 1.0 without VK_KHR_maintenance1 makes that invalid usage rather than a
// VK_ERROR_OUT_OF_POOL_MEMORY to recover from.
#pragma once

#include <vulkan/vulkan.h>

#include <array>
#include <cstdint>
#include <vector>

namespace loom::vk {

class VulkanDevice;

class DescriptorAllocator {
 public:
  explicit DescriptorAllocator(VulkanDevice& device);
  ~DescriptorAllocator();
  DescriptorAllocator(const DescriptorAllocator&) = delete;
  DescriptorAllocator& operator=(const DescriptorAllocator&) = delete;

  // A set of `layout`, whose bindings have these descriptor types (one descriptor each).
  VkDescriptorSet allocate(VkDescriptorSetLayout layout,
                           const std::vector<VkDescriptorType>& types);
  void free(VkDescriptorSet set);
  size_t live() const { return live_; }

 private:
  static constexpr size_t kTypes = 6;  // the descriptor types kernels bind (kPoolSizes)
  using Counts = std::array<uint32_t, kTypes>;
  struct Pool {
    VkDescriptorPool pool = VK_NULL_HANDLE;
    uint32_t sets_left = 0;
    Counts left{};
  };
  struct Owned {
    VkDescriptorSet set;
    size_t pool;
    Counts counts;
  };
  void add_pool();
  VulkanDevice& device_;
  std::vector<Pool> pools_;
  std::vector<Owned> owners_;
  size_t live_ = 0;
};

}  // namespace loom::vk
