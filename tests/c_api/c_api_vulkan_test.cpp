// The C ABI on the host engine's own Vulkan device: import, the host's buffers and images,
// launches recorded into the host's command buffers, Loom's queue signalling the host's
// semaphore, exports for drawing.
#include <gtest/gtest.h>
#include <loom/loom.h>

#include "tests/c_api/loom_result_checks.h"
#include "tests/support/host_vulkan_device.h"
#include "tests/support/vulkan_required.h"

#include <cstring>
#include <string>
#include <vector>

namespace {

using loom::testing::HostBuffer;
using loom::testing::HostDevice;

#define ASSERT_VK(call) ASSERT_EQ((call), VK_SUCCESS) << #call

std::string module_path(const std::string& name) {
  return std::string(LOOM_TEST_MODULES) + "/vulkan/" + name + ".loommod";
}

class CApiVulkan : public testing::Test {
 protected:
  void SetUp() override {
    LOOM_REQUIRE_VULKAN_OR_SKIP();
    if (!host.create()) GTEST_SKIP() << "no Vulkan 1.2 device with a graphics and compute queue";
    LoomVulkanDeviceImport info = host.import_info();
    // These tests use what Loom does when it may submit to the shared queue (reads that
    // wait, loom_runtime_submit); the engine-owned mode has tests of its own
    // (c_api_queue_test, c_api_engine_test).
    info.queue_mode = LOOM_QUEUE_SHARED;
    ASSERT_LOOM(loom_runtime_import_vulkan(&info, &runtime));
  }
  void TearDown() override {
    // Modules first: the packs they made may refer to the arrays and textures
    // (LOOM_ERROR_IN_USE otherwise).
    for (LoomModule m : modules) EXPECT_LOOM(loom_module_destroy(m));
    for (LoomArray a : arrays) EXPECT_LOOM(loom_ndarray_destroy(a));
    for (LoomTexture t : textures) EXPECT_LOOM(loom_texture_destroy(t));
    if (runtime) EXPECT_LOOM(loom_runtime_destroy(runtime));
  }
  LoomModule load(const std::string& name) {
    LoomModule m = nullptr;
    EXPECT_EQ(loom_module_load(runtime, module_path(name).c_str(), &m), LOOM_SUCCESS)
        << loom_last_error_message();
    if (m) modules.push_back(m);
    return m;
  }
  // The host's buffer as an ndarray of 32 i32.
  LoomArray import_ints(const HostBuffer& buffer) {
    LoomVulkanBuffer vb{buffer.buffer, 0, 32 * 4};
    int64_t n = 32;
    LoomArray arr = nullptr;
    EXPECT_EQ(loom_ndarray_import_vulkan(runtime, &vb, LOOM_DTYPE_I32, 1, 1, &n, &arr),
              LOOM_SUCCESS)
        << loom_last_error_message();
    if (arr) arrays.push_back(arr);
    return arr;
  }
  // What the `run` kernel of the args module writes for `base`, computed on a CPU runtime.
  static std::vector<int32_t> expected_run(int32_t base) {
    LoomRuntimeCreateInfo ci{};
    ci.struct_size = sizeof ci;
    ci.arch = LOOM_ARCH_CPU;
    LoomRuntime cpu = nullptr;
    EXPECT_EQ(loom_runtime_create(&ci, &cpu), LOOM_SUCCESS);
    LoomModule m = nullptr;
    EXPECT_EQ(
        loom_module_load(cpu, (std::string(LOOM_TEST_MODULES) + "/cpu/args.loommod").c_str(), &m),
        LOOM_SUCCESS);
    LoomKernel run = nullptr;
    EXPECT_EQ(loom_module_get_kernel(m, "run", 0, nullptr, &run), LOOM_SUCCESS);
    int64_t n = 32;
    LoomArray arr = nullptr;
    EXPECT_EQ(loom_ndarray_create(cpu, LOOM_DTYPE_I32, 1, 1, &n, &arr), LOOM_SUCCESS);
    LoomArgument v{LOOM_ARGUMENT_VALUE, LOOM_DTYPE_I32, 3, {{1, 2, 3}}};
    LoomArgument args[3] = {loom_arg_i32(base), loom_arg_ndarray(arr), v};
    EXPECT_EQ(loom_launch(run, 3, args), LOOM_SUCCESS);
    std::vector<int32_t> out(32);
    EXPECT_EQ(loom_array_read(arr, out.data(), 128), LOOM_SUCCESS);
    loom_ndarray_destroy(arr);
    loom_module_destroy(m);
    loom_runtime_destroy(cpu);
    return out;
  }

