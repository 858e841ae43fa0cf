// A kernel ready to launch on a Vulkan device: its descriptor set layout, pipeline layout,
// one compute pipeline per task, its temps/returns/error buffers, and a bounded cache of
// descriptor sets keyed by what is bound (an unchanged binding reuses its set).
#pragma once

#include <vulkan/vulkan.h>

#include <algorithm>
#include <cstdint>
#include <list>
#include <map>
#include <string>
#include <vector>

#include "runtime/common/kernel_abi.h"
#include "runtime/common/spirv_kernel.h"
#include "runtime/vulkan/gpu_buffer.h"

namespace loom::vk {

class VulkanDevice;
class PipelineCache;
class DescriptorAllocator;

VkDescriptorType descriptor_type(BindingKind kind);

// When something was last recorded: into Loom's command stream (a timeline value) and into
// host command buffers (a HostFrames frame). It is free once both have completed.
struct GpuUse {
  uint64_t stream = 0, frame = 0;
  bool done_by(const GpuUse& completed) const {
    return stream <= completed.stream && frame <= completed.frame;
  }
};

class VulkanKernel {
 public:
  // Checks the kernel's requirements against the device (an Error names the kernel and the
  // missing features), then builds its pipelines through `cache`.
  VulkanKernel(VulkanDevice& device, MemoryAllocator& allocator, PipelineCache& cache,
               DescriptorAllocator& sets, KernelABI abi, SpirvKernel code);
  ~VulkanKernel();
  VulkanKernel(const VulkanKernel&) = delete;
  VulkanKernel& operator=(const VulkanKernel&) = delete;

  const KernelABI& abi() const { return abi_; }
  const SpirvKernel& code() const { return code_; }
  const ArgsLayout& args() const { return args_; }
  VkPipelineLayout layout() const { return layout_; }
  VkPipeline pipeline(size_t task) const { return pipelines_.at(task); }
  // A direct n-d task's pipeline for rows laid end to end (kSpecRowsEndToEnd), made at its
  // first use.
  VkPipeline rows_end_to_end_pipeline(size_t task);
  double pipeline_ms() const { return pipeline_ms_; }

  GpuBuffer& temps() { return temps_; }
  GpuBuffer& returns() { return returns_; }
  GpuBuffer& error() { return error_; }

  // The descriptor set for these bound resources (`key` identifies them), written by
  // `write` when new. Sets whose last use has completed may be recycled.
  template <typename Write>
  VkDescriptorSet set_for(const std::vector<uint64_t>& key, GpuUse use, GpuUse completed,
                          Write&& write) {
    auto it = sets_.find(key);
    if (it != sets_.end()) {
      lru_.splice(lru_.end(), lru_, it->second.lru);
      GpuUse& last = it->second.last_use;
      last.stream = std::max(last.stream, use.stream);
      last.frame = std::max(last.frame, use.frame);
      return it->second.set;
    }
    VkDescriptorSet set = allocate_set(completed);
    write(set);
    lru_.push_back(key);
    sets_[key] = {set, use, std::prev(lru_.end())};
    return set;
  }
  size_t cached_sets() const { return sets_.size(); }

 private:
  VkDescriptorSet allocate_set(GpuUse completed);
  void release();

  struct CachedSet {
    VkDescriptorSet set;
    GpuUse last_use;
    std::list<std::vector<uint64_t>>::iterator lru;
  };

  VulkanDevice& device_;
  DescriptorAllocator& allocator_;
  PipelineCache& cache_;
  KernelABI abi_;
  SpirvKernel code_;
  ArgsLayout args_;
  VkDescriptorSetLayout set_layout_ = VK_NULL_HANDLE;
  std::vector<VkDescriptorType> descriptor_types_;  // of set_layout_'s bindings, in order
  VkPipelineLayout layout_ = VK_NULL_HANDLE;
  VkPipeline make_pipeline(size_t task, bool rows_end_to_end);

  std::vector<VkPipeline> pipelines_;
  std::map<size_t, VkPipeline> end_to_end_pipelines_;
  double pipeline_ms_ = 0;
  GpuBuffer temps_, returns_, error_;
  std::map<std::vector<uint64_t>, CachedSet> sets_;
  std::list<std::vector<uint64_t>> lru_;
};

}  // namespace loom::vk
