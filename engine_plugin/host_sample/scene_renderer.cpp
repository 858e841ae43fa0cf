#include "scene_renderer.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

#include "frame_target.h"
#include "scene_math.h"
#include "shaders/cloth_frag.h"
#include "shaders/cloth_vert.h"
#include "shaders/floor_frag.h"
#include "shaders/mesh_frag.h"
#include "shaders/mesh_vert.h"
#include "shaders/panel_frag.h"
#include "shaders/panel_vert.h"
#include "shaders/points_frag.h"
#include "shaders/points_vert.h"
#include "vulkan_context.h"

namespace host_sample {

namespace {

// The scene's fixed layout (world units; the cloth module's sphere is at the origin, radius 0.3).
constexpr Vec3 kEye{0.0f, 0.62f, 1.95f};
constexpr Vec3 kLookAt{0.0f, 0.08f, -0.4f};
constexpr float kFovY = 0.68f;  // radians
constexpr float kFloorY = -0.3f;
constexpr float kSphereRadius = 0.295f;  // a hair inside the cloth's collision radius
constexpr float kPanelTilt = 0.38f;      // radians: the panels turn towards the middle
constexpr float kPanelBorder = 0.035f;
constexpr float kClear[4] = {0.055f, 0.065f, 0.085f, 1.0f};  // lighting.glsl's kBackground

// Push constants of every pipeline: the camera, then four vectors whose meaning each
// shader's `Draw` block names.
struct DrawConstants {
  Mat4 view_proj;
  union Row {
    float f[4];
    int32_t i[4];
  } row[4];
};
static_assert(sizeof(DrawConstants) == 128, "push constants: 128 bytes, what every device has");

void set(DrawConstants::Row& row, float x, float y, float z, float w) {
  row.f[0] = x, row.f[1] = y, row.f[2] = z, row.f[3] = w;
}
void set(DrawConstants::Row& row, Vec3 v, float w) { set(row, v.x, v.y, v.z, w); }

struct Panel {
  Vec3 origin, u, v;  // corner, edges
};

// A panel of `width` x `height` centred at `centre`, turned by `tilt` about the vertical.
Panel panel(Vec3 centre, float width, float height, float tilt) {
  Vec3 u = Vec3{std::cos(tilt), 0.0f, std::sin(tilt)} * width;
  Vec3 v{0.0f, height, 0.0f};
  return {centre - u * 0.5f - v * 0.5f, u, v};
}

// The same panel grown by `margin` on every side and set back behind it.
Panel frame(const Panel& p, float margin) {
  Vec3 du = normalize(p.u) * margin;
  Vec3 dv = normalize(p.v) * margin;
  Vec3 back = normalize(cross(p.u, p.v)) * -0.003f;
  return {p.origin - du - dv + back, p.u + du * 2.0f, p.v + dv * 2.0f};
}

// The fractal (3:2, as the julia module paints it) on the left, the particles on the right.
Panel fractal_panel() { return panel({-0.98f, 0.32f, -1.0f}, 1.2f, 0.8f, -kPanelTilt); }
Panel particle_panel() { return panel({0.92f, 0.34f, -1.0f}, 0.84f, 0.84f, kPanelTilt); }

VkShaderModule shader_module(VkDevice device, const uint32_t* code, size_t bytes) {
  VkShaderModuleCreateInfo info{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  info.codeSize = bytes;
  info.pCode = code;
  VkShaderModule module = VK_NULL_HANDLE;
  check_vk(vkCreateShaderModule(device, &info, nullptr, &module), "vkCreateShaderModule");
  return module;
}

}  // namespace

struct SceneRenderer::PipelineDesc {
  const uint32_t* vert;
  size_t vert_bytes;
  const uint32_t* frag;
  size_t frag_bytes;
  std::vector<VkVertexInputBindingDescription> bindings;
  std::vector<VkVertexInputAttributeDescription> attributes;
  bool alpha_to_coverage = false;
};

SceneRenderer::SceneRenderer(const VulkanContext& context, const FrameTarget& target,
                             uint32_t frames_in_flight, const ObjMesh& cloth, const ObjMesh& sphere)
    : context_(context), target_(target) {
  VkDevice device = context.device();
  // One set for every pipeline: the cloth's positions (storage, for normals) and the fractal.
  VkDescriptorSetLayoutBinding bindings[2]{};
  bindings[0] = {0, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_VERTEX_BIT, nullptr};
  bindings[1] = {1, VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, 1, VK_SHADER_STAGE_FRAGMENT_BIT,
                 nullptr};
  VkDescriptorSetLayoutCreateInfo set_info{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  set_info.bindingCount = 2;
  set_info.pBindings = bindings;
  check_vk(vkCreateDescriptorSetLayout(device, &set_info, nullptr, &set_layout_),
           "vkCreateDescriptorSetLayout");

  VkPushConstantRange push{VK_SHADER_STAGE_VERTEX_BIT | VK_SHADER_STAGE_FRAGMENT_BIT, 0,
                           sizeof(DrawConstants)};
  VkPipelineLayoutCreateInfo layout_info{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  layout_info.setLayoutCount = 1;
  layout_info.pSetLayouts = &set_layout_;
  layout_info.pushConstantRangeCount = 1;
  layout_info.pPushConstantRanges = &push;
  check_vk(vkCreatePipelineLayout(device, &layout_info, nullptr, &layout_),
           "vkCreatePipelineLayout");

  VkDescriptorPoolSize sizes[2] = {{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, frames_in_flight},
                                   {VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, frames_in_flight}};
  VkDescriptorPoolCreateInfo pool_info{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
  pool_info.maxSets = frames_in_flight;
  pool_info.poolSizeCount = 2;
  pool_info.pPoolSizes = sizes;
  check_vk(vkCreateDescriptorPool(device, &pool_info, nullptr, &pool_), "vkCreateDescriptorPool");
  std::vector<VkDescriptorSetLayout> layouts(frames_in_flight, set_layout_);
  sets_.resize(frames_in_flight);
  set_generations_.assign(frames_in_flight, UINT64_MAX);
  VkDescriptorSetAllocateInfo alloc{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
  alloc.descriptorPool = pool_;
  alloc.descriptorSetCount = frames_in_flight;
  alloc.pSetLayouts = layouts.data();
  check_vk(vkAllocateDescriptorSets(device, &alloc, sets_.data()), "vkAllocateDescriptorSets");

  VkSamplerCreateInfo sampler{VK_STRUCTURE_TYPE_SAMPLER_CREATE_INFO};
  sampler.magFilter = VK_FILTER_LINEAR;
  sampler.minFilter = VK_FILTER_LINEAR;
  sampler.mipmapMode = VK_SAMPLER_MIPMAP_MODE_NEAREST;
  sampler.addressModeU = sampler.addressModeV = sampler.addressModeW =
      VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE;
  sampler.maxLod = 0.0f;
  check_vk(vkCreateSampler(device, &sampler, nullptr, &sampler_), "vkCreateSampler");

  // Vertex inputs. The cloth: Loom's f32x3 field as it is (12-byte stride). Static meshes:
  // position and normal. The particles: Loom's f32x2 fields x and v, one element per instance.
  PipelineDesc desc{cloth_vert, sizeof(cloth_vert), cloth_frag, sizeof(cloth_frag)};
  desc.bindings = {{0, 12, VK_VERTEX_INPUT_RATE_VERTEX}};
  desc.attributes = {{0, 0, VK_FORMAT_R32G32B32_SFLOAT, 0}};
  cloth_pipeline_ = create_pipeline(desc);

  desc = {mesh_vert, sizeof(mesh_vert), mesh_frag, sizeof(mesh_frag)};
  desc.bindings = {{0, 24, VK_VERTEX_INPUT_RATE_VERTEX}};
  desc.attributes = {{0, 0, VK_FORMAT_R32G32B32_SFLOAT, 0}, {1, 0, VK_FORMAT_R32G32B32_SFLOAT, 12}};
  mesh_pipeline_ = create_pipeline(desc);
  desc.frag = floor_frag;
  desc.frag_bytes = sizeof(floor_frag);
  floor_pipeline_ = create_pipeline(desc);

  panel_pipeline_ =
      create_pipeline({panel_vert, sizeof(panel_vert), panel_frag, sizeof(panel_frag)});

  desc = {points_vert, sizeof(points_vert), points_frag, sizeof(points_frag)};
  desc.bindings = {{0, 8, VK_VERTEX_INPUT_RATE_INSTANCE}, {1, 8, VK_VERTEX_INPUT_RATE_INSTANCE}};
  desc.attributes = {{0, 0, VK_FORMAT_R32G32_SFLOAT, 0}, {1, 1, VK_FORMAT_R32G32_SFLOAT, 0}};
  desc.alpha_to_coverage = true;
  points_pipeline_ = create_pipeline(desc);

  // Static geometry in host-visible memory (a few kilobytes).
  cloth_indices_ =
      Buffer::with_data(context, cloth.position_indices.data(), cloth.position_indices.size() * 4,
                        VK_BUFFER_USAGE_INDEX_BUFFER_BIT);
  cloth_index_count_ = static_cast<uint32_t>(cloth.position_indices.size());
  cloth_vertex_count_ = static_cast<uint32_t>(cloth.position_count);
  sphere_vertices_ = Buffer::with_data(context, sphere.vertices.data(), sphere.vertices.size() * 4,
                                       VK_BUFFER_USAGE_VERTEX_BUFFER_BIT);
  sphere_indices_ = Buffer::with_data(context, sphere.indices.data(), sphere.indices.size() * 4,
                                      VK_BUFFER_USAGE_INDEX_BUFFER_BIT);
  sphere_index_count_ = static_cast<uint32_t>(sphere.indices.size());
  const float s = 8.0f;  // the floor, two triangles facing up
  const float floor[] = {-s, kFloorY, -s, 0, 1, 0, -s, kFloorY, s,  0, 1, 0,
                         s,  kFloorY, s,  0, 1, 0, -s, kFloorY, -s, 0, 1, 0,
                         s,  kFloorY, s,  0, 1, 0, s,  kFloorY, -s, 0, 1, 0};
  floor_vertices_ =
      Buffer::with_data(context, floor, sizeof(floor), VK_BUFFER_USAGE_VERTEX_BUFFER_BIT);
}

SceneRenderer::~SceneRenderer() {
  VkDevice device = context_.device();
  for (VkPipeline p :
       {cloth_pipeline_, mesh_pipeline_, floor_pipeline_, panel_pipeline_, points_pipeline_})
    vkDestroyPipeline(device, p, nullptr);
  vkDestroySampler(device, sampler_, nullptr);
  vkDestroyDescriptorPool(device, pool_, nullptr);
  vkDestroyPipelineLayout(device, layout_, nullptr);
  vkDestroyDescriptorSetLayout(device, set_layout_, nullptr);
}

VkPipeline SceneRenderer::create_pipeline(const PipelineDesc& desc) {
  VkDevice device = context_.device();
  VkShaderModule vert = shader_module(device, desc.vert, desc.vert_bytes);
  VkShaderModule frag = shader_module(device, desc.frag, desc.frag_bytes);
  VkPipelineShaderStageCreateInfo stages[2]{};
  stages[0] = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
               nullptr,
               0,
               VK_SHADER_STAGE_VERTEX_BIT,
               vert,
               "main"};
  stages[1] = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
               nullptr,
               0,
               VK_SHADER_STAGE_FRAGMENT_BIT,
               frag,
               "main"};

  VkPipelineVertexInputStateCreateInfo input{
      VK_STRUCTURE_TYPE_PIPELINE_VERTEX_INPUT_STATE_CREATE_INFO};
  input.vertexBindingDescriptionCount = static_cast<uint32_t>(desc.bindings.size());
  input.pVertexBindingDescriptions = desc.bindings.data();
  input.vertexAttributeDescriptionCount = static_cast<uint32_t>(desc.attributes.size());
  input.pVertexAttributeDescriptions = desc.attributes.data();
  VkPipelineInputAssemblyStateCreateInfo assembly{
      VK_STRUCTURE_TYPE_PIPELINE_INPUT_ASSEMBLY_STATE_CREATE_INFO};
  assembly.topology = VK_PRIMITIVE_TOPOLOGY_TRIANGLE_LIST;
  VkPipelineViewportStateCreateInfo viewport{VK_STRUCTURE_TYPE_PIPELINE_VIEWPORT_STATE_CREATE_INFO};
  viewport.viewportCount = 1;
  viewport.scissorCount = 1;
  VkPipelineRasterizationStateCreateInfo raster{
      VK_STRUCTURE_TYPE_PIPELINE_RASTERIZATION_STATE_CREATE_INFO};
  raster.polygonMode = VK_POLYGON_MODE_FILL;
  raster.cullMode = VK_CULL_MODE_NONE;  // the cloth and the panels are seen from both sides
  raster.frontFace = VK_FRONT_FACE_COUNTER_CLOCKWISE;
  raster.lineWidth = 1.0f;
  VkPipelineMultisampleStateCreateInfo multisample{
      VK_STRUCTURE_TYPE_PIPELINE_MULTISAMPLE_STATE_CREATE_INFO};
  multisample.rasterizationSamples = target_.samples();
  multisample.alphaToCoverageEnable =
      desc.alpha_to_coverage && target_.samples() != VK_SAMPLE_COUNT_1_BIT;
  VkPipelineDepthStencilStateCreateInfo depth{
      VK_STRUCTURE_TYPE_PIPELINE_DEPTH_STENCIL_STATE_CREATE_INFO};
  depth.depthTestEnable = VK_TRUE;
  depth.depthWriteEnable = VK_TRUE;
  depth.depthCompareOp = VK_COMPARE_OP_LESS_OR_EQUAL;
  VkPipelineColorBlendAttachmentState blend{};
  blend.colorWriteMask = VK_COLOR_COMPONENT_R_BIT | VK_COLOR_COMPONENT_G_BIT |
                         VK_COLOR_COMPONENT_B_BIT | VK_COLOR_COMPONENT_A_BIT;
  VkPipelineColorBlendStateCreateInfo blending{
      VK_STRUCTURE_TYPE_PIPELINE_COLOR_BLEND_STATE_CREATE_INFO};
  blending.attachmentCount = 1;
  blending.pAttachments = &blend;
  VkDynamicState dynamic_states[] = {VK_DYNAMIC_STATE_VIEWPORT, VK_DYNAMIC_STATE_SCISSOR};
  VkPipelineDynamicStateCreateInfo dynamic{VK_STRUCTURE_TYPE_PIPELINE_DYNAMIC_STATE_CREATE_INFO};
  dynamic.dynamicStateCount = 2;
  dynamic.pDynamicStates = dynamic_states;

  VkGraphicsPipelineCreateInfo info{VK_STRUCTURE_TYPE_GRAPHICS_PIPELINE_CREATE_INFO};
  info.stageCount = 2;
  info.pStages = stages;
  info.pVertexInputState = &input;
  info.pInputAssemblyState = &assembly;
  info.pViewportState = &viewport;
  info.pRasterizationState = &raster;
  info.pMultisampleState = &multisample;
  info.pDepthStencilState = &depth;
  info.pColorBlendState = &blending;
  info.pDynamicState = &dynamic;
  info.layout = layout_;
  info.renderPass = target_.render_pass();
  VkPipeline pipeline = VK_NULL_HANDLE;
  VkResult r = vkCreateGraphicsPipelines(device, VK_NULL_HANDLE, 1, &info, nullptr, &pipeline);
  vkDestroyShaderModule(device, vert, nullptr);
  vkDestroyShaderModule(device, frag, nullptr);
  check_vk(r, "vkCreateGraphicsPipelines");
  return pipeline;
}

void SceneRenderer::update_set(uint32_t slot, const SimulationViews& views) {
  if (set_generations_[slot] == views.generation) return;
  VkDescriptorBufferInfo buffer{views.cloth, views.cloth_offset, views.cloth_size};
  VkDescriptorImageInfo image{sampler_, views.fractal, VK_IMAGE_LAYOUT_GENERAL};
  VkWriteDescriptorSet writes[2]{};
  writes[0] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
  writes[0].dstSet = sets_[slot];
  writes[0].dstBinding = 0;
  writes[0].descriptorCount = 1;
  writes[0].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
  writes[0].pBufferInfo = &buffer;
  writes[1] = writes[0];
  writes[1].dstBinding = 1;
  writes[1].descriptorType = VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER;
  writes[1].pBufferInfo = nullptr;
  writes[1].pImageInfo = &image;
  vkUpdateDescriptorSets(context_.device(), 2, writes, 0, nullptr);
  set_generations_[slot] = views.generation;
}

void SceneRenderer::record(VkCommandBuffer commands, uint32_t slot, VkFramebuffer framebuffer,
                           VkExtent2D extent, const SimulationViews& views) {
  if (views.cloth_rows * views.cloth_columns != cloth_vertex_count_)
    throw std::runtime_error(
        "the cloth field has " + std::to_string(views.cloth_rows * views.cloth_columns) +
        " elements, the cloth mesh " + std::to_string(cloth_vertex_count_) + " vertices");
  update_set(slot, views);

  VkClearValue clears[3]{};
  std::memcpy(clears[0].color.float32, kClear, sizeof(kClear));
  clears[1].depthStencil = {1.0f, 0};
  clears[2] = clears[0];
  VkRenderPassBeginInfo begin{VK_STRUCTURE_TYPE_RENDER_PASS_BEGIN_INFO};
  begin.renderPass = target_.render_pass();
  begin.framebuffer = framebuffer;
  begin.renderArea = {{0, 0}, extent};
  begin.clearValueCount = 3;
  begin.pClearValues = clears;
  vkCmdBeginRenderPass(commands, &begin, VK_SUBPASS_CONTENTS_INLINE);
  VkViewport viewport{0, 0, float(extent.width), float(extent.height), 0, 1};
  VkRect2D scissor{{0, 0}, extent};
  vkCmdSetViewport(commands, 0, 1, &viewport);
  vkCmdSetScissor(commands, 0, 1, &scissor);
  vkCmdBindDescriptorSets(commands, VK_PIPELINE_BIND_POINT_GRAPHICS, layout_, 0, 1, &sets_[slot], 0,
                          nullptr);

  DrawConstants c{};
  float aspect = float(extent.width) / float(std::max(extent.height, 1u));
  c.view_proj = perspective(kFovY, aspect, 0.05f, 20.0f) * look_at(kEye, kLookAt, {0, 1, 0});
  auto push = [&] {
    vkCmdPushConstants(commands, layout_, VK_SHADER_STAGE_VERTEX_BIT | VK_SHADER_STAGE_FRAGMENT_BIT,
                       0, sizeof(c), &c);
  };
  VkDeviceSize zero = 0;

  // The floor: checkerboard, the sphere's shadow (and the cloth's, roughly: a wider radius).
  vkCmdBindPipeline(commands, VK_PIPELINE_BIND_POINT_GRAPHICS, floor_pipeline_);
  set(c.row[0], 0, 0, 0, 1);
  set(c.row[1], 0.27f, 0.25f, 0.23f, 2.5f);
  set(c.row[2], 0.19f, 0.18f, 0.17f, 0);
  set(c.row[3], kEye, 0.42f);
  push();
  VkBuffer floor = floor_vertices_.handle();
  vkCmdBindVertexBuffers(commands, 0, 1, &floor, &zero);
  vkCmdDraw(commands, 6, 1, 0, 0);

  // The sphere the cloth falls on.
  vkCmdBindPipeline(commands, VK_PIPELINE_BIND_POINT_GRAPHICS, mesh_pipeline_);
  set(c.row[0], 0, 0, 0, kSphereRadius);
  set(c.row[1], 0.22f, 0.25f, 0.30f, 0.35f);  // blue steel, polished
  push();
  VkBuffer sphere = sphere_vertices_.handle();
  vkCmdBindVertexBuffers(commands, 0, 1, &sphere, &zero);
  vkCmdBindIndexBuffer(commands, sphere_indices_.handle(), 0, VK_INDEX_TYPE_UINT32);
  vkCmdDrawIndexed(commands, sphere_index_count_, 1, 0, 0, 0);

  // The cloth: the module's field x is the vertex buffer.
  vkCmdBindPipeline(commands, VK_PIPELINE_BIND_POINT_GRAPHICS, cloth_pipeline_);
  c.row[0].i[0] = static_cast<int32_t>(views.cloth_rows);
  c.row[0].i[1] = static_cast<int32_t>(views.cloth_columns);
  c.row[0].i[2] = c.row[0].i[3] = 0;
  set(c.row[1], 0.42f, 0.035f, 0.03f, 1);  // front: deep red
  set(c.row[2], 0.70f, 0.60f, 0.42f, 1);   // back: a cream lining
  set(c.row[3], kEye, 1);
  push();
  vkCmdBindVertexBuffers(commands, 0, 1, &views.cloth, &views.cloth_offset);
  vkCmdBindIndexBuffer(commands, cloth_indices_.handle(), 0, VK_INDEX_TYPE_UINT32);
  vkCmdDrawIndexed(commands, cloth_index_count_, 1, 0, 0, 0);

  // The panels: dark frames, the fractal, the particles' backdrop.
  vkCmdBindPipeline(commands, VK_PIPELINE_BIND_POINT_GRAPHICS, panel_pipeline_);
  auto draw_panel = [&](const Panel& p, float mode, Vec3 colour, float grid) {
    set(c.row[0], p.origin, mode);
    set(c.row[1], p.u, 0);
    set(c.row[2], p.v, 0);
    set(c.row[3], colour, grid);
    push();
    vkCmdDraw(commands, 6, 1, 0, 0);
  };
  const Panel fractal = fractal_panel();
  const Panel particles = particle_panel();
  draw_panel(frame(fractal, kPanelBorder), 0, {0.02f, 0.02f, 0.025f}, 0);
  draw_panel(fractal, 1, {}, 0);
  draw_panel(frame(particles, kPanelBorder), 0, {0.02f, 0.02f, 0.025f}, 0);
  draw_panel(particles, 0, {0.035f, 0.05f, 0.09f}, 1);

  // The particles: the module's fields x and v are per-instance vertex buffers.
  vkCmdBindPipeline(commands, VK_PIPELINE_BIND_POINT_GRAPHICS, points_pipeline_);
  set(c.row[0], particles.origin, 0.0075f);
  set(c.row[1], particles.u, 3.0f);
  set(c.row[2], particles.v, 0);
  push();
  VkBuffer particle_buffers[2] = {views.particles, views.velocities};
  VkDeviceSize particle_offsets[2] = {views.particles_offset, views.velocities_offset};
  vkCmdBindVertexBuffers(commands, 0, 2, particle_buffers, particle_offsets);
  vkCmdDraw(commands, 6, views.particle_count, 0, 0);

  vkCmdEndRenderPass(commands);
}

}  // namespace host_sample
