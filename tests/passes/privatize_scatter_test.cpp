// privatize_scatter through the whole pipeline: which atomic scatters of a parallel task get
// per-thread copies (golden IR), which keep their atomics and why, and the task notes.
#include "compiler/passes/privatize_scatter.h"

#include <functional>

#include "compiler/passes/pipeline.h"
#include "tests/passes/pass_test_util.h"

using namespace loom;
using namespace loom::ir;
using namespace loom::passes;
using namespace loom::passes::testing;

namespace {

// for i in 0..n: grid[i % cells] OP= x[i] (an atomic), then `extra` in the same loop body.
struct Scatter {
  int n = 4096, cells = 256;
  Scalar type = Scalar::F32;
  AtomicOp op = AtomicOp::Add;
  bool fast_math = true;
  int copies = 16;  // Kernel::private_copies: the CPU's threads
  std::function<void(Kernel&, Builder&, Inst* i, Inst* atomic)> extra;
};

std::unique_ptr<Kernel> scatter(const Scatter& s) {
  auto k = new_kernel("p2g");
  k->fast_math = s.fast_math;
  k->private_copies = s.copies;
  int x = add_field(*k, "x", s.type, {s.n});
  int grid = add_field(*k, "grid", s.type, {s.cells});
  Builder b(k->body.get());
  b.set_node(1);
  Inst* loop = b.range_for({b.i32(0), b.i32(s.n)});
  b.set_insert_end(loop->region(0));
  Inst* i = b.loop_index(loop, 0);
  Inst* v = b.global_load(b.global_ptr(s.type, x, {i}));
  Inst* cell = b.binary(Op::Mod, i, b.i32(s.cells));
  Inst* atomic = b.atomic(s.op, b.global_ptr(s.type, grid, {cell}), v);
  if (s.extra) s.extra(*k, b, i, atomic);
  return k;
}

std::unique_ptr<Kernel> compiled(const Scatter& s) {
  auto k = scatter(s);
  run_pipeline(*k, {});
  return k;
}

bool privatized(const Kernel& k) { return print_kernel(k).find(" private ") != std::string::npos; }

}  // namespace

TEST(PrivatizeScatter, RunsLastInThePipeline) {
  EXPECT_EQ(pipeline_pass_names().back(), "privatize_scatter");
}

TEST(PrivatizeScatter, AtomicAddsOfAParallelTaskGoThroughCopies) {
  auto k = compiled({});
  // 16 copies of the 1 KiB grid after 16 flags (64 bytes with padding): 64 + 16 KiB.
  expect_ir(*k, R"(kernel p2g
  slot $0: field f32 shape [4096] field x
  slot $1: field f32 shape [256] field grid
  %0:i32 = const 0
  %1:i32 = const 4096
  %2:i32 = const 255
  offload range_for %0, %1 {
    %4:i32 = loop_index %3.0
    %5:i64 = cast %4
    %6:f32 = element_ptr $0 %5
    %7:f32 = global_load %6
    %8:i32 = bit_and %4, %2
    %9:i64 = cast %8
    %10:f32 = element_ptr $1 private 16 @0 %9
    %11:f32 = atomic add %10, %7
  }
)",
            {.offloaded = true, .lowered = true});
  EXPECT_EQ(k->abi.temps_size, 64u + 16u * 1024u);
  ASSERT_EQ(k->task_notes.size(), 1u);
  EXPECT_EQ(k->task_notes[0].text,
            "range_for over 1 dim, parallel; atomic adds into grid go through per-thread copies, "
            "added into the field after the task");
}

TEST(PrivatizeScatter, SubtractionsIntegersAndStrictFloatMath) {
  // A sub adds the negated value to the copy; integer sums are exact in any order, so they go
  // through copies with fast math off too, while float sums (regrouped) do not.
  EXPECT_TRUE(privatized(*compiled({.op = AtomicOp::Sub})));
  EXPECT_TRUE(privatized(*compiled({.type = Scalar::I32, .fast_math = false})));
  EXPECT_TRUE(privatized(*compiled({.type = Scalar::U64})));
  EXPECT_TRUE(privatized(*compiled({.type = Scalar::F64})));
  EXPECT_FALSE(privatized(*compiled({.fast_math = false})));
  // An add and a sub into the same field, in one task.
  auto both = compiled({.extra = [](Kernel&, Builder& b, Inst* i, Inst*) {
    b.atomic(AtomicOp::Sub, b.global_ptr(Scalar::F32, 1, {b.binary(Op::Mod, i, b.i32(7))}),
             b.f32(1));
  }});
  EXPECT_TRUE(privatized(*both));
}

