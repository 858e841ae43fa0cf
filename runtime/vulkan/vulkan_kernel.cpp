#include "runtime/vulkan/vulkan_kernel.h"

#include <chrono>

#include "runtime/common/error.h"
#include "runtime/vulkan/descriptor_allocator.h"
#include "runtime/vulkan/pipeline_cache.h"
#include "runtime/vulkan/shader_check.h"
#include "runtime/vulkan/vk_check.h"
#include "runtime/vulkan/vulkan_device.h"

namespace loom::vk {

namespace {

constexpr size_t kMaxCachedSets = 64;

size_t return_components(const KernelABI& abi) {
  size_t n = 0;
  for (const ValueType& t : abi.returns) n += static_cast<size_t>(t.components());
  return n;
}

}  // namespace

VkDescriptorType descriptor_type(BindingKind kind) {
  switch (kind) {
    case BindingKind::Args: return VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER_DYNAMIC;
    case BindingKind::Argpack: return VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER;
    case BindingKind::Temps:
    case BindingKind::Returns:
    case BindingKind::Error:
    case BindingKind::Buffer: return VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    case BindingKind::StorageImage: return VK_DESCRIPTOR_TYPE_STORAGE_IMAGE;
    case BindingKind::SampledImage: return VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE;
    case BindingKind::Sampler: return VK_DESCRIPTOR_TYPE_SAMPLER;
  }
  return VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
}

namespace {

// Every index a compiled kernel carries must fit its ABI: a record from disk (a cache entry,
// an AOT module) is checked before anything is indexed with it.
void check_against_abi(const KernelABI& abi, const SpirvKernel& code, const Place& where) {
  auto fail = [&](const std::string& why) {
    throw Error(where, "corrupt compiled kernel '" + abi.name + "': " + why);
  };
  auto resource = [&](int32_t i, bool texture) {
    if (i < 0 || static_cast<size_t>(i) >= abi.resources.size())
      fail("binding names resource slot " + std::to_string(i));
    if ((abi.resources[static_cast<size_t>(i)].kind == ResourceKind::Texture) != texture)
      fail("binding kind does not match resource slot " + std::to_string(i));
  };
  std::vector<bool> used(1024, false);
  for (const SpirvBinding& b : code.bindings) {
    if (b.binding >= used.size() || used[b.binding])
      fail("binding number " + std::to_string(b.binding));
    used[b.binding] = true;
    switch (b.kind) {
      case BindingKind::Argpack:
        if (b.index < 0 || static_cast<size_t>(b.index) >= abi.params.size() ||
            abi.params[static_cast<size_t>(b.index)].kind != ParamKind::Argpack)
          fail("argpack binding names parameter " + std::to_string(b.index));
        break;
      case BindingKind::Buffer: resource(b.index, false); break;
      case BindingKind::StorageImage:
      case BindingKind::SampledImage: resource(b.index, true); break;
      case BindingKind::Sampler:
        if (b.index < 0 || b.index > 3) fail("sampler mode " + std::to_string(b.index));
        break;
      default: break;
    }
  }
  if (code.tasks.size() != abi.tasks.size()) fail("task count differs from the ABI");
  for (const SpirvTask& t : code.tasks) {
    if (t.begin.size() != t.end.size()) fail("range bounds come in pairs");
    for (const auto* bounds : {&t.begin, &t.end})
      for (const RangeBound& r : *bounds) {
        if (r.kind == RangeBound::Kind::Arg) {
          if (r.value < 0 || static_cast<size_t>(r.value) >= abi.params.size())
            fail("range bound names parameter " + std::to_string(r.value));
          const ParamDesc& p = abi.params[static_cast<size_t>(r.value)];
          if (p.kind != ParamKind::Value ||
              r.offset + 4 > static_cast<uint32_t>(size_of(p.type.scalar) * p.type.components()))
            fail("range bound reads outside parameter '" + p.name + "'");
        } else if (r.kind == RangeBound::Kind::Shape) {
          if (r.value < 0 || static_cast<size_t>(r.value) >= abi.resources.size() ||
              r.offset >= kMaxDims)
            fail("range bound names resource slot " + std::to_string(r.value));
        }
      }
  }
}

}  // namespace

VulkanKernel::VulkanKernel(VulkanDevice& device, MemoryAllocator& allocator, PipelineCache& cache,
                           DescriptorAllocator& sets, KernelABI abi, SpirvKernel code)
    : device_(device),
      allocator_(sets),
      cache_(cache),
      abi_(std::move(abi)),
      code_(std::move(code)),
      args_(args_layout(abi_)) {
  const DeviceCaps& caps = device.caps();
  Place where{"", abi_.name, -1, ""};
  check_against_abi(abi_, code_, where);
  uint32_t missing = code_.requirements & ~caps.features;
  if (missing)
    throw Error(where, "kernel '" + abi_.name + "' needs " + describe_requirements(missing) +
                           ", which device '" + caps.name + "' lacks");
  if (code_.args_in_push_constants && args_.size > caps.max_push_constants)
    throw Error(where, "kernel '" + abi_.name + "' passes " + std::to_string(args_.size) +
                           " bytes of arguments as push constants; device '" + caps.name +
                           "' takes " + std::to_string(caps.max_push_constants));
  for (const ParamDesc& p : abi_.params)
    if (p.kind == ParamKind::Argpack && p.size > caps.max_uniform_buffer_range)
      throw Error(Place{"", abi_.name, -1, p.name},
                  "argpack parameter '" + p.name + "' is " + std::to_string(p.size) +
                      " bytes; device '" + caps.name + "' binds uniform buffers of at most " +
                      std::to_string(caps.max_uniform_buffer_range));
  for (size_t i = 0; i < code_.tasks.size(); ++i) {
    if (code_.tasks[i].workgroup_size > caps.max_workgroup_size_x)
      throw Error(where, "kernel '" + abi_.name + "' uses workgroups of " +
                             std::to_string(code_.tasks[i].workgroup_size) + "; device '" +
                             caps.name + "' allows " + std::to_string(caps.max_workgroup_size_x));
    // Nothing reaches the driver that disagrees with the layout built here or the device.
    check_task_shader(abi_, code_, i, caps);
  }
  try {
    std::vector<VkDescriptorSetLayoutBinding> bindings;
    for (const SpirvBinding& b : code_.bindings) {
      bindings.push_back(
          {b.binding, descriptor_type(b.kind), 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr});
      descriptor_types_.push_back(descriptor_type(b.kind));
    }
    VkDescriptorSetLayoutCreateInfo dci{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    dci.bindingCount = static_cast<uint32_t>(bindings.size());
    dci.pBindings = bindings.data();
    check(vkCreateDescriptorSetLayout(device.device(), &dci, device.host_allocator(), &set_layout_),
          "creating a descriptor set layout");
    VkPushConstantRange push{VK_SHADER_STAGE_COMPUTE_BIT, 0, args_.size};
    VkPipelineLayoutCreateInfo lci{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    lci.setLayoutCount = 1;
    lci.pSetLayouts = &set_layout_;
    lci.pushConstantRangeCount = code_.args_in_push_constants ? 1 : 0;
    lci.pPushConstantRanges = &push;
    check(vkCreatePipelineLayout(device.device(), &lci, device.host_allocator(), &layout_),
          "creating a pipeline layout");

    auto t0 = std::chrono::steady_clock::now();
    for (size_t i = 0; i < code_.tasks.size(); ++i) pipelines_.push_back(make_pipeline(i, false));
    pipeline_ms_ =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();

    const VkBufferUsageFlags storage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
                                       VK_BUFFER_USAGE_TRANSFER_DST_BIT |
                                       VK_BUFFER_USAGE_TRANSFER_SRC_BIT;
    for (const SpirvBinding& b : code_.bindings) {
      if (b.kind == BindingKind::Temps)
        temps_ = GpuBuffer(device, allocator, abi_.temps_size, storage, MemoryUse::DeviceLocal,
                           "the temporaries of kernel '" + abi_.name + "'");
      if (b.kind == BindingKind::Returns)
        returns_ =
            GpuBuffer(device, allocator, return_components(abi_) * kReturnSlotBytes, storage,
                      MemoryUse::Readback, "the return values of kernel '" + abi_.name + "'");
      if (b.kind == BindingKind::Error)
        error_ = GpuBuffer(device, allocator, sizeof(LaunchError), storage, MemoryUse::Readback,
                           "the error record of kernel '" + abi_.name + "'");
    }
  } catch (...) {
    release();
    throw;
  }
}

VulkanKernel::~VulkanKernel() { release(); }

void VulkanKernel::release() {
  VkDevice d = device_.device();
  for (auto& [key, s] : sets_) allocator_.free(s.set);
  sets_.clear();
  lru_.clear();
  for (VkPipeline p : pipelines_) vkDestroyPipeline(d, p, device_.host_allocator());
  pipelines_.clear();
  for (auto& [task, p] : end_to_end_pipelines_) vkDestroyPipeline(d, p, device_.host_allocator());
  end_to_end_pipelines_.clear();
  if (layout_) vkDestroyPipelineLayout(d, layout_, device_.host_allocator());
  if (set_layout_) vkDestroyDescriptorSetLayout(d, set_layout_, device_.host_allocator());
  layout_ = VK_NULL_HANDLE;
  set_layout_ = VK_NULL_HANDLE;
}

VkPipeline VulkanKernel::make_pipeline(size_t task, bool rows_end_to_end) {
  const SpirvTask& t = code_.tasks.at(task);
  VkDevice d = device_.device();
  VkShaderModuleCreateInfo sci{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  sci.codeSize = t.spirv.size() * 4;
  sci.pCode = t.spirv.data();
  VkShaderModule module;
  check(vkCreateShaderModule(d, &sci, device_.host_allocator(), &module),
        "loading task " + std::to_string(task) + " of kernel '" + abi_.name + "'");
  const VkBool32 end_to_end = VK_TRUE;
  VkSpecializationMapEntry entry{kSpecRowsEndToEnd, 0, sizeof(VkBool32)};
  VkSpecializationInfo spec{1, &entry, sizeof end_to_end, &end_to_end};
  VkComputePipelineCreateInfo pci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  pci.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
               nullptr,
               0,
               VK_SHADER_STAGE_COMPUTE_BIT,
               module,
               "main",
               rows_end_to_end ? &spec : nullptr};
  pci.layout = layout_;
  VkPipeline pipeline;
  VkResult r =
      vkCreateComputePipelines(d, cache_.handle(), 1, &pci, device_.host_allocator(), &pipeline);
  vkDestroyShaderModule(d, module, device_.host_allocator());
  check(r,
        "building the pipeline of task " + std::to_string(task) + " of kernel '" + abi_.name + "'");
  return pipeline;
}

VkPipeline VulkanKernel::rows_end_to_end_pipeline(size_t task) {
  auto it = end_to_end_pipelines_.find(task);
  if (it != end_to_end_pipelines_.end()) return it->second;
  if (!code_.tasks.at(task).direct || code_.tasks[task].grid_dims != 2)
    throw InternalError("rows end to end for a task that is not a direct n-d task");
  return end_to_end_pipelines_[task] = make_pipeline(task, true);
}

VkDescriptorSet VulkanKernel::allocate_set(GpuUse completed) {
  // Recycle the least recently used set whose last use has completed.
  if (sets_.size() >= kMaxCachedSets) {
    for (auto it = lru_.begin(); it != lru_.end(); ++it) {
      auto found = sets_.find(*it);
      if (!found->second.last_use.done_by(completed)) continue;
      allocator_.free(found->second.set);
      sets_.erase(found);
      lru_.erase(it);
      break;
    }
  }
  return allocator_.allocate(set_layout_, descriptor_types_);
}

}  // namespace loom::vk
