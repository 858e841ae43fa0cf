#include "compiler/passes/cse.h"
#include "compiler/passes/die.h"

#include "tests/passes/pass_test_util.h"

using namespace loom;
using namespace loom::ir;
using namespace loom::passes;
using namespace loom::passes::testing;

TEST(Cse, MergesEqualPureValuesOnly) {
  auto k = new_kernel("cse_basic");
  add_value_param(*k, "a", Scalar::I32);
  add_value_param(*k, "b", Scalar::I32);
  int x = add_field(*k, "x", Scalar::I32, {16});
  Builder b(k->body.get());
  Inst* a = b.arg(Scalar::I32, 0);
  Inst* a2 = b.arg(Scalar::I32, 0);
  Inst* c = b.arg(Scalar::I32, 1);
  Inst* s1 = b.binary(Op::Add, a, c);
  Inst* s2 = b.binary(Op::Add, c, a2);  // commuted, through an equal argument
  Inst* d1 = b.binary(Op::Sub, a, c);
  Inst* d2 = b.binary(Op::Sub, c, a);  // not commutative: stays
  Inst* l1 = b.global_load(b.global_ptr(Scalar::I32, x, {s1}));
  Inst* l2 = b.global_load(b.global_ptr(Scalar::I32, x, {s2}));  // pointer merges, load stays
  keep(b, *k, {s2, d1, d2, l1, l2});
  EXPECT_TRUE(cse(*k));
  expect_ir(*k, R"(kernel cse_basic
  param p0 a: value i32
  param p1 b: value i32
  slot $0: field i32 shape [16] field x
  returns i32
  returns i32
  returns i32
  returns i32
  returns i32
  %0:i32 = arg p0+0
  %1:i32 = arg p1+0
  %2:i32 = add %0, %1
  %3:i32 = sub %0, %1
  %4:i32 = sub %1, %0
  %5:i32 = global_ptr $0.c0 %2
  %6:i32 = global_load %5
  %7:i32 = global_load %5
  return %2, %3, %4, %6, %7
)");
  EXPECT_FALSE(cse(*k));
}

TEST(Cse, ReusesEnclosingValuesButNotSiblingRegions) {
  auto k = new_kernel("cse_regions");
  add_value_param(*k, "a", Scalar::I32);
  add_value_param(*k, "c", Scalar::Bool);
  int x = add_field(*k, "x", Scalar::I32, {16});
  Builder b(k->body.get());
  Inst* a = b.arg(Scalar::I32, 0);
  Inst* outer = b.binary(Op::Mul, a, a);
  Inst* br = b.if_(b.arg(Scalar::Bool, 1));
  b.set_insert_end(br->region(0));
  Inst* inner = b.binary(Op::Mul, a, a);  // dominated by `outer`: reused
  Inst* then_only = op2(b, Op::Add, {a, b.i32(7)});
  Inst* p0 = b.global_ptr(Scalar::I32, x, {then_only});
  b.global_store(p0, inner);
  b.set_insert_end(br->region(1));
  Inst* else_only = op2(b, Op::Add, {a, b.i32(7)});  // sibling region: stays
  Inst* p1 = b.global_ptr(Scalar::I32, x, {else_only});
  b.global_store(p1, a);
  b.set_insert_end(k->body.get());
  Inst* after = op2(b, Op::Add, {a, b.i32(7)});  // not dominated by either: stays
  Inst* p2 = b.global_ptr(Scalar::I32, x, {after});
  b.global_store(p2, outer);
  EXPECT_TRUE(cse(*k));
  expect_ir(*k, R"(kernel cse_regions
  param p0 a: value i32
  param p1 c: value bool
  slot $0: field i32 shape [16] field x
  %0:i32 = arg p0+0
  %1:i32 = mul %0, %0
  %2:bool = arg p1+0
  if %2 {
    %4:i32 = const 7
    %5:i32 = add %0, %4
    %6:i32 = global_ptr $0.c0 %5
    global_store %6, %1
  } else {
    %8:i32 = const 7
    %9:i32 = add %0, %8
    %10:i32 = global_ptr $0.c0 %9
    global_store %10, %0
  }
  %12:i32 = const 7
  %13:i32 = add %0, %12
  %14:i32 = global_ptr $0.c0 %13
  global_store %14, %1
)");
}

TEST(Cse, NeverAcrossOffloadTasks) {
  auto k = new_kernel("cse_tasks");
  add_value_param(*k, "a", Scalar::F32);
  int x = add_field(*k, "x", Scalar::F32, {16});
  Builder b(k->body.get());
  Inst* a = b.arg(Scalar::F32, 0);
  for (int t = 0; t < 2; ++t) {
    Builder top(k->body.get());
    Inst* task = top.make(Op::Offload, Scalar::Void, {}, static_cast<int>(TaskKind::Serial));
    task->regions.push_back(std::make_unique<Block>(task));
    Builder in(task->region(0));
    Inst* sq = in.binary(Op::Mul, a, a);
    Inst* p = in.global_ptr(Scalar::F32, x, {in.i32(t)});
    in.global_store(p, sq);
  }
  EXPECT_FALSE(cse(*k));
  expect_ir(*k, R"(kernel cse_tasks
  param p0 a: value f32
  slot $0: field f32 shape [16] field x
  %0:f32 = arg p0+0
  offload serial {
    %2:f32 = mul %0, %0
    %3:i32 = const 0
    %4:f32 = global_ptr $0.c0 %3
    global_store %4, %2
  }
  offload serial {
    %7:f32 = mul %0, %0
    %8:i32 = const 1
    %9:f32 = global_ptr $0.c0 %8
    global_store %9, %7
  }
)",
            {.offloaded = true});
}

