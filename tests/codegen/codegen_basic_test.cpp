// Arithmetic, control flow, loops and returns through the LLVM backend and the CPU runtime.
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <limits>

#include "runtime/host/field.h"
#include "runtime/host/ndarray.h"
#include "tests/codegen/harness.h"

using namespace loom;
using namespace loom::test;

namespace {

// y[i] = a * x[i] + y[i] over a 1-d range.
std::unique_ptr<ir::Kernel> saxpy_kernel() {
  auto k = std::make_unique<ir::Kernel>();
  k->abi.name = "saxpy";
  k->abi.params.push_back(value_param("a", {Scalar::F32}));
  int x = add_ndarray(*k, "x", Scalar::F32);
  int y = add_ndarray(*k, "y", Scalar::F32);
  Builder b(k->body.get());
  Inst* a = b.arg(Scalar::F32, 0);
  Inst* n = shape(b, x, 0);
  Inst* task = range(b, {b.i32(0), n});
  b.set_insert_end(task->region(0));
  Inst* i = b.loop_index(task, 0);
  Inst* yi = load(b, Scalar::F32, y, i);
  store(b, y, i, b.binary(Op::Add, b.binary(Op::Mul, a, load(b, Scalar::F32, x, i)), yi));
  return k;
}

}  // namespace

TEST(CpuCodegen, Saxpy) {
  auto k = saxpy_kernel();
  auto kernel = compile_and_load(*k);
  ASSERT_EQ(kernel->tasks.size(), 1u);
  const int64_t n = 100003;
  host::Ndarray x(Scalar::F32, {n}), y(Scalar::F32, {n});
  for (int64_t i = 0; i < n; ++i) {
    x.data_as<float>()[i] = static_cast<float>(i) * 0.5f;
    y.data_as<float>()[i] = static_cast<float>(i % 7);
  }
  host::LaunchFrame frame(kernel->abi);
  frame.set_value<float>(0, 3.0f);
  frame.set_ndarray(1, x);
  frame.set_ndarray(2, y);
  test_device().launch(*kernel, frame.context());
  for (int64_t i = 0; i < n; ++i)
    ASSERT_FLOAT_EQ(y.data_as<float>()[i],
                    3.0f * static_cast<float>(i) * 0.5f + static_cast<float>(i % 7))
        << i;
}

TEST(CpuCodegen, SaxpyInnerLoopIsVectorised) {
  auto k = saxpy_kernel();
  std::string text = codegen::dump_llvm_ir(*k);
  EXPECT_NE(text.find("x float>"), std::string::npos) << text;
  EXPECT_NE(text.find("loom_saxpy_task0_extent"), std::string::npos);
}

TEST(CpuCodegen, Stencil2dOnFields) {
  const int64_t H = 67, W = 131;
  auto k = std::make_unique<ir::Kernel>();
  k->abi.name = "stencil";
  int u = add_field(*k, "u", Scalar::F32, {H, W});
  int v = add_field(*k, "v", Scalar::F32, {H, W});
  Builder b(k->body.get());
  Inst* one = b.i32(1);
  Inst* hm1 = b.binary(Op::Sub, shape(b, u, 0), one);
  Inst* wm1 = b.binary(Op::Sub, shape(b, u, 1), one);
  Inst* task = range(b, {one, hm1, one, wm1});
  b.set_insert_end(task->region(0));
  Inst* i = b.cast(Scalar::I64, b.loop_index(task, 0));
  Inst* j = b.cast(Scalar::I64, b.loop_index(task, 1));
  Inst* w = b.const_int(Scalar::I64, W);
  Inst* c = b.binary(Op::Add, b.binary(Op::Mul, i, w), j);
  Inst* one64 = b.const_int(Scalar::I64, 1);
  auto at = [&](Inst* idx) { return load(b, Scalar::F32, u, idx); };
  Inst* sum =
      b.binary(Op::Add, b.binary(Op::Add, at(b.binary(Op::Sub, c, w)), at(b.binary(Op::Add, c, w))),
               b.binary(Op::Add, at(b.binary(Op::Sub, c, one64)), at(b.binary(Op::Add, c, one64))));
  store(b, v, c, b.binary(Op::Sub, b.binary(Op::Mul, b.f32(0.25), sum), at(c)));
  std::string text = codegen::dump_llvm_ir(*k);
  EXPECT_NE(text.find("x float>"), std::string::npos) << "inner loop not vectorised\n" << text;
  if (std::getenv("LOOM_DUMP_IR")) std::cout << text;
  auto kernel = compile_and_load(*k);

  host::Field fu(FieldDesc{"u", {Scalar::F32}, {H, W}, Layout::AoS});
  host::Field fv(FieldDesc{"v", {Scalar::F32}, {H, W}, Layout::AoS});
  for (int64_t e = 0; e < H * W; ++e)
    fu.data_as<float>()[e] = static_cast<float>((e * 37) % 101) * 0.1f;
  host::LaunchFrame frame(kernel->abi);
  frame.bind_field("u", fu);
  frame.bind_field("v", fv);
  test_device().launch(*kernel, frame.context());
  const float* U = fu.data_as<float>();
  for (int64_t r = 0; r < H; ++r)
    for (int64_t q = 0; q < W; ++q) {
      float expect = 0;
      if (r > 0 && r < H - 1 && q > 0 && q < W - 1) {
        int64_t e = r * W + q;
        expect = 0.25f * ((U[e - W] + U[e + W]) + (U[e - 1] + U[e + 1])) - U[e];
      }
      ASSERT_NEAR(fv.data_as<float>()[r * W + q], expect, 1e-5f) << r << "," << q;
    }
}

