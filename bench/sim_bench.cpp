// Whole simulations on the CPU: the sample programs run through loom::Program as a user runs
// them (their `step` pipeline), against baselines in the same run, Loom and baselines in turns
// (bench/timing.h: one run of each per round; medians, and the best):
//
// - mpm88 at 8,192 particles on a 128^2 grid (Taichi's example) and at 262,144 particles on
//   512^2 (bench/graphs/mpm88_{8k,256k}.loom.json, made by bench/graphs/make_mpm88.py), against
//   the same four loops hand-written in C++ (bench/handwritten.cpp, -O3 -march=native) on a
//   ThreadPool of as many threads, split into the chunks Loom makes (cpu::chunk_rows): P2G with
//   atomic adds as Taichi's example writes it, and P2G into one private grid per thread
//   added into the shared grid afterwards, as one hand-optimises it;
// - the same documents compiled without scatter privatization
//   (ProgramOptions::privatize_scatter false: the atomics as written);
// - n-body and cloth (assets/graphs), against Taichi only.
//
// With --taichi PYTHON, Taichi 1.7.4 runs the same programs in their fastest form
// (bench/taichi_peer.py --serve, a child process that takes one command per run), interleaved
// with the runs here, so both meet the same machine; its times are its own, measured around
// the kernels in Python with ti.sync().
//
// Results are checked: every mpm88 side starts from the same lattice and, after the same
// substeps, the particles must agree with the hand-written atomic version within a tolerance
// (the order of the float additions into a grid cell differs between threads, runs and
// versions). A wrong result makes the exit status 1; timings are never asserted.
//
//   loom_sim_bench [--quick] [--threads N] [--runs N] [--sample NAME] [--taichi PYTHON]
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/handwritten.h"
#include "bench/timing.h"
#include "engine_plugin/include/loom/program.h"
#include "runtime/cpu/cpu_device.h"
#include "runtime/cpu/thread_pool.h"

namespace {

using loom::bench::Timing;
using Clock = std::chrono::steady_clock;

std::string source(const std::string& rel) { return std::string(LOOM_SOURCE_DIR) + "/" + rel; }

// Particle positions of two runs agree within this, in units of the domain (1.0): after 10
// substeps the versions differ by about 1e-6 (float sums in another order); a particle that
// skipped one P2G contribution moves by 1e-3 or more.
constexpr double kPositionTolerance = 1e-4;

// ---- Taichi as a child process (bench/taichi_peer.py --serve): one line per command.
class TaichiPeer {
 public:
  TaichiPeer(const std::string& python, int threads) {
    int to_child[2], from_child[2];
    if (pipe(to_child) != 0 || pipe(from_child) != 0) throw std::runtime_error("pipe failed");
    pid_ = fork();
    if (pid_ == 0) {
      dup2(to_child[0], 0);
      dup2(from_child[1], 1);
      close(to_child[1]);
      close(from_child[0]);
      std::string script = source("bench/taichi_peer.py"), t = std::to_string(threads);
      execlp(python.c_str(), python.c_str(), script.c_str(), "--serve", "--threads", t.c_str(),
             static_cast<char*>(nullptr));
      _exit(127);
    }
    close(to_child[0]);
    close(from_child[1]);
    out_ = fdopen(to_child[1], "w");
    in_ = fdopen(from_child[0], "r");
  }
  ~TaichiPeer() {
    if (out_) {
      std::fputs("quit\n", out_);
      std::fclose(out_);
    }
    if (in_) std::fclose(in_);
    if (pid_ > 0) waitpid(pid_, nullptr, 0);
  }
  TaichiPeer(const TaichiPeer&) = delete;
  TaichiPeer& operator=(const TaichiPeer&) = delete;

  // Sends one command and returns the reply line (without the newline).
  std::string ask(const std::string& command) {
    std::fprintf(out_, "%s\n", command.c_str());
    std::fflush(out_);
    char line[4096];
    if (!std::fgets(line, sizeof line, in_))
      throw std::runtime_error("the Taichi peer stopped answering (command '" + command + "')");
    std::string reply(line);
    while (!reply.empty() && (reply.back() == '\n' || reply.back() == '\r')) reply.pop_back();
    if (reply.rfind("error", 0) == 0) throw std::runtime_error("Taichi peer: " + reply);
    return reply;
  }

