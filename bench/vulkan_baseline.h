// Hand-written GLSL compute shaders as the baselines of the Vulkan benchmarks: a shader
// compiled at build time (bench/shaders/, glslangValidator) with its pipeline on the same
// VulkanDevice as the Loom program it is measured against, bound to storage buffers of that
// device's memory, its workgroup size a specialization constant (local_size_x_id = 0) so it
// can match Loom's.
#pragma once

#include <vulkan/vulkan.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace loom::vk {
class GpuBuffer;
class VulkanDevice;
}  // namespace loom::vk

namespace loom::bench {

class GlslKernel {
 public:
  // `buffers` bind to bindings 0, 1, ... of set 0; the push constants are `push_bytes` long.
  GlslKernel(vk::VulkanDevice& device, const uint32_t* code, size_t code_bytes,
             const std::vector<const vk::GpuBuffer*>& buffers, uint32_t push_bytes,
             uint32_t workgroup_size);
  ~GlslKernel();
  GlslKernel(const GlslKernel&) = delete;
  GlslKernel& operator=(const GlslKernel&) = delete;

  uint32_t workgroup_size() const { return workgroup_size_; }
  // Binds pipeline and set, pushes `push` (push_bytes long) and dispatches groups x, y.
  void dispatch(VkCommandBuffer cb, const void* push, uint32_t groups_x,
                uint32_t groups_y = 1) const;
  // Only the vkCmdDispatch, for batches that bind once (the raw cost of a dispatch).
  void bind(VkCommandBuffer cb, const void* push) const;

 private:
  vk::VulkanDevice& device_;
  uint32_t push_bytes_, workgroup_size_;
  VkShaderModule module_ = VK_NULL_HANDLE;
  VkDescriptorSetLayout set_layout_ = VK_NULL_HANDLE;
  VkPipelineLayout layout_ = VK_NULL_HANDLE;
  VkPipeline pipeline_ = VK_NULL_HANDLE;
  VkDescriptorPool pool_ = VK_NULL_HANDLE;
  VkDescriptorSet set_ = VK_NULL_HANDLE;
};

// Workgroups for `count` invocations of `workgroup_size`, as a grid of x by y within the
// device's limit per dimension (the shaders flatten it: gl_GlobalInvocationID.y times the
// row of invocations plus .x).
struct Grid {
  uint32_t x = 1, y = 1;
};
Grid grid_for(uint64_t count, uint32_t workgroup_size, uint32_t max_groups_x);

}  // namespace loom::bench
