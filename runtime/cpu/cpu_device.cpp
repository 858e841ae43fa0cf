#include "runtime/cpu/cpu_device.h"

#include <algorithm>
#include <atomic>
#include <string>

#include "runtime/common/error.h"
#include "runtime/common/launch_error.h"

namespace loom::cpu {

namespace {
// Chunks per thread: enough to balance uneven work, few enough to keep chunks long.
constexpr int64_t kChunksPerThread = 8;
constexpr int64_t kMinChunk = 256;
constexpr int64_t kMinChunk1d = 8192;  // ~a few microseconds of a simple loop body

bool failed(LaunchError* error) {
  return std::atomic_ref<int32_t>(error->code).load(std::memory_order_relaxed) != 0;
}
}  // namespace

CpuDevice::CpuDevice(int threads) : pool_(threads) {}

std::string describe_launch_error(const LoadedCpuKernel& kernel, const LaunchError& e) {
  return loom::describe_launch_error(kernel.abi, kernel.assert_messages, e);
}

namespace {
// A slot left unbound would make the kernel read through a null pointer.
void check_bindings(const KernelABI& abi, const LaunchContext& ctx) {
  for (size_t s = 0; s < abi.resources.size(); ++s) {
    const ResourceDesc& r = abi.resources[s];
    if (ctx.resources && ctx.resources[s].data) continue;
    Place place;
    place.kernel = abi.name;
    if (r.param >= 0 && static_cast<size_t>(r.param) < abi.params.size()) place.pin = abi.params[static_cast<size_t>(r.param)].name;
    std::string what = r.kind == ResourceKind::Field ? "field '" + r.field + "'" : "resource slot " + std::to_string(s);
    throw Error(place, what + " is not bound");
  }
}
}  // namespace

void CpuDevice::launch(const LoadedCpuKernel& kernel, LaunchContext& ctx) {
  check_bindings(kernel.abi, ctx);
  LaunchError local{};
  LaunchError* error = ctx.error ? ctx.error : &local;
  *error = LaunchError{};
  ctx.error = error;
  const int64_t threads = pool_.size();
  for (const LoadedTask& task : kernel.tasks) {
    if (task.kind == 0) {
      task.entry(&ctx, 0, 1);
    } else {
      int64_t n = task.extent(&ctx);
      // Several chunks per thread for balance, but never so short that the loop inside a
      // chunk (the task's innermost dimension when it is 1-d) cannot run vectorised, and
      // 1-d tasks too small to repay waking the workers run whole on the caller.
      int64_t balanced = (n + threads * kChunksPerThread - 1) / (threads * kChunksPerThread);
      int64_t per_thread = (n + threads - 1) / threads;
      int64_t min_chunk = task.dims <= 1 ? kMinChunk1d : kMinChunk;
      int64_t grain = std::max<int64_t>({1, balanced, std::min(per_thread, kMinChunk), std::min(n, min_chunk)});
      pool_.parallel_for(0, n, grain, [&](int64_t b, int64_t e) {
        if (!failed(error)) task.entry(&ctx, b, e);
      });
    }
    if (failed(error)) break;
  }
  if (ctx.error == &local) ctx.error = nullptr;
  throw_if_launch_failed(kernel.abi, kernel.assert_messages, *error);
}

}  // namespace loom::cpu
