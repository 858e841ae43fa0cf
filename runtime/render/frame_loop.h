// The render loop: frames recorded into per-frame command buffers, 2-3 of them in flight,
// synchronised by one fence per frame and binary semaphores with the swapchain. Two targets
// behind one API: a GLFW window's swapchain (resize and out-of-date handled here) or an
// offscreen colour + depth image of a given size, whose frames can be read back as RGBA8.
//
//   begin_frame() -> the caller records its draws (the scene renderer, Dear ImGui's draw
//   data, ...) into Frame::commands, inside the frame's one render pass -> end_frame().
//
// The host waits only for the frame that last used the same slot (begin_frame), for a
// captured frame (take_capture), for a one-time submission, and at teardown.
#pragma once

#include <vulkan/vulkan.h>

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "runtime/render/png.h"

struct GLFWwindow;

namespace loom::vk {
class VulkanDevice;
class MemoryAllocator;
class CommandStream;
class GpuBuffer;
class GpuImage;
class PipelineCache;
}  // namespace loom::vk

namespace loom::render {

struct FrameLoopOptions {
  uint32_t frames_in_flight = 2;  // 1 to 3
  bool vsync = true;              // window: FIFO; otherwise MAILBOX, else IMMEDIATE, when offered
  std::array<float, 4> clear_color = {0.11f, 0.11f, 0.13f, 1.0f};  // the whole frame, at its start
  std::string pipeline_cache_dir;  // empty: pipelines cached in memory only
};

// The frame being recorded. `commands` is inside the render pass, viewport and scissor set
// to the whole frame.
struct Frame {
  VkCommandBuffer commands = VK_NULL_HANDLE;
  VkExtent2D extent{};
  uint32_t slot = 0;    // which of the frames in flight, 0 .. frames_in_flight - 1
  uint64_t number = 0;  // frames begun before this one
};

// What Dear ImGui's ImGui_ImplVulkan_Init (and any other renderer drawing into the frame)
// needs; editor/app/imgui_vulkan.h fills ImGui_ImplVulkan_InitInfo from it.
struct RenderContext {
  VkInstance instance = VK_NULL_HANDLE;
  VkPhysicalDevice physical_device = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  uint32_t queue_family = 0;
  VkQueue queue = VK_NULL_HANDLE;
  VkPipelineCache pipeline_cache = VK_NULL_HANDLE;
  VkDescriptorPool descriptor_pool = VK_NULL_HANDLE;  // combined image samplers, sets freeable
  VkRenderPass render_pass = VK_NULL_HANDLE;          // stays the same for the loop's life
  uint32_t subpass = 0;
  uint32_t min_image_count = 2;
  uint32_t image_count = 2;  // never fewer than the frames in flight
  VkSampleCountFlagBits samples = VK_SAMPLE_COUNT_1_BIT;
};

class FrameLoop {
 public:
  // Presents to `window` (made with GLFW_CLIENT_API = GLFW_NO_API) through the surface of
  // `device` (DeviceOptions::surface = glfwCreateWindowSurface, graphics = true).
  static std::unique_ptr<FrameLoop> for_window(vk::VulkanDevice& device, GLFWwindow* window,
                                               const FrameLoopOptions& options = {});
  // Renders into an offscreen RGBA8 colour image and a depth image of this size.
  static std::unique_ptr<FrameLoop> offscreen(vk::VulkanDevice& device, uint32_t width,
                                              uint32_t height,
                                              const FrameLoopOptions& options = {});
  ~FrameLoop();  // waits for its own frames and uploads, then releases everything
  FrameLoop(const FrameLoop&) = delete;
  FrameLoop& operator=(const FrameLoop&) = delete;

  // False when there is nothing to draw into now (a minimised window): skip the frame.
  // Recreates the swapchain first when the window's size changed or it went out of date.
  bool begin_frame(Frame* frame);
  // Ends the render pass, submits the frame's uploads and the frame, presents.
  void end_frame();
  bool in_frame() const { return in_frame_; }

  // Reads back the frame being recorded (call between begin_frame and end_frame); the pixels
  // come from take_capture(). A window needs a swapchain usable as a copy source.
  void capture_frame();
  // The last captured frame as RGBA8, top row first; waits for that frame only. Throws
  // loom::Error when no frame was captured.
  RgbaImage take_capture();

  VkExtent2D extent() const { return extent_; }
  // Offscreen: a new size from the next frame on. A window follows its framebuffer size.
  void resize(uint32_t width, uint32_t height);
  bool windowed() const { return window_ != nullptr; }
  uint32_t frames_in_flight() const { return static_cast<uint32_t>(slots_.size()); }
  VkFormat color_format() const { return color_format_; }
  VkFormat depth_format() const { return depth_format_; }

