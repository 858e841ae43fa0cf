#include "runtime/vulkan/descriptor_allocator.h"

#include <algorithm>

#include "runtime/vulkan/vk_check.h"
#include "runtime/vulkan/vulkan_device.h"

namespace loom::vk {

DescriptorAllocator::DescriptorAllocator(VulkanDevice& device) : device_(device) {}

DescriptorAllocator::~DescriptorAllocator() {
  for (VkDescriptorPool p : pools_)
    vkDestroyDescriptorPool(device_.device(), p, device_.host_allocator());
}

void DescriptorAllocator::add_pool() {
  const VkDescriptorPoolSize sizes[] = {
      {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 4096},        {VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER, 1024},
      {VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER_DYNAMIC, 512}, {VK_DESCRIPTOR_TYPE_STORAGE_IMAGE, 512},
      {VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE, 512},          {VK_DESCRIPTOR_TYPE_SAMPLER, 512},
  };
  VkDescriptorPoolCreateInfo ci{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
  ci.flags = VK_DESCRIPTOR_POOL_CREATE_FREE_DESCRIPTOR_SET_BIT;
  ci.maxSets = 512;
  ci.poolSizeCount = static_cast<uint32_t>(std::size(sizes));
  ci.pPoolSizes = sizes;
  VkDescriptorPool pool;
  check(vkCreateDescriptorPool(device_.device(), &ci, device_.host_allocator(), &pool),
        "creating a descriptor pool");
  pools_.push_back(pool);
}

VkDescriptorSet DescriptorAllocator::allocate(VkDescriptorSetLayout layout) {
  if (pools_.empty()) add_pool();
  for (int attempt = 0; attempt < 2; ++attempt) {
    // Newest pool first: older ones are likely full.
    for (auto it = pools_.rbegin(); it != pools_.rend(); ++it) {
      VkDescriptorSetAllocateInfo ai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
      ai.descriptorPool = *it;
      ai.descriptorSetCount = 1;
      ai.pSetLayouts = &layout;
      VkDescriptorSet set;
      VkResult r = vkAllocateDescriptorSets(device_.device(), &ai, &set);
      if (r == VK_SUCCESS) {
        owners_.push_back({set, *it});
        ++live_;
        return set;
      }
      if (r != VK_ERROR_OUT_OF_POOL_MEMORY && r != VK_ERROR_FRAGMENTED_POOL)
        check(r, "allocating a descriptor set");
    }
    add_pool();
  }
  check(VK_ERROR_OUT_OF_POOL_MEMORY, "allocating a descriptor set");
  return VK_NULL_HANDLE;
}

void DescriptorAllocator::free(VkDescriptorSet set) {
  auto it =
      std::find_if(owners_.begin(), owners_.end(), [&](const auto& o) { return o.first == set; });
  if (it == owners_.end()) return;
  vkFreeDescriptorSets(device_.device(), it->second, 1, &set);
  owners_.erase(it);
  --live_;
}

}  // namespace loom::vk
