// A process that links the CPU runtime and not the compiler: no LLVM library is mapped, and
// AOT records of the heat sample (compiled by `loom compile` at build time) load and run.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "runtime/common/abi_serialize.h"
#include "runtime/cpu/cpu_device.h"
#include "runtime/cpu/cpu_module.h"
#include "runtime/host/field.h"
#include "runtime/host/launch_frame.h"

using namespace loom;

namespace {

bool llvm_is_mapped() {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line))
    if (line.find("libLLVM") != std::string::npos) return true;
  return false;
}

std::vector<KernelRecord> aot_records() {
  std::vector<KernelRecord> out;
  for (const auto& entry : std::filesystem::directory_iterator(LOOM_AOT_DIR)) {
    if (entry.path().extension() != ".lkr") continue;
    std::ifstream in(entry.path(), std::ios::binary);
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                               std::istreambuf_iterator<char>());
    out.push_back(deserialize_kernel_record(bytes, entry.path().string()));
  }
  return out;
}

}  // namespace

TEST(NoLlvm, AotKernelsLoadAndRunWithoutLlvmInTheProcess) {
  EXPECT_FALSE(llvm_is_mapped());
  std::vector<KernelRecord> records = aot_records();
  ASSERT_GE(records.size(), 2u);  // init and the diffusion sweeps
  cpu::CpuModule module;
  cpu::CpuDevice device(2);
  const KernelRecord* init = nullptr;
  for (const KernelRecord& r : records) {
    auto kernel = module.load(r.abi, r.code);
    EXPECT_EQ(kernel->tasks.size(), r.abi.tasks.size());
    if (r.abi.name == "init") init = &r;
  }
  ASSERT_NE(init, nullptr);

  auto kernel = module.load(init->abi, init->code);
  ASSERT_EQ(kernel->abi.resources.size(), 1u);
  const ResourceDesc& slot = kernel->abi.resources[0];
  FieldDesc desc{
      slot.field, {slot.dtype, static_cast<uint8_t>(slot.components), 1}, {}, slot.layout};
  for (int d = 0; d < slot.ndim; ++d) desc.shape.push_back(slot.shape[static_cast<size_t>(d)]);
  ASSERT_EQ(desc.shape, (std::vector<int64_t>{256, 256}));
  host::Field temperature(desc);
  host::LaunchFrame frame(kernel->abi);
  frame.bind_field(slot.field, temperature);
  device.launch(*kernel, frame.context());
  const float* t = temperature.data_as<float>();
  double total = 0;
  for (int i = 0; i < 256 * 256; ++i) total += t[i];
  EXPECT_EQ(total, 64.0 * 64.0);
  EXPECT_EQ(t[100 * 256 + 100], 1.0f);
  EXPECT_EQ(t[10 * 256 + 100], 0.0f);
  EXPECT_FALSE(llvm_is_mapped());
}
