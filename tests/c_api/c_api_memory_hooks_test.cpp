// Memory hooks of loom.h on an engine's device (tests/support/engine_host.h, under the
// validation layer): the engine's VkAllocationCallbacks reach every object Loom makes and
// see every allocation freed by loom_runtime_destroy; an engine's block allocator hands out
// (and gets back, unmapped) every VkDeviceMemory Loom uses, with results identical to a run
// without it; the hooks' argument checks; an older struct_size that ends before them; heap
// budgets in loom_runtime_get_memory_usage.
//
// Which Vulkan calls Loom makes, and with which allocator, is seen from ahead of the loader:
// this executable defines the vkCreate*/vkDestroy*/vkAllocateMemory/vkFreeMemory that Loom
// calls (libloom.so binds to them first), notes the calls made from libloom.so and forwards
// every call to the loader.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <loom/loom.h>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "tests/c_api/loom_result_checks.h"
#include "tests/support/engine_host.h"
#include "tests/support/engine_import.h"
#include "tests/support/vulkan_required.h"

namespace {

using loom::testing::Engine;
using loom::testing::EngineHost;

// ---- Loom's Vulkan calls, by function and by whether they passed allocation callbacks ----

struct LoomCalls {
  std::mutex mutex;
  std::map<std::string, int> with_callbacks, without_callbacks;

  void clear() {
    std::lock_guard<std::mutex> lock(mutex);
    with_callbacks.clear();
    without_callbacks.clear();
  }
  int with(const std::string& name) {
    std::lock_guard<std::mutex> lock(mutex);
    return with_callbacks.count(name) ? with_callbacks[name] : 0;
  }
  int total(const std::string& name) {
    std::lock_guard<std::mutex> lock(mutex);
    return (with_callbacks.count(name) ? with_callbacks[name] : 0) +
           (without_callbacks.count(name) ? without_callbacks[name] : 0);
  }
  // "vkCreateFence x3, vkDestroyFence x3": what Loom made without the callbacks.
  std::string missing() {
    std::lock_guard<std::mutex> lock(mutex);
    std::string out;
    for (const auto& [name, n] : without_callbacks)
      out += (out.empty() ? "" : ", ") + name + " x" + std::to_string(n);
    return out;
  }
};

LoomCalls& loom_calls() {
  static LoomCalls calls;
  return calls;
}

bool from_loom(const void* return_address) {
  Dl_info info;
  return dladdr(return_address, &info) && info.dli_fname &&
         std::strstr(info.dli_fname, "libloom.so") != nullptr;
}

void note(const char* name, const VkAllocationCallbacks* callbacks, const void* caller) {
  if (!from_loom(caller)) return;
  LoomCalls& calls = loom_calls();
  std::lock_guard<std::mutex> lock(calls.mutex);
  ++(callbacks ? calls.with_callbacks : calls.without_callbacks)[name];
}

}  // namespace

