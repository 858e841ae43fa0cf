// Scatter privatization end to end (compiler/passes/privatize_scatter.h): a parallel loop's
// atomic adds through per-thread copies give the sums the atomics give, on any number of
// threads (more threads than copies included) and launch after launch; a loop that reads
// what an atomic returns keeps its atomics. CPU only: other backends never privatize.
#include "tests/e2e/e2e_util.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

using namespace loom;
using namespace loom::test;

namespace {

constexpr int kN = 100000;  // tests/e2e/docs/scatter.loom.json

ProgramOptions cpu(int threads, bool privatize, bool fast_math = true) {
  ProgramOptions o = no_cache();
  o.backend = Backend::Cpu;
  o.threads = threads;
  o.privatize_scatter = privatize;
  o.fast_math = fast_math;
  return o;
}

template <typename T>
std::vector<T> copy_of(const ArrayView& v) {
  std::vector<T> out(v.bytes / sizeof(T));
  std::memcpy(out.data(), v.data, v.bytes);
  return out;
}

// The notes of a kernel's tasks, one line each. Copies are for parallel tasks only.
std::string notes_of(Program& p, const std::string& kernel) {
  std::string text;
  for (const Program::TaskNote& n : p.task_notes()) {
    if (n.place.kernel != kernel) continue;
    text += n.text + "\n";
    if (n.text.find("per-thread copies") != std::string::npos) {
      EXPECT_TRUE(n.parallel) << "task " << n.task << ": " << n.text;
    }
  }
  return text;
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

struct Histogram {
  std::vector<int32_t> hist = std::vector<int32_t>(256, 0);
  std::vector<float> halves = std::vector<float>(64, 0.0f);
  int32_t count = 0;
};

// `launches` runs of the kernel `histogram` as plain loops. The halves are multiples of 0.5
// below 2^22: every partial sum is exact in f32, so any order of additions gives these.
Histogram expected(int launches) {
  Histogram h;
  for (int l = 0; l < launches; ++l)
    for (int i = 0; i < kN; ++i) {
      int d = (i * 7919 + 13) % 1000;
      h.hist[static_cast<size_t>(d % 256)] += 1;
      h.hist[static_cast<size_t>(d % 7)] -= 2;
      h.halves[static_cast<size_t>(d % 64)] += static_cast<float>(d) * 0.5f;
      h.count += 1;
    }
  return h;
}

}  // namespace

TEST(Privatize, SumsEqualTheAtomicsOnAnyNumberOfThreads) {
  for (int threads : {1, 2, 3, 8, 16, 70})  // 70: more threads than the 64 copies at most
    for (bool privatize : {true, false}) {
      SCOPED_TRACE(std::to_string(threads) + " threads, privatize " + (privatize ? "on" : "off"));
      Program p(cpu(threads, privatize));
      p.load_file(doc_path("scatter.loom.json"));
      std::string notes = notes_of(p, "histogram");
      EXPECT_EQ(has(notes, "atomic adds into hist, halves, count go through per-thread copies"),
                privatize)
          << notes;
      p.run_pipeline("init");
      for (int launch = 1; launch <= 3; ++launch) {
        p.launch("histogram");
        Histogram want = expected(launch);
        ASSERT_EQ(copy_of<int32_t>(p.array("hist")), want.hist) << "launch " << launch;
        ASSERT_EQ(copy_of<float>(p.array("halves")), want.halves) << "launch " << launch;
        ASSERT_EQ(element<int32_t>(p.array("count"), 0), want.count) << "launch " << launch;
      }
    }
}

TEST(Privatize, StrictFloatMathKeepsFloatAtomicsAndPrivatizesIntegers) {
  // Without fast math float sums keep their atomics (copies regroup the additions, which
  // strict math does not allow); integer sums are exact in any order, so they still go
  // through copies.
  Program p(cpu(4, true, /*fast_math=*/false));
  p.load_file(doc_path("scatter.loom.json"));
  std::string notes = notes_of(p, "histogram");
  EXPECT_TRUE(has(notes, "atomic adds into hist, count go through per-thread copies")) << notes;
  p.run_pipeline("init");
  p.launch("histogram");
  Histogram want = expected(1);
  EXPECT_EQ(copy_of<int32_t>(p.array("hist")), want.hist);
  EXPECT_EQ(copy_of<float>(p.array("halves")), want.halves);
}

TEST(Privatize, AnAtomicWhoseOldValueIsReadKeepsItsAtomics) {
  // tickets[atomic_add(next, 1)] = i: every iteration must get its own ticket, which only the
  // atomic on the field itself hands out. Through copies, threads would share tickets.
  for (int threads : {2, 8}) {
    SCOPED_TRACE(std::to_string(threads) + " threads");
    Program p(cpu(threads, true));
    p.load_file(doc_path("scatter.loom.json"));
    std::string notes = notes_of(p, "tickets");
    EXPECT_FALSE(has(notes, "per-thread copies")) << notes;
    EXPECT_TRUE(has(notes, "parallel")) << notes;
    p.launch("tickets");
    std::vector<int32_t> tickets = copy_of<int32_t>(p.array("tickets"));
    std::sort(tickets.begin(), tickets.end());
    std::vector<int32_t> every(kN);
    std::iota(every.begin(), every.end(), 0);
    EXPECT_EQ(tickets, every);
    EXPECT_EQ(element<int32_t>(p.array("next"), 0), kN);
  }
}

TEST(Privatize, Mpm88AgreesWithTheAtomics) {
  // Float sums in another order: positions differ by rounding only (a contribution lost or
  // added twice moves a particle by 1e-3 or more).
  struct State {
    std::vector<float> x, J;
  };
  auto run = [](int threads, bool privatize) {
    Program p(cpu(threads, privatize));
    p.load_file(source_path("assets/graphs/mpm88.loom.json"));
    if (privatize) {
      std::string notes = notes_of(p, "p2g");
      EXPECT_TRUE(has(notes, "atomic adds into grid_v, grid_m go through per-thread copies"))
          << notes;
    }
    p.run_pipeline("init");
    for (int s = 0; s < 2; ++s) p.run_pipeline("step");
    return State{copy_of<float>(p.array("x")), copy_of<float>(p.array("J"))};
  };
  State atomics = run(4, false);
  for (int threads : {1, 4, 16}) {
    SCOPED_TRACE(std::to_string(threads) + " threads");
    State copies = run(threads, true);
    ASSERT_EQ(copies.x.size(), atomics.x.size());
    for (size_t i = 0; i < atomics.x.size(); ++i)
      ASSERT_NEAR(copies.x[i], atomics.x[i], 1e-4) << "x component " << i;
    for (size_t i = 0; i < atomics.J.size(); ++i)
      ASSERT_NEAR(copies.J[i], atomics.J[i], 1e-3) << "J of particle " << i;
  }
}
