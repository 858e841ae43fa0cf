// Constant folding with the exact semantics of the code generators.
#pragma once

namespace loom::ir {
class Kernel;
}

namespace loom::passes {

// Folds unary, binary, select, fma, cast and bitcast instructions whose operands are constants:
// integers wrap at their width, int division truncates and int mod is floored (Python %),
// division or mod by zero and other undefined cases (INT_MIN / -1, out-of-range float -> int,
// negative integer powers) are left for run time, f32 results are rounded to float, shift
// amounts are masked to the width, comparisons give bool.
bool constant_fold(ir::Kernel& kernel);

}  // namespace loom::passes
