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

// One function per offloaded task; `tasks` receives their descriptions in order. A task with
// private copies brings three more around it (compiler/codegen_llvm/README.md), so `ir_tasks`
// (optional) receives, for each of `tasks`, the index of the offloaded task it belongs to.
std::unique_ptr<llvm::Module> emit_kernel_module(const ir::Kernel& kernel,
                                                 llvm::LLVMContext& context,
                                                 const EmitOptions& options,
                                                 std::vector<TaskDesc>* tasks,
                                                 std::vector<size_t>* ir_tasks = nullptr);

}  // namespace loom::codegen
