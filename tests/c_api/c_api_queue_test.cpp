// Who touches the engine's queue: a process whose vkQueueSubmit, vkQueueWaitIdle and
// vkDeviceWaitIdle go through queue_counter (linked before the Vulkan loader) counts what
// libloom.so submits while an engine (made as Unity makes its device) runs the heat module
// through loom.h: frames of launches recorded into the engine's command buffers, a read, an
// export and a hot reload. Every queue operation of Loom's happens inside the engine's queue
// lock; steady frames submit nothing; Loom never waits for the whole device. The figures per
// step are printed.
#include <gtest/gtest.h>
#include <loom/loom.h>

#include <cstdio>
#include <string>
#include <vector>

#include "queue_counter.h"
#include "tests/support/engine_host.h"
#include "tests/support/vulkan_required.h"

namespace {

using loom::testing::Engine;
using loom::testing::EngineHost;

#define ASSERT_LOOM(call) \
  ASSERT_EQ((call), LOOM_SUCCESS) << #call << ": " << loom_last_error_message()

uint64_t queue_ops(const QueueCounts& c) {
  return c.submits + c.queue_wait_idles + c.device_wait_idles;
}

TEST(EngineQueue, LoomTouchesTheEnginesQueueOnlyUnderItsLock) {
  LOOM_REQUIRE_VULKAN_OR_SKIP();
  EngineHost host(Engine::Unity);
  host.create();
  LoomVulkanDeviceImport d{};
  d.struct_size = sizeof d;
  d.instance = host.instance();
  d.physical_device = host.physical();
  d.device = host.device();
  d.queue_family_index = host.family();
  d.queue = host.queue();
  d.api_version = host.api_version();
  d.frames_in_flight = 2;
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
  LoomArrayInfo info{};
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

}  // namespace
