// The C++ API: load a graph document (or build one in code), bind resources and argpacks,
// launch kernels and pipelines, read results. Follows Taichi's kernel life cycle: kernels are
// registered when the document is loaded, compiled on first launch per template signature,
// and found again in the in-memory and offline caches.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

// Only <loom/...> headers, by the names they are installed under (docs/installing.md):
// error.h for loom::Error (what every call here throws), scalar.h for Scalar and ValueType,
// kernel_abi.h for Layout and TextureFormat. In this tree those names are links to the
// runtime's own headers (engine_plugin/api/CMakeLists.txt), so there is one declaration.
#include <loom/error.h>
#include <loom/kernel_abi.h>
#include <loom/scalar.h>

namespace loom {

namespace graph {
struct Document;
}
namespace vk {
class VulkanDevice;
}
struct AotInstance;

// Auto: Vulkan when a usable device exists, else the CPU (with a notice).
enum class Backend : uint8_t { Cpu, Vulkan, Auto };
const char* backend_name(Backend b);  // "cpu", "vulkan", "auto"
// The Vulkan devices of this machine, "index: name (type, Vulkan x.y.z)"; empty when none.
std::vector<std::string> enumerate_vulkan_devices();

// $LOOM_BACKEND ("cpu", "vulkan" or "auto") when set, else Cpu: the default of
// ProgramOptions::backend, so a whole program or test suite can move to another device.
Backend default_backend();

struct ProgramOptions {
  Backend backend = default_backend();
  std::string device;       // Vulkan: "" the best device, an index, or part of its name
  bool validation = false;  // Vulkan validation layer; every message becomes an error
                            // (on by default when $LOOM_VULKAN_VALIDATION is 1)
  // Vulkan: invocations per workgroup of parallel tasks that set none; 0: the device's own
  // (a multiple of its subgroup size: 128 on NVIDIA, 256 on AMD; vk::preferred_workgroup_size)
  int workgroup_size = 0;
  bool spirv_opt = false;  // Vulkan: run SPIRV-Tools' optimizer on every shader
  // With spirv_opt: only these spirv-opt passes, by flag ("--ccp"), in order (measuring them
  // one by one: loom_vulkan_bench --spirv-passes); empty: the whole performance set (-O).
  std::vector<std::string> spirv_opt_passes;
  // Vulkan: run on this device (shared with a renderer or a host engine, same thread)
  // instead of making one; `device` and `validation` are then the device's business.
  std::shared_ptr<vk::VulkanDevice> vulkan_device;
  bool debug = false;  // bounds checks and assertions compiled into kernels
  bool fast_math = true;
  // CPU: a parallel loop's atomic adds into a field may go through per-thread copies of the
  // field (one per thread, within a memory cap), added into it when the loop ends
  // (compiler/passes/privatize_scatter.h); false: the atomics as written (`loom run|bench|ir
  // --no-privatize`), for comparisons.
  bool privatize_scatter = true;
  // Reverse mode (`K.grad`): entries of each per-thread autodiff stack, the iterations a
  // serial loop may run before the launch fails naming it (docs/autodiff.md). Each variable
  // a loop overwrites takes this many values of local memory per thread.
  int ad_stack_size = 256;
  bool offline_cache = true;
  std::string cache_dir;  // empty: $LOOM_CACHE_DIR, $XDG_CACHE_HOME/loom, ~/.cache/loom
  int threads = 0;        // 0: one per hardware thread
  std::function<void(const std::string&)> warn;  // default: print to stderr
  // CPU: kernels poll for Program::cancel() at loop back-edges (`while`, and serial `for`
  // loops holding a loop), so a launch that never ends can be stopped (the editor). Off by
  // default: `loom run` and AOT modules compile without the polls.
  bool cancellable = false;
  // false: fields, ndarrays and textures are declared and checked (names, extents, byte
  // counts) but get no memory and no device copy, so a document of huge resources can be
  // checked (`loom check`). Launching, reading or writing them is then an error.
  bool allocate = true;
};

// A kernel argument or argpack value: a number of any C++ arithmetic type, a bool, a vector
// or matrix as a flat column-major list or as a list of columns, or the name of a program
// resource (field, ndarray, texture, argpack). Binding checks the value against the
// parameter's type: out of range, fractional for an integer, or the wrong count is an error.
// List components are doubles: exact for integers up to 2^53.
class Arg {
 public:
  template <typename T>
  requires std::is_integral_v<T> &&(!std::is_same_v<T, bool>)Arg(T v)
      : kind_(Kind::Int),
        i_(static_cast<int64_t>(v)),
        uint64_(std::is_unsigned_v<T> &&
                static_cast<uint64_t>(v) > static_cast<uint64_t>(INT64_MAX)) {}
  Arg(double v) : kind_(Kind::Float), f_(v) {}
  Arg(float v) : kind_(Kind::Float), f_(v) {}
  Arg(bool v) : kind_(Kind::Bool), i_(v) {}
  Arg(std::vector<double> v) : kind_(Kind::List), list_(std::move(v)) {}
  // A matrix as its columns: {{m00, m10}, {m01, m11}} (each inner list one column).
  Arg(const std::vector<std::vector<double>>& columns);
  Arg(const char* resource) : kind_(Kind::Resource), name_(resource) {}
  Arg(std::string resource) : kind_(Kind::Resource), name_(std::move(resource)) {}

