// IR operation codes and what the compiler knows about each, generated from ops.def.
#pragma once

#include <cstdint>
#include <string_view>

namespace loom::ir {

enum class Op : uint8_t {
#define LOOM_OP(name, spelling, effects, arity, operands, result, folding, gradient, attr0, attr1) \
  name,
#include "compiler/ir/ops.def"
#undef LOOM_OP
};

constexpr int kOpCount = 0
#define LOOM_OP(name, spelling, effects, arity, operands, result, folding, gradient, attr0, attr1) \
  +1  // NOLINT(bugprone-macro-parentheses): one term of 0 +1 +1 ..., not an expression
#include "compiler/ir/ops.def"
#undef LOOM_OP
    ;

// The columns of ops.def; its header says what each value means.
enum class Effects : uint8_t { Pure, Effect, Region };
constexpr int8_t Variadic = -1;
enum class OperandTypes : uint8_t {
  Numeric,
  Float,
  Int,
  IntOrBool,
  Bool,
  Any,
  Shift,
  Condition,
  Variable,
  Pointer,
  AtomicTarget,
  Loop,
  Index,
  Special,
};
enum class ResultType : uint8_t { Void, SameAsOperand, Bool, Declared, I32, Pointee, SameWidth };
enum class Folding : uint8_t { NoFold, Fold, FoldCommutative };
enum class Differentiable : uint8_t { Yes, NonDiff, Memory, ControlFlow };
// Meaning of an instruction's integer attributes; Inst has one accessor per meaning.
enum class Attr : uint8_t {
  None,
  ParamIndex,
  ByteOffset,
  Dimension,
  ResourceSlot,
  Component,
  Channel,
  Dims,
  AtomicOp,
  TempOffset,
  AssertNode,
  TaskKind,
  TaskSpace,  // offload: Dims of a range task, ResourceSlot of a struct task
  Length,     // local_array: elements
  Width,      // local_array: scalars per element
  CombineOp,  // reduce: the binary Op that combines (Add, Mul, Min, Max, BitAnd, BitOr, BitXor)
  Message,    // not an integer: Assert's text (named here for diagnostics)
};
// "resource_slot", ...: the accessor's name, for diagnostics.
std::string_view attr_name(Attr meaning);

struct OpInfo {
  std::string_view name;  // the spelling in printed IR
  Effects effects;
  int8_t arity;  // or Variadic
  OperandTypes operands;
  ResultType result;
  Folding folding;
  Differentiable gradient;
  Attr attr0;
  Attr attr1;
};

const OpInfo& op_info(Op op);

enum OpFlags : uint8_t { kPure = 1, kEffect = 2, kRegion = 4 };

std::string_view op_name(Op op);
uint8_t op_flags(Op op);
bool parse_op(std::string_view name, Op* out);

inline bool is_pure(Op op) { return op_info(op).effects == Effects::Pure; }
inline bool has_regions(Op op) { return op_info(op).effects == Effects::Region; }
// A value op: a pure function of its operands alone, which constant folding evaluates.
inline bool is_value_op(Op op) { return op_info(op).folding != Folding::NoFold; }
inline bool is_unary(Op op) { return is_value_op(op) && op_info(op).arity == 1; }
inline bool is_binary(Op op) { return is_value_op(op) && op_info(op).arity == 2; }
// Binary value ops that compare values of any type (not the bool-only logic ops).
inline bool is_comparison(Op op) {
  return is_binary(op) && op_info(op).result == ResultType::Bool &&
         op_info(op).operands == OperandTypes::Any;
}
inline bool is_commutative(Op op) { return op_info(op).folding == Folding::FoldCommutative; }

enum class AtomicOp : uint8_t { Add, Sub, Min, Max, And, Or, Xor };
std::string_view atomic_op_name(AtomicOp op);
// The binary operation an atomic applies (Add -> Add, And -> BitAnd, ...).
Op atomic_binary_op(AtomicOp op);

// TexSample::bits
enum SamplerBits : uint64_t { kSampleLinear = 1, kSampleRepeat = 2 };

enum class TaskKind : uint8_t { Serial, RangeFor, StructFor };
std::string_view task_kind_name(TaskKind kind);

}  // namespace loom::ir
