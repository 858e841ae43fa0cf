// Atomics, kernel temporaries, textures, random numbers and debug checks.
#include <array>
#include <cmath>
#include <set>

#include "runtime/common/error.h"
#include "runtime/host/field.h"
#include "runtime/host/ndarray.h"
#include "runtime/host/texture.h"
#include "tests/codegen/harness.h"

using namespace loom;
using namespace loom::test;

TEST(CpuCodegen, IntegerAtomicsAreExactUnderManyThreads) {
  const int32_t n = 200000;
  auto k = std::make_unique<ir::Kernel>();
  k->abi.name = "int_atomics";
  int acc = add_ndarray(*k, "acc", Scalar::I32);    // [sum, max, min, xor, sub]
  int olds = add_ndarray(*k, "olds", Scalar::I32);  // old value of each add
  Builder b(k->body.get());
  Inst* task = range(b, {b.i32(0), b.i32(n)});
  b.set_insert_end(task->region(0));
  Inst* i = b.loop_index(task, 0);
  Inst* old = b.atomic(ir::AtomicOp::Add, elem(b, Scalar::I32, acc, b.i32(0)), b.i32(1));
  store(b, olds, i, old);
  b.atomic(ir::AtomicOp::Max, elem(b, Scalar::I32, acc, b.i32(1)), i);
  b.atomic(ir::AtomicOp::Min, elem(b, Scalar::I32, acc, b.i32(2)), b.unary(Op::Neg, i));
  b.atomic(ir::AtomicOp::Xor, elem(b, Scalar::I32, acc, b.i32(3)), i);
  b.atomic(ir::AtomicOp::Sub, elem(b, Scalar::I32, acc, b.i32(4)), b.i32(2));
  auto kernel = compile_and_load(*k);
  host::Ndarray a(Scalar::I32, {5}), o(Scalar::I32, {n});
  host::LaunchFrame frame(kernel->abi);
  frame.set_ndarray(0, a);
  frame.set_ndarray(1, o);
  test_device().launch(*kernel, frame.context());
  int32_t x = 0;
  for (int32_t q = 0; q < n; ++q) x ^= q;
  const int32_t* r = a.data_as<int32_t>();
  EXPECT_EQ(r[0], n);
  EXPECT_EQ(r[1], n - 1);
  EXPECT_EQ(r[2], -(n - 1));
  EXPECT_EQ(r[3], x);
  EXPECT_EQ(r[4], -2 * n);
  std::vector<char> seen(static_cast<size_t>(n), 0);
  for (int32_t q = 0; q < n; ++q) {
    int32_t v = o.data_as<int32_t>()[q];
    ASSERT_TRUE(v >= 0 && v < n);
    ASSERT_FALSE(seen[static_cast<size_t>(v)]) << "old value " << v << " returned twice";
    seen[static_cast<size_t>(v)] = 1;
  }
}

TEST(CpuCodegen, FloatAtomicsAreExactUnderManyThreads) {
  const int32_t n = 100000;  // sums of small integers stay exact in f32
  auto k = std::make_unique<ir::Kernel>();
  k->abi.name = "float_atomics";
  int acc = add_ndarray(*k, "acc", Scalar::F32);  // [sum, max, min, sub]
  int acc64 = add_ndarray(*k, "acc64", Scalar::F64);
  Builder b(k->body.get());
  Inst* task = range(b, {b.i32(0), b.i32(n)});
  b.set_insert_end(task->region(0));
  Inst* i = b.loop_index(task, 0);
  Inst* f = b.cast(Scalar::F32, b.binary(Op::Mod, i, b.i32(3)));
  b.atomic(ir::AtomicOp::Add, elem(b, Scalar::F32, acc, b.i32(0)), f);
  b.atomic(ir::AtomicOp::Max, elem(b, Scalar::F32, acc, b.i32(1)), b.cast(Scalar::F32, i));
  b.atomic(ir::AtomicOp::Min, elem(b, Scalar::F32, acc, b.i32(2)),
           b.unary(Op::Neg, b.cast(Scalar::F32, i)));
  b.atomic(ir::AtomicOp::Sub, elem(b, Scalar::F32, acc, b.i32(3)), b.f32(0.5));
  b.atomic(ir::AtomicOp::Add, elem(b, Scalar::F64, acc64, b.i32(0)), b.cast(Scalar::F64, i));
  auto kernel = compile_and_load(*k);
  host::Ndarray a(Scalar::F32, {4}), a64(Scalar::F64, {1});
  host::LaunchFrame frame(kernel->abi);
  frame.set_ndarray(0, a);
  frame.set_ndarray(1, a64);
  test_device().launch(*kernel, frame.context());
  double sum = 0;
  for (int32_t q = 0; q < n; ++q) sum += q % 3;
  const float* r = a.data_as<float>();
  EXPECT_EQ(r[0], static_cast<float>(sum));
  EXPECT_EQ(r[1], static_cast<float>(n - 1));
  EXPECT_EQ(r[2], -static_cast<float>(n - 1));
  EXPECT_EQ(r[3], -0.5f * n);
  EXPECT_EQ(a64.data_as<double>()[0], static_cast<double>(n) * (n - 1) / 2);
}

