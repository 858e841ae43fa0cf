// IR operation codes, generated from ops.def.
#pragma once

#include <cstdint>
#include <string_view>

namespace loom::ir {

enum class Op : uint8_t {
#define LOOM_OP(name, spelling, flags) name,
#include "compiler/ir/ops.def"
#undef LOOM_OP
};

enum OpFlags : uint8_t { kPure = 1, kEffect = 2, kRegion = 4 };

std::string_view op_name(Op op);
uint8_t op_flags(Op op);
bool parse_op(std::string_view name, Op* out);

inline bool is_pure(Op op) { return op_flags(op) & kPure; }
inline bool has_regions(Op op) { return op_flags(op) & kRegion; }
bool is_unary(Op op);
bool is_binary(Op op);
bool is_comparison(Op op);
bool is_commutative(Op op);

enum class AtomicOp : uint8_t { Add, Sub, Min, Max, And, Or, Xor };
std::string_view atomic_op_name(AtomicOp op);
// The binary operation an atomic applies (Add -> Add, And -> BitAnd, ...).
Op atomic_binary_op(AtomicOp op);

// TexSample::bits
enum SamplerBits : uint64_t { kSampleLinear = 1, kSampleRepeat = 2 };

enum class TaskKind : uint8_t { Serial, RangeFor, StructFor };
std::string_view task_kind_name(TaskKind kind);

}  // namespace loom::ir
