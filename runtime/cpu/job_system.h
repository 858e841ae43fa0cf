// An engine's job system, for running a parallel task's chunks on the engine's worker threads
// instead of Loom's own thread pool (engines keep one set of threads busy, not two).
#pragma once

#include <cstdint>
#include <functional>

namespace loom::cpu {

struct JobSystem {
  // Calls job(i) once for every i in [0, count), on any threads (the calling one included),
  // and returns when every call has returned. `job` never throws: a failed bounds check or
  // assertion is recorded in the launch's error record and reported after the task.
  using Job = std::function<void(uint32_t index)>;
  std::function<void(uint32_t count, const Job& job)> parallel_for;
  // How many threads the job system runs jobs on: the launch cuts each task into a few
  // chunks per worker.
  int workers = 1;

  explicit operator bool() const { return static_cast<bool>(parallel_for); }
};

}  // namespace loom::cpu
