#include "compiler/passes/licm.h"

#include "tests/passes/pass_test_util.h"

using namespace loom;
using namespace loom::ir;
using namespace loom::passes;
using namespace loom::passes::testing;

TEST(Licm, HoistsThroughNestedLoops) {
  auto k = new_kernel("nested");
  add_value_param(*k, "a", Scalar::F32);
  add_value_param(*k, "n", Scalar::I32);
  int x = add_field(*k, "x", Scalar::F32, {16, 16});
  Builder b(k->body.get());
  Inst* a = b.arg(Scalar::F32, 0);
  Inst* n = b.arg(Scalar::I32, 1);
  Inst* outer = b.range_for({b.i32(0), b.i32(16)});
  b.set_insert_end(outer->region(0));
  Inst* i = b.loop_index(outer, 0);
  Inst* inner = b.range_for({b.i32(0), b.i32(16)});
  b.set_insert_end(inner->region(0));
  Inst* j = b.loop_index(inner, 0);
  Inst* a2 = b.binary(Op::Mul, a, a);          // invariant in both loops
  Inst* row = b.binary(Op::Mul, i, b.i32(3));  // invariant in the inner loop only
  Inst* q = b.binary(Op::Div, row, n);         // may divide by zero: stays
  Inst* br = b.if_(op2(b, Op::Lt, {j, q}));
  b.set_insert_end(br->region(0));
  Inst* half = b.binary(Op::Mul, a2, b.f32(0.5));  // pure, invariant, inside an if
  Inst* p = b.global_ptr(Scalar::F32, x, {i, j});
  b.global_store(p, half);
  EXPECT_TRUE(licm(*k));
  expect_ir(*k, R"(kernel nested
  param p0 a: value f32
  param p1 n: value i32
  slot $0: field f32 shape [16, 16] field x
  %0:f32 = arg p0+0
  %1:i32 = arg p1+0
  %2:i32 = const 0
  %3:i32 = const 16
  %4:i32 = const 0
  %5:i32 = const 16
  %6:f32 = mul %0, %0
  %7:i32 = const 3
  %8:f32 = const 0.5
  %9:f32 = mul %6, %8
  range_for %2, %3 {
    %11:i32 = loop_index %10.0
    %12:i32 = mul %11, %7
    range_for %4, %5 {
      %14:i32 = loop_index %13.0
      %15:i32 = div %12, %1
      %16:bool = lt %14, %15
      if %16 {
        %18:f32 = global_ptr $0.c0 %11, %14
        global_store %18, %9
      } else {
      }
    }
  }
)");
  EXPECT_FALSE(licm(*k));
}

TEST(Licm, HoistsLoadsOnlyWhenTheSlotIsNotWritten) {
  auto k = new_kernel("loads");
  add_value_param(*k, "n", Scalar::I32);
  int x = add_field(*k, "x", Scalar::I32, {16});
  int y = add_field(*k, "y", Scalar::I32, {16});
  Builder b(k->body.get());
  Inst* n = b.arg(Scalar::I32, 0);
  Inst* loop = b.range_for({b.i32(0), b.i32(8)});  // constant trip count: runs
  b.set_insert_end(loop->region(0));
  Inst* i = b.loop_index(loop, 0);
  Inst* px = b.global_ptr(Scalar::I32, x, {n});
  Inst* lx = b.global_load(px);  // x is only read in the loop: hoisted
  Inst* py = b.global_ptr(Scalar::I32, y, {n});
  Inst* ly = b.global_load(py);  // y is written in the loop: stays
  Inst* pi = b.global_ptr(Scalar::I32, y, {i});
  b.global_store(pi, op2(b, Op::Add, {lx, ly}));
  Inst* w = b.range_for({b.i32(0), n});  // may not run: nothing loaded is hoisted
  b.set_insert_end(w->region(0));
  Inst* px2 = b.global_ptr(Scalar::I32, x, {b.i32(0)});
  Inst* l2 = b.global_load(px2);
  Inst* pj = b.global_ptr(Scalar::I32, y, {b.loop_index(w, 0)});
  b.global_store(pj, l2);
  EXPECT_TRUE(licm(*k));
  expect_ir(*k, R"(kernel loads
  param p0 n: value i32
  slot $0: field i32 shape [16] field x
  slot $1: field i32 shape [16] field y
  %0:i32 = arg p0+0
  %1:i32 = const 0
  %2:i32 = const 8
  %3:i32 = global_ptr $0.c0 %0
  %4:i32 = global_load %3
  %5:i32 = global_ptr $1.c0 %0
  %6:i32 = const 0
  %7:i32 = const 0
  %8:i32 = global_ptr $0.c0 %7
  range_for %1, %2 {
    %10:i32 = loop_index %9.0
    %11:i32 = global_load %5
    %12:i32 = global_ptr $1.c0 %10
    %13:i32 = add %4, %11
    global_store %12, %13
    range_for %6, %0 {
      %16:i32 = global_load %8
      %17:i32 = loop_index %15.0
      %18:i32 = global_ptr $1.c0 %17
      global_store %18, %16
    }
  }
)");
}

