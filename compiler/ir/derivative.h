// The derivative rules of the IR's value ops (ops.def's gradient column), built as IR: what
// reverse mode adds to an operand's adjoint and forward mode to the result's tangent.
#pragma once

#include "compiler/ir/builder.h"
#include "compiler/ir/inst.h"

namespace loom::ir {

// g * d(in)/d(operand `i`), built at `b`'s insertion point, for an instruction `in` whose op
// has a derivative rule (op_info(op).gradient == Differentiable::Yes). In reverse mode `g` is
// the adjoint of `in` (its type) and the result has operand `i`'s type; in forward mode `g` is
// operand i's tangent and the result, its share of in's tangent, has `in`'s type (they differ
// only for casts). `in` and its operands must be available there (autodiff
// passes a recomputed copy). nullptr when the operand receives nothing: it is not a float
// (integers and bools are constant for gradients), or the rule says `none` (a select's
// condition). Every rule is linear in `g`, so forward mode calls it with operand i's tangent
// and sums over the operands.
Inst* operand_adjoint(Builder& b, const Inst& in, int i, Inst* g);

}  // namespace loom::ir