// Task 1 (serial) sums x into a temporary; task 2 (range) divides by it.
TEST(CpuCodegen, TemporariesPassValuesBetweenTasks) {
  auto k = std::make_unique<ir::Kernel>();
  k->abi.name = "normalise";
  k->abi.temps_size = 8;
  int x = add_ndarray(*k, "x", Scalar::F32);
  Builder b(k->body.get());
  Inst* n = shape(b, x, 0);
  Inst* t1 = serial(b);
  b.set_insert_end(t1->region(0));
  Inst* sum = b.alloca_(Scalar::F32);
  Inst* loop = b.range_for({b.i32(0), n});
  b.set_insert_end(loop->region(0));
  b.local_store(
      sum, b.binary(Op::Add, b.local_load(sum), load(b, Scalar::F32, x, b.loop_index(loop, 0))));
  b.set_insert_end(t1->region(0));
  b.make(Op::TmpStore, Scalar::Void, {b.local_load(sum)}, 4);
  b.set_insert_end(k->body.get());
  Inst* t2 = range(b, {b.i32(0), n});
  b.set_insert_end(t2->region(0));
  Inst* i = b.loop_index(t2, 0);
  Inst* total = b.make(Op::TmpLoad, Scalar::F32, {}, 4);
  store(b, x, i, b.binary(Op::Div, load(b, Scalar::F32, x, i), total));
  auto kernel = compile_and_load(*k);
  ASSERT_EQ(kernel->tasks.size(), 2u);
  host::Ndarray a(Scalar::F32, {1000});
  for (int q = 0; q < 1000; ++q) a.data_as<float>()[q] = static_cast<float>(q % 10);
  host::LaunchFrame frame(kernel->abi);
  frame.set_ndarray(0, a);
  test_device().launch(*kernel, frame.context());
  for (int q = 0; q < 1000; ++q)
    ASSERT_NEAR(a.data_as<float>()[q], static_cast<float>(q % 10) / 4500.0f, 1e-7f);
}

