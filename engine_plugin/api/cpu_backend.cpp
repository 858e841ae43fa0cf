// The CPU backend: LLVM codegen for the host, object loading (runtime/cpu's ELF loader), the thread pool.
#include <llvm/ADT/StringMap.h>
#include <llvm/Support/Host.h>

#include <map>

#include "compiler/codegen_llvm/cpu_codegen.h"
#include "engine_plugin/api/device_backend.h"
#include "runtime/cpu/cpu_device.h"
#include "runtime/cpu/cpu_module.h"

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

class CpuKernel : public BackendKernel {
 public:
  explicit CpuKernel(std::shared_ptr<cpu::LoadedCpuKernel> k) : kernel(std::move(k)) {}
  const KernelABI& abi() const override { return kernel->abi; }
  std::shared_ptr<cpu::LoadedCpuKernel> kernel;
};

class CpuBackend : public DeviceBackend {
 public:
  explicit CpuBackend(const ProgramOptions& options) : options_(options), device_(options.threads) {}

  Backend kind() const override { return Backend::Cpu; }
  std::string device_name() const override {
    return "CPU, " + std::to_string(const_cast<cpu::CpuDevice&>(device_).pool().size()) + " threads";
  }
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
    return KernelRecord{std::move(compiled.abi), std::move(compiled.object)};
  }

  std::shared_ptr<BackendKernel> load(const KernelRecord& record) override {
    return std::make_shared<CpuKernel>(module_.load(record.abi, record.code));
  }

  void launch(BackendKernel& kernel, LaunchContext& ctx) override {
    device_.launch(*static_cast<CpuKernel&>(kernel).kernel, ctx);
  }
  void cancel() override { device_.cancel(); }
  void clear_cancel() override { device_.clear_cancel(); }

 private:
  ProgramOptions options_;
  cpu::CpuDevice device_;
  cpu::CpuModule module_;
  std::string host_ = host_cpu_signature();
};

}  // namespace

std::unique_ptr<DeviceBackend> make_cpu_backend(const ProgramOptions& options) {
  return std::make_unique<CpuBackend>(options);
}

}  // namespace loom
