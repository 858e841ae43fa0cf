#include "compiler/passes/algebraic_simplify.h"

#include "tests/passes/pass_test_util.h"

using namespace loom;
using namespace loom::ir;
using namespace loom::passes;
using namespace loom::passes::testing;

namespace {

std::unique_ptr<Kernel> with_args(const char* name) {
  auto k = new_kernel(name);
  add_value_param(*k, "x", Scalar::I32);
  add_value_param(*k, "f", Scalar::F32);
  add_value_param(*k, "u", Scalar::U32);
  add_value_param(*k, "c", Scalar::Bool);
  return k;
}

}  // namespace

TEST(AlgebraicSimplify, IntegerIdentities) {
  auto k = with_args("int_identities");
  Builder b(k->body.get());
  Inst* x = b.arg(Scalar::I32, 0);
  Inst* zero = b.i32(0);
  Inst* one = b.i32(1);
  Inst* add0 = op2(b, Op::Add, {zero, x});  // 0 + x: constant moves right, then x
  Inst* mul1 = b.binary(Op::Mul, x, one);
  Inst* mul0 = b.binary(Op::Mul, x, zero);
  Inst* sub = b.binary(Op::Sub, x, x);
  Inst* div1 = b.binary(Op::Div, x, one);
  Inst* band = b.binary(Op::BitAnd, x, x);
  Inst* bor = b.binary(Op::BitOr, x, zero);
  Inst* bxor = b.binary(Op::BitXor, x, x);
  Inst* eq = b.binary(Op::Eq, x, x);
  Inst* lt = b.binary(Op::Lt, x, x);
  Inst* negneg = b.unary(Op::Neg, b.unary(Op::Neg, x));
  Inst* notnot = b.unary(Op::BitNot, b.unary(Op::BitNot, x));
  Inst* same = b.cast(Scalar::I32, x);
  Inst* mn = b.binary(Op::Min, x, x);
  keep(b, *k, {add0, mul1, mul0, sub, div1, band, bor, bxor, eq, lt, negneg, notnot, same, mn});
  EXPECT_TRUE(algebraic_simplify(*k));
  expect_ir(*k, R"(kernel int_identities
  param p0 x: value i32
  param p1 f: value f32
  param p2 u: value u32
  param p3 c: value bool
  returns i32
  returns i32
  returns i32
  returns i32
  returns i32
  returns i32
  returns i32
  returns i32
  returns bool
  returns bool
  returns i32
  returns i32
  returns i32
  returns i32
  %0:i32 = arg p0+0
  %1:i32 = const 0
  %2:i32 = const 1
  %3:i32 = const 0
  %4:i32 = const 0
  %5:bool = const true
  %6:bool = const false
  %7:i32 = neg %0
  %8:i32 = bit_not %0
  return %0, %0, %1, %3, %0, %0, %0, %4, %5, %6, %0, %0, %0, %0
)");
}

TEST(AlgebraicSimplify, FloatsKeepIeeeResults) {
  auto k = with_args("float_identities");
  k->fast_math = false;
  Builder b(k->body.get());
  Inst* f = b.arg(Scalar::F32, 1);
  Inst* zero = b.f32(0);
  Inst* mul0 = b.binary(Op::Mul, f, zero);  // NaN * 0 is NaN, -1 * 0 is -0: stays
  Inst* sub = b.binary(Op::Sub, f, f);      // inf - inf is NaN: stays
  Inst* add0 = b.binary(Op::Add, f, zero);  // -0 + 0 is +0: stays without fast math
  Inst* sub0 = b.binary(Op::Sub, f, zero);  // exact: f
  Inst* mul1 = b.binary(Op::Mul, f, b.f32(1));
  Inst* eq = b.binary(Op::Eq, f, f);             // NaN != NaN: stays
  Inst* half = b.binary(Op::Div, f, b.f32(4));   // exact: f * 0.25
  Inst* third = b.binary(Op::Div, f, b.f32(3));  // stays
  Inst* neg = b.binary(Op::Mul, f, b.f32(-1));
  keep(b, *k, {mul0, sub, add0, sub0, mul1, eq, half, third, neg});
  EXPECT_TRUE(algebraic_simplify(*k));
  expect_ir(*k, R"(kernel float_identities
  param p0 x: value i32
  param p1 f: value f32
  param p2 u: value u32
  param p3 c: value bool
  returns f32
  returns f32
  returns f32
  returns f32
  returns f32
  returns bool
  returns f32
  returns f32
  returns f32
  %0:f32 = arg p1+0
  %1:f32 = const 0.0
  %2:f32 = mul %0, %1
  %3:f32 = sub %0, %0
  %4:f32 = add %0, %1
  %5:f32 = const 1.0
  %6:bool = eq %0, %0
  %7:f32 = const 4.0
  %8:f32 = const 0.25
  %9:f32 = mul %0, %8
  %10:f32 = const 3.0
  %11:f32 = div %0, %10
  %12:f32 = const -1.0
  %13:f32 = neg %0
  return %2, %3, %4, %0, %0, %6, %9, %11, %13
)");
}

