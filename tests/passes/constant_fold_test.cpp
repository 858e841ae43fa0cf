#include "compiler/passes/constant_fold.h"

#include <cmath>
#include <limits>

#include "tests/passes/pass_test_util.h"

using namespace loom;
using namespace loom::ir;
using namespace loom::passes;
using namespace loom::passes::testing;

TEST(ConstantFold, IntegersWrapAtTheirWidth) {
  auto k = new_kernel("wrap");
  Builder b(k->body.get());
  Inst* a = op2(b, Op::Add, {b.i32(2147483647), b.i32(1)});
  Inst* c = op2(b, Op::Add, {b.const_int(Scalar::U8, 200), b.const_int(Scalar::U8, 100)});
  Inst* d = op2(b, Op::Mul, {b.const_int(Scalar::I8, 100), b.const_int(Scalar::I8, 3)});
  Inst* e = b.unary(Op::Neg, b.const_int(Scalar::I16, -32768));
  Inst* f = op2(b, Op::Sub, {b.const_int(Scalar::U32, 0), b.const_int(Scalar::U32, 1)});
  Inst* g = b.unary(Op::BitNot, b.const_int(Scalar::U16, 0));
  Inst* h = op2(b, Op::Pow, {b.i32(3), b.i32(21)});
  Inst* l = b.make(Op::Fma, Scalar::I64,
                   {b.const_int(Scalar::I64, INT64_MAX), b.const_int(Scalar::I64, 2),
                    b.const_int(Scalar::I64, 3)});
  keep(b, *k, {a, c, d, e, f, g, h, l});
  EXPECT_TRUE(constant_fold(*k));
  expect_ir(*k, R"(kernel wrap
  returns i32
  returns u8
  returns i8
  returns i16
  returns u32
  returns u16
  returns i32
  returns i64
  %0:i32 = const 2147483647
  %1:i32 = const 1
  %2:i32 = const -2147483648
  %3:u8 = const 200
  %4:u8 = const 100
  %5:u8 = const 44
  %6:i8 = const 100
  %7:i8 = const 3
  %8:i8 = const 44
  %9:i16 = const -32768
  %10:i16 = const -32768
  %11:u32 = const 0
  %12:u32 = const 1
  %13:u32 = const 4294967295
  %14:u16 = const 0
  %15:u16 = const 65535
  %16:i32 = const 3
  %17:i32 = const 21
  %18:i32 = const 1870418611
  %19:i64 = const 9223372036854775807
  %20:i64 = const 2
  %21:i64 = const 3
  %22:i64 = const 1
  return %2, %5, %8, %10, %13, %15, %18, %22
)");
  EXPECT_FALSE(constant_fold(*k));
}

TEST(ConstantFold, DivisionTruncatesAndModIsFloored) {
  auto k = new_kernel("divmod");
  Builder b(k->body.get());
  Inst* q1 = op2(b, Op::Div, {b.i32(-7), b.i32(2)});
  Inst* q2 = op2(b, Op::Div, {b.i32(7), b.i32(-2)});
  Inst* m1 = op2(b, Op::Mod, {b.i32(-7), b.i32(3)});
  Inst* m2 = op2(b, Op::Mod, {b.i32(7), b.i32(-3)});
  Inst* m3 = op2(b, Op::Mod, {b.i32(-7), b.i32(-3)});
  Inst* m4 = op2(b, Op::Mod, {b.i32(6), b.i32(-3)});
  Inst* m5 = op2(b, Op::Mod, {b.const_int(Scalar::U32, 4294967289u), b.const_int(Scalar::U32, 10)});
  Inst* fm = op2(b, Op::Mod, {b.f32(-7), b.f32(3)});
  keep(b, *k, {q1, q2, m1, m2, m3, m4, m5, fm});
  EXPECT_TRUE(constant_fold(*k));
  expect_ir(*k, R"(kernel divmod
  returns i32
  returns i32
  returns i32
  returns i32
  returns i32
  returns i32
  returns u32
  returns f32
  %0:i32 = const -7
  %1:i32 = const 2
  %2:i32 = const -3
  %3:i32 = const 7
  %4:i32 = const -2
  %5:i32 = const -3
  %6:i32 = const -7
  %7:i32 = const 3
  %8:i32 = const 2
  %9:i32 = const 7
  %10:i32 = const -3
  %11:i32 = const -2
  %12:i32 = const -7
  %13:i32 = const -3
  %14:i32 = const -1
  %15:i32 = const 6
  %16:i32 = const -3
  %17:i32 = const 0
  %18:u32 = const 4294967289
  %19:u32 = const 10
  %20:u32 = const 9
  %21:f32 = const -7.0
  %22:f32 = const 3.0
  %23:f32 = const 2.0
  return %2, %5, %8, %11, %14, %17, %20, %23
)");
}

