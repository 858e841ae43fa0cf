#include "compiler/passes/pipeline.h"

#include <random>

#include "runtime/common/error.h"
#include "tests/passes/pass_test_util.h"

using namespace loom;
using namespace loom::ir;
using namespace loom::passes;
using namespace loom::passes::testing;

namespace {

// y[i] = a * x[i] + y[i]
std::unique_ptr<Kernel> saxpy() {
  auto k = new_kernel("saxpy");
  add_value_param(*k, "a", Scalar::F32);
  int x = add_ndarray(*k, "x", Scalar::F32, 1);
  int y = add_ndarray(*k, "y", Scalar::F32, 1);
  Builder b(k->body.get());
  Inst* a = b.arg(Scalar::F32, 0);
  Inst* zero = b.i32(0);
  Inst* n = b.make(Op::ResourceShape, Scalar::I32, {}, x, 0);
  Inst* loop = b.range_for({zero, n});
  b.set_insert_end(loop->region(0));
  Inst* i = b.loop_index(loop, 0);
  Inst* xi = b.global_load(b.global_ptr(Scalar::F32, x, {i}));
  Inst* py = b.global_ptr(Scalar::F32, y, {i});
  Inst* yi = b.global_load(py);
  b.global_store(py, b.binary(Op::Add, b.binary(Op::Mul, a, xi), yi));
  return k;
}

// out[i, j] = (in[i-1, j] + in[i+1, j] + in[i, j-1] + in[i, j+1]) * 0.25 on the interior,
// written the way a graph lowers it: through a local variable, with an f64 weight argument.
std::unique_ptr<Kernel> stencil() {
  auto k = new_kernel("stencil");
  add_value_param(*k, "w", Scalar::F64);
  int in = add_ndarray(*k, "in", Scalar::F32, 2);
  int out = add_field(*k, "out", Scalar::F32, {64, 64});
  Builder b(k->body.get());
  Inst* one = b.i32(1);
  Inst* n0 = b.make(Op::ResourceShape, Scalar::I32, {}, in, 0);
  Inst* n1 = b.make(Op::ResourceShape, Scalar::I32, {}, in, 1);
  Inst* e0 = b.binary(Op::Sub, n0, one);
  Inst* e1 = b.binary(Op::Sub, n1, one);
  Inst* loop = b.range_for({one, e0, one, e1});
  b.set_insert_end(loop->region(0));
  Inst* i = b.loop_index(loop, 0);
  Inst* j = b.loop_index(loop, 1);
  Inst* sum = b.alloca_(Scalar::F32);
  auto at = [&](Inst* r, Inst* c) { return b.global_load(b.global_ptr(Scalar::F32, in, {r, c})); };
  Inst* up = b.binary(Op::Sub, i, one);
  b.local_store(sum, at(up, j));
  Inst* down = b.binary(Op::Add, i, one);
  Inst* s1 = b.local_load(sum);
  b.local_store(sum, b.binary(Op::Add, s1, at(down, j)));
  Inst* left = b.binary(Op::Sub, j, one);
  Inst* s2 = b.local_load(sum);
  b.local_store(sum, b.binary(Op::Add, s2, at(i, left)));
  Inst* right = b.binary(Op::Add, j, one);
  Inst* s3 = b.local_load(sum);
  b.local_store(sum, b.binary(Op::Add, s3, at(i, right)));
  Inst* w = b.arg(Scalar::F64, 0);
  Inst* s4 = b.local_load(sum);
  Inst* v = b.binary(Op::Mul, s4, w);  // f32 * f64: type_check promotes
  Inst* dst = b.global_ptr(Scalar::F32, out, {i, j});
  b.global_store(dst, v);  // f64 into an f32 field: converted back
  return k;
}

}  // namespace

TEST(Pipeline, PassNamesInOrder) {
  std::vector<std::string> expected = {
      "drop_asserts",   "type_check",    "full_simplify",    "autodiff",
      "licm",           "full_simplify", "offload",          "lower_access",
      "demote_atomics", "full_simplify", "privatize_scatter"};
  EXPECT_EQ(pipeline_pass_names(), expected);
}

TEST(Pipeline, ObserverAndTimingsSeeEveryPass) {
  auto k = saxpy();
  std::vector<std::string> seen;
  std::vector<PassTiming> timings;
  run_pipeline(
      *k, {},
      [&](std::string_view pass, Kernel& kernel) {
        seen.emplace_back(pass);
        EXPECT_EQ(&kernel, k.get());
      },
      &timings);
  EXPECT_EQ(seen, pipeline_pass_names());
  ASSERT_EQ(timings.size(), seen.size());
  for (size_t i = 0; i < timings.size(); ++i) {
    EXPECT_EQ(timings[i].pass, seen[i]);
    EXPECT_GE(timings[i].ms, 0.0);
  }
}