TEST(PrivatizeScatter, WhatKeepsTheAtomics) {
  struct Case {
    const char* why;
    Scatter s;
    // What must still be in the final IR (`times` times at least), so that the case tests
    // what it names and not an access the simplifier removed.
    const char* kept = "atomic ";
    int times = 1;
  };
  const std::vector<Case> cases = {
      {"not a CPU target", {.copies = 0}},
      {"min is not a sum", {.op = AtomicOp::Min}},
      {"bitwise or", {.type = Scalar::I32, .op = AtomicOp::Or}},
      {"fewer updates than the grid has cells: a merge would cost more", {.n = 200}},
      {"the grid too big for two copies in the budget", {.n = 4 << 20, .cells = 3 << 20}},
      {"the task reads the grid",
       {.extra =
            [](Kernel&, Builder& b, Inst* i, Inst*) {
              Inst* g =
                  b.global_load(b.global_ptr(Scalar::F32, 1, {b.binary(Op::Mod, i, b.i32(3))}));
              b.global_store(b.global_ptr(Scalar::F32, 0, {i}), g);
            }},
       "element_ptr $1 ",
       2},
      {"the task also stores into the grid",
       {.extra = [](Kernel&, Builder& b, Inst*,
                    Inst*) { b.global_store(b.global_ptr(Scalar::F32, 1, {b.i32(0)}), b.f32(0)); }},
       "element_ptr $1 ",
       2},
      {"the old value is read",
       {.extra = [](Kernel&, Builder& b, Inst* i,
                    Inst* atomic) { b.global_store(b.global_ptr(Scalar::F32, 0, {i}), atomic); }},
       "global_store "},
      {"another slot names the same field (and reads it)",
       {.extra =
            [](Kernel& k, Builder& b, Inst* i, Inst*) {
              k.abi.resources.push_back(k.abi.resources[1]);
              Inst* g =
                  b.global_load(b.global_ptr(Scalar::F32, 2, {b.binary(Op::Mod, i, b.i32(5))}));
              b.global_store(b.global_ptr(Scalar::F32, 0, {i}), g);
            }},
       "element_ptr $2 "},
  };
  for (const Case& c : cases) {
    auto k = compiled(c.s);
    std::string ir = print_kernel(*k);
    EXPECT_FALSE(privatized(*k)) << c.why << "\n" << ir;
    EXPECT_EQ(k->abi.temps_size, 0u) << c.why;
    int seen = 0;
    for (size_t at = ir.find(c.kept); at != std::string::npos; at = ir.find(c.kept, at + 1)) ++seen;
    EXPECT_GE(seen, c.times) << c.why << ": '" << c.kept << "' is gone\n" << ir;
  }
}

TEST(PrivatizeScatter, CopiesFollowTheThreadsWithinTheBudgets) {
  // One copy per thread of the CPU that runs the kernel; one thread: one copy.
  EXPECT_NE(print_kernel(*compiled({.copies = 4})).find("private 4 @0 "), std::string::npos);
  auto one = compiled({.copies = 1});
  EXPECT_NE(print_kernel(*one).find("private 1 @0 "), std::string::npos);
  EXPECT_EQ(one->abi.temps_size, 64u + 1024u);
  // More threads than the verifier allows copies: the cap.
  EXPECT_NE(print_kernel(*compiled({.copies = 1000})).find("private 64 @0 "), std::string::npos);
  // A 1 MiB grid: 16 MiB of copies per field allows 16 of them, not 32.
  auto big = compiled({.n = 1 << 20, .cells = 1 << 18, .copies = 32});
  EXPECT_NE(print_kernel(*big).find("private 16 @0 "), std::string::npos) << print_kernel(*big);
}

TEST(PrivatizeScatter, AKernelsCopiesStayWithinItsBudget) {
  // Six tasks into six 1 MiB grids with 16 threads: 16 MiB of copies each, 64 MiB per
  // kernel, so the first four grids get copies and the last two keep their atomics.
  auto k = new_kernel("p2g");
  k->private_copies = 16;
  const int cells = 1 << 18;
  std::vector<int> grids;
  for (int g = 0; g < 6; ++g)
    grids.push_back(add_field(*k, "grid" + std::to_string(g), Scalar::F32, {cells}));
  Builder b(k->body.get());
  for (int slot : grids) {
    b.set_insert_end(k->body.get());
    Inst* loop = b.range_for({b.i32(0), b.i32(1 << 20)});
    b.set_insert_end(loop->region(0));
    Inst* i = b.loop_index(loop, 0);
    b.atomic(AtomicOp::Add, b.global_ptr(Scalar::F32, slot, {b.binary(Op::Mod, i, b.i32(cells))}),
             b.f32(1));
  }
  run_pipeline(*k, {});
  std::string ir = print_kernel(*k);
  for (int g = 0; g < 6; ++g) {
    bool copies =
        ir.find("element_ptr $" + std::to_string(g) + " private 16 ") != std::string::npos;
    EXPECT_EQ(copies, g < 4) << "grid" << g << "\n" << ir;
  }
  EXPECT_LE(k->abi.temps_size, (64u << 20) + 4 * 64u);
}

