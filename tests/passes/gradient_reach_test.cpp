// Gradients that pass only through ops without a derivative (passes/gradient_reach.h): the
// activity analysis on kernels built with the IR builder, through the pipeline's entry point
// (gradient_warnings) as a K.grad launch runs it.
#include <gtest/gtest.h>

#include <functional>

#include "compiler/ir/op.h"
#include "compiler/passes/gradient_reach.h"
#include "compiler/passes/pipeline.h"
#include "pass_test_util.h"

namespace loom::passes {
namespace {

using ir::Builder;
using ir::Inst;
using ir::Op;
using testing::add_field;
using testing::add_ndarray;
using testing::add_value_param;
using testing::new_kernel;

// Slots: x, w (f32 ndarrays, read), y (f32 ndarray, written), grid (f32 field of 64),
// count (i32 ndarray); parameter a (f32). One loop over [0, 16); `body` builds y[i]'s value
// or whatever it wants, from x[i] and w[i].
struct Slots {
  int x, w, y, grid, count;
};
using Body = std::function<void(Builder&, const Slots&, Inst* i, Inst* x, Inst* w)>;

std::vector<GradientWarning> warnings_of(const Body& body) {
  auto k = new_kernel("p2g");
  Slots s{};
  s.x = add_ndarray(*k, "x", Scalar::F32, 1);
  s.w = add_ndarray(*k, "w", Scalar::F32, 1);
  s.y = add_ndarray(*k, "y", Scalar::F32, 1);
  s.grid = add_field(*k, "grid", Scalar::F32, {64});
  s.count = add_ndarray(*k, "count", Scalar::I32, 1);
  add_value_param(*k, "a", Scalar::F32);
  Builder b(k->body.get());
  Inst* loop = b.range_for({b.i32(0), b.i32(16)});
  b.set_insert_end(loop->region(0));
  Inst* i = b.loop_index(loop, 0);
  b.set_node(1);
  Inst* x = b.global_load(b.global_ptr(Scalar::F32, s.x, {i}));
  Inst* w = b.global_load(b.global_ptr(Scalar::F32, s.w, {i}));
  body(b, s, i, x, w);
  PipelineOptions po;
  po.adjoint = AdjointOptions{};  // every float slot has an adjoint
  return gradient_warnings(*k, po);
}

void store_y(Builder& b, const Slots& s, Inst* i, Inst* v) {
  b.set_node(20);
  b.global_store(b.global_ptr(Scalar::F32, s.y, {i}), v);
}

std::string describe(const std::vector<GradientWarning>& ws) {
  std::string s;
  for (const GradientWarning& w : ws)
    s += "node " + std::to_string(w.node) + ": " + w.message + "\n";
  return s;
}

TEST(GradientReach, AStoreThatDependsOnAnInputOnlyThroughRoundingIsReported) {
  auto ws = warnings_of([](Builder& b, const Slots& s, Inst* i, Inst* x, Inst*) {
    b.set_node(7);
    Inst* f = b.unary(Op::Floor, x);
    store_y(b, s, i, b.binary(Op::Mul, f, b.f32(3)));
  });
  ASSERT_EQ(ws.size(), 1u) << describe(ws);
  EXPECT_EQ(ws[0].node, 7);
  EXPECT_NE(ws[0].message.find("the gradient of y with respect to x stops at this floor"),
            std::string::npos)
      << ws[0].message;
}

TEST(GradientReach, ThroughAnIntegerConversionAndAVariableAndForAParameter) {
  auto ws = warnings_of([](Builder& b, const Slots& s, Inst* i, Inst*, Inst*) {
    b.set_node(4);
    Inst* a = b.arg(Scalar::F32, 4);
    b.set_node(5);
    Inst* n = b.cast(Scalar::I32, b.binary(Op::Mul, a, b.f32(10)));  // int(a * 10)
    b.set_node(6);
    Inst* v = b.alloca_(Scalar::F32);
    b.local_store(v, b.cast(Scalar::F32, n));
    store_y(b, s, i, b.local_load(v));
  });
  ASSERT_EQ(ws.size(), 1u) << describe(ws);
  EXPECT_EQ(ws[0].node, 5);
  EXPECT_NE(ws[0].message.find("the gradient of y with respect to a stops at this conversion to "
                               "i32"),
            std::string::npos)
      << ws[0].message;
}

// y = x + floor(w): active for x, so only w is reported.
TEST(GradientReach, EachInputIsJudgedOnItsOwn) {
  auto ws = warnings_of([](Builder& b, const Slots& s, Inst* i, Inst* x, Inst* w) {
    b.set_node(8);
    Inst* fx = b.unary(Op::Floor, x);
    Inst* fw = b.unary(Op::Floor, w);
    store_y(b, s, i, b.binary(Op::Add, b.binary(Op::Add, x, fx), fw));
  });
  ASSERT_EQ(ws.size(), 1u) << describe(ws);
  EXPECT_NE(ws[0].message.find("with respect to w stops"), std::string::npos) << ws[0].message;
}

// What is not reported: indices computed from an input (MPM's particle-to-grid), conditions
// (relu as an if and as a select), integer outputs, values with a derivative all the way.
TEST(GradientReach, IndicesConditionsAndDifferentiablePathsAreNotReported) {
  const std::vector<Body> fine = {
      // base = int(x * 4); fx = x * 4 - float(base); grid[base] += fx * w
      [](Builder& b, const Slots& s, Inst*, Inst* x, Inst* w) {
        Inst* scaled = b.binary(Op::Mul, x, b.f32(4));
        Inst* base = b.cast(Scalar::I32, scaled);
        Inst* fx = b.binary(Op::Sub, scaled, b.cast(Scalar::F32, base));
        b.atomic(ir::AtomicOp::Add, b.global_ptr(Scalar::F32, s.grid, {base}),
                 b.binary(Op::Mul, fx, w));
      },
      // grid[int(x * 4)] += 1
      [](Builder& b, const Slots& s, Inst*, Inst* x, Inst*) {
        Inst* base = b.cast(Scalar::I32, b.binary(Op::Mul, x, b.f32(4)));
        b.atomic(ir::AtomicOp::Add, b.global_ptr(Scalar::F32, s.grid, {base}), b.f32(1));
      },
      // if x > 0 { y = x } else { y = 0 }
      [](Builder& b, const Slots& s, Inst* i, Inst* x, Inst*) {
        Inst* c = b.if_(b.binary(Op::Gt, x, b.f32(0)));
        Builder then(c->region(0));
        store_y(then, s, i, x);
        Builder other(c->region(1));
        store_y(other, s, i, other.f32(0));
      },
      // y = select(x > 0, x * w, 0)
      [](Builder& b, const Slots& s, Inst* i, Inst* x, Inst* w) {
        store_y(b, s, i,
                b.select(b.binary(Op::Gt, x, b.f32(0)), b.binary(Op::Mul, x, w), b.f32(0)));
      },
      // count[i] = int(x): no adjoint to reach
      [](Builder& b, const Slots& s, Inst* i, Inst* x, Inst*) {
        b.global_store(b.global_ptr(Scalar::I32, s.count, {i}), b.cast(Scalar::I32, x));
      },
      // y = sin(x) * w
      [](Builder& b, const Slots& s, Inst* i, Inst* x, Inst* w) {
        store_y(b, s, i, b.binary(Op::Mul, b.unary(Op::Sin, x), w));
      },
  };
  for (size_t c = 0; c < fine.size(); ++c) {
    auto ws = warnings_of(fine[c]);
    EXPECT_TRUE(ws.empty()) << "case " << c << ":\n" << describe(ws);
  }
}

// Only slots with an adjoint count: without one for x, floor(x) cuts nothing.
TEST(GradientReach, OnlyDifferentiatedInputsAndOutputsCount) {
  auto k = new_kernel("k");
  int x = add_ndarray(*k, "x", Scalar::F32, 1);
  int y = add_ndarray(*k, "y", Scalar::F32, 1);
  Builder b(k->body.get());
  Inst* loop = b.range_for({b.i32(0), b.i32(4)});
  b.set_insert_end(loop->region(0));
  Inst* i = b.loop_index(loop, 0);
  Inst* v = b.unary(Op::Floor, b.global_load(b.global_ptr(Scalar::F32, x, {i})));
  b.global_store(b.global_ptr(Scalar::F32, y, {i}), v);
  EXPECT_EQ(gradient_reach(*k, {false, true}).size(), 0u);
  EXPECT_EQ(gradient_reach(*k, {true, false}).size(), 0u);
  EXPECT_EQ(gradient_reach(*k, {true, true}).size(), 1u);
}

}  // namespace
}  // namespace loom::passes
