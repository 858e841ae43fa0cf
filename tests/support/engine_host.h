// A host engine's Vulkan device made the way Unity, Unreal or Godot 4 make theirs, for tests
// of Loom on engines' devices (tests/vulkan/engine_device_test.cpp through the C++ runtime,
// tests/c_api/c_api_engine_test.cpp and tests/vulkan/unity_vulkan1_0_test.cpp through loom.h):
//   Unity     Vulkan 1.1 instance, features of its choosing, no timeline semaphores;
//   Unity10   Unity on a Vulkan 1.0 instance (older drivers, many Android devices): core 1.0
//             features of its choosing, no extension, no features chain; the host itself
//             calls nothing newer than 1.0 (vkGetPhysicalDeviceFeatures, not ...Features2);
//   Unreal    SM5: Vulkan 1.1, every supported core 1.0 feature plus 16-bit storage on;
//   Godot 4   Vulkan 1.2 instance, shaderFloat64/shaderInt64 where supported, no timeline
//             semaphores, no synchronization2.
// Its own instance has the validation layer and a messenger (take_messages()). Plain Vulkan
// only: the plugin's tests include no Loom internals.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

namespace loom::testing {

inline void host_check(VkResult r, const char* what) {
  if (r != VK_SUCCESS)
    throw std::runtime_error(std::string(what) + " failed (VkResult " + std::to_string(r) + ")");
}

constexpr uint64_t kHostTimeout = 10'000'000'000;  // ns

enum class Engine { Unity, Unreal, Godot, Unity10 };

inline const char* engine_name(Engine e) {
  switch (e) {
    case Engine::Unity: return "Unity";
    case Engine::Unreal: return "Unreal";
    case Engine::Godot: return "Godot";
    case Engine::Unity10: return "UnityVulkan1_0";
  }
  return "?";
}

// The engine: an instance and a device created the way that engine creates them.
class EngineHost {
 public:
  explicit EngineHost(Engine engine) : engine_(engine) {}
  EngineHost(const EngineHost&) = delete;
  EngineHost& operator=(const EngineHost&) = delete;
  ~EngineHost() {
    if (pool_) vkDestroyCommandPool(device_, pool_, nullptr);
    if (device_) vkDestroyDevice(device_, nullptr);
    if (messenger_) {
      auto destroy = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
          vkGetInstanceProcAddr(instance_, "vkDestroyDebugUtilsMessengerEXT"));
      destroy(instance_, messenger_, nullptr);
    }
    if (instance_) vkDestroyInstance(instance_, nullptr);
  }

  uint32_t api_version() const {
    switch (engine_) {
      case Engine::Godot: return VK_API_VERSION_1_2;
      case Engine::Unity10: return VK_API_VERSION_1_0;
      case Engine::Unity:
      case Engine::Unreal: return VK_API_VERSION_1_1;
    }
    return VK_API_VERSION_1_0;
  }

