// The engine's own Vulkan device: an instance of API 1.2 or later, one queue family that does
// graphics and compute (and presents, when there is a window), timeline semaphores, and
// VK_EXT_shader_atomic_float's shaderBufferFloat32AtomicAdd where the device has it. The
// VkDeviceCreateInfo stays alive with the context: Loom reads which features it enabled.
#pragma once

#include <vulkan/vulkan.h>

#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace host_sample {

// Throws std::runtime_error naming `what` unless `result` is VK_SUCCESS.
void check_vk(VkResult result, const char* what);

// There is no Vulkan driver, or no device the sample can use.
struct NoVulkanDevice : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct VulkanContextOptions {
  bool validation = false;                       // VK_LAYER_KHRONOS_validation, messages counted
  std::vector<const char*> instance_extensions;  // a window system's (GLFW's)
  std::function<VkSurfaceKHR(VkInstance)> make_surface;  // windowed: the surface to present to
};

class VulkanContext {
 public:
  explicit VulkanContext(const VulkanContextOptions& options);
  ~VulkanContext();
  VulkanContext(const VulkanContext&) = delete;
  VulkanContext& operator=(const VulkanContext&) = delete;

  VkInstance instance() const { return instance_; }
  VkPhysicalDevice physical_device() const { return physical_device_; }
  VkDevice device() const { return device_; }
  uint32_t queue_family() const { return queue_family_; }
  VkQueue queue() const { return queue_; }
  VkSurfaceKHR surface() const { return surface_; }
  uint32_t api_version() const { return api_version_; }
  const VkDeviceCreateInfo& device_create_info() const { return device_info_; }
  const VkPhysicalDeviceProperties& properties() const { return properties_; }
  bool float_atomic_add() const { return atomic_float_.shaderBufferFloat32AtomicAdd == VK_TRUE; }

  // A memory type among `type_bits` with `flags`; throws when there is none.
  uint32_t memory_type(uint32_t type_bits, VkMemoryPropertyFlags flags) const;
  // Validation messages (warnings and errors) reported so far.
  int validation_messages() const { return validation_messages_; }

 private:
  static VKAPI_ATTR VkBool32 VKAPI_CALL on_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                   VkDebugUtilsMessageTypeFlagsEXT type,
                                                   const VkDebugUtilsMessengerCallbackDataEXT* data,
                                                   void* self);
  void create_instance(const VulkanContextOptions& options);
  void choose_physical_device();
  void create_device();
  void destroy();

  VkInstance instance_ = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
  VkSurfaceKHR surface_ = VK_NULL_HANDLE;
  VkPhysicalDevice physical_device_ = VK_NULL_HANDLE;
  VkPhysicalDeviceProperties properties_{};
  VkPhysicalDeviceMemoryProperties memory_{};
  VkDevice device_ = VK_NULL_HANDLE;
  uint32_t queue_family_ = 0;
  VkQueue queue_ = VK_NULL_HANDLE;
  uint32_t api_version_ = VK_API_VERSION_1_2;
  int validation_messages_ = 0;

  // What the device was created with, kept for Loom (the pNext chain points into these).
  float queue_priority_ = 1.0f;
  VkDeviceQueueCreateInfo queue_info_{};
  std::vector<const char*> device_extensions_;
  VkPhysicalDeviceShaderAtomicFloatFeaturesEXT atomic_float_{};
  VkPhysicalDeviceVulkan12Features vulkan12_{};
  VkPhysicalDeviceFeatures2 features_{};
  VkDeviceCreateInfo device_info_{};
};

}  // namespace host_sample
