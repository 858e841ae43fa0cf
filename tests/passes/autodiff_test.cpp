// Reverse-mode autodiff (passes/autodiff.h): the adjoint kernel's gradients against central
// finite differences of the primal kernel in f64, both run by the reference interpreter, before
// and after the rest of the pipeline.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <random>

#include "compiler/ir/op.h"
#include "compiler/passes/autodiff.h"
#include "compiler/passes/forward_mode.h"
#include "compiler/passes/pipeline.h"
#include "interpreter.h"
#include "pass_test_util.h"
#include "runtime/common/error.h"
#include "tests/support/derivative_inputs.h"

namespace loom::passes {
namespace {

using ir::Builder;
using ir::Inst;
using ir::Op;
using testing::add_field;
using testing::add_ndarray;
using testing::add_value_param;
using testing::Interpreter;
using testing::make_memory;
using testing::Memory;
using testing::new_kernel;

uint64_t bits(double v) {
  uint64_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}
double real(uint64_t b) {
  double v;
  std::memcpy(&v, &b, sizeof v);
  return v;
}

constexpr int64_t kN = 16;

// A kernel over 1-d f64 ndarrays: the first `inputs` slots are read, `out` (the last) is
// written by `body(b, i, loads)`.
struct Elementwise {
  std::unique_ptr<ir::Kernel> kernel;
  int inputs;
};

Elementwise elementwise(int inputs,
                        const std::function<Inst*(Builder&, const std::vector<Inst*>&)>& body) {
  auto k = new_kernel("k");
  for (int j = 0; j < inputs; ++j) add_ndarray(*k, "x" + std::to_string(j), Scalar::F64, 1);
  int out = add_ndarray(*k, "y", Scalar::F64, 1);
  Builder b(k->body.get());
  Inst* n = b.make(Op::ResourceShape, Scalar::I32, {}, out, 0);
  Inst* loop = b.range_for({b.i32(0), n});
  b.set_insert_end(loop->region(0));
  Inst* i = b.loop_index(loop, 0);
  std::vector<Inst*> loads;
  loads.reserve(static_cast<size_t>(inputs));
  for (int j = 0; j < inputs; ++j)
    loads.push_back(b.global_load(b.global_ptr(Scalar::F64, j, {i})));
  b.global_store(b.global_ptr(Scalar::F64, out, {i}), body(b, loads));
  return {std::move(k), inputs};
}

// Runs the primal on `x` (per input slot), returns y.
std::vector<double> primal_y(const ir::Kernel& k, const std::vector<std::vector<double>>& x) {
  std::vector<std::vector<int64_t>> shapes(k.abi.resources.size(), {kN});
  Memory m = make_memory(k, shapes, [](int, int64_t) { return bits(0.0); });
  for (size_t j = 0; j < x.size(); ++j)
    for (int64_t i = 0; i < kN; ++i)
      m.slots[j][static_cast<size_t>(i)] = bits(x[j][static_cast<size_t>(i)]);
  Interpreter(k, m).run();
  std::vector<double> y;
  for (uint64_t v : m.slots.back()) y.push_back(real(v));
  return y;
}

// The adjoint kernel's x.grad for y.grad = w.
std::vector<std::vector<double>> adjoint_grads(const ir::Kernel& adjoint, size_t primal_slots,
                                               const std::vector<std::vector<double>>& x,
                                               const std::vector<double>& w) {
  std::vector<std::vector<int64_t>> shapes(adjoint.abi.resources.size(), {kN});
  Memory m = make_memory(adjoint, shapes, [](int, int64_t) { return bits(0.0); });
  for (size_t j = 0; j < x.size(); ++j)
    for (int64_t i = 0; i < kN; ++i)
      m.slots[j][static_cast<size_t>(i)] = bits(x[j][static_cast<size_t>(i)]);
  // Adjoint slots follow the primal's in slot order: x0.grad ... y.grad.
  std::vector<uint64_t>& yg = m.slots[primal_slots + x.size()];
  for (int64_t i = 0; i < kN; ++i) yg[static_cast<size_t>(i)] = bits(w[static_cast<size_t>(i)]);
  Interpreter(adjoint, m).run();
  std::vector<std::vector<double>> g(x.size());
  for (size_t j = 0; j < x.size(); ++j)
    for (uint64_t v : m.slots[primal_slots + j]) g[j].push_back(real(v));
  return g;
}

void expect_tangents_match(const ir::Kernel& primal, int inputs,
                           const std::vector<std::vector<double>>& x, double tolerance, double h);

// Checks the adjoint of `e` against central differences at `x`, with the adjoint kernel as
// made and after the rest of the pipeline.
void expect_gradients_match(Elementwise e, const std::vector<std::vector<double>>& x,
                            double tolerance = 1e-6, double h = 1e-6) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> weight(0.5, 1.5);
  std::vector<double> w(kN);
  for (double& v : w) v = weight(rng);
  expect_tangents_match(*e.kernel, e.inputs, x, tolerance, h);
  auto adjoint = make_adjoint(*e.kernel);
  ASSERT_EQ(ir::verify(*adjoint), "") << ir::print_kernel(*adjoint);
  const size_t slots = e.kernel->abi.resources.size();
  auto piped = adjoint->clone();
  run_pipeline(*piped, {});
  for (const ir::Kernel* k : {adjoint.get(), piped.get()}) {
    auto g = adjoint_grads(*k, slots, x, w);
    for (int j = 0; j < e.inputs; ++j) {
      auto plus = x, minus = x;
      for (int64_t i = 0; i < kN; ++i) {
        plus[static_cast<size_t>(j)][static_cast<size_t>(i)] += h;
        minus[static_cast<size_t>(j)][static_cast<size_t>(i)] -= h;
      }
      auto yp = primal_y(*e.kernel, plus), ym = primal_y(*e.kernel, minus);
      for (int64_t i = 0; i < kN; ++i) {
        auto u = static_cast<size_t>(i);
        double fd = (yp[u] - ym[u]) / (2 * h) * w[u];
        double ad = g[static_cast<size_t>(j)][u];
        EXPECT_NEAR(ad, fd, tolerance * std::max(1.0, std::abs(fd)))
            << "input " << j << " element " << i << " at " << x[static_cast<size_t>(j)][u]
            << (k == piped.get() ? " (after the pipeline)" : "") << "\n"
            << ir::print_kernel(*k);
      }
    }
  }
}

// The tangent kernel's y.dual for x.dual = d against the central difference of y along d, as
// made and after the rest of the pipeline.
void expect_tangents_match(const ir::Kernel& primal, int inputs,
                           const std::vector<std::vector<double>>& x, double tolerance, double h) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> dir(-1.0, 1.0);
  std::vector<std::vector<double>> d(static_cast<size_t>(inputs), std::vector<double>(kN));
  for (auto& row : d)
    for (double& v : row) v = dir(rng);
  auto tangent = make_tangent(primal);
  ASSERT_EQ(ir::verify(*tangent), "") << ir::print_kernel(*tangent);
  auto piped = tangent->clone();
  run_pipeline(*piped, {});
  const size_t slots = primal.abi.resources.size();
  auto plus = x, minus = x;
  for (size_t j = 0; j < x.size(); ++j)
    for (size_t i = 0; i < static_cast<size_t>(kN); ++i) {
      plus[j][i] += h * d[j][i];
      minus[j][i] -= h * d[j][i];
    }
  auto yp = primal_y(primal, plus), ym = primal_y(primal, minus);
  for (const ir::Kernel* k : {tangent.get(), piped.get()}) {
    std::vector<std::vector<int64_t>> shapes(k->abi.resources.size(), {kN});
    Memory m = make_memory(*k, shapes, [](int, int64_t) { return bits(0.0); });
    for (size_t j = 0; j < x.size(); ++j)
      for (size_t i = 0; i < static_cast<size_t>(kN); ++i) {
        m.slots[j][i] = bits(x[j][i]);
        m.slots[slots + j][i] = bits(d[j][i]);  // x_j.dual
      }
    Interpreter(*k, m).run();
    const std::vector<uint64_t>& ydual = m.slots[slots + x.size()];
    for (size_t i = 0; i < static_cast<size_t>(kN); ++i) {
      double fd = (yp[i] - ym[i]) / (2 * h);
      EXPECT_NEAR(real(ydual[i]), fd, tolerance * std::max(1.0, std::abs(fd)))
          << "element " << i << (k == piped.get() ? " (after the pipeline)" : "") << "\n"
          << ir::print_kernel(*k);
    }
  }
}

