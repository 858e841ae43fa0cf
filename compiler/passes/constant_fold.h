// Constant folding with the exact semantics of the code generators.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "compiler/ir/op.h"
#include "runtime/common/scalar.h"

namespace loom::ir {
class Kernel;
}

namespace loom::passes {

// Folds unary, binary, select, fma, cast and bitcast instructions whose operands are constants:
// integers wrap at their width, int division truncates and int mod is floored (Python %),
// division or mod by zero and other undefined cases (INT_MIN / -1, out-of-range float -> int,
// integer powers with a negative exponent) are left for run time, f32 results are rounded to float,
// shift amounts are masked to the width, comparisons give bool.
bool constant_fold(ir::Kernel& kernel);

// A constant operand: its type and its bits in the Const representation (see inst.h).
struct ConstValue {
  Scalar type;
  uint64_t bits;
};

// What a unary, binary, select or fma instruction of result type `type` gives for constant
// operands, by the rules above (also usable by interpreters and tests); nullopt where the
// result is left for run time.
std::optional<uint64_t> evaluate_constant(ir::Op op, Scalar type,
                                          const std::vector<ConstValue>& operands);

}  // namespace loom::passes
