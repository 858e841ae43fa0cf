#include "compiler/ir/verifier.h"

#include <cstdio>
#include <stdexcept>
#include <unordered_set>
#include <vector>

#include "compiler/ir/inst.h"
#include "compiler/ir/printer.h"

namespace loom::ir {

namespace {

std::string hex(uint64_t bits) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%llx", static_cast<unsigned long long>(bits));
  return buf;
}

class Verifier {
 public:
  Verifier(Kernel& k, VerifyOptions o) : kernel_(k), options_(o) {}

  std::string run() {
    kernel_.renumber();
    if (options_.offloaded) {
      // Top level: tasks, plus uniform values (constants, arguments, shapes and pure math
      // on them) that codegen re-materialises inside each task and each extent function.
      for (auto& inst : kernel_.body->insts) {
        if (inst->op == Op::Offload) continue;
        bool uniform = inst->op == Op::Const || inst->op == Op::ArgLoad ||
                       inst->op == Op::ResourceShape ||
                       ((is_unary(inst->op) || is_binary(inst->op) || inst->op == Op::Select ||
                         inst->op == Op::Fma) && is_pure(inst->op));
        if (!uniform) return fail(*inst, "top level of an offloaded kernel holds a non-uniform instruction");
      }
    }
    check_block(*kernel_.body);
    return error_;
  }

 private:
  std::string fail(const Inst& inst, const std::string& why) {
    if (error_.empty()) error_ = why + ": " + print_inst_head(inst);
    return error_;
  }

  static std::string print_inst_head(const Inst& inst) {
    std::string s = print_inst(inst);
    auto nl = s.find('\n');
    return nl == std::string::npos ? s : s.substr(0, nl);
  }

  bool enclosing(const Inst* region_inst, const Inst& user) const {
    for (const Block* b = user.parent; b; b = b->owner ? b->owner->parent : nullptr)
      if (b->owner == region_inst) return true;
    return false;
  }

  bool inside_op(const Inst& inst, Op op) const {
    for (const Block* b = inst.parent; b && b->owner; b = b->owner->parent)
      if (b->owner->op == op) return true;
    return false;
  }

  bool inside_loop(const Inst& inst) const {
    for (const Block* b = inst.parent; b && b->owner; b = b->owner->parent) {
      Op op = b->owner->op;
      if (op == Op::While || op == Op::RangeFor || op == Op::StructFor) return true;
      if (op == Op::Offload) return b->owner->attr0 != static_cast<int>(TaskKind::Serial);
    }
    return false;
  }

  // A type problem; not checked before type_check (VerifyOptions::types).
  void type_fail(const Inst& inst, const std::string& why) {
    if (options_.types) fail(inst, why);
  }

  size_t expect_operands(const Inst& inst, size_t n) {
    if (inst.operands.size() != n)
      fail(inst, "expects " + std::to_string(n) + " operands, has " + std::to_string(inst.operands.size()));
    return n;
  }

