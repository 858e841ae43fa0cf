// The scene: a floor, a sphere, the simulated cloth draped over it, the fractal texture on a
// panel to the left and the particles on a panel to the right, under one sun, seen by a
// fixed camera. What the simulation owns (the cloth's positions, the particles, the fractal
// image) is drawn straight from the handles Loom exports: no copies.
#pragma once

#include <vulkan/vulkan.h>

#include <vector>

#include "gpu_resources.h"
#include "obj_mesh.h"

namespace host_sample {

class VulkanContext;
class FrameTarget;

// The simulation's device resources, as the renderer binds them.
struct SimulationViews {
  VkBuffer cloth = VK_NULL_HANDLE;  // f32x3 [rows, columns], AoS: vertex i * columns + j
  VkDeviceSize cloth_offset = 0;
  VkDeviceSize cloth_size = 0;
  uint32_t cloth_rows = 0;
  uint32_t cloth_columns = 0;
  VkBuffer particles = VK_NULL_HANDLE;  // f32x2 [particle_count] in [0, 1]^2
  VkDeviceSize particles_offset = 0;
  VkBuffer velocities = VK_NULL_HANDLE;  // f32x2 [particle_count]
  VkDeviceSize velocities_offset = 0;
  uint32_t particle_count = 0;
  VkImageView fractal = VK_NULL_HANDLE;  // sampled in VK_IMAGE_LAYOUT_GENERAL
  uint64_t generation = 0;               // changes whenever a handle above changes
};

class SceneRenderer {
 public:
  // `cloth`: its triangles index the simulated positions; `sphere`: a unit sphere.
  SceneRenderer(const VulkanContext& context, const FrameTarget& target, uint32_t frames_in_flight,
                const ObjMesh& cloth, const ObjMesh& sphere);
  ~SceneRenderer();
  SceneRenderer(const SceneRenderer&) = delete;
  SceneRenderer& operator=(const SceneRenderer&) = delete;

  // Records the scene's render pass into `commands`. The frame that last used `slot` has
  // completed, so its descriptor set may be rewritten when `views` changed.
  void record(VkCommandBuffer commands, uint32_t slot, VkFramebuffer framebuffer, VkExtent2D extent,
              const SimulationViews& views);

 private:
  struct PipelineDesc;
  VkPipeline create_pipeline(const PipelineDesc& desc);
  void update_set(uint32_t slot, const SimulationViews& views);

  const VulkanContext& context_;
  const FrameTarget& target_;
  VkDescriptorSetLayout set_layout_ = VK_NULL_HANDLE;
  VkPipelineLayout layout_ = VK_NULL_HANDLE;
  VkDescriptorPool pool_ = VK_NULL_HANDLE;
  VkSampler sampler_ = VK_NULL_HANDLE;
  std::vector<VkDescriptorSet> sets_;      // per frame in flight
  std::vector<uint64_t> set_generations_;  // the views each set was written with
  VkPipeline cloth_pipeline_ = VK_NULL_HANDLE;
  VkPipeline mesh_pipeline_ = VK_NULL_HANDLE;
  VkPipeline floor_pipeline_ = VK_NULL_HANDLE;
  VkPipeline panel_pipeline_ = VK_NULL_HANDLE;
  VkPipeline points_pipeline_ = VK_NULL_HANDLE;

  Buffer cloth_indices_;
  uint32_t cloth_index_count_ = 0;
  uint32_t cloth_vertex_count_ = 0;
  Buffer sphere_vertices_;
  Buffer sphere_indices_;
  uint32_t sphere_index_count_ = 0;
  Buffer floor_vertices_;
};

}  // namespace host_sample