TEST(Pipeline, Saxpy) {
  auto k = saxpy();
  run_pipeline(*k, {});
  expect_ir(*k, R"(kernel saxpy
  param p0 a: value f32
  param p1 x: ndarray f32 ndim 1
  param p2 y: ndarray f32 ndim 1
  slot $0: ndarray f32 shape [?] from p1
  slot $1: ndarray f32 shape [?] from p2
  %0:f32 = arg p0+0
  %1:i32 = const 0
  %2:i32 = shape $0.0
  offload range_for %1, %2 {
    %4:i32 = loop_index %3.0
    %5:i64 = cast %4
    %6:f32 = element_ptr $0 %5
    %7:f32 = global_load %6
    %8:f32 = element_ptr $1 %5
    %9:f32 = global_load %8
    %10:f32 = mul %0, %7
    %11:f32 = add %10, %9
    global_store %8, %11
  }
)",
            {.offloaded = true, .lowered = true});
}

TEST(Pipeline, SaxpyDebug) {
  auto k = saxpy();
  run_pipeline(*k, {.debug = true});
  EXPECT_TRUE(k->debug);
  expect_ir(*k, R"(kernel saxpy
  param p0 a: value f32
  param p1 x: ndarray f32 ndim 1
  param p2 y: ndarray f32 ndim 1
  slot $0: ndarray f32 shape [?] from p1
  slot $1: ndarray f32 shape [?] from p2
  %0:i32 = shape $0.0
  %1:i32 = shape $1.0
  %2:f32 = arg p0+0
  %3:i32 = const 0
  offload range_for %3, %0 {
    %5:i32 = loop_index %4.0
    %6:i64 = cast %5
    %7:f32 = element_ptr $0 %6
    bounds_check $0.0 %5, %0
    %9:f32 = global_load %7
    %10:f32 = element_ptr $1 %6
    bounds_check $1.0 %5, %1
    %12:f32 = global_load %10
    %13:f32 = mul %2, %9
    %14:f32 = add %13, %12
    bounds_check $1.0 %5, %1
    global_store %10, %14
  }
)",
            {.offloaded = true, .lowered = true});
}

TEST(Pipeline, Stencil2d) {
  auto k = stencil();
  run_pipeline(*k, {});
  expect_ir(*k, R"(kernel stencil
  param p0 w: value f64
  param p1 in: ndarray f32 ndim 2
  slot $0: ndarray f32 shape [?, ?] from p1
  slot $1: field f32 shape [64, 64] field out
  %0:i32 = shape $0.1
  %1:i64 = cast %0
  %2:i32 = const 1
  %3:i32 = shape $0.0
  %4:i32 = sub %3, %2
  %5:i32 = sub %0, %2
  %6:f64 = arg p0+0
  offload range_for %2, %4, %2, %5 {
    %8:i32 = loop_index %7.0
    %9:i32 = loop_index %7.1
    %10:i32 = sub %8, %2
    %11:i64 = cast %10
    %12:i64 = cast %9
    %13:i64 = mul %11, %1
    %14:i64 = add %13, %12
    %15:f32 = element_ptr $0 %14
    %16:f32 = global_load %15
    %17:i32 = add %8, %2
    %18:i64 = cast %17
    %19:i64 = mul %18, %1
    %20:i64 = add %19, %12
    %21:f32 = element_ptr $0 %20
    %22:f32 = global_load %21
    %23:f32 = add %16, %22
    %24:i32 = sub %9, %2
    %25:i64 = cast %8
    %26:i64 = cast %24
    %27:i64 = mul %25, %1
    %28:i64 = add %27, %26
    %29:f32 = element_ptr $0 %28
    %30:f32 = global_load %29
    %31:f32 = add %23, %30
    %32:i32 = add %9, %2
    %33:i64 = cast %32
    %34:i64 = add %27, %33
    %35:f32 = element_ptr $0 %34
    %36:f32 = global_load %35
    %37:f32 = add %31, %36
    %38:f64 = cast %37
    %39:f64 = mul %38, %6
    %40:i64 = const 6
    %41:i64 = shl %25, %40
    %42:i64 = add %41, %12
    %43:f32 = element_ptr $1 %42
    %44:f32 = cast %39
    global_store %43, %44
  }
)",
            {.offloaded = true, .lowered = true});
}