  void create() {
    VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
    app.pApplicationName = engine_name(engine_);
    app.apiVersion = api_version();
    const char* layer = "VK_LAYER_KHRONOS_validation";
    const char* debug_utils = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
    VkInstanceCreateInfo ici{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    ici.pApplicationInfo = &app;
    ici.enabledLayerCount = 1;
    ici.ppEnabledLayerNames = &layer;
    ici.enabledExtensionCount = 1;
    ici.ppEnabledExtensionNames = &debug_utils;
    host_check(vkCreateInstance(&ici, nullptr, &instance_), "creating the engine's instance");
    VkDebugUtilsMessengerCreateInfoEXT mci{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
    mci.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                          VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
    mci.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                      VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT;
    mci.pfnUserCallback = &EngineHost::on_message;
    mci.pUserData = this;
    auto create_messenger = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(instance_, "vkCreateDebugUtilsMessengerEXT"));
    host_check(create_messenger(instance_, &mci, nullptr, &messenger_), "creating a messenger");

    uint32_t n = 1;
    VkResult r = vkEnumeratePhysicalDevices(instance_, &n, &physical_);
    if ((r != VK_SUCCESS && r != VK_INCOMPLETE) || n == 0)
      throw std::runtime_error("no physical device");
    uint32_t families = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(physical_, &families, nullptr);
    std::vector<VkQueueFamilyProperties> props(families);
    vkGetPhysicalDeviceQueueFamilyProperties(physical_, &families, props.data());
    const VkQueueFlags want = VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT;
    for (family_ = 0; family_ < families; ++family_)
      if ((props[family_].queueFlags & want) == want) break;
    if (family_ == families) throw std::runtime_error("no graphics and compute queue family");

    // What each engine enables, from what the device supports (1.0 core features and the
    // 1.1 16-bit storage struct: nothing a 1.1 engine could not name).
    VkPhysicalDevice16BitStorageFeatures storage16_supported{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES};
    VkPhysicalDeviceFeatures2 supported{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
                                        &storage16_supported};
    // A Vulkan 1.0 instance has no vkGetPhysicalDeviceFeatures2 (core 1.1; the validation
    // layer reports the call).
    if (api_version() >= VK_API_VERSION_1_1)
      vkGetPhysicalDeviceFeatures2(physical_, &supported);
    else
      vkGetPhysicalDeviceFeatures(physical_, &supported.features);
    VkPhysicalDeviceFeatures enable{};
    VkPhysicalDevice16BitStorageFeatures storage16{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES};
    switch (engine_) {
      case Engine::Unity:  // a few features of its choosing
        enable.shaderInt16 = supported.features.shaderInt16;
        enable.fragmentStoresAndAtomics = supported.features.fragmentStoresAndAtomics;
        break;
      case Engine::Unreal:  // every supported core feature
        enable = supported.features;
        enable.robustBufferAccess = VK_FALSE;  // UE turns it off outside of debugging
        storage16.storageBuffer16BitAccess = storage16_supported.storageBuffer16BitAccess;
        break;
      // Unity does not publish the features it enables; this profile takes core features a
      // renderer of its kind uses where the device has them (anisotropic filtering, BC/ETC2/
      // ASTC textures, independent blend, fragment stores) and none a kernel could use beyond
      // 1.0's baseline (no shaderInt64, shaderInt16, shaderFloat64): the hardest case for Loom.
      case Engine::Unity10:
        enable.samplerAnisotropy = supported.features.samplerAnisotropy;
        enable.textureCompressionBC = supported.features.textureCompressionBC;
        enable.textureCompressionETC2 = supported.features.textureCompressionETC2;
        enable.textureCompressionASTC_LDR = supported.features.textureCompressionASTC_LDR;
        enable.independentBlend = supported.features.independentBlend;
        enable.fragmentStoresAndAtomics = supported.features.fragmentStoresAndAtomics;
        enable.shaderImageGatherExtended = supported.features.shaderImageGatherExtended;
        break;
      case Engine::Godot:
        enable.shaderFloat64 = supported.features.shaderFloat64;
        enable.shaderInt64 = supported.features.shaderInt64;
        enable.shaderInt16 = supported.features.shaderInt16;
        break;
    }
    enabled_ = enable;
    storage16_ = storage16.storageBuffer16BitAccess;
    float priority = 1;
    VkDeviceQueueCreateInfo qci{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
    qci.queueFamilyIndex = family_;
    qci.queueCount = 1;
    qci.pQueuePriorities = &priority;
    VkDeviceCreateInfo dci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
    dci.pNext = engine_ == Engine::Unreal ? &storage16 : nullptr;
    dci.queueCreateInfoCount = 1;
    dci.pQueueCreateInfos = &qci;
    dci.pEnabledFeatures = &enable;
    host_check(vkCreateDevice(physical_, &dci, nullptr, &device_), "creating the engine's device");
    vkGetDeviceQueue(device_, family_, 0, &queue_);
    VkCommandPoolCreateInfo pci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    pci.queueFamilyIndex = family_;
    host_check(vkCreateCommandPool(device_, &pci, nullptr, &pool_), "creating a command pool");
  }

  // What the engine hands a plugin.
  VkInstance instance() const { return instance_; }
  VkPhysicalDevice physical() const { return physical_; }
  VkQueue queue() const { return queue_; }
  uint32_t family() const { return family_; }
  // What it enabled (a test may declare it to Loom, as a plugin that hooks device creation
  // can).
  const VkPhysicalDeviceFeatures& enabled() const { return enabled_; }
  bool storage16() const { return storage16_; }

  // One frame of the engine: a command buffer it begins, lets the plugin record into, ends,
  // submits with its own fence and waits for.
  template <typename Record>
  void frame(Record record) {
    VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    ai.commandPool = pool_;
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = 1;
    VkCommandBuffer cb = VK_NULL_HANDLE;
    host_check(vkAllocateCommandBuffers(device_, &ai, &cb), "allocating a command buffer");
    VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    host_check(vkBeginCommandBuffer(cb, &bi), "beginning a command buffer");
    record(cb);
    host_check(vkEndCommandBuffer(cb), "ending a command buffer");
    VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VkFence fence = VK_NULL_HANDLE;
    host_check(vkCreateFence(device_, &fci, nullptr, &fence), "creating a fence");
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cb;
    host_check(vkQueueSubmit(queue_, 1, &si, fence), "submitting the engine's frame");
    host_check(vkWaitForFences(device_, 1, &fence, VK_TRUE, kHostTimeout), "waiting for the frame");
    vkDestroyFence(device_, fence, nullptr);
    vkFreeCommandBuffers(device_, pool_, 1, &cb);
  }

  VkDevice device() const { return device_; }

  std::vector<std::string> take_messages() {
    std::lock_guard<std::mutex> lock(mutex_);
    return std::move(messages_);
  }

 private:
  static VKAPI_ATTR VkBool32 VKAPI_CALL on_message(VkDebugUtilsMessageSeverityFlagBitsEXT,
                                                   VkDebugUtilsMessageTypeFlagsEXT,
                                                   const VkDebugUtilsMessengerCallbackDataEXT* data,
                                                   void* self) {
    auto* host = static_cast<EngineHost*>(self);
    std::lock_guard<std::mutex> lock(host->mutex_);
    host->messages_.emplace_back(data->pMessage ? data->pMessage : "(no text)");
    return VK_FALSE;
  }

  Engine engine_;
  VkInstance instance_ = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
  VkPhysicalDevice physical_ = VK_NULL_HANDLE;
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  uint32_t family_ = 0;
  VkCommandPool pool_ = VK_NULL_HANDLE;
  VkPhysicalDeviceFeatures enabled_{};
  bool storage16_ = false;
  std::mutex mutex_;
  std::vector<std::string> messages_;
};

}  // namespace loom::testing
