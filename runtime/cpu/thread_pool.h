// Persistent worker threads for parallel task launches. Workers are created once; a launch
// hands them a chunked index range, the calling thread takes chunks too, and nothing is
// allocated per launch.
//
// A launch returns as soon as all of its chunks are done: it never waits for a worker to wake
// up. Workers claim chunks from one pool-owned counter and read the launch's description only
// after a successful claim, so a worker that wakes late finds nothing to claim (or claims
// from the launch current by then) and never touches a finished launch.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

namespace loom::cpu {

class ThreadPool {
 public:
  // `threads`: total threads working on a launch, the caller included (0: one per core).
  // `on_worker_start` runs first on every worker thread (thread names, floating-point modes,
  // affinity); launches never wait for it.
  explicit ThreadPool(int threads = 0, const std::function<void()>& on_worker_start = {});
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return static_cast<int>(workers_.size()) + 1; }

  // Calls fn(b, e) on disjoint chunks [b, e) of [begin, end), each at most `grain` long
  // (raised when a launch would have more than 2^40 chunks), and returns when all are done.
  // Called from inside a launch it runs serially. The first exception thrown by any chunk,
  // on any thread, cancels the chunks nobody has started and is rethrown here once the
  // chunks already started have finished.
  template <typename F>
  void parallel_for(int64_t begin, int64_t end, int64_t grain, F&& fn) {
    using Fn = std::remove_reference_t<F>;
    run(
        begin, end, grain, [](void* obj, int64_t b, int64_t e) { (*static_cast<Fn*>(obj))(b, e); },
        const_cast<void*>(static_cast<const void*>(&fn)));
  }

 private:
  using ChunkFn = void (*)(void*, int64_t, int64_t);
  void run(int64_t begin, int64_t end, int64_t grain, ChunkFn fn, void* obj);
  // Claims and runs chunks of the current launch until none is left; returns the claim
  // word that showed none left.
  uint64_t work();
  void finish_chunks(int64_t count);
  void cancel(std::exception_ptr failure);
  void worker_loop();

  // The claim word: a launch generation in the high 24 bits, the number of chunks not yet
  // claimed in the low 40. A claim is a CAS that decrements the count; a successful claim
  // (acquire) sees the launch's description, which stays unchanged until the launch ends,
  // and the launch cannot end before the claimed chunk is counted in done_.
  std::atomic<uint64_t> claim_{0};
  std::atomic<int64_t> done_{0};  // chunks of the current launch finished or cancelled

  // The current launch: written by its caller before it publishes claim_.
  struct Launch {
    ChunkFn fn = nullptr;
    void* obj = nullptr;
    int64_t begin = 0, end = 0, grain = 1, chunks = 0;
  };
  Launch launch_;
  std::exception_ptr failure_;  // the first exception of the current launch, under mutex_

  std::vector<std::thread> workers_;
  std::mutex launching_;  // one launch at a time
  // Sleeping: workers wait on wake_ for a new generation, the caller on finished_ for done_.
  // Each side announces itself (sleepers_, caller_asleep_) before re-checking under mutex_,
  // so the other side only takes the mutex when somebody may be asleep.
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable finished_;
  std::atomic<int> sleepers_{0};
  std::atomic<bool> caller_asleep_{false};
  std::atomic<bool> stop_{false};
};

}  // namespace loom::cpu