// A large random loop body (mixed types, variables, neighbour loads): every pass must keep
// the IR valid (run_pipeline verifies after each one) and the stored value must survive.
TEST(Pipeline, LargeRandomKernelStaysValid) {
  auto k = new_kernel("large");
  add_value_param(*k, "a", Scalar::F32);
  int x = add_ndarray(*k, "x", Scalar::F32, 2);
  Builder b(k->body.get());
  Inst* a = b.arg(Scalar::F32, 0);
  Inst* loop = b.range_for({b.i32(0), b.i32(64), b.i32(0), b.i32(64)});
  b.set_insert_end(loop->region(0));
  Inst* i = b.loop_index(loop, 0);
  Inst* j = b.loop_index(loop, 1);
  std::mt19937 rng(7);
  Inst* v = b.alloca_(Scalar::F32);
  Inst* acc = a;
  std::vector<Inst*> values{a, b.global_load(b.global_ptr(Scalar::F32, x, {i, j}))};
  for (int n = 0; n < 5000; ++n) {
    Inst* p = values[rng() % values.size()];
    Inst* q = values[rng() % values.size()];
    Inst* r = nullptr;
    switch (rng() % 5) {
      case 0: r = b.binary(Op::Add, p, q); break;
      case 1: r = b.binary(Op::Mul, p, b.i32(static_cast<int>(rng() % 4))); break;  // f32 * i32
      case 2:
        b.local_store(v, p);
        r = b.local_load(v);
        break;
      case 3: {
        Inst* jj = b.binary(Op::Add, j, b.i32(static_cast<int>(rng() % 3)));
        r = b.global_load(b.global_ptr(Scalar::F32, x, {i, jj}));
        break;
      }
      default: r = b.binary(Op::Sub, p, q); break;
    }
    values.push_back(r);
    acc = b.binary(Op::Add, acc, r);
  }
  b.global_store(b.global_ptr(Scalar::F32, x, {i, j}), acc);
  run_pipeline(*k, {.debug = true});
  EXPECT_EQ(verify(*k, {.offloaded = true, .lowered = true}), "");
  ASSERT_EQ(k->body->insts.back()->op, Op::Offload);
  EXPECT_EQ(k->body->insts.back()->region(0)->insts.back()->op, Op::GlobalStore);
}

namespace {

// out[0] = a, after `assert a > 0`.
std::unique_ptr<Kernel> asserting() {
  auto k = new_kernel("asserting");
  add_value_param(*k, "a", Scalar::I32);
  int out = add_field(*k, "out", Scalar::I32, {1});
  Builder b(k->body.get());
  Inst* a = b.arg(Scalar::I32, 0);
  Inst* check = b.make(Op::Assert, Scalar::Void, {b.binary(Op::Gt, a, b.i32(0))}, 7);
  check->text = "a must be positive";
  b.global_store(b.global_ptr(Scalar::I32, out, {b.i32(0)}), a);
  return k;
}

int count_asserts(Kernel& k) {
  int n = 0;
  walk(*k.body, [&](Inst& i) { n += i.op == Op::Assert; });
  return n;
}

}  // namespace

TEST(Pipeline, AssertsExistOnlyInDebugBuilds) {
  auto release = asserting();
  run_pipeline(*release, {.debug = false});
  EXPECT_EQ(count_asserts(*release), 0);
  EXPECT_FALSE(release->debug);
  expect_ir(*release, R"(kernel asserting
  param p0 a: value i32
  slot $0: field i32 shape [1] field out
  %0:i32 = arg p0+0
  offload serial {
    %2:i64 = const 0
    %3:i32 = element_ptr $0 %2
    global_store %3, %0
  }
)",
            {.offloaded = true, .lowered = true});
  auto debug = asserting();
  run_pipeline(*debug, {.debug = true});
  EXPECT_EQ(count_asserts(*debug), 1);
  EXPECT_TRUE(debug->debug);
}

TEST(Pipeline, TheInputIsVerifiedBeforeTheFirstPass) {
  auto k = new_kernel("bad_input");
  Builder b(k->body.get());
  Inst* loop = b.range_for({b.i32(0), b.i32(4)});
  Inst* i = b.loop_index(loop, 0);  // outside its loop: no pass may see this
  b.binary(Op::Add, i, b.i32(1));
  try {
    run_pipeline(*k, {});
    ADD_FAILURE() << "no error";
  } catch (const loom::InternalError& e) {
    EXPECT_NE(
        std::string(e.what()).find("IR verification failed after lowering (the pipeline's input): "
                                   "loop_index outside its loop"),
        std::string::npos)
        << e.what();
  }
  // Mixed operand types are type_check's job, not an input error.
  auto mixed = stencil();
  EXPECT_NO_THROW(run_pipeline(*mixed, {}));
}
