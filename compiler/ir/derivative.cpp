#include "compiler/ir/derivative.h"

#include "compiler/ir/op.h"
#include "runtime/common/error.h"

namespace loom::ir {

namespace {

// An IR value under construction: the rules of ops.def read as arithmetic on these. `v` is
// nullptr for `none`. (Each helper is used by some rule; [[maybe_unused]] lets a rule change.)
struct E {
  Builder* b;
  Inst* v;
};

[[maybe_unused]] E bin(Op op, E x, E y) { return {x.b, x.b->binary(op, x.v, y.v)}; }
[[maybe_unused]] E un(Op op, E x) { return {x.b, x.b->unary(op, x.v)}; }
[[maybe_unused]] E operator+(E x, E y) { return bin(Op::Add, x, y); }
[[maybe_unused]] E operator-(E x, E y) { return bin(Op::Sub, x, y); }
[[maybe_unused]] E operator*(E x, E y) { return bin(Op::Mul, x, y); }
[[maybe_unused]] E operator/(E x, E y) { return bin(Op::Div, x, y); }
[[maybe_unused]] E operator-(E x) { return un(Op::Neg, x); }
[[maybe_unused]] E operator<=(E x, E y) { return bin(Op::Le, x, y); }
[[maybe_unused]] E operator>=(E x, E y) { return bin(Op::Ge, x, y); }
[[maybe_unused]] E sign(E x) { return un(Op::Sign, x); }
[[maybe_unused]] E sqrt(E x) { return un(Op::Sqrt, x); }
[[maybe_unused]] E sin(E x) { return un(Op::Sin, x); }
[[maybe_unused]] E cos(E x) { return un(Op::Cos, x); }
[[maybe_unused]] E log(E x) { return un(Op::Log, x); }
[[maybe_unused]] E floor(E x) { return un(Op::Floor, x); }
[[maybe_unused]] E pow(E x, E y) { return bin(Op::Pow, x, y); }
[[maybe_unused]] E select(E c, E x, E y) { return {x.b, x.b->select(c.v, x.v, y.v)}; }

}  // namespace

Inst* operand_adjoint(Builder& b, const Inst& in, int i, Inst* g_inst) {
  if (i < 0 || static_cast<size_t>(i) >= in.operands.size())
    throw InternalError("derivative: operand " + std::to_string(i) + " of " +
                        std::string(op_name(in.op)));
  Scalar operand_type = in.operands[static_cast<size_t>(i)]->type;
  if (!is_float(operand_type) || !is_float(in.type)) return nullptr;
  Scalar ty = in.type;
  auto operand = [&](size_t k) { return E{&b, k < in.operands.size() ? in.operands[k] : nullptr}; };
  // The names the rules use.
  const E g{&b, g_inst}, y{&b, const_cast<Inst*>(&in)};
  const E x0 = operand(0), x1 = operand(1), x2 = operand(2);
  const E none{&b, nullptr};
  auto c = [&](double value) { return E{&b, b.const_float(ty, value)}; };
  // A cast's derivative is 1 across the two types: reverse mode brings the result's adjoint
  // to the operand's type, forward mode the operand's tangent to the result's.
  auto cast_across = [&](E v) {
    return E{&b, b.cast(v.v->type == in.type ? operand_type : in.type, v.v)};
  };
  (void)x2;
  (void)none;
  (void)cast_across;
  (void)c;
  (void)y;
  // Each rule builds only the operand asked for.
#define D1(r0) \
  if (i == 0) return (r0).v;
#define D2(r0, r1)           \
  if (i == 0) return (r0).v; \
  if (i == 1) return (r1).v;
#define D3(r0, r1, r2)       \
  if (i == 0) return (r0).v; \
  if (i == 1) return (r1).v; \
  if (i == 2) return (r2).v;
#define Yes
#define NonDiff
#define Memory
#define ControlFlow
  switch (in.op) {
#define LOOM_OP(name, spelling, effects, arity, operands, result, folding, gradient, attr0, attr1) \
  case Op::name: {                                                                                 \
    gradient                                                                                       \
  } break;
#include "compiler/ir/ops.def"
#undef LOOM_OP
  }
#undef D1
#undef D2
#undef D3
#undef Yes
#undef NonDiff
#undef Memory
#undef ControlFlow
  if (op_info(in.op).gradient != Differentiable::Yes)
    throw InternalError("derivative: " + std::string(op_name(in.op)) + " has no derivative rule");
  return nullptr;
}

}  // namespace loom::ir
