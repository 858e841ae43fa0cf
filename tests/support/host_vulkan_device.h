// A host engine's Vulkan device made with plain Vulkan, for the engine plugin's tests and
// benchmarks (they import it into Loom through loom.h): one queue family that draws and
// computes, timeline semaphores on, float atomics where the device has them; host-visible
// storage buffers; one-shot command buffers submitted with a fence.
#pragma once

#include <loom/loom.h>
#include <vulkan/vulkan.h>

#include <cstring>
#include <vector>

namespace loom::testing {

struct HostDevice {
  HostDevice() = default;
  HostDevice(const HostDevice&) = delete;  // the create info points into itself
  HostDevice& operator=(const HostDevice&) = delete;

  VkInstance instance = VK_NULL_HANDLE;
  VkPhysicalDevice physical = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  VkQueue queue = VK_NULL_HANDLE;
  uint32_t family = 0;
  VkCommandPool pool = VK_NULL_HANDLE;
  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceFeatures2 features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &f12};
  VkDeviceQueueCreateInfo queue_info{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  VkPhysicalDeviceShaderAtomicFloatFeaturesEXT atomic_float{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_FEATURES_EXT};
  VkDeviceCreateInfo create_info{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  const char* extensions[1] = {VK_EXT_SHADER_ATOMIC_FLOAT_EXTENSION_NAME};
  float priority = 1;

  bool create() {
    VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
    app.apiVersion = VK_API_VERSION_1_2;
    VkInstanceCreateInfo ici{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    ici.pApplicationInfo = &app;
    if (vkCreateInstance(&ici, nullptr, &instance) != VK_SUCCESS) return false;
    uint32_t n = 1;
    VkResult r = vkEnumeratePhysicalDevices(instance, &n, &physical);
    if ((r != VK_SUCCESS && r != VK_INCOMPLETE) || n == 0) return false;
    uint32_t families = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(physical, &families, nullptr);
    std::vector<VkQueueFamilyProperties> props(families);
    vkGetPhysicalDeviceQueueFamilyProperties(physical, &families, props.data());
    for (family = 0; family < families; ++family)
      if ((props[family].queueFlags & (VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT)) ==
          (VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT))
        break;
    if (family == families) return false;
    queue_info.queueFamilyIndex = family;
    queue_info.queueCount = 1;
    queue_info.pQueuePriorities = &priority;
    f12.timelineSemaphore = VK_TRUE;
    create_info.pNext = &features;
    uint32_t count = 0;
    vkEnumerateDeviceExtensionProperties(physical, nullptr, &count, nullptr);
    std::vector<VkExtensionProperties> exts(count);
    vkEnumerateDeviceExtensionProperties(physical, nullptr, &count, exts.data());
    for (const VkExtensionProperties& e : exts) {
      if (std::strcmp(e.extensionName, VK_EXT_SHADER_ATOMIC_FLOAT_EXTENSION_NAME) != 0) continue;
      VkPhysicalDeviceShaderAtomicFloatFeaturesEXT have{
          VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_FEATURES_EXT};
      VkPhysicalDeviceFeatures2 query{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &have};
      vkGetPhysicalDeviceFeatures2(physical, &query);
      if (!have.shaderBufferFloat32AtomicAdd) break;
      atomic_float.shaderBufferFloat32AtomicAdd = VK_TRUE;
      f12.pNext = &atomic_float;
      create_info.enabledExtensionCount = 1;
      create_info.ppEnabledExtensionNames = extensions;
    }
    create_info.queueCreateInfoCount = 1;
    create_info.pQueueCreateInfos = &queue_info;
    if (vkCreateDevice(physical, &create_info, nullptr, &device) != VK_SUCCESS) return false;
    vkGetDeviceQueue(device, family, 0, &queue);
    VkCommandPoolCreateInfo pci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    pci.queueFamilyIndex = family;
    return vkCreateCommandPool(device, &pci, nullptr, &pool) == VK_SUCCESS;
  }
  ~HostDevice() {
    if (device) {
      vkDeviceWaitIdle(device);
      vkDestroyCommandPool(device, pool, nullptr);
      vkDestroyDevice(device, nullptr);
    }
    if (instance) vkDestroyInstance(instance, nullptr);
  }
  LoomVulkanDeviceImport import_info() const {
    LoomVulkanDeviceImport i{};
    i.struct_size = sizeof i;
    i.instance = instance;
    i.physical_device = physical;
    i.device = device;
    i.queue_family_index = family;
    i.queue = queue;
    i.api_version = VK_API_VERSION_1_2;
    i.create_info = &create_info;
    return i;
  }
  uint32_t memory_type(uint32_t bits, VkMemoryPropertyFlags want) const {
    VkPhysicalDeviceMemoryProperties mp;
    vkGetPhysicalDeviceMemoryProperties(physical, &mp);
    for (uint32_t i = 0; i < mp.memoryTypeCount; ++i)
      if ((bits & (1u << i)) && (mp.memoryTypes[i].propertyFlags & want) == want) return i;
    return 0;
  }
  VkCommandBuffer begin() const {
    VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    ai.commandPool = pool;
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = 1;
    VkCommandBuffer cb = VK_NULL_HANDLE;
    vkAllocateCommandBuffers(device, &ai, &cb);
    VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    vkBeginCommandBuffer(cb, &bi);
    return cb;
  }
  // Ends, submits and waits for `cb` with a fence: the host's frame.
  void submit_and_wait(VkCommandBuffer cb) const {
    vkEndCommandBuffer(cb);
    VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VkFence fence = VK_NULL_HANDLE;
    vkCreateFence(device, &fci, nullptr, &fence);
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cb;
    vkQueueSubmit(queue, 1, &si, fence);
    vkWaitForFences(device, 1, &fence, VK_TRUE, UINT64_MAX);
    vkDestroyFence(device, fence, nullptr);
    vkFreeCommandBuffers(device, pool, 1, &cb);
  }
};

// A host-visible storage buffer of the host's.
struct HostBuffer {
  const HostDevice& host;
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  void* mapped = nullptr;
  HostBuffer(const HostDevice& h, VkDeviceSize bytes) : host(h) {
    VkBufferCreateInfo bci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    bci.size = bytes;
    bci.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    vkCreateBuffer(h.device, &bci, nullptr, &buffer);
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(h.device, buffer, &req);
    VkMemoryAllocateInfo mai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    mai.allocationSize = req.size;
    mai.memoryTypeIndex =
        h.memory_type(req.memoryTypeBits,
                      VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
    vkAllocateMemory(h.device, &mai, nullptr, &memory);
    vkBindBufferMemory(h.device, buffer, memory, 0);
    vkMapMemory(h.device, memory, 0, bytes, 0, &mapped);
    std::memset(mapped, 0, bytes);
  }
  ~HostBuffer() {
    vkDestroyBuffer(host.device, buffer, nullptr);
    vkFreeMemory(host.device, memory, nullptr);
  }
};

}  // namespace loom::testing