TEST(CpuCodegen, StructForOverField) {
  const int64_t H = 9, W = 33;
  auto k = std::make_unique<ir::Kernel>();
  k->abi.name = "iota2d";
  int f = add_field(*k, "f", Scalar::I32, {H, W});
  Builder b(k->body.get());
  Inst* task = offload(b, ir::TaskKind::StructFor, {}, f);
  b.set_insert_end(task->region(0));
  Inst* i = b.loop_index(task, 0);
  Inst* j = b.loop_index(task, 1);
  Inst* lin = b.binary(Op::Add, b.binary(Op::Mul, i, b.i32(W)), j);
  store(b, f, lin, b.binary(Op::Add, b.binary(Op::Mul, i, b.i32(1000)), j));
  auto kernel = compile_and_load(*k);
  host::Field field(FieldDesc{"f", {Scalar::I32}, {H, W}, Layout::AoS});
  host::LaunchFrame frame(kernel->abi);
  frame.bind_field("f", field);
  test_device().launch(*kernel, frame.context());
  for (int64_t r = 0; r < H; ++r)
    for (int64_t q = 0; q < W; ++q) ASSERT_EQ(field.data_as<int32_t>()[r * W + q], r * 1000 + q);
}

TEST(CpuCodegen, SerialReturnsScalarsAndVector) {
  auto k = std::make_unique<ir::Kernel>();
  k->abi.name = "returns";
  k->abi.params.push_back(value_param("n", {Scalar::I32}));
  k->abi.returns = {{Scalar::I32}, {Scalar::F32}, {Scalar::F32, 3, 1}};
  Builder b(k->body.get());
  Inst* n = b.arg(Scalar::I32, 0);
  Inst* task = serial(b);
  b.set_insert_end(task->region(0));
  Inst* twice = b.binary(Op::Mul, n, b.i32(2));
  Inst* half = b.binary(Op::Div, b.cast(Scalar::F32, n), b.f32(2));
  b.make(Op::Return, Scalar::Void, {twice, half, b.f32(1), b.f32(2), b.f32(3)});
  auto kernel = compile_and_load(*k);
  host::LaunchFrame frame(kernel->abi);
  frame.set_value<int32_t>(0, 21);
  test_device().launch(*kernel, frame.context());
  EXPECT_EQ(frame.returned<int32_t>(0), 42);
  EXPECT_FLOAT_EQ(frame.returned<float>(1), 10.5f);
  EXPECT_FLOAT_EQ(frame.returned<float>(2), 1.0f);
  EXPECT_FLOAT_EQ(frame.returned<float>(3), 2.0f);
  EXPECT_FLOAT_EQ(frame.returned<float>(4), 3.0f);
}

