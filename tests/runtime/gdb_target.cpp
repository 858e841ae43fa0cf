// The program kernel_tools_test.cpp runs under gdb: loads one serialized kernel record (the
// counting kernel, tests/runtime/counting_kernel.h) with the CPU runtime only and calls its
// task entries on the main thread, through a function of its own that a backtrace from
// inside the kernel must show. Exits 0 when the kernel counted to 3.
#include <cstdio>
#include <fstream>
#include <iterator>
#include <vector>

#include "runtime/common/abi_serialize.h"
#include "runtime/common/error.h"
#include "runtime/cpu/cpu_module.h"
#include "runtime/host/launch_frame.h"
#include "runtime/host/ndarray.h"

namespace {

// The caller's frame the debugger must find below the kernel's.
[[gnu::noinline]] void run_kernel_under_debugger(const loom::cpu::LoadedCpuKernel& kernel,
                                                 loom::LaunchContext& context, int64_t n) {
  kernel.tasks.at(0).entry(&context, 0, n);  // range task: counter[0] += 1 per iteration
  kernel.tasks.at(1).entry(&context, 0, 1);  // serial task: returns n
  asm volatile("" ::: "memory");             // keeps the calls out of tail position
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <kernel record>\n", argv[0]);
    return 2;
  }
  try {
    std::ifstream in(argv[1], std::ios::binary);
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                               std::istreambuf_iterator<char>());
    loom::KernelRecord record = loom::deserialize_kernel_record(bytes, argv[1]);
    loom::cpu::CpuModule module;
    auto kernel = module.load(record.abi, record.code);
    loom::host::Ndarray counter(loom::Scalar::I32, {1});
    loom::host::LaunchFrame frame(kernel->abi);
    frame.set_ndarray(0, counter);
    frame.set_value<int32_t>(1, 3);
    run_kernel_under_debugger(*kernel, frame.context(), 3);
    int32_t counted = counter.data_as<int32_t>()[0];
    std::printf("counted %d\n", counted);
    return counted == 3 ? 0 : 1;
  } catch (const loom::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
