// Persistent worker threads for parallel task launches. Workers are created once; a launch
// hands them a chunked index range, the calling thread takes chunks too, and nothing is
// allocated per launch.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

namespace loom::cpu {

class ThreadPool {
 public:
  // `threads`: total threads working on a launch, the caller included (0: one per core).
  explicit ThreadPool(int threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return static_cast<int>(workers_.size()) + 1; }

  // Calls fn(b, e) on disjoint chunks [b, e) of [begin, end), each at most `grain` long,
  // and returns when all are done. Called from inside a launch it runs serially. `fn` must
  // not throw on a worker thread; an exception on the calling thread ends the launch early
  // and is rethrown once the workers are idle.
  template <typename F>
  void parallel_for(int64_t begin, int64_t end, int64_t grain, F&& fn) {
    using Fn = std::remove_reference_t<F>;
    run(begin, end, grain,
        [](void* obj, int64_t b, int64_t e) { (*static_cast<Fn*>(obj))(b, e); },
        const_cast<void*>(static_cast<const void*>(&fn)));
  }

 private:
  using ChunkFn = void (*)(void*, int64_t, int64_t);
  void run(int64_t begin, int64_t end, int64_t grain, ChunkFn fn, void* obj);
  void drain();
  void worker_loop();

  std::vector<std::thread> workers_;
  std::mutex launch_;  // one launch at a time
  std::mutex mutex_;   // with the condition variables, for workers that went to sleep
  std::condition_variable wake_;
  std::condition_variable done_;
  // A new launch bumps the generation (release: the fields below are ready). Workers spin a
  // little before sleeping, so back-to-back launches do not pay for a wake-up.
  std::atomic<uint64_t> generation_{0};
  std::atomic<bool> stop_{false};
  std::atomic<int> busy_{0};  // workers still on the current launch

  // The current launch.
  std::atomic<int64_t> next_{0};
  int64_t end_ = 0;
  int64_t grain_ = 1;
  ChunkFn fn_ = nullptr;
  void* obj_ = nullptr;
};

}  // namespace loom::cpu