TEST(ConstantFold, UndefinedCasesAreLeftForRunTime) {
  auto k = new_kernel("undefined");
  Builder b(k->body.get());
  Inst* d0 = op2(b, Op::Div, {b.i32(5), b.i32(0)});
  Inst* m0 = op2(b, Op::Mod, {b.i32(5), b.i32(0)});
  Inst* ov = op2(b, Op::Div, {b.i32(INT32_MIN), b.i32(-1)});
  Inst* big = b.cast(Scalar::I32, b.f32(1e10));
  Inst* nan = b.cast(Scalar::I32, b.f32(std::numeric_limits<double>::quiet_NaN()));
  Inst* neg = op2(b, Op::Pow, {b.i32(2), b.i32(-1)});
  Inst* fdiv = op2(b, Op::Div, {b.f32(1), b.f32(0)});  // IEEE: folds to inf
  keep(b, *k, {d0, m0, ov, big, nan, neg, fdiv});
  EXPECT_TRUE(constant_fold(*k));
  expect_ir(*k, R"(kernel undefined
  returns i32
  returns i32
  returns i32
  returns i32
  returns i32
  returns i32
  returns f32
  %0:i32 = const 5
  %1:i32 = const 0
  %2:i32 = div %0, %1
  %3:i32 = const 5
  %4:i32 = const 0
  %5:i32 = mod %3, %4
  %6:i32 = const -2147483648
  %7:i32 = const -1
  %8:i32 = div %6, %7
  %9:f32 = const 1e+10
  %10:i32 = cast %9
  %11:f32 = const nan
  %12:i32 = cast %11
  %13:i32 = const 2
  %14:i32 = const -1
  %15:i32 = pow %13, %14
  %16:f32 = const 1.0
  %17:f32 = const 0.0
  %18:f32 = const inf
  return %2, %5, %8, %10, %12, %15, %18
)");
}

TEST(ConstantFold, FloatsRoundToTheirType) {
  auto k = new_kernel("floats");
  Builder b(k->body.get());
  Inst* s = op2(b, Op::Add, {b.f32(0.1), b.f32(0.2)});
  Inst* d = op2(b, Op::Add, {b.const_float(Scalar::F64, 0.1), b.const_float(Scalar::F64, 0.2)});
  Inst* r = b.unary(Op::Sqrt, b.f32(2));
  Inst* fl = b.unary(Op::Floor, b.f32(-2.5));
  Inst* ro = b.unary(Op::Round, b.f32(2.5));
  Inst* narrowed = b.cast(Scalar::F32, b.const_float(Scalar::F64, 1.0 / 3.0));
  Inst* fma = b.make(Op::Fma, Scalar::F32, {b.f32(2), b.f32(3), b.f32(1)});
  Inst* mn = op2(b, Op::Min, {b.f32(-1), b.f32(2)});
  keep(b, *k, {s, d, r, fl, ro, narrowed, fma, mn});
  EXPECT_TRUE(constant_fold(*k));
  expect_ir(*k, R"(kernel floats
  returns f32
  returns f64
  returns f32
  returns f32
  returns f32
  returns f32
  returns f32
  returns f32
  %0:f32 = const 0.100000001
  %1:f32 = const 0.200000003
  %2:f32 = const 0.300000012
  %3:f64 = const 0.1
  %4:f64 = const 0.2
  %5:f64 = const 0.3
  %6:f32 = const 2.0
  %7:f32 = const 1.41421354
  %8:f32 = const -2.5
  %9:f32 = const -3.0
  %10:f32 = const 2.5
  %11:f32 = const 3.0
  %12:f64 = const 0.333333333
  %13:f32 = const 0.333333343
  %14:f32 = const 2.0
  %15:f32 = const 3.0
  %16:f32 = const 1.0
  %17:f32 = const 7.0
  %18:f32 = const -1.0
  %19:f32 = const 2.0
  %20:f32 = const -1.0
  return %2, %5, %7, %9, %11, %13, %17, %20
)");
}

