// Loads host object code (from the LLVM backend or an AOT module) with our own ELF loader
// (elf_loader.h), one mapping per kernel, and looks up every task symbol once. Loading needs
// no compiler and no LLVM: math functions (sinf, ...) resolve from the process. An object
// that records the CPU features it was compiled for (`loom_cpu_features`) loads only on a
// CPU that has them all (host_cpu.h).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "runtime/common/kernel_abi.h"
#include "runtime/cpu/elf_loader.h"

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
  std::shared_ptr<void> code;  // keeps the code mapped
};

class CpuModule {
 public:
  explicit CpuModule(ElfLoadOptions options = {});
  ~CpuModule();
  CpuModule(const CpuModule&) = delete;
  CpuModule& operator=(const CpuModule&) = delete;

  // Throws loom::Error naming the kernel when the object is malformed, a symbol is missing or
  // this CPU lacks a feature the code was compiled for.
  std::shared_ptr<LoadedCpuKernel> load(const KernelABI& abi, const std::vector<uint8_t>& object);

 private:
  ElfLoadOptions options_;
};

}  // namespace loom::cpu
