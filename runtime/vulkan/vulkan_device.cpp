#include "runtime/vulkan/vulkan_device.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdio>
#include <cstring>

#include "runtime/common/error.h"
#include "runtime/common/spirv_kernel.h"
#include "runtime/vulkan/vk_check.h"

namespace loom::vk {

namespace {

constexpr const char* kValidationLayer = "VK_LAYER_KHRONOS_validation";

std::string type_name(VkPhysicalDeviceType t) {
  switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete GPU";
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated GPU";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual GPU";
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return "CPU";
    default: return "other";
  }
}

int type_rank(VkPhysicalDeviceType t) {
  switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return 4;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return 3;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return 2;
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return 1;
    default: return 0;
  }
}

std::string version_text(uint32_t v) {
  return std::to_string(VK_API_VERSION_MAJOR(v)) + "." + std::to_string(VK_API_VERSION_MINOR(v)) +
         "." + std::to_string(VK_API_VERSION_PATCH(v));
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool has_extension(VkPhysicalDevice pd, const char* name) {
  uint32_t n = 0;
  vkEnumerateDeviceExtensionProperties(pd, nullptr, &n, nullptr);
  std::vector<VkExtensionProperties> all(n);
  vkEnumerateDeviceExtensionProperties(pd, nullptr, &n, all.data());
  for (const auto& e : all)
    if (std::strcmp(e.extensionName, name) == 0) return true;
  return false;
}

bool has_layer(const char* name) {
  uint32_t n = 0;
  vkEnumerateInstanceLayerProperties(&n, nullptr);
  std::vector<VkLayerProperties> all(n);
  vkEnumerateInstanceLayerProperties(&n, all.data());
  for (const auto& l : all)
    if (std::strcmp(l.layerName, name) == 0) return true;
  return false;
}

// A short-lived instance for listing devices.
VkInstance bare_instance() {
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "loom";
  app.apiVersion = VK_API_VERSION_1_2;
  VkInstanceCreateInfo ci{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  ci.pApplicationInfo = &app;
  VkInstance instance = VK_NULL_HANDLE;
  if (vkCreateInstance(&ci, nullptr, &instance) != VK_SUCCESS) return VK_NULL_HANDLE;
  return instance;
}

std::vector<VkPhysicalDevice> physical_devices(VkInstance instance) {
  uint32_t n = 0;
  if (vkEnumeratePhysicalDevices(instance, &n, nullptr) != VK_SUCCESS) return {};
  std::vector<VkPhysicalDevice> all(n);
  vkEnumeratePhysicalDevices(instance, &n, all.data());
  all.resize(n);
  return all;
}

// SpirvRequirement bits of a set of Vulkan features (supported or enabled).
uint32_t kernel_feature_bits(const VkPhysicalDeviceFeatures& f,
                             const VkPhysicalDeviceVulkan11Features& v11,
                             const VkPhysicalDeviceVulkan12Features& v12,
                             const VkPhysicalDeviceShaderAtomicFloatFeaturesEXT& af,
                             const VkPhysicalDeviceShaderAtomicFloat2FeaturesEXT& af2) {
  uint32_t bits = 0;
  if (f.shaderInt64) bits |= kNeedInt64;
  if (f.shaderFloat64) bits |= kNeedFloat64;
  if (f.shaderInt16) bits |= kNeedInt16;
  if (v12.shaderInt8) bits |= kNeedInt8;
  if (v12.storageBuffer8BitAccess) bits |= kNeedStorage8;
  if (v11.storageBuffer16BitAccess) bits |= kNeedStorage16;
  if (v12.shaderBufferInt64Atomics) bits |= kNeedInt64Atomics;
  if (af.shaderBufferFloat32AtomicAdd) bits |= kNeedFloat32AtomicAdd;
  if (af2.shaderBufferFloat32AtomicMinMax) bits |= kNeedFloat32AtomicMinMax;
  if (af.shaderBufferFloat64AtomicAdd) bits |= kNeedFloat64AtomicAdd;
  if (af2.shaderBufferFloat64AtomicMinMax) bits |= kNeedFloat64AtomicMinMax;
  if (f.shaderStorageImageExtendedFormats) bits |= kNeedStorageImageExtendedFormats;
  return bits;
}

// The features a physical device offers that kernels may use, queried in one chain.
struct OfferedFeatures {
  bool atomic_float = false, atomic_float2 = false;  // the extensions are there
  VkPhysicalDeviceShaderAtomicFloat2FeaturesEXT af2{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_2_FEATURES_EXT};
  VkPhysicalDeviceShaderAtomicFloatFeaturesEXT af{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_FEATURES_EXT};
  VkPhysicalDeviceVulkan12Features v12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceVulkan11Features v11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};

  // `api_version`: what the instance may call. Below 1.1 there is no
  // vkGetPhysicalDeviceFeatures2 (core 1.1), so only the 1.0 features are queried: what a
  // Vulkan 1.0 device's kernels use (kSpirv1_0Requirements).
  explicit OfferedFeatures(VkPhysicalDevice pd, uint32_t api_version = VK_API_VERSION_1_2) {
    if (api_version < VK_API_VERSION_1_1) {
      vkGetPhysicalDeviceFeatures(pd, &f2.features);
      return;
    }
    atomic_float = has_extension(pd, VK_EXT_SHADER_ATOMIC_FLOAT_EXTENSION_NAME);
    atomic_float2 = atomic_float && has_extension(pd, VK_EXT_SHADER_ATOMIC_FLOAT_2_EXTENSION_NAME);
    f2.pNext = &v11;
    v11.pNext = &v12;
    if (atomic_float) v12.pNext = &af;
    if (atomic_float2) af.pNext = &af2;
    vkGetPhysicalDeviceFeatures2(pd, &f2);
  }
  OfferedFeatures(const OfferedFeatures&) = delete;  // the chain points into itself
  OfferedFeatures& operator=(const OfferedFeatures&) = delete;

  // The SpirvRequirement bits (an imported device's host can have enabled no others).
  uint32_t kernel_features() const { return kernel_feature_bits(f2.features, v11, v12, af, af2); }
};

std::atomic<int>& shutdown_messages() {
  static std::atomic<int> count{0};
  return count;
}

}  // namespace