TEST(ConstantFold, ShiftsCastsComparisons) {
  auto k = new_kernel("misc");
  Builder b(k->body.get());
  Inst* shl = op2(b, Op::Shl, {b.i32(1), b.i32(33)});  // amount masked to 1
  Inst* sar = op2(b, Op::Shr, {b.i32(-8), b.i32(1)});
  Inst* shr = op2(b, Op::Shr, {b.const_int(Scalar::U32, 4294967288u), b.const_int(Scalar::U32, 1)});
  Inst* ult = op2(b, Op::Lt, {b.const_int(Scalar::U32, 1), b.const_int(Scalar::U32, 4294967295u)});
  Inst* slt = op2(b, Op::Lt, {b.i32(1), b.i32(-1)});
  Inst* nan = b.f32(std::numeric_limits<double>::quiet_NaN());
  Inst* ne = b.binary(Op::Ne, nan, nan);
  Inst* eq = b.binary(Op::Eq, nan, nan);
  Inst* trunc = b.cast(Scalar::I32, b.f32(-3.7));
  Inst* u8 = b.cast(Scalar::U8, b.i32(-1));
  Inst* sext = b.cast(Scalar::I64, b.const_int(Scalar::I8, -5));
  Inst* bits = b.make(Op::Bitcast, Scalar::I32, {b.f32(1)});
  Inst* back = b.make(Op::Bitcast, Scalar::F32, {b.i32(1065353216)});
  Inst* no = b.const_bool(false);
  Inst* one = b.i32(1);
  Inst* sel = b.select(no, one, b.i32(2));
  Inst* notb = b.unary(Op::LogicNot, b.const_bool(false));
  keep(b, *k, {shl, sar, shr, ult, slt, ne, eq, trunc, u8, sext, bits, back, sel, notb});
  EXPECT_TRUE(constant_fold(*k));
  expect_ir(*k, R"(kernel misc
  returns i32
  returns i32
  returns u32
  returns bool
  returns bool
  returns bool
  returns bool
  returns i32
  returns u8
  returns i64
  returns i32
  returns f32
  returns i32
  returns bool
  %0:i32 = const 1
  %1:i32 = const 33
  %2:i32 = const 2
  %3:i32 = const -8
  %4:i32 = const 1
  %5:i32 = const -4
  %6:u32 = const 4294967288
  %7:u32 = const 1
  %8:u32 = const 2147483644
  %9:u32 = const 1
  %10:u32 = const 4294967295
  %11:bool = const true
  %12:i32 = const 1
  %13:i32 = const -1
  %14:bool = const false
  %15:f32 = const nan
  %16:bool = const true
  %17:bool = const false
  %18:f32 = const -3.70000005
  %19:i32 = const -3
  %20:i32 = const -1
  %21:u8 = const 255
  %22:i8 = const -5
  %23:i64 = const -5
  %24:f32 = const 1.0
  %25:i32 = const 1065353216
  %26:i32 = const 1065353216
  %27:f32 = const 1.0
  %28:bool = const false
  %29:i32 = const 1
  %30:i32 = const 2
  %31:i32 = const 2
  %32:bool = const false
  %33:bool = const true
  return %2, %5, %8, %11, %14, %16, %17, %19, %21, %23, %25, %27, %31, %33
)");
}

TEST(ConstantFold, FloatModMatchesTheBackendsFmodFormula) {
  auto k = new_kernel("fmod");
  Builder b(k->body.get());
  Inst* m = op2(b, Op::Mod, {b.const_float(Scalar::F64, -0.5), b.const_float(Scalar::F64, 0.2)});
  Inst* m32 = op2(b, Op::Mod, {b.f32(5.5), b.f32(-2)});
  EXPECT_TRUE(constant_fold(*k));
  ASSERT_TRUE(m->is_const());
  EXPECT_EQ(m->float_value(), std::fmod(-0.5, 0.2) + 0.2);  // not -0.5 - 0.2 * floor(-2.5)
  EXPECT_EQ(m32->float_value(), -0.5);
  auto direct = evaluate_constant(Op::Mod, Scalar::I32,
                                  {{Scalar::I32, static_cast<uint64_t>(-7)}, {Scalar::I32, 3}});
  ASSERT_TRUE(direct.has_value());
  EXPECT_EQ(static_cast<int64_t>(*direct), 2);
  EXPECT_FALSE(
      evaluate_constant(Op::Div, Scalar::I32, {{Scalar::I32, 1}, {Scalar::I32, 0}}).has_value());
}
