#include "editor/app/imgui_vulkan.h"

#include <imgui.h>
#include <imgui_impl_vulkan.h>

#include "runtime/render/frame_loop.h"

namespace loom::editor {

namespace {

ImGui_ImplVulkan_InitInfo init_info_of(const render::RenderContext& c,
                                       void (*check_vk_result)(VkResult)) {
  ImGui_ImplVulkan_InitInfo info{};
  info.Instance = c.instance;
  info.PhysicalDevice = c.physical_device;
  info.Device = c.device;
  info.QueueFamily = c.queue_family;
  info.Queue = c.queue;
  info.PipelineCache = c.pipeline_cache;
  info.DescriptorPool = c.descriptor_pool;
  info.Subpass = c.subpass;
  info.MinImageCount = c.min_image_count;
  info.ImageCount = c.image_count;
  info.MSAASamples = c.samples;
  info.CheckVkResultFn = check_vk_result;
  return info;
}

}  // namespace

bool start_imgui_vulkan(render::FrameLoop& loop, void (*check_vk_result)(VkResult)) {
  render::RenderContext c = loop.context();
  ImGui_ImplVulkan_InitInfo info = init_info_of(c, check_vk_result);
  // Dear ImGui 1.86 builds its pipeline for this render pass, which stays for the loop's life.
  if (!ImGui_ImplVulkan_Init(&info, c.render_pass)) return false;
  loop.submit_once([](VkCommandBuffer cb) { ImGui_ImplVulkan_CreateFontsTexture(cb); });
  ImGui_ImplVulkan_DestroyFontUploadObjects();
  return true;
}

}  // namespace loom::editor
