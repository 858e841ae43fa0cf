// Launches loaded kernels: tasks in order, range and struct tasks split into chunks of their
// outermost dimension over the thread pool, serial tasks on the calling thread.
#pragma once

#include <memory>

#include "runtime/common/kernel_abi.h"
#include "runtime/cpu/cpu_module.h"
#include "runtime/cpu/thread_pool.h"

namespace loom::cpu {

class CpuDevice {
 public:
  explicit CpuDevice(int threads = 0);  // 0: one thread per core

  ThreadPool& pool() { return pool_; }

  // Runs every task of `kernel`. ctx.error (a local record when null) is cleared first; a
  // failed bounds check or assertion is thrown afterwards as a loom::Error naming the
  // kernel, the node and the access.
  void launch(const LoadedCpuKernel& kernel, LaunchContext& ctx);

 private:
  ThreadPool pool_;
};

// The message for a reported LaunchError ("" when code is 0).
std::string describe_launch_error(const LoadedCpuKernel& kernel, const LaunchError& error);

}  // namespace loom::cpu