namespace {

float ref_fetch(const host::Texture& t, int x, int y, int z, int ch) {
  return t.read(x, y, z)[static_cast<size_t>(ch)];
}

int ref_wrap(int i, int n, bool repeat) {
  if (repeat) return ((i % n) + n) % n;
  return std::clamp(i, 0, n - 1);
}

// Reference sampler: normalised coordinates, nearest or linear, clamp or repeat.
float ref_sample(const host::Texture& t, std::array<float, 3> uvw, int dims, bool linear,
                 bool repeat, int ch) {
  int n[3] = {t.width(), t.height(), t.depth()};
  int i0[3] = {0, 0, 0}, i1[3] = {0, 0, 0};
  float f[3] = {0, 0, 0};
  for (int d = 0; d < dims; ++d) {
    float c = uvw[static_cast<size_t>(d)] * static_cast<float>(n[d]);
    if (!linear) {
      i0[d] = ref_wrap(static_cast<int>(std::floor(c)), n[d], repeat);
      continue;
    }
    c -= 0.5f;
    float fl = std::floor(c);
    f[d] = c - fl;
    i0[d] = ref_wrap(static_cast<int>(fl), n[d], repeat);
    i1[d] = ref_wrap(static_cast<int>(fl) + 1, n[d], repeat);
  }
  if (!linear) return ref_fetch(t, i0[0], i0[1], i0[2], ch);
  float acc = 0;
  for (int corner = 0; corner < (1 << dims); ++corner) {
    float w = 1;
    int at[3] = {0, 0, 0};
    for (int d = 0; d < dims; ++d) {
      bool hi = corner & (1 << d);
      at[d] = hi ? i1[d] : i0[d];
      w *= hi ? f[d] : 1 - f[d];
    }
    acc += w * ref_fetch(t, at[0], at[1], at[2], ch);
  }
  return acc;
}

// A texture parameter and its slot.
int add_texture(ir::Kernel& k, const std::string& name, TextureFormat format, int ndim) {
  ParamDesc p;
  p.name = name;
  p.kind = ParamKind::Texture;
  p.ndim = ndim;
  k.abi.params.push_back(p);
  ResourceDesc r;
  r.kind = ResourceKind::Texture;
  r.format = format;
  r.ndim = ndim;
  r.dtype = format == TextureFormat::RGBA8 ? Scalar::U8 : Scalar::F32;
  r.param = static_cast<int>(k.abi.params.size()) - 1;
  k.abi.resources.push_back(r);
  return static_cast<int>(k.abi.resources.size()) - 1;
}

}  // namespace

// out[i] = sample(tex, uv[i]) for every sampler mode and channel, against the reference.
TEST(CpuCodegen, TextureSampleNearestLinearClampRepeat2d) {
  host::Texture tex(TextureFormat::RG32F, 5, 3);
  for (int y = 0; y < 3; ++y)
    for (int x = 0; x < 5; ++x)
      tex.write(x, y, 0, {static_cast<float>(x * 10 + y), static_cast<float>(x - y * 3), 0, 0});
  std::vector<float> us, vs;
  for (float u : {-0.7f, -0.1f, 0.0f, 0.13f, 0.5f, 0.77f, 0.99f, 1.0f, 1.3f, 2.45f})
    for (float v : {-0.2f, 0.1f, 0.5f, 0.95f, 1.6f}) {
      us.push_back(u);
      vs.push_back(v);
    }
  auto n = static_cast<int64_t>(us.size());
  for (uint64_t mode = 0; mode < 4; ++mode) {
    auto k = std::make_unique<ir::Kernel>();
    k->abi.name = "sample2d";
    int t = add_texture(*k, "tex", TextureFormat::RG32F, 2);
    int su = add_ndarray(*k, "u", Scalar::F32);
    int sv = add_ndarray(*k, "v", Scalar::F32);
    int so = add_ndarray(*k, "out", Scalar::F32, 1);
    Builder b(k->body.get());
    Inst* task = range(b, {b.i32(0), shape(b, su, 0)});
    b.set_insert_end(task->region(0));
    Inst* i = b.loop_index(task, 0);
    Inst* u = load(b, Scalar::F32, su, i);
    Inst* v = load(b, Scalar::F32, sv, i);
    for (int ch = 0; ch < 4; ++ch) {
      Inst* s = b.make(Op::TexSample, Scalar::F32, {u, v}, t, ch);
      s->bits = mode;
      Inst* at = b.binary(Op::Add, b.binary(Op::Mul, i, b.i32(4)), b.i32(ch));
      store(b, so, at, s);
    }
    auto kernel = compile_and_load(*k);
    host::Ndarray nu(us.data(), Scalar::F32, {n}), nv(vs.data(), Scalar::F32, {n});
    host::Ndarray out(Scalar::F32, {n * 4});
    host::LaunchFrame frame(kernel->abi);
    frame.set_texture(0, tex);
    frame.set_ndarray(1, nu);
    frame.set_ndarray(2, nv);
    frame.set_ndarray(3, out);
    test_device().launch(*kernel, frame.context());
    bool linear = mode & ir::kSampleLinear, repeat = mode & ir::kSampleRepeat;
    for (int64_t q = 0; q < n; ++q)
      for (int ch = 0; ch < 4; ++ch) {
        float want = ref_sample(tex, {us[static_cast<size_t>(q)], vs[static_cast<size_t>(q)], 0}, 2,
                                linear, repeat, ch);
        ASSERT_NEAR(out.data_as<float>()[q * 4 + ch], want, 1e-4f)
            << "mode " << mode << " uv " << us[static_cast<size_t>(q)] << ","
            << vs[static_cast<size_t>(q)] << " ch " << ch;
      }
  }
}

