// The one policy for tests that need a Vulkan device. On a machine with none, the test is
// skipped with the reason ("no Vulkan device: ..."); where LOOM_REQUIRE_VULKAN=1 (CI), a
// missing device fails it instead, so a broken driver install is never a quiet green run.
//
//   TEST(VulkanThing, Works) {
//     LOOM_REQUIRE_VULKAN_OR_SKIP();
//     ...
//   }
//
// In a fixture, call it first in SetUp() (a skip or failure there leaves the body unrun; the
// fixture's TearDown() still runs and must allow for what SetUp did not make).
//
// The probe is plain Vulkan (instance, physical devices), so tests that use only loom.h can
// include this too.
#pragma once

#include <gtest/gtest.h>
#include <vulkan/vulkan.h>

#include <cstdlib>
#include <string>

namespace loom::test_support {

// Why this process has no Vulkan device; "" when it has one. Probed once per process.
inline const std::string& vulkan_unavailable_reason() {
  static const std::string reason = [] {
    VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
    app.apiVersion = VK_API_VERSION_1_2;
    VkInstanceCreateInfo ici{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    ici.pApplicationInfo = &app;
    VkInstance instance = VK_NULL_HANDLE;
    VkResult r = vkCreateInstance(&ici, nullptr, &instance);
    const std::string install = " (Mesa's lavapipe: package mesa-vulkan-drivers)";
    if (r == VK_ERROR_INCOMPATIBLE_DRIVER)
      return "no Vulkan driver found (VK_ERROR_INCOMPATIBLE_DRIVER)" + install;
    if (r != VK_SUCCESS)
      return "vkCreateInstance failed (VkResult " + std::to_string(r) + ")" + install;
    uint32_t count = 0;
    r = vkEnumeratePhysicalDevices(instance, &count, nullptr);
    vkDestroyInstance(instance, nullptr);
    if (r != VK_SUCCESS)
      return "vkEnumeratePhysicalDevices failed (VkResult " + std::to_string(r) + ")";
    return count == 0 ? "the Vulkan driver lists no physical device" + install : std::string();
  }();
  return reason;
}

// $LOOM_REQUIRE_VULKAN=1: a missing device is a failure, not a skip.
inline bool vulkan_required() {
  const char* v = std::getenv("LOOM_REQUIRE_VULKAN");
  return v && std::string(v) == "1";
}

}  // namespace loom::test_support

// Returns from the test (or SetUp) with a skip, or a failure under LOOM_REQUIRE_VULKAN=1:
// for a test that found no device itself and knows why (`reason`, streamable).
#define LOOM_SKIP_FOR_NO_VULKAN(reason)                                            \
  do {                                                                             \
    if (::loom::test_support::vulkan_required())                                   \
      GTEST_FAIL() << "no Vulkan device, and LOOM_REQUIRE_VULKAN=1: " << (reason); \
    GTEST_SKIP() << "no Vulkan device: " << (reason);                              \
  } while (0)

// The same, when no Vulkan device can be made in this process.
#define LOOM_REQUIRE_VULKAN_OR_SKIP()                                                       \
  do {                                                                                      \
    const std::string& loom_no_vulkan_ = ::loom::test_support::vulkan_unavailable_reason(); \
    if (!loom_no_vulkan_.empty()) LOOM_SKIP_FOR_NO_VULKAN(loom_no_vulkan_);                 \
  } while (0)
