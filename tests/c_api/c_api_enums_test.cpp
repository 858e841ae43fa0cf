// Every place the C ABI takes an enum from its caller, given integers outside the enum
// (-1, 999, the int32 extremes): C lets a caller pass any int there. Each must be refused
// with LOOM_ERROR_INVALID_ARGUMENT (or the code loom.h gives for an unusable value) and a
// message naming the argument and the integer, never read as an enumerator.
#include <gtest/gtest.h>
#include <loom/loom.h>

#include <climits>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "tests/support/host_vulkan_device.h"
#include "tests/support/vulkan_required.h"

namespace {

// The enum object a C caller makes with `(LoomDataType)v`. Made from its bytes: a C++
// conversion of a value outside the enum would itself be undefined behaviour.
template <typename E>
E from_int(int32_t v) {
  static_assert(sizeof(E) == sizeof(int32_t));
  E e;
  std::memcpy(&e, &v, sizeof e);
  return e;
}

const std::vector<int32_t> kBad = {-1, 999, INT32_MIN, INT32_MAX, 0};

std::string module_path(const char* arch, const std::string& name) {
  return std::string(LOOM_TEST_MODULES) + "/" + arch + "/" + name + ".loommod";
}

// Refused with `code`, the message naming `names` and the integer.
void expect_refused(LoomResult r, LoomResult code, const std::string& names, int32_t v) {
  std::string m = loom_last_error_message();
  EXPECT_EQ(r, code) << loom_result_name(r) << ": " << m;
  EXPECT_NE(m.find(names), std::string::npos) << m;
  EXPECT_NE(m.find(std::to_string(v)), std::string::npos) << m;
}

class CApiEnums : public testing::Test {
 protected:
  void SetUp() override {
    LoomRuntimeCreateInfo info{};
    info.struct_size = sizeof info;
    info.arch = LOOM_ARCH_CPU;
    info.cpu_threads = 1;
    ASSERT_EQ(loom_runtime_create(&info, &runtime), LOOM_SUCCESS) << loom_last_error_message();
  }
  void TearDown() override {
    for (LoomModule m : modules) EXPECT_EQ(loom_module_destroy(m), LOOM_SUCCESS);
    if (runtime) EXPECT_EQ(loom_runtime_destroy(runtime), LOOM_SUCCESS);
  }
  LoomModule load(const std::string& name) {
    LoomModule m = nullptr;
    EXPECT_EQ(loom_module_load(runtime, module_path("cpu", name).c_str(), &m), LOOM_SUCCESS)
        << loom_last_error_message();
    if (m) modules.push_back(m);
    return m;
  }
  LoomRuntime runtime = nullptr;
  std::vector<LoomModule> modules;
};

TEST_F(CApiEnums, ResultNamesOfNoResultAreUnknown) {
  // Results are 0 and negative: -1 is LOOM_ERROR_NULL_HANDLE.
  for (int32_t v : {999, -999, INT32_MIN, INT32_MAX})
    EXPECT_STREQ(loom_result_name(from_int<LoomResult>(v)), "LOOM_ERROR_UNKNOWN") << v;
}

TEST_F(CApiEnums, RuntimeArch) {
  for (int32_t v : kBad) {
    LoomRuntimeCreateInfo info{};
    info.struct_size = sizeof info;
    info.arch = from_int<LoomArch>(v);
    LoomRuntime r = nullptr;
    expect_refused(loom_runtime_create(&info, &r), LOOM_ERROR_INVALID_ARGUMENT, "arch", v);
    EXPECT_EQ(r, nullptr);
  }
}

TEST_F(CApiEnums, ModuleItem) {
  LoomModule m = load("args");
  ASSERT_NE(m, nullptr);
  for (int32_t v : kBad) {
    const char* name = nullptr;
    expect_refused(loom_module_get_item_name(m, from_int<LoomModuleItem>(v), 0, &name),
                   LOOM_ERROR_INVALID_ARGUMENT, "item: " + std::to_string(v), v);
  }
}

TEST_F(CApiEnums, TemplateArgumentKindAndDtype) {
  LoomModule open = load("open");
  ASSERT_NE(open, nullptr);
  for (int32_t v : kBad) {
    LoomTemplateArgument t{};
    t.name = "arr", t.kind = from_int<LoomTemplateKind>(v), t.dtype = LOOM_DTYPE_F32;
    t.components = 1, t.ndim = 1;
    LoomKernel k = nullptr;
    expect_refused(loom_module_get_kernel(open, "iota", 1, &t, &k), LOOM_ERROR_INVALID_ARGUMENT,
                   "template argument 'arr' has kind", v);
    t.kind = LOOM_TEMPLATE_NDARRAY, t.dtype = from_int<LoomDataType>(v);
    expect_refused(loom_module_get_kernel(open, "iota", 1, &t, &k), LOOM_ERROR_INVALID_ARGUMENT,
                   "template argument 'arr': " + std::to_string(v) + " is not a LoomDataType", v);
  }
}

TEST_F(CApiEnums, ArgumentKindAndDtypeForLaunchesPipelinesAndArgpacks) {
  LoomModule m = load("args");
  ASSERT_NE(m, nullptr);
  LoomKernel run = nullptr;
  ASSERT_EQ(loom_module_get_kernel(m, "run", 0, nullptr, &run), LOOM_SUCCESS);
  int64_t n = 32;
  LoomArray arr = nullptr;
  ASSERT_EQ(loom_ndarray_create(runtime, LOOM_DTYPE_I32, 1, 1, &n, &arr), LOOM_SUCCESS);
  LoomArgument v3{LOOM_ARGUMENT_VALUE, LOOM_DTYPE_I32, 3, {{0}}};
  LoomModule packs = load("argpacks");
  ASSERT_NE(packs, nullptr);
  LoomArgpack abc = nullptr;
  ASSERT_EQ(loom_module_get_argpack(packs, "abc", &abc), LOOM_SUCCESS);
  for (int32_t v : kBad) {
    LoomArgument args[3] = {loom_arg_i32(1), loom_arg_ndarray(arr), v3};
    args[0].kind = from_int<LoomArgumentKind>(v);
    expect_refused(
        loom_launch(run, 3, args), LOOM_ERROR_INVALID_ARGUMENT,
        "parameter 'base' (argument 0): kind " + std::to_string(v) + " is not a LoomArgumentKind",
        v);
    args[0] = loom_arg_i32(1);
    args[2].dtype = from_int<LoomDataType>(v);
    expect_refused(loom_launch(run, 3, args), LOOM_ERROR_INVALID_ARGUMENT,
                   "parameter 'v' (argument 2): " + std::to_string(v) + " is not a LoomDataType",
                   v);
    LoomArgument member = loom_arg_i32(5);
    member.kind = from_int<LoomArgumentKind>(v);
    expect_refused(loom_argpack_set(abc, "a", &member), LOOM_ERROR_INVALID_ARGUMENT,
                   "member 'a': kind " + std::to_string(v), v);
    member = loom_arg_i32(5);
    member.dtype = from_int<LoomDataType>(v);
    expect_refused(loom_argpack_set(abc, "a", &member), LOOM_ERROR_INVALID_ARGUMENT,
                   "member 'a': " + std::to_string(v) + " is not a LoomDataType", v);
  }
  EXPECT_EQ(loom_ndarray_destroy(arr), LOOM_SUCCESS);
}

TEST_F(CApiEnums, ReturnNdarrayAndTextureTypes) {
  LoomModule m = load("argpacks");
  ASSERT_NE(m, nullptr);
  LoomKernel select = nullptr;
  ASSERT_EQ(loom_module_get_kernel(m, "abc_select", 0, nullptr, &select), LOOM_SUCCESS);
  LoomArgpack abc = nullptr;
  ASSERT_EQ(loom_module_get_argpack(m, "abc", &abc), LOOM_SUCCESS);
  LoomArgument a = loom_arg_argpack(abc);
  ASSERT_EQ(loom_launch(select, 1, &a), LOOM_SUCCESS) << loom_last_error_message();
  for (int32_t v : kBad) {
    float r = 0;
    expect_refused(loom_kernel_get_return(select, 0, from_int<LoomDataType>(v), &r),
                   LOOM_ERROR_INVALID_ARGUMENT, "loom_kernel_get_return: dtype", v);
    int64_t n = 4;
    LoomArray arr = nullptr;
    expect_refused(loom_ndarray_create(runtime, from_int<LoomDataType>(v), 1, 1, &n, &arr),
                   LOOM_ERROR_INVALID_ARGUMENT, "loom_ndarray_create: dtype", v);
    EXPECT_EQ(arr, nullptr);
    LoomTexture t = nullptr;
    expect_refused(loom_texture_create(runtime, from_int<LoomTextureFormat>(v), 4, 4, 0, &t),
                   LOOM_ERROR_INVALID_ARGUMENT, "loom_texture_create: format", v);
    EXPECT_EQ(t, nullptr);
  }
}

// The Vulkan sites: the queue mode of an imported device, the element type of an imported
// buffer, the format and layout of an imported image. Each is checked before Loom touches the
// handles, so the buffer and image here are never used.
TEST(CApiEnumsVulkan, ImportedDevicesBuffersAndImages) {
  LOOM_REQUIRE_VULKAN_OR_SKIP();
  loom::testing::HostDevice host;
  if (!host.create()) GTEST_SKIP() << "no Vulkan 1.2 device with a graphics and compute queue";
  for (int32_t v : kBad) {
    if (v == 0) continue;  // 0 is LOOM_QUEUE_ENGINE_OWNED
    LoomVulkanDeviceImport info = host.import_info();
    info.queue_mode = from_int<LoomQueueMode>(v);
    LoomRuntime r = nullptr;
    expect_refused(loom_runtime_import_vulkan(&info, &r), LOOM_ERROR_INVALID_ARGUMENT,
                   "queue_mode " + std::to_string(v), v);
    EXPECT_EQ(r, nullptr);
  }
  LoomVulkanDeviceImport info = host.import_info();
  info.queue_mode = LOOM_QUEUE_SHARED;
  LoomRuntime runtime = nullptr;
  ASSERT_EQ(loom_runtime_import_vulkan(&info, &runtime), LOOM_SUCCESS) << loom_last_error_message();
  // Never used: every call below is refused before it would be.
  auto fake_buffer = reinterpret_cast<VkBuffer>(uintptr_t{0x1000});
  auto fake_image = reinterpret_cast<VkImage>(uintptr_t{0x2000});
  auto fake_view = reinterpret_cast<VkImageView>(uintptr_t{0x3000});
  for (int32_t v : kBad) {
    LoomVulkanBuffer vb{fake_buffer, 0, 256};
    int64_t n = 4;
    LoomArray arr = nullptr;
    expect_refused(
        loom_ndarray_import_vulkan(runtime, &vb, from_int<LoomDataType>(v), 1, 1, &n, &arr),
        LOOM_ERROR_INVALID_ARGUMENT, "loom_ndarray_import_vulkan: dtype", v);
    LoomVulkanImage image{
        fake_image, fake_view, from_int<VkFormat>(v), {4, 4, 1}, VK_IMAGE_LAYOUT_GENERAL, 2};
    LoomTexture t = nullptr;
    // loom.h: a format Loom's textures do not use is LOOM_ERROR_WRONG_DTYPE.
    expect_refused(loom_texture_import_vulkan(runtime, &image, &t), LOOM_ERROR_WRONG_DTYPE,
                   "image->format: VkFormat " + std::to_string(v), v);
    image.format = VK_FORMAT_R32_SFLOAT;
    image.layout = from_int<VkImageLayout>(v);
    expect_refused(loom_texture_import_vulkan(runtime, &image, &t), LOOM_ERROR_INVALID_ARGUMENT,
                   "image->layout: VkImageLayout " + std::to_string(v), v);
    EXPECT_EQ(t, nullptr);
  }
  EXPECT_EQ(loom_runtime_destroy(runtime), LOOM_SUCCESS) << loom_last_error_message();
}

}  // namespace
