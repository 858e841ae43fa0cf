#include "runtime/cpu/cpu_device.h"

#include <algorithm>
#include <atomic>
#include <string>

#include "runtime/common/error.h"

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
  const KernelABI& abi = kernel.abi;
  if (e.code == 0) return "";
  if (e.code == 2) {
    if (e.index >= 0 && static_cast<size_t>(e.index) < kernel.assert_messages.size() &&
        !kernel.assert_messages[static_cast<size_t>(e.index)].empty())
      return "assertion failed: " + kernel.assert_messages[static_cast<size_t>(e.index)];
    return "assertion failed";
  }
  std::string what = "index out of bounds";
  if (e.code != 1) what = "launch error " + std::to_string(e.code);
  std::string slot = "slot " + std::to_string(e.slot);
  if (e.slot >= 0 && static_cast<size_t>(e.slot) < abi.resources.size()) {
    const ResourceDesc& r = abi.resources[static_cast<size_t>(e.slot)];
    if (r.kind == ResourceKind::Field && !r.field.empty()) slot += " (field '" + r.field + "')";
    else if (r.param >= 0 && static_cast<size_t>(r.param) < abi.params.size())
      slot += " (parameter '" + abi.params[static_cast<size_t>(r.param)].name + "')";
  }
  return what + ": " + slot + ", dim " + std::to_string(e.dim) + ", index " + std::to_string(e.index) +
         " not in [0, " + std::to_string(e.extent) + ")";
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
  if (error->code == 0) return;
  Place place;
  place.kernel = kernel.abi.name;
  place.node = error->node;
  throw Error(place, describe_launch_error(kernel, *error));
}

}  // namespace loom::cpu
