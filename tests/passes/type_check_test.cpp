#include "compiler/passes/type_check.h"

#include "runtime/common/error.h"
#include "tests/passes/pass_test_util.h"

using namespace loom;
using namespace loom::ir;
using namespace loom::passes;
using namespace loom::passes::testing;

TEST(TypeCheck, InsertsImplicitConversions) {
  auto k = new_kernel("promote");
  add_value_param(*k, "n", Scalar::I32);
  add_value_param(*k, "s", Scalar::F32);
  add_value_param(*k, "big", Scalar::I64);
  add_value_param(*k, "flag", Scalar::Bool);
  int out = add_field(*k, "out", Scalar::F64, {4});
  Builder b(k->body.get());
  Inst* n = b.arg(Scalar::I32, 0);
  Inst* s = b.arg(Scalar::F32, 1);
  Inst* big = b.arg(Scalar::I64, 2);
  Inst* flag = b.arg(Scalar::Bool, 3);
  Inst* f = b.binary(Op::Mul, n, s);                            // i32 * f32 -> f32
  Inst* wide = b.binary(Op::Add, n, big);                       // i32 + i64 -> i64
  Inst* counted = b.binary(Op::Add, flag, n);                   // bool + i32 -> i32
  Inst* u = b.binary(Op::Sub, b.const_int(Scalar::U32, 1), n);  // u32 - i32 -> u32
  Inst* pick = b.select(flag, wide, f);                         // i64 / f32 -> f32
  Inst* root = b.unary(Op::Sqrt, counted);                      // int math -> f32
  Inst* v = b.alloca_(Scalar::I32);
  b.local_store(v, root);  // f32 stored into an i32 variable
  b.global_store(b.global_ptr(Scalar::F64, out, {b.const_bool(true)}), pick);
  b.binary(Op::Lt, u, b.const_int(Scalar::U32, 7));
  const char* before = R"(kernel promote
  param p0 n: value i32
  param p1 s: value f32
  param p2 big: value i64
  param p3 flag: value bool
  slot $0: field f64 shape [4] field out
  %0:i32 = arg p0+0
  %1:f32 = arg p1+0
  %2:i64 = arg p2+0
  %3:bool = arg p3+0
  %4:i32 = mul %0, %1
  %5:i32 = add %0, %2
  %6:bool = add %3, %0
  %7:u32 = const 1
  %8:u32 = sub %7, %0
  %9:i32 = select %3, %5, %4
  %10:bool = sqrt %6
  %11:i32 = alloca
  local_store %11, %10
  %13:bool = const true
  %14:f64 = global_ptr $0.c0 %13
  global_store %14, %9
  %16:u32 = const 7
  %17:bool = lt %8, %16
)";
  EXPECT_EQ(print_kernel(*k), before);
  EXPECT_TRUE(type_check(*k));
  expect_ir(*k, R"(kernel promote
  param p0 n: value i32
  param p1 s: value f32
  param p2 big: value i64
  param p3 flag: value bool
  slot $0: field f64 shape [4] field out
  %0:i32 = arg p0+0
  %1:f32 = arg p1+0
  %2:i64 = arg p2+0
  %3:bool = arg p3+0
  %4:f32 = cast %0
  %5:f32 = mul %4, %1
  %6:i64 = cast %0
  %7:i64 = add %6, %2
  %8:i32 = cast %3
  %9:i32 = add %8, %0
  %10:u32 = const 1
  %11:u32 = cast %0
  %12:u32 = sub %10, %11
  %13:f32 = cast %7
  %14:f32 = select %3, %13, %5
  %15:f32 = cast %9
  %16:f32 = sqrt %15
  %17:i32 = alloca
  %18:i32 = cast %16
  local_store %17, %18
  %20:bool = const true
  %21:i32 = cast %20
  %22:f64 = global_ptr $0.c0 %21
  %23:f64 = cast %14
  global_store %22, %23
  %25:u32 = const 7
  %26:bool = lt %12, %25
)");
  EXPECT_FALSE(type_check(*k));  // idempotent
}

