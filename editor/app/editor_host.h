// What the editor runs in: a GLFW window presenting through Vulkan, or an offscreen image of
// a given size (headless: tests, benchmarks, screenshots without a display), the render
// loop, Dear ImGui with its GLFW (window only) and Vulkan backends, the scene renderer, and
// the EditorApp. The simulation shares the render device when it runs on Vulkan.
//
//   EditorHost host(options);
//   host.app().open("assets/graphs/mpm88.loom.json");
//   while (host.frame()) {}
#pragma once

#include <imgui.h>

#include <memory>
#include <string>
#include <vector>

#include "editor/app/editor_app.h"
#include "runtime/render/png.h"

struct GLFWwindow;

namespace loom::vk {
class VulkanDevice;
}
namespace loom::render {
class FrameLoop;
class SceneRenderer;
}  // namespace loom::render

namespace loom::editor {

struct HostOptions {
  bool headless = false;  // offscreen, no window, no display needed
  uint32_t width = 1600, height = 900;
  Backend backend = default_backend();  // the simulation's: Auto runs on the render device
  std::string device;                   // "" the best Vulkan device, an index, or part of its name
  bool validation = false;              // Vulkan validation layer (messages: validation_messages())
  bool vsync = true;                    // window only
  bool hide_timings = false;
  std::string cache_dir;  // compiled kernels; "" the default
  bool offline_cache = true;
};

class EditorHost {
 public:
  // Throws loom::Error when there is no display for a window (say --headless) or no Vulkan
  // device to draw with (the message says which package provides one).
  explicit EditorHost(const HostOptions& options);
  ~EditorHost();
  EditorHost(const EditorHost&) = delete;
  EditorHost& operator=(const EditorHost&) = delete;

  EditorApp& app() { return *app_; }
  // One frame: window events (or the input fed through io()), the UI, the scene, present.
  // `capture` reads the frame back for take_capture(). False once the app has quit.
  bool frame(bool capture = false);
  RgbaImage take_capture();
  // The viewport's scene rectangle cut out of a capture.
  RgbaImage viewport_of(const RgbaImage& capture) const;

  // Headless input: set mouse, buttons, wheel and keys here before frame(); a window takes
  // them from GLFW.
  ImGuiIO& io();
  bool windowed() const { return window_ != nullptr; }
  uint64_t frames() const { return frames_; }
  // Validation messages so far (with HostOptions::validation), taken.
  std::vector<std::string> validation_messages();
  // The time the last frame spent recording (UI and scene) and waiting, for benchmarks.
  double last_frame_ms() const { return last_frame_ms_; }

 private:
  void init_imgui();

  HostOptions options_;
  GLFWwindow* window_ = nullptr;
  bool glfw_ = false;
  std::shared_ptr<vk::VulkanDevice> device_;
  std::unique_ptr<render::FrameLoop> loop_;
  std::unique_ptr<render::SceneRenderer> scene_;
  std::unique_ptr<CanvasFonts> fonts_;
  std::unique_ptr<EditorApp> app_;
  ImGuiContext* imgui_ = nullptr;
  bool imgui_vulkan_ = false, imgui_glfw_ = false;
  std::string title_;
  uint64_t frames_ = 0;
  double last_frame_ms_ = 0;
};

// The editor's look: dark, square tiles, a little more room than ImGui's defaults.
void apply_editor_style(ImGuiStyle& style);

}  // namespace loom::editor