  HostDevice host;
  LoomRuntime runtime = nullptr;
  std::vector<LoomModule> modules;
  std::vector<LoomArray> arrays;
  std::vector<LoomTexture> textures;
};

TEST_F(CApiVulkan, ImportRefusesWhatItCannotUse) {
  LoomVulkanDeviceImport info = host.import_info();
  LoomRuntime r = nullptr;
  // No create info is needed (engines do not hand one out): nothing optional is declared, so
  // nothing optional is used, and a module that needs no optional feature loads.
  info.create_info = nullptr;
  ASSERT_LOOM(loom_runtime_import_vulkan(&info, &r));
  LoomModule m = nullptr;
  EXPECT_EQ(loom_module_load(r, module_path("handles").c_str(), &m), LOOM_SUCCESS)
      << loom_last_error_message();
  if (m) EXPECT_LOOM(loom_module_destroy(m));
  EXPECT_LOOM(loom_runtime_destroy(r));
  r = nullptr;
  info = host.import_info();
  info.api_version = 0;
  EXPECT_EQ(loom_runtime_import_vulkan(&info, &r), LOOM_ERROR_DEVICE);
  EXPECT_NE(std::string(loom_last_error_message()).find("Vulkan 1.0 or later"), std::string::npos)
      << loom_last_error_message();
  info = host.import_info();
  info.device = VK_NULL_HANDLE;
  EXPECT_EQ(loom_runtime_import_vulkan(&info, &r), LOOM_ERROR_DEVICE);
  EXPECT_EQ(r, nullptr);
  LoomRuntimeInfo ri{sizeof(LoomRuntimeInfo)};
  ASSERT_LOOM(loom_runtime_get_info(runtime, &ri));
  EXPECT_EQ(ri.arch, LOOM_ARCH_VULKAN);
}

TEST_F(CApiVulkan, LaunchesIntoTheHostsCommandBufferOnTheHostsBuffer) {
  LoomModule m = load("args");
  LoomKernel run = nullptr;
  ASSERT_LOOM(loom_module_get_kernel(m, "run", 0, nullptr, &run));
  HostBuffer buffer(host, 32 * 4);
  LoomArray arr = import_ints(buffer);
  ASSERT_NE(arr, nullptr);
  LoomArrayInfo ai{sizeof(LoomArrayInfo)};
  ASSERT_LOOM(loom_array_get_info(arr, &ai));
  EXPECT_FALSE(ai.host_copy);

  LoomArgument v{LOOM_ARGUMENT_VALUE, LOOM_DTYPE_I32, 3, {{1, 2, 3}}};
  for (int frame = 0; frame < 3; ++frame) {  // frames in flight reuse what Loom recorded
    ASSERT_LOOM(loom_runtime_begin_frame(runtime));
    VkCommandBuffer cb = host.begin();
    LoomArgument args[3] = {loom_arg_i32(10 * frame), loom_arg_ndarray(arr), v};
    ASSERT_LOOM(loom_launch_into(run, cb, 3, args));
    ASSERT_LOOM(loom_runtime_barrier_for_graphics(runtime, cb));
    host.submit_and_wait(cb);
    std::vector<int32_t> got(32);
    std::memcpy(got.data(), buffer.mapped, 128);
    EXPECT_EQ(got, expected_run(10 * frame)) << "frame " << frame;
  }
  // Loom reads the host's buffer back through its own queue too.
  std::vector<int32_t> through_loom(32);
  ASSERT_LOOM(loom_array_read(arr, through_loom.data(), 128));
  EXPECT_EQ(through_loom, expected_run(20));

  // The engine recreated its buffer: the ndarray moves, the old buffer is left alone.
  HostBuffer moved(host, 32 * 4);
  LoomVulkanBuffer to{moved.buffer, 0, 32 * 4};
  ASSERT_LOOM(loom_ndarray_rebind_vulkan(arr, &to));
  std::memset(buffer.mapped, 0, 128);
  ASSERT_LOOM(loom_runtime_begin_frame(runtime));
  VkCommandBuffer cb = host.begin();
  LoomArgument again[3] = {loom_arg_i32(30), loom_arg_ndarray(arr), v};
  ASSERT_LOOM(loom_launch_into(run, cb, 3, again));
  host.submit_and_wait(cb);
  std::vector<int32_t> in_new(32), in_old(32);
  std::memcpy(in_new.data(), moved.mapped, 128);
  std::memcpy(in_old.data(), buffer.mapped, 128);
  EXPECT_EQ(in_new, expected_run(30));
  EXPECT_EQ(in_old, std::vector<int32_t>(32, 0)) << "the old buffer was written after the move";
  LoomVulkanBuffer short_one{moved.buffer, 0, 64};
  EXPECT_EQ(loom_ndarray_rebind_vulkan(arr, &short_one), LOOM_ERROR_INVALID_ARGUMENT);
  LoomArray own = nullptr;
  int64_t n32 = 32;
  ASSERT_LOOM(loom_ndarray_create(runtime, LOOM_DTYPE_I32, 1, 1, &n32, &own));
  EXPECT_EQ(loom_ndarray_rebind_vulkan(own, &to), LOOM_ERROR_INVALID_ARGUMENT);
  EXPECT_LOOM(loom_ndarray_destroy(own));

  // Wrong uses.
  LoomArgument args[3] = {loom_arg_i32(0), loom_arg_ndarray(arr), v};
  EXPECT_EQ(loom_launch_into(run, VK_NULL_HANDLE, 3, args), LOOM_ERROR_NULL_HANDLE);
  LoomVulkanBuffer small{buffer.buffer, 0, 16};
  int64_t n = 32;
  LoomArray tiny = nullptr;
  EXPECT_EQ(loom_ndarray_import_vulkan(runtime, &small, LOOM_DTYPE_I32, 1, 1, &n, &tiny),
            LOOM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(loom_last_error_message()).find("holds 16 bytes; the ndarray needs 128"),
            std::string::npos)
      << loom_last_error_message();
}

TEST_F(CApiVulkan, LoomsQueueSignalsTheHostsSemaphore) {
  LoomModule m = load("args");
  LoomKernel run = nullptr;
  ASSERT_LOOM(loom_module_get_kernel(m, "run", 0, nullptr, &run));
  HostBuffer buffer(host, 32 * 4);
  LoomArray arr = import_ints(buffer);
  ASSERT_NE(arr, nullptr);
  VkSemaphoreTypeCreateInfo type{VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
  type.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
  VkSemaphoreCreateInfo sci{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, &type};
  VkSemaphore timeline = VK_NULL_HANDLE;
  ASSERT_VK(vkCreateSemaphore(host.device, &sci, nullptr, &timeline));
  LoomArgument v{LOOM_ARGUMENT_VALUE, LOOM_DTYPE_I32, 3, {{1, 2, 3}}};
  LoomArgument args[3] = {loom_arg_i32(5), loom_arg_ndarray(arr), v};
  ASSERT_LOOM(loom_launch(run, 3, args));
  LoomSemaphore signal{timeline, 7};
  ASSERT_LOOM(loom_runtime_submit(runtime, 0, nullptr, 1, &signal));
  uint64_t value = 7;
  VkSemaphoreWaitInfo wi{VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO};
  wi.semaphoreCount = 1;
  wi.pSemaphores = &timeline;
  wi.pValues = &value;
  ASSERT_VK(vkWaitSemaphores(host.device, &wi, 5'000'000'000ull));
  std::vector<int32_t> got(32);
  std::memcpy(got.data(), buffer.mapped, 128);
  EXPECT_EQ(got, expected_run(5));
  LoomSemaphore null_signal{VK_NULL_HANDLE, 0};
  EXPECT_EQ(loom_runtime_submit(runtime, 0, nullptr, 1, &null_signal), LOOM_ERROR_NULL_HANDLE);
  vkDestroySemaphore(host.device, timeline, nullptr);
}

TEST_F(CApiVulkan, ModuleResourcesAreExportedForDrawingAndPipelinesRecordIntoTheHostsFrames) {
  LoomModule into = load("julia");
  LoomModule own = load("julia");
  LoomPipeline step_into = nullptr, step_own = nullptr;
  ASSERT_LOOM(loom_module_get_pipeline(into, "step", &step_into));
  ASSERT_LOOM(loom_module_get_pipeline(own, "step", &step_own));
  LoomTexture image = nullptr, own_image = nullptr;
  ASSERT_LOOM(loom_module_get_texture(into, "image", &image));
  ASSERT_LOOM(loom_module_get_texture(own, "image", &own_image));
  LoomVulkanImage exported{};
  ASSERT_LOOM(loom_texture_export_vulkan(image, &exported));
  EXPECT_NE(exported.image, VK_NULL_HANDLE);
  EXPECT_NE(exported.view, VK_NULL_HANDLE);
  EXPECT_EQ(exported.format, VK_FORMAT_R8G8B8A8_UNORM);
  EXPECT_EQ(exported.layout, VK_IMAGE_LAYOUT_GENERAL);
  EXPECT_EQ(exported.extent.width, 512u);

  ASSERT_LOOM(loom_runtime_begin_frame(runtime));
  VkCommandBuffer cb = host.begin();
  ASSERT_LOOM(loom_pipeline_launch_into(step_into, cb));
  ASSERT_LOOM(loom_runtime_barrier_for_graphics(runtime, cb));
  host.submit_and_wait(cb);
  ASSERT_LOOM(loom_pipeline_launch(step_own));
  std::vector<uint8_t> a(512 * 512 * 4), b(a.size());
  ASSERT_LOOM(loom_texture_read(image, a.data(), a.size()));
  ASSERT_LOOM(loom_texture_read(own_image, b.data(), b.size()));
  EXPECT_EQ(a, b);

  LoomModule cloth = load("cloth");
  LoomArray x = nullptr;
  ASSERT_LOOM(loom_module_get_array(cloth, "x", &x));
  LoomVulkanBuffer vb{};
  ASSERT_LOOM(loom_array_export_vulkan(x, &vb));
  EXPECT_NE(vb.buffer, VK_NULL_HANDLE);
  EXPECT_EQ(vb.size, 32u * 32u * 12u);

  // Kernels with return values need a wait: not into a host's command buffer.
  LoomModule packs = load("packs");
  LoomKernel probe = nullptr;
  ASSERT_LOOM(loom_module_get_kernel(packs, "probe", 0, nullptr, &probe));
  cb = host.begin();
  EXPECT_EQ(loom_launch_into(probe, cb, 0, nullptr), LOOM_ERROR_NOT_SUPPORTED);
  EXPECT_NE(std::string(loom_last_error_message()).find("returns values"), std::string::npos);
  host.submit_and_wait(cb);
}

TEST_F(CApiVulkan, ADestroyedModuleOutlivesTheHostFramesThatUsedIt) {
  LoomModule m = nullptr;
  ASSERT_LOOM(loom_module_load(runtime, module_path("packs").c_str(), &m));
  LoomArgpack job = nullptr;
  ASSERT_LOOM(loom_argpack_create(m, "Job", &job));
  int64_t n = 64;
  LoomArray data = nullptr;
  ASSERT_LOOM(loom_ndarray_create(runtime, LOOM_DTYPE_F32, 1, 1, &n, &data));
  arrays.push_back(data);
  LoomArgument v = loom_arg_ndarray(data);
  ASSERT_LOOM(loom_argpack_set(job, "out", &v));
  LoomKernel fill = nullptr;
  ASSERT_LOOM(loom_module_get_kernel(m, "fill", 0, nullptr, &fill));
  LoomArgument a = loom_arg_argpack(job);
  ASSERT_LOOM(loom_runtime_begin_frame(runtime));
  VkCommandBuffer cb = host.begin();
  ASSERT_LOOM(loom_launch_into(fill, cb, 1, &a));
  ASSERT_LOOM(
      loom_module_destroy(m));  // recorded, not yet submitted: kept for the frames in flight
  host.submit_and_wait(cb);
  for (int frame = 0; frame < 3; ++frame)
    ASSERT_LOOM(loom_runtime_begin_frame(runtime));  // freed now
  // The same module again, with a pack of its own: nothing of the first is in the way.
  ASSERT_LOOM(loom_module_load(runtime, module_path("packs").c_str(), &m));
  modules.push_back(m);
  ASSERT_LOOM(loom_argpack_create(m, "Job", &job));
  ASSERT_LOOM(loom_argpack_set(job, "out", &v));
  ASSERT_LOOM(loom_module_get_kernel(m, "fill", 0, nullptr, &fill));
  a = loom_arg_argpack(job);
  ASSERT_LOOM(loom_launch(fill, 1, &a));
  std::vector<float> out(64);
  ASSERT_LOOM(loom_array_read(data, out.data(), 256));
}

TEST_F(CApiVulkan, TheHostsImagesAreTextures) {
  VkImageCreateInfo ici{VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO};
  ici.imageType = VK_IMAGE_TYPE_2D;
  ici.format = VK_FORMAT_R32_SFLOAT;
  ici.extent = {8, 8, 1};
  ici.mipLevels = 1;
  ici.arrayLayers = 1;
  ici.samples = VK_SAMPLE_COUNT_1_BIT;
  ici.usage = VK_IMAGE_USAGE_STORAGE_BIT | VK_IMAGE_USAGE_SAMPLED_BIT;
  VkImage image = VK_NULL_HANDLE;
  ASSERT_VK(vkCreateImage(host.device, &ici, nullptr, &image));
  VkMemoryRequirements req;
  vkGetImageMemoryRequirements(host.device, image, &req);
  VkMemoryAllocateInfo mai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  mai.allocationSize = req.size;
  mai.memoryTypeIndex = host.memory_type(req.memoryTypeBits, 0);
  VkDeviceMemory memory = VK_NULL_HANDLE;
  ASSERT_VK(vkAllocateMemory(host.device, &mai, nullptr, &memory));
  vkBindImageMemory(host.device, image, memory, 0);
  VkImageViewCreateInfo vci{VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO};
  vci.image = image;
  vci.viewType = VK_IMAGE_VIEW_TYPE_2D;
  vci.format = ici.format;
  vci.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
  VkImageView view = VK_NULL_HANDLE;
  ASSERT_VK(vkCreateImageView(host.device, &vci, nullptr, &view));

  LoomVulkanImage li{image, view, VK_FORMAT_R32_SFLOAT, {8, 8, 1}, VK_IMAGE_LAYOUT_GENERAL, 2};
  LoomTexture t = nullptr;
  ASSERT_LOOM(loom_texture_import_vulkan(runtime, &li, &t));
  textures.push_back(t);
  LoomTextureInfo info{sizeof(LoomTextureInfo)};
  ASSERT_LOOM(loom_texture_get_info(t, &info));
  EXPECT_EQ(info.format, LOOM_TEXTURE_R32F);
  EXPECT_FALSE(info.host_copy);
  float texels[64];
  EXPECT_EQ(loom_texture_read(t, texels, sizeof texels), LOOM_ERROR_NOT_SUPPORTED);
  LoomVulkanImage back{};
  ASSERT_LOOM(loom_texture_export_vulkan(t, &back));
  EXPECT_EQ(back.image, image);
  LoomVulkanImage wrong = li;
  wrong.format = VK_FORMAT_B8G8R8A8_UNORM;
  LoomTexture w = nullptr;
  EXPECT_EQ(loom_texture_import_vulkan(runtime, &wrong, &w), LOOM_ERROR_WRONG_DTYPE);
  wrong = li;
  wrong.ndim = 1;
  EXPECT_EQ(loom_texture_import_vulkan(runtime, &wrong, &w), LOOM_ERROR_WRONG_NDIM);

  EXPECT_LOOM(loom_texture_destroy(t));
  textures.clear();
  vkDestroyImageView(host.device, view, nullptr);
  vkDestroyImage(host.device, image, nullptr);
  vkFreeMemory(host.device, memory, nullptr);
}

TEST(CApiCpu, VulkanCallsOnACpuRuntimeAreWrongArch) {
  LoomRuntimeCreateInfo ci{};
  ci.struct_size = sizeof ci;
  ci.arch = LOOM_ARCH_CPU;
  LoomRuntime cpu = nullptr;
  ASSERT_LOOM(loom_runtime_create(&ci, &cpu));
  LoomVulkanBuffer vb{reinterpret_cast<VkBuffer>(uintptr_t{1}), 0, 64};
  int64_t n = 4;
  LoomArray a = nullptr;
  EXPECT_EQ(loom_ndarray_import_vulkan(cpu, &vb, LOOM_DTYPE_F32, 1, 1, &n, &a),
            LOOM_ERROR_WRONG_ARCH);
  EXPECT_NE(std::string(loom_last_error_message()).find("needs a Vulkan runtime"),
            std::string::npos);
  ASSERT_LOOM(loom_ndarray_create(cpu, LOOM_DTYPE_F32, 1, 1, &n, &a));
  EXPECT_EQ(loom_array_export_vulkan(a, &vb), LOOM_ERROR_WRONG_ARCH);
  LoomSemaphore s{reinterpret_cast<VkSemaphore>(uintptr_t{1}), 1};
  EXPECT_EQ(loom_runtime_submit(cpu, 0, nullptr, 1, &s), LOOM_ERROR_WRONG_ARCH);
  EXPECT_LOOM(loom_runtime_begin_frame(cpu));  // a no-op: CPU hosts can keep one frame loop
  EXPECT_LOOM(loom_ndarray_destroy(a));
  EXPECT_LOOM(loom_runtime_destroy(cpu));
}

}  // namespace