  enum class Kind : uint8_t { Int, Float, Bool, List, Resource };
  Kind kind() const { return kind_; }
  int64_t as_int() const { return kind_ == Kind::Float ? static_cast<int64_t>(f_) : i_; }
  double as_double() const;
  // An integer above INT64_MAX (from an unsigned type): as_uint() holds it.
  bool is_uint64() const { return uint64_; }
  uint64_t as_uint() const { return static_cast<uint64_t>(i_); }
  const std::vector<double>& list() const { return list_; }  // flat, column-major
  // A list given as columns: the size of each column (empty for a flat list).
  const std::vector<size_t>& column_sizes() const { return column_sizes_; }
  const std::string& resource() const { return name_; }

 private:
  Kind kind_;
  int64_t i_ = 0;
  bool uint64_ = false;
  double f_ = 0;
  std::vector<double> list_;
  std::vector<size_t> column_sizes_;
  std::string name_;
};

using Args = std::vector<std::pair<std::string, Arg>>;

// Return values of a launch, every component in order; zeros when the launch reached no
// `return`. A struct return is flattened into its value members: returns ["f32", "S"] with S {a:
// i32, b: f32x2} give names {"r0", "r1.a", "r1.b"}, types {f32, i32, f32x2} and four components.
struct KernelResult {
  std::vector<std::string> names;  // per return value: the return node's pin ("r0", "r1.a")
  std::vector<ValueType> types;    // per return value
  std::vector<double> values;      // every component, in order
  std::vector<int64_t> ints;       // the same; integer and bool components exactly
  double value(size_t i = 0) const { return values.at(i); }
  // Component `component` of the return value named `name`; throws loom::Error if absent.
  double value(const std::string& name, int component = 0) const;
};

// What one launch of a pipeline returned (Program::last_returns).
struct LaunchReturns {
  size_t launch = 0;  // the launch's position in the pipeline (0: its first launch)
  std::string kernel;
  KernelResult result;
};

// The program's resources one launch reads and writes (Program::launch_access): what an engine's
// render graph declares for it, and what a tape keeps copies of.
struct LaunchAccess {
  std::vector<std::string> reads;   // fields, ndarrays and textures it reads, sorted
  std::vector<std::string> writes;  // those it writes or updates atomically, sorted
  // false: some access is not listed (a resource reached through an argpack member, or a
  // module that did not record its accesses).
  bool complete = true;
};

// A view of a field's or ndarray's storage (C order; AoS elements unless layout is SoA;
// a matrix element's components column-major, as kernels store them).
struct ArrayView {
  Scalar dtype = Scalar::F32;
  int components = 1;
  std::vector<int64_t> shape;
  Layout layout = Layout::AoS;
  uint8_t* data = nullptr;
  size_t bytes = 0;

