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
bool store_forward(ir::Kernel& kernel);

}  // namespace loom::passes
