// Dear ImGui's Vulkan backend on a render::FrameLoop: the one place that fills
// ImGui_ImplVulkan_InitInfo from the loop's RenderContext (the editor's host and the render
// tests both start it here). Library loom_imgui_vulkan: runtime/render + Dear ImGui.
#pragma once

#include <vulkan/vulkan.h>

namespace loom::render {
class FrameLoop;
}

namespace loom::editor {

// Starts ImGui_ImplVulkan for `loop`'s render pass in the current ImGui context and uploads
// its fonts; `check_vk_result` sees every VkResult the backend gets. False when the backend
// does not start (nothing to shut down then); otherwise ImGui_ImplVulkan_Shutdown() after
// loop.wait_frames() ends it.
bool start_imgui_vulkan(render::FrameLoop& loop, void (*check_vk_result)(VkResult));

}  // namespace loom::editor
