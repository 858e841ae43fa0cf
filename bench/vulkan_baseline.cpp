#include "bench/vulkan_baseline.h"

#include <algorithm>

#include "runtime/vulkan/gpu_buffer.h"
#include "runtime/vulkan/vk_check.h"
#include "runtime/vulkan/vulkan_device.h"

namespace loom::bench {

GlslKernel::GlslKernel(vk::VulkanDevice& device, const uint32_t* code, size_t code_bytes,
                       const std::vector<const vk::GpuBuffer*>& buffers, uint32_t push_bytes,
                       uint32_t workgroup_size)
    : device_(device), push_bytes_(push_bytes), workgroup_size_(workgroup_size) {
  VkDevice d = device.device();
  const VkAllocationCallbacks* host = device.host_allocator();
  VkShaderModuleCreateInfo mi{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  mi.codeSize = code_bytes;
  mi.pCode = code;
  vk::check(vkCreateShaderModule(d, &mi, host, &module_), "baseline shader module");

  const auto count = static_cast<uint32_t>(buffers.size());
  std::vector<VkDescriptorSetLayoutBinding> bindings(count);
  for (uint32_t b = 0; b < count; ++b)
    bindings[b] = {b, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
  VkDescriptorSetLayoutCreateInfo li{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  li.bindingCount = count;
  li.pBindings = bindings.data();
  vk::check(vkCreateDescriptorSetLayout(d, &li, host, &set_layout_),
            "baseline descriptor set layout");
  VkPushConstantRange push{VK_SHADER_STAGE_COMPUTE_BIT, 0, push_bytes};
  VkPipelineLayoutCreateInfo pli{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  pli.setLayoutCount = 1;
  pli.pSetLayouts = &set_layout_;
  pli.pushConstantRangeCount = push_bytes ? 1 : 0;
  pli.pPushConstantRanges = &push;
  vk::check(vkCreatePipelineLayout(d, &pli, host, &layout_), "baseline pipeline layout");

  VkSpecializationMapEntry entry{0, 0, sizeof(uint32_t)};
  VkSpecializationInfo spec{1, &entry, sizeof(uint32_t), &workgroup_size_};
  VkComputePipelineCreateInfo ci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  ci.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
  ci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  ci.stage.module = module_;
  ci.stage.pName = "main";
  ci.stage.pSpecializationInfo = &spec;
  ci.layout = layout_;
  vk::check(vkCreateComputePipelines(d, VK_NULL_HANDLE, 1, &ci, host, &pipeline_),
            "baseline pipeline");

  if (count == 0) return;
  VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, count};
  VkDescriptorPoolCreateInfo pi{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
  pi.maxSets = 1;
  pi.poolSizeCount = 1;
  pi.pPoolSizes = &size;
  vk::check(vkCreateDescriptorPool(d, &pi, host, &pool_), "baseline descriptor pool");
  VkDescriptorSetAllocateInfo ai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
  ai.descriptorPool = pool_;
  ai.descriptorSetCount = 1;
  ai.pSetLayouts = &set_layout_;
  vk::check(vkAllocateDescriptorSets(d, &ai, &set_), "baseline descriptor set");
  std::vector<VkDescriptorBufferInfo> infos(count);
  std::vector<VkWriteDescriptorSet> writes(count);
  for (uint32_t b = 0; b < count; ++b) {
    infos[b] = {buffers[b]->handle(), 0, VK_WHOLE_SIZE};
    writes[b] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    writes[b].dstSet = set_;
    writes[b].dstBinding = b;
    writes[b].descriptorCount = 1;
    writes[b].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    writes[b].pBufferInfo = &infos[b];
  }
  vkUpdateDescriptorSets(d, count, writes.data(), 0, nullptr);
}

GlslKernel::~GlslKernel() {
  VkDevice d = device_.device();
  const VkAllocationCallbacks* host = device_.host_allocator();
  if (pool_) vkDestroyDescriptorPool(d, pool_, host);
  vkDestroyPipeline(d, pipeline_, host);
  vkDestroyPipelineLayout(d, layout_, host);
  vkDestroyDescriptorSetLayout(d, set_layout_, host);
  vkDestroyShaderModule(d, module_, host);
}

void GlslKernel::bind(VkCommandBuffer cb, const void* push) const {
  vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline_);
  if (set_)
    vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, layout_, 0, 1, &set_, 0, nullptr);
  if (push_bytes_)
    vkCmdPushConstants(cb, layout_, VK_SHADER_STAGE_COMPUTE_BIT, 0, push_bytes_, push);
}

void GlslKernel::dispatch(VkCommandBuffer cb, const void* push, uint32_t groups_x,
                          uint32_t groups_y) const {
  bind(cb, push);
  vkCmdDispatch(cb, groups_x, groups_y, 1);
}

Grid grid_for(uint64_t count, uint32_t workgroup_size, uint32_t max_groups_x) {
  uint64_t groups = std::max<uint64_t>(1, (count + workgroup_size - 1) / workgroup_size);
  Grid g;
  g.x = static_cast<uint32_t>(std::min<uint64_t>(groups, max_groups_x));
  g.y = static_cast<uint32_t>((groups + g.x - 1) / g.x);
  return g;
}

}  // namespace loom::bench
