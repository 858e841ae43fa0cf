// Who touches the engine's queue: a process whose vkQueueSubmit, vkQueueWaitIdle and
// vkDeviceWaitIdle go through queue_counter (linked before the Vulkan loader) counts what
// libloom.so submits while an engine (made as Unity makes its device) runs the heat module
// through loom.h: frames of launches recorded into the engine's command buffers, reads,
// writes, exports and a hot reload.
// - LOOM_QUEUE_ENGINE_OWNED (the default): Loom makes no queue operation at all, and what it
//   reads back through the engine's command buffers is right.
// - LOOM_QUEUE_SHARED: every queue operation of Loom's happens inside the engine's queue lock;
//   steady frames submit nothing; Loom never waits for the whole device.
// The figures per step are printed.
#include <gtest/gtest.h>
#include <loom/loom.h>

#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "queue_counter.h"
#include "tests/c_api/loom_result_checks.h"
#include "tests/support/engine_host.h"
#include "tests/support/engine_import.h"
#include "tests/support/vulkan_required.h"

namespace {

using loom::testing::Engine;
using loom::testing::EngineHost;

uint64_t queue_ops(const QueueCounts& c) {
  return c.submits + c.queue_wait_idles + c.device_wait_idles;
}

TEST(EngineQueue, SharedModeTouchesTheEnginesQueueOnlyUnderItsLock) {
  LOOM_REQUIRE_VULKAN_OR_SKIP();
  EngineHost host(Engine::Unity);
  host.create();
  LoomVulkanDeviceImport d = loom::testing::engine_import(host);
  d.queue_mode = LOOM_QUEUE_SHARED;
  d.lock_queue = &queue_counter_lock;
  d.unlock_queue = &queue_counter_unlock;
  LoomRuntime runtime = nullptr;
  ASSERT_LOOM(loom_runtime_import_vulkan(&d, &runtime));

  QueueCounts before = queue_counter_read();
  auto step_figure = [&](const char* what) {
    QueueCounts now = queue_counter_read();
    std::printf("%-34s Loom: %llu submits, %llu queue waits; host: %llu submits\n", what,
                static_cast<unsigned long long>(now.submits - before.submits),
                static_cast<unsigned long long>(now.queue_wait_idles - before.queue_wait_idles),
                static_cast<unsigned long long>(now.host_submits - before.host_submits));
    QueueCounts delta{now.submits - before.submits, now.queue_wait_idles - before.queue_wait_idles,
                      now.device_wait_idles - before.device_wait_idles,
                      now.unlocked - before.unlocked, now.host_submits - before.host_submits};
    before = now;
    return delta;
  };

  std::string path = std::string(LOOM_TEST_MODULES) + "/vulkan/heat.loommod";
  LoomModule module = nullptr;
  ASSERT_LOOM(loom_module_load(runtime, path.c_str(), &module));
  step_figure("load");
  LoomPipeline init = nullptr, step = nullptr;
  ASSERT_LOOM(loom_module_get_pipeline(module, "init", &init));
  ASSERT_LOOM(loom_module_get_pipeline(module, "step", &step));

  auto frame = [&](bool first) {
    ASSERT_LOOM(loom_runtime_begin_frame(runtime));
    LoomResult r = LOOM_SUCCESS;
    host.frame([&](VkCommandBuffer cb) {
      if (first) r = loom_pipeline_launch_into(init, cb);
      if (r == LOOM_SUCCESS) r = loom_pipeline_launch_into(step, cb);
      if (r == LOOM_SUCCESS) r = loom_runtime_barrier_for_graphics(runtime, cb);
    });
    ASSERT_EQ(r, LOOM_SUCCESS) << loom_last_error_message();
  };
  frame(true);
  QueueCounts first = step_figure("first frame (uploads of the module)");
  EXPECT_EQ(first.host_submits, 1u);
  for (int f = 0; f < 20; ++f) frame(false);
  QueueCounts steady = step_figure("20 steady frames");
  EXPECT_EQ(queue_ops(steady), 0u) << "steady frames must leave the engine's queue alone";
  EXPECT_EQ(steady.host_submits, 20u);

  LoomArray temperature = nullptr;
  ASSERT_LOOM(loom_module_get_array(module, "temperature", &temperature));
  LoomArrayInfo info{sizeof(LoomArrayInfo)};
  ASSERT_LOOM(loom_array_get_info(temperature, &info));
  std::vector<uint8_t> bytes(info.bytes);
  ASSERT_LOOM(loom_array_read(temperature, bytes.data(), bytes.size()));
  step_figure("loom_array_read");
  LoomVulkanBuffer exported{};
  ASSERT_LOOM(loom_array_export_vulkan(temperature, &exported));
  EXPECT_NE(exported.buffer, VK_NULL_HANDLE);
  step_figure("loom_array_export_vulkan");
  LoomReloadStatus status = LOOM_RELOAD_UNCHANGED;
  ASSERT_LOOM(loom_module_reload(module, &status));
  EXPECT_EQ(status, LOOM_RELOAD_SWAPPED);
  step_figure("loom_module_reload");
  for (int f = 0; f < 5; ++f) frame(false);
  step_figure("5 frames after the reload");

  ASSERT_LOOM(loom_module_destroy(module));
  ASSERT_LOOM(loom_runtime_destroy(runtime));
  QueueCounts all = queue_counter_read();
  EXPECT_GT(all.submits, 0u) << "the counter saw none of Loom's submissions";
  EXPECT_EQ(all.unlocked, 0u) << "Loom used the engine's queue outside its lock";
  EXPECT_EQ(all.device_wait_idles, 0u) << "Loom waited for the engine's whole device";
  for (const std::string& m : host.take_messages()) ADD_FAILURE() << "Vulkan validation: " << m;
}

// The heat module's temperature after `steps` steps, as the JIT computed it on the CPU at
// build time (float32 .npy, the data at its end).
std::vector<float> reference_temperature(size_t count) {
  std::string path = std::string(LOOM_TEST_MODULES) + "/heat_temperature_5.npy";
  FILE* f = std::fopen(path.c_str(), "rb");
  EXPECT_NE(f, nullptr) << path;
  std::vector<uint8_t> npy;
  if (f) {
    uint8_t buf[4096];
    for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;)
      npy.insert(npy.end(), buf, buf + n);
    std::fclose(f);
  }
  std::vector<float> want(count);
  EXPECT_GT(npy.size(), count * 4);
  if (npy.size() > count * 4)
    std::memcpy(want.data(), npy.data() + npy.size() - count * 4, count * 4);
  return want;
}