// sum of i in [0, n) with i % 3 != 0, by While/If/Break/Continue over locals; an early
// Return inside an If when n is negative.
TEST(CpuCodegen, WhileIfBreakContinueWithLocals) {
  auto k = std::make_unique<ir::Kernel>();
  k->abi.name = "loop";
  k->abi.params.push_back(value_param("n", {Scalar::I32}));
  k->abi.returns = {{Scalar::I32}};
  Builder b(k->body.get());
  Inst* n = b.arg(Scalar::I32, 0);
  Inst* task = serial(b);
  b.set_insert_end(task->region(0));
  Inst* negative = b.if_(b.binary(Op::Lt, n, b.i32(0)));
  b.set_insert_end(negative->region(0));
  b.make(Op::Return, Scalar::Void, {b.i32(-1)});
  b.set_insert_end(task->region(0));
  Inst* sum = b.alloca_(Scalar::I32);
  Inst* i = b.alloca_(Scalar::I32);
  Inst* loop = b.while_();
  b.set_insert_end(loop->region(0));
  Inst* iv = b.local_load(i);
  Inst* done = b.if_(b.binary(Op::Ge, iv, n));
  b.set_insert_end(done->region(0));
  b.make(Op::Break, Scalar::Void);
  b.set_insert_end(loop->region(0));
  b.local_store(i, b.binary(Op::Add, iv, b.i32(1)));
  Inst* skip = b.if_(b.binary(Op::Eq, b.binary(Op::Mod, iv, b.i32(3)), b.i32(0)));
  b.set_insert_end(skip->region(0));
  b.make(Op::Continue, Scalar::Void);
  b.set_insert_end(loop->region(0));
  b.local_store(sum, b.binary(Op::Add, b.local_load(sum), iv));
  b.set_insert_end(task->region(0));
  b.make(Op::Return, Scalar::Void, {b.local_load(sum)});
  auto kernel = compile_and_load(*k);
  for (int n_value : {-5, 0, 1, 10, 1000}) {
    host::LaunchFrame frame(kernel->abi);
    frame.set_value<int32_t>(0, n_value);
    test_device().launch(*kernel, frame.context());
    int expect = 0;
    for (int q = 0; q < n_value; ++q)
      if (q % 3 != 0) expect += q;
    if (n_value < 0) expect = -1;
    EXPECT_EQ(frame.returned<int32_t>(0), expect) << n_value;
  }
}

// A serial task with a nested 2-d RangeFor and Continue in it.
TEST(CpuCodegen, NestedRangeForInSerialTask) {
  auto k = std::make_unique<ir::Kernel>();
  k->abi.name = "nested";
  k->abi.returns = {{Scalar::I64}};
  Builder b(k->body.get());
  Inst* task = serial(b);
  b.set_insert_end(task->region(0));
  Inst* acc = b.alloca_(Scalar::I64);
  Inst* loop = b.range_for({b.i32(0), b.i32(10), b.i32(-3), b.i32(4)});
  b.set_insert_end(loop->region(0));
  Inst* i = b.loop_index(loop, 0);
  Inst* j = b.loop_index(loop, 1);
  Inst* skip = b.if_(b.binary(Op::Eq, j, b.i32(0)));
  b.set_insert_end(skip->region(0));
  b.make(Op::Continue, Scalar::Void);
  b.set_insert_end(loop->region(0));
  Inst* term = b.cast(Scalar::I64, b.binary(Op::Mul, i, j));
  b.local_store(acc, b.binary(Op::Add, b.local_load(acc),
                              b.binary(Op::Add, term, b.const_int(Scalar::I64, 100))));
  b.set_insert_end(task->region(0));
  b.make(Op::Return, Scalar::Void, {b.local_load(acc)});
  auto kernel = compile_and_load(*k);
  host::LaunchFrame frame(kernel->abi);
  test_device().launch(*kernel, frame.context());
  int64_t expect = 0;
  for (int q = 0; q < 10; ++q)
    for (int r = -3; r < 4; ++r)
      if (r != 0) expect += q * r + 100;
  EXPECT_EQ(frame.returned<int64_t>(0), expect);
}

namespace {

// out[i] = op(a[i], b[i]) over ndarrays of `type`.
template <typename T>
std::vector<T> run_binary(Op op, Scalar type, const std::vector<T>& a, const std::vector<T>& c) {
  auto k = std::make_unique<ir::Kernel>();
  k->abi.name = std::string("binary_") + std::string(ir::op_name(op));
  int sa = add_ndarray(*k, "a", type);
  int sb = add_ndarray(*k, "b", type);
  int so = add_ndarray(*k, "out", type);
  Builder b(k->body.get());
  Inst* task = range(b, {b.i32(0), shape(b, sa, 0)});
  b.set_insert_end(task->region(0));
  Inst* i = b.loop_index(task, 0);
  store(b, so, i, b.binary(op, load(b, type, sa, i), load(b, type, sb, i)));
  auto kernel = compile_and_load(*k);
  auto n = static_cast<int64_t>(a.size());
  std::vector<T> av = a, cv = c, out(a.size());
  host::Ndarray na(av.data(), type, {n}), nb(cv.data(), type, {n}), no(out.data(), type, {n});
  host::LaunchFrame frame(kernel->abi);
  frame.set_ndarray(0, na);
  frame.set_ndarray(1, nb);
  frame.set_ndarray(2, no);
  test_device().launch(*kernel, frame.context());
  return out;
}

template <typename T>
std::vector<T> run_unary(Op op, Scalar type, const std::vector<T>& a) {
  auto k = std::make_unique<ir::Kernel>();
  k->abi.name = std::string("unary_") + std::string(ir::op_name(op));
  int sa = add_ndarray(*k, "a", type);
  int so = add_ndarray(*k, "out", type);
  Builder b(k->body.get());
  Inst* task = range(b, {b.i32(0), shape(b, sa, 0)});
  b.set_insert_end(task->region(0));
  Inst* i = b.loop_index(task, 0);
  store(b, so, i, b.unary(op, load(b, type, sa, i)));
  auto kernel = compile_and_load(*k);
  auto n = static_cast<int64_t>(a.size());
  std::vector<T> av = a, out(a.size());
  host::Ndarray na(av.data(), type, {n}), no(out.data(), type, {n});
  host::LaunchFrame frame(kernel->abi);
  frame.set_ndarray(0, na);
  frame.set_ndarray(1, no);
  test_device().launch(*kernel, frame.context());
  return out;
}

}  // namespace