TEST(AlgebraicSimplify, StrengthReduction) {
  auto k = with_args("strength");
  Builder b(k->body.get());
  Inst* x = b.arg(Scalar::I32, 0);
  Inst* u = b.arg(Scalar::U32, 2);
  Inst* mul = b.binary(Op::Mul, u, b.const_int(Scalar::U32, 8));
  Inst* div = b.binary(Op::Div, u, b.const_int(Scalar::U32, 16));
  Inst* sdiv = b.binary(Op::Div, x, b.i32(16));  // truncating: not a shift for signed
  Inst* mod = b.binary(Op::Mod, x, b.i32(8));    // floored mod by 2^k: a mask, even signed
  Inst* pw = b.binary(Op::Pow, x, b.i32(2));
  keep(b, *k, {mul, div, sdiv, mod, pw});
  EXPECT_TRUE(algebraic_simplify(*k));
  expect_ir(*k, R"(kernel strength
  param p0 x: value i32
  param p1 f: value f32
  param p2 u: value u32
  param p3 c: value bool
  returns u32
  returns u32
  returns i32
  returns i32
  returns i32
  %0:i32 = arg p0+0
  %1:u32 = arg p2+0
  %2:u32 = const 8
  %3:u32 = const 3
  %4:u32 = shl %1, %3
  %5:u32 = const 16
  %6:u32 = const 4
  %7:u32 = shr %1, %6
  %8:i32 = const 16
  %9:i32 = div %0, %8
  %10:i32 = const 8
  %11:i32 = const 7
  %12:i32 = bit_and %0, %11
  %13:i32 = const 2
  %14:i32 = mul %0, %0
  return %4, %7, %9, %12, %14
)");
}

TEST(AlgebraicSimplify, SelectsLogicAndCasts) {
  auto k = with_args("select_logic");
  Builder b(k->body.get());
  Inst* x = b.arg(Scalar::I32, 0);
  Inst* f = b.arg(Scalar::F32, 1);
  Inst* c = b.arg(Scalar::Bool, 3);
  Inst* s1 = b.select(c, x, x);
  Inst* yes = b.const_bool(true);
  Inst* five = b.i32(5);
  Inst* s2 = b.select(yes, x, five);
  Inst* s3 = b.select(b.unary(Op::LogicNot, c), x, five);
  Inst* notnot = b.unary(Op::LogicNot, b.unary(Op::LogicNot, c));
  Inst* notlt = b.unary(Op::LogicNot, op2(b, Op::Lt, {x, b.i32(3)}));
  Inst* and_true = b.binary(Op::LogicAnd, c, b.const_bool(true));
  Inst* widen = b.cast(Scalar::I64, b.cast(Scalar::I32, b.cast(Scalar::I16, x)));  // i16->i32 exact
  Inst* lossy = b.cast(Scalar::F32, b.cast(Scalar::I32, f));  // truncation: stays
  Inst* bits = b.make(Op::Bitcast, Scalar::F32, {b.make(Op::Bitcast, Scalar::I32, {f})});
  keep(b, *k, {s1, s2, s3, notnot, notlt, and_true, widen, lossy, bits});
  EXPECT_TRUE(algebraic_simplify(*k));
  expect_ir(*k, R"(kernel select_logic
  param p0 x: value i32
  param p1 f: value f32
  param p2 u: value u32
  param p3 c: value bool
  returns i32
  returns i32
  returns i32
  returns bool
  returns bool
  returns bool
  returns i64
  returns f32
  returns f32
  %0:i32 = arg p0+0
  %1:f32 = arg p1+0
  %2:bool = arg p3+0
  %3:bool = const true
  %4:i32 = const 5
  %5:bool = not %2
  %6:i32 = select %2, %4, %0
  %7:bool = not %2
  %8:i32 = const 3
  %9:bool = lt %0, %8
  %10:bool = ge %0, %8
  %11:bool = const true
  %12:i16 = cast %0
  %13:i32 = cast %12
  %14:i64 = cast %12
  %15:i32 = cast %1
  %16:f32 = cast %15
  %17:i32 = bitcast %1
  return %0, %0, %6, %2, %10, %2, %14, %16, %1
)");
}

TEST(AlgebraicSimplify, ConstantIfKeepsTakenBranch) {
  auto k = new_kernel("const_if");
  int out = add_field(*k, "out", Scalar::I32, {4});
  Builder b(k->body.get());
  Inst* br = b.if_(b.const_bool(false));
  b.set_insert_end(br->region(0));
  Inst* p0 = b.global_ptr(Scalar::I32, out, {b.i32(0)});
  b.global_store(p0, b.i32(1));
  b.set_insert_end(br->region(1));
  Inst* p1 = b.global_ptr(Scalar::I32, out, {b.i32(1)});
  b.global_store(p1, b.i32(2));
  EXPECT_TRUE(algebraic_simplify(*k));
  expect_ir(*k, R"(kernel const_if
  slot $0: field i32 shape [4] field out
  %0:bool = const false
  %1:i32 = const 1
  %2:i32 = global_ptr $0.c0 %1
  %3:i32 = const 2
  global_store %2, %3
)");
}
