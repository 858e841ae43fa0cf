// A GLFW window presenting through the swapchain: a few frames, a resize (the swapchain is
// rebuilt), then a screenshot read back from the swapchain image. Needs a display: ctest runs
// it under tests/render/with_xvfb.sh, which starts a private Xvfb.
#include <gtest/gtest.h>

#define GLFW_INCLUDE_VULKAN
#include <GLFW/glfw3.h>

#include <chrono>
#include <thread>

#include "runtime/render/scene_renderer.h"
#include "tests/render/reference_image.h"
#include "tests/render/render_test_util.h"

namespace loom::render_test {
namespace {

using render::Frame;
using render::FrameLoop;

struct Glfw {
  Glfw() { ok = glfwInit(); }
  ~Glfw() {
    if (ok) glfwTerminate();
  }
  bool ok = false;
};

TEST(RenderWindow, PresentsResizesAndCaptures) {
  LOOM_REQUIRE_VULKAN_OR_SKIP();
  Glfw glfw;
  ASSERT_TRUE(glfw.ok)
      << "GLFW could not start: no display? (ctest runs this under tests/render/with_xvfb.sh)";
  ASSERT_TRUE(glfwVulkanSupported()) << "GLFW finds no Vulkan loader";
  glfwWindowHint(GLFW_CLIENT_API, GLFW_NO_API);
  GLFWwindow* window = glfwCreateWindow(320, 240, "loom render test", nullptr, nullptr);
  ASSERT_NE(window, nullptr);
  {
    vk::DeviceOptions options = graphics_options();
    uint32_t count = 0;
    const char** extensions = glfwGetRequiredInstanceExtensions(&count);
    for (uint32_t i = 0; i < count; ++i) options.instance_extensions.emplace_back(extensions[i]);
    options.surface = [window](VkInstance instance) {
      VkSurfaceKHR surface = VK_NULL_HANDLE;
      return glfwCreateWindowSurface(instance, window, nullptr, &surface) == VK_SUCCESS
                 ? surface
                 : VK_NULL_HANDLE;
    };
    vk::VulkanDevice device(options);
    {
      std::unique_ptr<FrameLoop> loop = FrameLoop::for_window(device, window);
      EXPECT_TRUE(loop->windowed());
      render::SceneRenderer scene(*loop);
      std::vector<float> xy, s;
      spiral(240, &xy, &s);
      render::PointsLayer& points = scene.add_points();
      render::PointData d{{"spiral", xy.data(), 240, 2}};
      d.scalars = s.data();
      points.update(d);
      points.style.size = 9;
      points.style.shaded = false;
      render::Camera camera;
      auto frame = [&](bool capture) {
        Frame f;
        if (!loop->begin_frame(&f)) return false;
        render::Rect all{0, 0, static_cast<float>(f.extent.width),
                         static_cast<float>(f.extent.height)};
        camera.fit(scene.bounds(), all.width / all.height);
        scene.draw(f, all, camera);
        if (capture) loop->capture_frame();
        loop->end_frame();
        return true;
      };
      for (int i = 0; i < 3; ++i) {
        ASSERT_TRUE(frame(false));
        glfwPollEvents();
      }
      EXPECT_EQ(loop->extent().width, 320u);
      EXPECT_EQ(loop->extent().height, 240u);
      expect_no_validation(device);

      glfwSetWindowSize(window, 400, 300);
      int w = 0, h = 0;
      for (int i = 0; i < 200 && (w != 400 || h != 300); ++i) {
        glfwPollEvents();
        glfwGetFramebufferSize(window, &w, &h);
        if (w != 400 || h != 300) std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
      ASSERT_EQ(w, 400) << "the X server did not resize the window";
      for (int i = 0; i < 4; ++i) ASSERT_TRUE(frame(false));
      EXPECT_EQ(loop->extent().width, 400u);
      EXPECT_EQ(loop->extent().height, 300u);
      EXPECT_GE(loop->stats().swapchain_rebuilds, 2u);
      ASSERT_TRUE(frame(true));
      RgbaImage shot = loop->take_capture();
      EXPECT_EQ(shot.width, 400);
      EXPECT_EQ(shot.height, 300);
      EXPECT_TRUE(matches_reference(shot, "window_resized"));
      EXPECT_EQ(loop->stats().frames, 8u);
    }
    expect_no_validation(device);
  }
  glfwDestroyWindow(window);
}

}  // namespace
}  // namespace loom::render_test