TEST(EngineQueue, EngineOwnedModeNeverTouchesTheEnginesQueue) {
  LOOM_REQUIRE_VULKAN_OR_SKIP();
  EngineHost host(Engine::Unity);
  host.create();
  // What Unity hands a plugin, and nothing about the queue: the default mode.
  LoomVulkanDeviceImport d = loom::testing::engine_import(host);
  ASSERT_EQ(d.queue_mode, LOOM_QUEUE_ENGINE_OWNED);
  LoomRuntime runtime = nullptr;
  ASSERT_LOOM(loom_runtime_import_vulkan(&d, &runtime));
  QueueCounts start = queue_counter_read();

  std::string path = std::string(LOOM_TEST_MODULES) + "/vulkan/heat.loommod";
  LoomModule module = nullptr;
  ASSERT_LOOM(loom_module_load(runtime, path.c_str(), &module));
  LoomPipeline init = nullptr, step = nullptr;
  ASSERT_LOOM(loom_module_get_pipeline(module, "init", &init));
  ASSERT_LOOM(loom_module_get_pipeline(module, "step", &step));
  LoomArray temperature = nullptr;
  ASSERT_LOOM(loom_module_get_array(module, "temperature", &temperature));
  LoomArrayInfo info{sizeof(LoomArrayInfo)};
  ASSERT_LOOM(loom_array_get_info(temperature, &info));
  size_t count = info.bytes / 4;

  // A frame of the engine's: begin_frame, then whatever the test records into its buffer.
  uint64_t frames = 0;
  auto frame = [&](const std::function<LoomResult(VkCommandBuffer)>& record) {
    ++frames;
    ASSERT_LOOM(loom_runtime_begin_frame(runtime));
    LoomResult r = LOOM_SUCCESS;
    host.frame([&](VkCommandBuffer cb) { r = record(cb); });
    ASSERT_EQ(r, LOOM_SUCCESS) << loom_last_error_message();
  };
  auto steps = [&](VkCommandBuffer cb) {
    LoomResult r = loom_pipeline_launch_into(step, cb);
    return r == LOOM_SUCCESS ? loom_runtime_barrier_for_graphics(runtime, cb) : r;
  };

  // Five steps, then a read recorded after them, polled and called back.
  frame([&](VkCommandBuffer cb) {
    LoomResult r = loom_pipeline_launch_into(init, cb);
    return r == LOOM_SUCCESS ? steps(cb) : r;
  });
  for (int f = 0; f < 4; ++f) frame(steps);
  std::vector<float> called_back;
  LoomReadback polled = nullptr;
  auto keep = [](void* user, const void* data, uint64_t bytes) {
    auto* out = static_cast<std::vector<float>*>(user);
    out->resize(bytes / 4);
    std::memcpy(out->data(), data, bytes);
  };
  frame([&](VkCommandBuffer cb) {
    LoomResult r = loom_array_read_into(temperature, cb, nullptr, nullptr, &polled);
    return r == LOOM_SUCCESS ? loom_array_read_into(temperature, cb, keep, &called_back, nullptr)
                             : r;
  });
  std::vector<float> got(count);
  // The host already waited for the frame, but Loom knows only what begin_frame tells it.
  EXPECT_EQ(loom_readback_get(polled, got.data(), info.bytes), LOOM_ERROR_NOT_READY);
  EXPECT_TRUE(called_back.empty());
  // A read that would have to wait is refused, naming what to call instead.
  EXPECT_EQ(loom_array_read(temperature, got.data(), info.bytes), LOOM_ERROR_NOT_SUPPORTED);
  EXPECT_NE(std::string(loom_last_error_message()).find("loom_array_read_into"), std::string::npos)
      << loom_last_error_message();
  EXPECT_EQ(loom_runtime_submit(runtime, 0, nullptr, 0, nullptr), LOOM_ERROR_NOT_SUPPORTED);
  frame([](VkCommandBuffer) { return LOOM_SUCCESS; });
  frame([](VkCommandBuffer) { return LOOM_SUCCESS; });
  ASSERT_LOOM(loom_readback_get(polled, got.data(), info.bytes));
  ASSERT_EQ(called_back.size(), count);
  std::vector<float> want = reference_temperature(count);
  for (size_t i = 0; i < count; ++i) {
    ASSERT_NEAR(got[i], want[i], 1e-5f * (1 + std::fabs(want[i]))) << i;
    ASSERT_EQ(called_back[i], got[i]) << i;
  }
  ASSERT_LOOM(loom_readback_destroy(polled));

  // A write from the host reaches the device in the next command buffer Loom records into,
  // and an export names the buffer the engine binds.
  std::vector<float> written(count);
  for (size_t i = 0; i < count; ++i) written[i] = 0.25f * static_cast<float>(i % 7);
  ASSERT_LOOM(loom_array_write(temperature, written.data(), info.bytes));
  LoomVulkanBuffer exported{};
  ASSERT_LOOM(loom_array_export_vulkan(temperature, &exported));
  EXPECT_NE(exported.buffer, VK_NULL_HANDLE);
  std::vector<float> after_write;
  frame([&](VkCommandBuffer cb) {
    return loom_array_read_into(temperature, cb, keep, &after_write, nullptr);
  });
  // A hot reload: state is copied on the device in the next frame, nothing waits.
  LoomReloadStatus status = LOOM_RELOAD_UNCHANGED;
  ASSERT_LOOM(loom_module_reload(module, &status));
  EXPECT_EQ(status, LOOM_RELOAD_SWAPPED);
  std::vector<float> after_reload;
  frame([&](VkCommandBuffer cb) {
    return loom_array_read_into(temperature, cb, keep, &after_reload, nullptr);
  });
  // A launch on Loom's stream runs in the next command buffer Loom records into.
  ASSERT_LOOM(loom_pipeline_launch(step));
  frame([&](VkCommandBuffer cb) { return loom_runtime_record(runtime, cb); });
  for (int f = 0; f < 20; ++f) frame(steps);
  frame([](VkCommandBuffer) { return LOOM_SUCCESS; });
  frame([](VkCommandBuffer) { return LOOM_SUCCESS; });
  EXPECT_EQ(after_write, written);
  EXPECT_EQ(after_reload, written) << "the reload lost the module's state";
  ASSERT_LOOM(loom_runtime_wait(runtime));  // everything ran in completed frames

  ASSERT_LOOM(loom_module_destroy(module));
  ASSERT_LOOM(loom_runtime_destroy(runtime));
  QueueCounts end = queue_counter_read();
  std::printf(
      "engine-owned queue, %d frames with launches, reads, a write, an export and a "
      "reload: Loom made %llu submits, %llu queue waits, %llu device waits; the host %llu "
      "submits\n",
      static_cast<int>(frames), static_cast<unsigned long long>(end.submits - start.submits),
      static_cast<unsigned long long>(end.queue_wait_idles - start.queue_wait_idles),
      static_cast<unsigned long long>(end.device_wait_idles - start.device_wait_idles),
      static_cast<unsigned long long>(end.host_submits - start.host_submits));
  EXPECT_EQ(queue_ops(end) - queue_ops(start), 0u) << "Loom touched the engine's queue";
  EXPECT_EQ(end.host_submits - start.host_submits, frames) << "the counter missed the host's";
  for (const std::string& m : host.take_messages()) ADD_FAILURE() << "Vulkan validation: " << m;
}

