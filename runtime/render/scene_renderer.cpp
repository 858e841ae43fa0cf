#include "runtime/render/scene_renderer.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "runtime/common/error.h"
#include "runtime/vulkan/descriptor_allocator.h"
#include "runtime/vulkan/gpu_buffer.h"
#include "runtime/vulkan/gpu_image.h"
#include "runtime/vulkan/texture_format.h"
#include "runtime/vulkan/vk_check.h"
#include "runtime/vulkan/vulkan_device.h"
#include "shaders/mesh_frag.h"
#include "shaders/mesh_vert.h"
#include "shaders/points_frag.h"
#include "shaders/points_vert.h"
#include "shaders/texture2d_frag.h"
#include "shaders/texture3d_frag.h"
#include "shaders/texture_vert.h"

namespace loom::render {

using vk::check;

// ------------------------------------------------------------------------------ pipelines

namespace {

// Push constants, laid out as the shaders declare them (std430: 112 bytes each, within the
// 128 every device offers).
struct PointParams {
  float view_proj[16];
  float color[4];
  float viewport[2];
  float point_size;
  int32_t color_mode;
  float scalar_range[2];
  int32_t colormap;
  int32_t shaded;
};
struct MeshParams {
  float view_proj[16];
  float front[4];
  float back[4];
  float eye[4];
};
struct TextureParams {
  float view_proj[16];
  float rect[4];
  float values[4];
  int32_t mode[4];
};
static_assert(sizeof(PointParams) == 112 && sizeof(MeshParams) == 112 &&
              sizeof(TextureParams) == 112);
constexpr uint32_t kParamBytes = 112;

struct PointVertex {  // one per point, read per instance
  float x, y, z, scalar;
  uint8_t rgba[4];
};
static_assert(sizeof(PointVertex) == 20);

struct MeshVertex {
  float position[3], normal[3];
};

VkShaderModule module(VkDevice device, const uint32_t* words, size_t bytes, const char* name) {
  VkShaderModuleCreateInfo ci{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  ci.codeSize = bytes;
  ci.pCode = words;
  VkShaderModule m;
  check(vkCreateShaderModule(device, &ci, nullptr, &m),
        std::string("creating shader module ") + name);
  return m;
}

struct PipelineDesc {
  const uint32_t* vert;
  size_t vert_bytes;
  const uint32_t* frag;
  size_t frag_bytes;
  const char* name;
  std::vector<VkVertexInputBindingDescription> bindings;
  std::vector<VkVertexInputAttributeDescription> attributes;
  VkPipelineLayout layout;
};

VkPipeline make_pipeline(VkDevice device, VkRenderPass pass, VkPipelineCache cache,
                         const PipelineDesc& d) {
  VkShaderModule vs = module(device, d.vert, d.vert_bytes, d.name);
  VkShaderModule fs = VK_NULL_HANDLE;
  try {
    fs = module(device, d.frag, d.frag_bytes, d.name);
  } catch (...) {
    vkDestroyShaderModule(device, vs, nullptr);
    throw;
  }
  VkPipelineShaderStageCreateInfo stages[2]{};
  stages[0].sType = stages[1].sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  stages[0].stage = VK_SHADER_STAGE_VERTEX_BIT;
  stages[0].module = vs;
  stages[0].pName = "main";
  stages[1].stage = VK_SHADER_STAGE_FRAGMENT_BIT;
  stages[1].module = fs;
  stages[1].pName = "main";
  VkPipelineVertexInputStateCreateInfo vin{
      VK_STRUCTURE_TYPE_PIPELINE_VERTEX_INPUT_STATE_CREATE_INFO};
  vin.vertexBindingDescriptionCount = static_cast<uint32_t>(d.bindings.size());
  vin.pVertexBindingDescriptions = d.bindings.data();
  vin.vertexAttributeDescriptionCount = static_cast<uint32_t>(d.attributes.size());
  vin.pVertexAttributeDescriptions = d.attributes.data();
  VkPipelineInputAssemblyStateCreateInfo ia{
      VK_STRUCTURE_TYPE_PIPELINE_INPUT_ASSEMBLY_STATE_CREATE_INFO};
  ia.topology = VK_PRIMITIVE_TOPOLOGY_TRIANGLE_LIST;
  VkPipelineViewportStateCreateInfo vp{VK_STRUCTURE_TYPE_PIPELINE_VIEWPORT_STATE_CREATE_INFO};
  vp.viewportCount = 1;
  vp.scissorCount = 1;
  VkPipelineRasterizationStateCreateInfo rs{
      VK_STRUCTURE_TYPE_PIPELINE_RASTERIZATION_STATE_CREATE_INFO};
  rs.polygonMode = VK_POLYGON_MODE_FILL;
  rs.cullMode = VK_CULL_MODE_NONE;  // cloth and quads show both sides
  // The projections flip y, so the image is upright in Vulkan's y-down framebuffer and a
  // triangle counter-clockwise seen from its front stays counter-clockwise on screen.
  rs.frontFace = VK_FRONT_FACE_COUNTER_CLOCKWISE;
  rs.lineWidth = 1.0f;
  VkPipelineMultisampleStateCreateInfo ms{VK_STRUCTURE_TYPE_PIPELINE_MULTISAMPLE_STATE_CREATE_INFO};
  ms.rasterizationSamples = VK_SAMPLE_COUNT_1_BIT;
  VkPipelineDepthStencilStateCreateInfo ds{
      VK_STRUCTURE_TYPE_PIPELINE_DEPTH_STENCIL_STATE_CREATE_INFO};
  ds.depthTestEnable = VK_TRUE;
  ds.depthWriteEnable = VK_TRUE;
  ds.depthCompareOp = VK_COMPARE_OP_LESS_OR_EQUAL;  // 2-d layers share z = 0: later ones draw over
  VkPipelineColorBlendAttachmentState blend{};
  blend.blendEnable = VK_TRUE;
  blend.srcColorBlendFactor = VK_BLEND_FACTOR_SRC_ALPHA;
  blend.dstColorBlendFactor = VK_BLEND_FACTOR_ONE_MINUS_SRC_ALPHA;
  blend.colorBlendOp = VK_BLEND_OP_ADD;
  blend.srcAlphaBlendFactor = VK_BLEND_FACTOR_ONE;
  blend.dstAlphaBlendFactor = VK_BLEND_FACTOR_ONE_MINUS_SRC_ALPHA;
  blend.alphaBlendOp = VK_BLEND_OP_ADD;
  blend.colorWriteMask = VK_COLOR_COMPONENT_R_BIT | VK_COLOR_COMPONENT_G_BIT |
                         VK_COLOR_COMPONENT_B_BIT | VK_COLOR_COMPONENT_A_BIT;
  VkPipelineColorBlendStateCreateInfo cb{VK_STRUCTURE_TYPE_PIPELINE_COLOR_BLEND_STATE_CREATE_INFO};
  cb.attachmentCount = 1;
  cb.pAttachments = &blend;
  VkDynamicState dyn[] = {VK_DYNAMIC_STATE_VIEWPORT, VK_DYNAMIC_STATE_SCISSOR};
  VkPipelineDynamicStateCreateInfo dy{VK_STRUCTURE_TYPE_PIPELINE_DYNAMIC_STATE_CREATE_INFO};
  dy.dynamicStateCount = 2;
  dy.pDynamicStates = dyn;
  VkGraphicsPipelineCreateInfo ci{VK_STRUCTURE_TYPE_GRAPHICS_PIPELINE_CREATE_INFO};
  ci.stageCount = 2;
  ci.pStages = stages;
  ci.pVertexInputState = &vin;
  ci.pInputAssemblyState = &ia;
  ci.pViewportState = &vp;
  ci.pRasterizationState = &rs;
  ci.pMultisampleState = &ms;
  ci.pDepthStencilState = &ds;
  ci.pColorBlendState = &cb;
  ci.pDynamicState = &dy;
  ci.layout = d.layout;
  ci.renderPass = pass;
  VkPipeline pipeline = VK_NULL_HANDLE;
  VkResult r = vkCreateGraphicsPipelines(device, cache, 1, &ci, nullptr, &pipeline);
  vkDestroyShaderModule(device, vs, nullptr);
  vkDestroyShaderModule(device, fs, nullptr);
  check(r, std::string("creating the ") + d.name + " pipeline");
  return pipeline;
}

void copy_color(const Color& c, float* out) {
  out[0] = c.r, out[1] = c.g, out[2] = c.b, out[3] = c.a;
}

uint8_t unorm8(float v) {
  if (!(v > 0)) return 0;  // NaN too
  return v >= 1 ? 255 : static_cast<uint8_t>(v * 255.0f + 0.5f);
}

// Reads point i of `p` as a 3-vector (z = 0 for 2-d data).
Vec3 point_at(const PositionData& p, size_t i) {
  size_t stride = p.stride ? p.stride : static_cast<size_t>(p.dims);
  const float* at = p.data + i * stride;
  Vec3 v{at[0], at[p.component_stride], 0};
  if (p.dims == 3) v.z = at[2 * p.component_stride];
  return v;
}

void check_positions(const PositionData& p, const char* what) {
  if (p.dims != 2 && p.dims != 3)
    throw Error(std::string(what) + " '" + p.name + "': positions have " + std::to_string(p.dims) +
                " components; 2 or 3 can be drawn");
  if (p.count && !p.data)
    throw Error(std::string(what) + " '" + p.name + "': no position data for " +
                std::to_string(p.count) + " points");
  if (p.component_stride == 0)
    throw Error(std::string(what) + " '" + p.name + "': component stride 0");
}

}  // namespace

struct ScenePipelines {
  VkDevice device = VK_NULL_HANDLE;
  VkPipelineLayout plain_layout = VK_NULL_HANDLE;    // push constants only
  VkPipelineLayout texture_layout = VK_NULL_HANDLE;  // + one sampled image and a sampler
  VkDescriptorSetLayout texture_set = VK_NULL_HANDLE;
  VkPipeline points = VK_NULL_HANDLE, mesh = VK_NULL_HANDLE, texture2d = VK_NULL_HANDLE,
             texture3d = VK_NULL_HANDLE;
  VkSampler nearest = VK_NULL_HANDLE, linear = VK_NULL_HANDLE;
  uint32_t max_2d = 4096, max_3d = 256;
  std::unique_ptr<vk::DescriptorAllocator> descriptors;

