#include "compiler/passes/type_check.h"

#include <string>

#include "compiler/ir/inst.h"
#include "compiler/ir/work_count.h"
#include "compiler/passes/rewrite.h"
#include "runtime/common/error.h"

namespace loom::passes {

namespace {

using ir::Inst;
using ir::Op;

// The common type of a binary operation, Taichi style.
Scalar promote(Scalar a, Scalar b) {
  if (a == b) return a;
  if (a == Scalar::Bool) a = Scalar::I32;
  if (b == Scalar::Bool) b = Scalar::I32;
  if (a == b) return a;
  if (is_float(a) || is_float(b)) {
    if (a == Scalar::F64 || b == Scalar::F64) return Scalar::F64;
    return Scalar::F32;
  }
  int wa = bit_width(a), wb = bit_width(b);
  if (wa != wb) return wa > wb ? a : b;
  return is_unsigned_int(a) ? a : b;  // same width: unsigned wins (as in C and Taichi)
}

// The float type an integer is promoted to by float-only math.
Scalar float_for(Scalar s) { return bit_width(s) == 64 ? Scalar::F64 : Scalar::F32; }

class TypeChecker {
 public:
  explicit TypeChecker(ir::Kernel& k) : kernel_(k) {
    for (const ValueType& t : k.abi.returns)
      for (int i = 0; i < t.components(); ++i) return_scalars_.push_back(t.scalar);
  }

  bool run() {
    check_block(*kernel_.body);
    return progress_;
  }

 private:
  [[noreturn]] void fail(const Inst& inst, const std::string& message) {
    throw Error(Place{"", kernel_.abi.name, inst.node, ""}, message);
  }

  static bool is_value(Scalar s) { return is_numeric(s) || s == Scalar::Bool; }

  // Inserts right before the instruction being checked (the block is being rebuilt).
  Inst* insert_here(std::unique_ptr<Inst> inst) { return block_->append(std::move(inst)); }

  // Converts operand `i` of `inst` to `to` by a Cast inserted right before `inst`.
  void convert(Inst* inst, size_t i, Scalar to) {
    Inst* v = inst->operands[i];
    if (v->type == to) return;
    if (!is_value(v->type))
      fail(*inst, "operand " + std::to_string(i) + " of " + std::string(ir::op_name(inst->op)) +
                      " has no value");
    inst->operands[i] = insert_here(new_inst(Op::Cast, to, {v}, inst->node));
    progress_ = true;
  }

  // A condition: numbers become `x != 0`.
  void to_bool(Inst* inst, size_t i) {
    Inst* v = inst->operands[i];
    if (v->type == Scalar::Bool) return;
    if (!is_numeric(v->type))
      fail(*inst, std::string(ir::op_name(inst->op)) + " needs a boolean condition");
    Inst* zero = insert_here(new_const_bits(v->type, 0, inst->node));
    inst->operands[i] = insert_here(new_inst(Op::Ne, Scalar::Bool, {v, zero}, inst->node));
    progress_ = true;
  }

  void set_type(Inst* inst, Scalar t) {
    if (inst->type == t) return;
    inst->type = t;
    progress_ = true;
  }

  void need_operands(const Inst* inst, size_t n) {
    if (inst->operands.size() != n)
      fail(*inst, std::string(ir::op_name(inst->op)) + " expects " + std::to_string(n) +
                      " operands, has " + std::to_string(inst->operands.size()));
    for (const Inst* op : inst->operands)
      if (!op) fail(*inst, "missing operand");
  }

  void need_value(const Inst* inst, size_t i) {
    if (!is_value(inst->operands[i]->type))
      fail(*inst,
           std::string(ir::op_name(inst->op)) + ": operand " + std::to_string(i) + " has no value");
  }