TEST(TypeCheck, ConditionsBecomeBooleans) {
  auto k = new_kernel("conditions");
  add_value_param(*k, "n", Scalar::I32);
  Builder b(k->body.get());
  Inst* n = b.arg(Scalar::I32, 0);
  Inst* branch = b.if_(n);
  b.set_insert_end(branch->region(0));
  b.make(Op::Assert, Scalar::Void, {b.unary(Op::LogicNot, n)});
  b.set_insert_end(k->body.get());
  b.make(Op::LogicAnd, Scalar::Bool, {n, b.f32(0.5)});
  EXPECT_TRUE(type_check(*k));
  expect_ir(*k, R"(kernel conditions
  param p0 n: value i32
  %0:i32 = arg p0+0
  %1:i32 = const 0
  %2:bool = ne %0, %1
  if %2 {
    %4:i32 = const 0
    %5:bool = ne %0, %4
    %6:bool = not %5
    assert "" %6
  } else {
  }
  %8:f32 = const 0.5
  %9:i32 = const 0
  %10:bool = ne %0, %9
  %11:f32 = const 0.0
  %12:bool = ne %8, %11
  %13:bool = and %10, %12
)");
}

TEST(TypeCheck, FloatIndexIsAnErrorNamingTheNode) {
  auto k = new_kernel("bad_index");
  int x = add_field(*k, "x", Scalar::F32, {8});
  Builder b(k->body.get());
  b.set_node(42);
  b.global_load(b.global_ptr(Scalar::F32, x, {b.f32(1.5)}));
  try {
    type_check(*k);
    FAIL() << "expected loom::Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.place().kernel, "bad_index");
    EXPECT_EQ(e.place().node, 42);
    EXPECT_NE(std::string(e.what()).find("index is a float"), std::string::npos) << e.what();
  }
}

TEST(TypeCheck, BitOperationOnFloatsIsAnError) {
  auto k = new_kernel("bad_bits");
  Builder b(k->body.get());
  b.set_node(7);
  op2(b, Op::BitXor, {b.f32(1), b.i32(3)});
  EXPECT_THROW(type_check(*k), Error);
}

TEST(TypeCheck, BitcastBetweenWidthsIsAnError) {
  auto k = new_kernel("bad_bitcast");
  Builder b(k->body.get());
  b.make(Op::Bitcast, Scalar::F64, {b.i32(3)});
  EXPECT_THROW(type_check(*k), Error);
}

TEST(TypeCheck, ReturnValuesConvertToDeclaredTypes) {
  auto k = new_kernel("ret");
  k->abi.returns = {{Scalar::F32, 2, 1}};
  Builder b(k->body.get());
  auto r = std::make_unique<Inst>(Op::Return, Scalar::Void);
  r->operands = {b.i32(1), b.const_float(Scalar::F64, 2.5)};
  b.insert(std::move(r));
  EXPECT_TRUE(type_check(*k));
  expect_ir(*k, R"(kernel ret
  returns f32x2
  %0:i32 = const 1
  %1:f64 = const 2.5
  %2:f32 = cast %0
  %3:f32 = cast %1
  return %2, %3
)");
}

TEST(TypeCheck, ShiftAmountsAndTextureOperands) {
  auto k = new_kernel("shifts_textures");
  ResourceDesc tex;
  tex.kind = ResourceKind::Texture;
  tex.ndim = 2;
  k->abi.resources.push_back(tex);
  Builder b(k->body.get());
  Inst* x = b.const_int(Scalar::U8, 3);
  Inst* s = b.const_int(Scalar::I64, 2);
  Inst* shifted = b.binary(Op::Shl, x, s);  // the amount takes the shifted type
  auto sample = std::make_unique<Inst>(Op::TexSample, Scalar::F32);
  sample->operands = {b.i32(1), b.const_float(Scalar::F64, 0.5)};  // coordinates become f32
  Inst* texel = b.insert(std::move(sample));
  keep(b, *k, {shifted, texel});
  EXPECT_TRUE(type_check(*k));
  expect_ir(*k, R"(kernel shifts_textures
  slot $0: texture f32 shape [?, ?]
  returns u8
  returns f32
  %0:u8 = const 3
  %1:i64 = const 2
  %2:u8 = cast %1
  %3:u8 = shl %0, %2
  %4:i32 = const 1
  %5:f64 = const 0.5
  %6:f32 = cast %4
  %7:f32 = cast %5
  %8:f32 = tex_sample $0.c0 nearest clamp %6, %7
  return %3, %8
)");
}