TEST(CpuCodegen, TextureLoadStoreRgba8And3dLinear) {
  // Serial task: load with clamped coordinates, store into an rgba8 texture, 3-d linear sample.
  host::Texture src(TextureFormat::R32F, 4, 4);
  for (int y = 0; y < 4; ++y)
    for (int x = 0; x < 4; ++x) src.write(x, y, 0, {static_cast<float>(y * 4 + x), 0, 0, 0});
  host::Texture dst(TextureFormat::RGBA8, 2, 2);
  host::Texture vol(TextureFormat::RGBA32F, 3, 3, 3);
  for (int z = 0; z < 3; ++z)
    for (int y = 0; y < 3; ++y)
      for (int x = 0; x < 3; ++x)
        vol.write(x, y, z,
                  {static_cast<float>(x), static_cast<float>(y * 2), static_cast<float>(z * 3), 1});

  auto k = std::make_unique<ir::Kernel>();
  k->abi.name = "tex_misc";
  int ts = add_texture(*k, "src", TextureFormat::R32F, 2);
  int td = add_texture(*k, "dst", TextureFormat::RGBA8, 2);
  int tv = add_texture(*k, "vol", TextureFormat::RGBA32F, 3);
  k->abi.returns = {{Scalar::F32, 4, 1}, {Scalar::F32, 3, 1}};
  Builder b(k->body.get());
  Inst* task = serial(b);
  b.set_insert_end(task->region(0));
  Inst* c0 = b.make(Op::TexLoad, Scalar::F32, {b.i32(-3), b.i32(2)}, ts, 0);  // (0, 2) -> 8
  Inst* c1 = b.make(Op::TexLoad, Scalar::F32, {b.i32(9), b.i32(9)}, ts, 0);   // (3, 3) -> 15
  Inst* c2 = b.make(Op::TexLoad, Scalar::F32, {b.i32(1), b.i32(1)}, ts, 1);   // missing -> 0
  Inst* c3 = b.make(Op::TexLoad, Scalar::F32, {b.i32(1), b.i32(1)}, ts, 3);   // alpha -> 1
  Inst* st = b.make(Op::TexStore, Scalar::Void,
                    {b.i32(1), b.i32(0), b.f32(1.0), b.f32(0.5), b.f32(-2), b.f32(0.2)}, td, 2);
  (void)st;
  b.make(Op::TexStore, Scalar::Void, {b.i32(5), b.i32(0), b.f32(1), b.f32(1), b.f32(1), b.f32(1)},
         td, 2);  // dropped
  std::vector<Inst*> rets = {c0, c1, c2, c3};
  for (int ch = 0; ch < 3; ++ch) {
    Inst* s = b.make(Op::TexSample, Scalar::F32, {b.f32(0.5), b.f32(0.25), b.f32(0.75)}, tv, ch);
    s->bits = ir::kSampleLinear;
    rets.push_back(s);
  }
  auto ret = std::make_unique<Inst>(Op::Return, Scalar::Void);
  ret->operands = rets;
  b.insert(std::move(ret));
  auto kernel = compile_and_load(*k);
  host::LaunchFrame frame(kernel->abi);
  frame.set_texture(0, src);
  frame.set_texture(1, dst);
  frame.set_texture(2, vol);
  test_device().launch(*kernel, frame.context());
  EXPECT_FLOAT_EQ(frame.returned<float>(0), 8.0f);
  EXPECT_FLOAT_EQ(frame.returned<float>(1), 15.0f);
  EXPECT_FLOAT_EQ(frame.returned<float>(2), 0.0f);
  EXPECT_FLOAT_EQ(frame.returned<float>(3), 1.0f);
  const uint8_t* px = dst.data() + 4;  // texel (1, 0)
  EXPECT_EQ(px[0], 255);
  EXPECT_EQ(px[1], 128);
  EXPECT_EQ(px[2], 0);
  EXPECT_EQ(px[3], 51);
  for (int q = 0; q < 4; ++q) EXPECT_EQ(dst.data()[q], 0) << "texel (0,0) untouched";
  for (int ch = 0; ch < 3; ++ch)
    EXPECT_NEAR(frame.returned<float>(4 + static_cast<size_t>(ch)),
                ref_sample(vol, {0.5f, 0.25f, 0.75f}, 3, true, false, ch), 1e-5f);
}

