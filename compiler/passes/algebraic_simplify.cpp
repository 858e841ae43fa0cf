#include "compiler/passes/algebraic_simplify.h"

#include <cmath>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "compiler/ir/block_worklist.h"
#include "compiler/ir/inst.h"
#include "compiler/ir/work_count.h"
#include "compiler/passes/rewrite.h"
#include "runtime/common/error.h"

namespace loom::passes {

namespace {

using ir::Block;
using ir::Inst;
using ir::Op;

// True when every value of `from` converts to `to` exactly, so a cast through `to` loses
// nothing and cast<T>(cast<to>(x)) == cast<T>(x).
bool lossless(Scalar from, Scalar to) {
  if (from == to) return true;
  if (from == Scalar::Bool) return is_numeric(to);
  if (is_int(from) && is_int(to)) {
    if (is_signed_int(from)) return is_signed_int(to) && bit_width(to) >= bit_width(from);
    return bit_width(to) > bit_width(from) ||
           (is_unsigned_int(to) && bit_width(to) == bit_width(from));
  }
  if (is_int(from) && is_float(to)) {
    int magnitude_bits = bit_width(from) - (is_signed_int(from) ? 1 : 0);
    return magnitude_bits <= (to == Scalar::F32 ? 24 : 53);
  }
  return from == Scalar::F32 && to == Scalar::F64;
}

// Pairs of comparisons, looked up rather than switched on: every other op maps to itself.
struct OpPair {
  Op from, to;
};
constexpr OpPair kMirrored[] = {
    {Op::Lt, Op::Gt}, {Op::Gt, Op::Lt}, {Op::Le, Op::Ge}, {Op::Ge, Op::Le}};
constexpr OpPair kInverse[] = {{Op::Eq, Op::Ne}, {Op::Ne, Op::Eq}, {Op::Lt, Op::Ge},
                               {Op::Ge, Op::Lt}, {Op::Gt, Op::Le}, {Op::Le, Op::Gt}};

template <size_t N>
Op look_up(const OpPair (&pairs)[N], Op op) {
  for (const OpPair& p : pairs)
    if (p.from == op) return p.to;
  return op;
}

Op mirrored(Op op) { return look_up(kMirrored, op); }  // a < b  <=>  b > a
Op inverse(Op op) { return look_up(kInverse, op); }    // not (a < b)  <=>  a >= b, for integers

class Simplifier {
 public:
  explicit Simplifier(ir::Kernel& k) : kernel_(k) {}

  bool run() {
    simplify_block(*kernel_.body);
    // Every use was redirected while walking (uses follow definitions), so the replaced
    // instructions are unused; erase the pure ones now.
    std::unordered_set<Inst*> dead;
    for (auto& [from, to] : replaced_)
      if (ir::is_pure(from->op)) dead.insert(from);
    replace_and_erase(kernel_, replaced_, dead);
    return progress_;
  }

 private:
  Inst* resolve(Inst* v) {
    for (auto it = replaced_.find(v); it != replaced_.end(); it = replaced_.find(v)) v = it->second;
    return v;
  }

  // Rebuilds the block in order: a constant a rewrite needs is appended just before the
  // instruction it serves, and the taken branch of an `if` on a constant takes the if's place
  // and is visited in turn, so the work stays linear in the block size.
  void simplify_block(Block& block) {
    std::vector<std::unique_ptr<Inst>> todo;  // the next instruction last
    ir::push_in_visit_order(block, todo);
    while (!todo.empty()) {
      std::unique_ptr<Inst> up = std::move(todo.back());
      todo.pop_back();
      Inst* inst = up.get();
      ir::count_work();
      for (auto& op : inst->operands) op = resolve(op);
      if (inst->op == Op::If && inst->operands.size() == 1 && inst->operands[0]->is_const()) {
        splice_if(std::move(up), todo);
        continue;
      }
      out_ = &block;
      if (Inst* r = simplify(inst)) {
        replaced_[inst] = r;
        progress_ = true;
      }
      block.append(std::move(up));
      for (auto& region : inst->regions) simplify_block(*region);
    }
  }

  // Replaces `if <const>` by the taken branch, whose instructions are visited next.
  void splice_if(std::unique_ptr<Inst> branch, std::vector<std::unique_ptr<Inst>>& todo) {
    progress_ = true;
    Block& taken = *branch->regions[branch->operands[0]->bits ? 0 : 1];
    ir::push_in_visit_order(taken, todo);
    kernel_.erase(std::move(branch));
  }

  // A constant placed just before the instruction being simplified.
  Inst* constant(Inst* before, Scalar type, uint64_t bits) {
    return out_->append(new_const_bits(type, normalize_bits(type, bits), before->node));
  }

  // In-place rewrites; they return null, meaning "no replacement value".
  Inst* become(Inst* inst, Op op, std::vector<Inst*> operands) {
    inst->morph(op);
    inst->operands = std::move(operands);
    progress_ = true;
    return nullptr;
  }

