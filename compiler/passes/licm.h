// Loop-invariant code motion.
#pragma once

namespace loom::ir {
class Kernel;
}

namespace loom::passes {

// Hoists pure instructions whose operands are all defined outside a RangeFor, StructFor or
// While body (including ones inside If regions of the body) to just before the loop, inner
// loops first. Integer division and mod are hoisted only by a constant divisor that cannot
// trap. Parallel Offload bodies give up only values the kernel top level may hold (uniform
// math). GlobalLoads of an invariant pointer are hoisted from the part of a body that always
// runs when the loop is known to run at least once and nothing in it writes that slot.
bool licm(ir::Kernel& kernel);

}  // namespace loom::passes
