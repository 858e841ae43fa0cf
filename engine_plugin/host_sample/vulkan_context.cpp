#include "vulkan_context.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace host_sample {

void check_vk(VkResult result, const char* what) {
  if (result != VK_SUCCESS)
    throw std::runtime_error(std::string(what) + " failed (VkResult " + std::to_string(result) +
                             ")");
}

namespace {

bool has_layer(const char* name) {
  uint32_t n = 0;
  vkEnumerateInstanceLayerProperties(&n, nullptr);
  std::vector<VkLayerProperties> layers(n);
  vkEnumerateInstanceLayerProperties(&n, layers.data());
  return std::any_of(layers.begin(), layers.end(),
                     [&](const auto& l) { return std::strcmp(l.layerName, name) == 0; });
}

bool has_device_extension(VkPhysicalDevice device, const char* name) {
  uint32_t n = 0;
  vkEnumerateDeviceExtensionProperties(device, nullptr, &n, nullptr);
  std::vector<VkExtensionProperties> extensions(n);
  vkEnumerateDeviceExtensionProperties(device, nullptr, &n, extensions.data());
  return std::any_of(extensions.begin(), extensions.end(),
                     [&](const auto& e) { return std::strcmp(e.extensionName, name) == 0; });
}

// Discrete GPUs first, the CPU (lavapipe) last.
int preference(VkPhysicalDeviceType type) {
  switch (type) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return 4;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return 3;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return 2;
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return 1;
    default: return 0;
  }
}

}  // namespace

VulkanContext::VulkanContext(const VulkanContextOptions& options) {
  try {
    create_instance(options);
    if (options.make_surface) {
      surface_ = options.make_surface(instance_);
      if (surface_ == VK_NULL_HANDLE)
        throw std::runtime_error("cannot create a Vulkan surface for the window");
    }
    choose_physical_device();
    create_device();
  } catch (...) {
    destroy();
    throw;
  }
}

VulkanContext::~VulkanContext() { destroy(); }

void VulkanContext::destroy() {
  if (device_) vkDestroyDevice(device_, nullptr);
  if (surface_) vkDestroySurfaceKHR(instance_, surface_, nullptr);
  if (messenger_) {
    auto destroy = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(instance_, "vkDestroyDebugUtilsMessengerEXT"));
    if (destroy) destroy(instance_, messenger_, nullptr);
  }
  if (instance_) vkDestroyInstance(instance_, nullptr);
  device_ = VK_NULL_HANDLE;
  surface_ = VK_NULL_HANDLE;
  messenger_ = VK_NULL_HANDLE;
  instance_ = VK_NULL_HANDLE;
}

VKAPI_ATTR VkBool32 VKAPI_CALL VulkanContext::on_message(
    VkDebugUtilsMessageSeverityFlagBitsEXT severity, VkDebugUtilsMessageTypeFlagsEXT,
    const VkDebugUtilsMessengerCallbackDataEXT* data, void* self) {
  static_cast<VulkanContext*>(self)->validation_messages_++;
  std::fprintf(stderr, "vulkan %s: %s\n",
               severity >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT ? "error" : "warning",
               data->pMessage);
  return VK_FALSE;
}

