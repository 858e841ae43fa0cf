// A Vulkan device for compute: instance, physical-device choice, logical device, one
// compute queue, the features Loom's kernels may use, and (in tests) the validation layer
// with every message kept. Nothing here waits on the whole device except destruction.
// Or a host engine's device, imported: its handles are used and never destroyed.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

namespace loom::vk {

// What codegen targets and the runtime checks against ("the device has at least").
struct DeviceCaps {
  std::string name;
  std::string type;  // "discrete GPU", "integrated GPU", "CPU", ...
  bool discrete = false;
  uint32_t vendor_id = 0, device_id = 0, driver_version = 0, api_version = 0;
  uint32_t features = 0;  // SpirvRequirement bits the device supports (and we enabled)
  uint32_t max_push_constants = 128;
  uint32_t max_storage_buffer_range = 0;
  uint32_t max_uniform_buffer_range = 0;
  uint32_t max_workgroup_count_x = 65535;
  uint32_t max_workgroup_count_y = 65535;
  uint32_t max_workgroup_count_z = 65535;
  uint32_t max_workgroup_size_x = 128;  // maxComputeWorkGroupSize[0], at most the invocations
  uint32_t max_workgroup_size_y = 128, max_workgroup_size_z = 64;
  uint32_t max_workgroup_invocations = 128;
  uint32_t max_workgroup_memory = 16384;  // bytes (maxComputeSharedMemorySize)
  uint32_t subgroup_size = 0;
  uint32_t min_storage_offset_alignment = 16;
  uint32_t min_uniform_offset_alignment = 16;
  uint8_t pipeline_cache_uuid[VK_UUID_SIZE] = {};
  // Identifies the code the device runs: part of compile cache keys.
  std::string signature() const;
};

// The workgroup size Loom gives parallel tasks on this device unless a kernel or the program
// sets one: a multiple of its subgroup size (GPUs: four subgroups, at least 64 invocations, so
// 128 on 32-wide hardware and 256 on 64-wide; CPUs such as llvmpipe: bench/README.md says why),
// within its limits.
uint32_t preferred_workgroup_size(const DeviceCaps& caps);
constexpr uint32_t kCpuDeviceWorkgroupSize = 128;

struct DeviceOptions {
  // "" picks the best device (discrete, then integrated, virtual, CPU); a number is an index
  // into enumerate_devices(); anything else a case-insensitive part of the device name.
  std::string select;
  bool validation = false;  // VK_LAYER_KHRONOS_validation, messages kept for take_messages()
  std::function<void(const std::string&)> notice;  // which device was chosen, and why
  // For rendering: a queue family that also does graphics, and, with `surface`, presents to
  // the surface it makes (the device owns and destroys it) with VK_KHR_swapchain enabled.
  bool graphics = false;
  std::vector<std::string>
      instance_extensions;  // e.g. what glfwGetRequiredInstanceExtensions names
  std::function<VkSurfaceKHR(VkInstance)> surface;
};

// A host engine's device for Loom to run on (VulkanDevice(const ImportedDevice&)).
//
// Contract: the handles come from the Vulkan loader Loom links; they outlive every Loom
// object made on them and are never destroyed by Loom. The host and Loom share `queue`: they
// submit to it from one thread at a time (Vulkan requires queues to be externally
// synchronized). Vulkan cannot report which features a device was created with, so the host
// says: Loom compiles kernels for exactly `kernel_features` (those the physical device also
// supports) and assumes nothing else was enabled.
struct ImportedDevice {
  VkInstance instance = VK_NULL_HANDLE;
  VkPhysicalDevice physical = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  uint32_t queue_family = 0;       // must support compute
  VkQueue queue = VK_NULL_HANDLE;  // a queue of queue_family
  // VkApplicationInfo::apiVersion of the host's instance: 1.0 or later. Loom uses no Vulkan
  // beyond it (on 1.0 no vkGetPhysicalDeviceFeatures2/Properties2; kernels get SPIR-V 1.0 on
  // 1.0, 1.3 on 1.1, 1.5 on 1.2 and later). 0, the default, is refused: Loom assumes no
  // version it was not told.
  uint32_t api_version = 0;
  // The host enabled VkPhysicalDeviceVulkan12Features::timelineSemaphore (or
  // VkPhysicalDeviceTimelineSemaphoreFeatures): Loom then tracks its submissions by one (with
  // api_version 1.2 or later: its entry points are Vulkan 1.2's); otherwise by fences (and a
  // host's semaphores given to a submission must be binary).
  bool timeline_semaphore = false;
  // SpirvRequirement bits (kNeedInt64, ... in runtime/common/spirv_kernel.h) whose Vulkan
  // features the host enabled; describe_requirements() names the features of each bit.
  // set_enabled_features() fills this and timeline_semaphore from the device's create info.
  // kNeedSubgroupArithmetic (a property, nothing to enable) is the host's to add: Loom then
  // uses subgroup reductions where the device has them.
  uint32_t kernel_features = 0;
  // Called around every vkQueueSubmit and vkQueueWaitIdle Loom makes on `queue`, so an engine
  // that submits from a render thread can serialise Loom's (both or neither).
  std::function<void()> lock_queue, unlock_queue;
  // The host's pipeline cache (Unity hands one out): Loom creates its pipelines in it and
  // never destroys it. VK_NULL_HANDLE: Loom keeps a cache of its own.
  VkPipelineCache pipeline_cache = VK_NULL_HANDLE;
  // Memory hooks. allocation_callbacks: the host's (Unreal hands its own), given to every
  // vkCreate*/vkAllocate*/vkDestroy*/vkFree* Loom makes on `device`; it outlives the device.
  // allocate_memory / free_memory (both or neither): every VkDeviceMemory block Loom
  // sub-allocates from comes from the host's allocator and goes back to it; Loom maps those
  // blocks itself. memory_budget: the host enabled VK_EXT_memory_budget (on an instance of
  // Vulkan 1.1 or later): Loom then allocates no block past a heap's budget.
  const VkAllocationCallbacks* allocation_callbacks = nullptr;
  std::function<VkResult(const VkMemoryAllocateInfo&, VkDeviceMemory*)> allocate_memory;
  std::function<void(VkDeviceMemory)> free_memory;
  bool memory_budget = false;
};

// Fills `device.timeline_semaphore` and `device.kernel_features` from the VkDeviceCreateInfo
// the host created its device with (pEnabledFeatures or a VkPhysicalDeviceFeatures2, the
// Vulkan 1.1/1.2 or per-feature structs in its pNext chain, the atomic-float extensions it
// enables): exactly what was enabled, nothing assumed.
void set_enabled_features(ImportedDevice& device, const VkDeviceCreateInfo& info);

// Throws loom::Error unless `family` exists among `families` and does compute (what an
// imported device's queue family must do; exposed for drivers whose every family computes).
void check_compute_queue_family(const std::vector<VkQueueFamilyProperties>& families,
                                uint32_t family, const std::string& device_name);

struct DeviceInfo {
  int index = 0;
  std::string name;
  std::string type;
  uint32_t api_version = 0;
};

// Validation messages raised while devices were destroyed (written to stderr then): the test
// harness fails a run that has any.
int validation_messages_at_shutdown();

// The physical devices a Vulkan instance sees; empty (never an error) when there is no
// loader, no driver or no device.
std::vector<DeviceInfo> enumerate_devices();

class VulkanDevice {
 public:
  // Throws loom::Error when no usable device exists or the selection matches none.
  explicit VulkanDevice(const DeviceOptions& options = {});
  // The host's device (see ImportedDevice). Throws loom::Error naming a null handle, a queue
  // family without compute, or what the host must enable or say.
  explicit VulkanDevice(const ImportedDevice& host);
  ~VulkanDevice();
  VulkanDevice(const VulkanDevice&) = delete;
  VulkanDevice& operator=(const VulkanDevice&) = delete;

