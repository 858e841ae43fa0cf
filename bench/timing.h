// Timing for the benchmarks that compare Loom with a baseline in the same run: each side run
// in turns, one run of each per round, so a busy machine slows both alike; the median and the
// best of the runs are kept (verdicts go by the medians: on a shared machine the best run of
// either side is sometimes one a neighbour happened to leave alone).
#pragma once

#include <algorithm>
#include <chrono>
#include <functional>
#include <vector>

namespace loom::bench {

struct Timing {
  double best = 0, median = 0;  // seconds per run
};

// Each of `fns` run `runs` times in turns after a warm-up round.
inline std::vector<Timing> time_interleaved(int runs,
                                            const std::vector<std::function<void()>>& fns) {
  using Clock = std::chrono::steady_clock;
  std::vector<std::vector<double>> t(fns.size());
  for (const auto& fn : fns) fn();
  for (int r = 0; r < runs; ++r)
    for (size_t i = 0; i < fns.size(); ++i) {
      auto t0 = Clock::now();
      fns[i]();
      t[i].push_back(std::chrono::duration<double>(Clock::now() - t0).count());
    }
  std::vector<Timing> out;
  for (auto& v : t) {
    std::sort(v.begin(), v.end());
    out.push_back({v.front(), v[v.size() / 2]});
  }
  return out;
}

}  // namespace loom::bench