  ScenePipelines() = default;
  ScenePipelines(const ScenePipelines&) = delete;
  ScenePipelines& operator=(const ScenePipelines&) = delete;
  ~ScenePipelines() {
    descriptors.reset();
    for (VkPipeline p : {points, mesh, texture2d, texture3d})
      if (p) vkDestroyPipeline(device, p, nullptr);
    for (VkSampler s : {nearest, linear})
      if (s) vkDestroySampler(device, s, nullptr);
    if (plain_layout) vkDestroyPipelineLayout(device, plain_layout, nullptr);
    if (texture_layout) vkDestroyPipelineLayout(device, texture_layout, nullptr);
    if (texture_set) vkDestroyDescriptorSetLayout(device, texture_set, nullptr);
  }
};

SceneRenderer::SceneRenderer(FrameLoop& loop)
    : loop_(loop), pipelines_(std::make_shared<ScenePipelines>()) {
  ScenePipelines& p = *pipelines_;
  VkDevice device = loop.device().device();
  p.device = device;
  p.descriptors = std::make_unique<vk::DescriptorAllocator>(loop.device());
  VkPhysicalDeviceProperties props;
  vkGetPhysicalDeviceProperties(loop.device().physical(), &props);
  p.max_2d = props.limits.maxImageDimension2D;
  p.max_3d = props.limits.maxImageDimension3D;

  VkPushConstantRange push{VK_SHADER_STAGE_VERTEX_BIT | VK_SHADER_STAGE_FRAGMENT_BIT, 0,
                           kParamBytes};
  VkPipelineLayoutCreateInfo lci{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  lci.pushConstantRangeCount = 1;
  lci.pPushConstantRanges = &push;
  check(vkCreatePipelineLayout(device, &lci, nullptr, &p.plain_layout),
        "creating a scene pipeline layout");
  VkDescriptorSetLayoutBinding b[2]{};
  b[0] = {0, VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE, 1, VK_SHADER_STAGE_FRAGMENT_BIT, nullptr};
  b[1] = {1, VK_DESCRIPTOR_TYPE_SAMPLER, 1, VK_SHADER_STAGE_FRAGMENT_BIT, nullptr};
  VkDescriptorSetLayoutCreateInfo dci{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  dci.bindingCount = 2;
  dci.pBindings = b;
  check(vkCreateDescriptorSetLayout(device, &dci, nullptr, &p.texture_set),
        "creating the texture set layout");
  lci.setLayoutCount = 1;
  lci.pSetLayouts = &p.texture_set;
  check(vkCreatePipelineLayout(device, &lci, nullptr, &p.texture_layout),
        "creating the texture pipeline layout");

  for (VkFilter f : {VK_FILTER_NEAREST, VK_FILTER_LINEAR}) {
    VkSamplerCreateInfo sci{VK_STRUCTURE_TYPE_SAMPLER_CREATE_INFO};
    sci.magFilter = sci.minFilter = f;
    sci.mipmapMode = VK_SAMPLER_MIPMAP_MODE_NEAREST;
    sci.addressModeU = sci.addressModeV = sci.addressModeW = VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE;
    sci.maxLod = 0;
    check(vkCreateSampler(device, &sci, nullptr, f == VK_FILTER_LINEAR ? &p.linear : &p.nearest),
          "creating a sampler");
  }

  VkRenderPass pass = loop.render_pass();
  VkPipelineCache cache = loop.pipeline_cache();
  PipelineDesc points{shader_points_vert,
                      sizeof shader_points_vert,
                      shader_points_frag,
                      sizeof shader_points_frag,
                      "points",
                      {{0, sizeof(PointVertex), VK_VERTEX_INPUT_RATE_INSTANCE}},
                      {{0, 0, VK_FORMAT_R32G32B32_SFLOAT, 0},
                       {1, 0, VK_FORMAT_R32_SFLOAT, 12},
                       {2, 0, VK_FORMAT_R8G8B8A8_UNORM, 16}},
                      p.plain_layout};
  p.points = make_pipeline(device, pass, cache, points);
  PipelineDesc mesh{shader_mesh_vert,
                    sizeof shader_mesh_vert,
                    shader_mesh_frag,
                    sizeof shader_mesh_frag,
                    "mesh",
                    {{0, sizeof(MeshVertex), VK_VERTEX_INPUT_RATE_VERTEX}},
                    {{0, 0, VK_FORMAT_R32G32B32_SFLOAT, 0}, {1, 0, VK_FORMAT_R32G32B32_SFLOAT, 12}},
                    p.plain_layout};
  p.mesh = make_pipeline(device, pass, cache, mesh);
  PipelineDesc tex{shader_texture_vert,
                   sizeof shader_texture_vert,
                   shader_texture2d_frag,
                   sizeof shader_texture2d_frag,
                   "texture",
                   {},
                   {},
                   p.texture_layout};
  p.texture2d = make_pipeline(device, pass, cache, tex);
  tex.frag = shader_texture3d_frag;
  tex.frag_bytes = sizeof shader_texture3d_frag;
  p.texture3d = make_pipeline(device, pass, cache, tex);
}

SceneRenderer::~SceneRenderer() {
  // Frames in flight may still draw with these: the loop frees them once those completed.
  for (auto& l : points_) loop_.retire(std::move(l));
  for (auto& l : textures_) loop_.retire(std::move(l));
  for (auto& l : meshes_) loop_.retire(std::move(l));
  loop_.retire_shared(std::move(pipelines_));
}

PointsLayer& SceneRenderer::add_points() {
  points_.push_back(std::unique_ptr<PointsLayer>(new PointsLayer(loop_)));
  return *points_.back();
}

TextureLayer& SceneRenderer::add_texture() {
  textures_.push_back(std::unique_ptr<TextureLayer>(new TextureLayer(loop_, pipelines_)));
  return *textures_.back();
}

MeshLayer& SceneRenderer::add_mesh(Mesh mesh) {
  meshes_.push_back(std::unique_ptr<MeshLayer>(new MeshLayer(loop_, std::move(mesh))));
  return *meshes_.back();
}

namespace {

template <class T>
void remove_layer(FrameLoop& loop, std::vector<std::unique_ptr<T>>& layers, const T& layer) {
  auto it =
      std::find_if(layers.begin(), layers.end(), [&](const auto& p) { return p.get() == &layer; });
  if (it == layers.end()) return;
  loop.retire(std::move(*it));
  layers.erase(it);
}

}  // namespace

void SceneRenderer::remove(const PointsLayer& layer) { remove_layer(loop_, points_, layer); }
void SceneRenderer::remove(const TextureLayer& layer) { remove_layer(loop_, textures_, layer); }
void SceneRenderer::remove(const MeshLayer& layer) { remove_layer(loop_, meshes_, layer); }

Bounds SceneRenderer::bounds() const {
  Bounds b;
  for (const auto& l : textures_)
    if (l->visible) b.add(l->bounds());
  for (const auto& l : meshes_)
    if (l->visible) b.add(l->bounds());
  for (const auto& l : points_)
    if (l->visible) b.add(l->bounds());
  return b;
}

// ------------------------------------------------------------------------------ drawing

void SceneRenderer::draw(const Frame& frame, const Rect& viewport, const Camera& camera) {
  if (!loop_.in_frame())
    throw Error("SceneRenderer::draw outside a frame (call it between begin_frame and end_frame)");
  float fx0 = std::max(viewport.x, 0.0f), fy0 = std::max(viewport.y, 0.0f);
  float fx1 = std::min(viewport.x + viewport.width, static_cast<float>(frame.extent.width));
  float fy1 = std::min(viewport.y + viewport.height, static_cast<float>(frame.extent.height));
  int32_t x0 = static_cast<int32_t>(std::floor(fx0)), y0 = static_cast<int32_t>(std::floor(fy0));
  int32_t x1 = static_cast<int32_t>(std::ceil(fx1)), y1 = static_cast<int32_t>(std::ceil(fy1));
  if (x1 <= x0 || y1 <= y0 || viewport.width <= 0 || viewport.height <= 0) return;
  VkCommandBuffer cb = frame.commands;
  VkRect2D scissor{{x0, y0}, {static_cast<uint32_t>(x1 - x0), static_cast<uint32_t>(y1 - y0)}};
  if (clear_background) {
    VkClearAttachment clears[2]{};
    clears[0].aspectMask = VK_IMAGE_ASPECT_COLOR_BIT;
    clears[0].colorAttachment = 0;
    copy_color(background, clears[0].clearValue.color.float32);
    clears[1].aspectMask = VK_IMAGE_ASPECT_DEPTH_BIT;
    clears[1].clearValue.depthStencil = {1.0f, 0};
    VkClearRect rect{scissor, 0, 1};
    vkCmdClearAttachments(cb, 2, clears, 1, &rect);
  }
  // The viewport is the whole rectangle (the projection's aspect); the scissor clips it.
  VkViewport vp{viewport.x, viewport.y, viewport.width, viewport.height, 0, 1};
  vkCmdSetViewport(cb, 0, 1, &vp);
  vkCmdSetScissor(cb, 0, 1, &scissor);
  Mat4 view_proj = camera.view_projection(viewport);
  const ScenePipelines& p = *pipelines_;

  for (auto& l : textures_) {
    if (!l->visible || !l->image_) continue;
    const TextureStyle& s = l->style;
    TextureParams params{};
    std::memcpy(params.view_proj, view_proj.m, sizeof params.view_proj);
    float m = static_cast<float>(std::max(l->width_, l->height_));
    bool placed = s.x0 != 0 || s.x1 != 0 || s.y0 != 0 || s.y1 != 0;
    float rect[4] = {s.x0, s.y0, s.x1, s.y1};
    if (!placed)
      rect[0] = 0, rect[1] = 0, rect[2] = static_cast<float>(l->width_) / m,
      rect[3] = static_cast<float>(l->height_) / m;
    std::memcpy(params.rect, rect, sizeof rect);
    TextureDisplay display = s.display;
    if (display == TextureDisplay::Auto)
      display = l->format_ == TextureFormat::R32F    ? TextureDisplay::Colormap
                : l->format_ == TextureFormat::RG32F ? TextureDisplay::RedGreen
                                                     : TextureDisplay::Color;
    bool colormap = display == TextureDisplay::Colormap;
    float lo = s.value_min, hi = s.value_max;
    if (lo == hi) lo = colormap ? l->data_min_ : 0.0f, hi = colormap ? l->data_max_ : 1.0f;
    uint32_t slice = std::min(s.slice, l->depth_ - 1);
    params.values[0] = lo;
    params.values[1] = hi;
    params.values[2] = (static_cast<float>(slice) + 0.5f) / static_cast<float>(l->depth_);
    params.values[3] = s.z;
    params.mode[0] = display == TextureDisplay::Colormap   ? 1
                     : display == TextureDisplay::RedGreen ? 2
                                                           : 0;
    params.mode[1] = static_cast<int32_t>(s.colormap);
    VkDescriptorSet set = l->descriptor(s.linear);
    vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_GRAPHICS,
                      l->depth_ > 1 ? p.texture3d : p.texture2d);
    vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_GRAPHICS, p.texture_layout, 0, 1, &set, 0,
                            nullptr);
    vkCmdPushConstants(cb, p.texture_layout,
                       VK_SHADER_STAGE_VERTEX_BIT | VK_SHADER_STAGE_FRAGMENT_BIT, 0, kParamBytes,
                       &params);
    vkCmdDraw(cb, 6, 1, 0, 0);
  }

  for (auto& l : meshes_) {
    if (!l->visible || !l->vertices_) continue;
    MeshParams params{};
    std::memcpy(params.view_proj, view_proj.m, sizeof params.view_proj);
    copy_color(l->style.front, params.front);
    copy_color(l->style.back, params.back);
    if (camera.mode == CameraMode::Orbit) {
      Vec3 e = camera.eye();
      params.eye[0] = e.x, params.eye[1] = e.y, params.eye[2] = e.z, params.eye[3] = 1;
    } else {
      params.eye[2] = -1;  // looking down -z
    }
    vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_GRAPHICS, p.mesh);
    vkCmdPushConstants(cb, p.plain_layout,
                       VK_SHADER_STAGE_VERTEX_BIT | VK_SHADER_STAGE_FRAGMENT_BIT, 0, kParamBytes,
                       &params);
    VkDeviceSize zero = 0;
    VkBuffer vb = l->vertices_->handle();
    vkCmdBindVertexBuffers(cb, 0, 1, &vb, &zero);
    vkCmdBindIndexBuffer(cb, l->indices_->handle(), 0, VK_INDEX_TYPE_UINT32);
    vkCmdDrawIndexed(cb, static_cast<uint32_t>(l->mesh_.indices.size()), 1, 0, 0, 0);
  }

