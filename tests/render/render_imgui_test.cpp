// The editor's use of the render loop: the scene drawn into a rectangle of the frame, then
// Dear ImGui 1.86 (Debian's libimgui) in the same render pass, initialised from
// FrameLoop::context() by editor::start_imgui_vulkan (as the editor's host does). Validation on.
#include <gtest/gtest.h>

#include <imgui.h>
#include <imgui_impl_vulkan.h>

#include "editor/app/imgui_vulkan.h"
#include "runtime/render/scene_renderer.h"
#include "tests/render/reference_image.h"
#include "tests/render/render_test_util.h"

namespace loom::render_test {
namespace {

void check_vk(VkResult r) {
  if (r != VK_SUCCESS) ADD_FAILURE() << "Dear ImGui's Vulkan backend: VkResult " << r;
}

TEST_F(RenderTest, DearImGuiDrawsOverTheSceneInTheSameRenderPass) {
  render::FrameLoop& loop = offscreen(480, 300);
  render::SceneRenderer scene(loop);
  std::vector<float> xy, s;
  spiral(240, &xy, &s);
  render::PointsLayer& points = scene.add_points();
  render::PointData d{{"spiral", xy.data(), 240, 2}};
  d.scalars = s.data();
  points.update(d);
  points.style.size = 8;
  points.style.shaded = false;

  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGuiIO& io = ImGui::GetIO();
  io.IniFilename = nullptr;
  io.DisplaySize = ImVec2(480, 300);
  io.DeltaTime = 1.0f / 60.0f;
  ImGui::StyleColorsDark();
  ASSERT_TRUE(editor::start_imgui_vulkan(loop, check_vk));

  // The editor's layout: the viewport on the left, a panel on the right.
  render::Rect viewport{0, 0, 300, 300};
  render::Camera camera;
  camera.fit(scene.bounds(), 1.0f);
  float size = 8;
  for (int frame = 0; frame < 4; ++frame) {
    ImGui_ImplVulkan_NewFrame();
    ImGui::NewFrame();
    ImGui::SetNextWindowPos(ImVec2(305, 5));
    ImGui::SetNextWindowSize(ImVec2(170, 120));
    ImGui::Begin("Particles", nullptr, ImGuiWindowFlags_NoSavedSettings);
    ImGui::Text("count: %zu", points.count());
    ImGui::SliderFloat("size", &size, 1, 20);
    ImGui::Button("Play");
    ImGui::End();
    ImGui::Render();
    render::Frame f;
    ASSERT_TRUE(loop.begin_frame(&f));
    scene.draw(f, viewport, camera);
    ImGui_ImplVulkan_RenderDrawData(ImGui::GetDrawData(), f.commands);
    if (frame == 3) loop.capture_frame();
    loop.end_frame();
  }
  EXPECT_TRUE(matches_reference(loop.take_capture(), "imgui_over_scene"));
  loop.wait_frames();  // Dear ImGui frees its buffers at once
  ImGui_ImplVulkan_Shutdown();
  ImGui::DestroyContext();
}

}  // namespace
}  // namespace loom::render_test
