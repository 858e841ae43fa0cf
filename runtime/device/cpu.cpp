// The CPU device: object code loaded by runtime/cpu's ELF loader (no LLVM), launched on its
// thread pool, on host storage directly.
#include <string>

#include "runtime/common/error.h"
#include "runtime/cpu/cpu_device.h"
#include "runtime/cpu/cpu_module.h"
#include "runtime/device/device.h"

namespace loom {

namespace {

class CpuKernel : public DeviceKernel {
 public:
  explicit CpuKernel(std::shared_ptr<cpu::LoadedCpuKernel> k) : kernel(std::move(k)) {}
  const KernelABI& abi() const override { return kernel->abi; }
  std::shared_ptr<cpu::LoadedCpuKernel> kernel;
};

class Cpu : public Device {
 public:
  explicit Cpu(int threads) : device_(threads) {}
  explicit Cpu(cpu::JobSystem jobs) : device_(std::move(jobs)) {}

  DeviceKind kind() const override { return DeviceKind::Cpu; }
  std::string name() const override {
    return "CPU, " + std::to_string(device_.threads()) + " threads";
  }

  std::shared_ptr<DeviceKernel> load_object(const KernelABI& abi,
                                            const std::vector<uint8_t>& object) override {
    return std::make_shared<CpuKernel>(module_.load(abi, object));
  }
  std::shared_ptr<DeviceKernel> load_spirv(const KernelABI& abi, const SpirvKernel&) override {
    throw Error(Place{"", abi.name},
                "kernel '" + abi.name + "' is SPIR-V; the CPU runs object code", ErrorKind::Arch);
  }

  void launch(DeviceKernel& kernel, LaunchContext& ctx) override {
    device_.launch(*static_cast<CpuKernel&>(kernel).kernel, ctx);
  }

  void cancel() override { device_.cancel(); }
  void clear_cancel() override { device_.clear_cancel(); }

 private:
  mutable cpu::CpuDevice device_;  // name() asks its pool for the thread count
  cpu::CpuModule module_;
};

}  // namespace

std::unique_ptr<Device> make_cpu_device(int threads) { return std::make_unique<Cpu>(threads); }

std::unique_ptr<Device> make_cpu_device(const cpu::JobSystem& jobs) {
  return std::make_unique<Cpu>(jobs);
}

}  // namespace loom
