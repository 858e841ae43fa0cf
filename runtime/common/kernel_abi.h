// The contract between compiled kernel code and the runtime that launches it.
// Both the compiler (which produces it) and the runtime (which may load it from an AOT
// module with no compiler present) include this; it holds no compiler types.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/common/scalar.h"

namespace loom {

enum class ParamKind : uint8_t { Value, Ndarray, Texture, Argpack };
enum class ResourceKind : uint8_t { Field, Ndarray, Texture };
enum class TextureFormat : uint8_t { R32F, RG32F, RGBA32F, RGBA8 };
enum class Layout : uint8_t { AoS, SoA };

const char* param_kind_name(ParamKind k);        // "value", "ndarray", "texture", "argpack"
const char* resource_kind_name(ResourceKind k);  // "field", "ndarray", "texture"
const char* layout_name(Layout l);               // "aos", "soa"
int texture_channels(TextureFormat f);
const char* texture_format_name(TextureFormat f);
// "r32f", "rg32f", "rgba32f", "rgba8"; false for anything else.
bool parse_texture_format(const std::string& name, TextureFormat* out);

constexpr int kMaxDims = 4;

// One kernel parameter as the launcher sees it.
struct ParamDesc {
  std::string name;
  ParamKind kind = ParamKind::Value;
  ValueType type;         // Value: the value; Ndarray: element type
  int ndim = 0;           // Ndarray: dimensions; Texture: 2 or 3
  int argpack_type = -1;  // Argpack: index into the program's argpack types
  uint32_t size = 0;      // bytes the launcher provides for this parameter
};

// One piece of memory a kernel touches, numbered by slot. Fields are bound at compile time
// (their shape is constant in the code); ndarrays and textures come from parameters,
// directly or from inside an argpack parameter.
struct ResourceDesc {
  ResourceKind kind = ResourceKind::Field;
  Scalar dtype = Scalar::F32;  // element scalar type (textures: channel storage)
  int components = 1;          // scalar components per element (vec3 -> 3)
  int ndim = 1;
  std::array<int64_t, kMaxDims> shape{};  // fields: fixed; others: filled at launch
  Layout layout = Layout::AoS;
  TextureFormat format = TextureFormat::RGBA32F;
  std::string field;          // Field: the program field bound to this slot
  int param = -1;             // Ndarray/Texture: the parameter it comes from
  int32_t param_offset = -1;  // >= 0: found inside argpack `param` at this byte offset
};

// What the runtime passes to every compiled task. Plain C layout, read by generated code.
struct ResourceView {
  uint8_t* data;
  int64_t shape[kMaxDims];
};

struct LaunchError {
  int32_t code;  // 0: none; 1: out of bounds; 2: assertion
  int32_t node;  // graph node id
  int32_t slot;  // resource slot
  int32_t dim;
  int64_t index;
  int64_t extent;
};

struct LaunchContext {
  uint8_t* const* params;   // per parameter: pointer to its bytes (argpacks: the pack's data)
  ResourceView* resources;  // per resource slot
  uint8_t* returns;         // return values, see return_offsets()
  uint8_t* temps;           // KernelABI::temps_size bytes handed between tasks
  LaunchError* error;       // debug builds of kernels report here instead of faulting
  uint64_t seed;            // random number seed of this launch
};

// One offloaded task of a compiled kernel.
// Serial tasks run entry(ctx, 0, 1) once. Range and struct tasks run entry(ctx, b, e) over
// chunks [b, e) of [0, extent(ctx, &row_work)), the outermost dimension of their iteration
// space; the extent function also stores the iterations per outer row (the product of the
// inner extents, 1 for 1-d tasks, capped at kTaskRowWorkCap), which sizes the chunks.
constexpr int64_t kTaskRowWorkCap = int64_t{1} << 31;
struct TaskDesc {
  uint8_t kind = 0;           // ir::TaskKind: 0 serial, 1 range_for, 2 struct_for
  std::string symbol;         // void(LaunchContext*, int64_t begin, int64_t end)
  std::string extent_symbol;  // int64_t(LaunchContext*, int64_t* row_work), empty for serial tasks
  uint8_t dims = 1;           // dimensions of the iteration space
};

// What a kernel's code does to a resource, as bits: engines with render graphs declare reads
// and writes before they record a pass. An atomic is a read-modify-write of its own (a
// render graph treats it as read-write), so it is not also counted as a read and a write.
enum ResourceAccessBits : uint8_t { kResourceRead = 1, kResourceWrite = 2, kResourceAtomic = 4 };
constexpr uint8_t kAllResourceAccess = kResourceRead | kResourceWrite | kResourceAtomic;
// "r", "w", "rw", "a", "ra", "wa", "rwa" ("" for 0): the JSON spelling and what tools print.
const char* resource_access_name(uint8_t access);

// One resource slot the kernel's code touches and how.
struct ResourceAccess {
  int32_t slot = 0;  // into KernelABI::resources
  // The field, the ndarray or texture parameter, or for an argpack member the parameter and
  // the member's path ("job.out", "job.inner.grid").
  std::string name;
  uint8_t access = 0;  // ResourceAccessBits
};

// One bound of an iteration range as the host evaluates it at launch: a constant, a value
// parameter's i32 or a resource's extent, plus a constant (`n - 1`, `shape + 2`: the bounds of
// stencils and halos).
struct RangeBound {
  enum class Kind : uint8_t { Const, Arg, Shape };
  Kind kind = Kind::Const;
  int64_t value = 0;    // Const: the value; Arg: parameter index; Shape: resource slot
  uint32_t offset = 0;  // Arg: byte offset of an i32 inside the parameter; Shape: dimension
  int32_t plus = 0;     // Arg, Shape: added to what they read (Const holds it in `value`)
};
const char* range_bound_kind_name(RangeBound::Kind k);  // "const", "arg", "shape"

// What a kernel's code assumes about one dimension of a resource it indexes, found by the
// compiler in the final IR (compiler/passes/extent_assumptions.h) and checked at every
// launch before anything runs (runtime/host/extent_check.h). A checked entry: an access that
// runs in every iteration of the loops around it (`begin`/`end`, outermost first) indexes
// dimension `dim` with the variable of loop `loop` plus a constant in [low, high] (or, with
// `loop` -1, with a constant in [low, high]); so whenever every one of those ranges is
// non-empty, the index runs over [begin[loop] + low, end[loop] - 1 + high], which must lie in
// [0, extent). An unchecked entry (no loops): some access indexes `dim` with a value the
// compiler cannot bound (computed, gathered, or under a condition); only --debug kernels check
// it, in the code.
struct ExtentAssumption {
  int32_t slot = 0;  // into KernelABI::resources
  int32_t dim = 0;
  std::string name;     // the resource, as ResourceAccess::name spells it
  bool checked = true;  // false: an unchecked entry (the fields below are empty)
  std::vector<RangeBound> begin, end;
  int32_t loop = -1;  // into begin/end; -1: the index is a constant
  int64_t low = 0, high = 0;
  std::string bound_name;  // what end[loop] reads: a resource or a value parameter ("" else)
};

struct KernelABI {
  std::string name;
  std::vector<ParamDesc> params;
  std::vector<ResourceDesc> resources;
  std::vector<ValueType> returns;
  std::vector<TaskDesc> tasks;
  uint32_t temps_size = 0;
  // Every slot the code reads, writes or updates atomically, in slot order; found by the
  // compiler in the IR after every pass (compiler/passes/resource_access.h), so accesses the
  // passes removed do not count, and a slot the code never touches is not listed. Lowering
  // names argpack members here first (access 0: their path is known only there).
  // `resource_access_known` false: not recorded (modules written before Loom recorded it),
  // which says nothing about what the code touches.
  bool resource_access_known = false;
  std::vector<ResourceAccess> resource_access;
  // The extents the code assumes, checked at launch (ExtentAssumption), in slot order.
  // `extent_assumptions_known` false: not recorded (debug kernels, which check every access
  // in the code, and modules written before Loom recorded them): nothing is checked at launch.
  bool extent_assumptions_known = false;
  std::vector<ExtentAssumption> extent_assumptions;
};

// Byte offset of every scalar component of every return value, in order, each at its
// natural alignment (a vec3<f32> return takes three consecutive f32 slots).
std::vector<uint32_t> return_offsets(const KernelABI& abi, uint32_t* total_size = nullptr);

// A field of the program: dense N-d storage of scalar, vector or matrix elements.
struct FieldDesc {
  std::string name;
  ValueType elem;
  std::vector<int64_t> shape;
  Layout layout = Layout::AoS;
  // The program also holds its adjoint, the field NAME.grad of the same type and shape, which
  // adjoint kernels (NAME.grad kernels, passes/autodiff.h) read and accumulate into.
  bool needs_grad = false;
  // Likewise its tangent NAME.dual, which tangent kernels (forward mode, NAME.dual kernels,
  // passes/forward_mode.h) read and write.
  bool needs_dual = false;
};

}  // namespace loom