  for (auto& l : points_) {
    if (!l->visible || !l->count_) continue;
    const PointStyle& s = l->style;
    PointParams params{};
    std::memcpy(params.view_proj, view_proj.m, sizeof params.view_proj);
    copy_color(s.color, params.color);
    params.viewport[0] = viewport.width;
    params.viewport[1] = viewport.height;
    params.point_size = std::max(s.size, 1.0f);
    params.color_mode = l->color_mode_;
    bool automatic = s.scalar_min == s.scalar_max;
    params.scalar_range[0] = automatic ? l->data_min_ : s.scalar_min;
    params.scalar_range[1] = automatic ? l->data_max_ : s.scalar_max;
    params.colormap = static_cast<int32_t>(s.colormap);
    params.shaded = s.shaded ? 1 : 0;
    vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_GRAPHICS, p.points);
    vkCmdPushConstants(cb, p.plain_layout,
                       VK_SHADER_STAGE_VERTEX_BIT | VK_SHADER_STAGE_FRAGMENT_BIT, 0, kParamBytes,
                       &params);
    VkDeviceSize zero = 0;
    VkBuffer vb = l->buffer_->handle();
    vkCmdBindVertexBuffers(cb, 0, 1, &vb, &zero);
    vkCmdDraw(cb, 6, static_cast<uint32_t>(l->count_), 0, 0);
  }
  // Leave the frame as begin_frame set it, for whatever draws next (the UI).
  VkViewport full{
      0, 0, static_cast<float>(frame.extent.width), static_cast<float>(frame.extent.height), 0, 1};
  VkRect2D all{{0, 0}, frame.extent};
  vkCmdSetViewport(cb, 0, 1, &full);
  vkCmdSetScissor(cb, 0, 1, &all);
}