  Inst* become_const(Inst* inst, uint64_t bits) {
    become(inst, Op::Const, {});
    inst->bits = normalize_bits(inst->type, bits);
    return nullptr;
  }

  // Returns a value that replaces `inst`, or null (possibly after rewriting it in place).
  Inst* simplify(Inst* inst) {
    if (ir::is_binary(inst->op) && inst->operands.size() == 2) return simplify_binary(inst);
    if (ir::is_unary(inst->op) && inst->operands.size() == 1) return simplify_unary(inst);
    if (inst->op == Op::Select && inst->operands.size() == 3) return simplify_select(inst);
    if (inst->op == Op::Fma && inst->operands.size() == 3) return simplify_fma(inst);
    return nullptr;
  }

  Inst* simplify_unary(Inst* inst) {
    Inst* a = inst->operands[0];
    Scalar t = inst->type;
    switch (inst->op) {
      case Op::LogicNot:
        if (a->op == Op::LogicNot) return a->operands[0];
        if (ir::is_comparison(a->op) && !is_float(a->operands[0]->type)) {
          become(inst, inverse(a->op), a->operands);
          return nullptr;
        }
        return nullptr;
      case Op::Neg:
      case Op::BitNot:
        if (a->op == inst->op) return a->operands[0];
        return nullptr;
      case Op::Abs:
        if (a->op == Op::Abs || (is_unsigned_int(t))) return a;
        return nullptr;
      case Op::Floor:
      case Op::Ceil:
      case Op::Round:
        if (a->op == Op::Floor || a->op == Op::Ceil || a->op == Op::Round)
          return a;  // integral already
        return nullptr;
      case Op::Cast:
        if (a->type == t) return a;
        if (a->op == Op::Cast && lossless(a->operands[0]->type, a->type)) {
          if (a->operands[0]->type == t) return a->operands[0];
          inst->operands[0] = a->operands[0];
          progress_ = true;
        }
        return nullptr;
      case Op::Bitcast:
        if (a->type == t) return a;
        if (a->op == Op::Bitcast) {
          if (a->operands[0]->type == t) return a->operands[0];
          inst->operands[0] = a->operands[0];
          progress_ = true;
        }
        return nullptr;
      // No rewrite for these.
      case Op::Sign:
      case Op::Sqrt:
      case Op::Rsqrt:
      case Op::Sin:
      case Op::Cos:
      case Op::Tan:
      case Op::Asin:
      case Op::Acos:
      case Op::Atan:
      case Op::Exp:
      case Op::Log: return nullptr;
      // Not unary: simplify() sends only unary ops here.
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
    throw InternalError("simplify_unary of " + std::string(ir::op_name(inst->op)));
  }

  Inst* simplify_select(Inst* inst) {
    Inst *c = inst->operands[0], *a = inst->operands[1], *b = inst->operands[2];
    if (c->is_const()) return c->bits ? a : b;
    if (a == b) return a;
    if (c->op == Op::LogicNot) {
      inst->operands = {c->operands[0], b, a};
      progress_ = true;
      return nullptr;
    }
    if (inst->type == Scalar::Bool && a->is_const() && b->is_const()) {
      if (a->bits && !b->bits) return c;
      if (!a->bits && b->bits) become(inst, Op::LogicNot, {c});
    }
    return nullptr;
  }

  Inst* simplify_fma(Inst* inst) {
    Inst *a = inst->operands[0], *b = inst->operands[1], *c = inst->operands[2];
    if (is_int(inst->type) && (is_const_int(a, 0) || is_const_int(b, 0))) return c;
    if (is_const_value(b, 1)) {
      become(inst, Op::Add, {a, c});
      return nullptr;
    }
    if (is_const_value(a, 1)) become(inst, Op::Add, {b, c});
    return nullptr;
  }

  Inst* simplify_binary(Inst* inst) {
    Op op = inst->op;
    if (inst->operands[0]->is_const() && !inst->operands[1]->is_const() &&
        (ir::is_commutative(op) || mirrored(op) != op)) {
      std::swap(inst->operands[0], inst->operands[1]);
      inst->op = op = mirrored(op);
      progress_ = true;
    }
    Inst *a = inst->operands[0], *b = inst->operands[1];
    Scalar t = inst->type;
    Scalar ot = a->type;  // operand type (comparisons give bool)
    bool integer = is_int(ot) || ot == Scalar::Bool;
    bool fast = kernel_.fast_math;
    switch (op) {
      case Op::Add:
        if (is_const_int(b, 0) || is_const_float(b, -0.0) || (fast && is_const_float(b, 0.0)))
          return a;
        if (b->op == Op::Neg) become(inst, Op::Sub, {a, b->operands[0]});
        return nullptr;
      case Op::Sub:
        if (is_const_int(b, 0) || is_const_float(b, 0.0) || (fast && is_const_float(b, -0.0)))
          return a;
        if (integer && a == b) return become_const(inst, 0);
        if (integer && is_const_int(a, 0)) return become(inst, Op::Neg, {b});
        if (b->op == Op::Neg) become(inst, Op::Add, {a, b->operands[0]});
        return nullptr;
      case Op::Mul: {
        if (is_const_value(b, 1)) return a;
        if (integer && is_const_int(b, 0)) return b;
        if (is_const_value(b, -1) && is_signed_int(t)) return become(inst, Op::Neg, {a});
        if (is_const_float(b, -1.0)) return become(inst, Op::Neg, {a});
        int k = power_of_two(b);
        if (k > 0) become(inst, Op::Shl, {a, constant(inst, t, static_cast<uint64_t>(k))});
        return nullptr;
      }
      case Op::Div: {
        if (is_const_value(b, 1)) return a;
        if (is_signed_int(t) && is_const_int(b, -1)) return become(inst, Op::Neg, {a});
        int k = power_of_two(b);
        if (k > 0 && is_unsigned_int(t))
          return become(inst, Op::Shr, {a, constant(inst, t, static_cast<uint64_t>(k))});
        if (is_float(t) && b->is_const()) {  // x / 2^k == x * 2^-k exactly
          int e;
          double m = std::frexp(b->float_value(), &e);
          double r = std::ldexp(1.0, 1 - e);
          bool exact = std::fabs(m) == 0.5 && (t == Scalar::F64 || static_cast<float>(r) == r);
          if (exact && std::isnormal(r)) {
            if (m < 0) r = -r;
            become(inst, Op::Mul, {a, constant(inst, t, ir::float_bits(r))});
          }
        }
        return nullptr;
      }
      case Op::Mod: {
        if (is_int(t) && (is_const_int(b, 1) || (is_signed_int(t) && is_const_int(b, -1))))
          return become_const(inst, 0);
        int k = power_of_two(b);  // floored mod by 2^k keeps the low bits, signed or not
        if (k > 0) become(inst, Op::BitAnd, {a, constant(inst, t, (uint64_t{1} << k) - 1)});
        return nullptr;
      }
      case Op::Min:
      case Op::Max:
        if (a == b) return a;
        return nullptr;
      case Op::Pow:
        if (is_const_value(b, 1)) return a;
        if (is_const_value(b, 0)) {
          if (is_float(t)) return become_const(inst, ir::float_bits(1.0));
          return become_const(inst, 1);
        }
        if (is_const_value(b, 2)) become(inst, Op::Mul, {a, a});
        return nullptr;
      case Op::BitAnd:
        if (a == b) return a;
        if (is_const_int(b, 0)) return b;
        if (is_all_ones(b) || (t == Scalar::Bool && is_const_int(b, 1))) return a;
        return nullptr;
      case Op::BitOr:
        if (a == b) return a;
        if (is_const_int(b, 0)) return a;
        if (is_all_ones(b) || (t == Scalar::Bool && is_const_int(b, 1))) return b;
        return nullptr;
      case Op::BitXor:
        if (a == b) return become_const(inst, 0);
        if (is_const_int(b, 0)) return a;
        return nullptr;
      case Op::Shl:
      case Op::Shr:
        if (b->is_const() && is_int(t) && (b->bits & static_cast<uint64_t>(bit_width(t) - 1)) == 0)
          return a;
        return nullptr;
      case Op::Eq:
      case Op::Le:
      case Op::Ge:
        if (integer && a == b) return become_const(inst, 1);
        if (op == Op::Eq && ot == Scalar::Bool && b->is_const()) {
          if (b->bits) return a;
          become(inst, Op::LogicNot, {a});
        }
        return nullptr;
      case Op::Ne:
      case Op::Lt:
      case Op::Gt:
        if (integer && a == b) return become_const(inst, 0);
        if (op == Op::Ne && ot == Scalar::Bool && b->is_const()) {
          if (!b->bits) return a;
          become(inst, Op::LogicNot, {a});
        }
        return nullptr;
      case Op::LogicAnd:
        if (a == b) return a;
        if (b->is_const()) return b->bits ? a : b;
        return nullptr;
      case Op::LogicOr:
        if (a == b) return a;
        if (b->is_const()) return b->bits ? b : a;
        return nullptr;
      // No rewrite for these.
      case Op::Atan2: return nullptr;
      // Not binary: simplify() sends only binary ops here.
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
    throw InternalError("simplify_binary of " + std::string(ir::op_name(op)));
  }

  ir::Kernel& kernel_;
  std::unordered_map<Inst*, Inst*> replaced_;
  Block* out_ = nullptr;  // the block being rebuilt: constant() appends to it
  bool progress_ = false;
};

}  // namespace

bool algebraic_simplify(ir::Kernel& kernel) { return Simplifier(kernel).run(); }

}  // namespace loom::passes
