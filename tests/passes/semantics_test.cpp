// The whole pipeline keeps what kernels compute: each kernel runs in the reference
// interpreter before (type-checked only) and after run_pipeline, on the same inputs.
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "compiler/passes/pipeline.h"
#include "compiler/passes/type_check.h"
#include "tests/passes/interpreter.h"
#include "tests/passes/pass_test_util.h"

using namespace loom;
using namespace loom::ir;
using namespace loom::passes;
using namespace loom::passes::testing;

namespace {

uint64_t f32_bits(float f) { return float_bits(static_cast<double>(f)); }

// Deterministic, varied contents: small integers, or floats with fractions.
uint64_t fill_value(const Kernel& k, int slot, int64_t i) {
  Scalar t = k.abi.resources[static_cast<size_t>(slot)].dtype;
  int64_t v = (i * 37 + slot * 11) % 23 - 7;
  if (is_float(t)) return f32_bits(static_cast<float>(v) * 0.75f);
  return make_const_int(t, v)->bits;
}

struct Outcome {
  Memory memory;
  std::string ir;
};

// Runs `k` before and after the pipeline and expects the same memory and returns.
void expect_same_results(std::unique_ptr<Kernel> k,
                         const std::vector<std::vector<int64_t>>& ndarray_shapes,
                         const std::vector<uint64_t>& args, bool debug = false,
                         int expected_errors = 0) {
  auto before = k->clone();
  type_check(*before);
  Memory m0 = make_memory(*before, ndarray_shapes,
                          [&](int s, int64_t i) { return fill_value(*before, s, i); });
  for (size_t i = 0; i < args.size(); ++i) m0.args[i] = args[i];
  Memory m1 = m0;
  const auto initial = m0.slots;
  Interpreter(*before, m0).run();
  EXPECT_NE(initial, m0.slots) << "the kernel under test writes nothing";
  run_pipeline(*k, {.debug = debug});
  Interpreter(*k, m1).run();
  std::string ir = print_kernel(*k);
  if (std::getenv("LOOM_SHOW_IR")) std::printf("%s\n", ir.c_str());  // for debugging a failure
  EXPECT_EQ(m0.slots, m1.slots) << ir;
  EXPECT_EQ(m0.returns, m1.returns) << ir;
  EXPECT_EQ(m0.errors, expected_errors);
  EXPECT_EQ(m1.errors, expected_errors) << ir;
}

Inst* at(Builder& b, int slot, std::initializer_list<Inst*> idx, Scalar t = Scalar::F32,
         int c = 0) {
  return b.global_ptr(t, slot, idx, c);
}

}  // namespace

TEST(Semantics, Saxpy) {
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
  Inst* xi = b.global_load(at(b, x, {i}));
  Inst* py = at(b, y, {i});
  Inst* yi = b.global_load(py);
  b.global_store(py, b.binary(Op::Add, b.binary(Op::Mul, a, xi), yi));
  expect_same_results(std::move(k), {{13}, {13}}, {f32_bits(2.5f)});
}

TEST(Semantics, StencilThroughAVariableWithPromotions) {
  auto k = new_kernel("stencil");
  add_value_param(*k, "w", Scalar::F64);
  int in = add_ndarray(*k, "in", Scalar::F32, 2);
  int out = add_field(*k, "out", Scalar::F32, {7, 9});
  Builder b(k->body.get());
  Inst* one = b.i32(1);
  Inst* n0 = b.make(Op::ResourceShape, Scalar::I32, {}, in, 0);
  Inst* n1 = b.make(Op::ResourceShape, Scalar::I32, {}, in, 1);
  Inst* loop = b.range_for({one, b.binary(Op::Sub, n0, one), one, b.binary(Op::Sub, n1, one)});
  b.set_insert_end(loop->region(0));
  Inst* i = b.loop_index(loop, 0);
  Inst* j = b.loop_index(loop, 1);
  Inst* sum = b.alloca_(Scalar::F32);
  b.local_store(sum, b.global_load(at(b, in, {b.binary(Op::Sub, i, one), j})));
  Inst* s1 = b.local_load(sum);
  b.local_store(sum,
                b.binary(Op::Add, s1, b.global_load(at(b, in, {b.binary(Op::Add, i, one), j}))));
  Inst* s2 = b.local_load(sum);
  b.local_store(sum,
                b.binary(Op::Add, s2, b.global_load(at(b, in, {i, b.binary(Op::Sub, j, one)}))));
  Inst* s3 = b.local_load(sum);
  b.local_store(sum,
                b.binary(Op::Add, s3, b.global_load(at(b, in, {i, b.binary(Op::Add, j, one)}))));
  Inst* w = b.arg(Scalar::F64, 0);
  Inst* v = b.binary(Op::Mul, b.local_load(sum), w);
  b.global_store(at(b, out, {i, j}), v);
  expect_same_results(std::move(k), {{7, 9}}, {float_bits(0.25)});
}