// ------------------------------------------------------------------------------ points

namespace {

// A device-local vertex or index buffer of at least `bytes`; a smaller one is retired.
void ensure_buffer(FrameLoop& loop, std::unique_ptr<vk::GpuBuffer>& buffer, VkDeviceSize bytes,
                   VkBufferUsageFlags usage, const std::string& what) {
  if (buffer && buffer->size() >= bytes) return;
  if (buffer) loop.retire(std::move(buffer));
  // Room to grow by a quarter without a new buffer (particle counts creep up).
  buffer = std::make_unique<vk::GpuBuffer>(loop.device(), loop.allocator(), bytes + bytes / 4,
                                           usage | VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                                           vk::MemoryUse::DeviceLocal, what);
}

}  // namespace

PointsLayer::PointsLayer(FrameLoop& loop) : loop_(&loop) {}
PointsLayer::~PointsLayer() = default;

bool PointsLayer::update(const PointData& data, uint64_t revision) {
  if (uploaded_ && revision == revision_) return false;
  update(data);
  revision_ = revision;
  return true;
}

void PointsLayer::update(const PointData& data) {
  const PositionData& pos = data.positions;
  check_positions(pos, "points");
  if (pos.count > UINT32_MAX / 2)
    throw Error("points '" + pos.name + "': too many points to draw at once");
  count_ = pos.count;
  color_mode_ = data.rgba ? 2 : data.scalars ? 1 : 0;
  bounds_ = Bounds{};
  uploaded_ = true;
  if (!count_) return;
  VkDeviceSize bytes = count_ * sizeof(PointVertex);
  ensure_buffer(*loop_, buffer_, bytes, VK_BUFFER_USAGE_VERTEX_BUFFER_BIT,
                "points '" + pos.name + "'");
  auto* out = reinterpret_cast<PointVertex*>(loop_->upload_to(*buffer_, 0, bytes));
  float lo = std::numeric_limits<float>::max(), hi = std::numeric_limits<float>::lowest();
  for (size_t i = 0; i < count_; ++i) {
    Vec3 v = point_at(pos, i);
    PointVertex pv{v.x, v.y, v.z, 0, {255, 255, 255, 255}};
    bounds_.add(v);
    if (data.scalars) {
      pv.scalar = data.scalars[i * data.scalar_stride];
      if (std::isfinite(pv.scalar)) lo = std::min(lo, pv.scalar), hi = std::max(hi, pv.scalar);
    }
    if (data.rgba) {
      const float* c = data.rgba + i * data.rgba_stride;
      for (int k = 0; k < 4; ++k) pv.rgba[k] = unorm8(c[k]);
    }
    std::memcpy(out + i, &pv, sizeof pv);
  }
  data_min_ = lo <= hi ? lo : 0.0f;
  data_max_ = lo <= hi ? hi : 1.0f;
}

