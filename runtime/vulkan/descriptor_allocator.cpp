#include "runtime/vulkan/descriptor_allocator.h"

#include <algorithm>
#include <string>

#include "runtime/common/error.h"
#include "runtime/vulkan/vk_check.h"
#include "runtime/vulkan/vulkan_device.h"

namespace loom::vk {

namespace {

constexpr uint32_t kSetsPerPool = 512;
constexpr VkDescriptorPoolSize kPoolSizes[] = {
    {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 4096},        {VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER, 1024},
    {VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER_DYNAMIC, 512}, {VK_DESCRIPTOR_TYPE_STORAGE_IMAGE, 512},
    {VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE, 512},          {VK_DESCRIPTOR_TYPE_SAMPLER, 512},
};

size_t type_index(VkDescriptorType type) {
  for (size_t i = 0; i < std::size(kPoolSizes); ++i)
    if (kPoolSizes[i].type == type) return i;
  throw InternalError("descriptor type " + std::to_string(type) +
                      " is not one the descriptor pools hold");
}

}  // namespace

DescriptorAllocator::DescriptorAllocator(VulkanDevice& device) : device_(device) {
  static_assert(std::size(kPoolSizes) == kTypes);
}

DescriptorAllocator::~DescriptorAllocator() {
  for (const Pool& p : pools_)
    vkDestroyDescriptorPool(device_.device(), p.pool, device_.host_allocator());
}

void DescriptorAllocator::add_pool() {
  VkDescriptorPoolCreateInfo ci{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
  ci.flags = VK_DESCRIPTOR_POOL_CREATE_FREE_DESCRIPTOR_SET_BIT;
  ci.maxSets = kSetsPerPool;
  ci.poolSizeCount = static_cast<uint32_t>(std::size(kPoolSizes));
  ci.pPoolSizes = kPoolSizes;
  Pool p;
  check(vkCreateDescriptorPool(device_.device(), &ci, device_.host_allocator(), &p.pool),
        "creating a descriptor pool");
  p.sets_left = kSetsPerPool;
  for (size_t i = 0; i < kTypes; ++i) p.left[i] = kPoolSizes[i].descriptorCount;
  pools_.push_back(p);
}

VkDescriptorSet DescriptorAllocator::allocate(VkDescriptorSetLayout layout,
                                              const std::vector<VkDescriptorType>& types) {
  Counts need{};
  for (VkDescriptorType t : types) ++need[type_index(t)];
  for (size_t i = 0; i < kTypes; ++i)
    if (need[i] > kPoolSizes[i].descriptorCount)
      throw Error("a descriptor set of " + std::to_string(need[i]) +
                  " descriptors of one type; a pool holds " +
                  std::to_string(kPoolSizes[i].descriptorCount));
  auto fits = [&](const Pool& p) {
    if (p.sets_left == 0) return false;
    for (size_t i = 0; i < kTypes; ++i)
      if (p.left[i] < need[i]) return false;
    return true;
  };
  // Newest pool first: older ones are likely full.
  size_t chosen = pools_.size();
  for (size_t i = pools_.size(); i-- > 0;)
    if (fits(pools_[i])) {
      chosen = i;
      break;
    }
  if (chosen == pools_.size()) {
    add_pool();
    chosen = pools_.size() - 1;
  }
  Pool& p = pools_[chosen];
  VkDescriptorSetAllocateInfo ai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
  ai.descriptorPool = p.pool;
  ai.descriptorSetCount = 1;
  ai.pSetLayouts = &layout;
  VkDescriptorSet set = VK_NULL_HANDLE;
  check(vkAllocateDescriptorSets(device_.device(), &ai, &set), "allocating a descriptor set");
  --p.sets_left;
  for (size_t i = 0; i < kTypes; ++i) p.left[i] -= need[i];
  owners_.push_back({set, chosen, need});
  ++live_;
  return set;
}

void DescriptorAllocator::free(VkDescriptorSet set) {
  auto it =
      std::find_if(owners_.begin(), owners_.end(), [&](const Owned& o) { return o.set == set; });
  if (it == owners_.end()) return;
  Pool& p = pools_[it->pool];
  vkFreeDescriptorSets(device_.device(), p.pool, 1, &set);
  ++p.sets_left;
  for (size_t i = 0; i < kTypes; ++i) p.left[i] += it->counts[i];
  owners_.erase(it);
  --live_;
}

}  // namespace loom::vk
