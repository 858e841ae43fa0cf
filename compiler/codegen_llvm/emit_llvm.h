// Kernel IR -> LLVM IR module (internal to the CPU backend).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "runtime/common/kernel_abi.h"

namespace llvm {
class LLVMContext;
class Module;
}  // namespace llvm

namespace loom::ir {
class Kernel;
}

namespace loom::codegen {

struct EmitOptions {
  bool fast_math = true;
  std::string cpu;       // "target-cpu" function attribute
  std::string features;  // "target-features" function attribute
  std::string triple;
  std::string data_layout;
  // Cancellation points for the editor: see CpuCodegenOptions::cancel_checks.
  bool cancel_checks = false;
};

// One function per offloaded task; `tasks` receives their descriptions in order.
std::unique_ptr<llvm::Module> emit_kernel_module(const ir::Kernel& kernel,
                                                 llvm::LLVMContext& context,
                                                 const EmitOptions& options,
                                                 std::vector<TaskDesc>* tasks);

}  // namespace loom::codegen