// ------------------------------------------------------------------------------ textures

TextureLayer::TextureLayer(FrameLoop& loop, std::shared_ptr<ScenePipelines> pipelines)
    : loop_(&loop), pipelines_(std::move(pipelines)) {}

TextureLayer::~TextureLayer() {
  // Destroyed only once no frame uses it (retired by the scene): the set can go now.
  if (set_) pipelines_->descriptors->free(set_);
}

void TextureLayer::release_set() {
  if (!set_) return;
  std::shared_ptr<ScenePipelines> p = pipelines_;
  VkDescriptorSet set = set_;
  loop_->retire_shared(
      std::shared_ptr<void>(nullptr, [p, set](void*) { p->descriptors->free(set); }));
  set_ = VK_NULL_HANDLE;
}

VkDescriptorSet TextureLayer::descriptor(bool linear) {
  linear = linear && image_->linear_filter();
  if (set_ && set_linear_ == linear) return set_;
  release_set();  // a frame in flight may still use it
  set_ = pipelines_->descriptors->allocate(
      pipelines_->texture_set, {VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE, VK_DESCRIPTOR_TYPE_SAMPLER});
  set_linear_ = linear;
  VkDescriptorImageInfo image{VK_NULL_HANDLE, image_->view(), VK_IMAGE_LAYOUT_GENERAL};
  VkDescriptorImageInfo sampler{linear ? pipelines_->linear : pipelines_->nearest, VK_NULL_HANDLE,
                                VK_IMAGE_LAYOUT_UNDEFINED};
  VkWriteDescriptorSet w[2]{};
  w[0].sType = w[1].sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
  w[0].dstSet = w[1].dstSet = set_;
  w[0].dstBinding = 0;
  w[0].descriptorCount = 1;
  w[0].descriptorType = VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE;
  w[0].pImageInfo = &image;
  w[1].dstBinding = 1;
  w[1].descriptorCount = 1;
  w[1].descriptorType = VK_DESCRIPTOR_TYPE_SAMPLER;
  w[1].pImageInfo = &sampler;
  vkUpdateDescriptorSets(pipelines_->device, 2, w, 0, nullptr);
  return set_;
}

