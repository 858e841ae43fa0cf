#include "compiler/ir/verifier.h"

#include <cstdio>
#include <vector>

#include "compiler/ir/inst.h"
#include "compiler/ir/printer.h"
#include "compiler/ir/work_count.h"
#include "runtime/common/error.h"

namespace loom::ir {

namespace {

std::string hex(uint64_t bits) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%llx", static_cast<unsigned long long>(bits));
  return buf;
}

bool is_value_type(Scalar t) { return is_numeric(t) || t == Scalar::Bool; }

// Whether `t` belongs to an operand type class of ops.def (value classes only).
bool in_class(OperandTypes c, Scalar t) {
  switch (c) {
    case OperandTypes::Numeric: return is_numeric(t);
    case OperandTypes::Float: return is_float(t);
    case OperandTypes::Int:
    case OperandTypes::Index: return is_int(t);
    case OperandTypes::IntOrBool:
    case OperandTypes::Shift: return is_int(t) || t == Scalar::Bool;
    case OperandTypes::Bool: return t == Scalar::Bool;
    case OperandTypes::Any:
    case OperandTypes::Condition: return is_value_type(t);
    case OperandTypes::Variable:
    case OperandTypes::Pointer:
    case OperandTypes::AtomicTarget:
    case OperandTypes::Loop:
    case OperandTypes::Special: return true;  // checked by op, not by type
  }
  return true;
}

// The verifier's words for an operand outside its class (tests match these).
std::string class_problem(Op op, OperandTypes c) {
  std::string name(op_name(op));
  bool unary = op_info(op).arity == 1;
  switch (c) {
    case OperandTypes::Float: return unary ? "math function needs a float" : name + " needs floats";
    case OperandTypes::Bool: return unary ? name + " needs bool" : "logic op needs bool";
    case OperandTypes::Int: return name + " needs an integer";
    case OperandTypes::IntOrBool:
    case OperandTypes::Shift: return "bit operation needs integers";
    case OperandTypes::Numeric: return name + " needs numbers";
    case OperandTypes::Any:
    case OperandTypes::Condition:
    case OperandTypes::Index:
    case OperandTypes::Variable:
    case OperandTypes::Pointer:
    case OperandTypes::AtomicTarget:
    case OperandTypes::Loop:
    case OperandTypes::Special: return name + " operand types";
  }
  return name + " operand types";
}

bool is_pointer(const Inst* p) { return p->op == Op::GlobalPtr || p->op == Op::ElementPtr; }

class Verifier {
 public:
  Verifier(const Kernel& k, VerifyOptions o) : kernel_(k), options_(o) {}

  std::string run() {
    kernel_.renumber();
    // Ids are print order: instruction `id` is order_[id]. Looking a value up here instead of
    // in a hash set keeps the checks cheap for big kernels; an operand outside the kernel has
    // no entry (or another instruction's), so it is reported as not dominating its use.
    walk(*kernel_.body, [&](const Inst& inst) { order_.push_back(&inst); });
    defined_.assign(order_.size(), false);
    for (int32_t slot : kernel_.block_local_slots)
      if (slot < 0 || static_cast<size_t>(slot) >= kernel_.abi.resources.size())
        return error_ = "block_local slot $" + std::to_string(slot) + " out of range";
    if (options_.offloaded) check_offloaded_top_level();
    check_block(*kernel_.body);
    return error_;
  }

 private:
  std::string fail(const Inst& inst, const std::string& why) {
    if (error_.empty()) error_ = why + ": " + print_inst_head(inst);
    return error_;
  }

  // The verifier's own tables (ops.def, the op switch) disagree: a bug in Loom, not in the
  // IR under test, so it is thrown rather than reported as the IR's problem.
  [[noreturn]] void internal_fail(const Inst& inst, const std::string& why,
                                  SourceLocation where = SourceLocation::current()) {
    throw InternalError(Place{"", kernel_.abi.name}, why + ": " + print_inst_head(inst), where);
  }

  static std::string print_inst_head(const Inst& inst) {
    std::string s = print_inst(inst);
    auto nl = s.find('\n');
    return nl == std::string::npos ? s : s.substr(0, nl);
  }