  size_t elements() const;  // the product of the extents
  // Scalar `i` of the storage (flat, in storage order) as a double: integers and bools exactly
  // up to 2^53. No bounds check (i < bytes / size_of(dtype)).
  double scalar(size_t i) const;
  // Component `c` of element `e` (C order), whatever the layout.
  double component(size_t e, int c) const {
    return scalar(layout == Layout::SoA
                      ? static_cast<size_t>(c) * elements() + e
                      : e * static_cast<size_t>(components) + static_cast<size_t>(c));
  }
};

struct TextureView {
  TextureFormat format = TextureFormat::RGBA32F;
  std::vector<int64_t> size;
  uint8_t* data = nullptr;
  size_t bytes = 0;
};

// What the device did (Vulkan; zeros on the CPU, which runs on host storage directly).
struct DeviceCounters {
  uint64_t last_launch_argpack_uploads = 0;  // packs uploaded before the last launch
  uint64_t last_launch_argpack_bytes = 0;
  uint64_t last_launch_argument_bytes = 0;  // its args block (push constants or a ring slot)
  uint64_t argpack_uploads = 0, argpack_bytes = 0, argument_bytes = 0;
  uint64_t resource_bytes_uploaded = 0, bytes_downloaded = 0;
  uint64_t dispatches = 0, submits = 0, waits = 0, barriers = 0, pipelines = 0;
  double pipeline_ms = 0;
};

// What a reload kept and what it had to start afresh.
struct ReloadReport {
  std::vector<std::string> kept;  // resources whose contents carried over
  std::vector<std::string>
      reinitialized;  // resources whose declaration changed: zeroed or from the document
  std::vector<std::string> dropped;  // resources the new document no longer has
  int kernels_compiled = 0;          // instantiations compiled (or read from the offline cache)
  int kernels_reused = 0;            // instantiations whose kernel did not change
  double ms = 0;                     // validation, compilation and the swap
  std::vector<std::string> notices;  // one line per re-initialised or dropped resource
};

struct PassTime {
  std::string pass;
  double ms = 0;
};

struct Stats {
  int kernels_registered = 0;
  int instantiations = 0;  // distinct (kernel, template signature) pairs compiled or loaded
  int memory_hits = 0;
  int disk_hits = 0;
  int misses = 0;  // full compiles
  int64_t launches = 0;
  double ms_lower = 0, ms_passes = 0, ms_codegen = 0, ms_optimize = 0, ms_emit = 0;
  double ms_cache_read = 0, ms_load = 0, ms_launch = 0;
  std::vector<PassTime> per_pass;  // summed over compiles, in pipeline order
  std::string to_string() const;
};

class Program {
 public:
  explicit Program(ProgramOptions options = {});
  ~Program();
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;

  // Registers the document's kernels and allocates its resources (fields and ndarrays
  // zeroed, argpacks at their declared values). Throws loom::Error naming the place.
  void load(graph::Document document);
  void load_file(const std::string& path);
  const graph::Document& document() const;

  // Hot reload: replaces the document while keeping state. Validates the new document and
  // compiles every instantiation its pipelines launch before anything changes, so a document
  // that does not compile throws (naming the place) and leaves this program running as it
  // was. On success, fields, ndarrays and textures whose declaration is unchanged keep their
  // contents (on the device too), argpack values set through set_argpack survive unless the
  // document changed that member's value, kernels whose content is unchanged are not
  // recompiled; the report names what had to be re-initialised.
  ReloadReport reload(graph::Document document);

