#include <gtest/gtest.h>

#include "compiler/ir/builder.h"
#include "compiler/ir/inst.h"
#include "compiler/ir/printer.h"
#include "compiler/ir/verifier.h"
#include "runtime/common/error.h"

using namespace loom;
using namespace loom::ir;

namespace {

// saxpy over an ndarray pair: y[i] = a * x[i] + y[i]
std::unique_ptr<Kernel> saxpy() {
  auto k = std::make_unique<Kernel>();
  k->abi.name = "saxpy";
  k->abi.params = {{"a", ParamKind::Value, {Scalar::F32}, 0, -1, 4},
                   {"x", ParamKind::Ndarray, {Scalar::F32}, 1, -1, 0},
                   {"y", ParamKind::Ndarray, {Scalar::F32}, 1, -1, 0}};
  ResourceDesc x;
  x.kind = ResourceKind::Ndarray;
  x.param = 1;
  ResourceDesc y = x;
  y.param = 2;
  k->abi.resources = {x, y};
  Builder b(k->body.get());
  Inst* a = b.arg(Scalar::F32, 0);
  Inst* zero = b.i32(0);
  Inst* n = b.make(Op::ResourceShape, Scalar::I32, {}, 0, 0);
  Inst* loop = b.range_for({zero, n});
  b.set_insert_end(loop->region(0));
  Inst* i = b.loop_index(loop, 0);
  Inst* xi = b.global_load(b.global_ptr(Scalar::F32, 0, {i}));
  Inst* py = b.global_ptr(Scalar::F32, 1, {i});
  Inst* yi = b.global_load(py);
  b.global_store(py, b.binary(Op::Add, b.binary(Op::Mul, a, xi), yi));
  return k;
}

}  // namespace

TEST(IR, PrintsDeterministically) {
  auto k = saxpy();
  EXPECT_EQ(verify(*k), "");
  const char* expected = R"(kernel saxpy
  param p0 a: value f32
  param p1 x: ndarray f32 ndim 1
  param p2 y: ndarray f32 ndim 1
  slot $0: ndarray f32 shape [?] from p1
  slot $1: ndarray f32 shape [?] from p2
  %0:f32 = arg p0+0
  %1:i32 = const 0
  %2:i32 = shape $0.0
  range_for %1, %2 {
    %4:i32 = loop_index %3.0
    %5:f32 = global_ptr $0.c0 %4
    %6:f32 = global_load %5
    %7:f32 = global_ptr $1.c0 %4
    %8:f32 = global_load %7
    %9:f32 = mul %0, %6
    %10:f32 = add %9, %8
    global_store %7, %10
  }
)";
  EXPECT_EQ(print_kernel(*k), expected);
}

TEST(IR, CloneIsDeepAndEqual) {
  auto k = saxpy();
  auto c = k->clone();
  EXPECT_EQ(print_kernel(*k), print_kernel(*c));
  EXPECT_EQ(verify(*c), "");
  // operands of the clone point into the clone
  walk(*c->body, [&](Inst& inst) {
    for (Inst* op : inst.operands)
      EXPECT_TRUE(is_inside(op, c->body.get()) || op->parent == c->body.get());
  });
}

TEST(IR, VerifierCatchesUseBeforeDefinition) {
  auto k = saxpy();
  // move the add before its operands
  Block& body = *k->body->insts[3]->regions[0];
  auto add = body.remove(6);
  body.insert(0, std::move(add));
  std::string problem = verify(*k);
  EXPECT_NE(problem.find("does not dominate"), std::string::npos) << problem;
}

TEST(IR, VerifierCatchesTypeMismatch) {
  auto k = std::make_unique<Kernel>();
  Builder b(k->body.get());
  Inst* x = b.i32(1);
  Inst* y = b.f32(2);
  b.make(Op::Add, Scalar::I32, {x, y});
  EXPECT_NE(verify(*k).find("differ in type"), std::string::npos);
}

TEST(IR, VerifierCatchesValueEscapingRegion) {
  auto k = std::make_unique<Kernel>();
  Builder b(k->body.get());
  Inst* cond = b.const_bool(true);
  Inst* branch = b.if_(cond);
  b.set_insert_end(branch->region(0));
  Inst* inner = b.i32(3);
  b.set_insert_end(k->body.get());
  b.binary(Op::Add, inner, inner);
  EXPECT_NE(verify(*k).find("does not dominate"), std::string::npos);
}

TEST(IR, VerifierCatchesBreakOutsideWhile) {
  auto k = std::make_unique<Kernel>();
  Builder b(k->body.get());
  b.make(Op::Break, Scalar::Void);
  EXPECT_NE(verify(*k).find("break outside"), std::string::npos);
}

TEST(IR, OpTableIsConsistent) {
  // Value ops are what constant folding, CSE and the offloaded top level rely on: pure
  // functions of their operands, with no attributes to compare.
  for (int i = 0; i < kOpCount; ++i) {
    auto op = static_cast<Op>(i);
    const OpInfo& info = op_info(op);
    Op parsed;
    ASSERT_TRUE(parse_op(info.name, &parsed)) << info.name;
    EXPECT_EQ(parsed, op);
    if (!is_value_op(op)) continue;
    EXPECT_EQ(info.effects, Effects::Pure) << info.name;
    EXPECT_EQ(info.attr0, Attr::None) << info.name;
    EXPECT_EQ(info.attr1, Attr::None) << info.name;
    EXPECT_TRUE(info.arity >= 1 && info.arity <= 3) << info.name;
  }
  EXPECT_TRUE(is_unary(Op::Cast));
  EXPECT_TRUE(is_comparison(Op::Le));
  EXPECT_FALSE(is_comparison(Op::LogicAnd));
  EXPECT_TRUE(is_commutative(Op::BitXor));
  EXPECT_FALSE(is_commutative(Op::Sub));
  EXPECT_EQ(op_info(Op::GlobalLoad).gradient, Differentiable::Memory);
}

TEST(IR, AttributesAreReadByMeaning) {
  Kernel k;
  Builder b(k.body.get());
  Inst* shape = b.make(Op::ResourceShape, Scalar::I32, {}, 2, 1);
  EXPECT_EQ(shape->resource_slot(), 2);
  EXPECT_EQ(shape->dimension(), 1);
  EXPECT_THROW(shape->channel(), loom::InternalError);

  auto task = std::make_unique<Inst>(Op::Offload, Scalar::Void);
  task->set_task_kind(TaskKind::StructFor);
  task->set_resource_slot(3);
  EXPECT_EQ(task->resource_slot(), 3);
  EXPECT_THROW(task->dims(), loom::InternalError);  // a struct task's space is a slot
  task->set_task_kind(TaskKind::RangeFor);
  EXPECT_EQ(task->dims(), 3);

  // Changing the op keeps the attributes that mean the same in both ops.
  Inst* ptr = b.global_ptr(Scalar::F32, 1, {b.i32(0)}, 2);
  ptr->morph(Op::ElementPtr);
  EXPECT_EQ(ptr->resource_slot(), 1);
  EXPECT_THROW(ptr->component(), loom::InternalError);
}
