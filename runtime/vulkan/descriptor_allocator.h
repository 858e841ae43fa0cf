// Descriptor sets from a growing list of pools; sets can be freed one by one (kernels keep
// a bounded cache of sets per binding combination and give back the least recently used).
#pragma once

#include <vulkan/vulkan.h>

#include <vector>

namespace loom::vk {

class VulkanDevice;

class DescriptorAllocator {
 public:
  explicit DescriptorAllocator(VulkanDevice& device);
  ~DescriptorAllocator();
  DescriptorAllocator(const DescriptorAllocator&) = delete;
  DescriptorAllocator& operator=(const DescriptorAllocator&) = delete;

  VkDescriptorSet allocate(VkDescriptorSetLayout layout);
  void free(VkDescriptorSet set);
  size_t live() const { return live_; }

 private:
  void add_pool();
  VulkanDevice& device_;
  std::vector<VkDescriptorPool> pools_;
  std::vector<std::pair<VkDescriptorSet, VkDescriptorPool>> owners_;
  size_t live_ = 0;
};

}  // namespace loom::vk
