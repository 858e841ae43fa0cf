#include "compiler/passes/constant_fold.h"

#include <cmath>
#include <cstring>
#include <optional>
#include <string>

#include "compiler/ir/inst.h"
#include "compiler/passes/rewrite.h"
#include "runtime/common/error.h"

namespace loom::passes {

namespace {

using ir::Inst;
using ir::Op;

// A constant read back from its bits in the representation its type computes in.
struct Value {
  Scalar type;
  uint64_t bits;  // normalised integer bits (see normalize_bits)

  int64_t s() const { return static_cast<int64_t>(bits); }
  uint64_t u() const {  // zero-extended from the width
    int w = bit_width(type);
    return w >= 64 ? bits : bits & ((uint64_t{1} << w) - 1);
  }
  double f() const {
    double d;
    std::memcpy(&d, &bits, sizeof d);
    return d;
  }
  float f32() const { return static_cast<float>(f()); }
};

uint64_t int_result(Scalar t, uint64_t raw) { return normalize_bits(t, raw); }
uint64_t float_result(Scalar t, double v) {
  return ir::float_bits(t == Scalar::F32 ? static_cast<double>(static_cast<float>(v)) : v);
}
uint64_t bool_result(bool b) { return b ? 1 : 0; }

// Applies a float function in the precision of `t` (f32 math calls the float overloads, as
// the generated code does).
template <typename F>
uint64_t float_math(Scalar t, double x, F&& fn) {
  if (t == Scalar::F32) return float_result(t, static_cast<double>(fn(static_cast<float>(x))));
  return float_result(t, fn(x));
}

template <typename F>
uint64_t float_math2(Scalar t, double x, double y, F&& fn) {
  if (t == Scalar::F32)
    return float_result(t, static_cast<double>(fn(static_cast<float>(x), static_cast<float>(y))));
  return float_result(t, fn(x, y));
}

std::optional<uint64_t> fold_cast(Scalar to, Value a) {
  if (to == a.type) return a.bits;
  if (to == Scalar::Bool) {
    if (is_float(a.type)) return bool_result(a.f() != 0.0);
    return bool_result(a.bits != 0);
  }
  if (is_float(to)) {
    if (is_float(a.type)) return float_result(to, a.f());
    if (is_unsigned_int(a.type)) {
      if (to == Scalar::F32)
        return float_result(to, static_cast<double>(static_cast<float>(a.u())));
      return float_result(to, static_cast<double>(a.u()));
    }
    if (to == Scalar::F32) return float_result(to, static_cast<double>(static_cast<float>(a.s())));
    return float_result(to, static_cast<double>(a.s()));
  }
  // to an integer
  if (!is_float(a.type)) return int_result(to, a.bits);  // truncate or extend (bools are 0/1)
  double x = std::trunc(a.f());
  if (std::isnan(x)) return std::nullopt;  // poison in the generated code: leave it alone
  int w = bit_width(to);
  if (is_signed_int(to)) {
    double lo = -std::ldexp(1.0, w - 1), hi = std::ldexp(1.0, w - 1);
    if (x < lo || x >= hi) return std::nullopt;
    return int_result(to, static_cast<uint64_t>(static_cast<int64_t>(x)));
  }
  if (x < 0 || x >= std::ldexp(1.0, w)) return std::nullopt;
  return int_result(to, static_cast<uint64_t>(x));
}

std::optional<uint64_t> fold_bitcast(Scalar to, Value a) {
  if (bit_width(to) != bit_width(a.type)) return std::nullopt;
  uint64_t raw;  // the value's bits as stored in memory, zero-extended
  if (a.type == Scalar::F32) {
    float f = a.f32();
    uint32_t w;
    std::memcpy(&w, &f, sizeof w);
    raw = w;
  } else if (a.type == Scalar::F64) {
    raw = a.bits;
  } else {
    raw = a.u();
  }
  if (to == Scalar::F32) {
    uint32_t w = static_cast<uint32_t>(raw);
    float f;
    std::memcpy(&f, &w, sizeof f);
    return float_result(to, static_cast<double>(f));
  }
  if (to == Scalar::F64) return raw;
  return int_result(to, raw);
}

std::optional<uint64_t> fold_unary(Op op, Scalar t, Value a) {
  if (op == Op::Cast) return fold_cast(t, a);
  if (op == Op::Bitcast) return fold_bitcast(t, a);
  if (op == Op::LogicNot) return bool_result(a.bits == 0);
  if (!is_float(a.type)) {
    switch (op) {
      case Op::Neg: return int_result(t, uint64_t{0} - a.bits);
      case Op::BitNot: return int_result(t, ~a.bits);
      case Op::Abs:
        if (is_unsigned_int(t)) return a.bits;
        return int_result(t, a.s() < 0 ? uint64_t{0} - a.bits : a.bits);
      case Op::Sign:
        if (is_unsigned_int(t)) return int_result(t, a.bits != 0);
        return int_result(t, static_cast<uint64_t>(a.s() > 0 ? 1 : a.s() < 0 ? -1 : 0));
      // Float-only, or folded before the switch.
      case Op::LogicNot:
      case Op::Floor:
      case Op::Ceil:
      case Op::Round:
      case Op::Sqrt:
      case Op::Rsqrt:
      case Op::Sin:
      case Op::Cos:
      case Op::Tan:
      case Op::Asin:
      case Op::Acos:
      case Op::Atan:
      case Op::Exp:
      case Op::Log:
      case Op::Cast:
      case Op::Bitcast: return std::nullopt;
      // Not unary: evaluate() sends only unary ops here.
      case Op::Const:
      case Op::ArgLoad:
      case Op::LoopIndex:
      case Op::ResourceShape:
      case Op::Add:
      case Op::Sub:
      case Op::Mul:
      case Op::Div:
      case Op::Mod:
      case Op::Min:
      case Op::Max:
      case Op::Pow:
      case Op::Atan2:
      case Op::BitAnd:
      case Op::BitOr:
      case Op::BitXor:
      case Op::Shl:
      case Op::Shr:
      case Op::Eq:
      case Op::Ne:
      case Op::Lt:
      case Op::Le:
      case Op::Gt:
      case Op::Ge:
      case Op::LogicAnd:
      case Op::LogicOr:
      case Op::Select:
      case Op::Fma:
      case Op::Rand:
      case Op::Alloca:
      case Op::LocalLoad:
      case Op::LocalStore:
      case Op::LocalArray:
      case Op::ArrayLoad:
      case Op::ArrayStore:
      case Op::GlobalPtr:
      case Op::ElementPtr:
      case Op::GlobalLoad:
      case Op::GlobalStore:
      case Op::AtomicRMW:
      case Op::TmpLoad:
      case Op::TmpStore:
      case Op::Reduce:
      case Op::BoundsCheck:
      case Op::TexLoad:
      case Op::TexSample:
      case Op::TexStore:
      case Op::If:
      case Op::RangeFor:
      case Op::StructFor:
      case Op::While:
      case Op::Break:
      case Op::Continue:
      case Op::Return:
      case Op::Assert:
      case Op::Offload: break;
    }
    throw InternalError("fold_unary of " + std::string(ir::op_name(op)));
  }
  double x = a.f();
  switch (op) {
    case Op::Neg: return float_result(t, -x);
    case Op::Abs: return float_result(t, std::fabs(x));
    case Op::Sign: return float_result(t, x > 0 ? 1.0 : x < 0 ? -1.0 : 0.0);
    case Op::Floor: return float_result(t, std::floor(x));
    case Op::Ceil: return float_result(t, std::ceil(x));
    case Op::Round: return float_result(t, std::round(x));
    case Op::Sqrt: return float_result(t, std::sqrt(x));  // correctly rounded in either width
    case Op::Rsqrt: return float_math(t, x, [](auto v) { return decltype(v)(1) / std::sqrt(v); });
    case Op::Sin: return float_math(t, x, [](auto v) { return std::sin(v); });
    case Op::Cos: return float_math(t, x, [](auto v) { return std::cos(v); });
    case Op::Tan: return float_math(t, x, [](auto v) { return std::tan(v); });
    case Op::Asin: return float_math(t, x, [](auto v) { return std::asin(v); });
    case Op::Acos: return float_math(t, x, [](auto v) { return std::acos(v); });
    case Op::Atan: return float_math(t, x, [](auto v) { return std::atan(v); });
    case Op::Exp: return float_math(t, x, [](auto v) { return std::exp(v); });
    case Op::Log: return float_math(t, x, [](auto v) { return std::log(v); });
    // Integer-only, or folded before the switch.
    case Op::BitNot:
    case Op::LogicNot:
    case Op::Cast:
    case Op::Bitcast: return std::nullopt;
    // Not unary: evaluate() sends only unary ops here.
    case Op::Const:
    case Op::ArgLoad:
    case Op::LoopIndex:
    case Op::ResourceShape:
    case Op::Add:
    case Op::Sub:
    case Op::Mul:
    case Op::Div:
    case Op::Mod:
    case Op::Min:
    case Op::Max:
    case Op::Pow:
    case Op::Atan2:
    case Op::BitAnd:
    case Op::BitOr:
    case Op::BitXor:
    case Op::Shl:
    case Op::Shr:
    case Op::Eq:
    case Op::Ne:
    case Op::Lt:
    case Op::Le:
    case Op::Gt:
    case Op::Ge:
    case Op::LogicAnd:
    case Op::LogicOr:
    case Op::Select:
    case Op::Fma:
    case Op::Rand:
    case Op::Alloca:
    case Op::LocalLoad:
    case Op::LocalStore:
    case Op::LocalArray:
    case Op::ArrayLoad:
    case Op::ArrayStore:
    case Op::GlobalPtr:
    case Op::ElementPtr:
    case Op::GlobalLoad:
    case Op::GlobalStore:
    case Op::AtomicRMW:
    case Op::TmpLoad:
    case Op::TmpStore:
    case Op::Reduce:
    case Op::BoundsCheck:
    case Op::TexLoad:
    case Op::TexSample:
    case Op::TexStore:
    case Op::If:
    case Op::RangeFor:
    case Op::StructFor:
    case Op::While:
    case Op::Break:
    case Op::Continue:
    case Op::Return:
    case Op::Assert:
    case Op::Offload: break;
  }
  throw InternalError("fold_unary of " + std::string(ir::op_name(op)));
}

std::optional<uint64_t> fold_int_binary(Op op, Scalar t, Value a, Value b) {
  bool sign = is_signed_int(a.type);
  auto less = [&](Value x, Value y) { return sign ? x.s() < y.s() : x.u() < y.u(); };
  switch (op) {
    case Op::Add: return int_result(t, a.bits + b.bits);
    case Op::Sub: return int_result(t, a.bits - b.bits);
    case Op::Mul: return int_result(t, a.bits * b.bits);
    case Op::Div:
      if (b.bits == 0) return std::nullopt;  // traps or is undefined at run time
      if (!sign) return int_result(t, a.u() / b.u());
      if (b.s() == -1) {
        if (a.bits == normalize_bits(t, uint64_t{1} << (bit_width(t) - 1))) return std::nullopt;
        return int_result(t, uint64_t{0} - a.bits);
      }
      return int_result(t, static_cast<uint64_t>(a.s() / b.s()));
    case Op::Mod: {
      if (b.bits == 0) return std::nullopt;
      if (!sign) return int_result(t, a.u() % b.u());
      if (b.s() == -1) return int_result(t, 0);
      int64_t r = a.s() % b.s();
      if (r != 0 && ((r < 0) != (b.s() < 0))) r += b.s();  // floored: sign of the divisor
      return int_result(t, static_cast<uint64_t>(r));
    }
    case Op::Min: return less(b, a) ? b.bits : a.bits;
    case Op::Max: return less(a, b) ? b.bits : a.bits;
    case Op::Pow: {
      // Exponents negative when read as signed (unsigned ones with the top bit set too) are
      // left alone: the generated code gives them a result of its own.
      int w = bit_width(b.type);
      if (w > 1 && ((b.u() >> (w - 1)) & 1)) return std::nullopt;
      uint64_t base = a.bits, result = 1, e = b.u();
      while (e) {
        if (e & 1) result *= base;
        base *= base;
        e >>= 1;
      }
      return int_result(t, result);
    }
    case Op::BitAnd: return int_result(t, a.bits & b.bits);
    case Op::BitOr: return int_result(t, a.bits | b.bits);
    case Op::BitXor: return int_result(t, a.bits ^ b.bits);
    case Op::Shl:
    case Op::Shr: {
      int w = bit_width(t);
      unsigned amount = static_cast<unsigned>(b.u() & static_cast<uint64_t>(w - 1));
      if (op == Op::Shl) return int_result(t, a.bits << amount);
      if (sign) return int_result(t, static_cast<uint64_t>(a.s() >> amount));
      return int_result(t, a.u() >> amount);
    }
    case Op::Eq: return bool_result(a.bits == b.bits);
    case Op::Ne: return bool_result(a.bits != b.bits);
    case Op::Lt: return bool_result(less(a, b));
    case Op::Le: return bool_result(!less(b, a));
    case Op::Gt: return bool_result(less(b, a));
    case Op::Ge: return bool_result(!less(a, b));
    // Float-only, or bool logic (fold_binary folds it first).
    case Op::Atan2:
    case Op::LogicAnd:
    case Op::LogicOr: return std::nullopt;
    // Not binary: evaluate() sends only binary ops here.
    case Op::Const:
    case Op::ArgLoad:
    case Op::LoopIndex:
    case Op::ResourceShape:
    case Op::Neg:
    case Op::BitNot:
    case Op::LogicNot:
    case Op::Abs:
    case Op::Sign:
    case Op::Floor:
    case Op::Ceil:
    case Op::Round:
    case Op::Sqrt:
    case Op::Rsqrt:
    case Op::Sin:
    case Op::Cos:
    case Op::Tan:
    case Op::Asin:
    case Op::Acos:
    case Op::Atan:
    case Op::Exp:
    case Op::Log:
    case Op::Cast:
    case Op::Bitcast:
    case Op::Select:
    case Op::Fma:
    case Op::Rand:
    case Op::Alloca:
    case Op::LocalLoad:
    case Op::LocalStore:
    case Op::LocalArray:
    case Op::ArrayLoad:
    case Op::ArrayStore:
    case Op::GlobalPtr:
    case Op::ElementPtr:
    case Op::GlobalLoad:
    case Op::GlobalStore:
    case Op::AtomicRMW:
    case Op::TmpLoad:
    case Op::TmpStore:
    case Op::Reduce:
    case Op::BoundsCheck:
    case Op::TexLoad:
    case Op::TexSample:
    case Op::TexStore:
    case Op::If:
    case Op::RangeFor:
    case Op::StructFor:
    case Op::While:
    case Op::Break:
    case Op::Continue:
    case Op::Return:
    case Op::Assert:
    case Op::Offload: break;
  }
  throw InternalError("fold_int_binary of " + std::string(ir::op_name(op)));
}

std::optional<uint64_t> fold_float_binary(Op op, Scalar t, Value a, Value b) {
  double x = a.f(), y = b.f();
  bool f32 = a.type == Scalar::F32;
  switch (op) {
    case Op::Add: return f32 ? float_result(t, a.f32() + b.f32()) : float_result(t, x + y);
    case Op::Sub: return f32 ? float_result(t, a.f32() - b.f32()) : float_result(t, x - y);
    case Op::Mul: return f32 ? float_result(t, a.f32() * b.f32()) : float_result(t, x * y);
    case Op::Div: return f32 ? float_result(t, a.f32() / b.f32()) : float_result(t, x / y);
    case Op::Mod: {  // floored: fmod (exact), then one divisor added when the signs differ
      if (f32) {
        float r = std::fmod(a.f32(), b.f32());
        if (r != 0 && ((r < 0) != (b.f32() < 0))) r += b.f32();
        return float_result(t, static_cast<double>(r));
      }
      double r = std::fmod(x, y);
      if (r != 0 && ((r < 0) != (y < 0))) r += y;
      return float_result(t, r);
    }
    case Op::Min:
    case Op::Max:
      // NaN and signed-zero ties depend on the backend's min/max flavour: leave those.
      if (std::isnan(x) || std::isnan(y) || (x == y && a.bits != b.bits)) return std::nullopt;
      return (op == Op::Min) == (x < y) ? a.bits : b.bits;
    case Op::Pow: return float_math2(t, x, y, [](auto p, auto q) { return std::pow(p, q); });
    case Op::Atan2: return float_math2(t, x, y, [](auto p, auto q) { return std::atan2(p, q); });
    case Op::Eq: return bool_result(x == y);
    case Op::Ne: return bool_result(x != y);  // unordered: NaN != NaN
    case Op::Lt: return bool_result(x < y);
    case Op::Le: return bool_result(x <= y);
    case Op::Gt: return bool_result(x > y);
    case Op::Ge: return bool_result(x >= y);
    // Integer-only or bool-only: not folded for floats.
    case Op::BitAnd:
    case Op::BitOr:
    case Op::BitXor:
    case Op::Shl:
    case Op::Shr:
    case Op::LogicAnd:
    case Op::LogicOr: return std::nullopt;
    // Not binary: evaluate() sends only binary ops here.
    case Op::Const:
    case Op::ArgLoad:
    case Op::LoopIndex:
    case Op::ResourceShape:
    case Op::Neg:
    case Op::BitNot:
    case Op::LogicNot:
    case Op::Abs:
    case Op::Sign:
    case Op::Floor:
    case Op::Ceil:
    case Op::Round:
    case Op::Sqrt:
    case Op::Rsqrt:
    case Op::Sin:
    case Op::Cos:
    case Op::Tan:
    case Op::Asin:
    case Op::Acos:
    case Op::Atan:
    case Op::Exp:
    case Op::Log:
    case Op::Cast:
    case Op::Bitcast:
    case Op::Select:
    case Op::Fma:
    case Op::Rand:
    case Op::Alloca:
    case Op::LocalLoad:
    case Op::LocalStore:
    case Op::LocalArray:
    case Op::ArrayLoad:
    case Op::ArrayStore:
    case Op::GlobalPtr:
    case Op::ElementPtr:
    case Op::GlobalLoad:
    case Op::GlobalStore:
    case Op::AtomicRMW:
    case Op::TmpLoad:
    case Op::TmpStore:
    case Op::Reduce:
    case Op::BoundsCheck:
    case Op::TexLoad:
    case Op::TexSample:
    case Op::TexStore:
    case Op::If:
    case Op::RangeFor:
    case Op::StructFor:
    case Op::While:
    case Op::Break:
    case Op::Continue:
    case Op::Return:
    case Op::Assert:
    case Op::Offload: break;
  }
  throw InternalError("fold_float_binary of " + std::string(ir::op_name(op)));
}

std::optional<uint64_t> fold_binary(Op op, Scalar t, Value a, Value b) {
  if (op == Op::LogicAnd) return bool_result(a.bits && b.bits);
  if (op == Op::LogicOr) return bool_result(a.bits || b.bits);
  if (is_float(a.type)) return fold_float_binary(op, t, a, b);
  return fold_int_binary(op, t, a, b);
}

std::optional<uint64_t> fold_fma(Scalar t, Value a, Value b, Value c) {
  if (!is_float(t)) return int_result(t, a.bits * b.bits + c.bits);
  if (t == Scalar::F32)
    return float_result(t, static_cast<double>(std::fma(a.f32(), b.f32(), c.f32())));
  return float_result(t, std::fma(a.f(), b.f(), c.f()));
}

std::optional<uint64_t> evaluate(Op op, Scalar type, const std::vector<Value>& v) {
  if (ir::is_unary(op) && v.size() == 1) return fold_unary(op, type, v[0]);
  if (ir::is_binary(op) && v.size() == 2) {
    // Shifts may take an amount of another type; everything else has one operand type.
    if (op != Op::Shl && op != Op::Shr && v[0].type != v[1].type) return std::nullopt;
    return fold_binary(op, type, v[0], v[1]);
  }
  if (op == Op::Select && v.size() == 3) return v[0].bits ? v[1].bits : v[2].bits;
  if (op == Op::Fma && v.size() == 3) return fold_fma(type, v[0], v[1], v[2]);
  return std::nullopt;
}

std::optional<uint64_t> fold(const Inst& inst) {
  std::vector<Value> values;
  for (const Inst* c : inst.operands) {
    if (!c->is_const()) return std::nullopt;
    values.push_back({c->type, normalize_bits(c->type, c->bits)});  // tolerate unnormalised bits
  }
  return evaluate(inst.op, inst.type, values);
}

bool is_foldable(Op op) { return ir::is_value_op(op); }

}  // namespace

std::optional<uint64_t> evaluate_constant(Op op, Scalar type,
                                          const std::vector<ConstValue>& operands) {
  std::vector<Value> values;
  values.reserve(operands.size());
  for (const ConstValue& c : operands) values.push_back({c.type, normalize_bits(c.type, c.bits)});
  std::optional<uint64_t> bits = evaluate(op, type, values);
  if (!bits) return std::nullopt;
  return normalize_bits(type, *bits);
}

bool constant_fold(ir::Kernel& kernel) {
  bool progress = false;
  // Rewrite in place: the instruction becomes a Const, so no uses need redirecting, and
  // folding in program order lets results feed the next fold in the same sweep.
  ir::walk(*kernel.body, [&](Inst& inst) {
    if (!is_foldable(inst.op) || inst.type == Scalar::Void) return;
    std::optional<uint64_t> bits = fold(inst);
    if (!bits) return;
    inst.morph(Op::Const);
    inst.bits = normalize_bits(inst.type, *bits);
    inst.operands.clear();
    progress = true;
  });
  return progress;
}

}  // namespace loom::passes
