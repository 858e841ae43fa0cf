// The engine plugin's cost per frame in a host's frame loop: CPU time of the loom.h calls a
// host makes each frame (begin_frame, the launches recorded into its command buffer, the
// barrier for its draws), per kernel launch, against the same launches made through the C++
// runtime underneath (runtime/aot + vk::HostFrames) on the same device in the same run. Also
// the other path: launches on Loom's queue with a timeline semaphore signalled for the host.
// The GPU's time is not counted: the host waits for its frame fences outside the timing.
//
//   loom_plugin_frame_bench [--frames N] [--module cloth|heat] [MODULE_DIR]
#include <loom/loom.h>
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "runtime/aot/loaded_module.h"
#include "runtime/aot/module_device.h"
#include "runtime/aot/module_files.h"
#include "runtime/vulkan/host_frames.h"
#include "runtime/vulkan/vulkan_device.h"
#include "runtime/vulkan/vulkan_runtime.h"
#include "tests/support/host_vulkan_device.h"

namespace {

using loom::testing::HostDevice;

double thread_cpu_us() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

void check(LoomResult r, const char* what) {
  if (r == LOOM_SUCCESS) return;
  std::fprintf(stderr, "%s: %s: %s\n", what, loom_result_name(r), loom_last_error_message());
  std::exit(1);
}

// The host's frames: two in flight, a command buffer and a fence each.
struct Frames {
  HostDevice& host;
  VkCommandBuffer cb[2] = {};
  VkFence fence[2] = {};
  explicit Frames(HostDevice& h) : host(h) {
    VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    ai.commandPool = h.pool;
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = 2;
    vkAllocateCommandBuffers(h.device, &ai, cb);
    VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    fci.flags = VK_FENCE_CREATE_SIGNALED_BIT;
    for (VkFence& f : fence) vkCreateFence(h.device, &fci, nullptr, &f);
  }
  ~Frames() {
    vkWaitForFences(host.device, 2, fence, VK_TRUE, UINT64_MAX);
    for (VkFence f : fence) vkDestroyFence(host.device, f, nullptr);
    vkFreeCommandBuffers(host.device, host.pool, 2, cb);
  }
  // Runs `frames` frames; `record(cb)` is the timed part. Returns CPU microseconds in it.
  double run(int frames, const std::function<void()>& begin,
             const std::function<void(VkCommandBuffer)>& record) {
    double spent = 0;
    for (int f = 0; f < frames; ++f) {
      int i = f % 2;
      vkWaitForFences(host.device, 1, &fence[i], VK_TRUE, UINT64_MAX);
      vkResetFences(host.device, 1, &fence[i]);
      vkResetCommandBuffer(cb[i], 0);
      VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
      bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
      vkBeginCommandBuffer(cb[i], &bi);
      double t0 = thread_cpu_us();
      begin();
      record(cb[i]);
      spent += thread_cpu_us() - t0;
      vkEndCommandBuffer(cb[i]);
      VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
      si.commandBufferCount = 1;
      si.pCommandBuffers = &cb[i];
      vkQueueSubmit(host.queue, 1, &si, fence[i]);
    }
    return spent;
  }
};

}  // namespace

