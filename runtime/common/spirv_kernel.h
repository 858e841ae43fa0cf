// A kernel compiled for Vulkan: one SPIR-V compute shader per offloaded task, the binding
// table they share, where launch values live, how the host sizes each dispatch, and what the
// device must support. compiler/codegen_spirv produces it; KernelRecord::code holds it
// serialized; the Vulkan runtime loads it with no compiler present.
//
// Conventions every task follows (the runtime relies on them):
// - descriptor set 0 holds `bindings`; every task of a kernel uses the same set layout;
// - the args block (see ArgsLayout) is a push-constant block, or a uniform buffer at the
//   binding of kind Args when it does not fit in push constants;
// - returns: 8 bytes per scalar component, component c at byte 8*c (narrower values in the
//   low bytes); temps: the IR's byte offsets (8 bytes per temporary); the error record is a
//   LaunchError (kernel_abi.h), its code claimed by an atomic compare-exchange.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/common/kernel_abi.h"

namespace loom {

enum class BindingKind : uint8_t {
  Args,          // uniform buffer: the args block
  Temps,         // storage buffer: values handed from one task to a later one
  Returns,       // storage buffer: return values
  Error,         // storage buffer: the LaunchError record (debug kernels)
  Argpack,       // uniform buffer: argpack parameter `index` (its std140 bytes)
  Buffer,        // storage buffer: resource slot `index` (a field or ndarray), array of its dtype
  StorageImage,  // storage image: texture slot `index` (tex_load, tex_store)
  SampledImage,  // sampled image: texture slot `index` (tex_sample)
  Sampler,       // sampler: `index` holds ir::SamplerBits (linear, repeat)
};
const char* binding_kind_name(BindingKind k);

struct SpirvBinding {
  uint32_t binding = 0;
  BindingKind kind = BindingKind::Buffer;
  int32_t index = -1;
  bool sampled_linearly = false;  // SampledImage: some sample filters linearly (format support)
};

// How a task uses one binding; the runtime places barriers from these.
enum BindingAccess : uint8_t { kAccessRead = 1, kAccessWrite = 2 };

// RangeBound (one bound of an iteration range as the host evaluates it at launch) is in
// kernel_abi.h: a kernel's extent assumptions use it too.

// The most grid-stride iterations the runtime lets one invocation of a reduction task make
// (it dispatches more workgroups otherwise), well under llvmpipe's 65535-iteration cut, so
// such tasks need no loop guard (compiler/codegen_spirv/spirv_loops.h).
constexpr int64_t kMaxGridStrideTrips = 16384;

// Specialization constant ids of task shaders.
constexpr uint32_t kSpecRowsEndToEnd = 0;  // bool: a direct n-d task's rows laid end to end

struct SpirvTask {
  uint8_t kind = 0;             // ir::TaskKind: 0 serial, 1 range_for, 2 struct_for
  std::vector<uint32_t> spirv;  // a whole module; entry point "main"
  uint32_t workgroup_size = 1;  // local_size_x; 1 for serial tasks
  // 1: groups along x cover the whole space. 2 (tasks of 2 dimensions or more): x covers the
  // innermost dimension, y the others flattened.
  uint8_t grid_dims = 1;
  // Iteration space [begin_d, end_d) per dimension. With host_extent the host computes the
  // extents and dispatches groups to cover them (capped: the shader strides over the rest);
  // otherwise the bounds depend on values only the shader computes, and the host dispatches
  // an advisory number of groups the same grid-stride loops cover.
  bool host_extent = false;
  std::vector<RangeBound> begin, end;
  // The direct form (host_extent tasks that combine no partials): no loop, one invocation per
  // element; the host must cover the range exactly. 1-d: the element is the invocation's place
  // in the whole grid (x, then y, then z). grid_dims 2: x covers the innermost dimension and
  // each row of workgroups (y + z * groups.y) one index of the others flattened; a row needing
  // more workgroups than x allows is laid end to end along x instead: the pipeline made with
  // specialization constant kSpecRowsEndToEnd true (the shader divides; rare, so made only
  // when a launch needs it).
  bool direct = false;
  // Direct 2-d tasks staging resources in workgroup memory (block-local storage): each
  // workgroup covers a tile of tile_cols columns by workgroup_size / tile_cols rows, the
  // tiles numbered by the workgroup's place in the grid (x, then y, then z), row by row of
  // ceil(columns / tile_cols) tiles. 0: untiled.
  uint32_t tile_cols = 0;
  std::vector<uint8_t> access;  // per kernel binding: BindingAccess bits of this task
};

// Device features a kernel needs ("the device has at least").
enum SpirvRequirement : uint32_t {
  kNeedInt64 = 1u << 0,
  kNeedFloat64 = 1u << 1,
  kNeedInt16 = 1u << 2,
  kNeedInt8 = 1u << 3,
  kNeedStorage8 = 1u << 4,
  kNeedStorage16 = 1u << 5,
  kNeedInt64Atomics = 1u << 6,
  kNeedFloat32AtomicAdd = 1u << 7,
  kNeedFloat32AtomicMinMax = 1u << 8,
  kNeedFloat64AtomicAdd = 1u << 9,
  kNeedFloat64AtomicMinMax = 1u << 10,
  kNeedStorageImageExtendedFormats = 1u << 11,
  // Subgroup arithmetic in compute shaders (VkPhysicalDeviceSubgroupProperties: COMPUTE in
  // supportedStages, BASIC and ARITHMETIC in supportedOperations; a Vulkan 1.1 property, no
  // feature to enable): parallel reductions combine partials with OpGroupNonUniform* ops.
  kNeedSubgroupArithmetic = 1u << 12,
};
constexpr uint32_t kAllSpirvRequirements = (1u << 13) - 1;

// SPIR-V versions as a module's header word 1 holds them.
constexpr uint32_t kSpirv1_0 = 0x00010000;
constexpr uint32_t kSpirv1_3 = 0x00010300;
constexpr uint32_t kSpirv1_5 = 0x00010500;
// The newest SPIR-V a device of `vulkan_api_version` (VK_MAKE_API_VERSION form, as
// VkPhysicalDeviceProperties::apiVersion) accepts: 1.0 for Vulkan 1.0, 1.3 for 1.1, 1.5 for
// 1.2, 1.6 for 1.3 and later; 0 for a value that is no Vulkan version (0.x).
uint32_t max_spirv_version(uint32_t vulkan_api_version);
// The SpirvRequirement bits SPIR-V 1.0 code may use: the Vulkan 1.0 core features. The others
// need extensions a Vulkan 1.0 device rarely has (8/16-bit storage, 64-bit and float atomics,
// shaderInt8), so kernels needing them are refused for SPIR-V 1.0 targets by name.
constexpr uint32_t kSpirv1_0Requirements =
    kNeedInt64 | kNeedFloat64 | kNeedInt16 | kNeedStorageImageExtendedFormats;
// "1.5"; "?" for a word that is no SPIR-V version.
std::string spirv_version_text(uint32_t version);
// "1.2" for a VK_MAKE_API_VERSION value.
std::string vulkan_version_text(uint32_t vulkan_api_version);
// Vulkan feature names of the bits set in `bits`, comma-separated ("shaderInt64, shaderFloat64").
std::string describe_requirements(uint32_t bits);

// Where the values of one launch live in the args block: the random seed, value parameters
// (their bytes as on the CPU: component c at c * sizeof(scalar)), and the i32 extents of
// every ndarray and texture slot (fields have constant shapes). A multiple of 16 bytes.
struct ArgsLayout {
  uint32_t seed = 0;            // u64
  std::vector<int32_t> params;  // per parameter: byte offset of a value parameter, else -1
  std::vector<int32_t> shapes;  // per resource slot: byte offset of ndim i32 extents, else -1
  uint32_t size = 0;
};
ArgsLayout args_layout(const KernelABI& abi);

constexpr uint32_t kReturnSlotBytes = 8;

struct SpirvKernel {
  std::vector<SpirvBinding> bindings;
  bool args_in_push_constants = true;
  std::vector<SpirvTask> tasks;
  std::vector<std::string> assert_messages;  // by LaunchError::index of an assertion failure
  uint32_t requirements = 0;                 // SpirvRequirement bits
};

std::vector<uint8_t> serialize_spirv_kernel(const SpirvKernel& kernel);
// `what` names the source in error messages; corrupt input is a loom::Error, never a crash.
SpirvKernel deserialize_spirv_kernel(const std::vector<uint8_t>& bytes, const std::string& what);

}  // namespace loom
