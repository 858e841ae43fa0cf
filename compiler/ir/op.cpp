#include "compiler/ir/op.h"

namespace loom::ir {

namespace {
struct OpInfo {
  std::string_view name;
  uint8_t flags;
};
constexpr OpInfo kOps[] = {
#define LOOM_OP(name, spelling, flags) {spelling, static_cast<uint8_t>(flags)},
#include "compiler/ir/ops.def"
#undef LOOM_OP
};
}  // namespace

std::string_view op_name(Op op) { return kOps[static_cast<int>(op)].name; }
uint8_t op_flags(Op op) { return kOps[static_cast<int>(op)].flags; }

bool parse_op(std::string_view name, Op* out) {
  for (size_t i = 0; i < std::size(kOps); ++i) {
    if (kOps[i].name == name) {
      *out = static_cast<Op>(i);
      return true;
    }
  }
  return false;
}

bool is_unary(Op op) { return op >= Op::Neg && op <= Op::Bitcast; }
bool is_binary(Op op) { return op >= Op::Add && op <= Op::LogicOr; }
bool is_comparison(Op op) { return op >= Op::Eq && op <= Op::Ge; }
bool is_commutative(Op op) {
  switch (op) {
    case Op::Add: case Op::Mul: case Op::Min: case Op::Max: case Op::BitAnd: case Op::BitOr:
    case Op::BitXor: case Op::Eq: case Op::Ne: case Op::LogicAnd: case Op::LogicOr:
      return true;
    default:
      return false;
  }
}

std::string_view atomic_op_name(AtomicOp op) {
  constexpr std::string_view names[] = {"add", "sub", "min", "max", "and", "or", "xor"};
  return names[static_cast<int>(op)];
}

Op atomic_binary_op(AtomicOp op) {
  switch (op) {
    case AtomicOp::Add: return Op::Add;
    case AtomicOp::Sub: return Op::Sub;
    case AtomicOp::Min: return Op::Min;
    case AtomicOp::Max: return Op::Max;
    case AtomicOp::And: return Op::BitAnd;
    case AtomicOp::Or: return Op::BitOr;
    case AtomicOp::Xor: return Op::BitXor;
  }
  return Op::Add;
}

std::string_view task_kind_name(TaskKind kind) {
  constexpr std::string_view names[] = {"serial", "range_for", "struct_for"};
  return names[static_cast<int>(kind)];
}

}  // namespace loom::ir
