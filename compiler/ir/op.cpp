#include "compiler/ir/op.h"

#include <iterator>

namespace loom::ir {

namespace {
// clang-format off
// A derivative rule (ops.def's gradient column) makes its op of class Yes; derivative.cpp
// expands the rules themselves.
#define D1(...) Yes
#define D2(...) Yes
#define D3(...) Yes
constexpr OpInfo kOps[] = {
#define LOOM_OP(name, spelling, effects, arity, operands, result, folding, gradient, attr0, attr1) \
  {spelling, Effects::effects, arity, OperandTypes::operands, ResultType::result, \
   Folding::folding, Differentiable::gradient, Attr::attr0, Attr::attr1},
#include "compiler/ir/ops.def"
#undef LOOM_OP
};
#undef D1
#undef D2
#undef D3
// clang-format on
static_assert(std::size(kOps) == kOpCount);
}  // namespace

const OpInfo& op_info(Op op) { return kOps[static_cast<int>(op)]; }

std::string_view op_name(Op op) { return op_info(op).name; }

std::string_view attr_name(Attr meaning) {
  constexpr std::string_view names[] = {
      "none",       "param_index", "byte_offset", "dimension",   "resource_slot", "component",
      "channel",    "dims",        "atomic_op",   "temp_offset", "assert_node",   "task_kind",
      "task_space", "length",      "width",       "combine_op",  "message",
  };
  return names[static_cast<int>(meaning)];
}

uint8_t op_flags(Op op) {
  switch (op_info(op).effects) {
    case Effects::Pure: return kPure;
    case Effects::Effect: return kEffect;
    case Effects::Region: return kEffect | kRegion;
  }
  return kEffect;
}

bool parse_op(std::string_view name, Op* out) {
  for (size_t i = 0; i < std::size(kOps); ++i) {
    if (kOps[i].name == name) {
      *out = static_cast<Op>(i);
      return true;
    }
  }
  return false;
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