 private:
  pid_t pid_ = -1;
  FILE* out_ = nullptr;
  FILE* in_ = nullptr;
};

// Has the peer build `name` in both forms and keep the faster; prints what it measured.
void taichi_setup(TaichiPeer& taichi, const std::string& name, int per) {
  std::string reply = taichi.ask("setup " + name);
  char form[32] = {};
  double fields = 0, ndarrays = 0;
  if (std::sscanf(reply.c_str(), "ok %31s %lf %lf", form, &fields, &ndarrays) != 3)
    throw std::runtime_error("Taichi peer: unexpected reply '" + reply + "'");
  std::printf(
      "    taichi runs its %s form (first timings, ms per unit: fields %.4f, ndarrays %.4f)\n",
      form, fields / per, ndarrays / per);
}

// A side of a comparison: runs one timed unit and returns its seconds (its own measurement,
// for the Taichi peer; the wall time around it otherwise).
using Side = std::function<double()>;

Side timed(std::function<void()> fn) {
  return [fn = std::move(fn)] {
    auto t0 = Clock::now();
    fn();
    return std::chrono::duration<double>(Clock::now() - t0).count();
  };
}

// Each side run `runs` times in turns after a warm-up round (bench/timing.h's pattern, with
// sides that may report their own time).
std::vector<Timing> interleave(int runs, const std::vector<Side>& sides) {
  std::vector<std::vector<double>> t(sides.size());
  for (const auto& s : sides) s();
  for (int r = 0; r < runs; ++r)
    for (size_t i = 0; i < sides.size(); ++i) t[i].push_back(sides[i]());
  std::vector<Timing> out;
  for (auto& v : t) {
    std::sort(v.begin(), v.end());
    out.push_back({v.front(), v[v.size() / 2]});
  }
  return out;
}

void print_row(const char* what, const Timing& t, double per, const Timing* base,
               const char* base_name) {
  std::printf("  %-34s %9.4f ms median (best %9.4f)", what, t.median * 1e3 / per,
              t.best * 1e3 / per);
  if (base) std::printf("   %6.2fx faster than %s", base->median / t.median, base_name);
  std::printf("\n");
}

// ---- mpm88

struct Mpm88Size {
  const char* name;
  int64_t n, grid;
  float dt;
};

// The hand-written state: vectors in Loom's field layout, and one private grid per thread.
struct HandMpm {
  std::vector<float> x, v, C, J, grid_v, grid_m;
  std::vector<std::vector<float>> private_v, private_m;
  loom::bench::Mpm88 s;
  HandMpm(const Mpm88Size& size, int threads)
      : x(static_cast<size_t>(2 * size.n)),
        v(x.size()),
        C(static_cast<size_t>(4 * size.n)),
        J(static_cast<size_t>(size.n)),
        grid_v(static_cast<size_t>(2 * size.grid * size.grid)),
        grid_m(static_cast<size_t>(size.grid * size.grid)) {
    s = {size.n,   size.grid, size.dt,       x.data(),     v.data(),
         C.data(), J.data(),  grid_v.data(), grid_m.data()};
    for (int t = 0; t < threads; ++t) {
      private_v.emplace_back(grid_v.size(), 0.0f);
      private_m.emplace_back(grid_m.size(), 0.0f);
    }
    loom::bench::mpm88_seed(s, 0, size.n);
  }
};

// 0, 1, ...: a number per thread, in the order threads first ask (the caller and the
// baselines' pool workers: fewer than the pool's size).
int thread_number() {
  static std::atomic<int> next{0};
  thread_local int mine = next.fetch_add(1);
  return mine;
}

// One substep of the hand-written mpm88 on `pool`, each loop split as Loom splits it.
void hand_substep(HandMpm& h, loom::cpu::ThreadPool& pool, int threads, bool private_grids) {
  const loom::bench::Mpm88& s = h.s;
  const int64_t g = s.grid, n = s.n;
  auto split = [&](int64_t rows, int64_t row_work, const std::function<void(int64_t, int64_t)>& f) {
    pool.parallel_for(0, rows, loom::cpu::chunk_rows(rows, row_work, threads), f);
  };
  split(g, g, [&](int64_t b, int64_t e) { loom::bench::mpm88_clear_grid(s, b, e); });
  if (!private_grids) {
    split(n, 1, [&](int64_t b, int64_t e) { loom::bench::mpm88_p2g_atomic(s, b, e); });
  } else {
    // Chunks as Loom makes them, each into the grid of the thread that runs it; then the
    // grids are added into the shared one in parallel over its rows (and cleared).
    split(n, 1, [&](int64_t b, int64_t e) {
      size_t t = static_cast<size_t>(thread_number());
      loom::bench::mpm88_p2g_private(s, h.private_v[t].data(), h.private_m[t].data(), b, e);
    });
    split(g, g, [&](int64_t b, int64_t e) {
      for (size_t t = 0; t < h.private_v.size(); ++t) {
        loom::bench::add_and_clear_f32(s.grid_v, h.private_v[t].data(), 2 * b * g, 2 * e * g);
        loom::bench::add_and_clear_f32(s.grid_m, h.private_m[t].data(), b * g, e * g);
      }
    });
  }
  split(g, g, [&](int64_t b, int64_t e) { loom::bench::mpm88_grid_update(s, b, e); });
  split(n, 1, [&](int64_t b, int64_t e) { loom::bench::mpm88_g2p(s, b, e); });
}

double max_position_difference(const std::vector<float>& a, const loom::ArrayView& b) {
  double worst = 0;
  const float* bx = reinterpret_cast<const float*>(b.data);
  for (size_t i = 0; i < a.size(); ++i) {
    double d = std::fabs(static_cast<double>(a[i]) - static_cast<double>(bx[i]));
    if (!(d <= worst)) worst = d;  // NaN wins
  }
  return worst;
}

double max_position_difference(const std::vector<float>& a, const std::vector<float>& b) {
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    double d = std::fabs(static_cast<double>(a[i]) - static_cast<double>(b[i]));
    if (!(d <= worst)) worst = d;
  }
  return worst;
}