Bounds TextureLayer::bounds() const {
  Bounds b;
  if (!image_) return b;
  const TextureStyle& s = style;
  if (s.x0 != 0 || s.x1 != 0 || s.y0 != 0 || s.y1 != 0) {
    b.add(Vec3{s.x0, s.y0, s.z});
    b.add(Vec3{s.x1, s.y1, s.z});
    return b;
  }
  float m = static_cast<float>(std::max(width_, height_));
  b.add(Vec3{0, 0, s.z});
  b.add(Vec3{static_cast<float>(width_) / m, static_cast<float>(height_) / m, s.z});
  return b;
}

bool TextureLayer::update(const TextureData& data, uint64_t revision) {
  if (uploaded_ && revision == revision_) return false;
  update(data);
  revision_ = revision;
  return true;
}

void TextureLayer::update(const TextureData& data) {
  std::string what = "texture '" + data.name + "'";
  if (!data.texels) throw Error(what + ": no texel data");
  if (data.width == 0 || data.height == 0 || data.depth == 0)
    throw Error(what + ": size " + std::to_string(data.width) + "x" + std::to_string(data.height) +
                "x" + std::to_string(data.depth) + " has no texels");
  bool is_3d = data.depth > 1;
  uint32_t limit = is_3d ? pipelines_->max_3d : pipelines_->max_2d;
  if (std::max({data.width, data.height, data.depth}) > limit)
    throw Error(what + ": " + std::to_string(data.width) + "x" + std::to_string(data.height) +
                (is_3d ? "x" + std::to_string(data.depth) : std::string()) + " exceeds the " +
                std::to_string(limit) + " texels per side device '" + loop_->device().caps().name +
                "' allows");
  if (!image_ || format_ != data.format || width_ != data.width || height_ != data.height ||
      depth_ != data.depth) {
    auto image =
        std::make_unique<vk::GpuImage>(loop_->device(), loop_->allocator(), data.format, data.width,
                                       data.height, data.depth, is_3d ? 3 : 2, what);
    release_set();
    if (image_) loop_->retire(std::move(image_));
    image_ = std::move(image);
    format_ = data.format;
    width_ = data.width, height_ = data.height, depth_ = data.depth;
  }
  size_t texels = size_t{width_} * height_ * depth_;
  std::memcpy(loop_->upload_to(*image_), data.texels, texels * vk::texel_bytes(format_));
  uploaded_ = true;
  data_min_ = 0, data_max_ = 1;
  if (format_ == TextureFormat::RGBA8) return;
  // The first channel's range, for colour-mapped display.
  size_t channels = static_cast<size_t>(texture_channels(format_));
  const auto* f = static_cast<const float*>(data.texels);
  float lo = std::numeric_limits<float>::max(), hi = std::numeric_limits<float>::lowest();
  for (size_t i = 0; i < texels; ++i) {
    float v = f[i * channels];
    if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
  }
  if (lo <= hi) data_min_ = lo, data_max_ = hi;
}