int validation_messages_at_shutdown() { return shutdown_messages().load(); }

uint32_t preferred_workgroup_size(const DeviceCaps& caps) {
  const uint32_t subgroup = caps.subgroup_size ? caps.subgroup_size : 32;
  // A CPU device runs a workgroup's invocations in SIMD batches of its subgroup on one thread;
  // the batch count per workgroup amortises each workgroup's start (lavapipe measured in
  // bench/README.md).
  uint32_t size = caps.type == "CPU" ? kCpuDeviceWorkgroupSize : std::max(64u, 4 * subgroup);
  size = std::min({size, caps.max_workgroup_size_x, caps.max_workgroup_invocations});
  return std::max(subgroup, size - size % subgroup);
}

std::string DeviceCaps::signature() const {
  char buf[256];
  std::snprintf(buf, sizeof buf, "%s|%04x:%04x|driver %u|api %s|features %x|", name.c_str(),
                vendor_id, device_id, driver_version, version_text(api_version).c_str(), features);
  std::string s = buf;
  for (uint8_t b : pipeline_cache_uuid) {
    std::snprintf(buf, sizeof buf, "%02x", b);
    s += buf;
  }
  return s;
}

std::vector<DeviceInfo> enumerate_devices() {
  std::vector<DeviceInfo> out;
  VkInstance instance = bare_instance();
  if (!instance) return out;
  int index = 0;
  for (VkPhysicalDevice pd : physical_devices(instance)) {
    VkPhysicalDeviceProperties p;
    vkGetPhysicalDeviceProperties(pd, &p);
    out.push_back({index++, p.deviceName, type_name(p.deviceType), p.apiVersion});
  }
  vkDestroyInstance(instance, nullptr);
  return out;
}

