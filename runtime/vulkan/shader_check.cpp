#include "runtime/vulkan/shader_check.h"

#include <spirv/unified1/spirv.hpp>

#include <algorithm>
#include <string>
#include <unordered_map>

#include "runtime/common/error.h"
#include "runtime/vulkan/shader_interface.h"
#include "runtime/vulkan/vulkan_device.h"

namespace loom::vk {

namespace {

// The capabilities Loom's kernels declare, each with the device feature it needs
// (SpirvRequirement bits; 0: every Vulkan device has it). Any other is refused.
struct KnownCapability {
  spv::Capability capability;
  const char* name;
  uint32_t feature;
};
constexpr KnownCapability kCapabilities[] = {
    {spv::CapabilityShader, "Shader", 0},
    {spv::CapabilityInt64, "Int64", kNeedInt64},
    {spv::CapabilityFloat64, "Float64", kNeedFloat64},
    {spv::CapabilityInt16, "Int16", kNeedInt16},
    {spv::CapabilityInt8, "Int8", kNeedInt8},
    {spv::CapabilityStorageBuffer8BitAccess, "StorageBuffer8BitAccess", kNeedStorage8},
    {spv::CapabilityStorageBuffer16BitAccess, "StorageBuffer16BitAccess", kNeedStorage16},
    {spv::CapabilityInt64Atomics, "Int64Atomics", kNeedInt64Atomics},
    {spv::CapabilityAtomicFloat32AddEXT, "AtomicFloat32AddEXT", kNeedFloat32AtomicAdd},
    {spv::CapabilityAtomicFloat32MinMaxEXT, "AtomicFloat32MinMaxEXT", kNeedFloat32AtomicMinMax},
    {spv::CapabilityAtomicFloat64AddEXT, "AtomicFloat64AddEXT", kNeedFloat64AtomicAdd},
    {spv::CapabilityAtomicFloat64MinMaxEXT, "AtomicFloat64MinMaxEXT", kNeedFloat64AtomicMinMax},
    {spv::CapabilityStorageImageExtendedFormats, "StorageImageExtendedFormats",
     kNeedStorageImageExtendedFormats},
    {spv::CapabilityGroupNonUniform, "GroupNonUniform", kNeedSubgroupArithmetic},
    {spv::CapabilityGroupNonUniformArithmetic, "GroupNonUniformArithmetic",
     kNeedSubgroupArithmetic},
};

// The extensions Loom's kernels declare; what they allow needs one of the capabilities above.
constexpr const char* kExtensions[] = {
    "SPV_KHR_8bit_storage",
    "SPV_KHR_16bit_storage",
    "SPV_KHR_storage_buffer_storage_class",
    "SPV_EXT_shader_atomic_float_add",
    "SPV_EXT_shader_atomic_float_min_max",
};

constexpr const char* kInstructionSet = "GLSL.std.450";

DescriptorShape shape_of(BindingKind kind) {
  switch (kind) {
    case BindingKind::Args:
    case BindingKind::Argpack: return DescriptorShape::UniformBuffer;
    case BindingKind::Temps:
    case BindingKind::Returns:
    case BindingKind::Error:
    case BindingKind::Buffer: return DescriptorShape::StorageBuffer;
    case BindingKind::StorageImage: return DescriptorShape::StorageImage;
    case BindingKind::SampledImage: return DescriptorShape::SampledImage;
    case BindingKind::Sampler: return DescriptorShape::Sampler;
  }
  return DescriptorShape::Other;
}

// The storage-image format of a texture's views (what the compiler declares).
spv::ImageFormat image_format(TextureFormat f) {
  switch (f) {
    case TextureFormat::R32F: return spv::ImageFormatR32f;
    case TextureFormat::RG32F: return spv::ImageFormatRg32f;
    case TextureFormat::RGBA32F: return spv::ImageFormatRgba32f;
    case TextureFormat::RGBA8: return spv::ImageFormatRgba8;
  }
  return spv::ImageFormatUnknown;
}

std::string dim_text(uint32_t dim) {
  switch (dim) {
    case spv::Dim1D: return "1-d";
    case spv::Dim2D: return "2-d";
    case spv::Dim3D: return "3-d";
    case spv::DimCube: return "cube";
    default: return "dimension " + std::to_string(dim);
  }
}

std::string size_text(const uint32_t (&size)[3]) {
  return std::to_string(size[0]) + "x" + std::to_string(size[1]) + "x" + std::to_string(size[2]);
}

class TaskShaderCheck {
 public:
  TaskShaderCheck(const KernelABI& abi, const SpirvKernel& code, size_t task,
                  const DeviceCaps& caps)
      : abi_(abi), code_(code), task_(task), caps_(caps), args_bytes_(args_layout(abi).size) {
    for (const SpirvBinding& b : code.bindings) bindings_.emplace(b.binding, &b);
  }

