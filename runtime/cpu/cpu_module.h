// Loads host object code (from the LLVM backend or an AOT module) into ORC, one JITDylib per
// kernel, and looks up every task symbol once. Loading runs no optimisation and needs no
// compiler: math functions (sinf, ...) resolve from the process.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "runtime/common/kernel_abi.h"

namespace loom::cpu {

using TaskEntry = void (*)(LaunchContext*, int64_t begin, int64_t end);
// Returns the outer rows and stores the iterations per row (see TaskDesc).
using TaskExtent = int64_t (*)(LaunchContext*, int64_t* row_work);

struct LoadedTask {
  uint8_t kind = 0;  // as TaskDesc::kind: 0 serial, 1 range_for, 2 struct_for
  TaskEntry entry = nullptr;
  TaskExtent extent = nullptr;  // null for serial tasks
  uint8_t dims = 1;             // as TaskDesc::dims
};

// A kernel ready to launch. Its code stays loaded while this object lives.
struct LoadedCpuKernel {
  KernelABI abi;
  std::vector<LoadedTask> tasks;
  // Assertion messages, indexed by LaunchError::index of an assertion failure.
  std::vector<std::string> assert_messages;
  std::shared_ptr<void> code;  // keeps the JITDylib (and the JIT) alive
};

class CpuModule {
 public:
  CpuModule();
  ~CpuModule();
  CpuModule(const CpuModule&) = delete;
  CpuModule& operator=(const CpuModule&) = delete;

  // Throws loom::Error naming the kernel when the object is malformed or a symbol is missing.
  std::shared_ptr<LoadedCpuKernel> load(const KernelABI& abi, const std::vector<uint8_t>& object);

 private:
  struct Jit;
  std::shared_ptr<Jit> jit_;
};

}  // namespace loom::cpu