  // A type problem; not checked before type_check (VerifyOptions::types).
  void type_fail(const Inst& inst, const std::string& why) {
    if (options_.types) fail(inst, why);
  }

  // Top level: tasks, plus uniform values (constants, arguments, shapes and pure math on
  // them) that codegen re-materialises inside each task and each extent function.
  void check_offloaded_top_level() {
    for (const auto& inst : kernel_.body->insts) {
      if (inst->op == Op::Offload) continue;
      bool uniform = inst->op == Op::Const || inst->op == Op::ArgLoad ||
                     inst->op == Op::ResourceShape || is_value_op(inst->op);
      if (!uniform) {
        fail(*inst, "top level of an offloaded kernel holds a non-uniform instruction");
        return;
      }
    }
  }

  bool enclosing(const Inst* region_inst, const Inst& user) const {
    for (const Block* b = user.parent; b; b = b->owner ? b->owner->parent : nullptr)
      if (b->owner == region_inst) return true;
    return false;
  }

  bool inside_loop(const Inst& inst) const {
    for (const Block* b = inst.parent; b && b->owner; b = b->owner->parent) {
      Op op = b->owner->op;
      if (op == Op::While || op == Op::RangeFor || op == Op::StructFor) return true;
      if (op == Op::Offload) return b->owner->task_kind() != TaskKind::Serial;
    }
    return false;
  }

  // A break leaves the innermost loop around it, which must be a serial one: a while or a
  // nested range_for / struct_for, never a task (its iterations run in parallel).
  void check_break(const Inst& inst) {
    for (const Block* b = inst.parent; b && b->owner; b = b->owner->parent) {
      Op op = b->owner->op;
      if (op == Op::While || op == Op::RangeFor || op == Op::StructFor) return;
      if (op != Op::Offload) continue;
      if (b->owner->task_kind() == TaskKind::Serial) break;
      fail(inst, "break leaves a parallel task");
      return;
    }
    fail(inst, "break outside a loop");
  }

  // ops.def's arity; false (and a failure) when the count is wrong, so that nothing
  // after it indexes a missing operand.
  bool check_operand_count(const Inst& inst) {
    int arity = op_info(inst.op).arity;
    if (arity == Variadic || inst.operands.size() == static_cast<size_t>(arity)) return true;
    fail(inst, "expects " + std::to_string(arity) + " operands, has " +
                   std::to_string(inst.operands.size()));
    return false;
  }

  void check_resource_slot(const Inst& inst) {
    int slot = inst.resource_slot();
    if (slot < 0 || static_cast<size_t>(slot) >= kernel_.abi.resources.size())
      fail(inst, "resource slot out of range");
  }

  // Unary, binary and ternary value ops, entirely from their ops.def row.
  void check_value_op(const Inst& inst) {
    const OpInfo& info = op_info(inst.op);
    const auto& ops = inst.operands;
    bool mixed_ok =
        info.operands == OperandTypes::Shift || info.operands == OperandTypes::Condition;
    if (!mixed_ok) {
      for (const Inst* o : ops)
        if (o->type != ops[0]->type) return type_fail(inst, same_type_problem(inst));
    }
    if (!check_value_result(inst)) return;
    if (info.operands == OperandTypes::Condition) {
      if (ops[0]->type != Scalar::Bool || ops[1]->type != inst.type || ops[2]->type != inst.type)
        type_fail(inst, std::string(info.name) + " types");
      return;
    }
    for (const Inst* o : ops)
      if (!in_class(info.operands, o->type))
        return type_fail(inst, class_problem(inst.op, info.operands));
  }

  static std::string same_type_problem(const Inst& inst) {
    if (op_info(inst.op).arity == 2) return "binary operands differ in type";
    return std::string(op_name(inst.op)) + " types";
  }