TEST(CpuCodegen, RandomNumbersAreUniform) {
  const int32_t n = 400000;
  auto k = std::make_unique<ir::Kernel>();
  k->abi.name = "rand";
  int sf = add_ndarray(*k, "f", Scalar::F32);
  int su = add_ndarray(*k, "u", Scalar::U32);
  Builder b(k->body.get());
  Inst* task = range(b, {b.i32(0), b.i32(n)});
  b.set_insert_end(task->region(0));
  Inst* i = b.loop_index(task, 0);
  store(b, sf, i, b.make(Op::Rand, Scalar::F32));
  store(b, su, i, b.make(Op::Rand, Scalar::U32));
  auto kernel = compile_and_load(*k);
  host::Ndarray f(Scalar::F32, {n}), u(Scalar::U32, {n});
  host::LaunchFrame frame(kernel->abi);
  frame.set_ndarray(0, f);
  frame.set_ndarray(1, u);
  frame.set_seed(1234);
  test_device().launch(*kernel, frame.context());
  double mean = 0, var = 0, high = 0, low_bit = 0;
  for (int32_t q = 0; q < n; ++q) {
    float v = f.data_as<float>()[q];
    ASSERT_TRUE(v >= 0.0f && v < 1.0f) << v;
    mean += v;
    high += u.data_as<uint32_t>()[q] >> 31;
    low_bit += u.data_as<uint32_t>()[q] & 1;
  }
  mean /= n;
  for (int32_t q = 0; q < n; ++q)
    var += (f.data_as<float>()[q] - mean) * (f.data_as<float>()[q] - mean);
  var /= n;
  EXPECT_NEAR(mean, 0.5, 0.005);
  EXPECT_NEAR(var, 1.0 / 12.0, 0.002);
  EXPECT_NEAR(high / n, 0.5, 0.005);
  EXPECT_NEAR(low_bit / n, 0.5, 0.005);
  // Same seed, same numbers; another seed, other numbers.
  std::vector<float> first(f.data_as<float>(), f.data_as<float>() + 100);
  test_device().launch(*kernel, frame.context());
  EXPECT_EQ(std::vector<float>(f.data_as<float>(), f.data_as<float>() + 100), first);
  frame.set_seed(99);
  test_device().launch(*kernel, frame.context());
  EXPECT_NE(std::vector<float>(f.data_as<float>(), f.data_as<float>() + 100), first);
}

