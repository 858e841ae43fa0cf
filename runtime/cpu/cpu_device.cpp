#include "runtime/cpu/cpu_device.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <string>

#include "runtime/common/error.h"
#include "runtime/common/launch_error.h"

namespace loom::cpu {

namespace {
// Chunks per thread: enough to balance uneven work, few enough to keep chunks long.
constexpr int64_t kChunksPerThread = 8;
// Iterations per chunk at least: ~a few microseconds of a simple loop body, which repays
// claiming the chunk and, for 1-d tasks, leaves the chunk's loop long enough to vectorise.
constexpr int64_t kMinChunkWork = 8192;

bool failed(LaunchError* error) {
  return std::atomic_ref<int32_t>(error->code).load(std::memory_order_relaxed) != 0;
}
}  // namespace

CpuDevice::CpuDevice(int threads) : pool_(threads) {}

// A pool of one thread starts no worker: every chunk runs on the job system.
CpuDevice::CpuDevice(JobSystem jobs) : pool_(1), jobs_(std::move(jobs)) {
  if (!jobs_) throw Error("the job system has no parallel_for function");
  jobs_.workers = std::max(jobs_.workers, 1);
}

int CpuDevice::threads() const { return jobs_ ? jobs_.workers : pool_.size(); }

void CpuDevice::run_chunks(int64_t rows, int64_t chunk,
                           const std::function<void(int64_t, int64_t)>& fn) {
  if (!jobs_) {
    pool_.parallel_for(0, rows, chunk, fn);
    return;
  }
  int64_t count = (rows + chunk - 1) / chunk;  // chunk_rows keeps this near workers * 8
  jobs_.parallel_for(static_cast<uint32_t>(count), [&](uint32_t i) {
    int64_t b = static_cast<int64_t>(i) * chunk;
    fn(b, std::min(rows, b + chunk));
  });
}

int64_t chunk_rows(int64_t rows, int64_t row_work, int threads) {
  if (rows <= 0) return 1;
  if (row_work <= 0) return rows;  // no iterations at all: one chunk
  int64_t work = rows > INT64_MAX / row_work ? INT64_MAX : rows * row_work;
  int64_t chunks = std::min<int64_t>(std::max(threads, 1) * kChunksPerThread, work / kMinChunkWork);
  chunks = std::clamp<int64_t>(chunks, 1, rows);
  return (rows - 1) / chunks + 1;
}

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
    if (r.param >= 0 && static_cast<size_t>(r.param) < abi.params.size())
      place.pin = abi.params[static_cast<size_t>(r.param)].name;
    std::string what = r.kind == ResourceKind::Field ? "field '" + r.field + "'"
                                                     : "resource slot " + std::to_string(s);
    throw Error(place, what + " is not bound");
  }
}
}  // namespace

namespace {
void mark_cancelled(LaunchError* error) {
  if (std::atomic_ref<int32_t>(error->code).load() != 0) return;  // a failure is already reported
  // node -1 first: the first cancellation point to see the code records its loop there.
  std::atomic_ref<int32_t>(error->node).store(-1, std::memory_order_relaxed);
  int32_t none = 0;
  std::atomic_ref<int32_t>(error->code).compare_exchange_strong(none, kLaunchCancelled);
}

Error cancelled_error(const LoadedCpuKernel& kernel, const LaunchError& e) {
  Place place;
  place.kernel = kernel.abi.name;
  place.node = e.node >= 0 ? e.node : -1;
  return Error(place, "kernel '" + kernel.abi.name + "' cancelled");
}
}  // namespace

void CpuDevice::cancel() {
  std::lock_guard<std::mutex> lock(running_mutex_);
  cancelled_ = true;
  if (running_) mark_cancelled(running_);
}

void CpuDevice::clear_cancel() {
  std::lock_guard<std::mutex> lock(running_mutex_);
  cancelled_ = false;
}

void CpuDevice::launch(const LoadedCpuKernel& kernel, LaunchContext& ctx) {
  check_bindings(kernel.abi, ctx);
  LaunchError local{};
  LaunchError* error = ctx.error ? ctx.error : &local;
  *error = LaunchError{};
  ctx.error = error;
  {
    std::lock_guard<std::mutex> lock(running_mutex_);
    if (cancelled_) {
      if (ctx.error == &local) ctx.error = nullptr;
      throw cancelled_error(kernel, LaunchError{kLaunchCancelled, -1, 0, 0, 0, 0});
    }
    running_ = error;
  }
  struct Unpublish {
    CpuDevice* device;
    ~Unpublish() {
      std::lock_guard<std::mutex> lock(device->running_mutex_);
      device->running_ = nullptr;
    }
  } unpublish{this};
  for (size_t t = 0; t < kernel.tasks.size(); ++t) {
    const LoadedTask& task = kernel.tasks[t];
    if (task.kind == 0) {
      if (observer_) observer_(t, 0, 1);
      task.entry(&ctx, 0, 1);
    } else {
      int64_t row_work = 1;
      int64_t rows = task.extent(&ctx, &row_work);
      run_chunks(rows, chunk_rows(rows, row_work, threads()), [&](int64_t b, int64_t e) {
        if (failed(error)) return;
        if (observer_) observer_(t, b, e);
        task.entry(&ctx, b, e);
      });
    }
    if (failed(error)) break;
  }
  if (ctx.error == &local) ctx.error = nullptr;
  if (std::atomic_ref<int32_t>(error->code).load() == kLaunchCancelled)
    throw cancelled_error(kernel, *error);
  throw_if_launch_failed(kernel.abi, kernel.assert_messages, *error);
}

}  // namespace loom::cpu
