// DescriptorAllocator counts what each pool has left, so it never asks a pool for more than
// it holds (on Vulkan 1.0 without VK_KHR_maintenance1 that is invalid usage, not an error code
// to recover from). On Loom's own device, validation on: more sets than one pool holds, of a
// layout that runs a pool out of storage-buffer descriptors before it runs out of sets, then
// frees and reuses; every allocation succeeds at the first try and no message is reported.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "runtime/common/error.h"
#include "runtime/vulkan/descriptor_allocator.h"
#include "runtime/vulkan/vk_check.h"
#include "runtime/vulkan/vulkan_device.h"
#include "tests/support/engine_host.h"
#include "tests/support/vulkan_required.h"

namespace loom {
namespace {

void fill_free_and_refill(vk::VulkanDevice& device) {
  // Nine storage buffers and a uniform buffer: 4096 / 9 = 455 sets fill a pool's storage
  // buffers, fewer than its 512 sets.
  std::vector<VkDescriptorSetLayoutBinding> bindings;
  std::vector<VkDescriptorType> types;
  for (uint32_t b = 0; b < 10; ++b) {
    VkDescriptorType t =
        b < 9 ? VK_DESCRIPTOR_TYPE_STORAGE_BUFFER : VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER;
    bindings.push_back({b, t, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr});
    types.push_back(t);
  }
  VkDescriptorSetLayoutCreateInfo dci{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  dci.bindingCount = static_cast<uint32_t>(bindings.size());
  dci.pBindings = bindings.data();
  VkDescriptorSetLayout layout = VK_NULL_HANDLE;
  vk::check(vkCreateDescriptorSetLayout(device.device(), &dci, nullptr, &layout),
            "creating a set layout");
  {
    vk::DescriptorAllocator sets(device);
    std::vector<VkDescriptorSet> made;
    for (int i = 0; i < 1000; ++i) made.push_back(sets.allocate(layout, types));
    EXPECT_EQ(sets.live(), 1000u);
    for (size_t i = 0; i < made.size(); i += 2) sets.free(made[i]);
    EXPECT_EQ(sets.live(), 500u);
    for (int i = 0; i < 700; ++i) sets.allocate(layout, types);
    EXPECT_EQ(sets.live(), 1200u);
    // A set no pool could ever hold is refused by name, not passed to the driver.
    std::vector<VkDescriptorType> huge(5000, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER);
    EXPECT_THROW(sets.allocate(layout, huge), Error);
  }
  vkDestroyDescriptorSetLayout(device.device(), layout, nullptr);
}

TEST(DescriptorAllocator, PoolsAreNeverAskedForMoreThanTheyHold) {
  LOOM_REQUIRE_VULKAN_OR_SKIP();
  vk::DeviceOptions o;
  o.validation = true;
  vk::VulkanDevice device(o);
  fill_free_and_refill(device);
  for (const std::string& m : device.take_messages()) ADD_FAILURE() << "Vulkan validation: " << m;
}

TEST(DescriptorAllocator, AVulkan10DeviceWithoutMaintenance1IsNeverOverfilled) {
  LOOM_REQUIRE_VULKAN_OR_SKIP();
  testing::EngineHost host(testing::Engine::Unity10);
  host.create();
  vk::ImportedDevice d;
  d.instance = host.instance();
  d.physical = host.physical();
  d.device = host.device();
  d.queue_family = host.family();
  d.queue = host.queue();
  d.api_version = host.api_version();
  ASSERT_EQ(d.api_version, VK_API_VERSION_1_0);
  {
    vk::VulkanDevice device(d);
    fill_free_and_refill(device);
  }
  for (const std::string& m : host.take_messages()) ADD_FAILURE() << "Vulkan validation: " << m;
}

}  // namespace
}  // namespace loom
