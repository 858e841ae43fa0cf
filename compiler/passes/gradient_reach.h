// Gradients that pass only through ops that are constant for gradients (docs/autodiff.md): an
// activity analysis of a kernel about to be differentiated. A value depends on a differentiated
// input (a load of a slot with an adjoint, a float value parameter or argpack member) through the
// value operands of the ops between them, and through local variables and arrays; it is active for
// that input when every op on some such path has a derivative rule (ops.def). A differentiated
// output (a store or atomic into a slot with an adjoint) that depends on an input without being
// active for it gets no gradient from it, silently; this reports it at the ops where the gradient
// stops (integer math, comparisons, rounding, bit ops, casts to integers, rand). Addresses (indices
// of loads, stores and local arrays) and conditions (of an `if`, of a select) are not value
// dependencies: an index computed from a position, as an MPM particle-to-grid transfer does, is not
// reported.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace loom::ir {
class Kernel;
}

namespace loom::passes {

struct GradientWarning {
  int32_t node = -1;  // the graph node of the op where the gradient stops
  std::string message;
};

// It also reports the float ndarrays a kernel reaches through argpack members that have no
// adjoint (the ndarray the pack holds there has no NAME.grad), where that loses a gradient: a
// differentiated output that depends on what the kernel reads from one (at its first read), a store
// into one of a value that depends on a differentiated input (at the store). A lookup table nothing
// differentiated depends on is not reported.
//
// One warning per node where a gradient stops and one per such ndarray, in node order.
// `slot_has_adjoint` as AdjointOptions::slot_has_adjoint (empty: every float field and ndarray
// parameter slot). `kernel`: typed IR, as make_adjoint receives it.
std::vector<GradientWarning> gradient_reach(const ir::Kernel& kernel,
                                            const std::vector<bool>& slot_has_adjoint);

}  // namespace loom::passes
