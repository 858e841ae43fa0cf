// AOT modules from C++, after taichi.aot.Module: compile a program's kernels once for a
// target (the CPU or Vulkan), save them, and load them later without the compiler
// (runtime/aot/loaded_module.h, or the C ABI in loom.h).
//
//   loom::Program program;
//   program.load_file("cloth.loom.json");
//   loom::AotModule m(program, {.arch = loom::Backend::Vulkan});
//   m.add_field("x");
//   m.add_kernel("substep", {{"dt", 0.001}});   // example arguments fix ndarray dtype and ndim
//   auto t = m.add_kernel_template("fill");
//   t.instantiate({{"dst", "x"}, {"value", 1.0}});
//   m.save("build/modules", "cloth");          // build/modules/cloth.loommod
//
// Template instantiations are found at load time by their template arguments. The same
// program and calls give byte-identical files.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <loom/program.h>

namespace loom {

namespace aot {
struct Module;  // runtime/aot/module.h: what module() returns, for tests and tools in this tree
}

// Every optional Vulkan feature a kernel may use (the SpirvRequirement bits of
// runtime/common/spirv_kernel.h; aot_module.cpp checks they agree).
inline constexpr uint32_t kAllVulkanFeatures = (1u << 13) - 1;
// The bit of subgroup arithmetic (kNeedSubgroupArithmetic): a device property, not a feature,
// that AOT modules leave out by default so their reductions load on every device.
inline constexpr uint32_t kVulkanSubgroupArithmetic = 1u << 12;

struct AotOptions {
  Backend arch = Backend::Cpu;  // Cpu or Vulkan
  // Cpu: the CPU levels the object code is compiled for, each an LLVM CPU name ("x86-64-v2",
  // "x86-64-v3", "skylake") or "host" (this machine's CPU and all its features). Every kernel
  // is compiled once per level; a loader runs the level with the most features its CPU has.
  // Empty: the portable baseline x86-64-v2 on x86-64 (elsewhere: this machine's CPU).
  std::vector<std::string> cpu_levels;
  // Vulkan: the optional device features kernels may use (SpirvRequirement bits); a kernel
  // that needs one outside this set is an error. The module records what its kernels use.
  // Subgroup arithmetic is off unless asked for: reductions then use shared memory only.
  uint32_t vulkan_features = kAllVulkanFeatures & ~kVulkanSubgroupArithmetic;
  // Vulkan: the oldest Vulkan version the module must load on (VK_MAKE_API_VERSION form,
  // major.minor only): 1.1 (SPIR-V 1.3, the default: engines often create 1.1 devices) or
  // 1.2 (SPIR-V 1.5). A device older than this refuses the module's kernels by name.
  uint32_t vulkan_version = (1u << 22) | (1u << 12);
  int workgroup_size = 128;  // Vulkan: invocations per workgroup of parallel tasks
};

class AotModule {
 public:
  // Kernels come from `program`'s document, compiled with its debug and fast-math options;
  // its resources decide template arguments (a field name, an ndarray's dtype and ndim).
  AotModule(Program& program, AotOptions options = {});
  ~AotModule();
  AotModule(const AotModule&) = delete;
  AotModule& operator=(const AotModule&) = delete;

  // A field of the program, in the module even if no kernel uses it (fields kernels use are
  // added with them).
  void add_field(const std::string& name);
  // Compiles `kernel` for the arguments (values may be anything of the right type; template
  // parameters and open ndarray parameters take what fixes the instantiation). `name` is
  // what the kernel is found by ("" the kernel's own name). "K.grad" / "K.dual" adds K's
  // adjoint or tangent kernel (and K), its twins chosen as Program::launch chooses them: an
  // ndarray parameter bound to an ndarray with a NAME.grad companion, or given PARAM.grad,
  // has one, and so has a float ndarray parameter given no example argument.
  void add_kernel(const std::string& kernel, const Args& example_args = {},
                  const std::string& name = "");

  class KernelTemplate {
   public:
    // One instantiation per call: template arguments by parameter name.
    KernelTemplate& instantiate(const Args& template_args);

   private:
    friend class AotModule;
    KernelTemplate(AotModule& module, std::string kernel)
        : module_(module), kernel_(std::move(kernel)) {}
    AotModule& module_;
    std::string kernel_;
  };
  KernelTemplate add_kernel_template(const std::string& kernel);

  // A pipeline of the document: the instantiations it launches, the resources it names.
  void add_pipeline(const std::string& name);
  // Everything: every field, ndarray, texture, argpack and pipeline of the document.
  void add_document();

  // The module as it stands (finalized: blob list with hashes). Its type is the runtime's
  // (runtime/aot/module.h), not installed: outside this tree, use save().
  aot::Module module() const;
  // folder/name.loommod; creates `folder`. Returns the path written.
  std::string save(const std::string& folder, const std::string& name) const;
  void save_archive(const std::string& path) const;
  void save_folder(const std::string& dir) const;

 private:
  // `bound` (when given): the arguments a launch of it binds (K.grad's with its twins).
  int add_instance(const std::string& kernel, const Args& args, const std::string& name,
                   Args* bound = nullptr);
  void add_resource(const std::string& name);

  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace loom
