// Type checking with Taichi's implicit conversions.
#pragma once

namespace loom::ir {
class Kernel;
}

namespace loom::passes {

// Checks operand types and inserts the implicit conversions Taichi performs: int -> float
// promotion, narrower -> wider integers (same width: unsigned wins), bool -> i32 where
// arithmetic needs a number, numbers -> bool (x != 0) where a condition needs one, and values
// converted to the destination type of stores, atomics and returns. Result types follow the
// promoted operands. Throws loom::Error naming the kernel and node on anything else invalid.
bool type_check(ir::Kernel& kernel);

}  // namespace loom::passes
