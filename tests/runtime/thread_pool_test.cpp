// ThreadPool: every index exactly once, launches that never wait for sleeping or stalled
// workers, exceptions from any thread, and a stress run with idle gaps.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "runtime/cpu/thread_pool.h"

using namespace loom;

TEST(ThreadPool, CoversEveryIndexExactlyOnce) {
  cpu::ThreadPool pool(4);
  EXPECT_EQ(pool.size(), 4);
  std::vector<std::atomic<int>> hits(10007);
  for (int64_t grain : {1, 7, 100, 5000, 20000}) {
    for (auto& h : hits) h = 0;
    pool.parallel_for(0, static_cast<int64_t>(hits.size()), grain, [&](int64_t b, int64_t e) {
      EXPECT_LE(e - b, grain);
      for (int64_t i = b; i < e; ++i) hits[static_cast<size_t>(i)]++;
    });
    for (size_t i = 0; i < hits.size(); ++i)
      ASSERT_EQ(hits[i].load(), 1) << "grain " << grain << " index " << i;
  }
}

TEST(ThreadPool, ManySmallLaunchesAndCallerParticipates) {
  cpu::ThreadPool pool(3);
  std::atomic<int64_t> total{0};
  std::atomic<bool> caller_ran{false};
  auto caller = std::this_thread::get_id();
  for (int launch = 0; launch < 5000; ++launch) {
    pool.parallel_for(0, 64, 1, [&](int64_t b, int64_t e) {
      total += e - b;
      if (std::this_thread::get_id() == caller) caller_ran = true;
    });
  }
  EXPECT_EQ(total.load(), 5000 * 64);
  EXPECT_TRUE(caller_ran.load());
}

TEST(ThreadPool, NestedAndEmptyRangesRunInline) {
  cpu::ThreadPool pool(2);
  int calls = 0;
  pool.parallel_for(5, 5, 1, [&](int64_t, int64_t) { ++calls; });
  EXPECT_EQ(calls, 0);
  std::atomic<int> inner{0};
  pool.parallel_for(0, 8, 1, [&](int64_t, int64_t) {
    pool.parallel_for(0, 10, 3, [&](int64_t b, int64_t e) { inner += static_cast<int>(e - b); });
  });
  EXPECT_EQ(inner.load(), 80);
  cpu::ThreadPool single(1);
  single.parallel_for(0, 100, 10, [&](int64_t, int64_t) { ++calls; });
  EXPECT_EQ(calls, 10);
}

// A worker that never gets to run (preempted on a busy machine; here held in its start hook)
// must not hold up launches the caller can finish alone.
TEST(ThreadPool, LaunchesDoNotWaitForStalledWorkers) {
  std::atomic<bool> release{false};
  std::atomic<int> stalled{0};
  cpu::ThreadPool pool(4, [&] {
    ++stalled;
    while (!release.load()) std::this_thread::yield();
  });
  while (stalled.load() < 3) std::this_thread::yield();
  auto launches = std::async(std::launch::async, [&] {
    int64_t covered = 0;
    bool only_caller = true;
    for (int launch = 0; launch < 200; ++launch) {
      std::atomic<int64_t> n{0};
      auto me = std::this_thread::get_id();
      pool.parallel_for(0, 1000, 10 + launch % 50, [&](int64_t b, int64_t e) {
        n += e - b;
        if (std::this_thread::get_id() != me) only_caller = false;
      });
      covered += n.load();
    }
    return std::make_pair(covered, only_caller);
  });
  // A deadline for a hang, not a measurement: the old pool waited here until every worker
  // had woken, i.e. forever; releasing the workers then lets the test end either way.
  bool finished = launches.wait_for(std::chrono::seconds(60)) == std::future_status::ready;
  release = true;
  auto [covered, only_caller] = launches.get();
  EXPECT_TRUE(finished) << "launches waited for stalled workers";
  EXPECT_EQ(covered, 200 * 1000);
  EXPECT_TRUE(only_caller);
  // Released workers join later launches.
  std::atomic<int64_t> total{0};
  for (int launch = 0; launch < 100; ++launch)
    pool.parallel_for(0, 4096, 16, [&](int64_t b, int64_t e) { total += e - b; });
  EXPECT_EQ(total.load(), 100 * 4096);
}