  RenderContext context() const;
  // Submits pending uploads and waits for them and every frame in flight (teardown of what
  // they use, such as Dear ImGui's ImGui_ImplVulkan_Shutdown); never needed between frames.
  void wait_frames();
  // Records with `record` into a fresh command buffer, submits it and waits for it alone
  // (Dear ImGui's font upload: ImGui_ImplVulkan_CreateFontsTexture).
  void submit_once(const std::function<void(VkCommandBuffer)>& record);

  // Uploads, for renderers drawing into the frame. The returned host memory is copied into
  // `dst` (whole image for images, tightly packed texels) before the next frame's draws;
  // fill it before end_frame(). A frame still reading `dst` finishes first (a device-side
  // barrier: the host never waits).
  uint8_t* upload_to(const vk::GpuBuffer& dst, VkDeviceSize offset, VkDeviceSize bytes);
  uint8_t* upload_to(vk::GpuImage& dst);
  // Keeps `resource` alive until every frame recorded so far has completed.
  template <class T>
  void retire(T&& resource) {
    retire_shared(std::make_shared<std::decay_t<T>>(std::forward<T>(resource)));
  }
  void retire_shared(std::shared_ptr<void> resource);

  vk::VulkanDevice& device() const { return device_; }
  vk::MemoryAllocator& allocator() const { return *allocator_; }
  VkPipelineCache pipeline_cache() const;
  VkRenderPass render_pass() const { return render_pass_; }

  struct Stats {
    uint64_t frames = 0, skipped = 0, swapchain_rebuilds = 0, captures = 0;
    uint64_t upload_bytes = 0, uploads = 0;
    uint64_t fence_waits = 0;  // begin_frame waits that actually blocked
  };
  const Stats& stats() const { return stats_; }

 private:
  struct Target;  // a presentable or offscreen image with its view and framebuffer
  struct Slot;    // one frame in flight
  struct Attachment;
  FrameLoop(vk::VulkanDevice& device, GLFWwindow* window, const FrameLoopOptions& options);
  void create_common();
  void create_render_pass();
  void build_targets(uint32_t width, uint32_t height);
  void build_swapchain(uint32_t width, uint32_t height);
  void destroy_targets();
  void wait_all_frames();
  void wait_slot(Slot& slot);
  void land_capture(Slot& slot);
  void record_capture(Slot& slot, VkImage image);
  void begin_uploads();
  VkDevice vk() const;

  vk::VulkanDevice& device_;
  GLFWwindow* window_ = nullptr;
  FrameLoopOptions options_;
  std::unique_ptr<vk::MemoryAllocator> allocator_;
  std::unique_ptr<vk::CommandStream> uploads_;
  std::unique_ptr<vk::PipelineCache> pipeline_cache_;
  uint64_t upload_barrier_at_ = 0;  // the upload recording that already has its barrier
  VkCommandPool pool_ = VK_NULL_HANDLE;
  VkDescriptorPool ui_descriptors_ = VK_NULL_HANDLE;
  VkRenderPass render_pass_ = VK_NULL_HANDLE;
  VkFormat color_format_ = VK_FORMAT_R8G8B8A8_UNORM;
  VkFormat depth_format_ = VK_FORMAT_D32_SFLOAT;
  VkColorSpaceKHR color_space_ = VK_COLOR_SPACE_SRGB_NONLINEAR_KHR;
  VkPresentModeKHR present_mode_ = VK_PRESENT_MODE_FIFO_KHR;
  VkSwapchainKHR swapchain_ = VK_NULL_HANDLE;
  bool swapchain_copyable_ = false;
  bool rebuild_ = false;
  uint32_t min_image_count_ = 2;
  uint32_t image_count_ = 2;
  VkExtent2D extent_{};
  std::vector<std::unique_ptr<Target>> targets_;
  std::unique_ptr<Attachment> depth_;
  std::vector<std::unique_ptr<Slot>> slots_;
  std::vector<VkSemaphore> rendered_;  // per swapchain image: the frame's output, waited by present
  bool in_frame_ = false;
  uint32_t image_ = 0;  // target of the frame being recorded
  uint64_t frame_number_ = 0;
  int capture_slot_ = -1;  // slot whose readback holds an unread capture
  std::vector<std::pair<uint64_t, std::shared_ptr<void>>>
      retired_;                    // (frame that must complete, resource)
  uint64_t completed_frames_ = 0;  // frames known to have completed
  RgbaImage captured_;
  bool have_capture_ = false;
  Stats stats_;
};

}  // namespace loom::render
