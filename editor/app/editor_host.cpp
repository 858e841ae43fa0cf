#include "editor/app/editor_host.h"

#define GLFW_INCLUDE_VULKAN
#include <GLFW/glfw3.h>
#include <imgui_impl_glfw.h>
#include <imgui_impl_vulkan.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "editor/app/imgui_vulkan.h"
#include "runtime/common/error.h"
#include "runtime/render/frame_loop.h"
#include "runtime/render/scene_renderer.h"
#include "runtime/vulkan/vulkan_device.h"

namespace loom::editor {

namespace {

std::string last_glfw_error;

void glfw_error(int code, const char* message) {
  last_glfw_error = std::to_string(code) + ": " + message;
}

void check_vk(VkResult r) {
  if (r < 0)
    std::fprintf(stderr, "loom-editor: Dear ImGui's Vulkan backend: VkResult %d\n",
                 static_cast<int>(r));
}

}  // namespace

void apply_editor_style(ImGuiStyle& style) {
  ImGui::StyleColorsDark(&style);
  style.WindowRounding = 0;
  style.WindowBorderSize = 0;
  style.FrameRounding = 3;
  style.GrabRounding = 3;
  style.PopupRounding = 3;
  style.ScrollbarRounding = 3;
  style.TabRounding = 3;
  style.WindowPadding = ImVec2(8, 6);
  style.FramePadding = ImVec2(6, 3);
  style.ItemSpacing = ImVec2(6, 5);
  style.Colors[ImGuiCol_WindowBg] = ImVec4(0.12f, 0.12f, 0.14f, 1.0f);
  style.Colors[ImGuiCol_TitleBg] = ImVec4(0.16f, 0.17f, 0.20f, 1.0f);
  style.Colors[ImGuiCol_TitleBgActive] = ImVec4(0.20f, 0.25f, 0.34f, 1.0f);
  style.Colors[ImGuiCol_MenuBarBg] = ImVec4(0.16f, 0.17f, 0.20f, 1.0f);
}

EditorHost::EditorHost(const HostOptions& options) : options_(options) {
  vk::DeviceOptions dev;
  dev.select = options.device;
  dev.validation = options.validation;
  dev.graphics = true;
  if (!options.headless) {
    glfwSetErrorCallback(glfw_error);
    if (!glfwInit())
      throw Error("cannot open a window: GLFW found no display (" + last_glfw_error +
                  "); set DISPLAY, or run headless with --headless");
    glfw_ = true;
    if (!glfwVulkanSupported())
      throw Error("GLFW finds no Vulkan loader (Debian package libvulkan1)");
    glfwWindowHint(GLFW_CLIENT_API, GLFW_NO_API);
    window_ = glfwCreateWindow(static_cast<int>(options.width), static_cast<int>(options.height),
                               "Loom", nullptr, nullptr);
    if (!window_) throw Error("cannot create a window: " + last_glfw_error);
    uint32_t count = 0;
    const char** extensions = glfwGetRequiredInstanceExtensions(&count);
    for (uint32_t i = 0; i < count; ++i) dev.instance_extensions.emplace_back(extensions[i]);
    GLFWwindow* w = window_;
    dev.surface = [w](VkInstance instance) {
      VkSurfaceKHR surface = VK_NULL_HANDLE;
      return glfwCreateWindowSurface(instance, w, nullptr, &surface) == VK_SUCCESS ? surface
                                                                                   : VK_NULL_HANDLE;
    };
  }
  try {
    device_ = std::make_shared<vk::VulkanDevice>(dev);
  } catch (const Error& e) {
    throw Error(std::string("the editor draws with Vulkan and has no device: ") + e.what() +
                " (a software one: Debian package mesa-vulkan-drivers)");
  }
  render::FrameLoopOptions lo;
  lo.vsync = options.vsync;
  ImGuiStyle style;  // the panels draw no background: the frame is cleared to theirs
  apply_editor_style(style);
  const ImVec4& bg = style.Colors[ImGuiCol_WindowBg];
  lo.clear_color = {bg.x, bg.y, bg.z, 1.0f};
  loop_ = window_ ? render::FrameLoop::for_window(*device_, window_, lo)
                  : render::FrameLoop::offscreen(*device_, options.width, options.height, lo);
  scene_ = std::make_unique<render::SceneRenderer>(*loop_);
  init_imgui();

  // The simulation: on Vulkan, a device of its own on the same GPU (the viewport draws host
  // copies, so nothing needs the render device's buffers): a dispatch that never ends then
  // holds the simulation's queue, not the one the window presents on, and Stop gives that
  // device up. `auto` keeps it on the CPU backend when the GPU is a software renderer.
  VkPhysicalDeviceProperties props{};
  vkGetPhysicalDeviceProperties(device_->physical(), &props);
  Backend backend = options.backend;
  std::string why;
  if (backend == Backend::Auto) {
    bool software = props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
    backend = software ? Backend::Cpu : Backend::Vulkan;
    if (software)
      why = std::string("the simulation runs on the CPU backend: the Vulkan device (") +
            props.deviceName + ") renders on the CPU too; --backend vulkan runs it there";
  }
  EditorOptions eo;
  eo.program.backend = backend;
  eo.program.offline_cache = options.offline_cache;
  eo.program.cache_dir = options.cache_dir;
  if (backend == Backend::Vulkan) {
    eo.program.device = options.device;
    eo.program.validation = options.validation;
  }
  eo.fonts = fonts_.get();
  eo.hide_timings = options.hide_timings;
  app_ = std::make_unique<EditorApp>(eo);
  app_->session().note(LogEntry::Level::Info, std::string("drawing with ") + props.deviceName);
  if (!why.empty()) app_->session().note(LogEntry::Level::Notice, why);
}

void EditorHost::init_imgui() {
  IMGUI_CHECKVERSION();
  imgui_ = ImGui::CreateContext();
  ImGuiIO& io = ImGui::GetIO();
  io.IniFilename = nullptr;  // the layout is the app's; nothing written beside the user's files
  io.ConfigFlags |= ImGuiConfigFlags_NavEnableKeyboard;
  apply_editor_style(ImGui::GetStyle());
  fonts_ = std::make_unique<CanvasFonts>();
  fonts_->add_to(io.Fonts);
  if (window_) {
    ImGui_ImplGlfw_InitForVulkan(window_, true);
    imgui_glfw_ = true;
  } else {
    // Headless input uses GLFW's key codes, as the window does (imgui_impl_glfw's map).
    const std::pair<ImGuiKey_, int> keys[] = {{ImGuiKey_Tab, GLFW_KEY_TAB},
                                              {ImGuiKey_LeftArrow, GLFW_KEY_LEFT},
                                              {ImGuiKey_RightArrow, GLFW_KEY_RIGHT},
                                              {ImGuiKey_UpArrow, GLFW_KEY_UP},
                                              {ImGuiKey_DownArrow, GLFW_KEY_DOWN},
                                              {ImGuiKey_PageUp, GLFW_KEY_PAGE_UP},
                                              {ImGuiKey_PageDown, GLFW_KEY_PAGE_DOWN},
                                              {ImGuiKey_Home, GLFW_KEY_HOME},
                                              {ImGuiKey_End, GLFW_KEY_END},
                                              {ImGuiKey_Insert, GLFW_KEY_INSERT},
                                              {ImGuiKey_Delete, GLFW_KEY_DELETE},
                                              {ImGuiKey_Backspace, GLFW_KEY_BACKSPACE},
                                              {ImGuiKey_Space, GLFW_KEY_SPACE},
                                              {ImGuiKey_Enter, GLFW_KEY_ENTER},
                                              {ImGuiKey_Escape, GLFW_KEY_ESCAPE},
                                              {ImGuiKey_KeyPadEnter, GLFW_KEY_KP_ENTER},
                                              {ImGuiKey_A, GLFW_KEY_A},
                                              {ImGuiKey_C, GLFW_KEY_C},
                                              {ImGuiKey_V, GLFW_KEY_V},
                                              {ImGuiKey_X, GLFW_KEY_X},
                                              {ImGuiKey_Y, GLFW_KEY_Y},
                                              {ImGuiKey_Z, GLFW_KEY_Z}};
    for (const auto& [key, code] : keys) io.KeyMap[key] = code;
    io.DisplaySize =
        ImVec2(static_cast<float>(options_.width), static_cast<float>(options_.height));
    io.DeltaTime = 1.0f / 60.0f;
  }
  if (!start_imgui_vulkan(*loop_, check_vk))
    throw Error("Dear ImGui's Vulkan backend did not start");
  imgui_vulkan_ = true;
}

EditorHost::~EditorHost() {
  if (loop_) loop_->wait_frames();
  app_.reset();  // the program's buffers live on the device
  if (imgui_vulkan_) ImGui_ImplVulkan_Shutdown();
  if (imgui_glfw_) ImGui_ImplGlfw_Shutdown();
  if (imgui_) ImGui::DestroyContext(imgui_);
  scene_.reset();
  loop_.reset();
  device_.reset();
  if (window_) glfwDestroyWindow(window_);
  if (glfw_) glfwTerminate();
}

ImGuiIO& EditorHost::io() { return ImGui::GetIO(); }

bool EditorHost::frame(bool capture) {
  if (app_->quit()) return false;
  auto t0 = std::chrono::steady_clock::now();
  if (window_) {
    glfwPollEvents();
    if (glfwWindowShouldClose(window_)) {
      glfwSetWindowShouldClose(window_, GLFW_FALSE);
      app_->request_quit();
    }
    std::string title = app_->title();
    if (title != title_) glfwSetWindowTitle(window_, (title_ = title).c_str());
    ImGui_ImplGlfw_NewFrame();
  } else {
    ImGuiIO& io = ImGui::GetIO();
    io.DisplaySize = ImVec2(static_cast<float>(loop_->extent().width),
                            static_cast<float>(loop_->extent().height));
    io.DeltaTime = 1.0f / 60.0f;
  }
  ImGui_ImplVulkan_NewFrame();
  ImGui::NewFrame();
  app_->frame();
  ImGui::Render();
  if (!window_) {  // headless input is events of one frame, as a backend feeds them
    ImGuiIO& io = ImGui::GetIO();
    io.MouseWheel = io.MouseWheelH = 0;
  }
  render::Frame f;
  if (loop_->begin_frame(&f)) {
    app_->render_scene(*scene_, f);
    ImGui_ImplVulkan_RenderDrawData(ImGui::GetDrawData(), f.commands);
    if (capture) loop_->capture_frame();
    loop_->end_frame();
  } else if (window_) {
    glfwWaitEventsTimeout(0.05);  // minimised: nothing to draw, do not spin
  }
  ++frames_;
  last_frame_ms_ =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return !app_->quit();
}

RgbaImage EditorHost::take_capture() { return loop_->take_capture(); }

RgbaImage EditorHost::viewport_of(const RgbaImage& capture) const {
  const render::Rect& r = app_->viewport().scene_rect();
  int x0 = std::max(0, static_cast<int>(r.x)), y0 = std::max(0, static_cast<int>(r.y));
  int x1 = std::min(capture.width, static_cast<int>(r.x + r.width)),
      y1 = std::min(capture.height, static_cast<int>(r.y + r.height));
  RgbaImage out;
  out.width = std::max(0, x1 - x0);
  out.height = std::max(0, y1 - y0);
  out.pixels.resize(static_cast<size_t>(out.width) * static_cast<size_t>(out.height) * 4);
  for (int y = 0; y < out.height; ++y)
    std::copy(capture.at(x0, y0 + y),
              capture.at(x0, y0 + y) + static_cast<ptrdiff_t>(out.width) * 4,
              &out.pixels[static_cast<size_t>(y) * out.width * 4]);
  return out;
}

std::vector<std::string> EditorHost::validation_messages() { return device_->take_messages(); }

}  // namespace loom::editor
