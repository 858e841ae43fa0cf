// Launches loaded kernels: tasks in order, range and struct tasks split into chunks of their
// outermost dimension over the thread pool (or an engine's job system), serial tasks on the
// calling thread.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>

#include "runtime/common/kernel_abi.h"
#include "runtime/cpu/cpu_module.h"
#include "runtime/cpu/job_system.h"
#include "runtime/cpu/thread_pool.h"

namespace loom::cpu {

class CpuDevice {
 public:
  explicit CpuDevice(int threads = 0);  // 0: one thread per core
  // Chunks run on `jobs` (JobSystem); Loom starts no threads of its own.
  explicit CpuDevice(JobSystem jobs);

  ThreadPool& pool() { return pool_; }
  // Threads a parallel task is spread over: the pool's, or the job system's workers.
  int threads() const;

  // Runs every task of `kernel`. ctx.error (a local record when null) is cleared first; a
  // failed bounds check or assertion is thrown afterwards as a loom::Error naming the
  // kernel, the node and the access.
  void launch(const LoadedCpuKernel& kernel, LaunchContext& ctx);

  // Called on the thread that runs it before every call of a task's entry (task index,
  // chunk begin and end), for tests and profilers. Set it while no launch is running.
  using ChunkObserver = std::function<void(size_t task, int64_t begin, int64_t end)>;
  void set_chunk_observer(ChunkObserver observer) { observer_ = std::move(observer); }

  // From any thread: stops the launch running now and refuses every later one (each throws a
  // loom::Error "cancelled" naming the kernel and, when a loop saw it, the loop's node) until
  // clear_cancel(). The running launch stops at its next cancellation point (kernels compiled
  // with CpuCodegenOptions::cancel_checks) or chunk boundary; code without the points runs on
  // to its end.
  void cancel();
  void clear_cancel();

 private:
  void run_chunks(int64_t rows, int64_t chunk, const std::function<void(int64_t, int64_t)>& fn);

  ThreadPool pool_;
  JobSystem jobs_;
  ChunkObserver observer_;
  // The error record of the launch running now: cancel() writes its code under the lock, so
  // it never writes a record whose launch has returned.
  std::mutex running_mutex_;
  LaunchError* running_ = nullptr;
  bool cancelled_ = false;
};

// LaunchError::code of a cancelled launch (1 and 2 are bounds checks and assertions).
constexpr int32_t kLaunchCancelled = 3;

// Outer rows per chunk for a parallel task of `rows` rows of `row_work` iterations each on
// `threads` threads: several chunks per thread for balance, but each chunk at least a few
// microseconds of work, so a small task runs whole on the caller and a multi-d task with
// few rows still splits across threads.
int64_t chunk_rows(int64_t rows, int64_t row_work, int threads);

// The message for a reported LaunchError ("" when code is 0).
std::string describe_launch_error(const LoadedCpuKernel& kernel, const LaunchError& error);

}  // namespace loom::cpu