  bool check_value_result(const Inst& inst) {
    const OpInfo& info = op_info(inst.op);
    Scalar operand = inst.operands[0]->type;
    bool unary = info.arity == 1;
    std::string name(info.name);
    switch (info.result) {
      case ResultType::SameAsOperand:
        if (inst.type == operand) return true;
        if (unary)
          type_fail(inst, "unary result type differs from operand");
        else if (info.arity == 2)
          type_fail(inst, "binary result type differs from operands");
        else
          type_fail(inst, name + " types");
        return false;
      case ResultType::Bool:
        if (inst.type == Scalar::Bool) return true;
        type_fail(inst, unary ? name + " needs bool" : "comparison must give bool");
        return false;
      case ResultType::Declared:
        if (is_value_type(inst.type)) return true;
        type_fail(inst, name + " to a non-value type");
        return false;
      case ResultType::SameWidth:
        if (bit_width(inst.type) == bit_width(operand)) return true;
        type_fail(inst, name + " between widths");
        return false;
      case ResultType::Void:
      case ResultType::I32:
      case ResultType::Pointee:
        internal_fail(inst, "ops.def gives a value op a memory or void result");
    }
    return false;
  }

  void check_constant(const Inst& inst) {
    if (inst.type == Scalar::Void) {
      fail(inst, "void constant");
    } else if (!const_is_normalized(inst)) {
      fail(inst, "constant bits not in normal form (0x" + hex(inst.bits) + " as " +
                     std::string(scalar_name(inst.type)) + ")");
    }
  }

  void check_argument(const Inst& inst) {
    int index = inst.param_index();
    if (index < 0 || static_cast<size_t>(index) >= kernel_.abi.params.size())
      fail(inst, "argument index out of range");
  }

  void check_loop_index(const Inst& inst) {
    const Inst* loop = inst.operands[0];
    if (loop->op != Op::RangeFor && loop->op != Op::StructFor && loop->op != Op::Offload)
      fail(inst, "loop_index of a non-loop");
    else if (!enclosing(loop, inst))
      fail(inst, "loop_index outside its loop");
  }

  // Whether `address` is what an op whose operands are of class `kind` takes as operand 0.
  static bool is_address_for(OperandTypes kind, const Inst* address) {
    bool variable = address->op == Op::Alloca;
    if (kind == OperandTypes::Variable) return variable;
    if (kind == OperandTypes::Pointer) return is_pointer(address);
    return kind == OperandTypes::AtomicTarget && (is_pointer(address) || variable);
  }

  // LocalLoad/LocalStore/GlobalLoad/GlobalStore/AtomicRMW: operand 0 is the right kind of
  // address, and the value loaded or stored has the pointee's type.
  void check_memory_access(const Inst& inst) {
    const OpInfo& info = op_info(inst.op);
    const Inst* address = inst.operands[0];
    if (!is_address_for(info.operands, address)) return (void)fail(inst, address_problem(inst.op));
    std::string problem =
        inst.op == Op::AtomicRMW ? "atomic types" : std::string(info.name) + " type";
    bool loads = info.result == ResultType::Pointee;
    bool stores = inst.operands.size() == 2;
    if (loads && inst.type != address->type) return type_fail(inst, problem);
    if (stores && inst.operands[1]->type != address->type) type_fail(inst, problem);
  }

  // "local_load of a non-alloca", "global_store to a non-pointer", "atomic on a non-pointer".
  static std::string address_problem(Op op) {
    const OpInfo& info = op_info(op);
    const char* preposition = info.result == ResultType::Void ? " to a "
                              : info.arity == 2               ? " on a "
                                                              : " of a ";
    const char* address = info.operands == OperandTypes::Variable ? "non-alloca" : "non-pointer";
    return std::string(info.name) + preposition + address;
  }

  void check_local_array(const Inst& inst) {
    if (inst.length() < 1 || inst.width() < 1) fail(inst, "local_array without elements");
  }

  // ArrayLoad/ArrayStore: operand 0 is a local array, the index an i32, the component inside
  // the element, and the value loaded or stored has the array's type.
  void check_array_access(const Inst& inst) {
    const Inst* array = inst.operands[0];
    std::string name(op_info(inst.op).name);
    if (array->op != Op::LocalArray) return (void)fail(inst, name + " of a non-array");
    if (inst.component() < 0 || inst.component() >= array->width())
      fail(inst, name + " component outside the element");
    if (inst.operands[1]->type != Scalar::I32) type_fail(inst, "array index is not i32");
    Scalar v = inst.op == Op::ArrayLoad ? inst.type : inst.operands[2]->type;
    if (v != array->type) type_fail(inst, name + " type");
  }

