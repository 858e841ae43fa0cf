// loom-host-sample: a minimal engine that uses Loom through loom.h alone. It makes its own
// Vulkan device, imports it into Loom, records Loom's launches into its own frame command
// buffers and draws what the modules compute straight from Loom's buffers and image; module
// files are hot-reloaded while it plays. See README.md.
#define GLFW_INCLUDE_VULKAN
#include <GLFW/glfw3.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "loom_simulation.h"
#include "obj_mesh.h"
#include "offscreen_target.h"
#include "options.h"
#include "png_writer.h"
#include "scene_renderer.h"
#include "swapchain_target.h"
#include "vulkan_context.h"

namespace host_sample {
namespace {

constexpr uint32_t kFramesInFlight = 2;
constexpr int kExitValidation = 3;  // the run worked, but the validation layer reported something
constexpr int kExitNoDevice = 77;   // no Vulkan device: nothing was tested (ctest's "skipped")

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

// A printf pattern of the frame number.
std::string frame_file(const std::string& pattern, uint64_t frame) {
  std::vector<char> name(pattern.size() + 32);
  std::snprintf(name.data(), name.size(), pattern.c_str(), static_cast<unsigned long long>(frame));
  return name.data();
}

// An edit while playing: the new file replaces the module's at once (rename), as a build
// tool's output does; the module notices at the next frame boundary.
void replace_file(const std::string& from, const std::string& to) {
  std::string temporary = to + ".incoming";
  std::filesystem::copy_file(from, temporary, std::filesystem::copy_options::overwrite_existing);
  std::filesystem::rename(temporary, to);
}

// The frames in flight: a command buffer and a fence each.
class FrameSlots {
 public:
  FrameSlots(const VulkanContext& context, uint32_t count) : device_(context.device()) {
    VkCommandPoolCreateInfo pool{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pool.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    pool.queueFamilyIndex = context.queue_family();
    check_vk(vkCreateCommandPool(device_, &pool, nullptr, &pool_), "vkCreateCommandPool");
    commands_.resize(count);
    VkCommandBufferAllocateInfo alloc{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    alloc.commandPool = pool_;
    alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    alloc.commandBufferCount = count;
    check_vk(vkAllocateCommandBuffers(device_, &alloc, commands_.data()),
             "vkAllocateCommandBuffers");
    fences_.resize(count);
    VkFenceCreateInfo fence{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    fence.flags = VK_FENCE_CREATE_SIGNALED_BIT;
    for (VkFence& f : fences_)
      check_vk(vkCreateFence(device_, &fence, nullptr, &f), "vkCreateFence");
  }
  ~FrameSlots() {
    wait_all();
    for (VkFence f : fences_) vkDestroyFence(device_, f, nullptr);
    vkDestroyCommandPool(device_, pool_, nullptr);
  }
  void wait(uint32_t slot) {
    check_vk(vkWaitForFences(device_, 1, &fences_[slot], VK_TRUE, UINT64_MAX), "vkWaitForFences");
  }
  void wait_all() {
    vkWaitForFences(device_, static_cast<uint32_t>(fences_.size()), fences_.data(), VK_TRUE,
                    UINT64_MAX);
  }
  VkCommandBuffer commands(uint32_t slot) const { return commands_[slot]; }
  VkFence fence(uint32_t slot) const { return fences_[slot]; }

 private:
  VkDevice device_;
  VkCommandPool pool_ = VK_NULL_HANDLE;
  std::vector<VkCommandBuffer> commands_;
  std::vector<VkFence> fences_;
};

struct FrameTimes {
  double cpu = 0;   // the whole frame on the CPU, fence wait and PNG included
  double wait = 0;  // waiting for the fence of the frame in flight before it
  double loom = 0;  // inside loom_* calls: begin_frame, reload checks, launches, barrier
  double png = 0;
};

void print_times(const std::vector<FrameTimes>& times, double startup_ms, double total_ms) {
  std::printf(
      "timings: startup (device, Loom, modules, pipelines) %.1f ms; %zu frame(s) in %.1f ms\n",
      startup_ms, times.size(), total_ms);
  if (times.empty()) return;
  auto report = [&](const char* what, double FrameTimes::*member, size_t from) {
    std::vector<double> v;
    for (size_t i = from; i < times.size(); ++i) v.push_back(times[i].*member);
    if (v.empty()) return;
    double sum = 0;
    for (double x : v) sum += x;
    std::sort(v.begin(), v.end());
    std::printf("  %-38s mean %7.2f  median %7.2f  max %7.2f\n", what, sum / v.size(),
                v[v.size() / 2], v.back());
  };
  std::printf("  frame 1 (the modules' init pipelines too): %.2f ms, in Loom calls %.2f ms\n",
              times[0].cpu, times[0].loom);
  size_t from = times.size() > 1 ? 1 : 0;
  std::printf("  frames %zu to %zu, ms per frame on the CPU:\n", from + 1, times.size());
  report("frame (all)", &FrameTimes::cpu, from);
  report("waiting for the frame in flight", &FrameTimes::wait, from);
  report("Loom calls (reload checks, launches)", &FrameTimes::loom, from);
  report("PNG writing", &FrameTimes::png, from);
}

bool have_display() {
  const char* x = std::getenv("DISPLAY");
  const char* wayland = std::getenv("WAYLAND_DISPLAY");
  return (x && *x) || (wayland && *wayland);
}

int run(const Options& o) {
  Clock::time_point run_start = Clock::now();
  bool windowed = !o.headless && have_display() && glfwInit();
  if (!o.headless && !windowed) std::printf("no display: running headless\n");
  uint64_t frames = o.frames ? o.frames : (windowed ? 0 : 120);

  GLFWwindow* window = nullptr;
  VulkanContextOptions vo;
  vo.validation = o.validation;
  if (windowed) {
    glfwWindowHint(GLFW_CLIENT_API, GLFW_NO_API);
    window = glfwCreateWindow(static_cast<int>(o.width), static_cast<int>(o.height),
                              "Loom host sample", nullptr, nullptr);
    if (!window) throw std::runtime_error("cannot open a GLFW window");
    uint32_t n = 0;
    const char** extensions = glfwGetRequiredInstanceExtensions(&n);
    vo.instance_extensions.assign(extensions, extensions + n);
    vo.make_surface = [window](VkInstance instance) {
      VkSurfaceKHR surface = VK_NULL_HANDLE;
      return glfwCreateWindowSurface(instance, window, nullptr, &surface) == VK_SUCCESS
                 ? surface
                 : VK_NULL_HANDLE;
    };
  }
  struct WindowCloser {
    GLFWwindow* window;
    ~WindowCloser() {
      if (window) glfwDestroyWindow(window), glfwTerminate();
    }
  } window_closer{window};

  VulkanContext context(vo);
  ObjMesh cloth_mesh = load_obj(o.assets + "/meshes/cloth_grid.obj");
  ObjMesh sphere_mesh = load_obj(o.assets + "/meshes/sphere.obj");

  std::unique_ptr<FrameTarget> target;
  OffscreenTarget* offscreen = nullptr;
  if (windowed) {
    target = std::make_unique<SwapchainTarget>(
        context,
        [window] {
          int w = 0, h = 0;
          glfwGetFramebufferSize(window, &w, &h);
          return VkExtent2D{static_cast<uint32_t>(w), static_cast<uint32_t>(h)};
        },
        kFramesInFlight);
  } else {
    auto o_target =
        std::make_unique<OffscreenTarget>(context, VkExtent2D{o.width, o.height}, kFramesInFlight);
    offscreen = o_target.get();
    target = std::move(o_target);
  }
  LoomSimulation simulation(context, o.modules, kFramesInFlight);
  SceneRenderer renderer(context, *target, kFramesInFlight, cloth_mesh, sphere_mesh);
  FrameSlots slots(context, kFramesInFlight);  // first to go: waits for the frames in flight
  std::printf("device: %s (Loom: %s), %s %ux%u, %s\n", context.properties().deviceName,
              simulation.device_name().c_str(), windowed ? "window" : "offscreen",
              target->extent().width, target->extent().height, loom_version_string());

  std::vector<uint64_t> pending_png(kFramesInFlight, 0);  // the frame each slot will hand over
  auto write_pending = [&](uint32_t slot) {
    if (!offscreen || !pending_png[slot]) return;
    write_png(frame_file(o.png, pending_png[slot]), target->extent().width, target->extent().height,
              offscreen->pixels(slot));
    pending_png[slot] = 0;
  };

  double startup_ms = ms_since(run_start);
  Clock::time_point frames_start = Clock::now();
  std::vector<FrameTimes> times;
  uint64_t frame = 1;
  while (frames == 0 || frame <= frames) {
    if (window) {
      glfwPollEvents();
      if (glfwWindowShouldClose(window)) break;
    }
    FrameTimes t;
    Clock::time_point start = Clock::now();
    uint32_t slot = static_cast<uint32_t>((frame - 1) % kFramesInFlight);
    slots.wait(slot);
    t.wait = ms_since(start);
    Clock::time_point png_start = Clock::now();
    write_pending(slot);
    t.png = ms_since(png_start);

    for (const Replacement& r : o.replacements)
      if (r.frame == frame) {
        std::printf("frame %llu: %s replaced by %s\n", static_cast<unsigned long long>(frame),
                    simulation.module_path(r.module).c_str(), r.path.c_str());
        replace_file(r.path, simulation.module_path(r.module));
      }
    Clock::time_point loom_start = Clock::now();
    simulation.begin_frame();
    simulation.reload_changed(frame);
    t.loom = ms_since(loom_start);

    VkFramebuffer framebuffer = VK_NULL_HANDLE;
    if (!target->acquire(slot, &framebuffer)) {  // minimised or resized: try again
      if (window) glfwWaitEventsTimeout(0.05);
      continue;
    }
    VkCommandBuffer commands = slots.commands(slot);
    check_vk(vkResetCommandBuffer(commands, 0), "vkResetCommandBuffer");
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    check_vk(vkBeginCommandBuffer(commands, &begin), "vkBeginCommandBuffer");
    loom_start = Clock::now();
    simulation.record(commands, frame);
    t.loom += ms_since(loom_start);
    renderer.record(commands, slot, framebuffer, target->extent(), simulation.views());
    target->record_after_render_pass(slot, commands);
    check_vk(vkEndCommandBuffer(commands), "vkEndCommandBuffer");
    VkFence fence = slots.fence(slot);
    check_vk(vkResetFences(context.device(), 1, &fence), "vkResetFences");
    target->submit(slot, commands, fence);
    if (offscreen && !o.png.empty() && frame % o.every == 0) pending_png[slot] = frame;
    t.cpu = ms_since(start);
    times.push_back(t);
    ++frame;
  }
  slots.wait_all();
  for (uint32_t slot = 0; slot < kFramesInFlight; ++slot) write_pending(slot);
  print_times(times, startup_ms, ms_since(frames_start));
  if (o.validation) {
    std::printf("validation: %d message(s)\n", context.validation_messages());
    if (context.validation_messages()) return kExitValidation;
  }
  return 0;
}

}  // namespace
}  // namespace host_sample

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // in order with stderr when both go to a log
  host_sample::Options options = host_sample::parse_options(argc, argv);
  try {
    return host_sample::run(options);
  } catch (const host_sample::NoVulkanDevice& e) {
    std::fprintf(stderr, "loom-host-sample: %s\n", e.what());
    return host_sample::kExitNoDevice;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "loom-host-sample: %s\n", e.what());
    return 1;
  }
}