VulkanDevice::VulkanDevice(const DeviceOptions& options) {
  try {
    graphics_ = options.graphics || static_cast<bool>(options.surface);
    create_instance(options);
    if (options.surface) {
      surface_ = options.surface(instance_);
      if (!surface_) throw Error("could not create a Vulkan surface for the window");
    }
    pick_physical(options);
    create_device();
  } catch (...) {
    release();
    throw;
  }
  if (options.notice)
    options.notice("Vulkan device: " + caps_.name + " (" + caps_.type + ", Vulkan " +
                   version_text(caps_.api_version) + ")");
}

void set_enabled_features(ImportedDevice& device, const VkDeviceCreateInfo& info) {
  VkPhysicalDeviceFeatures f{};
  VkPhysicalDeviceVulkan11Features v11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  VkPhysicalDeviceVulkan12Features v12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceShaderAtomicFloatFeaturesEXT af{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_FEATURES_EXT};
  VkPhysicalDeviceShaderAtomicFloat2FeaturesEXT af2{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_2_FEATURES_EXT};
  if (info.pEnabledFeatures) f = *info.pEnabledFeatures;
  bool timeline = false;
  auto on = [](VkBool32& into, VkBool32 value) { into = into || value; };
  for (auto* s = static_cast<const VkBaseInStructure*>(info.pNext); s; s = s->pNext) {
    switch (s->sType) {
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2:
        f = reinterpret_cast<const VkPhysicalDeviceFeatures2*>(s)->features;
        break;
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES:
        on(v11.storageBuffer16BitAccess,
           reinterpret_cast<const VkPhysicalDeviceVulkan11Features*>(s)->storageBuffer16BitAccess);
        break;
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES:
        on(v11.storageBuffer16BitAccess,
           reinterpret_cast<const VkPhysicalDevice16BitStorageFeatures*>(s)
               ->storageBuffer16BitAccess);
        break;
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES: {
        const auto* v = reinterpret_cast<const VkPhysicalDeviceVulkan12Features*>(s);
        on(v12.shaderInt8, v->shaderInt8);
        on(v12.storageBuffer8BitAccess, v->storageBuffer8BitAccess);
        on(v12.shaderBufferInt64Atomics, v->shaderBufferInt64Atomics);
        timeline = timeline || v->timelineSemaphore;
        break;
      }
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES:
        on(v12.storageBuffer8BitAccess,
           reinterpret_cast<const VkPhysicalDevice8BitStorageFeatures*>(s)
               ->storageBuffer8BitAccess);
        break;
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES:
        on(v12.shaderInt8,
           reinterpret_cast<const VkPhysicalDeviceShaderFloat16Int8Features*>(s)->shaderInt8);
        break;
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_INT64_FEATURES:
        on(v12.shaderBufferInt64Atomics,
           reinterpret_cast<const VkPhysicalDeviceShaderAtomicInt64Features*>(s)
               ->shaderBufferInt64Atomics);
        break;
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES:
        timeline = timeline || reinterpret_cast<const VkPhysicalDeviceTimelineSemaphoreFeatures*>(s)
                                   ->timelineSemaphore;
        break;
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_FEATURES_EXT:
        af = *reinterpret_cast<const VkPhysicalDeviceShaderAtomicFloatFeaturesEXT*>(s);
        break;
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_2_FEATURES_EXT:
        af2 = *reinterpret_cast<const VkPhysicalDeviceShaderAtomicFloat2FeaturesEXT*>(s);
        break;
      default: break;
    }
  }
  // Extension features count only with their extension enabled.
  auto enabled = [&](const char* name) {
    for (uint32_t i = 0; i < info.enabledExtensionCount; ++i)
      if (std::strcmp(info.ppEnabledExtensionNames[i], name) == 0) return true;
    return false;
  };
  if (!enabled(VK_EXT_SHADER_ATOMIC_FLOAT_EXTENSION_NAME))
    af = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_FEATURES_EXT};
  if (!enabled(VK_EXT_SHADER_ATOMIC_FLOAT_2_EXTENSION_NAME))
    af2 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_2_FEATURES_EXT};
  device.timeline_semaphore = timeline;
  device.kernel_features = kernel_feature_bits(f, v11, v12, af, af2);
  device.memory_budget = enabled(VK_EXT_MEMORY_BUDGET_EXTENSION_NAME);
}