TEST(CpuCodegen, IntegerDivisionTruncatesAndModIsFloored) {
  std::vector<int32_t> a, c;
  for (int x = -9; x <= 9; ++x)
    for (int y : {-4, -3, -1, 1, 2, 5}) {
      a.push_back(x);
      c.push_back(y);
    }
  auto div = run_binary<int32_t>(Op::Div, Scalar::I32, a, c);
  auto mod = run_binary<int32_t>(Op::Mod, Scalar::I32, a, c);
  for (size_t q = 0; q < a.size(); ++q) {
    EXPECT_EQ(div[q], a[q] / c[q]) << a[q] << " / " << c[q];
    int32_t m = a[q] % c[q];
    if (m != 0 && ((m < 0) != (c[q] < 0))) m += c[q];
    EXPECT_EQ(mod[q], m) << a[q] << " % " << c[q];
  }
  std::vector<float> fa, fc;
  for (float x : {-7.5f, -1.25f, 0.0f, 2.5f, 9.0f})
    for (float y : {-2.0f, 0.75f, 3.0f}) {
      fa.push_back(x);
      fc.push_back(y);
    }
  auto fmod_out = run_binary<float>(Op::Mod, Scalar::F32, fa, fc);
  for (size_t q = 0; q < fa.size(); ++q)
    EXPECT_NEAR(fmod_out[q], fa[q] - fc[q] * std::floor(fa[q] / fc[q]), 1e-5f)
        << fa[q] << " % " << fc[q];
  // Division by zero and MIN / -1 do not trap.
  std::vector<int32_t> za{5, -5, INT32_MIN, INT32_MIN}, zc{0, 0, -1, -1};
  auto zdiv = run_binary<int32_t>(Op::Div, Scalar::I32, za, zc);
  auto zmod = run_binary<int32_t>(Op::Mod, Scalar::I32, za, zc);
  EXPECT_EQ(zdiv, (std::vector<int32_t>{0, 0, INT32_MIN, INT32_MIN}));
  EXPECT_EQ(zmod, (std::vector<int32_t>{0, 0, 0, 0}));
  EXPECT_EQ(run_binary<uint32_t>(Op::Div, Scalar::U32, {7u}, {0u}), (std::vector<uint32_t>{0u}));
  std::vector<uint32_t> ua{7, 100, 5}, uc{2, 7, 9};
  auto umod = run_binary<uint32_t>(Op::Mod, Scalar::U32, ua, uc);
  auto udiv = run_binary<uint32_t>(Op::Div, Scalar::U32, ua, uc);
  for (size_t q = 0; q < ua.size(); ++q) {
    EXPECT_EQ(umod[q], ua[q] % uc[q]);
    EXPECT_EQ(udiv[q], ua[q] / uc[q]);
  }
}

TEST(CpuCodegen, ShiftsAndBitOps) {
  std::vector<int32_t> a{-64, 64, -1, 12345}, c{3, 3, 31, 4};
  auto shr = run_binary<int32_t>(Op::Shr, Scalar::I32, a, c);
  auto shl = run_binary<int32_t>(Op::Shl, Scalar::I32, a, c);
  auto band = run_binary<int32_t>(Op::BitAnd, Scalar::I32, a, c);
  auto bxor = run_binary<int32_t>(Op::BitXor, Scalar::I32, a, c);
  for (size_t q = 0; q < a.size(); ++q) {
    EXPECT_EQ(shr[q], a[q] >> c[q]);
    EXPECT_EQ(shl[q], static_cast<int32_t>(static_cast<uint32_t>(a[q]) << c[q]));
    EXPECT_EQ(band[q], a[q] & c[q]);
    EXPECT_EQ(bxor[q], a[q] ^ c[q]);
  }
  std::vector<uint32_t> ua{0x80000000u, 256u}, uc{4, 8};
  auto ushr = run_binary<uint32_t>(Op::Shr, Scalar::U32, ua, uc);
  EXPECT_EQ(ushr[0], 0x08000000u);
  EXPECT_EQ(ushr[1], 1u);
  auto ipow = run_binary<int32_t>(Op::Pow, Scalar::I32, {2, 3, -2, 7}, {10, 4, 3, 0});
  EXPECT_EQ(ipow, (std::vector<int32_t>{1024, 81, -8, 1}));
}

