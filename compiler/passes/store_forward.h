// Store-to-load forwarding for local variables and global memory.
#pragma once

namespace loom::ir {
class Kernel;
}

namespace loom::passes {

// Local variables (Alloca): forwards the last known value (stored or loaded) to later loads
// when no store in between, in the same block or an enclosing one, can change it (a region
// that does not store the variable keeps it known; loops forget what their bodies store);
// removes stores overwritten in the same block before any read; promotes variables stored
// once at their defining level before every load (or never stored: zero) to that value.
// Global memory: forwards GlobalStore/GlobalLoad values to later GlobalLoads of the same
// pointer instruction in one block while nothing in between may write memory.
// Conditional forwarding: pure values whose operands forwarding makes constant are
// evaluated (passes::evaluate_constant), and an If whose condition becomes known is replaced
// by its taken branch, which forwarding then continues through, so chains of such ifs
// resolve in one sweep. Code after a jump in the same block is ignored (it never runs).
bool store_forward(ir::Kernel& kernel);

}  // namespace loom::passes
