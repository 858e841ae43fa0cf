// The CPU backend: LLVM codegen for the host CPU, on the CPU device (runtime/device).
#include <llvm/ADT/StringMap.h>
#include <llvm/Support/Host.h>

#include <map>

#include "compiler/codegen_llvm/cpu_codegen.h"
#include "compiler/ir/inst.h"
#include "engine_plugin/api/device_backend.h"
#include "runtime/common/bounded_message.h"

namespace loom {

namespace {

std::string host_cpu_signature() {
  std::string s = llvm::sys::getHostCPUName().str();
  llvm::StringMap<bool> features;
  if (llvm::sys::getHostCPUFeatures(features)) {
    std::map<std::string, bool> sorted;
    for (const auto& f : features) sorted[f.getKey().str()] = f.getValue();
    for (const auto& [name, on] : sorted)
      if (on) s += "," + name;
  }
  return s;
}

class CpuBackend : public DeviceBackend {
 public:
  explicit CpuBackend(const ProgramOptions& options)
      : DeviceBackend(make_cpu_device(options.threads)), options_(options) {}

  std::string target_signature() const override { return "cpu\n" + host_; }
  int index_bits() const override { return 64; }

  KernelRecord compile(ir::Kernel& kernel, Stats& stats) override {
    codegen::CpuCodegenOptions co;
    co.fast_math = options_.fast_math;
    co.cancel_checks = options_.cancellable;
    codegen::CodegenTimings ct;
    codegen::CompiledCpuKernel compiled = codegen::compile_kernel_to_object(kernel, co, &ct);
    stats.ms_codegen += ct.emit_ms;
    stats.ms_optimize += ct.optimize_ms;
    stats.ms_emit += ct.object_ms;
    if (options_.warn)
      for (const std::string& note : compiled.notes)
        options_.warn(bounded_message("note: kernel '" + kernel.abi.name + "', " + note));
    return KernelRecord{std::move(compiled.abi), std::move(compiled.object)};
  }

 private:
  ProgramOptions options_;
  std::string host_ = host_cpu_signature();
};

}  // namespace

std::unique_ptr<DeviceBackend> make_cpu_backend(const ProgramOptions& options) {
  return std::make_unique<CpuBackend>(options);
}

}  // namespace loom