// An engine that numbers its frames and knows which completed (Unity's currentFrameNumber and
// safeFrameNumber): a read recorded in frame 100 is there as soon as the engine says frame 100
// completed, and a barrier toward the engine's own compute pass is recorded where asked.
TEST(EngineQueue, FramesNumberedByTheEngine) {
  LOOM_REQUIRE_VULKAN_OR_SKIP();
  EngineHost host(Engine::Unity);
  host.create();
  LoomVulkanDeviceImport d = loom::testing::engine_import(host);
  LoomRuntime runtime = nullptr;
  ASSERT_LOOM(loom_runtime_import_vulkan(&d, &runtime));
  std::string path = std::string(LOOM_TEST_MODULES) + "/vulkan/heat.loommod";
  LoomModule module = nullptr;
  ASSERT_LOOM(loom_module_load(runtime, path.c_str(), &module));
  LoomPipeline init = nullptr;
  ASSERT_LOOM(loom_module_get_pipeline(module, "init", &init));
  LoomArray temperature = nullptr;
  ASSERT_LOOM(loom_module_get_array(module, "temperature", &temperature));
  LoomArrayInfo info{sizeof(LoomArrayInfo)};
  ASSERT_LOOM(loom_array_get_info(temperature, &info));

  ASSERT_LOOM(loom_runtime_begin_frame_number(runtime, 100, 99));
  LoomReadback rb = nullptr;
  LoomResult r = LOOM_SUCCESS;
  host.frame([&](VkCommandBuffer cb) {
    r = loom_pipeline_launch_into(init, cb);
    if (r == LOOM_SUCCESS)
      r = loom_runtime_barrier(runtime, cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                               VK_ACCESS_SHADER_READ_BIT);
    if (r == LOOM_SUCCESS) r = loom_array_read_into(temperature, cb, nullptr, nullptr, &rb);
    if (r == LOOM_SUCCESS)
      EXPECT_EQ(loom_runtime_barrier(runtime, cb, 0, 0), LOOM_ERROR_INVALID_ARGUMENT);
  });
  ASSERT_EQ(r, LOOM_SUCCESS) << loom_last_error_message();
  std::vector<float> got(info.bytes / 4);
  EXPECT_EQ(loom_readback_get(rb, got.data(), info.bytes), LOOM_ERROR_NOT_READY);
  // The engine waited for frame 100 (EngineHost::frame does): the next frame says so.
  ASSERT_LOOM(loom_runtime_begin_frame_number(runtime, 101, 100));
  ASSERT_LOOM(loom_readback_get(rb, got.data(), info.bytes));
  bool any = false;
  for (float v : got) any = any || v != 0;
  EXPECT_TRUE(any) << "init wrote nothing the read saw";
  ASSERT_LOOM(loom_readback_destroy(rb));
  // Numbers that go back are refused.
  EXPECT_EQ(loom_runtime_begin_frame_number(runtime, 101, 100), LOOM_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(loom_runtime_begin_frame_number(runtime, 102, 99), LOOM_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(loom_runtime_begin_frame_number(runtime, 103, 103), LOOM_ERROR_INVALID_ARGUMENT);
  ASSERT_LOOM(loom_module_destroy(module));
  ASSERT_LOOM(loom_runtime_destroy(runtime));
  for (const std::string& m : host.take_messages()) ADD_FAILURE() << "Vulkan validation: " << m;
}

}  // namespace