void VulkanContext::create_instance(const VulkanContextOptions& options) {
  uint32_t loader_version = VK_API_VERSION_1_0;
  vkEnumerateInstanceVersion(&loader_version);
  if (loader_version < VK_API_VERSION_1_2)
    throw NoVulkanDevice("the Vulkan loader is older than 1.2");
  api_version_ = VK_API_VERSION_1_2;

  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "loom-host-sample";
  app.pEngineName = "loom-host-sample";
  app.apiVersion = api_version_;

  std::vector<const char*> extensions = options.instance_extensions;
  std::vector<const char*> layers;
  VkDebugUtilsMessengerCreateInfoEXT messenger{
      VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
  messenger.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                              VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  messenger.messageType =
      VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT;
  messenger.pfnUserCallback = &VulkanContext::on_message;
  messenger.pUserData = this;
  if (options.validation) {
    if (!has_layer("VK_LAYER_KHRONOS_validation"))
      throw std::runtime_error(
          "--validation: VK_LAYER_KHRONOS_validation is not installed (vulkan-validationlayers)");
    layers.push_back("VK_LAYER_KHRONOS_validation");
    extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
  }

  VkInstanceCreateInfo info{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  info.pNext = options.validation ? &messenger : nullptr;
  info.pApplicationInfo = &app;
  info.enabledLayerCount = static_cast<uint32_t>(layers.size());
  info.ppEnabledLayerNames = layers.data();
  info.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  info.ppEnabledExtensionNames = extensions.data();
  VkResult created = vkCreateInstance(&info, nullptr, &instance_);
  if (created == VK_ERROR_INCOMPATIBLE_DRIVER)
    throw NoVulkanDevice("no Vulkan driver (vkCreateInstance)");
  check_vk(created, "vkCreateInstance");

  if (options.validation) {
    auto create = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(instance_, "vkCreateDebugUtilsMessengerEXT"));
    if (!create)
      throw std::runtime_error("VK_EXT_debug_utils has no vkCreateDebugUtilsMessengerEXT");
    check_vk(create(instance_, &messenger, nullptr, &messenger_), "vkCreateDebugUtilsMessengerEXT");
  }
}

void VulkanContext::choose_physical_device() {
  uint32_t n = 0;
  vkEnumeratePhysicalDevices(instance_, &n, nullptr);
  std::vector<VkPhysicalDevice> devices(n);
  vkEnumeratePhysicalDevices(instance_, &n, devices.data());
  int best = 0;
  for (VkPhysicalDevice candidate : devices) {
    VkPhysicalDeviceProperties p;
    vkGetPhysicalDeviceProperties(candidate, &p);
    if (p.apiVersion < VK_API_VERSION_1_2) continue;
    if (surface_ && !has_device_extension(candidate, VK_KHR_SWAPCHAIN_EXTENSION_NAME)) continue;
    uint32_t family_count = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(candidate, &family_count, nullptr);
    std::vector<VkQueueFamilyProperties> families(family_count);
    vkGetPhysicalDeviceQueueFamilyProperties(candidate, &family_count, families.data());
    for (uint32_t f = 0; f < family_count; ++f) {
      VkQueueFlags need = VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT;
      if ((families[f].queueFlags & need) != need) continue;
      if (surface_) {
        VkBool32 present = VK_FALSE;
        vkGetPhysicalDeviceSurfaceSupportKHR(candidate, f, surface_, &present);
        if (!present) continue;
      }
      if (preference(p.deviceType) + 1 > best) {
        best = preference(p.deviceType) + 1;
        physical_device_ = candidate;
        queue_family_ = f;
        properties_ = p;
      }
      break;
    }
  }
  if (!physical_device_)
    throw NoVulkanDevice("no Vulkan 1.2 device with a graphics and compute queue" +
                         std::string(surface_ ? " that presents to the window" : ""));
  vkGetPhysicalDeviceMemoryProperties(physical_device_, &memory_);
}

void VulkanContext::create_device() {
  // What the device supports decides the optional float atomics (mpm88 needs them).
  VkPhysicalDeviceShaderAtomicFloatFeaturesEXT atomic_supported{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_FEATURES_EXT};
  VkPhysicalDeviceVulkan12Features vulkan12_supported{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceFeatures2 supported{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  bool atomic_float =
      has_device_extension(physical_device_, VK_EXT_SHADER_ATOMIC_FLOAT_EXTENSION_NAME);
  supported.pNext = &vulkan12_supported;
  if (atomic_float) vulkan12_supported.pNext = &atomic_supported;
  vkGetPhysicalDeviceFeatures2(physical_device_, &supported);
  if (!vulkan12_supported.timelineSemaphore)
    throw std::runtime_error("the device has no timeline semaphores");

  queue_info_ = {VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  queue_info_.queueFamilyIndex = queue_family_;
  queue_info_.queueCount = 1;
  queue_info_.pQueuePriorities = &queue_priority_;

  atomic_float_ = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_FEATURES_EXT};
  vulkan12_ = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  features_ = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  vulkan12_.timelineSemaphore = VK_TRUE;
  features_.pNext = &vulkan12_;
  if (surface_) device_extensions_.push_back(VK_KHR_SWAPCHAIN_EXTENSION_NAME);
  if (atomic_float && atomic_supported.shaderBufferFloat32AtomicAdd) {
    device_extensions_.push_back(VK_EXT_SHADER_ATOMIC_FLOAT_EXTENSION_NAME);
    atomic_float_.shaderBufferFloat32Atomics = atomic_supported.shaderBufferFloat32Atomics;
    atomic_float_.shaderBufferFloat32AtomicAdd = VK_TRUE;
    vulkan12_.pNext = &atomic_float_;
  }

  device_info_ = {VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  device_info_.pNext = &features_;
  device_info_.queueCreateInfoCount = 1;
  device_info_.pQueueCreateInfos = &queue_info_;
  device_info_.enabledExtensionCount = static_cast<uint32_t>(device_extensions_.size());
  device_info_.ppEnabledExtensionNames = device_extensions_.data();
  check_vk(vkCreateDevice(physical_device_, &device_info_, nullptr, &device_), "vkCreateDevice");
  vkGetDeviceQueue(device_, queue_family_, 0, &queue_);
}

uint32_t VulkanContext::memory_type(uint32_t type_bits, VkMemoryPropertyFlags flags) const {
  for (uint32_t i = 0; i < memory_.memoryTypeCount; ++i)
    if ((type_bits & (1u << i)) && (memory_.memoryTypes[i].propertyFlags & flags) == flags)
      return i;
  throw std::runtime_error("no Vulkan memory type with the properties needed");
}

}  // namespace host_sample