int main(int argc, char** argv) {
  int frames = 300;
  std::string name = "cloth", dir = LOOM_BENCH_MODULES;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--frames" && i + 1 < argc)
      frames = std::max(10, std::atoi(argv[++i]));
    else if (a == "--module" && i + 1 < argc)
      name = argv[++i];
    else
      dir = a;
  }
  std::string path = dir + "/" + name + ".loommod";
  HostDevice host;
  if (!host.create()) {
    std::fprintf(stderr, "no Vulkan 1.2 device with a graphics and compute queue\n");
    return 1;
  }

  // The plugin, through loom.h.
  LoomVulkanDeviceImport imp = host.import_info();
  imp.frames_in_flight = 2;
  imp.queue_mode = LOOM_QUEUE_SHARED;  // measures Loom's own submissions too
  LoomRuntime runtime = nullptr;
  check(loom_runtime_import_vulkan(&imp, &runtime), "import");
  LoomModule module = nullptr;
  check(loom_module_load(runtime, path.c_str(), &module), "load");
  LoomPipeline init = nullptr, step = nullptr;
  check(loom_module_get_pipeline(module, "init", &init), "init");
  check(loom_module_get_pipeline(module, "step", &step), "step");
  check(loom_pipeline_launch(init), "init");

  // The C++ runtime underneath, on the same device.
  loom::vk::ImportedDevice cpp_imp;
  cpp_imp.instance = host.instance;
  cpp_imp.physical = host.physical;
  cpp_imp.device = host.device;
  cpp_imp.queue_family = host.family;
  cpp_imp.queue = host.queue;
  cpp_imp.api_version = VK_API_VERSION_1_2;
  loom::vk::set_enabled_features(cpp_imp, host.create_info);
  auto device = loom::make_vulkan_device({}, std::make_shared<loom::vk::VulkanDevice>(cpp_imp));
  loom::aot::LoadedModule cpp(loom::aot::read_module_path(path), *device, path);
  loom::vk::HostFrames cpp_frames(*device->vulkan(), 2);
  int cpp_step = cpp.find_pipeline("step");
  cpp.run_pipeline("init");
  device->synchronize();

  size_t launches = cpp.metadata().pipelines.at(static_cast<size_t>(cpp_step)).launches.size();
  Frames host_frames(host);
  auto plugin_into = [&] {
    return host_frames.run(
        frames, [&] { check(loom_runtime_begin_frame(runtime), "begin_frame"); },
        [&](VkCommandBuffer cb) {
          check(loom_pipeline_launch_into(step, cb), "launch_into");
          check(loom_runtime_barrier_for_graphics(runtime, cb), "barrier");
        });
  };
  auto cpp_into = [&] {
    return host_frames.run(
        frames, [&] { cpp_frames.begin_frame(); },
        [&](VkCommandBuffer cb) {
          loom::aot::LoadedModule::Launcher into = [&](loom::DeviceKernel& k,
                                                       loom::LaunchContext& ctx) {
            cpp_frames.launch_into(cb, *device->vulkan_kernel(k), ctx);
          };
          cpp.run_pipeline(cpp_step, &into);
          cpp_frames.barrier_for_graphics(cb);
        });
  };
  // Loom's own queue, signalling the host's timeline semaphore; the host waits two frames back.
  VkSemaphoreTypeCreateInfo type{VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
  type.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
  VkSemaphoreCreateInfo sci{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, &type};
  VkSemaphore timeline = VK_NULL_HANDLE;
  vkCreateSemaphore(host.device, &sci, nullptr, &timeline);
  uint64_t signalled = 0;
  auto plugin_queue = [&] {
    double spent = 0;
    for (int f = 0; f < frames; ++f) {
      if (signalled >= 2) {
        uint64_t value = signalled - 1;
        VkSemaphoreWaitInfo wi{VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO};
        wi.semaphoreCount = 1;
        wi.pSemaphores = &timeline;
        wi.pValues = &value;
        vkWaitSemaphores(host.device, &wi, UINT64_MAX);
      }
      double t0 = thread_cpu_us();
      check(loom_pipeline_launch(step), "launch");
      LoomSemaphore signal{timeline, ++signalled};
      check(loom_runtime_submit(runtime, 0, nullptr, 1, &signal), "submit");
      spent += thread_cpu_us() - t0;
    }
    check(loom_runtime_wait(runtime), "wait");
    return spent;
  };

  std::printf(
      "plugin frame overhead: module %s (%zu launches per frame), %d frames, 2 in flight, %s\n",
      name.c_str(), launches, frames, loom_version_string());
  // Warm both paths (pipelines, descriptor sets, argument rings), then measure alternately.
  plugin_into();
  cpp_into();
  double best_plugin = 1e300, best_cpp = 1e300, best_queue = 1e300;
  for (int round = 0; round < 3; ++round) {
    best_plugin = std::min(best_plugin, plugin_into());
    best_cpp = std::min(best_cpp, cpp_into());
    best_queue = std::min(best_queue, plugin_queue());
  }
  double per_plugin = best_plugin / frames / launches, per_cpp = best_cpp / frames / launches;
  double per_queue = best_queue / frames / launches;
  std::printf(
      "  into the host's command buffer, loom.h:      %8.2f us CPU per launch (%.1f us per "
      "frame)\n",
      per_plugin, best_plugin / frames);
  std::printf(
      "  into the host's command buffer, C++ runtime: %8.2f us CPU per launch (%.1f us per "
      "frame)\n",
      per_cpp, best_cpp / frames);
  std::printf(
      "  on Loom's queue + timeline signal, loom.h:   %8.2f us CPU per launch (%.1f us per "
      "frame)\n",
      per_queue, best_queue / frames);
  std::printf("  ratio loom.h / C++ runtime: %.2fx; goal <= 50 us per launch: %s (%.1fx under)\n",
              per_plugin / per_cpp, per_plugin <= 50 ? "met" : "NOT met", 50 / per_plugin);

  vkDestroySemaphore(host.device, timeline, nullptr);
  check(loom_module_destroy(module), "destroy");
  check(loom_runtime_destroy(runtime), "destroy");
  return 0;
}