  void check_pointer(const Inst& inst) {
    if (inst.op == Op::GlobalPtr && options_.lowered)
      fail(inst, "global_ptr left after access lowering");
    check_resource_slot(inst);
    const char* problem =
        inst.op == Op::GlobalPtr ? "index is not an integer" : "element index is not an integer";
    for (const Inst* index : inst.operands)
      if (!is_int(index->type)) type_fail(inst, problem);
  }

  // If/Assert: their one operand is a condition.
  void check_condition(const Inst& inst, const char* problem) {
    if (inst.operands[0]->type != Scalar::Bool) type_fail(inst, problem);
  }

  void check_region_count(const Inst& inst, size_t count, const char* problem) {
    if (inst.regions.size() != count) fail(inst, problem);
  }

  void check_range_for(const Inst& inst) {
    check_region_count(inst, 1, "range_for needs one region");
    int dims = inst.dims();
    if (inst.operands.size() != static_cast<size_t>(dims) * 2 || dims < 1 || dims > kMaxDims)
      fail(inst, "range_for bounds do not match its dimensions");
  }

  void check_return(const Inst& inst) {
    if (inside_loop(inst)) fail(inst, "return inside a parallel or loop region");
    if (!inst.operands.empty() && kernel_.abi.returns.empty())
      fail(inst, "return of a value from a kernel without returns");
  }

  void check_reduce(const Inst& inst) {
    Op c = inst.combine_op();
    Scalar t = inst.operands[0]->type;
    bool bitwise = c == Op::BitAnd || c == Op::BitOr || c == Op::BitXor;
    if (!(c == Op::Add || c == Op::Mul || c == Op::Min || c == Op::Max || bitwise))
      fail(inst, "reduce combines with an operation that is no reduction");
    else if (!in_class(OperandTypes::Numeric, t) || (bitwise && !is_int(t)))
      type_fail(inst, "reduce of a value its operation does not take");
    const Inst* task = &inst;
    while (task->parent && task->parent->owner) task = task->parent->owner;
    if (task->op != Op::Offload || task->task_kind() == TaskKind::Serial)
      fail(inst, "reduce outside a parallel task");
  }

  void check_offload(const Inst& inst) {
    check_region_count(inst, 1, "offload needs one region");
    if (inst.parent != kernel_.body.get()) fail(inst, "offload task not at top level");
  }

  // Everything one instruction's ops.def row and its op's own rules require.
  void check_inst(const Inst& inst) {
    if (!check_operand_count(inst)) return;
    if (is_value_op(inst.op)) return check_value_op(inst);
    switch (inst.op) {
      case Op::Const: return check_constant(inst);
      case Op::ArgLoad: return check_argument(inst);
      case Op::LoopIndex: return check_loop_index(inst);
      case Op::ResourceShape:
      case Op::TexLoad:
      case Op::TexSample:
      case Op::TexStore: return check_resource_slot(inst);
      case Op::BoundsCheck:
        if (inst.resource_slot() == -1) return;  // a local array or vector index
        return check_resource_slot(inst);
      case Op::LocalArray: return check_local_array(inst);
      case Op::ArrayLoad:
      case Op::ArrayStore: return check_array_access(inst);
      case Op::LocalLoad:
      case Op::LocalStore:
      case Op::GlobalLoad:
      case Op::GlobalStore:
      case Op::AtomicRMW: return check_memory_access(inst);
      case Op::GlobalPtr:
      case Op::ElementPtr: return check_pointer(inst);
      case Op::If:
        check_region_count(inst, 2, "if needs then and else regions");
        return check_condition(inst, "if condition is not bool");
      case Op::Assert: return check_condition(inst, "assert of a non-bool");
      case Op::RangeFor: return check_range_for(inst);
      case Op::StructFor:
        check_region_count(inst, 1, "struct_for needs one region");
        return check_resource_slot(inst);
      case Op::While: return check_region_count(inst, 1, "while needs one region");
      case Op::Break: return check_break(inst);
      case Op::Continue:
        if (!inside_loop(inst)) fail(inst, "continue outside a loop");
        return;
      case Op::Return: return check_return(inst);
      case Op::Offload: return check_offload(inst);
      case Op::Reduce: return check_reduce(inst);
      case Op::Rand:
      case Op::Alloca:
      case Op::TmpLoad:
      case Op::TmpStore:
        return;  // their operand count is all there is to check
      // Value ops: check_value_op, above (one line per group of ops, not one per op).
      // clang-format off
      case Op::Neg: case Op::BitNot: case Op::LogicNot: case Op::Abs: case Op::Sign:
      case Op::Floor: case Op::Ceil: case Op::Round: case Op::Sqrt: case Op::Rsqrt: case Op::Sin:
      case Op::Cos: case Op::Tan: case Op::Asin: case Op::Acos: case Op::Atan: case Op::Exp:
      case Op::Log: case Op::Cast: case Op::Bitcast: case Op::Add: case Op::Sub: case Op::Mul:
      case Op::Div: case Op::Mod: case Op::Min: case Op::Max: case Op::Pow: case Op::Atan2:
      case Op::BitAnd: case Op::BitOr: case Op::BitXor: case Op::Shl: case Op::Shr: case Op::Eq:
      case Op::Ne: case Op::Lt: case Op::Le: case Op::Gt: case Op::Ge: case Op::LogicAnd:
      case Op::LogicOr: case Op::Select: case Op::Fma:
        internal_fail(inst, "value op not checked by check_value_op");
        // clang-format on
    }
  }