bool mpm88(const Mpm88Size& size, loom::cpu::ThreadPool& pool, int runs, TaichiPeer* taichi) {
  const int threads = pool.size();
  const int substeps = 10;  // per `step` pipeline run, as in the sample
  std::printf("\nmpm88, %lld particles, %lldx%lld grid, dt %g: ms per substep (%d per run)\n",
              static_cast<long long>(size.n), static_cast<long long>(size.grid),
              static_cast<long long>(size.grid), static_cast<double>(size.dt), substeps);
  const std::string doc = source(std::string("bench/graphs/") + size.name + ".loom.json");
  auto make_program = [&](bool privatize) {
    loom::ProgramOptions options;
    options.backend = loom::Backend::Cpu;
    options.threads = threads;
    options.offline_cache = false;
    options.privatize_scatter = privatize;
    auto p = std::make_unique<loom::Program>(options);
    p->load_file(doc);
    p->run_pipeline("init");
    return p;
  };
  auto loom = make_program(true), loom_atomic = make_program(false);
  HandMpm hand(size, threads), hand_private(size, threads);

  // Correctness first, from the same start: one `step` (10 substeps) of every version.
  bool ok = true;
  {
    auto check_loom = make_program(true), check_atomic = make_program(false);
    HandMpm a(size, threads), b(size, threads);
    check_loom->run_pipeline("step");
    check_atomic->run_pipeline("step");
    for (int k = 0; k < substeps; ++k) {
      hand_substep(a, pool, threads, false);
      hand_substep(b, pool, threads, true);
    }
    auto report = [&](const char* who, double d) {
      bool good = d <= kPositionTolerance;
      ok = ok && good;
      std::printf("    %-40s positions within %.1e of hand-written (atomics) %s\n", who, d,
                  good ? "" : "OUTSIDE THE TOLERANCE");
    };
    report("loom", max_position_difference(a.x, check_loom->array("x")));
    report("loom, scatter privatization off",
           max_position_difference(a.x, check_atomic->array("x")));
    report("hand-written, private grids", max_position_difference(a.x, b.x));
  }

  std::vector<Side> sides = {
      timed([&] { loom->run_pipeline("step"); }),
      timed([&] { loom_atomic->run_pipeline("step"); }),
      timed([&] {
        for (int k = 0; k < substeps; ++k) hand_substep(hand, pool, threads, false);
      }),
      timed([&] {
        for (int k = 0; k < substeps; ++k) hand_substep(hand_private, pool, threads, true);
      }),
  };
  if (taichi) {
    taichi_setup(*taichi, size.name, substeps);
    sides.push_back([taichi] { return std::stod(taichi->ask("run")); });
  }
  auto t = interleave(runs, sides);
  const double per = substeps;
  print_row("loom", t[0], per, nullptr, "");
  print_row("loom, scatter privatization off", t[1], per, nullptr, "");
  print_row("hand-written, atomics", t[2], per, nullptr, "");
  print_row("hand-written, private grids", t[3], per, nullptr, "");
  if (taichi) print_row("taichi", t[4], per, nullptr, "");
  std::printf("  ratios (time of the other / time of loom; > 1: loom is faster)\n");
  std::printf("    vs loom without privatization %6.2f\n", t[1].median / t[0].median);
  std::printf("    vs hand-written, atomics      %6.2f\n", t[2].median / t[0].median);
  std::printf("    vs hand-written, private grids %5.2f\n", t[3].median / t[0].median);
  if (taichi) std::printf("    vs taichi                     %6.2f\n", t[4].median / t[0].median);
  return ok;
}