  VkInstance instance() const { return instance_; }
  VkPhysicalDevice physical() const { return physical_; }
  VkDevice device() const { return device_; }
  VkQueue queue() const { return queue_; }
  // Runs `submit` (a vkQueueSubmit or vkQueueWaitIdle on queue()) inside the host's queue
  // lock, when it gave one.
  template <typename F>
  auto with_queue(F&& submit) const {
    struct Unlock {
      const std::function<void()>& unlock;
      ~Unlock() {
        if (unlock) unlock();
      }
    };
    if (lock_queue_) lock_queue_();
    Unlock unlock{unlock_queue_};
    return submit();
  }
  uint32_t queue_family() const { return queue_family_; }
  VkSurfaceKHR surface() const { return surface_; }  // VK_NULL_HANDLE without presentation
  const DeviceCaps& caps() const { return caps_; }
  const VkPhysicalDeviceMemoryProperties& memory_properties() const { return memory_; }
  uint64_t buffer_image_granularity() const { return granularity_; }

  bool imported() const { return imported_; }  // the handles are a host's, never destroyed here
  // Timeline semaphores are enabled (always on devices Loom creates; on an imported device
  // when the host says so). Without them Loom tracks its submissions with fences.
  bool timeline_semaphores() const { return timeline_semaphores_; }
  VkPipelineCache host_pipeline_cache() const { return host_pipeline_cache_; }
  // The host's VkAllocationCallbacks for every object Loom creates or allocates on the device
  // (nullptr on Loom's own device, and when the host gave none).
  const VkAllocationCallbacks* host_allocator() const { return host_allocator_; }
  // A VkDeviceMemory block: from the host's block allocator when it gave one, otherwise
  // vkAllocateMemory with host_allocator(). free_memory gives it back the same way.
  VkResult allocate_memory(const VkMemoryAllocateInfo& info, VkDeviceMemory* memory) const;
  void free_memory(VkDeviceMemory memory) const;
  // Budget and usage of every heap (VK_EXT_memory_budget); false, `out` untouched, when the
  // device does not report them.
  bool memory_budget(VkPhysicalDeviceMemoryBudgetPropertiesEXT* out) const;
  // Validation messages are collected only on an instance Loom made (an imported device's go
  // to the host's messenger).
  bool validation() const { return messenger_ != VK_NULL_HANDLE; }
  // Validation messages (warnings and errors) since the last call.
  std::vector<std::string> take_messages();

