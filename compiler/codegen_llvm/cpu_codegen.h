// Offloaded, lowered kernel IR -> optimised host object code (ELF relocatable) that the
// CPU runtime loads without the compiler. One function per task:
//   void <symbol>(LaunchContext*, int64_t begin, int64_t end)
// plus, for range and struct tasks, int64_t <symbol>_extent(LaunchContext*).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/common/kernel_abi.h"

namespace loom::ir {
class Kernel;
}

namespace loom::codegen {

struct CpuCodegenOptions {
  bool fast_math = true;  // combined with Kernel::fast_math
  int opt_level = 3;      // 0..3
  // Target CPU of the object; empty: the host CPU and all its features. Objects for other
  // machines (AOT modules) name a baseline such as "x86-64-v3". A name LLVM does not know
  // for the host's target is an error.
  std::string cpu;
  std::string features;  // with `cpu`: "+avx2,-avx512f" style additions; empty: its defaults
  // Vectorised sin/cos/exp/log/pow from glibc's libmvec (x86-64 with AVX2). The loader finds
  // libmvec.so.1 in the process; turn off for objects meant for systems without it.
  bool vector_math = true;
  // The editor's cancellation points: at the top of every `while` iteration and at the
  // back-edge of every nested (serial) `for` loop whose body holds a loop, a volatile read of
  // the launch's error code (LaunchContext::error); a non-zero code ends the task. The runtime
  // sets it from another thread to stop a launch that never ends (cpu::CpuDevice::cancel).
  // Off for `loom run` and AOT modules: innermost for loops stay free of it, so they vectorise.
  bool cancel_checks = false;
  // LLVM's time on one function grows faster than the function for several of its passes
  // (SSA construction, SLP vectorisation and instruction scheduling of a block holding many
  // live values, loop dependence analysis: bench/README.md, "Compile time of hostile
  // documents"). A function of more LLVM instructions than this (a task of tens of thousands
  // of statements) is compiled without LLVM's optimisations: `optnone`, as Loom's passes left
  // it, with fast instruction selection and register allocation. 0: no limit.
  size_t max_optimized_instructions = 20000;
  // A loop with more loads and stores than this is not given to LLVM's loop vectoriser and
  // loop load elimination, whose dependence analysis compares every pair of its accesses.
  // 0: no limit.
  size_t max_loop_accesses = 512;
};

struct CodegenTimings {
  double emit_ms = 0;      // kernel IR -> LLVM IR
  double optimize_ms = 0;  // new pass manager pipeline
  double object_ms = 0;    // machine code emission
};

struct CompiledCpuKernel {
  KernelABI abi;                // the kernel's ABI with `tasks` filled
  std::vector<uint8_t> object;  // ELF relocatable object for the host
  // What the size limits above changed, one line per task: "task 0 (node 3): 60041 LLVM
  // instructions, more than 20000: not optimised by LLVM ...".
  std::vector<std::string> notes;
};

// The CPU an object for `options` targets and which of `candidates` (LLVM feature names:
// "avx2", "fma") its code may use: what an AOT module records as its CPU requirements.
struct CpuTarget {
  std::string cpu;
  std::vector<std::string> features;
};
CpuTarget describe_cpu_target(const CpuCodegenOptions& options,
                              const std::vector<std::string>& candidates);

// The CPU an AOT module targets when none is named: the portable baseline "x86-64-v2" on
// x86-64 hosts (every x86-64 CPU since 2009: SSE4.2, POPCNT, CX16); on other architectures
// "" (the host CPU), since Loom names no baseline for them.
std::string default_module_cpu();

// `kernel` must pass ir::verify(kernel, {.offloaded = true, .lowered = true}).
// Throws loom::Error on IR the backend cannot compile.
CompiledCpuKernel compile_kernel_to_object(const ir::Kernel& kernel,
                                           const CpuCodegenOptions& options = {},
                                           CodegenTimings* timings = nullptr);

// The LLVM IR text of the kernel's module, after optimisation when `optimized`.
std::string dump_llvm_ir(const ir::Kernel& kernel, const CpuCodegenOptions& options = {},
                         bool optimized = true);

}  // namespace loom::codegen