  // Launches `kernel` with arguments by parameter name. Template parameters take a field
  // name or a constant; a new binding makes a new instantiation.
  KernelResult launch(const std::string& kernel, const Args& args = {});
  void run_pipeline(const std::string& name);
  // The same with `args` in place of the document's arguments of those names, for every
  // launch whose kernel has a parameter of that name (other launches keep theirs): a
  // program's ndarray, texture or argpack by name, or a value, as launch() takes them.
  // Template parameters take them too, so a launch may compile a new instantiation. Every
  // launch is checked (and compiled) before any runs; a name no launch takes is an error
  // listing those the pipeline takes.
  void run_pipeline(const std::string& name, const Args& args);
  bool has_pipeline(const std::string& name) const;
  // The launches a run of pipeline `name` with `args` makes, in order, each with its
  // arguments as run_pipeline(name, args) would bind them (the same errors for names no launch
  // takes). Nothing is compiled or run.
  std::vector<std::pair<std::string, Args>> pipeline_launches(const std::string& name,
                                                              const Args& args = {}) const;
  // What one launch of `kernel` with `args` would read and write, found by the compiler in its
  // code (compiles the instantiation if new; launches nothing). K.grad and K.dual too.
  LaunchAccess launch_access(const std::string& kernel, const Args& args = {});
  // What the launches of the last run of pipeline `name` returned, in launch order: one entry
  // per launch whose kernel returns values (a kernel that returns nothing has none), so a
  // game reads a pipeline's results after run_pipeline without launching kernels one by one.
  // Only returning kernels' values are kept, and those are read back anyway (on Vulkan such a
  // launch waits for its values). Each run replaces the record; a launch that fails leaves
  // those before it, arguments refused before anything runs leave the record as it was. Empty
  // before the first run and after load() or reload(); the reference stays valid until the
  // next run of that pipeline. Throws loom::Error if the document has no such pipeline.
  const std::vector<LaunchReturns>& last_returns(const std::string& name) const;

  // Resources of the program.
  ArrayView array(const std::string& name);  // field or ndarray
  TextureView texture(const std::string& name);
  // Replaces the whole storage of a field or ndarray with `bytes` bytes from `data` (exactly
  // its size, in its storage order): array() and a copy, without reading the old contents
  // back from the device first.
  void write_array(const std::string& name, const void* data, size_t bytes);
  void create_ndarray(const std::string& name, ValueType elem, std::vector<int64_t> shape);
  // Wraps caller memory (not copied, not freed); must outlive its use in launches.
  void wrap_ndarray(const std::string& name, ValueType elem, std::vector<int64_t> shape,
                    void* data);
  // Points a wrapped ndarray at other caller memory, same name and element type (a per-frame
  // engine buffer); the shape may change. Argpack members holding it follow. Errors: unknown
  // name, an ndarray that owns its memory (document or create_ndarray), a dimension count an
  // argpack member holding it does not take.
  void rebind_ndarray(const std::string& name, void* data, std::vector<int64_t> shape);
  // Forgets an ndarray created or wrapped from code; its name may be used again. Errors:
  // unknown name, a resource the document declares, an ndarray an argpack member still holds.
  void remove_ndarray(const std::string& name);
  void set_argpack(const std::string& pack, const std::string& member, const Arg& value);
  double get_argpack(const std::string& pack, const std::string& member, int component = 0) const;
  // .npy files in NumPy's C order: the resource's extents, then the element's ([n] for a
  // vector, [rows, cols] for a matrix, so m[..., r, c] is row r, column c; [channels] for a
  // texture). Load checks dtype and shape. Both field layouts read and write the same file.
  void load_npy(const std::string& resource, const std::string& path);
  void dump_npy(const std::string& resource, const std::string& path);
  std::vector<std::string> resource_names() const;

  // IR of one instantiation after a pass ("" = final), as `loom ir` prints it.
  std::string ir_text(const std::string& kernel, const std::string& after_pass = "",
                      const Args& template_args = {});