// Each hook notes the call and forwards it to the next definition (the Vulkan loader's).
#define LOOM_HOOK(ret, name, params, args)                                          \
  extern "C" ret VKAPI_CALL name params {                                           \
    note(#name, pAllocator, __builtin_return_address(0));                           \
    static const auto real = reinterpret_cast<PFN_##name>(dlsym(RTLD_NEXT, #name)); \
    return real args;                                                               \
  }
#define LOOM_HOOK_CREATE(name, Info, Handle)                                                     \
  LOOM_HOOK(                                                                                     \
      VkResult, name,                                                                            \
      (VkDevice device, const Info* info, const VkAllocationCallbacks* pAllocator, Handle* out), \
      (device, info, pAllocator, out))                                                           \
  static_assert(true)
#define LOOM_HOOK_DESTROY(name, Handle)                                                            \
  LOOM_HOOK(void, name, (VkDevice device, Handle handle, const VkAllocationCallbacks* pAllocator), \
            (device, handle, pAllocator))                                                          \
  static_assert(true)

LOOM_HOOK_CREATE(vkCreateBuffer, VkBufferCreateInfo, VkBuffer);
LOOM_HOOK_DESTROY(vkDestroyBuffer, VkBuffer);
LOOM_HOOK_CREATE(vkCreateImage, VkImageCreateInfo, VkImage);
LOOM_HOOK_DESTROY(vkDestroyImage, VkImage);
LOOM_HOOK_CREATE(vkCreateImageView, VkImageViewCreateInfo, VkImageView);
LOOM_HOOK_DESTROY(vkDestroyImageView, VkImageView);
LOOM_HOOK_CREATE(vkAllocateMemory, VkMemoryAllocateInfo, VkDeviceMemory);
LOOM_HOOK_DESTROY(vkFreeMemory, VkDeviceMemory);
LOOM_HOOK_CREATE(vkCreateDescriptorPool, VkDescriptorPoolCreateInfo, VkDescriptorPool);
LOOM_HOOK_DESTROY(vkDestroyDescriptorPool, VkDescriptorPool);
LOOM_HOOK_CREATE(vkCreateDescriptorSetLayout, VkDescriptorSetLayoutCreateInfo,
                 VkDescriptorSetLayout);
LOOM_HOOK_DESTROY(vkDestroyDescriptorSetLayout, VkDescriptorSetLayout);
LOOM_HOOK_CREATE(vkCreatePipelineLayout, VkPipelineLayoutCreateInfo, VkPipelineLayout);
LOOM_HOOK_DESTROY(vkDestroyPipelineLayout, VkPipelineLayout);
LOOM_HOOK_CREATE(vkCreateShaderModule, VkShaderModuleCreateInfo, VkShaderModule);
LOOM_HOOK_DESTROY(vkDestroyShaderModule, VkShaderModule);
LOOM_HOOK_CREATE(vkCreatePipelineCache, VkPipelineCacheCreateInfo, VkPipelineCache);
LOOM_HOOK_DESTROY(vkDestroyPipelineCache, VkPipelineCache);
LOOM_HOOK_DESTROY(vkDestroyPipeline, VkPipeline);
LOOM_HOOK_CREATE(vkCreateCommandPool, VkCommandPoolCreateInfo, VkCommandPool);
LOOM_HOOK_DESTROY(vkDestroyCommandPool, VkCommandPool);
LOOM_HOOK_CREATE(vkCreateSemaphore, VkSemaphoreCreateInfo, VkSemaphore);
LOOM_HOOK_DESTROY(vkDestroySemaphore, VkSemaphore);
LOOM_HOOK_CREATE(vkCreateFence, VkFenceCreateInfo, VkFence);
LOOM_HOOK_DESTROY(vkDestroyFence, VkFence);
LOOM_HOOK_CREATE(vkCreateSampler, VkSamplerCreateInfo, VkSampler);
LOOM_HOOK_DESTROY(vkDestroySampler, VkSampler);
LOOM_HOOK(VkResult, vkCreateComputePipelines,
          (VkDevice device, VkPipelineCache cache, uint32_t count,
           const VkComputePipelineCreateInfo* infos, const VkAllocationCallbacks* pAllocator,
           VkPipeline* out),
          (device, cache, count, infos, pAllocator, out))

namespace {

// ---- the engine's allocators ----------------------------------------------------------

// VkAllocationCallbacks that count what they hand out and what comes back.
struct CountingCallbacks {
  std::mutex mutex;
  std::unordered_map<void*, size_t> live;  // pointer -> size
  uint64_t allocations = 0, frees = 0;

  VkAllocationCallbacks callbacks() {
    VkAllocationCallbacks c{};
    c.pUserData = this;
    c.pfnAllocation = &CountingCallbacks::allocate;
    c.pfnReallocation = &CountingCallbacks::reallocate;
    c.pfnFree = &CountingCallbacks::release;
    return c;
  }
  size_t live_count() {
    std::lock_guard<std::mutex> lock(mutex);
    return live.size();
  }

  static void* VKAPI_CALL allocate(void* user, size_t size, size_t alignment,
                                   VkSystemAllocationScope) {
    auto* self = static_cast<CountingCallbacks*>(user);
    alignment = std::max(alignment, alignof(std::max_align_t));
    void* p = std::aligned_alloc(
        alignment, (std::max<size_t>(size, 1) + alignment - 1) / alignment * alignment);
    if (!p) return nullptr;
    std::lock_guard<std::mutex> lock(self->mutex);
    self->live[p] = size;
    ++self->allocations;
    return p;
  }
  static void* VKAPI_CALL reallocate(void* user, void* original, size_t size, size_t alignment,
                                     VkSystemAllocationScope scope) {
    auto* self = static_cast<CountingCallbacks*>(user);
    if (!original) return allocate(user, size, alignment, scope);
    if (size == 0) {
      release(user, original);
      return nullptr;
    }
    size_t old_size = 0;
    {
      std::lock_guard<std::mutex> lock(self->mutex);
      old_size = self->live.at(original);
    }
    void* p = allocate(user, size, alignment, scope);
    if (!p) return nullptr;
    std::memcpy(p, original, std::min(old_size, size));
    release(user, original);
    return p;
  }
  static void VKAPI_CALL release(void* user, void* memory) {
    if (!memory) return;
    auto* self = static_cast<CountingCallbacks*>(user);
    {
      std::lock_guard<std::mutex> lock(self->mutex);
      self->live.erase(memory);
      ++self->frees;
    }
    std::free(memory);
  }
};

// An engine's device-memory allocator: the blocks it handed out, and checks on each one it
// gets back (known, and unmapped: mapping memory still mapped is invalid usage the validation
// layer reports).
struct EngineBlocks {
  VkDevice device = VK_NULL_HANDLE;
  VkPhysicalDeviceMemoryProperties memory{};
  std::mutex mutex;
  std::map<VkDeviceMemory, uint32_t> live;  // block -> memory type
  int allocated = 0, freed = 0, unknown = 0;
  VkResult fail_with = VK_SUCCESS;  // what allocate returns instead of a block, when set

  explicit EngineBlocks(const EngineHost& host) : device(host.device()) {
    vkGetPhysicalDeviceMemoryProperties(host.physical(), &memory);
  }
  size_t live_count() {
    std::lock_guard<std::mutex> lock(mutex);
    return live.size();
  }

  static VkResult allocate(void* user, const VkMemoryAllocateInfo* info, VkDeviceMemory* out) {
    auto* self = static_cast<EngineBlocks*>(user);
    if (self->fail_with != VK_SUCCESS) return self->fail_with;
    VkResult r = vkAllocateMemory(self->device, info, nullptr, out);
    if (r != VK_SUCCESS) return r;
    std::lock_guard<std::mutex> lock(self->mutex);
    self->live[*out] = info->memoryTypeIndex;
    ++self->allocated;
    return r;
  }
  static void free(void* user, VkDeviceMemory memory) {
    auto* self = static_cast<EngineBlocks*>(user);
    uint32_t type = 0;
    {
      std::lock_guard<std::mutex> lock(self->mutex);
      auto it = self->live.find(memory);
      if (it == self->live.end()) {
        ++self->unknown;
        return;
      }
      type = it->second;
      self->live.erase(it);
      ++self->freed;
    }
    void* p = nullptr;
    if ((self->memory.memoryTypes[type].propertyFlags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) &&
        vkMapMemory(self->device, memory, 0, VK_WHOLE_SIZE, 0, &p) == VK_SUCCESS)
      vkUnmapMemory(self->device, memory);
    vkFreeMemory(self->device, memory, nullptr);
  }
};

// ---- the runs --------------------------------------------------------------------------

std::string module_path(const std::string& name) {
  return std::string(LOOM_TEST_MODULES) + "/vulkan/" + name + ".loommod";
}

// What an engine hands Loom, with Loom allowed to submit (so the test can read results back).
LoomVulkanDeviceImport shared_import(const EngineHost& host) {
  LoomVulkanDeviceImport d = loom::testing::engine_import(host);
  d.queue_mode = LOOM_QUEUE_SHARED;
  return d;
}

struct HeatRun {
  std::vector<float> temperature;
  uint32_t blocks = 0;  // VkDeviceMemory blocks loom_runtime_get_memory_usage reports
};

// The heat module: init and five steps on Loom's queue, two frames recorded into the engine's
// command buffers, then the temperature read back.
HeatRun run_heat(LoomRuntime r, EngineHost& host) {
  HeatRun run;
  LoomModule m = nullptr;
  EXPECT_LOOM(loom_module_load(r, module_path("heat").c_str(), &m));
  if (!m) return run;
  LoomPipeline init = nullptr, step = nullptr;
  EXPECT_LOOM(loom_module_get_pipeline(m, "init", &init));
  EXPECT_LOOM(loom_module_get_pipeline(m, "step", &step));
  EXPECT_LOOM(loom_pipeline_launch(init));
  for (int i = 0; i < 5; ++i) EXPECT_LOOM(loom_pipeline_launch(step));
  for (int frame = 0; frame < 2; ++frame) {
    EXPECT_LOOM(loom_runtime_begin_frame(r));
    LoomResult launched = LOOM_SUCCESS;
    host.frame([&](VkCommandBuffer cb) { launched = loom_pipeline_launch_into(step, cb); });
    EXPECT_EQ(launched, LOOM_SUCCESS) << loom_last_error_message();
  }
  LoomArray t = nullptr;
  EXPECT_LOOM(loom_module_get_array(m, "temperature", &t));
  LoomArrayInfo info{sizeof(LoomArrayInfo)};
  EXPECT_LOOM(loom_array_get_info(t, &info));
  run.temperature.resize(info.bytes / sizeof(float));
  EXPECT_LOOM(loom_array_read(t, run.temperature.data(), info.bytes));
  uint32_t count = 0;
  EXPECT_LOOM(loom_runtime_get_memory_usage(r, &count, nullptr));
  std::vector<LoomMemoryUsage> usage(count, LoomMemoryUsage{sizeof(LoomMemoryUsage)});
  EXPECT_LOOM(loom_runtime_get_memory_usage(r, &count, usage.data()));
  for (const LoomMemoryUsage& u : usage) run.blocks += u.blocks;
  EXPECT_LOOM(loom_module_destroy(m));
  return run;
}

class CApiMemoryHooks : public ::testing::Test {
 protected:
  void SetUp() override {
    LOOM_REQUIRE_VULKAN_OR_SKIP();
    host_.create();
    loom_calls().clear();
  }
  void TearDown() override {
    for (const std::string& m : host_.take_messages()) ADD_FAILURE() << "Vulkan validation: " << m;
  }

  EngineHost host_{Engine::Unreal};  // Unreal is the engine that hands out its callbacks
};

// Every object Loom makes on the engine's device, and every block of memory, is made with the
// engine's callbacks and destroyed with them: allocations happen through them, and none is
// left by the time the runtime is destroyed.
TEST_F(CApiMemoryHooks, AllocationCallbacksSeeEveryObjectLoomMakesAndGetEveryAllocationBack) {
  CountingCallbacks counting;
  const VkAllocationCallbacks callbacks = counting.callbacks();
  LoomVulkanDeviceImport d = shared_import(host_);
  d.allocation_callbacks = &callbacks;
  LoomRuntime r = nullptr;
  ASSERT_LOOM(loom_runtime_import_vulkan(&d, &r));
  HeatRun run = run_heat(r, host_);
  EXPECT_FALSE(run.temperature.empty());
  EXPECT_LOOM(loom_runtime_destroy(r));

  EXPECT_GT(counting.allocations, 0u);
  EXPECT_EQ(counting.live_count(), 0u)
      << counting.live_count() << " allocations through the engine's callbacks are not freed";
  for (const char* made :
       {"vkCreateBuffer", "vkAllocateMemory", "vkCreateComputePipelines", "vkCreateShaderModule",
        "vkCreatePipelineLayout", "vkCreateDescriptorPool", "vkFreeMemory", "vkDestroyBuffer"})
    EXPECT_GT(loom_calls().with(made), 0) << made << " never called with the engine's callbacks";
  EXPECT_EQ(loom_calls().missing(), "")
      << "Loom made these calls on the engine's device without its allocation callbacks";
}

// Every VkDeviceMemory Loom uses comes from the engine's block allocator (Loom allocates none
// itself) and goes back to it, unmapped; kernels compute exactly what they compute without it.
TEST_F(CApiMemoryHooks, EveryBlockComesFromTheEnginesAllocatorAndGoesBack) {
  LoomVulkanDeviceImport plain = shared_import(host_);
  LoomRuntime reference = nullptr;
  ASSERT_LOOM(loom_runtime_import_vulkan(&plain, &reference));
  HeatRun want = run_heat(reference, host_);
  EXPECT_LOOM(loom_runtime_destroy(reference));
  ASSERT_FALSE(want.temperature.empty());
  EXPECT_NE(*std::max_element(want.temperature.begin(), want.temperature.end()),
            *std::min_element(want.temperature.begin(), want.temperature.end()))
      << "the heat module computed a constant field";

  loom_calls().clear();
  EngineBlocks blocks(host_);
  LoomVulkanDeviceImport d = shared_import(host_);
  d.allocate_memory = &EngineBlocks::allocate;
  d.free_memory = &EngineBlocks::free;
  d.memory_user = &blocks;
  LoomRuntime r = nullptr;
  ASSERT_LOOM(loom_runtime_import_vulkan(&d, &r));
  HeatRun got = run_heat(r, host_);
  EXPECT_GT(blocks.allocated, 0);
  EXPECT_EQ(got.blocks, static_cast<uint32_t>(blocks.live_count()))
      << "loom_runtime_get_memory_usage counts other blocks than the engine handed out";
  EXPECT_LOOM(loom_runtime_destroy(r));

  EXPECT_EQ(got.temperature, want.temperature);
  EXPECT_EQ(blocks.live_count(), 0u) << "blocks not given back to the engine";
  EXPECT_EQ(blocks.freed, blocks.allocated);
  EXPECT_EQ(blocks.unknown, 0) << "Loom gave back memory the engine never handed out";
  EXPECT_EQ(loom_calls().total("vkAllocateMemory"), 0);
  EXPECT_EQ(loom_calls().total("vkFreeMemory"), 0);
}

// An engine allocator that has no memory to give fails the load that needed it, naming what
// was being allocated, and leaves the runtime usable.
TEST_F(CApiMemoryHooks, ABlockAllocatorThatFailsIsAnOutOfMemoryErrorNamingTheResource) {
  EngineBlocks blocks(host_);
  blocks.fail_with = VK_ERROR_OUT_OF_DEVICE_MEMORY;
  LoomVulkanDeviceImport d = shared_import(host_);
  d.allocate_memory = &EngineBlocks::allocate;
  d.free_memory = &EngineBlocks::free;
  d.memory_user = &blocks;
  LoomRuntime r = nullptr;
  ASSERT_LOOM(loom_runtime_import_vulkan(&d, &r));
  LoomModule m = nullptr;
  EXPECT_EQ(loom_module_load(r, module_path("heat").c_str(), &m), LOOM_ERROR_DEVICE);
  EXPECT_EQ(m, nullptr);
  std::string message = loom_last_error_message();
  EXPECT_NE(message.find("out of device memory allocating "), std::string::npos) << message;
  blocks.fail_with = VK_SUCCESS;
  EXPECT_LOOM(loom_module_load(r, module_path("heat").c_str(), &m));
  EXPECT_LOOM(loom_module_destroy(m));
  EXPECT_LOOM(loom_runtime_destroy(r));
  EXPECT_EQ(blocks.live_count(), 0u);
}

TEST_F(CApiMemoryHooks, HooksAreCheckedAtImport) {
  EngineBlocks blocks(host_);
  LoomRuntime r = nullptr;
  LoomVulkanDeviceImport d = shared_import(host_);
  d.allocate_memory = &EngineBlocks::allocate;
  EXPECT_EQ(loom_runtime_import_vulkan(&d, &r), LOOM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(loom_last_error_message())
                .find("loom_runtime_import_vulkan: give both allocate_memory and free_memory"),
            std::string::npos)
      << loom_last_error_message();
  d.allocate_memory = nullptr;
  d.free_memory = &EngineBlocks::free;
  EXPECT_EQ(loom_runtime_import_vulkan(&d, &r), LOOM_ERROR_INVALID_ARGUMENT);

  CountingCallbacks counting;
  VkAllocationCallbacks incomplete = counting.callbacks();
  incomplete.pfnReallocation = nullptr;
  d = shared_import(host_);
  d.allocation_callbacks = &incomplete;
  EXPECT_EQ(loom_runtime_import_vulkan(&d, &r), LOOM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(loom_last_error_message()).find("allocation_callbacks lacks"),
            std::string::npos)
      << loom_last_error_message();
  EXPECT_EQ(r, nullptr);
  EXPECT_EQ(counting.allocations, 0u);
}

// A host built against loom.h before the memory hooks: its struct_size ends before them, and
// whatever lies beyond it in memory is not read as hooks.
TEST_F(CApiMemoryHooks, TheStructSizeBoundsWhatIsRead) {
  EngineBlocks blocks(host_);
  // A host built against a later loom.h: a larger struct, whose fields past this library's
  // struct are never read (garbage here), while the hooks within it are used.
  struct Later {
    LoomVulkanDeviceImport d;
    uint8_t added[32];
  } later;
  std::memset(later.added, 0xab, sizeof later.added);
  later.d = shared_import(host_);
  later.d.allocate_memory = &EngineBlocks::allocate;
  later.d.free_memory = &EngineBlocks::free;
  later.d.memory_user = &blocks;
  later.d.struct_size = sizeof later;
  LoomRuntime r = nullptr;
  ASSERT_LOOM(loom_runtime_import_vulkan(&later.d, &r));
  LoomModule m = nullptr;
  EXPECT_LOOM(loom_module_load(r, module_path("heat").c_str(), &m));
  LoomPipeline step = nullptr;
  EXPECT_LOOM(loom_module_get_pipeline(m, "step", &step));
  EXPECT_LOOM(loom_runtime_begin_frame(r));
  LoomResult launched = LOOM_SUCCESS;
  host_.frame([&](VkCommandBuffer cb) { launched = loom_pipeline_launch_into(step, cb); });
  EXPECT_EQ(launched, LOOM_SUCCESS) << loom_last_error_message();
  EXPECT_LOOM(loom_module_destroy(m));
  EXPECT_LOOM(loom_runtime_destroy(r));
  EXPECT_GT(blocks.allocated, 0) << "the hooks within struct_size were not used";

  // Smaller than the struct's first version (this one): refused, nothing read.
  LoomVulkanDeviceImport d = later.d;
  d.struct_size = sizeof d - 1;
  EXPECT_EQ(loom_runtime_import_vulkan(&d, &r), LOOM_ERROR_INVALID_ARGUMENT);
}

// Heap budgets in the usage report: known when the engine enabled VK_EXT_memory_budget (a
// device made here with it, where the driver offers it), 0 otherwise.
TEST_F(CApiMemoryHooks, UsageReportsHeapBudgetsOnlyWhenTheEngineEnabledMemoryBudget) {
  LoomVulkanDeviceImport d = shared_import(host_);
  LoomRuntime r = nullptr;
  ASSERT_LOOM(loom_runtime_import_vulkan(&d, &r));
  LoomModule m = nullptr;
  ASSERT_LOOM(loom_module_load(r, module_path("heat").c_str(), &m));
  uint32_t count = 0;
  ASSERT_LOOM(loom_runtime_get_memory_usage(r, &count, nullptr));
  std::vector<LoomMemoryUsage> usage(count, LoomMemoryUsage{sizeof(LoomMemoryUsage)});
  ASSERT_LOOM(loom_runtime_get_memory_usage(r, &count, usage.data()));
  ASSERT_GT(count, 0u);
  for (const LoomMemoryUsage& u : usage) {
    EXPECT_GT(u.reserved, 0u);
    uint64_t budget = 1, heap_usage = 1;
    ASSERT_LOOM(loom_runtime_get_heap_budget(r, u.heap, &budget, &heap_usage));
    EXPECT_EQ(budget, 0u) << "no VK_EXT_memory_budget declared, yet a budget reported";
    EXPECT_EQ(heap_usage, 0u);
  }
  uint64_t budget = 0, heap_usage = 0;
  EXPECT_EQ(loom_runtime_get_heap_budget(r, 99, &budget, &heap_usage), LOOM_ERROR_INVALID_ARGUMENT);
  EXPECT_LOOM(loom_module_destroy(m));
  EXPECT_LOOM(loom_runtime_destroy(r));

  // The engine's device with the extension enabled, where the driver has it.
  uint32_t n = 0;
  vkEnumerateDeviceExtensionProperties(host_.physical(), nullptr, &n, nullptr);
  std::vector<VkExtensionProperties> extensions(n);
  vkEnumerateDeviceExtensionProperties(host_.physical(), nullptr, &n, extensions.data());
  bool offered = std::any_of(extensions.begin(), extensions.end(), [](const auto& e) {
    return std::strcmp(e.extensionName, VK_EXT_MEMORY_BUDGET_EXTENSION_NAME) == 0;
  });
  if (!offered)
    GTEST_SKIP() << "the driver offers no VK_EXT_memory_budget (lavapipe does not): budgets "
                    "are tested with a fake source in tests/vulkan/memory_budget_test.cpp";
  const char* budget_extension = VK_EXT_MEMORY_BUDGET_EXTENSION_NAME;
  float priority = 1;
  VkDeviceQueueCreateInfo qci{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  qci.queueFamilyIndex = host_.family();
  qci.queueCount = 1;
  qci.pQueuePriorities = &priority;
  VkDeviceCreateInfo dci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  dci.queueCreateInfoCount = 1;
  dci.pQueueCreateInfos = &qci;
  dci.enabledExtensionCount = 1;
  dci.ppEnabledExtensionNames = &budget_extension;
  VkDevice device = VK_NULL_HANDLE;
  ASSERT_EQ(vkCreateDevice(host_.physical(), &dci, nullptr, &device), VK_SUCCESS);
  VkQueue queue = VK_NULL_HANDLE;
  vkGetDeviceQueue(device, host_.family(), 0, &queue);
  d.device = device;
  d.queue = queue;
  d.enabled_extension_count = 1;
  d.enabled_extensions = &budget_extension;
  ASSERT_LOOM(loom_runtime_import_vulkan(&d, &r));
  ASSERT_LOOM(loom_module_load(r, module_path("heat").c_str(), &m));
  ASSERT_LOOM(loom_runtime_get_memory_usage(r, &count, nullptr));
  usage.assign(count, LoomMemoryUsage{sizeof(LoomMemoryUsage)});
  ASSERT_LOOM(loom_runtime_get_memory_usage(r, &count, usage.data()));
  for (const LoomMemoryUsage& u : usage) {
    uint64_t budget = 0, heap_usage = 0;
    ASSERT_LOOM(loom_runtime_get_heap_budget(r, u.heap, &budget, &heap_usage));
    EXPECT_GT(budget, 0u) << "memory type " << u.memory_type;
    EXPECT_GE(heap_usage, u.reserved) << "the heap's usage leaves out Loom's own blocks";
  }
  EXPECT_LOOM(loom_module_destroy(m));
  EXPECT_LOOM(loom_runtime_destroy(r));
  vkDestroyDevice(device, nullptr);
}

}  // namespace