// y[i] = x[i + 1] with a debug bounds check: the last iteration fails.
TEST(CpuCodegen, BoundsCheckReportsInsteadOfCrashing) {
  auto k = std::make_unique<ir::Kernel>();
  k->abi.name = "shift_left";
  k->debug = true;
  int x = add_ndarray(*k, "x", Scalar::F32);
  int y = add_ndarray(*k, "y", Scalar::F32);
  Builder b(k->body.get());
  Inst* n = shape(b, x, 0);
  Inst* task = range(b, {b.i32(0), n});
  b.set_insert_end(task->region(0));
  Inst* i = b.loop_index(task, 0);
  Inst* next = b.binary(Op::Add, i, b.i32(1));
  b.set_node(42);
  b.make(Op::BoundsCheck, Scalar::Void, {next, n}, x, 0);
  b.set_node(-1);
  store(b, y, i, load(b, Scalar::F32, x, next));
  auto kernel = compile_and_load(*k);
  host::Ndarray a(Scalar::F32, {100000}), c(Scalar::F32, {100000});
  host::LaunchFrame frame(kernel->abi);
  frame.set_ndarray(0, a);
  frame.set_ndarray(1, c);
  try {
    test_device().launch(*kernel, frame.context());
    FAIL() << "expected a launch error";
  } catch (const Error& e) {
    std::string what = e.what();
    EXPECT_EQ(e.place().node, 42);
    EXPECT_EQ(e.place().kernel, "shift_left");
    EXPECT_NE(what.find("index 100000"), std::string::npos) << what;
    EXPECT_NE(what.find("[0, 100000)"), std::string::npos) << what;
    EXPECT_NE(what.find("parameter 'x'"), std::string::npos) << what;
  }
  EXPECT_EQ(frame.error().code, 1);
  EXPECT_EQ(frame.error().slot, x);
  EXPECT_EQ(frame.error().dim, 0);
  // A launch after a failure starts clean and fails the same way.
  EXPECT_THROW(test_device().launch(*kernel, frame.context()), Error);
}

TEST(CpuCodegen, AssertionFailureNamesTheNode) {
  auto k = std::make_unique<ir::Kernel>();
  k->abi.name = "asserts";
  k->debug = true;
  k->abi.params.push_back(value_param("v", {Scalar::I32}));
  Builder b(k->body.get());
  Inst* v = b.arg(Scalar::I32, 0);
  Inst* task = serial(b);
  b.set_insert_end(task->region(0));
  Inst* a = b.make(Op::Assert, Scalar::Void, {b.binary(Op::Gt, v, b.i32(0))}, 7);
  a->text = "v must be positive";
  auto kernel = compile_and_load(*k);
  host::LaunchFrame frame(kernel->abi);
  frame.set_value<int32_t>(0, 5);
  EXPECT_NO_THROW(test_device().launch(*kernel, frame.context()));
  frame.set_value<int32_t>(0, -5);
  try {
    test_device().launch(*kernel, frame.context());
    FAIL() << "expected an assertion failure";
  } catch (const Error& e) {
    EXPECT_EQ(e.place().node, 7);
    EXPECT_NE(std::string(e.what()).find("assertion failed: v must be positive"), std::string::npos)
        << e.what();
  }
}

TEST(CpuCodegen, ManySmallLaunchesStayCorrect) {
  auto k = std::make_unique<ir::Kernel>();
  k->abi.name = "inc";
  int a = add_ndarray(*k, "a", Scalar::I32);
  Builder b(k->body.get());
  Inst* task = range(b, {b.i32(0), shape(b, a, 0)});
  b.set_insert_end(task->region(0));
  Inst* i = b.loop_index(task, 0);
  store(b, a, i, b.binary(Op::Add, load(b, Scalar::I32, a, i), b.i32(1)));
  auto kernel = compile_and_load(*k);
  host::Ndarray arr(Scalar::I32, {37});
  host::LaunchFrame frame(kernel->abi);
  frame.set_ndarray(0, arr);
  for (int q = 0; q < 2000; ++q) test_device().launch(*kernel, frame.context());
  for (int q = 0; q < 37; ++q) ASSERT_EQ(arr.data_as<int32_t>()[q], 2000);
}