  void check_types(const Inst& inst) {
    const auto& ops = inst.operands;
    auto slot_ok = [&](int slot) {
      if (slot < 0 || static_cast<size_t>(slot) >= kernel_.abi.resources.size())
        fail(inst, "resource slot out of range");
    };
    if (is_unary(inst.op)) {
      expect_operands(inst, 1);
      if (ops.size() != 1) return;
      if (inst.op == Op::LogicNot) {
        if (ops[0]->type != Scalar::Bool || inst.type != Scalar::Bool) type_fail(inst, "not needs bool");
      } else if (inst.op == Op::Cast) {
        if (!is_numeric(inst.type) && inst.type != Scalar::Bool) type_fail(inst, "cast to a non-value type");
      } else if (inst.op == Op::Bitcast) {
        if (bit_width(inst.type) != bit_width(ops[0]->type)) type_fail(inst, "bitcast between widths");
      } else if (inst.type != ops[0]->type) {
        type_fail(inst, "unary result type differs from operand");
      } else if (inst.op == Op::BitNot && !is_int(inst.type)) {
        type_fail(inst, "bit_not needs an integer");
      } else if (inst.op >= Op::Floor && inst.op <= Op::Log && !is_float(inst.type)) {
        type_fail(inst, "math function needs a float");
      }
      return;
    }
    if (is_binary(inst.op)) {
      expect_operands(inst, 2);
      if (ops.size() != 2) return;
      bool shift = inst.op == Op::Shl || inst.op == Op::Shr;
      if (!shift && ops[0]->type != ops[1]->type) type_fail(inst, "binary operands differ in type");
      bool logic = inst.op == Op::LogicAnd || inst.op == Op::LogicOr;
      if (is_comparison(inst.op) || logic) {
        if (inst.type != Scalar::Bool) type_fail(inst, "comparison must give bool");
        if (logic && ops[0]->type != Scalar::Bool) type_fail(inst, "logic op needs bool");
      } else if (inst.type != ops[0]->type) {
        type_fail(inst, "binary result type differs from operands");
      }
      if ((inst.op == Op::BitAnd || inst.op == Op::BitOr || inst.op == Op::BitXor || shift) &&
          !(is_int(inst.type) || inst.type == Scalar::Bool))
        type_fail(inst, "bit operation needs integers");
      if (inst.op == Op::Atan2 && !is_float(inst.type)) type_fail(inst, "atan2 needs floats");
      return;
    }
    switch (inst.op) {
      case Op::Const:
        expect_operands(inst, 0);
        if (inst.type == Scalar::Void) fail(inst, "void constant");
        else if (!const_is_normalized(inst))
          fail(inst, "constant bits not in normal form (0x" + hex(inst.bits) + " as " +
                         std::string(scalar_name(inst.type)) + ")");
        break;
      case Op::ArgLoad:
        if (inst.attr0 < 0 || static_cast<size_t>(inst.attr0) >= kernel_.abi.params.size())
          fail(inst, "argument index out of range");
        break;
      case Op::LoopIndex: {
        expect_operands(inst, 1);
        if (inst.operands.empty()) break;
        const Inst* loop = ops[0];
        if (loop->op != Op::RangeFor && loop->op != Op::StructFor && loop->op != Op::Offload)
          fail(inst, "loop_index of a non-loop");
        else if (!enclosing(loop, inst))
          fail(inst, "loop_index outside its loop");
        break;
      }
      case Op::ResourceShape: slot_ok(inst.attr0); break;
      case Op::Select:
        expect_operands(inst, 3);
        if (ops.size() == 3 && (ops[0]->type != Scalar::Bool || ops[1]->type != inst.type ||
                                ops[2]->type != inst.type))
          type_fail(inst, "select types");
        break;
      case Op::Fma:
        expect_operands(inst, 3);
        if (ops.size() == 3 && (ops[0]->type != inst.type || ops[1]->type != inst.type ||
                                ops[2]->type != inst.type))
          type_fail(inst, "fma types");
        break;
      case Op::Alloca: expect_operands(inst, 0); break;
      case Op::LocalLoad:
        expect_operands(inst, 1);
        if (ops.size() == 1 && ops[0]->op != Op::Alloca) fail(inst, "local_load of a non-alloca");
        else if (ops.size() == 1 && ops[0]->type != inst.type) type_fail(inst, "local_load type");
        break;
      case Op::LocalStore:
        expect_operands(inst, 2);
        if (ops.size() == 2 && ops[0]->op != Op::Alloca) fail(inst, "local_store to a non-alloca");
        else if (ops.size() == 2 && ops[0]->type != ops[1]->type) type_fail(inst, "local_store type");
        break;
      case Op::GlobalPtr:
        if (options_.lowered) fail(inst, "global_ptr left after access lowering");
        slot_ok(inst.attr0);
        for (Inst* i : ops)
          if (!is_int(i->type)) type_fail(inst, "index is not an integer");
        break;
      case Op::ElementPtr:
        slot_ok(inst.attr0);
        expect_operands(inst, 1);
        if (ops.size() == 1 && !is_int(ops[0]->type)) type_fail(inst, "element index is not an integer");
        break;
      case Op::GlobalLoad:
        expect_operands(inst, 1);
        if (ops.size() == 1 && ops[0]->op != Op::GlobalPtr && ops[0]->op != Op::ElementPtr)
          fail(inst, "global_load of a non-pointer");
        else if (ops.size() == 1 && ops[0]->type != inst.type) type_fail(inst, "global_load type");
        break;
      case Op::GlobalStore:
        expect_operands(inst, 2);
        if (ops.size() == 2 && ops[0]->op != Op::GlobalPtr && ops[0]->op != Op::ElementPtr)
          fail(inst, "global_store to a non-pointer");
        else if (ops.size() == 2 && ops[0]->type != ops[1]->type) type_fail(inst, "global_store type");
        break;
      case Op::AtomicRMW:
        expect_operands(inst, 2);
        if (ops.size() == 2 && ops[0]->op != Op::GlobalPtr && ops[0]->op != Op::ElementPtr &&
            ops[0]->op != Op::Alloca)
          fail(inst, "atomic on a non-pointer");
        else if (ops.size() == 2 && (ops[0]->type != ops[1]->type || inst.type != ops[1]->type))
          type_fail(inst, "atomic types");
        break;
      case Op::TexLoad: case Op::TexSample: case Op::TexStore: slot_ok(inst.attr0); break;
      case Op::BoundsCheck:
        slot_ok(inst.attr0);
        expect_operands(inst, 2);
        break;
      case Op::TmpStore: expect_operands(inst, 1); break;
      case Op::TmpLoad: expect_operands(inst, 0); break;
      case Op::If:
        expect_operands(inst, 1);
        if (inst.regions.size() != 2) fail(inst, "if needs then and else regions");
        if (ops.size() == 1 && ops[0]->type != Scalar::Bool) type_fail(inst, "if condition is not bool");
        break;
      case Op::RangeFor:
        if (inst.regions.size() != 1) fail(inst, "range_for needs one region");
        if (ops.size() != static_cast<size_t>(inst.attr0) * 2 || inst.attr0 < 1 || inst.attr0 > kMaxDims)
          fail(inst, "range_for bounds do not match its dimensions");
        break;
      case Op::StructFor:
        if (inst.regions.size() != 1) fail(inst, "struct_for needs one region");
        slot_ok(inst.attr0);
        break;
      case Op::While:
        if (inst.regions.size() != 1) fail(inst, "while needs one region");
        break;
      case Op::Break:
        if (!inside_op(inst, Op::While)) fail(inst, "break outside a while loop");
        break;
      case Op::Continue:
        if (!inside_loop(inst)) fail(inst, "continue outside a loop");
        break;
      case Op::Return:
        if (inside_loop(inst)) fail(inst, "return inside a parallel or loop region");
        if (ops.size() > 0 && kernel_.abi.returns.empty()) fail(inst, "return of a value from a kernel without returns");
        break;
      case Op::Assert:
        expect_operands(inst, 1);
        if (ops.size() == 1 && ops[0]->type != Scalar::Bool) type_fail(inst, "assert of a non-bool");
        break;
      case Op::Offload:
        if (inst.regions.size() != 1) fail(inst, "offload needs one region");
        if (inst.parent != kernel_.body.get()) fail(inst, "offload task not at top level");
        break;
      default: break;
    }
  }