  // Integer operand (indices, coordinates, bounds): bools widen to i32, floats are errors.
  void to_index(Inst* inst, size_t i, Scalar want = Scalar::Void) {
    Scalar t = inst->operands[i]->type;
    if (is_float(t)) fail(*inst, std::string(ir::op_name(inst->op)) + ": index is a float");
    if (!is_value(t)) fail(*inst, std::string(ir::op_name(inst->op)) + ": index has no value");
    if (want != Scalar::Void) return convert(inst, i, want);
    if (t == Scalar::Bool) convert(inst, i, Scalar::I32);
  }

  void check_unary(Inst* inst) {
    need_operands(inst, 1);
    need_value(inst, 0);
    Scalar t = inst->operands[0]->type;
    switch (inst->op) {
      case Op::LogicNot:
        to_bool(inst, 0);
        set_type(inst, Scalar::Bool);
        return;
      case Op::Cast:
        if (!is_value(inst->type)) fail(*inst, "cast to a non-value type");
        return;
      case Op::Bitcast:
        if (!is_numeric(inst->type) || bit_width(inst->type) != bit_width(t))
          fail(*inst, "bitcast between types of different widths");
        return;
      case Op::BitNot:
        if (is_float(t)) fail(*inst, "bit_not needs an integer");
        set_type(inst, t);
        return;
      case Op::Neg:
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
      case Op::Log: return check_math(inst, t);
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
    throw InternalError("type_check: " + std::string(ir::op_name(inst->op)) + " is not unary");
  }

  // Neg, Abs and floor..log by their ops.def operand class: numbers (bools count 0/1),
  // or floats only (integers convert to the float of their width).
  void check_math(Inst* inst, Scalar t) {
    switch (ir::op_info(inst->op).operands) {
      case ir::OperandTypes::Numeric:
        if (t == Scalar::Bool) convert(inst, 0, t = Scalar::I32);
        return set_type(inst, t);
      case ir::OperandTypes::Float:
        if (!is_float(t)) convert(inst, 0, t = float_for(t));
        return set_type(inst, t);
      case ir::OperandTypes::Int:
      case ir::OperandTypes::IntOrBool:
      case ir::OperandTypes::Bool:
      case ir::OperandTypes::Any:
      case ir::OperandTypes::Shift:
      case ir::OperandTypes::Condition:
      case ir::OperandTypes::Variable:
      case ir::OperandTypes::Pointer:
      case ir::OperandTypes::AtomicTarget:
      case ir::OperandTypes::Loop:
      case ir::OperandTypes::Index:
      case ir::OperandTypes::Special: break;
    }
    throw InternalError("type_check: no conversion rule for " + std::string(ir::op_name(inst->op)));
  }

  void check_binary(Inst* inst) {
    need_operands(inst, 2);
    need_value(inst, 0);
    need_value(inst, 1);
    Scalar a = inst->operands[0]->type, b = inst->operands[1]->type;
    Op op = inst->op;
    if (op == Op::LogicAnd || op == Op::LogicOr) {
      to_bool(inst, 0);
      to_bool(inst, 1);
      set_type(inst, Scalar::Bool);
      return;
    }
    if (op == Op::Shl || op == Op::Shr) {
      if (is_float(a) || is_float(b)) fail(*inst, "shift needs integers");
      if (a == Scalar::Bool) convert(inst, 0, a = Scalar::I32);
      convert(inst, 1, a);  // the amount in the shifted type keeps codegen simple
      set_type(inst, a);
      return;
    }
    Scalar t = promote(a, b);
    bool bitwise = op == Op::BitAnd || op == Op::BitOr || op == Op::BitXor;
    if (bitwise && is_float(t)) fail(*inst, std::string(ir::op_name(op)) + " needs integers");
    bool keeps_bool = bitwise || op == Op::Eq || op == Op::Ne;
    if (t == Scalar::Bool && !keeps_bool) t = Scalar::I32;  // arithmetic on bools counts 0/1
    if (op == Op::Atan2 && !is_float(t)) t = float_for(t);
    convert(inst, 0, t);
    convert(inst, 1, t);
    set_type(inst, ir::is_comparison(op) ? Scalar::Bool : t);
  }

  void check(Inst* inst) {
    Op op = inst->op;
    if (ir::is_unary(op)) return check_unary(inst);
    if (ir::is_binary(op)) return check_binary(inst);
    switch (op) {
      case Op::Select: {
        need_operands(inst, 3);
        need_value(inst, 1);
        need_value(inst, 2);
        to_bool(inst, 0);
        Scalar t = promote(inst->operands[1]->type, inst->operands[2]->type);
        convert(inst, 1, t);
        convert(inst, 2, t);
        set_type(inst, t);
        return;
      }
      case Op::Fma: {
        need_operands(inst, 3);
        for (size_t i = 0; i < 3; ++i) need_value(inst, i);
        Scalar t = promote(promote(inst->operands[0]->type, inst->operands[1]->type),
                           inst->operands[2]->type);
        if (t == Scalar::Bool) t = Scalar::I32;
        for (size_t i = 0; i < 3; ++i) convert(inst, i, t);
        set_type(inst, t);
        return;
      }
      case Op::Const:
      case Op::ArgLoad:
      case Op::Rand:
      case Op::Alloca:
      case Op::LocalArray:
        if (!is_value(inst->type)) fail(*inst, std::string(ir::op_name(op)) + " of no value type");
        return;
      case Op::LoopIndex:
      case Op::ResourceShape: return;
      case Op::LocalLoad:
        need_operands(inst, 1);
        if (inst->operands[0]->op != Op::Alloca) fail(*inst, "local_load of a non-variable");
        set_type(inst, inst->operands[0]->type);
        return;
      case Op::LocalStore:
        need_operands(inst, 2);
        if (inst->operands[0]->op != Op::Alloca) fail(*inst, "local_store to a non-variable");
        need_value(inst, 1);
        convert(inst, 1, inst->operands[0]->type);
        return;
      case Op::ArrayLoad:
        need_operands(inst, 2);
        if (inst->operands[0]->op != Op::LocalArray) fail(*inst, "array_load of a non-array");
        to_index(inst, 1, Scalar::I32);
        set_type(inst, inst->operands[0]->type);
        return;
      case Op::ArrayStore:
        need_operands(inst, 3);
        if (inst->operands[0]->op != Op::LocalArray) fail(*inst, "array_store to a non-array");
        to_index(inst, 1, Scalar::I32);
        need_value(inst, 2);
        convert(inst, 2, inst->operands[0]->type);
        return;
      case Op::GlobalPtr:
        for (size_t i = 0; i < inst->operands.size(); ++i) to_index(inst, i);
        check_slot(inst);
        return;
      case Op::ElementPtr:
        need_operands(inst, 1);
        to_index(inst, 0, Scalar::I64);
        check_slot(inst);
        return;
      case Op::GlobalLoad:
        need_operands(inst, 1);
        need_pointer(inst, false);
        set_type(inst, inst->operands[0]->type);
        return;
      case Op::GlobalStore:
        need_operands(inst, 2);
        need_pointer(inst, false);
        need_value(inst, 1);
        convert(inst, 1, inst->operands[0]->type);
        return;
      case Op::AtomicRMW: {
        need_operands(inst, 2);
        need_pointer(inst, true);
        need_value(inst, 1);
        Scalar t = inst->operands[0]->type;
        ir::AtomicOp a = inst->atomic_op();
        if (is_float(t) &&
            (a == ir::AtomicOp::And || a == ir::AtomicOp::Or || a == ir::AtomicOp::Xor))
          fail(*inst, "bitwise atomic on a float");
        convert(inst, 1, t);
        set_type(inst, t);
        return;
      }
      case Op::TmpStore:
      case Op::Reduce:
        need_operands(inst, 1);
        need_value(inst, 0);
        return;
      case Op::BoundsCheck:
        need_operands(inst, 2);
        to_index(inst, 0);
        to_index(inst, 1, Scalar::I32);
        return;
      case Op::TexLoad:
        check_slot(inst);
        for (size_t i = 0; i < inst->operands.size(); ++i) to_index(inst, i, Scalar::I32);
        return;
      case Op::TexSample:
        check_slot(inst);
        for (size_t i = 0; i < inst->operands.size(); ++i) {
          need_value(inst, i);
          convert(inst, i, Scalar::F32);
        }
        return;
      case Op::TexStore: {
        check_slot(inst);
        if (inst->operands.size() < 4) fail(*inst, "tex_store needs coordinates and 4 channels");
        size_t coords = inst->operands.size() - 4;
        for (size_t i = 0; i < inst->operands.size(); ++i) {
          if (i < coords) {
            to_index(inst, i, Scalar::I32);
            continue;
          }
          need_value(inst, i);
          convert(inst, i, Scalar::F32);
        }
        return;
      }
      case Op::If:
        need_operands(inst, 1);
        to_bool(inst, 0);
        return;
      case Op::Assert:
        need_operands(inst, 1);
        to_bool(inst, 0);
        return;
      case Op::RangeFor:
        if (inst->operands.size() != static_cast<size_t>(inst->dims()) * 2)
          fail(*inst, "range_for bounds do not match its dimensions");
        for (size_t i = 0; i < inst->operands.size(); ++i) to_index(inst, i, Scalar::I32);
        return;
      case Op::Offload:
        if (inst->task_kind() == ir::TaskKind::RangeFor)
          for (size_t i = 0; i < inst->operands.size(); ++i) to_index(inst, i, Scalar::I32);
        return;
      case Op::Return:
        if (inst->operands.empty()) return;
        if (inst->operands.size() != return_scalars_.size())
          fail(*inst, "returns " + std::to_string(inst->operands.size()) +
                          " values, kernel declares " + std::to_string(return_scalars_.size()));
        for (size_t i = 0; i < inst->operands.size(); ++i) {
          need_value(inst, i);
          convert(inst, i, return_scalars_[i]);
        }
        return;
      // Nothing to convert: no operands, or only regions and jumps.
      case Op::TmpLoad:
      case Op::StructFor:
      case Op::While:
      case Op::Break:
      case Op::Continue: return;
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
      case Op::LogicOr: break;
    }
    throw InternalError("type_check: value op " + std::string(ir::op_name(op)) +
                        " reached the switch");
  }

  void check_slot(const Inst* inst) {
    int slot = inst->resource_slot();
    if (slot < 0 || static_cast<size_t>(slot) >= kernel_.abi.resources.size())
      fail(*inst, "resource slot " + std::to_string(slot) + " does not exist");
  }

  void need_pointer(const Inst* inst, bool allow_variable) {
    Op p = inst->operands[0]->op;
    if (p == Op::GlobalPtr || p == Op::ElementPtr || (allow_variable && p == Op::Alloca)) return;
    fail(*inst, std::string(ir::op_name(inst->op)) + " needs a pointer");
  }

  void check_block(ir::Block& block) {
    // Rebuilt in order, conversions appended just before the instruction they serve, so
    // inserting stays linear in the block size.
    std::vector<std::unique_ptr<Inst>> old = std::move(block.insts);
    block.insts.clear();
    block.insts.reserve(old.size());
    for (auto& up : old) {
      Inst* inst = up.get();
      ir::count_work();
      block_ = &block;
      check(inst);
      block.append(std::move(up));
      for (auto& region : inst->regions) check_block(*region);
    }
  }

  ir::Kernel& kernel_;
  std::vector<Scalar> return_scalars_;
  ir::Block* block_ = nullptr;  // the block being rebuilt
  bool progress_ = false;
};

}  // namespace

bool type_check(ir::Kernel& kernel) { return TypeChecker(kernel).run(); }

}  // namespace loom::passes