TEST(ThreadPool, ExceptionsFromAnyThreadCancelTheRestAndPropagate) {
  cpu::ThreadPool pool(4);
  for (int launch = 0; launch < 200; ++launch) {
    const int64_t n = 2000, grain = 7, bad = (launch * 131) % n;
    std::vector<std::atomic<int>> hits(n);
    try {
      pool.parallel_for(0, n, grain, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) hits[static_cast<size_t>(i)]++;
        if (b <= bad && bad < e) throw std::runtime_error("chunk " + std::to_string(b));
      });
      FAIL() << "no exception from launch " << launch;
    } catch (const std::runtime_error& e) {
      EXPECT_EQ(std::string(e.what()), "chunk " + std::to_string(bad / grain * grain));
    }
    // Nothing runs twice, and the failing chunk ran.
    for (size_t i = 0; i < hits.size(); ++i) ASSERT_LE(hits[i].load(), 1) << "launch " << launch;
    EXPECT_EQ(hits[static_cast<size_t>(bad)].load(), 1);
  }
  // The pool is fine afterwards.
  std::atomic<int64_t> total{0};
  pool.parallel_for(0, 10000, 10, [&](int64_t b, int64_t e) { total += e - b; });
  EXPECT_EQ(total.load(), 10000);
}

namespace {
// Per-launch bookkeeping that outlives the launch, so a chunk run after its launch returned
// is counted rather than writing to a dead stack frame.
struct LaunchRecord {
  std::atomic<bool> returned{false};
  std::atomic<int> late_chunks{0};
  std::vector<std::atomic<uint8_t>> hits;
  explicit LaunchRecord(int64_t n) : hits(static_cast<size_t>(n)) {}
};
}  // namespace

// Many launches of varied sizes and grains, with idle gaps long enough for the workers to go
// to sleep, some ending in an exception: every index runs exactly once (or, after a failure,
// at most once), and no chunk runs after its launch returned.
TEST(ThreadPool, StressLaunchesWithIdleGapsVariedGrainsAndFailures) {
  cpu::ThreadPool pool(4);
  const int64_t grains[] = {1, 3, 64, 257, 1000, 1 << 20};
  std::vector<std::unique_ptr<LaunchRecord>> records;
  for (int launch = 0; launch < 600; ++launch) {
    if (launch % 5 == 0)
      std::this_thread::sleep_for(std::chrono::microseconds(100 + 150 * (launch % 7)));
    const int64_t n = 1 + (launch * 7919) % 6000;
    const int64_t grain = grains[launch % 6];
    const bool fails = launch % 9 == 4;
    const int64_t bad = (launch * 31) % n;
    records.push_back(std::make_unique<LaunchRecord>(n));
    LaunchRecord* r = records.back().get();
    bool threw = false;
    try {
      pool.parallel_for(0, n, grain, [r, fails, bad](int64_t b, int64_t e) {
        if (r->returned.load()) r->late_chunks++;
        for (int64_t i = b; i < e; ++i) r->hits[static_cast<size_t>(i)]++;
        if (fails && b <= bad && bad < e) throw std::runtime_error("bad");
      });
    } catch (const std::runtime_error&) {
      threw = true;
    }
    r->returned = true;
    ASSERT_EQ(threw, fails) << "launch " << launch;
    for (int64_t i = 0; i < n; ++i) {
      int h = r->hits[static_cast<size_t>(i)].load();
      if (fails)
        ASSERT_LE(h, 1) << "launch " << launch << " index " << i;
      else
        ASSERT_EQ(h, 1) << "launch " << launch << " index " << i;
    }
  }
  // Let any worker that might still be running catch up before the last check.
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  for (size_t i = 0; i < records.size(); ++i)
    EXPECT_EQ(records[i]->late_chunks.load(), 0) << "launch " << i;
}

// Several host threads launching on one pool at once take turns.
TEST(ThreadPool, ConcurrentCallersShareThePool) {
  cpu::ThreadPool pool(3);
  std::atomic<int64_t> total{0};
  std::vector<std::thread> callers;
  for (int t = 0; t < 3; ++t)
    callers.emplace_back([&] {
      for (int launch = 0; launch < 300; ++launch)
        pool.parallel_for(0, 999, 13, [&](int64_t b, int64_t e) { total += e - b; });
    });
  for (auto& c : callers) c.join();
  EXPECT_EQ(total.load(), 3 * 300 * 999);
}
