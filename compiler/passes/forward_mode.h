// Forward-mode automatic differentiation: the tangent kernel of a kernel, a Jacobian-vector
// product (Taichi's ti.ad.FwdMode), from the same derivative rules as reverse mode
// (ir/derivative.h: each rule is linear in its adjoint, so called with an operand's tangent it
// gives that operand's share of the result's tangent).
//
// The tangent kernel does what the kernel does and, beside every float value, computes its
// tangent: a load of a slot with a tangent (`NAME.dual`: an ndarray parameter gets a twin
// parameter `NAME.dual`, a field the program's field `NAME.dual`) reads the tangent of the
// element, a store writes it, an atomic add adds it; a float value parameter's tangent is the
// parameter `NAME.dual` (the direction of the product), and an argpack parameter asked for
// one gets an argpack parameter `NAME.dual` of its type, whose float members are the tangents
// of its members. Local variables and local arrays carry
// tangents of their own, so loops of every kind and branches need nothing special. Refused by
// kernel and node: atomic min/max of memory with a tangent.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "compiler/ir/inst.h"
#include "runtime/common/argpack_layout.h"

namespace loom::passes {

struct TangentOptions {
  // By primal slot: whether the slot has a tangent. Empty: every float field and ndarray
  // parameter slot (never argpack members or textures); a float ndarray inside an argpack has
  // one only when selected here (its tangent is a parameter PARAM.PATH.dual, twin_slots.h).
  std::vector<bool> slot_has_tangent;
  // By parameter: whether an argpack parameter gets a tangent argpack. Empty: none does.
  std::vector<bool> argpack_has_tangent;
  // The program's argpack types, laid out: where the ndarray members selected above are.
  std::vector<ArgpackType> argpack_types;
};

// NAME + ".dual": the tangent kernel's name, a slot's tangent parameter or field, a value
// parameter's tangent.
std::string tangent_name(const std::string& name);

// The tangent kernel of `primal` (typed, not offloaded; unchanged). Its ABI: the primal's
// parameters, then one value parameter per float value parameter and one argpack parameter per
// argpack asked for (in parameter order), and one ndarray parameter per ndarray slot with a
// tangent; the primal's resource slots, then one slot per tangent; the
// primal's return values.
std::unique_ptr<ir::Kernel> make_tangent(const ir::Kernel& primal,
                                         const TangentOptions& options = {});

}  // namespace loom::passes