void check_compute_queue_family(const std::vector<VkQueueFamilyProperties>& families,
                                uint32_t family, const std::string& device_name) {
  if (family >= families.size())
    throw Error("importing a Vulkan device: queue family " + std::to_string(family) +
                " does not exist on '" + device_name + "', which has " +
                std::to_string(families.size()));
  if (!(families[family].queueFlags & VK_QUEUE_COMPUTE_BIT))
    throw Error("importing a Vulkan device: queue family " + std::to_string(family) + " of '" +
                device_name +
                "' does not support compute, which Loom's kernels need; pass a family with "
                "VK_QUEUE_COMPUTE_BIT");
}

VulkanDevice::VulkanDevice(const ImportedDevice& host) : imported_(true) {
  auto require = [](bool present, const char* handle) {
    if (!present)
      throw Error(std::string("importing a Vulkan device: ImportedDevice::") + handle +
                  " is VK_NULL_HANDLE");
  };
  require(host.instance, "instance");
  require(host.physical, "physical");
  require(host.device, "device");
  require(host.queue, "queue");
  instance_ = host.instance;
  physical_ = host.physical;
  device_ = host.device;
  queue_ = host.queue;
  if (static_cast<bool>(host.lock_queue) != static_cast<bool>(host.unlock_queue))
    throw Error("importing a Vulkan device: give both lock_queue and unlock_queue, or neither");
  lock_queue_ = host.lock_queue;
  host_pipeline_cache_ = host.pipeline_cache;
  unlock_queue_ = host.unlock_queue;
  queue_family_ = host.queue_family;
  VkPhysicalDeviceProperties props;
  vkGetPhysicalDeviceProperties(physical_, &props);
  std::string name = props.deviceName;
  uint32_t n = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(physical_, &n, nullptr);
  std::vector<VkQueueFamilyProperties> families(n);
  vkGetPhysicalDeviceQueueFamilyProperties(physical_, &n, families.data());
  check_compute_queue_family(families, queue_family_, name);
  if (host.api_version < VK_API_VERSION_1_0 || props.apiVersion < VK_API_VERSION_1_0)
    throw Error("importing a Vulkan device: Loom needs Vulkan 1.0 or later; '" + name +
                "' offers " + version_text(props.apiVersion) +
                " and ImportedDevice::api_version (the instance's apiVersion) says " +
                (host.api_version ? version_text(host.api_version) : std::string("nothing")));
  vkGetPhysicalDeviceMemoryProperties(physical_, &memory_);
  granularity_ = props.limits.bufferImageGranularity;
  // What the host's instance asked for bounds what Loom may use (entry points, SPIR-V
  // versions): fill_caps and OfferedFeatures call nothing newer.
  caps_.api_version = std::min(host.api_version, props.apiVersion);
  // Loom's timeline path calls Vulkan 1.2 entry points (vkGetSemaphoreCounterValue): below
  // 1.2 its submissions are tracked by fences whatever the host enabled.
  timeline_semaphores_ = host.timeline_semaphore && caps_.api_version >= VK_API_VERSION_1_2;
  fill_caps(
      host.kernel_features &
      (OfferedFeatures(physical_, caps_.api_version).kernel_features() | kNeedSubgroupArithmetic));
  // Memory hooks: the host's allocation callbacks and block allocator, its heap budgets.
  if (static_cast<bool>(host.allocate_memory) != static_cast<bool>(host.free_memory))
    throw Error("importing a Vulkan device: give both allocate_memory and free_memory, or neither");
  host_allocator_ = host.allocation_callbacks;
  host_allocate_memory_ = host.allocate_memory;
  host_free_memory_ = host.free_memory;
  // vkGetPhysicalDeviceMemoryProperties2 is core from 1.1; older instances report no budget.
  memory_budget_ = host.memory_budget && caps_.api_version >= VK_API_VERSION_1_1;
}

VulkanDevice::~VulkanDevice() { release(); }

