// MemoryAllocator under heap budgets (VK_EXT_memory_budget). Lavapipe does not offer the
// extension, so the budgets here come from a fake budget source given to the allocator, on a
// real device (Loom's own, validation on): a new block never passes its heap's budget (a
// smaller block, another heap's memory type, or an error naming the resource, the heap, its
// budget and its usage), blocks already there still serve, and the usage report carries the
// heap's figures.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "runtime/common/error.h"
#include "runtime/vulkan/memory_allocator.h"
#include "runtime/vulkan/vulkan_device.h"
#include "tests/support/vulkan_required.h"

namespace loom {
namespace {

constexpr VkDeviceSize kMiB = 1 << 20, kKiB = 1 << 10;

// Budgets the test sets per heap; `known` false reports none, as a device without the
// extension does.
struct FakeBudget {
  bool known = true;
  VkDeviceSize budget[VK_MAX_MEMORY_HEAPS] = {};
  VkDeviceSize usage[VK_MAX_MEMORY_HEAPS] = {};
  int asked = 0;

  vk::MemoryAllocator::BudgetSource source() {
    return [this](VkPhysicalDeviceMemoryBudgetPropertiesEXT* out) {
      ++asked;
      if (!known) return false;
      std::copy(std::begin(budget), std::end(budget), out->heapBudget);
      std::copy(std::begin(usage), std::end(usage), out->heapUsage);
      return true;
    };
  }
  // Every heap: `left` bytes below a budget of 256 MiB.
  void leave(VkDeviceSize left) {
    for (uint32_t h = 0; h < VK_MAX_MEMORY_HEAPS; ++h) {
      budget[h] = 256 * kMiB;
      usage[h] = 256 * kMiB - left;
    }
  }
};

class MemoryBudget : public ::testing::Test {
 protected:
  void SetUp() override {
    LOOM_REQUIRE_VULKAN_OR_SKIP();
    vk::DeviceOptions o;
    o.validation = true;
    device_ = std::make_unique<vk::VulkanDevice>(o);
  }
  void TearDown() override {
    if (!device_) return;
    for (const std::string& m : device_->take_messages()) ADD_FAILURE() << m;
  }

  // Requirements any memory type of the device meets.
  VkMemoryRequirements any_type(VkDeviceSize size) const {
    uint32_t types = device_->memory_properties().memoryTypeCount;
    return {size, 256, types >= 32 ? ~0u : (1u << types) - 1};
  }
  uint32_t heap_of(const vk::Allocation& a) const {
    return device_->memory_properties().memoryTypes[a.type].heapIndex;
  }

