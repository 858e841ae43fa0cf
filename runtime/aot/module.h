// An AOT module: compiled kernels and the resources they run on, saved so that a runtime
// without the compiler (and without LLVM) can load and launch them.
//
// A module is a versioned metadata document (JSON: kernels with their parameters, resource
// slots and template arguments, argpack layouts, fields, ndarrays, textures, argpacks,
// pipelines, the device capabilities required, and every blob with its size and hash) plus
// blobs: per kernel its native object code (CPU) or one SPIR-V module per task (Vulkan).
// module_files.h writes it as one archive file or as an unpacked folder; the same module
// gives byte-identical bytes.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "runtime/common/argpack_layout.h"
#include "runtime/common/kernel_abi.h"
#include "runtime/common/spirv_kernel.h"

namespace loom::aot {

// The newest module format this runtime reads; it reads every version from 1 up to it.
// CPU levels did not change it: a module with several levels also holds the lowest one where
// version 1 keeps its CPU and objects, so a runtime that predates levels loads that level.
// Version 2: range bounds plus a constant (RangeBound::plus) and direct-form Vulkan tasks
// (SpirvTask::direct), which an older runtime would dispatch wrongly without a word. A module
// is written with the lowest version that holds what it uses (module_format_version), so one
// without them still loads in runtimes that read only version 1.
// Version 3: twins of the ndarrays argpacks hold (Derivation::Twin::member) and the shadows of
// debug adjoints (Derivation::shadows), which an older runtime would refuse with a message
// about the twin's place, or leave unbound.
constexpr int kModuleFormatVersion = 3;

enum class Arch : uint8_t { Cpu, Vulkan };
const char* arch_name(Arch a);  // "cpu", "vulkan"

// A constant a module records: a pipeline argument, an argpack member's declared value.
struct Value {
  enum class Kind : uint8_t { Int, Float, Bool, List, Resource };
  Kind kind = Kind::Int;
  int64_t i = 0;
  bool above_int64 = false;  // Int from 2^63 to 2^64-1: `i` holds its bits
  double f = 0;
  bool b = false;
  std::vector<double> list;  // flat, column-major
  std::string resource;      // the name of a module resource
};

// One template argument an instantiation was compiled with.
struct TemplateArgument {
  enum class Kind : uint8_t { Field, Int, Float, Bool, Ndarray };
  std::string param;
  Kind kind = Kind::Int;
  std::string field;  // Field: the field's name
  ValueType elem;     // Ndarray: element type
  int64_t i = 0;      // Int: the value; Ndarray: dimensions
  double f = 0;
  bool b = false;
};
const char* template_kind_name(
    TemplateArgument::Kind k);  // "field", "int", "float", "bool", "ndarray"

struct NdarrayInfo {
  std::string name;
  ValueType elem;
  std::vector<int64_t> shape;
};

struct TextureInfo {
  std::string name;
  TextureFormat format = TextureFormat::RGBA32F;
  std::vector<int64_t> size;  // width, height[, depth]
};

struct ArgpackInfo {
  std::string name;
  int type = -1;                                      // index into ModuleMetadata::argpack_types
  std::vector<std::pair<std::string, Value>> values;  // declared member values, dotted paths
};

// What an adjoint (K.grad) or tangent (K.dual) kernel derives from: its primal kernel K (which
// the module holds too) and, per twin parameter (PARAM.grad / PARAM.dual, appended after K's
// own parameters), the parameter it is the twin of. A launch that gives only K's arguments
// binds each ndarray twin to the companion NAME.grad / NAME.dual of the ndarray given for its
// parameter, and each value twin (a tangent's direction) to 0 (docs/autodiff.md).
struct Derivation {
  enum class Mode : uint8_t { None, Adjoint, Tangent };
  Mode mode = Mode::None;
  std::string of;  // the primal kernel's name
  struct Twin {
    int param = -1;  // the twin parameter's index in the kernel's ABI
    int of = -1;     // the primal parameter's index
    // A twin of the ndarray an argpack holds: its member path in argpack parameter `of`
    // ("inner.vel": the twin is named "p.inner.vel.grad"); empty for a parameter's twin.
    std::string member;
  };
  std::vector<Twin> twins;  // in parameter order
  // A debug adjoint's shadows for the global data access rule across loops
  // (compiler/passes/access_rule.h): its last parameters, after the twins, each the shadow
  // NAME.written of parameter `of` (or of the ndarray argpack `of` holds at `member`): i32
  // elements of that ndarray's shape and components, which the runtime makes and binds at each
  // launch (LoadedModule::launch); a launcher never gives them.
  std::vector<Twin> shadows;
};
// ".grad" for adjoints, ".dual" for tangents: the suffix of the kernel's and its twins' names.
const char* derivation_suffix(Derivation::Mode mode);

// One compiled instantiation of a kernel.
struct KernelInfo {
  std::string name;                             // the name it is found by
  std::vector<TemplateArgument> template_args;  // what it was instantiated with (sorted by param)
  KernelABI abi;
  std::vector<std::string> return_names;  // per return value ("r0", "r1.a")
  std::vector<std::string> objects;       // Cpu: per CPU level (needs.cpu_levels), its ELF blob
  SpirvKernel spirv;                      // Vulkan: everything but the task words...
  std::vector<std::string> spirv_blobs;   // ...which are in these blobs, one per task
  Derivation derived;                     // adjoint and tangent kernels: what they derive from
};
// The parameters a launcher gives kernel `k`: all but a debug adjoint's shadows.
size_t launch_param_count(const KernelInfo& k);

struct LaunchInfo {
  int kernel = -1;  // index into ModuleMetadata::kernels
  std::vector<std::pair<std::string, Value>> args;
};

struct PipelineInfo {
  std::string name;
  std::vector<LaunchInfo> launches;
};

// One CPU a CPU module's object code is compiled for. A module carries one or more levels
// (x86-64-v2 and x86-64-v3, say), each kernel compiled once per level; a loader runs the
// best level the CPU has (module_device.h).
struct CpuLevel {
  std::string cpu;                    // the LLVM CPU name ("x86-64-v2", "skylake")
  std::vector<std::string> features;  // LLVM feature names its code may use, sorted
};

// What a device must have ("at least"): checked at load.
struct Requirements {
  // Vulkan
  uint32_t vulkan_features = 0;      // SpirvRequirement bits
  uint32_t workgroup_size = 0;       // largest local_size_x of any task
  uint32_t push_constant_bytes = 0;  // largest args block kept in push constants
  // Cpu: its levels from fewest features to most (ties in the order they were asked for);
  // a loader needs the features of one of them. Modules written before levels carry one.
  std::vector<CpuLevel> cpu_levels;
  std::string target = "x86_64-linux";
};

struct BlobInfo {
  std::string name;
  uint64_t size = 0;
  std::string hash;  // hash128_hex of the bytes
};

struct ModuleMetadata {
  int format_version = kModuleFormatVersion;  // as read; metadata_to_json writes its own
  std::string name;
  Arch arch = Arch::Cpu;
  std::string producer;  // "loom 0.1.0"
  Requirements needs;
  std::vector<FieldDesc> fields;
  std::vector<NdarrayInfo> ndarrays;
  std::vector<TextureInfo> textures;
  std::vector<ArgpackType> argpack_types;
  std::vector<ArgpackInfo> argpacks;
  std::vector<KernelInfo> kernels;
  std::vector<PipelineInfo> pipelines;
  std::vector<BlobInfo> blobs;  // filled by finalize_module
};

struct Module {
  ModuleMetadata meta;
  std::map<std::string, std::vector<uint8_t>> blobs;
};

// Fills meta.blobs (names, sizes, hashes) from `blobs`, sorted by name.
void finalize_module(Module& module);

// The metadata as JSON text (deterministic: the same metadata gives the same bytes).
// The lowest format version that holds what `meta` uses (1 or kModuleFormatVersion).
int module_format_version(const ModuleMetadata& meta);
std::string metadata_to_json(const ModuleMetadata& meta);
// Throws loom::Error naming `what` and the key path ("kernels[2].abi.params[0].type") on
// anything malformed, and on a format version this runtime does not read.
ModuleMetadata metadata_from_json(const std::string& text, const std::string& what);

}  // namespace loom::aot