TEST(Licm, OffloadBodiesGiveUpUniformValuesOnly) {
  auto k = new_kernel("offloaded");
  add_value_param(*k, "a", Scalar::F32);
  int x = add_field(*k, "x", Scalar::F32, {16});
  Builder b(k->body.get());
  Inst* a = b.arg(Scalar::F32, 0);
  Inst* zero = b.i32(0);
  Inst* end = b.i32(16);
  Inst* task =
      b.make(Op::Offload, Scalar::Void, {zero, end}, static_cast<int>(TaskKind::RangeFor), 1);
  task->regions.push_back(std::make_unique<Block>(task));
  b.set_insert_end(task->region(0));
  Inst* i = b.loop_index(task, 0);
  Inst* a2 = b.binary(Op::Mul, a, a);                   // uniform: to the top level
  Inst* p0 = b.global_ptr(Scalar::F32, x, {b.i32(0)});  // a pointer: stays in the task
  Inst* l0 = b.global_load(p0);
  Inst* p = b.global_ptr(Scalar::F32, x, {i});
  b.global_store(p, op2(b, Op::Add, {a2, l0}));
  EXPECT_TRUE(licm(*k));
  expect_ir(*k, R"(kernel offloaded
  param p0 a: value f32
  slot $0: field f32 shape [16] field x
  %0:f32 = arg p0+0
  %1:i32 = const 0
  %2:i32 = const 16
  %3:f32 = mul %0, %0
  %4:i32 = const 0
  offload range_for %1, %2 {
    %6:i32 = loop_index %5.0
    %7:f32 = global_ptr $0.c0 %4
    %8:f32 = global_load %7
    %9:f32 = global_ptr $0.c0 %6
    %10:f32 = add %3, %8
    global_store %9, %10
  }
)",
            {.offloaded = true});
}

TEST(Licm, WhileLoopsRunOnceSoLoadsMayMove) {
  auto k = new_kernel("while_load");
  int x = add_field(*k, "x", Scalar::I32, {16});
  int y = add_field(*k, "y", Scalar::I32, {16});
  Builder b(k->body.get());
  Inst* v = b.alloca_(Scalar::I32);
  Inst* loop = b.while_();
  b.set_insert_end(loop->region(0));
  Inst* limit =
      b.global_load(b.global_ptr(Scalar::I32, x, {b.i32(0)}));  // hoisted with its pointer
  Inst* n = op2(b, Op::Add, {b.local_load(v), b.i32(1)});
  b.local_store(v, n);
  Inst* py = b.global_ptr(Scalar::I32, y, {n});
  b.global_store(py, limit);
  Inst* done = b.if_(b.binary(Op::Ge, n, limit));
  b.set_insert_end(done->region(0));
  b.make(Op::Break, Scalar::Void);
  EXPECT_TRUE(licm(*k));
  expect_ir(*k, R"(kernel while_load
  slot $0: field i32 shape [16] field x
  slot $1: field i32 shape [16] field y
  %0:i32 = alloca
  %1:i32 = const 0
  %2:i32 = global_ptr $0.c0 %1
  %3:i32 = global_load %2
  %4:i32 = const 1
  while {
    %6:i32 = local_load %0
    %7:i32 = add %6, %4
    local_store %0, %7
    %9:i32 = global_ptr $1.c0 %7
    global_store %9, %3
    %11:bool = ge %7, %3
    if %11 {
      break
    } else {
    }
  }
)");
}

TEST(Licm, NestedLoopsInsideTasksHoistWithinTheTask) {
  auto k = new_kernel("task_nest");
  int x = add_field(*k, "x", Scalar::F32, {8, 8});
  Builder b(k->body.get());
  Inst* zero = b.i32(0);
  Inst* eight = b.i32(8);
  Inst* task =
      b.make(Op::Offload, Scalar::Void, {zero, eight}, static_cast<int>(TaskKind::RangeFor), 1);
  task->regions.push_back(std::make_unique<Block>(task));
  b.set_insert_end(task->region(0));
  Inst* i = b.loop_index(task, 0);
  Inst* row = b.global_ptr(Scalar::F32, x, {i, zero});
  Inst* inner = b.range_for({zero, eight});
  b.set_insert_end(inner->region(0));
  Inst* j = b.loop_index(inner, 0);
  Inst* fi = b.cast(Scalar::F32, i);  // not uniform: stays in the task, leaves the loop
  Inst* base = b.global_load(row);    // x[i, 0]: written in the loop, stays
  Inst* p = b.global_ptr(Scalar::F32, x, {i, j});
  b.global_store(p, b.binary(Op::Add, fi, base));
  EXPECT_TRUE(licm(*k));
  expect_ir(*k, R"(kernel task_nest
  slot $0: field f32 shape [8, 8] field x
  %0:i32 = const 0
  %1:i32 = const 8
  offload range_for %0, %1 {
    %3:i32 = loop_index %2.0
    %4:f32 = global_ptr $0.c0 %3, %0
    %5:f32 = cast %3
    range_for %0, %1 {
      %7:i32 = loop_index %6.0
      %8:f32 = global_load %4
      %9:f32 = global_ptr $0.c0 %3, %7
      %10:f32 = add %5, %8
      global_store %9, %10
    }
  }
)",
            {.offloaded = true});
}