  std::unique_ptr<vk::VulkanDevice> device_;
  FakeBudget fake_;
};

TEST_F(MemoryBudget, ABlockPastTheHeapsBudgetIsRefusedNamingResourceHeapBudgetAndUsage) {
  fake_.leave(512 * kKiB);
  vk::MemoryAllocator allocator(*device_, 1 * kMiB, 64 * kMiB, fake_.source());
  try {
    allocator.allocate(any_type(1 * kMiB), vk::MemoryUse::DeviceLocal, true, "ndarray 'big'");
    FAIL() << "allocated 1 MiB with 0.5 MiB left in every heap's budget";
  } catch (const Error& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("out of device memory allocating ndarray 'big'"), std::string::npos) << m;
    EXPECT_NE(m.find("heap 0 (budget 256.0 MiB, 255.5 MiB in use)"), std::string::npos) << m;
  }
  EXPECT_EQ(allocator.stats().blocks, 0u);
  EXPECT_EQ(fake_.asked, 1);  // once per allocation that needs a block, not once per type
}

// The first block of a kind is min_block (1 MiB) where the budget allows it; where it does
// not, the block is what is left (in 64 KiB steps), as long as the resource fits.
TEST_F(MemoryBudget, AGrownBlockShrinksToWhatTheBudgetLeaves) {
  fake_.leave(640 * kKiB + 100);
  vk::MemoryAllocator allocator(*device_, 1 * kMiB, 64 * kMiB, fake_.source());
  vk::Allocation a =
      allocator.allocate(any_type(64 * kKiB), vk::MemoryUse::DeviceLocal, true, "argument slots");
  EXPECT_EQ(allocator.stats().blocks, 1u);
  EXPECT_EQ(allocator.stats().reserved, 640 * kKiB);
  allocator.free(a);

  FakeBudget ample;
  ample.leave(200 * kMiB);
  vk::MemoryAllocator roomy(*device_, 1 * kMiB, 64 * kMiB, ample.source());
  vk::Allocation b =
      roomy.allocate(any_type(64 * kKiB), vk::MemoryUse::DeviceLocal, true, "argument slots");
  EXPECT_EQ(roomy.stats().reserved, 1 * kMiB);
  roomy.free(b);
}

// Sub-allocation inside a block Loom already holds takes nothing more from the heap: it goes
// on with no budget left; only a new block is refused.
TEST_F(MemoryBudget, BlocksAlreadyHeldStillServe) {
  fake_.leave(200 * kMiB);
  vk::MemoryAllocator allocator(*device_, 1 * kMiB, 64 * kMiB, fake_.source());
  vk::Allocation a = allocator.allocate(any_type(64 * kKiB), vk::MemoryUse::DeviceLocal, true, "a");
  fake_.leave(0);
  vk::Allocation b = allocator.allocate(any_type(64 * kKiB), vk::MemoryUse::DeviceLocal, true, "b");
  EXPECT_EQ(b.memory, a.memory);
  EXPECT_EQ(allocator.stats().blocks, 1u);
  EXPECT_THROW(
      allocator.allocate(any_type(2 * kMiB), vk::MemoryUse::DeviceLocal, true, "texture 'c'"),
      Error);
  EXPECT_EQ(allocator.stats().blocks, 1u);
  allocator.free(a);
  allocator.free(b);
}

// No budget known (a device without VK_EXT_memory_budget): blocks as before.
TEST_F(MemoryBudget, NoBudgetKnownLimitsNothing) {
  fake_.known = false;
  vk::MemoryAllocator allocator(*device_, 1 * kMiB, 64 * kMiB, fake_.source());
  vk::Allocation a =
      allocator.allocate(any_type(3 * kMiB), vk::MemoryUse::DeviceLocal, true, "ndarray 'x'");
  EXPECT_TRUE(a);
  EXPECT_EQ(allocator.stats().reserved, 4 * kMiB);
  for (const auto& u : allocator.usage_by_type()) {
    EXPECT_EQ(u.heap_budget, 0u);
    EXPECT_EQ(u.heap_usage, 0u);
  }
  allocator.free(a);
}

// A heap at its budget sends the block to a memory type of another heap the resource allows
// (a discrete GPU's host heap for device-local data). Lavapipe has one heap: skipped there.
TEST_F(MemoryBudget, AFullHeapFallsBackToAnotherHeapsMemoryType) {
  fake_.leave(200 * kMiB);
  vk::MemoryAllocator probe(*device_, 1 * kMiB, 64 * kMiB, fake_.source());
  vk::Allocation first =
      probe.allocate(any_type(64 * kKiB), vk::MemoryUse::DeviceLocal, true, "probe");
  uint32_t best_heap = heap_of(first);
  probe.free(first);
  const VkPhysicalDeviceMemoryProperties& mp = device_->memory_properties();
  bool other_heap = false;
  for (uint32_t t = 0; t < mp.memoryTypeCount; ++t)
    other_heap = other_heap || mp.memoryTypes[t].heapIndex != best_heap;
  if (!other_heap) GTEST_SKIP() << "the device's memory types all live in heap " << best_heap;

  fake_.usage[best_heap] = fake_.budget[best_heap];
  vk::MemoryAllocator allocator(*device_, 1 * kMiB, 64 * kMiB, fake_.source());
  vk::Allocation a = allocator.allocate(any_type(64 * kKiB), vk::MemoryUse::DeviceLocal, true, "a");
  EXPECT_NE(heap_of(a), best_heap);
  allocator.free(a);
}

// The usage report carries the heap's budget and usage as the budget source gives them.
TEST_F(MemoryBudget, UsageReportsTheHeapsBudgetAndUsage) {
  for (uint32_t h = 0; h < VK_MAX_MEMORY_HEAPS; ++h) {
    fake_.budget[h] = (100 + h) * kMiB;
    fake_.usage[h] = (10 + h) * kMiB;
  }
  vk::MemoryAllocator allocator(*device_, 1 * kMiB, 64 * kMiB, fake_.source());
  vk::Allocation a = allocator.allocate(any_type(64 * kKiB), vk::MemoryUse::Upload, true, "a");
  auto usage = allocator.usage_by_type();
  ASSERT_EQ(usage.size(), 1u);
  EXPECT_EQ(usage[0].heap, heap_of(a));
  EXPECT_EQ(usage[0].heap_budget, (100 + usage[0].heap) * kMiB);
  EXPECT_EQ(usage[0].heap_usage, (10 + usage[0].heap) * kMiB);
  allocator.free(a);

  // The device's own source: Loom's device enables no VK_EXT_memory_budget, so 0 (unknown).
  vk::MemoryAllocator plain(*device_);
  vk::Allocation b = plain.allocate(any_type(64 * kKiB), vk::MemoryUse::Upload, true, "b");
  for (const auto& u : plain.usage_by_type()) {
    EXPECT_EQ(u.heap_budget, 0u);
    EXPECT_EQ(u.heap_usage, 0u);
  }
  plain.free(b);
}

// An engine's create info declares the extension; Loom uses budgets only when it is there.
TEST(MemoryBudgetDeclared, TheEnginesEnabledExtensionsSayWhetherBudgetsAreKnown) {
  const char* with[] = {VK_KHR_SWAPCHAIN_EXTENSION_NAME, VK_EXT_MEMORY_BUDGET_EXTENSION_NAME};
  VkDeviceCreateInfo info{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  info.enabledExtensionCount = 2;
  info.ppEnabledExtensionNames = with;
  vk::ImportedDevice host;
  vk::set_enabled_features(host, info);
  EXPECT_TRUE(host.memory_budget);
  info.enabledExtensionCount = 1;
  vk::set_enabled_features(host, info);
  EXPECT_FALSE(host.memory_budget);
}

}  // namespace
}  // namespace loom