TEST(CpuCodegen, UnaryMathMatchesLibm) {
  std::vector<float> x;
  for (int q = 0; q < 257; ++q) x.push_back(-0.99f + 1.98f * static_cast<float>(q) / 256.0f);
  std::vector<float> pos;
  for (float v : x) pos.push_back(std::fabs(v) * 3.0f + 0.01f);
  struct Case {
    Op op;
    std::function<float(float)> ref;
    bool positive;
  };
  std::vector<Case> cases = {
      {Op::Neg, [](float v) { return -v; }, false},
      {Op::Abs, [](float v) { return std::fabs(v); }, false},
      {Op::Sign, [](float v) { return v > 0   ? 1.0f
                                      : v < 0 ? -1.0f
                                              : 0.0f; }, false},
      {Op::Floor, [](float v) { return std::floor(v * 1.0f); }, false},
      {Op::Ceil, [](float v) { return std::ceil(v); }, false},
      {Op::Round, [](float v) { return std::round(v); }, false},
      {Op::Sqrt, [](float v) { return std::sqrt(v); }, true},
      {Op::Rsqrt, [](float v) { return 1.0f / std::sqrt(v); }, true},
      {Op::Sin, [](float v) { return std::sin(v); }, false},
      {Op::Cos, [](float v) { return std::cos(v); }, false},
      {Op::Tan, [](float v) { return std::tan(v); }, false},
      {Op::Asin, [](float v) { return std::asin(v); }, false},
      {Op::Acos, [](float v) { return std::acos(v); }, false},
      {Op::Atan, [](float v) { return std::atan(v); }, false},
      {Op::Exp, [](float v) { return std::exp(v); }, false},
      {Op::Log, [](float v) { return std::log(v); }, true},
  };
  for (const Case& c : cases) {
    const std::vector<float>& in = c.positive ? pos : x;
    auto out = run_unary<float>(c.op, Scalar::F32, in);
    for (size_t q = 0; q < in.size(); ++q) {
      float want = c.ref(in[q]);
      ASSERT_NEAR(out[q], want, 2e-5f * std::max(1.0f, std::fabs(want)))
          << ir::op_name(c.op) << "(" << in[q] << ")";
    }
  }
  // Double precision goes through the f64 entry points.
  std::vector<double> xd{0.1, 0.5, 1.5, 2.75};
  auto sd = run_unary<double>(Op::Sin, Scalar::F64, xd);
  auto td = run_unary<double>(Op::Tan, Scalar::F64, xd);
  for (size_t q = 0; q < xd.size(); ++q) {
    EXPECT_NEAR(sd[q], std::sin(xd[q]), 1e-12);
    EXPECT_NEAR(td[q], std::tan(xd[q]), 1e-12);
  }
}

TEST(CpuCodegen, BinaryMathMatchesLibm) {
  std::vector<float> a{0.5f, 1.5f, 2.0f, 3.25f, 0.1f}, c{2.0f, 0.5f, -1.0f, 1.5f, 3.0f};
  auto pw = run_binary<float>(Op::Pow, Scalar::F32, a, c);
  auto at = run_binary<float>(Op::Atan2, Scalar::F32, a, c);
  auto mn = run_binary<float>(Op::Min, Scalar::F32, a, c);
  auto mx = run_binary<float>(Op::Max, Scalar::F32, a, c);
  for (size_t q = 0; q < a.size(); ++q) {
    EXPECT_NEAR(pw[q], std::pow(a[q], c[q]), 1e-5f * std::max(1.0f, std::pow(a[q], c[q])));
    EXPECT_NEAR(at[q], std::atan2(a[q], c[q]), 1e-6f);
    EXPECT_EQ(mn[q], std::min(a[q], c[q]));
    EXPECT_EQ(mx[q], std::max(a[q], c[q]));
  }
  auto imin = run_binary<int32_t>(Op::Min, Scalar::I32, {-5, 7}, {3, -9});
  EXPECT_EQ(imin, (std::vector<int32_t>{-5, -9}));
  auto umax = run_binary<uint32_t>(Op::Max, Scalar::U32, {0xFFFFFFFFu, 1u}, {3u, 2u});
  EXPECT_EQ(umax, (std::vector<uint32_t>{0xFFFFFFFFu, 2u}));
}