  void check_block(Block& block) {
    for (auto& up : block.insts) {
      Inst& inst = *up;
      if (inst.parent != &block) fail(inst, "parent pointer is wrong");
      bool null_operand = false;
      for (Inst* op : inst.operands) {
        if (!op) {
          fail(inst, "null operand");
          null_operand = true;
          continue;
        }
        if (!defined_.count(op)) fail(inst, "operand %" + std::to_string(op->id) + " does not dominate its use");
        if (op->type == Scalar::Void && op->op != Op::RangeFor && op->op != Op::StructFor &&
            op->op != Op::Offload)
          fail(inst, "operand has no value");
      }
      if (null_operand) return;  // nothing below may look at its operands
      check_types(inst);
      define(&inst);  // a loop is visible to the loop_index users inside it
      for (auto& region : inst.regions) {
        if (region->owner != &inst) fail(inst, "region owner pointer is wrong");
        size_t mark = scope_.size();
        check_block(*region);
        while (scope_.size() > mark) {  // values of a region do not escape it
          defined_.erase(scope_.back());
          scope_.pop_back();
        }
      }
      if (!error_.empty()) return;
    }
  }

  Kernel& kernel_;
  VerifyOptions options_;
  void define(const Inst* inst) {
    if (defined_.insert(inst).second) scope_.push_back(inst);
  }

  std::unordered_set<const Inst*> defined_;
  std::vector<const Inst*> scope_;
  std::string error_;
};

}  // namespace

std::string verify(Kernel& kernel, VerifyOptions options) { return Verifier(kernel, options).run(); }

void verify_or_throw(Kernel& kernel, const std::string& after_pass, VerifyOptions options) {
  std::string problem = verify(kernel, options);
  if (!problem.empty())
    throw std::logic_error("IR verification failed after " + after_pass + ": " + problem);
}

}  // namespace loom::ir