VkResult VulkanDevice::allocate_memory(const VkMemoryAllocateInfo& info,
                                       VkDeviceMemory* memory) const {
  if (host_allocate_memory_) return host_allocate_memory_(info, memory);
  return vkAllocateMemory(device_, &info, host_allocator_, memory);
}

void VulkanDevice::free_memory(VkDeviceMemory memory) const {
  if (host_free_memory_) {
    host_free_memory_(memory);
    return;
  }
  vkFreeMemory(device_, memory, host_allocator_);
}

bool VulkanDevice::memory_budget(VkPhysicalDeviceMemoryBudgetPropertiesEXT* out) const {
  if (!memory_budget_) return false;
  VkPhysicalDeviceMemoryBudgetPropertiesEXT budget{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_BUDGET_PROPERTIES_EXT};
  VkPhysicalDeviceMemoryProperties2 properties{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_PROPERTIES_2, &budget};
  vkGetPhysicalDeviceMemoryProperties2(physical_, &properties);
  *out = budget;
  out->pNext = nullptr;
  return true;
}

void VulkanDevice::release() {
  if (imported_) {  // the host's handles: never ours to wait on or destroy
    device_ = VK_NULL_HANDLE;
    instance_ = VK_NULL_HANDLE;
    return;
  }
  if (device_) {
    vkDeviceWaitIdle(device_);  // destruction only: never on the hot path
    vkDestroyDevice(device_, nullptr);
    device_ = VK_NULL_HANDLE;
  }
  if (surface_) {
    vkDestroySurfaceKHR(instance_, surface_, nullptr);
    surface_ = VK_NULL_HANDLE;
  }
  if (messenger_) {
    // Nobody is left to throw to: what the layer says now (leaked objects...) goes to stderr
    // and into a count the test harness checks at exit.
    for (const std::string& m : take_messages()) {
      std::fprintf(stderr, "loom: Vulkan validation at shutdown: %s\n", m.c_str());
      shutdown_messages().fetch_add(1);
    }
    auto destroy = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(instance_, "vkDestroyDebugUtilsMessengerEXT"));
    if (destroy) destroy(instance_, messenger_, nullptr);
    messenger_ = VK_NULL_HANDLE;
  }
  if (instance_) {
    vkDestroyInstance(instance_, nullptr);
    instance_ = VK_NULL_HANDLE;
  }
}

VKAPI_ATTR VkBool32 VKAPI_CALL VulkanDevice::on_message(
    VkDebugUtilsMessageSeverityFlagBitsEXT severity, VkDebugUtilsMessageTypeFlagsEXT types,
    const VkDebugUtilsMessengerCallbackDataEXT* data, void* self) {
  auto* device = static_cast<VulkanDevice*>(self);
  bool validation = types & VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT;
  bool error = severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  if (!validation && !error) return VK_FALSE;  // loader chatter
  std::lock_guard<std::mutex> lock(device->messages_mutex_);
  device->messages_.push_back(std::string(error ? "error: " : "warning: ") +
                              (data->pMessage ? data->pMessage : ""));
  return VK_FALSE;
}

std::vector<std::string> VulkanDevice::take_messages() {
  std::lock_guard<std::mutex> lock(messages_mutex_);
  std::vector<std::string> out;
  out.swap(messages_);
  return out;
}

// A queue family with compute, also graphics (preferred always: a render loop can share the
// queue; required when asked) and presentation to the surface when there is one.
bool VulkanDevice::queue_family_for(VkPhysicalDevice pd, uint32_t* family) const {
  uint32_t n = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, nullptr);
  std::vector<VkQueueFamilyProperties> fams(n);
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, fams.data());
  for (int pass = 0; pass < 2; ++pass)
    for (uint32_t i = 0; i < n; ++i) {
      bool compute = fams[i].queueFlags & VK_QUEUE_COMPUTE_BIT;
      bool graphics = fams[i].queueFlags & VK_QUEUE_GRAPHICS_BIT;
      if (!compute || ((pass == 0 || graphics_) && !graphics)) continue;
      if (surface_) {
        VkBool32 present = VK_FALSE;
        vkGetPhysicalDeviceSurfaceSupportKHR(pd, i, surface_, &present);
        if (!present || !has_extension(pd, VK_KHR_SWAPCHAIN_EXTENSION_NAME)) continue;
      }
      *family = i;
      return true;
    }
  return false;
}