  // Operands exist, are alive, dominate their use and have values; false when the
  // instruction must not be looked at further.
  bool check_operands(const Inst& inst) {
    for (size_t i = 0; i < inst.operands.size(); ++i) {
      const Inst* op = inst.operands[i];
      if (!op) {
        fail(inst, "null operand");
        return false;
      }
      if (op->erased()) {
        fail(inst, "operand " + std::to_string(i) + " (" + std::string(op_name(op->op)) +
                       ") refers to an erased instruction");
        return false;
      }
      if (!is_defined(op))
        fail(inst, "operand %" + std::to_string(op->id) + " does not dominate its use");
      if (op->type == Scalar::Void && op->op != Op::RangeFor && op->op != Op::StructFor &&
          op->op != Op::Offload)
        fail(inst, "operand has no value");
    }
    return true;
  }

  void check_block(const Block& block) {
    for (const auto& up : block.insts) {
      const Inst& inst = *up;
      count_work();
      if (inst.parent != &block) fail(inst, "parent pointer is wrong");
      if (!check_operands(inst)) return;  // nothing below may look at its operands
      check_inst(inst);
      define(&inst);  // a loop is visible to the loop_index users inside it
      for (const auto& region : inst.regions) {
        if (region->owner != &inst) fail(inst, "region owner pointer is wrong");
        size_t mark = scope_.size();
        check_block(*region);
        while (scope_.size() > mark) {  // values of a region do not escape it
          defined_[scope_.back()->id] = false;
          scope_.pop_back();
        }
      }
      if (!error_.empty()) return;
    }
  }

  bool in_kernel(const Inst* inst) const {
    return inst->id < order_.size() && order_[inst->id] == inst;
  }

  bool is_defined(const Inst* inst) const { return in_kernel(inst) && defined_[inst->id]; }

  void define(const Inst* inst) {  // each instruction once: the walk meets it once
    defined_[inst->id] = true;
    scope_.push_back(inst);
  }

  const Kernel& kernel_;
  VerifyOptions options_;
  std::vector<const Inst*> order_;  // every instruction, by id
  std::vector<bool> defined_;       // by id: visible at the current point of the walk
  std::vector<const Inst*> scope_;
  std::string error_;
};

}  // namespace

std::string verify(const Kernel& kernel, VerifyOptions options) {
  return Verifier(kernel, options).run();
}

void verify_or_throw(const Kernel& kernel, const std::string& after_pass, VerifyOptions options) {
  std::string problem = verify(kernel, options);
  if (!problem.empty())
    throw InternalError(Place{"", kernel.abi.name},
                        "IR verification failed after " + after_pass + ": " + problem);
}

}  // namespace loom::ir