std::string error_of_adjoint(const ir::Kernel& k) {
  try {
    make_adjoint(k);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// Inputs where the op is smooth, away from its kinks and poles.
std::vector<std::vector<double>> inputs_for(Op op, int count, uint32_t seed) {
  return test::derivative_inputs(op, count, kN, seed);
}

// Every op with a derivative rule in ops.def, on each of its float operands, in reverse mode
// (the adjoint) and forward mode (the tangent): the table, not a list kept here, says which
// ops these are, so an op given a rule is checked from then on.
TEST(Autodiff, EveryDerivativeRuleMatchesCentralDifferences) {
  int checked = 0;
  for (int o = 0; o < ir::kOpCount; ++o) {
    auto op = static_cast<Op>(o);
    const ir::OpInfo& info = ir::op_info(op);
    if (info.gradient != ir::Differentiable::Yes) continue;
    SCOPED_TRACE(std::string(ir::op_name(op)));
    if (op == Op::Cast) {  // f64 -> f32 -> f64: a derivative of 1 with f32 rounding
      Elementwise e = elementwise(1, [](Builder& b, const std::vector<Inst*>& x) {
        return b.cast(Scalar::F64, b.binary(Op::Mul, b.cast(Scalar::F32, x[0]), b.f32(3.0)));
      });
      expect_gradients_match(std::move(e), inputs_for(op, 1, 1), 1e-2, 1e-3);
    } else if (op == Op::Select) {  // x0 > 0 ? x1 : x2
      Elementwise e = elementwise(3, [](Builder& b, const std::vector<Inst*>& x) {
        return b.select(b.binary(Op::Gt, x[0], b.const_float(Scalar::F64, 0.0)), x[1], x[2]);
      });
      expect_gradients_match(std::move(e), inputs_for(op, 3, 2));
    } else {
      int arity = info.arity;
      ASSERT_GE(arity, 1);
      Elementwise e = elementwise(arity, [&](Builder& b, const std::vector<Inst*>& x) {
        auto inst = std::make_unique<Inst>(op, Scalar::F64);
        inst->operands = x;
        return b.insert(std::move(inst));
      });
      expect_gradients_match(std::move(e), inputs_for(op, arity, static_cast<uint32_t>(o)));
    }
    ++checked;
  }
  EXPECT_GE(checked, 24);
}

// y = a * x * x + b: the gradients of value parameters are reduced over every thread and
// returned in parameter order (a, then b).
TEST(Autodiff, ValueParameterGradientsAreReducedAndReturned) {
  auto k = new_kernel("k");
  add_value_param(*k, "a", Scalar::F64);
  add_value_param(*k, "n", Scalar::I32);
  add_value_param(*k, "b", Scalar::F64);
  int x = add_ndarray(*k, "x", Scalar::F64, 1);
  int y = add_ndarray(*k, "y", Scalar::F64, 1);
  Builder b(k->body.get());
  Inst* loop = b.range_for({b.i32(0), b.arg(Scalar::I32, 1)});
  b.set_insert_end(loop->region(0));
  Inst* i = b.loop_index(loop, 0);
  Inst* xi = b.global_load(b.global_ptr(Scalar::F64, x, {i}));
  Inst* v = b.binary(Op::Add, b.binary(Op::Mul, b.arg(Scalar::F64, 0), b.binary(Op::Mul, xi, xi)),
                     b.arg(Scalar::F64, 2));
  b.global_store(b.global_ptr(Scalar::F64, y, {i}), v);

  auto adjoint = make_adjoint(*k);
  ASSERT_EQ(adjoint->abi.returns.size(), 2u);
  EXPECT_EQ(adjoint->abi.name, "k.grad");
  EXPECT_EQ(adjoint->abi.params.at(5).name, "x.grad");
  EXPECT_EQ(adjoint->abi.params.at(6).name, "y.grad");
  for (bool piped : {false, true}) {
    auto a = adjoint->clone();
    if (piped) run_pipeline(*a, {});
    Memory m = make_memory(*a, {{kN}, {kN}, {kN}, {kN}}, [](int, int64_t) { return bits(0.0); });
    m.args[0] = bits(1.5);
    m.args[1] = static_cast<uint64_t>(kN);
    m.args[2] = bits(-0.25);
    double da = 0, db = 0;
    for (int64_t j = 0; j < kN; ++j) {
      double xv = 0.1 * static_cast<double>(j) - 0.5, w = 1.0 + 0.01 * static_cast<double>(j);
      m.slots[0][static_cast<size_t>(j)] = bits(xv);
      m.slots[3][static_cast<size_t>(j)] = bits(w);  // y.grad
      da += w * xv * xv;
      db += w;
    }
    Interpreter(*a, m).run();
    ASSERT_EQ(m.returns.size(), 2u);
    EXPECT_NEAR(real(m.returns[0]), da, 1e-12) << (piped ? "after the pipeline" : "");
    EXPECT_NEAR(real(m.returns[1]), db, 1e-12);
    for (int64_t j = 0; j < kN; ++j) {
      double xv = 0.1 * static_cast<double>(j) - 0.5, w = 1.0 + 0.01 * static_cast<double>(j);
      EXPECT_NEAR(real(m.slots[2][static_cast<size_t>(j)]), w * 1.5 * 2 * xv, 1e-12);  // x.grad
    }
  }
}

// A branch through a variable (lowering's form of an `if` with outputs), an atomic add into a
// field (the adjoint of a scatter is a gather) and a gather through an index array (its
// adjoint is a scatter of atomic adds).
TEST(Autodiff, BranchesAtomicsAndGathers) {
  auto k = new_kernel("k");
  int x = add_ndarray(*k, "x", Scalar::F64, 1);
  int idx = add_ndarray(*k, "idx", Scalar::I32, 1);
  int loss = add_field(*k, "loss", Scalar::F64, {1});
  Builder b(k->body.get());
  Inst* loop = b.range_for({b.i32(0), b.i32(kN)});
  b.set_insert_end(loop->region(0));
  Inst* i = b.loop_index(loop, 0);
  Inst* xi = b.global_load(
      b.global_ptr(Scalar::F64, x, {b.global_load(b.global_ptr(Scalar::I32, idx, {i}))}));
  Inst* t = b.alloca_(Scalar::F64);
  Inst* branch = b.if_(b.binary(Op::Gt, xi, b.const_float(Scalar::F64, 0.0)));
  Builder then(branch->region(0)), otherwise(branch->region(1));
  then.local_store(t, then.unary(Op::Sin, xi));
  otherwise.local_store(t, otherwise.binary(Op::Mul, xi, xi));
  b.atomic(ir::AtomicOp::Add, b.global_ptr(Scalar::F64, loss, {b.i32(0)}),
           b.binary(Op::Mul, b.local_load(t), b.const_float(Scalar::F64, 2.0)));

  auto adjoint = make_adjoint(*k);
  ASSERT_EQ(ir::verify(*adjoint), "") << ir::print_kernel(*adjoint);
  // x.grad, loss.grad: idx is an integer array, it has no adjoint.
  ASSERT_EQ(adjoint->abi.resources.size(), 5u);
  EXPECT_EQ(adjoint->abi.resources[4].field, "loss.grad");
  for (bool piped : {false, true}) {
    auto a = adjoint->clone();
    if (piped) run_pipeline(*a, {});
    Memory m = make_memory(*a, {{kN}, {kN}, {kN}}, [](int, int64_t) { return bits(0.0); });
    std::vector<double> expected(kN, 0.0);
    for (int64_t j = 0; j < kN; ++j) {
      auto u = static_cast<size_t>(j);
      double xv = 0.2 * static_cast<double>(j) - 1.5;
      m.slots[static_cast<size_t>(x)][u] = bits(xv);
      int64_t from = (j * 5) % kN;  // a permutation; element `from` is read by thread j
      m.slots[static_cast<size_t>(idx)][u] = static_cast<uint64_t>(from);
    }
    m.slots[4][0] = bits(0.5);  // loss.grad
    for (int64_t j = 0; j < kN; ++j) {
      auto from = static_cast<size_t>((j * 5) % kN);
      double xv = real(m.slots[static_cast<size_t>(x)][from]);
      expected[from] += 0.5 * 2.0 * (xv > 0 ? std::cos(xv) : 2 * xv);
    }
    Interpreter(*a, m).run();
    for (int64_t j = 0; j < kN; ++j)
      EXPECT_NEAR(real(m.slots[3][static_cast<size_t>(j)]), expected[static_cast<size_t>(j)], 1e-12)
          << j << (piped ? " after the pipeline" : "") << "\n"
          << ir::print_kernel(*a);
  }
}

// Forward mode needs no stack: a serial loop whose value is carried from one iteration to the
// next (y = sin(y) + x, five times) has its tangent carried alongside.
TEST(Autodiff, ForwardModeCarriesTangentsThroughLoops) {
  Elementwise e = elementwise(1, [](Builder& b, const std::vector<Inst*>& x) {
    Inst* y = b.alloca_(Scalar::F64);
    Inst* n = b.alloca_(Scalar::I32);
    b.local_store(y, x[0]);
    Inst* loop = b.while_();
    Builder body(loop->region(0));
    Inst* count = body.local_load(n);
    Inst* stop = body.if_(body.binary(Op::Ge, count, body.i32(5)));
    Builder(stop->region(0)).make(Op::Break, Scalar::Void);
    body.local_store(y, body.binary(Op::Add, body.unary(Op::Sin, body.local_load(y)), x[0]));
    body.local_store(n, body.binary(Op::Add, count, body.i32(1)));
    return b.local_load(y);
  });
  expect_tangents_match(*e.kernel, 1, inputs_for(Op::Sin, 1, 3), 1e-6, 1e-6);
  EXPECT_EQ(error_of_adjoint(*e.kernel), "");
}

// `while (n < times) { body(n); n = n + 1 }` as lowering writes it: the test and its break
// first, the loop-carried counter last.
Inst* counted_while(Builder& b, int times, const std::function<void(Builder&, Inst*)>& body) {
  Inst* n = b.alloca_(Scalar::I32);
  Inst* loop = b.while_();
  Builder w(loop->region(0));
  Inst* count = w.local_load(n);
  Inst* stop = w.if_(w.binary(Op::Ge, count, w.i32(times)));
  Builder(stop->region(0)).make(Op::Break, Scalar::Void);
  body(w, count);
  w.local_store(n, w.binary(Op::Add, count, w.i32(1)));
  return loop;
}

// `for j in [begin, end)` inside the current block, as a range_for.
void range_loop(Builder& b, Inst* begin, Inst* end,
                const std::function<void(Builder&, Inst*)>& body) {
  Inst* loop = b.range_for({begin, end});
  Builder w(loop->region(0));
  body(w, w.loop_index(loop, 0));
}

Inst* f64(Builder& b, double v) { return b.const_float(Scalar::F64, v); }

// A while loop inside the parallel loop whose variable each iteration overwrites
// (v = 0.7 v + sin(x v), four times): the reverse sweep pops the value each iteration read.
TEST(Autodiff, WhileLoopCarriesValuesThroughTheStack) {
  Elementwise e = elementwise(1, [](Builder& b, const std::vector<Inst*>& x) {
    Inst* y = b.alloca_(Scalar::F64);
    b.local_store(y, x[0]);
    counted_while(b, 4, [&](Builder& w, Inst*) {
      Inst* v = w.local_load(y);
      w.local_store(y, w.binary(Op::Add, w.binary(Op::Mul, v, f64(w, 0.7)),
                                w.unary(Op::Sin, w.binary(Op::Mul, x[0], v))));
    });
    return b.local_load(y);
  });
  expect_gradients_match(std::move(e), inputs_for(Op::Sin, 1, 21));
}

// A break in the middle of the body, after it has overwritten a variable: the last iteration
// is reversed only as far as it ran.
TEST(Autodiff, WhileLoopThatBreaksMidIteration) {
  Elementwise e = elementwise(1, [](Builder& b, const std::vector<Inst*>& x) {
    Inst* y = b.alloca_(Scalar::F64);
    Inst* acc = b.alloca_(Scalar::F64);
    Inst* n = b.alloca_(Scalar::I32);
    b.local_store(y, x[0]);
    Inst* loop = b.while_();
    Builder w(loop->region(0));
    Inst* v = w.local_load(y);
    w.local_store(y,
                  w.binary(Op::Add, w.binary(Op::Mul, w.binary(Op::Mul, v, v), f64(w, 0.3)), x[0]));
    Inst* count = w.local_load(n);
    w.local_store(n, w.binary(Op::Add, count, w.i32(1)));
    Inst* stop = w.if_(w.binary(Op::Ge, count, w.i32(3)));
    Builder(stop->region(0)).make(Op::Break, Scalar::Void);
    w.local_store(acc, w.binary(Op::Add, w.local_load(acc), w.unary(Op::Sin, w.local_load(y))));
    return b.binary(Op::Add, b.local_load(y), b.local_load(acc));
  });
  expect_gradients_match(std::move(e), inputs_for(Op::Sin, 1, 22));
}

// Range loops inside the parallel loop, nested, the inner one's bounds taken from the outer
// one's index, a local array updated per iteration, and a 2-d serial range.
TEST(Autodiff, NestedSerialLoopsAndLocalArrays) {
  Elementwise e = elementwise(1, [](Builder& b, const std::vector<Inst*>& x) {
    Inst* arr = b.make(Op::LocalArray, Scalar::F64, {}, 3, 1);
    range_loop(b, b.i32(0), b.i32(3), [&](Builder& w, Inst* j) {
      Inst* scale = w.binary(Op::Add, w.cast(Scalar::F64, j), f64(w, 1.0));
      w.make(Op::ArrayStore, Scalar::Void, {arr, j, w.binary(Op::Mul, x[0], scale)}, 0);
    });
    Inst* v = b.alloca_(Scalar::F64);
    b.local_store(v, x[0]);
    range_loop(b, b.i32(0), b.i32(3), [&](Builder& w, Inst* j) {
      range_loop(w, w.i32(0), w.binary(Op::Add, j, w.i32(1)), [&](Builder& u, Inst* k) {
        Inst* el = u.make(Op::ArrayLoad, Scalar::F64, {arr, k}, 0);
        Inst* vv = u.local_load(v);
        u.make(Op::ArrayStore, Scalar::Void,
               {arr, k,
                u.binary(Op::Add, u.binary(Op::Mul, u.binary(Op::Mul, el, vv), f64(u, 0.5)),
                         u.unary(Op::Cos, el))},
               0);
        u.local_store(v, u.binary(Op::Add, vv, u.binary(Op::Mul, f64(u, 0.1), el)));
      });
    });
    Inst* grid = b.range_for({b.i32(0), b.i32(2), b.i32(1), b.i32(3)});
    Builder g(grid->region(0));
    Inst* a = g.cast(Scalar::F64, g.loop_index(grid, 0));
    Inst* c = g.cast(Scalar::F64, g.loop_index(grid, 1));
    g.local_store(
        v, g.binary(Op::Add,
                    g.binary(Op::Mul, g.local_load(v),
                             g.binary(Op::Add, f64(g, 0.3), g.binary(Op::Mul, a, f64(g, 0.1)))),
                    g.binary(Op::Mul, x[0], c)));
    Inst* sum = b.binary(Op::Add, b.make(Op::ArrayLoad, Scalar::F64, {arr, b.i32(0)}, 0),
                         b.make(Op::ArrayLoad, Scalar::F64, {arr, b.i32(2)}, 0));
    return b.binary(Op::Add, b.local_load(v), sum);
  });
  expect_gradients_match(std::move(e), inputs_for(Op::Sin, 1, 23), 1e-5);
}

// An `if` inside a loop whose branches read and overwrite the loop-carried variable, and a
// continue that skips one iteration's update.
TEST(Autodiff, BranchesAndContinuesInsideLoops) {
  Elementwise e = elementwise(1, [](Builder& b, const std::vector<Inst*>& x) {
    Inst* v = b.alloca_(Scalar::F64);
    b.local_store(v, x[0]);
    range_loop(b, b.i32(0), b.i32(5), [&](Builder& w, Inst* j) {
      Inst* skip = w.if_(w.binary(Op::Eq, j, w.i32(2)));
      Builder(skip->region(0)).make(Op::Continue, Scalar::Void);
      Inst* t = w.local_load(v);
      Inst* branch = w.if_(w.binary(Op::Gt, t, f64(w, 0.5)));
      Builder then(branch->region(0)), otherwise(branch->region(1));
      then.local_store(
          v, then.binary(Op::Add, then.binary(Op::Mul, then.local_load(v), f64(then, 0.5)),
                         then.unary(Op::Sin, x[0])));
      otherwise.local_store(
          v, otherwise.binary(Op::Add, otherwise.binary(Op::Mul, otherwise.local_load(v), x[0]),
                              f64(otherwise, 0.3)));
    });
    return b.local_load(v);
  });
  expect_gradients_match(std::move(e), inputs_for(Op::Sin, 1, 24));
}

// Top-level loops: an accumulation `v = v + e` stays parallel (its adjoint needs no value of
// v); `v = 0.9 v + e` hands v from one iteration to the next and is reversed in order.
TEST(Autodiff, TopLevelLoopsThatCarryValuesRunInOrder) {
  for (bool carried : {false, true}) {
    SCOPED_TRACE(carried ? "carried" : "accumulated");
    auto k = new_kernel("k");
    int x = add_ndarray(*k, "x0", Scalar::F64, 1);
    int y = add_ndarray(*k, "y", Scalar::F64, 1);
    Builder b(k->body.get());
    Inst* v = b.alloca_(Scalar::F64);
    range_loop(b, b.i32(0), b.i32(kN), [&](Builder& w, Inst* i) {
      Inst* xi = w.global_load(w.global_ptr(Scalar::F64, x, {i}));
      Inst* old = w.local_load(v);
      if (carried) old = w.binary(Op::Mul, old, f64(w, 0.9));
      w.local_store(v, w.binary(Op::Add, old, w.unary(Op::Sin, w.binary(Op::Mul, xi, xi))));
    });
    b.global_store(b.global_ptr(Scalar::F64, y, {b.i32(0)}), b.local_load(v));
    b.global_store(b.global_ptr(Scalar::F64, y, {b.i32(1)}),
                   b.binary(Op::Mul, b.local_load(v), b.local_load(v)));
    // Not elementwise: each x_i moves y_0 and y_1, so the objective sum_u w_u y_u is
    // differentiated one x_i at a time.
    std::vector<std::vector<double>> xs = inputs_for(Op::Sin, 1, 25);
    std::vector<double> w(kN, 0.0);
    w[0] = 0.75;
    w[1] = -0.5;
    auto objective = [&](const std::vector<std::vector<double>>& at) {
      std::vector<double> y = primal_y(*k, at);
      return w[0] * y[0] + w[1] * y[1];
    };
    auto adjoint = make_adjoint(*k);
    ASSERT_EQ(ir::verify(*adjoint), "") << ir::print_kernel(*adjoint);
    auto piped = adjoint->clone();
    run_pipeline(*piped, {});
    for (const ir::Kernel* a : {adjoint.get(), piped.get()}) {
      auto g = adjoint_grads(*a, k->abi.resources.size(), xs, w);
      const double h = 1e-6;
      for (size_t i = 0; i < static_cast<size_t>(kN); ++i) {
        auto plus = xs, minus = xs;
        plus[0][i] += h;
        minus[0][i] -= h;
        double fd = (objective(plus) - objective(minus)) / (2 * h);
        EXPECT_NEAR(g[0][i], fd, 1e-6 * std::max(1.0, std::abs(fd)))
            << "element " << i << (a == piped.get() ? " (after the pipeline)" : "") << "\n"
            << ir::print_kernel(*a);
      }
    }
  }
}

// A loop that runs more iterations than the stack holds fails its launch with an assertion
// naming the loop's node, with or without the rest of the pipeline; one that fits runs.
TEST(Autodiff, StackOverflowIsALaunchErrorNamingTheLoop) {
  auto make = [](int times) {
    return elementwise(1, [&](Builder& b, const std::vector<Inst*>& x) {
      Inst* y = b.alloca_(Scalar::F64);
      b.local_store(y, x[0]);
      b.set_node(12);
      counted_while(b, times, [&](Builder& w, Inst*) {
        w.local_store(y, w.unary(Op::Sin, w.local_load(y)));
      });
      b.set_node(-1);
      return b.local_load(y);
    });
  };
  for (int times : {4, 5}) {
    Elementwise e = make(times);
    AdjointOptions options;
    options.stack_size = 4;
    auto adjoint = make_adjoint(*e.kernel, options);
    ASSERT_EQ(ir::verify(*adjoint), "") << ir::print_kernel(*adjoint);
    std::string message;
    int32_t node = -1;
    ir::walk(*adjoint->body, [&](const Inst& in) {
      if (in.op != Op::Assert) return;
      message = in.message();
      node = in.assert_node();
    });
    EXPECT_EQ(node, 12);
    EXPECT_NE(message.find("autodiff stack of 4 entries overflowed"), std::string::npos) << message;
    EXPECT_NE(message.find("ad_stack_size"), std::string::npos) << message;
    auto piped = e.kernel->clone();
    PipelineOptions po;
    po.adjoint = AdjointOptions{};
    po.ad_stack_size = 4;
    run_pipeline(*piped, po);
    for (const ir::Kernel* k : {adjoint.get(), piped.get()}) {
      std::vector<std::vector<int64_t>> shapes(k->abi.resources.size(), {kN});
      Memory m = make_memory(*k, shapes, [](int, int64_t) { return bits(0.5); });
      Interpreter(*k, m).run();
      if (times == 4)
        EXPECT_EQ(m.errors, 0) << "four iterations fit a stack of four";
      else
        EXPECT_GT(m.errors, 0) << "five iterations overflowed a stack of four unnoticed";
    }
  }
  AdjointOptions none;
  none.stack_size = 0;
  EXPECT_THROW(make_adjoint(*make(1).kernel, none), Error);
}

// What cannot be differentiated yet is refused with the kernel and node named.
TEST(Autodiff, WhatItCannotDifferentiateIsAnErrorNamingKernelAndNode) {
  auto k = new_kernel("walk");
  int x = add_ndarray(*k, "x", Scalar::F64, 1);
  Builder b(k->body.get());
  Inst* loop = b.range_for({b.i32(0), b.i32(4)});
  b.set_insert_end(loop->region(0));
  b.set_node(42);
  Inst* inner = b.struct_for(x, 1);
  Builder w(inner->region(0));
  w.global_store(w.global_ptr(Scalar::F64, x, {w.loop_index(inner, 0)}),
                 w.const_float(Scalar::F64, 2));
  b.set_node(43);
  b.global_store(b.global_ptr(Scalar::F64, x, {b.loop_index(loop, 0)}),
                 b.const_float(Scalar::F64, 1));
  try {
    make_adjoint(*k);
    FAIL() << "a struct_for inside a loop was differentiated";
  } catch (const Error& e) {
    EXPECT_EQ(e.place().kernel, "walk");
    EXPECT_EQ(e.place().node, 42);
    EXPECT_NE(std::string(e.what()).find("struct_for"), std::string::npos) << e.what();
  }

  auto r = new_kernel("noise");
  int y = add_ndarray(*r, "y", Scalar::F64, 1);
  Builder rb(r->body.get());
  Inst* l2 = rb.range_for({rb.i32(0), rb.i32(4)});
  rb.set_insert_end(l2->region(0));
  rb.set_node(7);
  Inst* u = rb.make(Op::Rand, Scalar::F64);
  rb.global_store(rb.global_ptr(Scalar::F64, y, {rb.loop_index(l2, 0)}), u);
  try {
    make_adjoint(*r);
    FAIL() << "random numbers were differentiated";
  } catch (const Error& e) {
    EXPECT_EQ(e.place().node, 7);
    EXPECT_NE(std::string(e.what()).find("random"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace loom::passes