TEST(Semantics, SerialCodeTemporariesAndVariables) {
  auto k = new_kernel("temps");
  add_value_param(*k, "bias", Scalar::I32);
  int count = add_field(*k, "count", Scalar::I32, {});
  int y = add_field(*k, "y", Scalar::I32, {12});
  Builder b(k->body.get());
  Inst* bias = b.arg(Scalar::I32, 0);
  Inst* pc = b.global_ptr(Scalar::I32, count, {});
  Inst* n = b.global_load(pc);  // from memory: a temporary
  Inst* var = b.alloca_(Scalar::I32);
  b.local_store(var, b.binary(Op::Mul, n, bias));
  Inst* c = b.binary(Op::Gt, n, b.i32(0));
  Inst* br = b.if_(c);
  b.set_insert_end(br->region(0));
  b.local_store(var, b.binary(Op::Add, b.local_load(var), b.i32(100)));
  b.set_insert_end(k->body.get());
  Inst* loop = b.range_for({b.i32(0), b.i32(12)});
  b.set_insert_end(loop->region(0));
  Inst* i = b.loop_index(loop, 0);
  Inst* v = b.binary(Op::Add, b.binary(Op::Mul, i, n), b.local_load(var));
  b.global_store(at(b, y, {i}, Scalar::I32), v);
  b.set_insert_end(k->body.get());
  b.global_store(pc, b.binary(Op::Add, n, b.i32(1)));  // after the loop: a later serial task
  Inst* dyn = b.range_for({b.i32(0), b.global_load(pc)});
  b.set_insert_end(dyn->region(0));
  Inst* d = b.loop_index(dyn, 0);
  b.atomic(AtomicOp::Add, at(b, y, {d}, Scalar::I32), b.local_load(var));
  expect_same_results(std::move(k), {}, {static_cast<uint64_t>(3)});
}

TEST(Semantics, WhileLoopsBreaksAndAtomicsOnVariables) {
  auto k = new_kernel("collatz");
  add_value_param(*k, "start", Scalar::I32);
  int out = add_field(*k, "out", Scalar::I32, {4});
  Builder b(k->body.get());
  Inst* start = b.arg(Scalar::I32, 0);
  Inst* loop = b.range_for({b.i32(0), b.i32(4)});
  b.set_insert_end(loop->region(0));
  Inst* i = b.loop_index(loop, 0);
  Inst* x = b.alloca_(Scalar::I32);
  Inst* steps = b.alloca_(Scalar::I32);
  Inst* biggest = b.alloca_(Scalar::I32);
  b.local_store(x, b.binary(Op::Add, start, i));
  Inst* w = b.while_();
  b.set_insert_end(w->region(0));
  Inst* xv = b.local_load(x);
  Inst* done = b.if_(b.binary(Op::Le, xv, b.i32(1)));
  b.set_insert_end(done->region(0));
  b.make(Op::Break, Scalar::Void);
  b.set_insert_end(w->region(0));
  b.atomic(AtomicOp::Add, steps, b.i32(1));
  b.atomic(AtomicOp::Max, biggest, xv);
  Inst* odd = b.if_(b.binary(Op::Eq, b.binary(Op::Mod, xv, b.i32(2)), b.i32(1)));
  b.set_insert_end(odd->region(0));
  b.local_store(x, b.binary(Op::Add, b.binary(Op::Mul, xv, b.i32(3)), b.i32(1)));
  b.make(Op::Continue, Scalar::Void);
  b.set_insert_end(w->region(0));
  b.local_store(x, b.binary(Op::Div, xv, b.i32(2)));
  b.set_insert_end(loop->region(0));
  Inst* result =
      b.binary(Op::Add, b.binary(Op::Mul, b.local_load(steps), b.i32(1000)), b.local_load(biggest));
  b.global_store(at(b, out, {i}, Scalar::I32), result);
  expect_same_results(std::move(k), {}, {static_cast<uint64_t>(27)});
}