 private:
  static VKAPI_ATTR VkBool32 VKAPI_CALL on_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                   VkDebugUtilsMessageTypeFlagsEXT types,
                                                   const VkDebugUtilsMessengerCallbackDataEXT* data,
                                                   void* self);
  void create_instance(const DeviceOptions& options);
  bool queue_family_for(VkPhysicalDevice pd, uint32_t* family) const;
  void pick_physical(const DeviceOptions& options);
  void create_device();
  void fill_caps(uint32_t features);
  void release();

  VkInstance instance_ = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
  VkSurfaceKHR surface_ = VK_NULL_HANDLE;
  bool graphics_ = false;
  bool imported_ = false;
  std::function<void()> lock_queue_, unlock_queue_;
  VkPipelineCache host_pipeline_cache_ = VK_NULL_HANDLE;
  const VkAllocationCallbacks* host_allocator_ = nullptr;
  std::function<VkResult(const VkMemoryAllocateInfo&, VkDeviceMemory*)> host_allocate_memory_;
  std::function<void(VkDeviceMemory)> host_free_memory_;
  bool memory_budget_ = false;
  bool timeline_semaphores_ = true;
  VkPhysicalDevice physical_ = VK_NULL_HANDLE;
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  uint32_t queue_family_ = 0;
  DeviceCaps caps_;
  VkPhysicalDeviceMemoryProperties memory_{};
  uint64_t granularity_ = 1;
  std::mutex messages_mutex_;
  std::vector<std::string> messages_;
};

}  // namespace loom::vk