// Continue in a parallel task skips to the next iteration; two tasks draw different numbers.
TEST(CpuCodegen, ContinueInRangeTaskAndRandomStreamsPerTask) {
  auto k = std::make_unique<ir::Kernel>();
  k->abi.name = "skip_odd";
  int a = add_ndarray(*k, "a", Scalar::F32, 2);
  Builder b(k->body.get());
  Inst* task = range(b, {b.i32(0), shape(b, a, 0), b.i32(0), shape(b, a, 1)});
  b.set_insert_end(task->region(0));
  Inst* i = b.loop_index(task, 0);
  Inst* j = b.loop_index(task, 1);
  Inst* odd = b.if_(b.binary(Op::Eq, b.binary(Op::BitAnd, j, b.i32(1)), b.i32(1)));
  b.set_insert_end(odd->region(0));
  b.make(Op::Continue, Scalar::Void);
  b.set_insert_end(task->region(0));
  Inst* lin = b.binary(Op::Add, b.binary(Op::Mul, i, shape(b, a, 1)), j);
  store(b, a, lin, b.make(Op::Rand, Scalar::F32));
  b.set_insert_end(k->body.get());
  Inst* second = range(b, {b.i32(0), b.i32(1)});
  b.set_insert_end(second->region(0));
  store(b, a, b.i32(1), b.make(Op::Rand, Scalar::F32));
  auto kernel = compile_and_load(*k);
  host::Ndarray arr(Scalar::F32, {6, 10});
  host::LaunchFrame frame(kernel->abi);
  frame.set_ndarray(0, arr);
  frame.set_seed(5);
  test_device().launch(*kernel, frame.context());
  const float* p = arr.data_as<float>();
  for (int r = 0; r < 6; ++r)
    for (int c = 0; c < 10; ++c) {
      if (r == 0 && c == 1) continue;  // written by the second task
      if (c % 2)
        EXPECT_EQ(p[r * 10 + c], 0.0f) << r << "," << c;
      else
        EXPECT_GT(p[r * 10 + c], 0.0f) << r << "," << c;
    }
  EXPECT_GT(p[1], 0.0f);
  EXPECT_NE(p[1], p[0]);  // index 0 of both tasks, different streams
  std::set<float> distinct(p, p + 60);
  EXPECT_GT(distinct.size(), 25u);
}

TEST(CpuCodegen, StrictFloatMathWhenFastMathIsOff) {
  auto k = std::make_unique<ir::Kernel>();
  k->abi.name = "strict";
  k->fast_math = false;
  int a = add_ndarray(*k, "a", Scalar::F32);
  Builder b(k->body.get());
  Inst* task = range(b, {b.i32(0), shape(b, a, 0)});
  b.set_insert_end(task->region(0));
  Inst* i = b.loop_index(task, 0);
  Inst* x = load(b, Scalar::F32, a, i);
  // (x + 1e8) - 1e8 must not be folded to x.
  store(b, a, i, b.binary(Op::Sub, b.binary(Op::Add, x, b.f32(1e8)), b.f32(1e8)));
  std::string text = codegen::dump_llvm_ir(*k);
  EXPECT_EQ(text.find("reassoc"), std::string::npos);
  auto kernel = compile_and_load(*k);
  host::Ndarray arr(Scalar::F32, {4});
  arr.data_as<float>()[0] = 1.0f;
  host::LaunchFrame frame(kernel->abi);
  frame.set_ndarray(0, arr);
  test_device().launch(*kernel, frame.context());
  EXPECT_EQ(arr.data_as<float>()[0], 0.0f);
}