  void run() {
    try {
      shader_ = read_shader_interface(code_.tasks.at(task_).spirv);
    } catch (const Error& e) {
      fail("the shader is not well-formed SPIR-V: " + e.message());
    }
    check_declarations();
    check_entry_point();
    for (const ShaderResource& r : shader_.resources) check_resource(r);
    check_push_constants();
    if (shader_.workgroup_bytes > caps_.max_workgroup_memory)
      fail("the shader uses " + std::to_string(shader_.workgroup_bytes) +
               " bytes of workgroup memory; device '" + caps_.name + "' has " +
               std::to_string(caps_.max_workgroup_memory),
           ErrorKind::Capability);
  }

 private:
  [[noreturn]] void fail(const std::string& why, ErrorKind kind = ErrorKind::Corrupt) const {
    throw Error(Place{"", abi_.name}, "task " + std::to_string(task_) + ": " + why, kind);
  }

  void check_declarations() const {
    for (uint32_t c : shader_.capabilities) {
      const KnownCapability* known = nullptr;
      for (const KnownCapability& k : kCapabilities)
        if (k.capability == c) known = &k;
      if (!known)
        fail("the shader declares capability " + std::to_string(c) +
                 ", which Loom's kernels never use and Loom enables on no device",
             ErrorKind::Capability);
      if (known->feature & ~caps_.features)
        fail(std::string("the shader declares capability ") + known->name + ", which needs " +
                 describe_requirements(known->feature) + "; device '" + caps_.name +
                 "' does not have it enabled",
             ErrorKind::Capability);
    }
    for (const std::string& e : shader_.extensions) {
      bool known = false;
      for (const char* k : kExtensions) known |= e == k;
      if (!known)
        fail("the shader declares extension '" + e +
                 "', which Loom's kernels never use and Loom enables on no device",
             ErrorKind::Capability);
    }
    for (const std::string& set : shader_.instruction_sets)
      if (set != kInstructionSet)
        fail("the shader imports instruction set '" + set + "'; Loom's kernels import only " +
             kInstructionSet);
  }

  void check_entry_point() const {
    if (shader_.entry_points.size() != 1)
      fail("the shader has " + std::to_string(shader_.entry_points.size()) +
           " entry points; a task has one, GLCompute 'main'");
    const ShaderEntryPoint& e = shader_.entry_points[0];
    if (e.model != spv::ExecutionModelGLCompute)
      fail("the shader's entry point '" + e.name + "' is of execution model " +
           std::to_string(e.model) + "; a task's is GLCompute (" +
           std::to_string(spv::ExecutionModelGLCompute) + ")");
    if (e.name != "main") fail("the shader's entry point is '" + e.name + "'; a task's is 'main'");
    const uint32_t(&size)[3] = e.local_size;
    if (size[0] == 0 || size[1] == 0 || size[2] == 0)
      fail("the shader's workgroup size is " + size_text(size) +
           " (no LocalSize, or an empty one)");
    uint64_t invocations = uint64_t{size[0]} * size[1] * size[2];
    if (size[0] > caps_.max_workgroup_size_x || size[1] > caps_.max_workgroup_size_y ||
        size[2] > caps_.max_workgroup_size_z || invocations > caps_.max_workgroup_invocations)
      fail("the shader's workgroups of " + size_text(size) + " invocations are beyond device '" +
               caps_.name + "' (at most " + std::to_string(caps_.max_workgroup_size_x) + "x" +
               std::to_string(caps_.max_workgroup_size_y) + "x" +
               std::to_string(caps_.max_workgroup_size_z) + ", " +
               std::to_string(caps_.max_workgroup_invocations) + " invocations)",
           ErrorKind::Capability);
    const uint32_t declared[3] = {code_.tasks[task_].workgroup_size, 1, 1};
    if (size[0] != declared[0] || size[1] != 1 || size[2] != 1)
      fail("the shader's workgroups are " + size_text(size) + " invocations; the kernel's " +
           "metadata says " + size_text(declared));
  }

  // The parameter or resource slot binding `b` names; null where it names none (VulkanKernel
  // refuses such kernels before this check, which must not rely on it).
  const ParamDesc* param_of(const SpirvBinding& b) const {
    if (b.index < 0 || static_cast<size_t>(b.index) >= abi_.params.size()) return nullptr;
    return &abi_.params[static_cast<size_t>(b.index)];
  }
  const ResourceDesc* resource_of(const SpirvBinding& b) const {
    if (b.index < 0 || static_cast<size_t>(b.index) >= abi_.resources.size()) return nullptr;
    return &abi_.resources[static_cast<size_t>(b.index)];
  }