TEST(CpuCodegen, CastsSelectAndComparisons) {
  auto k = std::make_unique<ir::Kernel>();
  k->abi.name = "casts";
  k->abi.params.push_back(value_param("f", {Scalar::F32}));
  k->abi.params.push_back(value_param("flag", {Scalar::Bool}));
  k->abi.returns = {{Scalar::I32}, {Scalar::U8},   {Scalar::F64},
                    {Scalar::I32}, {Scalar::Bool}, {Scalar::F32}};
  Builder b(k->body.get());
  Inst* f = b.arg(Scalar::F32, 0);
  Inst* flag = b.arg(Scalar::Bool, 1);
  Inst* task = serial(b);
  b.set_insert_end(task->region(0));
  Inst* as_int = b.cast(Scalar::I32, f);         // truncates toward zero
  Inst* as_u8 = b.cast(Scalar::U8, b.i32(300));  // wraps
  Inst* as_f64 = b.cast(Scalar::F64, b.i32(-7));
  Inst* sel = b.select(flag, b.i32(11), b.i32(22));
  Inst* cmp = b.binary(Op::LogicAnd, b.binary(Op::Lt, f, b.f32(0)), b.unary(Op::LogicNot, flag));
  Inst* fm = b.make(Op::Fma, Scalar::F32, {f, b.f32(2), b.f32(1)});
  b.make(Op::Return, Scalar::Void, {as_int, as_u8, as_f64, sel, cmp, fm});
  auto kernel = compile_and_load(*k);
  for (bool fl : {false, true}) {
    host::LaunchFrame frame(kernel->abi);
    frame.set_value<float>(0, -3.75f);
    frame.set_value<bool>(1, fl);
    test_device().launch(*kernel, frame.context());
    EXPECT_EQ(frame.returned<int32_t>(0), -3);
    EXPECT_EQ(frame.returned<uint8_t>(1), 44);
    EXPECT_EQ(frame.returned<double>(2), -7.0);
    EXPECT_EQ(frame.returned<int32_t>(3), fl ? 11 : 22);
    EXPECT_EQ(frame.returned<uint8_t>(4), fl ? 0 : 1);
    EXPECT_FLOAT_EQ(frame.returned<float>(5), -6.5f);
  }
}

TEST(CpuCodegen, ReportsTimingsAndProducesAnObject) {
  auto k = saxpy_kernel();
  codegen::CodegenTimings t;
  auto compiled = codegen::compile_kernel_to_object(*k, {}, &t);
  ASSERT_GE(compiled.object.size(), 4u);
  EXPECT_EQ(compiled.object[0], 0x7f);  // ELF
  EXPECT_EQ(compiled.object[1], 'E');
  EXPECT_GT(t.emit_ms + t.optimize_ms + t.object_ms, 0.0);
  ASSERT_EQ(compiled.abi.tasks.size(), 1u);
  EXPECT_EQ(compiled.abi.tasks[0].kind, 1);
  EXPECT_EQ(compiled.abi.tasks[0].extent_symbol, compiled.abi.tasks[0].symbol + "_extent");
  // A baseline CPU for AOT modules: no AVX-512 in the code.
  codegen::CpuCodegenOptions portable;
  portable.cpu = "x86-64-v2";
  std::string text = codegen::dump_llvm_ir(*k, portable);
  EXPECT_NE(text.find("\"target-cpu\"=\"x86-64-v2\""), std::string::npos);
  EXPECT_EQ(text.find("<16 x float>"), std::string::npos);
  auto portable_kernel = compile_and_load(*k, portable);
  EXPECT_EQ(portable_kernel->tasks.size(), 1u);
  // Unoptimised code runs too.
  codegen::CpuCodegenOptions o0;
  o0.opt_level = 0;
  auto kernel = compile_and_load(*k, o0);
  host::Ndarray x(Scalar::F32, {10}), y(Scalar::F32, {10});
  for (int q = 0; q < 10; ++q) x.data_as<float>()[q] = static_cast<float>(q);
  host::LaunchFrame frame(kernel->abi);
  frame.set_value<float>(0, 2.0f);
  frame.set_ndarray(1, x);
  frame.set_ndarray(2, y);
  test_device().launch(*kernel, frame.context());
  EXPECT_FLOAT_EQ(y.data_as<float>()[9], 18.0f);
}

