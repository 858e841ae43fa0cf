#include "compiler/passes/full_simplify.h"

#include "tests/passes/pass_test_util.h"

using namespace loom;
using namespace loom::ir;
using namespace loom::passes;
using namespace loom::passes::testing;

TEST(FullSimplify, ReachesAFixedPoint) {
  auto k = new_kernel("fixed_point");
  add_value_param(*k, "a", Scalar::I32);
  int out = add_field(*k, "out", Scalar::I32, {8});
  Builder b(k->body.get());
  Inst* a = b.arg(Scalar::I32, 0);
  Inst* v = b.alloca_(Scalar::I32);
  b.local_store(v, op2(b, Op::Mul, {b.i32(3), b.i32(4)}));  // 12 once folded
  Inst* flag = b.alloca_(Scalar::Bool);
  b.local_store(flag, op2(b, Op::Gt, {b.local_load(v), b.i32(10)}));
  Inst* br = b.if_(b.local_load(flag));                      // true once forwarded
  b.set_insert_end(br->region(0));
  Inst* x = op2(b, Op::Add, {a, b.local_load(v)});
  Inst* y = op2(b, Op::Add, {b.local_load(v), a});           // same as x
  Inst* p = b.global_ptr(Scalar::I32, out, {b.i32(0)});
  b.global_store(p, op2(b, Op::Sub, {x, y}));                // 0
  b.set_insert_end(br->region(1));
  b.global_store(b.global_ptr(Scalar::I32, out, {a}), a);   // dead branch
  EXPECT_TRUE(full_simplify(*k));
  expect_ir(*k, R"(kernel fixed_point
  param p0 a: value i32
  slot $0: field i32 shape [8] field out
  %0:i32 = const 0
  %1:i32 = global_ptr $0.c0 %0
  global_store %1, %0
)");
  EXPECT_FALSE(full_simplify(*k));
}