// Atomics on locals give the old value; bools live in memory as one byte.
TEST(CpuCodegen, LocalAtomicsAndBoolMemory) {
  auto k = std::make_unique<ir::Kernel>();
  k->abi.name = "bools";
  int flags = add_ndarray(*k, "flags", Scalar::Bool);
  k->abi.returns = {{Scalar::I32}, {Scalar::I32}, {Scalar::I32}};
  Builder b(k->body.get());
  Inst* task = serial(b);
  b.set_insert_end(task->region(0));
  Inst* v = b.alloca_(Scalar::I32);
  b.local_store(v, b.i32(10));
  Inst* old1 = b.atomic(ir::AtomicOp::Add, v, b.i32(5));
  Inst* old2 = b.atomic(ir::AtomicOp::Max, v, b.i32(3));
  Inst* count = b.alloca_(Scalar::I32);
  Inst* loop = b.range_for({b.i32(0), shape(b, flags, 0)});
  b.set_insert_end(loop->region(0));
  Inst* i = b.loop_index(loop, 0);
  Inst* flag = load(b, Scalar::Bool, flags, i);
  Inst* set = b.if_(flag);
  b.set_insert_end(set->region(0));
  b.local_store(count, b.binary(Op::Add, b.local_load(count), b.i32(1)));
  b.set_insert_end(loop->region(0));
  store(b, flags, i, b.unary(Op::LogicNot, flag));
  b.set_insert_end(task->region(0));
  b.make(Op::Return, Scalar::Void, {old1, old2, b.local_load(count)});
  auto kernel = compile_and_load(*k);
  std::vector<uint8_t> bytes{1, 0, 1, 1, 0};
  host::Ndarray arr(bytes.data(), Scalar::Bool, {5});
  host::LaunchFrame frame(kernel->abi);
  frame.set_ndarray(0, arr);
  test_device().launch(*kernel, frame.context());
  EXPECT_EQ(frame.returned<int32_t>(0), 10);
  EXPECT_EQ(frame.returned<int32_t>(1), 15);
  EXPECT_EQ(frame.returned<int32_t>(2), 3);
  EXPECT_EQ(bytes, (std::vector<uint8_t>{0, 1, 0, 0, 1}));
}

// 3-d stores then repeat-mode nearest sampling of what was stored.
TEST(CpuCodegen, Texture3dStoreAndRepeatSample) {
  host::Texture vol(TextureFormat::RG32F, 4, 2, 3);
  auto k = std::make_unique<ir::Kernel>();
  k->abi.name = "vol";
  ParamDesc p;
  p.name = "vol";
  p.kind = ParamKind::Texture;
  p.ndim = 3;
  k->abi.params.push_back(p);
  ResourceDesc r;
  r.kind = ResourceKind::Texture;
  r.format = TextureFormat::RG32F;
  r.ndim = 3;
  r.param = 0;
  k->abi.resources.push_back(r);
  k->abi.returns = {{Scalar::F32}, {Scalar::F32}};
  Builder b(k->body.get());
  Inst* task = offload(b, ir::TaskKind::StructFor, {}, 0);
  b.set_insert_end(task->region(0));
  Inst* x = b.loop_index(task, 0);
  Inst* y = b.loop_index(task, 1);
  Inst* z = b.loop_index(task, 2);
  Inst* val =
      b.cast(Scalar::F32, b.binary(Op::Add, b.binary(Op::Add, x, b.binary(Op::Mul, y, b.i32(10))),
                                   b.binary(Op::Mul, z, b.i32(100))));
  b.make(Op::TexStore, Scalar::Void, {x, y, z, val, b.unary(Op::Neg, val), b.f32(0), b.f32(0)}, 0,
         3);
  b.set_insert_end(k->body.get());
  Inst* s = serial(b);
  b.set_insert_end(s->region(0));
  // u = 1.3 -> x = floor(5.2) = 5 -> repeat 1; v = -0.25 -> floor(-0.5) = -1 -> 1; w = 0.5 -> 1
  Inst* c0 = b.make(Op::TexSample, Scalar::F32, {b.f32(1.3), b.f32(-0.25), b.f32(0.5)}, 0, 0);
  c0->bits = ir::kSampleRepeat;
  Inst* c1 = b.make(Op::TexSample, Scalar::F32, {b.f32(1.3), b.f32(-0.25), b.f32(0.5)}, 0, 1);
  c1->bits = ir::kSampleRepeat;
  b.make(Op::Return, Scalar::Void, {c0, c1});
  auto kernel = compile_and_load(*k);
  host::LaunchFrame frame(kernel->abi);
  frame.set_texture(0, vol);
  test_device().launch(*kernel, frame.context());
  EXPECT_EQ(vol.read(3, 1, 2)[0], 213.0f);
  EXPECT_EQ(vol.read(3, 1, 2)[1], -213.0f);
  EXPECT_EQ(vol.read(3, 1, 2)[3], 1.0f);
  EXPECT_FLOAT_EQ(frame.returned<float>(0), 111.0f);
  EXPECT_FLOAT_EQ(frame.returned<float>(1), -111.0f);
}
