// The simplification fixed point.
#pragma once

namespace loom::ir {
class Kernel;
}

namespace loom::passes {

// Runs constant_fold, algebraic_simplify, cse, die and store_forward until none makes
// progress (at most `max_rounds` rounds).
bool full_simplify(ir::Kernel& kernel, int max_rounds = 16);

}  // namespace loom::passes
