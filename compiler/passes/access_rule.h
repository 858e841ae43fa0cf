// The global data access rule of reverse mode (docs/autodiff.md): a differentiated kernel
// must not read a global element after writing it in the same launch, because its adjoint
// recomputes every read from memory, which the write changed.
//
// check_access_rule looks at every read (global_load) of a field or ndarray slot and every
// earlier write (global_store, atomic) of the same slot, on a path that can run both (not the
// two arms of one `if`), in one thread (the same top-level loop, or serial code before it) or
// in the kernel's order of tasks (a top-level loop after another). Equal indices after
// simplification (the same values; across two loops with the same bounds, the same loop
// variables) are a violation it proves: a loom::Error naming the kernel and both nodes.
// Different indices (another component, other constants, the same value plus other
// constants) are fine. The pairs in between, in one thread, are checked at run time in debug
// kernels (Kernel::debug): the primal gets, before the read, a bool that is false when the
// write ran at the same index, marked for add_access_rule_asserts; make_adjoint recomputes it
// like any value, and add_access_rule_asserts puts an assert after that copy, which fails
// the K.grad launch naming the read's node. Pairs across tasks it cannot decide are not
// checked. Textures are not looked at.
#pragma once

namespace loom::ir {
class Kernel;
}

namespace loom::passes {

// On the primal (typed, simplified, not offloaded) before make_adjoint: throws loom::Error
// for a proven violation; in a debug kernel, adds the marked run-time conditions. Returns
// how many it added.
int check_access_rule(ir::Kernel& primal);

// On make_adjoint's result: an assert after each marked condition (the mark is cleared).
void add_access_rule_asserts(ir::Kernel& adjoint);

}  // namespace loom::passes