TEST(Semantics, VectorFieldsInBothLayoutsAndStructFor) {
  for (Layout layout : {Layout::AoS, Layout::SoA}) {
    auto k = new_kernel("vectors");
    int v = add_field(*k, "v", Scalar::F32, {5, 3}, 3, layout);
    int nd = add_ndarray(*k, "w", Scalar::F32, 2, 2, layout);
    Builder b(k->body.get());
    Inst* sf = b.struct_for(v, 2);
    b.set_insert_end(sf->region(0));
    Inst* i = b.loop_index(sf, 0);
    Inst* j = b.loop_index(sf, 1);
    Inst* c0 = b.global_load(at(b, v, {i, j}, Scalar::F32, 0));
    Inst* c2 = b.global_load(at(b, v, {i, j}, Scalar::F32, 2));
    b.global_store(at(b, v, {i, j}, Scalar::F32, 1), b.binary(Op::Sub, c2, c0));
    b.global_store(at(b, nd, {j, i}, Scalar::F32, 1), b.binary(Op::Mul, c0, c2));
    expect_same_results(std::move(k), {{3, 5}}, {});
  }
}

TEST(Semantics, ParallelAtomicsAndAReduction) {
  auto k = new_kernel("reduce");
  int x = add_field(*k, "x", Scalar::I32, {16});
  int total = add_field(*k, "total", Scalar::I32, {});
  int lo = add_field(*k, "lo", Scalar::I32, {});
  Builder b(k->body.get());
  Inst* sf = b.struct_for(x, 1);
  b.set_insert_end(sf->region(0));
  Inst* xi = b.global_load(at(b, x, {b.loop_index(sf, 0)}, Scalar::I32));
  b.atomic(AtomicOp::Add, b.global_ptr(Scalar::I32, total, {}), xi);
  b.atomic(AtomicOp::Min, b.global_ptr(Scalar::I32, lo, {}), xi);
  b.set_insert_end(k->body.get());
  Inst* pt = b.global_ptr(Scalar::I32, total, {});
  b.atomic(AtomicOp::Xor, pt, b.i32(0x55));  // serial: demoted
  expect_same_results(std::move(k), {}, {});
}

TEST(Semantics, DebugBoundsChecksCatchOutOfRangeAccess) {
  auto k = new_kernel("oob");
  add_value_param(*k, "shift", Scalar::I32);
  int x = add_ndarray(*k, "x", Scalar::F32, 1);
  Builder b(k->body.get());
  Inst* shift = b.arg(Scalar::I32, 0);
  Inst* loop = b.range_for({b.i32(0), b.make(Op::ResourceShape, Scalar::I32, {}, x, 0)});
  b.set_insert_end(loop->region(0));
  Inst* i = b.loop_index(loop, 0);
  Inst* v = b.global_load(at(b, x, {b.binary(Op::Add, i, shift)}));  // i + 1 == n at the end
  b.global_store(at(b, x, {i}), v);
  // The reference stops the whole kernel at the bad access, the task stops the same way.
  expect_same_results(std::move(k), {{6}}, {static_cast<uint64_t>(1)}, /*debug=*/true,
                      /*expected_errors=*/1);
}

TEST(Semantics, RunningSumOverAKernelVariable) {
  auto k = new_kernel("running_sum");
  int x = add_field(*k, "x", Scalar::I32, {10});
  int out = add_field(*k, "out", Scalar::I32, {2});
  Builder b(k->body.get());
  Inst* sum = b.alloca_(Scalar::I32);
  Inst* best = b.alloca_(Scalar::I32);
  Inst* loop = b.range_for({b.i32(0), b.i32(10)});
  b.set_insert_end(loop->region(0));
  Inst* xi = b.global_load(at(b, x, {b.loop_index(loop, 0)}, Scalar::I32));
  b.atomic(AtomicOp::Add, sum, xi);
  Inst* bigger = b.if_(b.binary(Op::Gt, xi, b.local_load(best)));
  b.set_insert_end(bigger->region(0));
  b.local_store(best, xi);
  b.set_insert_end(k->body.get());
  b.global_store(at(b, out, {b.i32(0)}, Scalar::I32), b.local_load(sum));
  b.global_store(at(b, out, {b.i32(1)}, Scalar::I32), b.local_load(best));
  expect_same_results(std::move(k), {}, {});
}