// ------------------------------------------------------------------------------ meshes

MeshLayer::MeshLayer(FrameLoop& loop, Mesh mesh) : loop_(&loop), mesh_(std::move(mesh)) {
  if (mesh_.indices.empty() || mesh_.positions.size() % 3)
    throw Error("mesh '" + mesh_.name + "': no triangles to draw");
  for (uint32_t i : mesh_.indices)
    if (i >= mesh_.vertex_count())
      throw Error("mesh '" + mesh_.name + "': triangle index " + std::to_string(i) + " past its " +
                  std::to_string(mesh_.vertex_count()) + " vertices");
  VkDeviceSize bytes = mesh_.indices.size() * sizeof(uint32_t);
  ensure_buffer(loop, indices_, bytes, VK_BUFFER_USAGE_INDEX_BUFFER_BIT,
                "indices of mesh '" + mesh_.name + "'");
  std::memcpy(loop.upload_to(*indices_, 0, bytes), mesh_.indices.data(), bytes);
  reset_positions();
}

MeshLayer::~MeshLayer() = default;

void MeshLayer::reset_positions() {
  upload_vertices(mesh_.positions);
  uploaded_ = false;  // the next update_positions(.., revision) uploads whatever the revision
}

bool MeshLayer::update_positions(const PositionData& positions, uint64_t revision) {
  if (uploaded_ && revision == revision_) return false;
  update_positions(positions);
  revision_ = revision;
  return true;
}