  // Instantiates every (kernel, template arguments) pair the pipelines launch: lowered and
  // optimised only (compile = false, as `loom check`), or compiled into the caches too.
  // Returns one line per instantiation; without compile, each followed by one indented line
  // per task saying how it runs ("range_for over 1 dim, parallel; reduction: ...", or
  // "serial: ..." and why: ir::Kernel::task_notes).
  std::vector<std::string> prepare_pipelines(bool compile);
  // How one task of a kernel the pipelines launch runs (what prepare_pipelines(false) prints):
  // `place` names the document, kernel and the node of the task's loop (or of its first
  // statement); `text` reads "range_for over 2 dims, parallel; reduction: the variable of node
  // 3 (+, f32)" or "serial: node 7 reads ...". For the editor's loop nodes.
  struct TaskNote {
    Place place;
    std::string instantiation;  // "kernel" or "kernel[template signature]"
    int task = 0;               // its position among the kernel's tasks
    bool parallel = false;      // a range_for or struct_for run by many threads
    std::string text;
  };
  // Lowers and optimises (does not compile) every instantiation the pipelines launch, once
  // each, in pipeline order. Throws loom::Error naming the place when one does not lower.
  std::vector<TaskNote> task_notes();
  // Likely mistakes of code ported from Taichi (an integer division converted to a float...;
  // docs/porting-from-taichi.md) in every kernel the pipelines launch, in pipeline order,
  // then in every other kernel that needs no template arguments; each names its kernel and
  // node. For every K.grad a pipeline launches, also where its gradients stop at an op
  // without a derivative, on K's nodes (docs/autodiff.md); a read after a write that K.grad
  // could not differentiate is thrown as the launch would. Lowers the kernels; compiles
  // nothing.
  struct Warning {
    Place place;
    std::string message;
    std::string to_string() const;  // "doc.loom.json: kernel 'k': node 7: message"
  };
  std::vector<Warning> warnings();
  // Names accepted by ir_text's `after_pass`, in pipeline order ("lower" first; a pass
  // that runs again is "full_simplify#2", "full_simplify#3").
  static std::vector<std::string> pass_names();

  // SPIR-V disassembly of every task of one instantiation, for the Vulkan device in use or,
  // on another backend, for a device with every feature.
  std::string spirv_text(const std::string& kernel, const Args& template_args = {});
  // The LLVM IR of one instantiation for the host CPU, after LLVM's optimisation when
  // `optimized` (what the CPU backend runs).
  std::string llvm_ir_text(const std::string& kernel, const Args& template_args = {},
                           bool optimized = true);

  // For AOT modules (aot_module.h): lowers and optimises one instantiation (template
  // arguments taken from `args` as a launch takes them) for a device whose element offsets
  // are `index_bits` wide, with this program's debug and fast-math options.
  void lower_for_module(const std::string& kernel, const Args& args, int index_bits,
                        AotInstance& out);

  // The device kernels run on: after Auto, the backend chosen.
  Backend backend() const;
  std::string device_name() const;
  DeviceCounters device_counters();
  // Waits until every launch so far has finished (Vulkan; the CPU is always finished).
  void synchronize();
  // The same, for at most `timeout_ms`: false when the device is still busy then (nothing
  // else changes; wait again later, or abandon the program).
  bool synchronize(double timeout_ms);

  // From any thread, while another runs a launch: stops it and refuses launches until
  // clear_cancel(); the stopped launch throws a loom::Error "cancelled" naming the kernel
  // and, where a loop saw the cancel, its node. CPU with `cancellable` kernels: stops at the
  // next loop back-edge (without it: at the next chunk). Vulkan cannot stop a dispatch: it
  // refuses later launches only.
  void cancel();
  void clear_cancel();
  // The kernel whose launch is under way, "" between launches; any thread may ask. (On
  // Vulkan a launch returns once recorded: the GPU may still run it.)
  std::string running_kernel() const;

  const Stats& stats() const;
  const ProgramOptions& options() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace loom
