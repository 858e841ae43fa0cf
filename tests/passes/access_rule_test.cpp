// The global data access rule of reverse mode (passes/access_rule.h), as the pipeline checks it
// when it builds an adjoint: reads after writes of the same element it proves are errors naming
// both nodes; the ones it cannot decide are asserts in debug adjoints, run by the reference
// interpreter.
#include <gtest/gtest.h>

#include <functional>

#include "compiler/ir/op.h"
#include "compiler/passes/pipeline.h"
#include "interpreter.h"
#include "pass_test_util.h"
#include "runtime/common/error.h"

namespace loom::passes {
namespace {

using ir::Builder;
using ir::Inst;
using ir::Op;
using testing::add_ndarray;
using testing::add_value_param;
using testing::Interpreter;
using testing::make_memory;
using testing::Memory;
using testing::new_kernel;

constexpr int64_t kN = 16;

// A kernel over f64 ndarrays x (read), y (written, then maybe read), z (written) and an i32
// value parameter j, with one loop over [0, kN) whose body `body` builds.
struct Kernel {
  std::unique_ptr<ir::Kernel> k;
  int x, y, z;
};
using Body = std::function<void(Builder&, const Kernel&, Inst* i, Inst* loop)>;

Kernel kernel(const Body& body) {
  Kernel t{new_kernel("step"), 0, 0, 0};
  t.x = add_ndarray(*t.k, "x", Scalar::F64, 1);
  t.y = add_ndarray(*t.k, "y", Scalar::F64, 1);
  t.z = add_ndarray(*t.k, "z", Scalar::F64, 1);
  add_value_param(*t.k, "j", Scalar::I32);
  Builder b(t.k->body.get());
  Inst* loop = b.range_for({b.i32(0), b.i32(kN)});
  b.set_insert_end(loop->region(0));
  body(b, t, b.loop_index(loop, 0), loop);
  return t;
}

Inst* load(Builder& b, int slot, Inst* i) {
  return b.global_load(b.global_ptr(Scalar::F64, slot, {i}));
}
void store(Builder& b, int slot, Inst* i, Inst* v) {
  b.global_store(b.global_ptr(Scalar::F64, slot, {i}), v);
}

// The adjoint through the whole pipeline, or the error that stopped it ("" if none).
std::string adjoint_error(ir::Kernel& k, bool debug = false) {
  PipelineOptions po;
  po.debug = debug;
  po.adjoint = AdjointOptions{};
  try {
    run_pipeline(k, po);
  } catch (const Error& e) {
    EXPECT_EQ(e.place().kernel, "step");
    return "node " + std::to_string(e.place().node) + ": " + e.message();
  }
  return "";
}

TEST(AccessRule, AReadAfterAWriteOfTheSameElementInOneThreadIsAnError) {
  // y[i] += x[i] (atomic); z[i] = y[i]
  Kernel t = kernel([](Builder& b, const Kernel& t, Inst* i, Inst*) {
    b.set_node(3);
    b.atomic(ir::AtomicOp::Add, b.global_ptr(Scalar::F64, t.y, {i}), load(b, t.x, i));
    b.set_node(5);
    store(b, t.z, i, load(b, t.y, i));
  });
  std::string e = adjoint_error(*t.k);
  EXPECT_NE(e.find("node 5: cannot differentiate kernel 'step': node 5 reads y[i0] after node 3 "
                   "wrote to it"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("the adjoint would recompute node 5 from memory that node 3 changed"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("docs/autodiff.md"), std::string::npos) << e;
}

TEST(AccessRule, AWriteInABranchThenAReadAfterItIsAnError) {
  // if x[i] > 0 { y[i] = x[i] }; z[i] = y[i] * 2
  Kernel t = kernel([](Builder& b, const Kernel& t, Inst* i, Inst*) {
    Inst* xi = load(b, t.x, i);
    Inst* c = b.if_(b.binary(Op::Gt, xi, b.const_float(Scalar::F64, 0)));
    Builder then(c->region(0));
    then.set_node(9);
    store(then, t.y, i, xi);
    b.set_node(14);
    store(b, t.z, i, b.binary(Op::Mul, load(b, t.y, i), b.const_float(Scalar::F64, 2)));
  });
  std::string e = adjoint_error(*t.k);
  EXPECT_NE(
      e.find(
          "node 14: cannot differentiate kernel 'step': node 14 reads y[i0] after node 9 wrote it"),
      std::string::npos)
      << e;
}

TEST(AccessRule, ALoopThatReadsWhatAnEarlierLoopWroteIsAnError) {
  Kernel t{new_kernel("step"), 0, 0, 0};
  t.x = add_ndarray(*t.k, "x", Scalar::F64, 1);
  t.y = add_ndarray(*t.k, "y", Scalar::F64, 1);
  t.z = add_ndarray(*t.k, "z", Scalar::F64, 1);
  Builder b(t.k->body.get());
  Inst* n = b.make(Op::ResourceShape, Scalar::I32, {}, t.x, 0);
  Inst* first = b.range_for({b.i32(0), n});
  Builder fb(first->region(0));
  Inst* i = fb.loop_index(first, 0);
  fb.set_node(4);
  store(fb, t.y, i, fb.unary(Op::Sin, load(fb, t.x, i)));
  Inst* second = b.range_for({b.i32(0), n});
  Builder sb(second->region(0));
  Inst* k = sb.loop_index(second, 0);
  sb.set_node(8);
  store(sb, t.z, k, load(sb, t.y, k));
  std::string e = adjoint_error(*t.k);
  EXPECT_NE(e.find("node 8 reads y[i0] after node 4 (in an earlier loop) wrote it"),
            std::string::npos)
      << e;
}

// Different elements, reads before writes, the two arms of one if: none break the rule.
TEST(AccessRule, WhatTheRuleAllows) {
  const std::vector<Body> fine = {
      // x[i] = 2 * x[i] (read, then overwrite: right under a tape)
      [](Builder& b, const Kernel& t, Inst* i, Inst*) {
        store(b, t.x, i, b.binary(Op::Mul, load(b, t.x, i), b.const_float(Scalar::F64, 2)));
      },
      // y[i] = x[i]; z[i] = y[i + 1]: another element in the same thread
      [](Builder& b, const Kernel& t, Inst* i, Inst*) {
        store(b, t.y, i, load(b, t.x, i));
        Inst* next = b.binary(Op::Add, i, b.i32(1));
        store(b, t.z, i, load(b, t.y, next));
      },
      // if x[i] > 0 { y[i] = 1 } else { z[i] = y[i] }
      [](Builder& b, const Kernel& t, Inst* i, Inst*) {
        Inst* c = b.if_(b.binary(Op::Gt, load(b, t.x, i), b.const_float(Scalar::F64, 0)));
        Builder then(c->region(0));
        store(then, t.y, i, then.const_float(Scalar::F64, 1));
        Builder other(c->region(1));
        store(other, t.z, i, load(other, t.y, i));
      },
      // y[i] = x[i]; z[i] = y[i]: forwarded by the first simplification, so nothing is read
      [](Builder& b, const Kernel& t, Inst* i, Inst*) {
        store(b, t.y, i, b.unary(Op::Sin, load(b, t.x, i)));
        store(b, t.z, i, load(b, t.y, i));
      },
  };
  for (size_t c = 0; c < fine.size(); ++c) {
    Kernel t = kernel(fine[c]);
    EXPECT_EQ(adjoint_error(*t.k), "") << "case " << c;
  }
}

int count_asserts(const ir::Kernel& k) {
  int n = 0;
  ir::walk(*k.body, [&](const Inst& in) { n += in.op == Op::Assert; });
  return n;
}

// y[j] = x[i]; z[i] = y[i]: the same element when j == i, which only the launch knows. A debug
// adjoint checks it; the assert names the read and the write.
TEST(AccessRule, UndecidedIndicesAreCheckedAtRunTimeInDebugAdjoints) {
  Body body = [](Builder& b, const Kernel& t, Inst* i, Inst*) {
    b.set_node(2);
    Inst* j = b.arg(Scalar::I32, 3);
    b.set_node(6);
    b.global_store(b.global_ptr(Scalar::F64, t.y, {j}), load(b, t.x, i));
    b.set_node(11);
    store(b, t.z, i, load(b, t.y, i));
  };
  Kernel release = kernel(body);
  ASSERT_EQ(adjoint_error(*release.k, false), "");
  EXPECT_EQ(count_asserts(*release.k), 0);

  Kernel debug = kernel(body);
  ASSERT_EQ(adjoint_error(*debug.k, true), "");
  const Inst* check = nullptr;
  ir::walk(*debug.k->body, [&](const Inst& in) {
    if (in.op == Op::Assert) check = &in;
  });
  ASSERT_NE(check, nullptr) << ir::print_kernel(*debug.k);
  EXPECT_EQ(check->assert_node(), 11);
  EXPECT_NE(check->message().find("kernel 'step': node 11 reads y[i0] after node 6 wrote it"),
            std::string::npos)
      << check->message();
  EXPECT_EQ(count_asserts(*debug.k), 1);

  // The adjoint of a launch with j = 3 fails (thread 3 read what it wrote); j = 20 does not.
  for (int64_t j : {3, 20}) {
    std::vector<std::vector<int64_t>> shapes(debug.k->abi.resources.size(), {2 * kN});
    Memory m = make_memory(*debug.k, shapes, [](int, int64_t) { return uint64_t{0}; });
    m.args[3] = static_cast<uint64_t>(j);
    Interpreter(*debug.k, m).run();
    EXPECT_EQ(m.errors, j == 3 ? 1 : 0) << "j = " << j;
  }
}

// A write under a condition the read is not under: the check includes the condition.
TEST(AccessRule, ARunTimeCheckHoldsOnlyWhenTheWriteRan) {
  Kernel debug = kernel([](Builder& b, const Kernel& t, Inst* i, Inst*) {
    Inst* j = b.arg(Scalar::I32, 3);
    Inst* c = b.if_(b.binary(Op::Lt, i, b.i32(2)));
    Builder then(c->region(0));
    then.set_node(6);
    then.global_store(then.global_ptr(Scalar::F64, t.y, {j}), load(then, t.x, i));
    b.set_node(11);
    store(b, t.z, i, load(b, t.y, i));
  });
  ASSERT_EQ(adjoint_error(*debug.k, true), "");
  ASSERT_EQ(count_asserts(*debug.k), 1) << ir::print_kernel(*debug.k);
  // j = 1: thread 1 writes y[1] and reads it; j = 5: thread 5 reads y[5] but did not write it.
  for (int64_t j : {1, 5}) {
    std::vector<std::vector<int64_t>> shapes(debug.k->abi.resources.size(), {2 * kN});
    Memory m = make_memory(*debug.k, shapes, [](int, int64_t) { return uint64_t{0}; });
    m.args[3] = static_cast<uint64_t>(j);
    Interpreter(*debug.k, m).run();
    EXPECT_EQ(m.errors, j == 1 ? 1 : 0) << "j = " << j;
  }
}

}  // namespace
}  // namespace loom::passes