void MeshLayer::update_positions(const PositionData& positions) {
  check_positions(positions, "mesh positions");
  if (positions.count != mesh_.vertex_count())
    throw Error("mesh '" + mesh_.name + "' has " + std::to_string(mesh_.vertex_count()) +
                " vertices but '" + positions.name + "' gives " + std::to_string(positions.count) +
                " positions: the counts must match (one position per OBJ vertex, in file order)");
  std::vector<float> xyz(positions.count * 3);
  for (size_t i = 0; i < positions.count; ++i) {
    Vec3 v = point_at(positions, i);
    xyz[i * 3] = v.x, xyz[i * 3 + 1] = v.y, xyz[i * 3 + 2] = v.z;
  }
  upload_vertices(xyz);
  uploaded_ = true;
}

void MeshLayer::upload_vertices(const std::vector<float>& xyz) {
  size_t n = xyz.size() / 3;
  scratch_.resize(n * 3);
  vertex_normals(xyz.data(), n, mesh_.indices, scratch_.data());
  VkDeviceSize bytes = n * sizeof(MeshVertex);
  ensure_buffer(*loop_, vertices_, bytes, VK_BUFFER_USAGE_VERTEX_BUFFER_BIT,
                "vertices of mesh '" + mesh_.name + "'");
  auto* out = reinterpret_cast<MeshVertex*>(loop_->upload_to(*vertices_, 0, bytes));
  bounds_ = Bounds{};
  for (size_t i = 0; i < n; ++i) {
    MeshVertex v{{xyz[i * 3], xyz[i * 3 + 1], xyz[i * 3 + 2]},
                 {scratch_[i * 3], scratch_[i * 3 + 1], scratch_[i * 3 + 2]}};
    bounds_.add(Vec3{v.position[0], v.position[1], v.position[2]});
    std::memcpy(out + i, &v, sizeof v);
  }
}

}  // namespace loom::render