// ---- n-body and cloth: the samples as they are, against Taichi

void sample(const char* name, const char* unit, int per, int threads, int runs,
            TaichiPeer* taichi) {
  std::printf("\n%s (assets/graphs/%s.loom.json): ms per %s (%d per run)\n", name, name, unit, per);
  loom::ProgramOptions options;
  options.backend = loom::Backend::Cpu;
  options.threads = threads;
  options.offline_cache = false;
  loom::Program p(options);
  p.load_file(source(std::string("assets/graphs/") + name + ".loom.json"));
  p.run_pipeline("init");
  std::vector<Side> sides = {timed([&] { p.run_pipeline("step"); })};
  if (taichi) {
    taichi_setup(*taichi, name, per);
    sides.push_back([taichi] { return std::stod(taichi->ask("run")); });
  }
  auto t = interleave(runs, sides);
  print_row("loom", t[0], per, nullptr, "");
  if (taichi) {
    print_row("taichi", t[1], per, nullptr, "");
    std::printf("  ratio taichi / loom %.2f (> 1: loom is faster)\n", t[1].median / t[0].median);
  }
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  int threads = static_cast<int>(std::thread::hardware_concurrency());
  int runs = 0;
  std::string only, python;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--quick")) {
      quick = true;
    } else if (!std::strcmp(argv[i], "--threads") && i + 1 < argc) {
      threads = std::max(1, std::atoi(argv[++i]));
    } else if (!std::strcmp(argv[i], "--runs") && i + 1 < argc) {
      runs = std::max(1, std::atoi(argv[++i]));
    } else if (!std::strcmp(argv[i], "--sample") && i + 1 < argc) {
      only = argv[++i];
    } else if (!std::strcmp(argv[i], "--taichi") && i + 1 < argc) {
      python = argv[++i];
    } else {
      std::fprintf(stderr,
                   "usage: loom_sim_bench [--quick] [--threads N] [--runs N] "
                   "[--sample mpm88_8k|mpm88_256k|nbody|cloth] [--taichi PYTHON]\n");
      return 2;
    }
  }
  try {
    std::unique_ptr<TaichiPeer> taichi;
    if (!python.empty()) taichi = std::make_unique<TaichiPeer>(python, threads);
    std::printf("loom_sim_bench: %d threads; median (best) of %s interleaved runs\n", threads,
                runs ? std::to_string(runs).c_str() : "the");
    bool ok = true;
    // The hand-written baselines' pool, one for the whole run (its threads number the
    // baselines' private grids).
    loom::cpu::ThreadPool pool(threads);
    const Mpm88Size sizes[] = {{"mpm88_8k", 8192, 128, 2e-4f}, {"mpm88_256k", 262144, 512, 5e-5f}};
    for (const Mpm88Size& s : sizes) {
      if (!only.empty() && only != s.name) continue;
      bool big = s.n > 100000;
      ok = mpm88(s, pool, runs ? runs : (quick ? 3 : (big ? 7 : 21)), taichi.get()) && ok;
    }
    if (only.empty() || only == "nbody")
      sample("nbody", "step", 1, threads, runs ? runs : (quick ? 5 : 51), taichi.get());
    if (only.empty() || only == "cloth")
      sample("cloth", "substep", 5, threads, runs ? runs : (quick ? 5 : 51), taichi.get());
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "loom_sim_bench: %s\n", e.what());
    return 1;
  }
}