TEST(CpuCodegen, MathInLoopsUsesVectorLibrary) {
  auto k = std::make_unique<ir::Kernel>();
  k->abi.name = "wave";
  int a = add_ndarray(*k, "a", Scalar::F32);
  Builder b(k->body.get());
  Inst* task = range(b, {b.i32(0), shape(b, a, 0)});
  b.set_insert_end(task->region(0));
  Inst* i = b.loop_index(task, 0);
  Inst* x = load(b, Scalar::F32, a, i);
  store(b, a, i, b.binary(Op::Add, b.unary(Op::Sin, x), b.unary(Op::Exp, b.unary(Op::Cos, x))));
  std::string text = codegen::dump_llvm_ir(*k);
  bool avx2 = text.find("+avx2") != std::string::npos && text.find("+fma") != std::string::npos;
  if (avx2) {
    EXPECT_NE(text.find("_ZGVdN8v_sinf"), std::string::npos) << text;
  }
  codegen::CpuCodegenOptions scalar;
  scalar.vector_math = false;
  EXPECT_EQ(codegen::dump_llvm_ir(*k, scalar).find("_ZGV"), std::string::npos);
  for (const auto& options : {codegen::CpuCodegenOptions{}, scalar}) {
    auto kernel = compile_and_load(*k, options);
    std::vector<float> data(1003);
    for (size_t q = 0; q < data.size(); ++q) data[q] = static_cast<float>(q) * 0.01f - 5.0f;
    std::vector<float> in = data;
    host::Ndarray arr(data.data(), Scalar::F32, {static_cast<int64_t>(data.size())});
    host::LaunchFrame frame(kernel->abi);
    frame.set_ndarray(0, arr);
    test_device().launch(*kernel, frame.context());
    for (size_t q = 0; q < data.size(); ++q)
      ASSERT_NEAR(data[q], std::sin(in[q]) + std::exp(std::cos(in[q])), 1e-5f) << in[q];
  }
}

// Fast math (the default) may reassociate, contract and use reciprocals of constants, but
// special values stay IEEE: rsqrt(±0) = ±inf, x/0 = ±inf, sqrt(inf) = inf, NaN in gives NaN,
// in scalar code and in vectorised loops alike.
TEST(CpuCodegen, FastMathKeepsIeeeSpecialValues) {
  const float inf = std::numeric_limits<float>::infinity(),
              nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> x, y;
  const float specials[] = {0.0f, -0.0f, inf, -inf, nan, 4.0f, 1e-40f, -2.0f, 1e30f, 3.0f};
  constexpr size_t kSpecials = sizeof specials / sizeof specials[0];
  // 130 elements: the vectorised body and the scalar tail. Each x meets a divisor shifted by
  // `rep` places, so every special value is divided by every other one.
  for (size_t rep = 0; rep < 13; ++rep)
    for (size_t q = 0; q < kSpecials; ++q) {
      x.push_back(specials[q]);
      y.push_back(specials[(q + rep) % kSpecials]);
    }
  auto same = [](float got, float want) {
    return (std::isnan(got) && std::isnan(want)) ||
           (got == want && std::signbit(got) == std::signbit(want));
  };
  auto rs = run_unary<float>(Op::Rsqrt, Scalar::F32, x);
  auto sq = run_unary<float>(Op::Sqrt, Scalar::F32, x);
  auto dv = run_binary<float>(Op::Div, Scalar::F32, x, y);
  for (size_t q = 0; q < x.size(); ++q) {
    float want_rs = 1.0f / std::sqrt(x[q]);
    if (std::isinf(want_rs) || want_rs == 0.0f || std::isnan(want_rs))
      EXPECT_TRUE(same(rs[q], want_rs))
          << "rsqrt(" << x[q] << ") = " << rs[q] << ", want " << want_rs;
    else
      EXPECT_NEAR(rs[q], want_rs, 1e-6f * want_rs) << "rsqrt(" << x[q] << ")";
    EXPECT_TRUE(same(sq[q], std::sqrt(x[q]))) << "sqrt(" << x[q] << ") = " << sq[q];
    float want_dv = x[q] / y[q];
    if (!std::isfinite(want_dv) || want_dv == 0.0f || !std::isfinite(x[q]) || y[q] == 0.0f)
      EXPECT_TRUE(same(dv[q], want_dv))
          << x[q] << " / " << y[q] << " = " << dv[q] << ", want " << want_dv;
    else
      EXPECT_NEAR(dv[q], want_dv, 2e-7f * std::fabs(want_dv)) << x[q] << " / " << y[q];
  }
}

// Division: strict math is the correctly rounded quotient, bit for bit (what constant folding
// computes); fast math may multiply by the reciprocal of a constant divisor, at most 1 ulp off.
TEST(CpuCodegen, DivisionByAConstantStrictAndFast) {
  for (bool fast : {false, true}) {
    auto k = std::make_unique<ir::Kernel>();
    k->abi.name = fast ? "div_fast" : "div_strict";
    k->fast_math = fast;
    int a = add_ndarray(*k, "a", Scalar::F32);
    int out = add_ndarray(*k, "out", Scalar::F32);
    Builder b(k->body.get());
    Inst* task = range(b, {b.i32(0), shape(b, a, 0)});
    b.set_insert_end(task->region(0));
    Inst* i = b.loop_index(task, 0);
    store(b, out, i, b.binary(Op::Div, load(b, Scalar::F32, a, i), b.f32(-3.0)));
    auto kernel = compile_and_load(*k);
    std::vector<float> av, got(1000);
    for (int q = 0; q < 1000; ++q) av.push_back(static_cast<float>(q - 500) * 0.37f - 7.0f);
    host::Ndarray na(av.data(), Scalar::F32, {1000}), no(got.data(), Scalar::F32, {1000});
    host::LaunchFrame frame(kernel->abi);
    frame.set_ndarray(0, na);
    frame.set_ndarray(1, no);
    test_device().launch(*kernel, frame.context());
    for (size_t q = 0; q < av.size(); ++q) {
      float want = av[q] / -3.0f;
      if (!fast) {
        ASSERT_EQ(got[q], want) << av[q] << " / -3";
      } else {
        ASSERT_LE(std::fabs(got[q] - want), std::fabs(std::nextafter(want, 0.0f) - want))
            << av[q] << " / -3";
      }
    }
  }
}