  // What the layout binds at `b`, for messages: "field 'x'", "the temporaries", ...
  std::string bound_text(const SpirvBinding& b) const {
    switch (b.kind) {
      case BindingKind::Args: return "the arguments";
      case BindingKind::Temps: return "the temporaries";
      case BindingKind::Returns: return "the return values";
      case BindingKind::Error: return "the error record";
      case BindingKind::Argpack:
        if (const ParamDesc* p = param_of(b)) return "argpack parameter '" + p->name + "'";
        return "argpack parameter " + std::to_string(b.index);
      case BindingKind::Buffer:
      case BindingKind::StorageImage:
      case BindingKind::SampledImage: {
        const ResourceDesc* r = resource_of(b);
        if (r && r->kind == ResourceKind::Field) return "field '" + r->field + "'";
        return std::string(r ? resource_kind_name(r->kind) : "resource") + " slot " +
               std::to_string(b.index);
      }
      case BindingKind::Sampler: return "a sampler";
    }
    return "?";
  }

  // The bytes a uniform binding provides: the args block, or an argpack as the compiler
  // declares it (its std140 size, at least 16, in whole vec4s).
  uint64_t uniform_bytes(const SpirvBinding& b) const {
    if (b.kind == BindingKind::Args) return args_bytes_;
    const ParamDesc* p = param_of(b);
    return p ? (std::max<uint64_t>(p->size, 16) + 15) / 16 * 16 : 0;
  }

  void check_resource(const ShaderResource& r) const {
    std::string which =
        (r.name.empty() ? "" : "'" + r.name + "' ") + "(%" + std::to_string(r.id) + ")";
    if (!r.has_set || !r.has_binding)
      fail("the shader's resource variable " + which +
           " lacks a DescriptorSet or Binding decoration");
    std::string where = "set " + std::to_string(r.set) + ", binding " + std::to_string(r.binding);
    auto found = bindings_.find(r.binding);
    const SpirvBinding* bound = found == bindings_.end() ? nullptr : found->second;
    if (r.set != 0 || !bound) {
      std::string have;
      for (const SpirvBinding& b : code_.bindings)
        have += (have.empty() ? "" : ", ") + std::to_string(b.binding);
      fail("the shader binds " + which + " at " + where +
           ", which is not in the kernel's layout (set 0, bindings " +
           (have.empty() ? "none" : have) + ")");
    }
    DescriptorShape want = shape_of(bound->kind);
    std::string there = "; the kernel's layout has " + std::string(descriptor_shape_text(want)) +
                        " there (" + bound_text(*bound) + ")";
    if (r.shape != want)
      fail("the shader declares " + where + " " + which + " as " +
           (r.shape == DescriptorShape::Other ? r.other : descriptor_shape_text(r.shape)) + there);
    if (want == DescriptorShape::StorageImage || want == DescriptorShape::SampledImage) {
      const ResourceDesc* texture = resource_of(*bound);
      if (!texture) fail("binding " + std::to_string(bound->binding) + " names no texture");
      const ResourceDesc& t = *texture;
      uint32_t dim = t.ndim == 3 ? spv::Dim3D : spv::Dim2D;
      if (r.image_dim != dim)
        fail("the shader declares " + where + " " + which + " as a " + dim_text(r.image_dim) +
             " image; the kernel binds a " + dim_text(dim) + " view there (" + bound_text(*bound) +
             ")");
      if (want == DescriptorShape::StorageImage && r.image_format != image_format(t.format))
        fail("the shader declares " + where + " " + which + " with image format " +
             std::to_string(r.image_format) + "; the kernel binds " + bound_text(*bound) +
             " there, of format " + texture_format_name(t.format) + " (SPIR-V image format " +
             std::to_string(image_format(t.format)) + ")");
    }
    if (want == DescriptorShape::UniformBuffer && r.block_bytes > uniform_bytes(*bound))
      fail("the shader reads a uniform block of " + std::to_string(r.block_bytes) + " bytes at " +
           where + " " + which + "; the kernel binds " + std::to_string(uniform_bytes(*bound)) +
           " bytes there (" + bound_text(*bound) + ")");
  }

  void check_push_constants() const {
    if (shader_.push_constant_blocks.empty()) return;
    if (shader_.push_constant_blocks.size() > 1)
      fail("the shader has " + std::to_string(shader_.push_constant_blocks.size()) +
           " push-constant blocks; a task has at most one");
    if (!code_.args_in_push_constants)
      fail(
          "the shader has a push-constant block; the kernel passes its arguments in a uniform "
          "buffer, and its pipeline has no push constants");
    uint64_t bytes = shader_.push_constant_blocks[0];
    if (bytes > args_bytes_)
      fail("the shader's push-constant block is " + std::to_string(bytes) +
           " bytes; the kernel's pipeline pushes " + std::to_string(args_bytes_));
  }

  const KernelABI& abi_;
  const SpirvKernel& code_;
  size_t task_;
  const DeviceCaps& caps_;
  uint32_t args_bytes_;  // the args block: push constants, or the Args uniform buffer
  std::unordered_map<uint32_t, const SpirvBinding*> bindings_;  // by binding number
  ShaderInterface shader_;
};

}  // namespace

void check_task_shader(const KernelABI& abi, const SpirvKernel& code, size_t task,
                       const DeviceCaps& caps) {
  TaskShaderCheck(abi, code, task, caps).run();
}

}  // namespace loom::vk
