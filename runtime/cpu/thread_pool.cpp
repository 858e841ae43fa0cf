#include "runtime/cpu/thread_pool.h"

#include <algorithm>
#include <chrono>
#include <exception>

namespace loom::cpu {

namespace {
thread_local bool t_in_launch = false;

// About 10-30 microseconds of polling before a thread blocks.
constexpr int kSpins = 256;
constexpr auto kWorkerSpin = std::chrono::microseconds(50);

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#else
  std::this_thread::yield();
#endif
}
}  // namespace

ThreadPool::ThreadPool(int threads) {
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  workers_.reserve(static_cast<size_t>(threads - 1));
  for (int i = 1; i < threads; ++i) workers_.emplace_back([this] { worker_loop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_.store(true);
  }
  wake_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::drain() {
  for (;;) {
    int64_t b = next_.fetch_add(grain_, std::memory_order_relaxed);
    if (b >= end_) return;
    fn_(obj_, b, std::min(end_, b + grain_));
  }
}

void ThreadPool::worker_loop() {
  uint64_t seen = 0;
  t_in_launch = true;
  for (;;) {
    // Stay awake briefly after a launch: launches come in bursts (a frame's kernels), and a
    // futex wake costs more than a whole small launch.
    auto spin_until = std::chrono::steady_clock::now() + kWorkerSpin;
    for (int spin = 0; generation_.load(std::memory_order_acquire) == seen; ++spin) {
      cpu_relax();
      if ((spin & 63) == 63 && std::chrono::steady_clock::now() > spin_until) break;
    }
    if (generation_.load(std::memory_order_acquire) == seen) {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stop_.load() || generation_.load(std::memory_order_acquire) != seen; });
    }
    if (stop_.load()) return;
    seen = generation_.load(std::memory_order_acquire);
    drain();
    if (busy_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      std::lock_guard<std::mutex> lock(mutex_);
      done_.notify_one();
    }
  }
}

void ThreadPool::run(int64_t begin, int64_t end, int64_t grain, ChunkFn fn, void* obj) {
  if (end <= begin) return;
  grain = std::max<int64_t>(grain, 1);
  if (workers_.empty() || t_in_launch || end - begin <= grain) {
    for (int64_t b = begin; b < end; b += grain) fn(obj, b, std::min(end, b + grain));
    return;
  }
  std::lock_guard<std::mutex> launch(launch_);
  next_.store(begin, std::memory_order_relaxed);
  end_ = end;
  grain_ = grain;
  fn_ = fn;
  obj_ = obj;
  busy_.store(static_cast<int>(workers_.size()), std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    generation_.fetch_add(1, std::memory_order_release);
  }
  wake_.notify_all();
  // The caller takes chunks too; whatever it throws waits until the workers are done.
  std::exception_ptr failure;
  t_in_launch = true;
  try {
    drain();
  } catch (...) {
    next_.store(end_, std::memory_order_relaxed);
    failure = std::current_exception();
  }
  t_in_launch = false;
  for (int spin = 0; spin < kSpins && busy_.load(std::memory_order_acquire) != 0; ++spin) cpu_relax();
  if (busy_.load(std::memory_order_acquire) != 0) {
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [&] { return busy_.load(std::memory_order_acquire) == 0; });
  }
  if (failure) std::rethrow_exception(failure);
}

}  // namespace loom::cpu