// CpuCodegenOptions' size limits (issue 17): a function of more LLVM instructions than
// max_optimized_instructions is compiled unoptimised (optnone, float constants through integer
// immediates), one with a loop of more accesses than max_loop_accesses is not vectorised; each
// says so in a note, and the code computes the same.
TEST(CpuCodegen, FunctionsOverTheSizeLimitsCompileUnoptimisedWithANote) {
  constexpr int kConstants = 200, kRows = 37, kColumns = 40;
  auto k = std::make_unique<ir::Kernel>();
  k->abi.name = "limits";
  int f = add_field(*k, "f", Scalar::F32, {kConstants});
  int d = add_field(*k, "d", Scalar::F64, {kConstants});
  int g = add_field(*k, "g", Scalar::I32, {kRows, kColumns});
  Builder b(k->body.get());
  Inst* task = serial(b);
  b.set_insert_end(task->region(0));
  for (int c = 0; c < kConstants; ++c) {
    store(b, f, b.i32(c), b.f32(c + 0.25));
    store(b, d, b.i32(c), b.const_float(Scalar::F64, -c - 0.125));
  }
  b.set_insert_end(k->body.get());
  Inst* rows = range(b, {b.i32(0), b.i32(kRows)});
  b.set_insert_end(rows->region(0));
  Inst* i = b.loop_index(rows, 0);
  for (int c = 0; c < kColumns; ++c)
    store(b, g, b.binary(Op::Add, b.binary(Op::Mul, i, b.i32(kColumns)), b.i32(c)),
          b.binary(Op::Add, i, b.i32(c)));

  codegen::CpuCodegenOptions limited;
  limited.max_optimized_instructions = 300;
  limited.max_loop_accesses = 16;
  codegen::CompiledCpuKernel compiled = codegen::compile_kernel_to_object(*k, limited);
  ASSERT_EQ(compiled.notes.size(), 2u);
  EXPECT_NE(compiled.notes[0].find("task 0: "), std::string::npos) << compiled.notes[0];
  EXPECT_NE(compiled.notes[0].find("LLVM instructions, more than 300: compiled without LLVM's "
                                   "optimisations"),
            std::string::npos)
      << compiled.notes[0];
  EXPECT_NE(compiled.notes[1].find("task 1: a loop with 40 loads and stores, more than 16: not "
                                   "vectorised by LLVM"),
            std::string::npos)
      << compiled.notes[1];
  std::string text = codegen::dump_llvm_ir(*k, limited);
  EXPECT_NE(text.find("optnone"), std::string::npos);
  EXPECT_NE(text.find("bitcast i32 1048576000 to float"), std::string::npos);  // 0.25f
  EXPECT_EQ(text.find("store float 2.500000e-01"), std::string::npos);
  EXPECT_TRUE(codegen::compile_kernel_to_object(*k).notes.empty());  // the defaults

  auto kernel = compile_and_load(*k, limited);
  host::Field ff(FieldDesc{"f", {Scalar::F32}, {kConstants}, Layout::AoS});
  host::Field fd(FieldDesc{"d", {Scalar::F64}, {kConstants}, Layout::AoS});
  host::Field fg(FieldDesc{"g", {Scalar::I32}, {kRows, kColumns}, Layout::AoS});
  host::LaunchFrame frame(kernel->abi);
  frame.bind_field("f", ff);
  frame.bind_field("d", fd);
  frame.bind_field("g", fg);
  test_device().launch(*kernel, frame.context());
  for (int c = 0; c < kConstants; ++c) {
    ASSERT_EQ(ff.data_as<float>()[c], static_cast<float>(c + 0.25)) << c;
    ASSERT_EQ(fd.data_as<double>()[c], -c - 0.125) << c;
  }
  for (int r = 0; r < kRows; ++r)
    for (int c = 0; c < kColumns; ++c) ASSERT_EQ(fg.data_as<int32_t>()[r * kColumns + c], r + c);
}