void VulkanDevice::create_instance(const DeviceOptions& options) {
  bool validation = options.validation;
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "loom";
  app.pEngineName = "loom";
  app.apiVersion = VK_API_VERSION_1_2;
  std::vector<const char*> layers, extensions;
  for (const std::string& e : options.instance_extensions) extensions.push_back(e.c_str());
  if (validation) {
    if (!has_layer(kValidationLayer))
      throw Error(
          "Vulkan validation was asked for, but VK_LAYER_KHRONOS_validation is not installed "
          "(Debian package vulkan-validationlayers)");
    layers.push_back(kValidationLayer);
    extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
  }
  VkDebugUtilsMessengerCreateInfoEXT mci{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
  mci.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                        VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  mci.messageType =
      VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT;
  mci.pfnUserCallback = &VulkanDevice::on_message;
  mci.pUserData = this;
  VkInstanceCreateInfo ci{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  ci.pApplicationInfo = &app;
  ci.enabledLayerCount = static_cast<uint32_t>(layers.size());
  ci.ppEnabledLayerNames = layers.data();
  ci.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  ci.ppEnabledExtensionNames = extensions.data();
  if (validation) ci.pNext = &mci;  // also covers instance creation itself
  VkResult r = vkCreateInstance(&ci, nullptr, &instance_);
  if (r == VK_ERROR_INCOMPATIBLE_DRIVER || r == VK_ERROR_INITIALIZATION_FAILED)
    throw Error(
        std::string("no Vulkan driver found (") + result_name(r) +
        "); install one (Mesa's lavapipe: package mesa-vulkan-drivers) or use the CPU backend");
  check(r, "creating the Vulkan instance");
  if (validation) {
    auto create = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(instance_, "vkCreateDebugUtilsMessengerEXT"));
    if (!create) throw Error("the Vulkan loader lacks vkCreateDebugUtilsMessengerEXT");
    check(create(instance_, &mci, nullptr, &messenger_), "creating the validation messenger");
  }
}

void VulkanDevice::pick_physical(const DeviceOptions& options) {
  std::vector<VkPhysicalDevice> all = physical_devices(instance_);
  if (all.empty())
    throw Error(
        "no Vulkan device found; install a driver (Mesa's lavapipe: package mesa-vulkan-drivers) "
        "or use "
        "the CPU backend");
  std::string list;
  std::vector<bool> usable(all.size());
  std::vector<VkPhysicalDeviceProperties> props(all.size());
  for (size_t i = 0; i < all.size(); ++i) {
    vkGetPhysicalDeviceProperties(all[i], &props[i]);
    uint32_t family;
    usable[i] = props[i].apiVersion >= VK_API_VERSION_1_2 && queue_family_for(all[i], &family);
    std::string needs =
        surface_    ? "Vulkan 1.2 and a queue that computes, draws and presents to the window"
        : graphics_ ? "Vulkan 1.2 and a queue that computes and draws"
                    : "Vulkan 1.2 and a compute queue";
    list += "\n  " + std::to_string(i) + ": " + props[i].deviceName + " (" +
            type_name(props[i].deviceType) + ", Vulkan " + version_text(props[i].apiVersion) +
            (usable[i] ? "" : ", unusable: needs " + needs) + ")";
  }
  int chosen = -1;
  const std::string& sel = options.select;
  if (sel.empty()) {
    for (size_t i = 0; i < all.size(); ++i)
      if (usable[i] && (chosen < 0 || type_rank(props[i].deviceType) >
                                          type_rank(props[static_cast<size_t>(chosen)].deviceType)))
        chosen = static_cast<int>(i);
  } else if (std::all_of(sel.begin(), sel.end(),
                         [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
    if (sel.size() > 6 || std::stoul(sel) >= all.size())
      throw Error("no Vulkan device " + sel + "; devices are:" + list);
    chosen = static_cast<int>(std::stoul(sel));
  } else {
    for (size_t i = 0; i < all.size() && chosen < 0; ++i)
      if (lower(props[i].deviceName).find(lower(sel)) != std::string::npos)
        chosen = static_cast<int>(i);
    if (chosen < 0) throw Error("no Vulkan device matches '" + sel + "'; devices are:" + list);
  }
  if (chosen < 0) throw Error("no usable Vulkan device; devices are:" + list);
  if (!usable[static_cast<size_t>(chosen)])
    throw Error("Vulkan device '" + std::string(props[static_cast<size_t>(chosen)].deviceName) +
                "' cannot be used here; devices are:" + list);
  physical_ = all[static_cast<size_t>(chosen)];
  queue_family_for(physical_, &queue_family_);
}

void VulkanDevice::create_device() {
  VkPhysicalDeviceProperties props;
  vkGetPhysicalDeviceProperties(physical_, &props);
  vkGetPhysicalDeviceMemoryProperties(physical_, &memory_);
  granularity_ = props.limits.bufferImageGranularity;

  const OfferedFeatures offered(physical_);
  const bool atomic_float = offered.atomic_float, atomic_float2 = offered.atomic_float2;
  const auto& af2 = offered.af2;
  const auto& af = offered.af;
  const auto& v12 = offered.v12;
  const auto& v11 = offered.v11;
  const auto& f2 = offered.f2;
  if (!v12.timelineSemaphore)
    throw Error(std::string("Vulkan device '") + props.deviceName +
                "' lacks timeline semaphores, which Loom needs");

  // What we turn on: only what kernels may use.
  VkPhysicalDeviceShaderAtomicFloat2FeaturesEXT on_af2{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_2_FEATURES_EXT};
  on_af2.shaderBufferFloat32AtomicMinMax = af2.shaderBufferFloat32AtomicMinMax;
  on_af2.shaderBufferFloat64AtomicMinMax = af2.shaderBufferFloat64AtomicMinMax;
  VkPhysicalDeviceShaderAtomicFloatFeaturesEXT on_af{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_FEATURES_EXT};
  on_af.shaderBufferFloat32Atomics = af.shaderBufferFloat32Atomics;
  on_af.shaderBufferFloat32AtomicAdd = af.shaderBufferFloat32AtomicAdd;
  on_af.shaderBufferFloat64Atomics = af.shaderBufferFloat64Atomics;
  on_af.shaderBufferFloat64AtomicAdd = af.shaderBufferFloat64AtomicAdd;
  VkPhysicalDeviceVulkan12Features on12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  on12.timelineSemaphore = VK_TRUE;
  on12.shaderInt8 = v12.shaderInt8;
  on12.storageBuffer8BitAccess = v12.storageBuffer8BitAccess;
  on12.shaderBufferInt64Atomics = v12.shaderBufferInt64Atomics;
  VkPhysicalDeviceVulkan11Features on11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  on11.storageBuffer16BitAccess = v11.storageBuffer16BitAccess;
  VkPhysicalDeviceFeatures2 on{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  on.features.shaderInt64 = f2.features.shaderInt64;
  on.features.shaderFloat64 = f2.features.shaderFloat64;
  on.features.shaderInt16 = f2.features.shaderInt16;
  on.features.shaderStorageImageExtendedFormats = f2.features.shaderStorageImageExtendedFormats;
  on.pNext = &on11;
  on11.pNext = &on12;
  std::vector<const char*> extensions;
  if (surface_) extensions.push_back(VK_KHR_SWAPCHAIN_EXTENSION_NAME);
  if (atomic_float) {
    on12.pNext = &on_af;
    extensions.push_back(VK_EXT_SHADER_ATOMIC_FLOAT_EXTENSION_NAME);
  }
  if (atomic_float2) {
    on_af.pNext = &on_af2;
    extensions.push_back(VK_EXT_SHADER_ATOMIC_FLOAT_2_EXTENSION_NAME);
  }

  float priority = 1.0f;
  VkDeviceQueueCreateInfo qci{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  qci.queueFamilyIndex = queue_family_;
  qci.queueCount = 1;
  qci.pQueuePriorities = &priority;
  VkDeviceCreateInfo dci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  dci.pNext = &on;
  dci.queueCreateInfoCount = 1;
  dci.pQueueCreateInfos = &qci;
  dci.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  dci.ppEnabledExtensionNames = extensions.data();
  check(vkCreateDevice(physical_, &dci, nullptr, &device_),
        std::string("creating a device on '") + props.deviceName + "'");
  vkGetDeviceQueue(device_, queue_family_, 0, &queue_);

  fill_caps(kernel_feature_bits(on.features, on11, on12, on_af, on_af2) | kNeedSubgroupArithmetic);
}

// Capabilities codegen may target; `features`: the SpirvRequirement bits enabled, with
// kNeedSubgroupArithmetic where Loom may use it, kept only if the device has it.
// An imported device's caps_.api_version is set before: Loom calls nothing newer than it (no
// vkGetPhysicalDeviceProperties2 on a Vulkan 1.0 instance, and no subgroup size there).
void VulkanDevice::fill_caps(uint32_t features) {
  VkPhysicalDeviceSubgroupProperties subgroup{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
  VkPhysicalDeviceProperties2 p2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  vkGetPhysicalDeviceProperties(physical_, &p2.properties);
  const uint32_t usable = imported_ ? caps_.api_version : p2.properties.apiVersion;
  if (usable >= VK_API_VERSION_1_1) {
    p2.pNext = &subgroup;
    vkGetPhysicalDeviceProperties2(physical_, &p2);
  }
  const VkPhysicalDeviceProperties& props = p2.properties;
  caps_.name = props.deviceName;
  caps_.type = type_name(props.deviceType);
  caps_.discrete = props.deviceType == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU;
  caps_.vendor_id = props.vendorID;
  caps_.device_id = props.deviceID;
  caps_.driver_version = props.driverVersion;
  caps_.api_version = usable;
  caps_.max_push_constants = props.limits.maxPushConstantsSize;
  caps_.max_storage_buffer_range = props.limits.maxStorageBufferRange;
  caps_.max_uniform_buffer_range = props.limits.maxUniformBufferRange;
  caps_.max_workgroup_count_x = props.limits.maxComputeWorkGroupCount[0];
  caps_.max_workgroup_count_y = props.limits.maxComputeWorkGroupCount[1];
  caps_.max_workgroup_count_z = props.limits.maxComputeWorkGroupCount[2];
  caps_.max_workgroup_size_x = std::min(props.limits.maxComputeWorkGroupSize[0],
                                        props.limits.maxComputeWorkGroupInvocations);
  caps_.max_workgroup_size_y = props.limits.maxComputeWorkGroupSize[1];
  caps_.max_workgroup_size_z = props.limits.maxComputeWorkGroupSize[2];
  caps_.max_workgroup_invocations = props.limits.maxComputeWorkGroupInvocations;
  caps_.max_workgroup_memory = props.limits.maxComputeSharedMemorySize;
  caps_.subgroup_size = subgroup.subgroupSize;
  caps_.min_storage_offset_alignment =
      static_cast<uint32_t>(props.limits.minStorageBufferOffsetAlignment);
  caps_.min_uniform_offset_alignment =
      static_cast<uint32_t>(props.limits.minUniformBufferOffsetAlignment);
  std::memcpy(caps_.pipeline_cache_uuid, props.pipelineCacheUUID, VK_UUID_SIZE);
  // Subgroup operations are a Vulkan 1.1 property, nothing to enable: reductions may use
  // them wherever compute shaders have the basic and arithmetic ones.
  constexpr VkSubgroupFeatureFlags kArithmetic =
      VK_SUBGROUP_FEATURE_BASIC_BIT | VK_SUBGROUP_FEATURE_ARITHMETIC_BIT;
  if (usable < VK_API_VERSION_1_1 || !(subgroup.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) ||
      (subgroup.supportedOperations & kArithmetic) != kArithmetic)
    features &= ~uint32_t{kNeedSubgroupArithmetic};
  caps_.features = features;
}

}  // namespace loom::vk