TEST(Die, RemovesUnusedValuesAndLoads) {
  auto k = new_kernel("die_basic");
  add_value_param(*k, "a", Scalar::I32);
  int x = add_field(*k, "x", Scalar::I32, {16});
  Builder b(k->body.get());
  Inst* a = b.arg(Scalar::I32, 0);
  Inst* p = b.global_ptr(Scalar::I32, x, {a});
  Inst* unused_load = b.global_load(p);
  b.binary(Op::Mul, unused_load, unused_load);  // dead chain: mul, then the load
  b.make(Op::Rand, Scalar::F32);                // advances the random state: kept
  Inst* v = b.alloca_(Scalar::I32);
  b.local_load(v);  // unused load: removed, variable stays read
  b.global_store(p, a);
  const char* before = R"(kernel die_basic
  param p0 a: value i32
  slot $0: field i32 shape [16] field x
  %0:i32 = arg p0+0
  %1:i32 = global_ptr $0.c0 %0
  %2:i32 = global_load %1
  %3:i32 = mul %2, %2
  %4:f32 = rand
  %5:i32 = alloca
  %6:i32 = local_load %5
  global_store %1, %0
)";
  EXPECT_EQ(print_kernel(*k), before);
  EXPECT_TRUE(die(*k));
  expect_ir(*k, R"(kernel die_basic
  param p0 a: value i32
  slot $0: field i32 shape [16] field x
  %0:i32 = arg p0+0
  %1:i32 = global_ptr $0.c0 %0
  %2:f32 = rand
  global_store %1, %0
)");
  EXPECT_FALSE(die(*k));
}

TEST(Die, RemovesWriteOnlyVariablesEmptyIfsAndCodeAfterJumps) {
  auto k = new_kernel("die_control");
  add_value_param(*k, "c", Scalar::Bool);
  int x = add_field(*k, "x", Scalar::I32, {16});
  Builder b(k->body.get());
  Inst* c = b.arg(Scalar::Bool, 0);
  Inst* v = b.alloca_(Scalar::I32);
  b.local_store(v, b.i32(3));  // never read: variable and stores go
  Inst* empty = b.if_(c);
  b.set_insert_end(empty->region(0));
  b.local_store(v, b.i32(4));  // the if empties once the store goes
  b.set_insert_end(k->body.get());
  Inst* loop = b.while_();
  b.set_insert_end(loop->region(0));
  Inst* p = b.global_ptr(Scalar::I32, x, {b.i32(0)});
  b.global_store(p, b.i32(1));
  b.make(Op::Break, Scalar::Void);
  b.global_store(p, b.i32(2));  // unreachable
  EXPECT_TRUE(die(*k));
  expect_ir(*k, R"(kernel die_control
  param p0 c: value bool
  slot $0: field i32 shape [16] field x
  while {
    %1:i32 = const 0
    %2:i32 = global_ptr $0.c0 %1
    %3:i32 = const 1
    global_store %2, %3
    break
  }
)");
}

TEST(Die, RemovesUnusedTemporaryLoadsAndEmptyTasks) {
  auto k = new_kernel("die_tasks");
  Builder b(k->body.get());
  Inst* task = b.make(Op::Offload, Scalar::Void, {}, static_cast<int>(TaskKind::Serial));
  task->regions.push_back(std::make_unique<Block>(task));
  Builder in(task->region(0));
  in.make(Op::TmpLoad, Scalar::I32, {}, 8);
  Inst* kept = b.make(Op::Offload, Scalar::Void, {}, static_cast<int>(TaskKind::Serial));
  kept->regions.push_back(std::make_unique<Block>(kept));
  Builder in2(kept->region(0));
  in2.make(Op::TmpStore, Scalar::Void, {in2.i32(1)}, 0);
  // One note per task, in task order: the removed task's goes with it.
  k->task_notes = {{1, false, "the empty one"}, {2, false, "the one kept"}};
  EXPECT_TRUE(die(*k));
  ASSERT_EQ(k->task_notes.size(), 1u);
  EXPECT_EQ(k->task_notes[0].node, 2);
  EXPECT_EQ(k->task_notes[0].text, "the one kept");
  expect_ir(*k, R"(kernel die_tasks
  offload serial {
    %1:i32 = const 1
    tmp_store @0 %1
  }
)",
            {.offloaded = true});
}