TEST(PrivatizeScatter, ZeroDimensionalFieldsAreAccumulators) {
  // `total += x[i]` from every iteration: one scalar, the most contended atomic of all.
  auto k = new_kernel("sum");
  k->private_copies = 8;
  int x = add_field(*k, "x", Scalar::I32, {1000});
  int total = add_field(*k, "total", Scalar::I32, {});
  Builder b(k->body.get());
  Inst* loop = b.range_for({b.i32(0), b.i32(1000)});
  b.set_insert_end(loop->region(0));
  Inst* i = b.loop_index(loop, 0);
  b.atomic(AtomicOp::Add, b.global_ptr(Scalar::I32, total, {}),
           b.global_load(b.global_ptr(Scalar::I32, x, {i})));
  run_pipeline(*k, {});
  EXPECT_NE(print_kernel(*k).find("element_ptr $1 private 8 @0 "), std::string::npos)
      << print_kernel(*k);
  EXPECT_EQ(k->abi.temps_size, 64u + 8u * 64u);
}

TEST(PrivatizeScatter, NdarraysHaveNoFixedShapeToCopy) {
  auto k = new_kernel("p2g");
  k->private_copies = 16;
  int grid = add_ndarray(*k, "grid", Scalar::F32, 1);
  Builder b(k->body.get());
  Inst* loop = b.range_for({b.i32(0), b.i32(100000)});
  b.set_insert_end(loop->region(0));
  Inst* i = b.loop_index(loop, 0);
  b.atomic(AtomicOp::Add, b.global_ptr(Scalar::F32, grid, {b.binary(Op::Mod, i, b.i32(9))}),
           b.f32(1));
  run_pipeline(*k, {});
  EXPECT_FALSE(privatized(*k)) << print_kernel(*k);
}

TEST(PrivatizeScatter, ATripCountKnownOnlyAtLaunchIsLeftToTheBackend) {
  // The loop runs over an ndarray's extent: the pass cannot count the updates, so it gives
  // the field copies and the backend decides at run time (worth_copies).
  auto k = new_kernel("p2g");
  k->private_copies = 16;
  int x = add_ndarray(*k, "x", Scalar::F32, 1);
  int grid = add_field(*k, "grid", Scalar::F32, {1024});
  Builder b(k->body.get());
  Inst* n = b.make(Op::ResourceShape, Scalar::I32, {}, x, 0);
  Inst* loop = b.range_for({b.i32(0), n});
  b.set_insert_end(loop->region(0));
  Inst* i = b.loop_index(loop, 0);
  Inst* v = b.global_load(b.global_ptr(Scalar::F32, x, {i}));
  b.atomic(AtomicOp::Add, b.global_ptr(Scalar::F32, grid, {b.binary(Op::Mod, i, b.i32(1024))}), v);
  run_pipeline(*k, {});
  EXPECT_TRUE(privatized(*k)) << print_kernel(*k);
}

TEST(PrivatizeScatter, TwoTasksShareOneRegionPerField) {
  // Two loops scattering into the same grid, and one into another: tasks run one after the
  // other, so the grid's copies (merged and freed at the end of each task) serve both.
  auto k = new_kernel("p2g");
  k->private_copies = 16;
  int grid = add_field(*k, "grid", Scalar::I32, {64});
  int other = add_field(*k, "other", Scalar::I32, {32});
  Builder b(k->body.get());
  for (int slot : {grid, grid, other}) {
    b.set_insert_end(k->body.get());
    Inst* loop = b.range_for({b.i32(0), b.i32(1000)});
    b.set_insert_end(loop->region(0));
    Inst* i = b.loop_index(loop, 0);
    b.atomic(AtomicOp::Add, b.global_ptr(Scalar::I32, slot, {b.binary(Op::Mod, i, b.i32(32))}), i);
  }
  run_pipeline(*k, {});
  std::string ir = print_kernel(*k);
  // grid: 16 copies of 256 bytes at @0 (64 bytes of flags first); other: 16 of 128 after it.
  EXPECT_EQ(k->abi.temps_size, 64u + 16u * 256u + 64u + 16u * 128u) << ir;
  size_t first = ir.find("element_ptr $0 private 16 @0 ");
  ASSERT_NE(first, std::string::npos) << ir;
  EXPECT_NE(ir.find("element_ptr $0 private 16 @0 ", first + 1), std::string::npos) << ir;
  EXPECT_NE(ir.find("element_ptr $1 private 16 @4160 "), std::string::npos) << ir;
  EXPECT_EQ(verify(*k, {.offloaded = true, .lowered = true}), "");
}

TEST(PrivatizeScatter, SerialCodeHasNoAtomicsLeftToPrivatize) {
  // Outside a loop the update runs in a serial task, where demote_atomics made it a plain
  // load and store.
  auto k = new_kernel("once");
  k->private_copies = 16;
  int grid = add_field(*k, "grid", Scalar::F32, {4});
  Builder b(k->body.get());
  b.atomic(AtomicOp::Add, b.global_ptr(Scalar::F32, grid, {b.i32(1)}), b.f32(2));
  run_pipeline(*k, {});
  EXPECT_FALSE(privatized(*k)) << print_kernel(*k);
}
