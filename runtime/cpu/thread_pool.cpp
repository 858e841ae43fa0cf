#include "runtime/cpu/thread_pool.h"

#include <algorithm>
#include <chrono>
#include <utility>

namespace loom::cpu {

namespace {
thread_local bool t_in_launch = false;

// The caller polls about 10-30 microseconds for workers' last chunks before it blocks.
constexpr int kSpins = 256;
// Workers stay awake this long after their last chunk: launches come in bursts (a frame's
// kernels), and a futex wake costs more than a whole small launch.
constexpr auto kWorkerSpin = std::chrono::microseconds(50);

// The claim word (see thread_pool.h): generation << kChunkBits | chunks not yet claimed.
constexpr int kChunkBits = 40;
constexpr uint64_t kChunkMask = (uint64_t{1} << kChunkBits) - 1;
constexpr int64_t kMaxChunks = static_cast<int64_t>(kChunkMask);

uint64_t generation(uint64_t word) { return word >> kChunkBits; }
int64_t unclaimed(uint64_t word) { return static_cast<int64_t>(word & kChunkMask); }

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#else
  std::this_thread::yield();
#endif
}
}  // namespace

ThreadPool::ThreadPool(int threads, const std::function<void()>& on_worker_start) {
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  workers_.reserve(static_cast<size_t>(threads - 1));
  for (int i = 1; i < threads; ++i) {
    workers_.emplace_back([this, on_worker_start] {
      if (on_worker_start) on_worker_start();
      worker_loop();
    });
  }
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_.store(true);
  }
  wake_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::finish_chunks(int64_t count) {
  if (count == 0) return;
  // After this add the launch may be over: only pool-owned state is touched below. The
  // seq_cst pair (done_ here, caller_asleep_ in run) makes sure a caller that is about to
  // sleep either sees the count or is woken.
  done_.fetch_add(count, std::memory_order_seq_cst);
  if (caller_asleep_.load(std::memory_order_seq_cst)) {
    std::lock_guard<std::mutex> lock(mutex_);
    finished_.notify_one();
  }
}

void ThreadPool::cancel(std::exception_ptr failure) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!failure_) failure_ = std::move(failure);
  }
  // The cancelling thread still holds an unfinished chunk, so the launch is still current.
  uint64_t word = claim_.load(std::memory_order_relaxed);
  while (unclaimed(word) != 0 &&
         !claim_.compare_exchange_weak(word, word & ~kChunkMask, std::memory_order_relaxed)) {
  }
  finish_chunks(unclaimed(word));
}

uint64_t ThreadPool::work() {
  uint64_t word = claim_.load(std::memory_order_relaxed);
  while (unclaimed(word) != 0) {
    if (!claim_.compare_exchange_weak(word, word - 1, std::memory_order_acquire,
                                      std::memory_order_relaxed))
      continue;
    // Claimed: launch_ is this launch's and stays so until finish_chunks below.
    const Launch& l = launch_;
    int64_t b = l.begin + (l.chunks - unclaimed(word)) * l.grain;
    try {
      l.fn(l.obj, b, b + std::min(l.grain, l.end - b));
    } catch (...) {
      cancel(std::current_exception());
    }
    finish_chunks(1);
    word = claim_.load(std::memory_order_relaxed);
  }
  return word;
}

void ThreadPool::worker_loop() {
  t_in_launch = true;
  for (;;) {
    // Nothing left to claim: wait for a later generation than the one just drained.
    uint64_t seen = generation(work());
    auto is_new = [&] { return generation(claim_.load(std::memory_order_seq_cst)) != seen; };
    auto spin_until = std::chrono::steady_clock::now() + kWorkerSpin;
    for (int spin = 0; !is_new() && !stop_.load(std::memory_order_relaxed); ++spin) {
      cpu_relax();
      if ((spin & 63) == 63) {
        if (std::chrono::steady_clock::now() > spin_until) break;
        // On a machine with more runnable threads than cores, the launch's caller may be
        // waiting for this very core: a spinning worker must not sit on it.
        std::this_thread::yield();
      }
    }
    if (!is_new() && !stop_.load()) {
      sleepers_.fetch_add(1, std::memory_order_seq_cst);
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [&] { return stop_.load() || is_new(); });
      }
      sleepers_.fetch_sub(1, std::memory_order_relaxed);
    }
    if (stop_.load()) return;
  }
}

void ThreadPool::run(int64_t begin, int64_t end, int64_t grain, ChunkFn fn, void* obj) {
  if (end <= begin) return;
  grain = std::max<int64_t>(grain, 1);
  int64_t chunks = (end - begin - 1) / grain + 1;
  if (chunks > kMaxChunks) {
    grain = (end - begin - 1) / kMaxChunks + 1;
    chunks = (end - begin - 1) / grain + 1;
  }
  if (workers_.empty() || t_in_launch || chunks == 1) {
    for (int64_t b = begin; b < end;) {
      int64_t e = b + std::min(grain, end - b);
      fn(obj, b, e);
      b = e;
    }
    return;
  }
  std::lock_guard<std::mutex> one_at_a_time(launching_);
  // No worker reads launch_, done_ or failure_ before it claims a chunk of this launch.
  launch_ = Launch{fn, obj, begin, end, grain, chunks};
  failure_ = nullptr;
  done_.store(0, std::memory_order_relaxed);
  uint64_t next = generation(claim_.load(std::memory_order_relaxed)) + 1;
  claim_.store((next << kChunkBits) | static_cast<uint64_t>(chunks), std::memory_order_seq_cst);
  if (sleepers_.load(std::memory_order_seq_cst) > 0) {
    { std::lock_guard<std::mutex> lock(mutex_); }  // a worker between its check and its wait
    wake_.notify_all();
  }
  // The caller takes chunks too, then waits only for chunks that workers have started.
  t_in_launch = true;
  work();
  t_in_launch = false;
  auto finished = [&] { return done_.load(std::memory_order_seq_cst) == chunks; };
  for (int spin = 0; spin < kSpins && !finished(); ++spin) cpu_relax();
  if (!finished()) {
    caller_asleep_.store(true, std::memory_order_seq_cst);
    {
      std::unique_lock<std::mutex> lock(mutex_);
      finished_.wait(lock, finished);
    }
    caller_asleep_.store(false, std::memory_order_relaxed);
  }
  // Every chunk is counted, so nobody writes failure_ any more.
  if (failure_) std::rethrow_exception(std::exchange(failure_, nullptr));
}

}  // namespace loom::cpu
