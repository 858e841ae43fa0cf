#include "compiler/passes/full_simplify.h"

#include "runtime/common/error.h"
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
  Inst* br = b.if_(b.local_load(flag));  // true once forwarded
  b.set_insert_end(br->region(0));
  Inst* x = op2(b, Op::Add, {a, b.local_load(v)});
  Inst* y = op2(b, Op::Add, {b.local_load(v), a});  // same as x
  Inst* p = b.global_ptr(Scalar::I32, out, {b.i32(0)});
  b.global_store(p, op2(b, Op::Sub, {x, y}));  // 0
  b.set_insert_end(br->region(1));
  b.global_store(b.global_ptr(Scalar::I32, out, {a}), a);  // dead branch
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

namespace {

// v = 0; then `steps` times: if (v == i) v = i + 1 else v = 1000 + i. Every condition is
// known once the previous step is: the chain folds to out[0] = steps.
std::unique_ptr<Kernel> if_chain(int steps) {
  auto k = new_kernel("chain");
  int out = add_field(*k, "out", Scalar::I32, {1});
  Builder b(k->body.get());
  Inst* v = b.alloca_(Scalar::I32);
  b.local_store(v, b.i32(0));
  for (int i = 0; i < steps; ++i) {
    Inst* br = b.if_(op2(b, Op::Eq, {b.local_load(v), b.i32(i)}));
    b.set_insert_end(br->region(0));
    b.local_store(v, op2(b, Op::Add, {b.i32(i), b.i32(1)}));  // defined inside the branch
    b.set_insert_end(br->region(1));
    b.local_store(v, b.i32(1000 + i));
    b.set_insert_end(k->body.get());
  }
  b.global_store(b.global_ptr(Scalar::I32, out, {b.i32(0)}), b.local_load(v));
  return k;
}

int count_ops(Kernel& k, Op op) {
  int n = 0;
  walk(*k.body, [&](Inst& i) { n += i.op == op; });
  return n;
}

}  // namespace

TEST(FullSimplify, AChainOfVariableDependentIfsFoldsInOneCall) {
  auto k = if_chain(60);
  int rounds = 0;
  ir::VerifyOptions verify;
  EXPECT_TRUE(full_simplify(*k, {.verify = &verify, .rounds = &rounds}));
  EXPECT_EQ(count_ops(*k, Op::If), 0);
  EXPECT_LE(rounds, 4) << "each round used to resolve only one if";
  expect_ir(*k, R"(kernel chain
  slot $0: field i32 shape [1] field out
  %0:i32 = const 0
  %1:i32 = const 60
  %2:i32 = global_ptr $0.c0 %0
  global_store %2, %1
)");
  EXPECT_FALSE(full_simplify(*k));
}

TEST(FullSimplify, LongChainsStayFewRounds) {
  auto k = if_chain(2000);
  int rounds = 0;
  full_simplify(*k, {.rounds = &rounds});
  EXPECT_EQ(count_ops(*k, Op::If), 0);
  EXPECT_LE(rounds, 4);
}

TEST(FullSimplify, VerifiesAfterEverySubPassAndNamesIt) {
  auto k = new_kernel("broken");
  int out = add_field(*k, "out", Scalar::U8, {1});
  Builder b(k->body.get());
  Inst* c = b.const_int(Scalar::U8, 1);
  c->bits = 300;  // not in normal form: the first verification after a sub-pass sees it
  b.global_store(b.global_ptr(Scalar::U8, out, {b.i32(0)}), c);
  ir::VerifyOptions verify;
  try {
    full_simplify(*k, {.verify = &verify, .name = "full_simplify#2"});
    ADD_FAILURE() << "no error";
  } catch (const loom::InternalError& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "IR verification failed after full_simplify#2/constant_fold, round 1: "
                  "constant bits not in normal form"),
              std::string::npos)
        << e.what();
  }
}
