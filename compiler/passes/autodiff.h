// Reverse-mode automatic differentiation: the adjoint kernel of a kernel (Taichi's
// kernel.grad()). Runs on typed, simplified IR before offload (pipeline.h: after the first
// full_simplify); the adjoint kernel then goes through the rest of the pipeline like any other.
//
// For every resource slot with an adjoint (`NAME.grad`: an ndarray parameter gets a twin
// parameter `NAME.grad` of the same type, a field the program's field `NAME.grad`), the adjoint
// kernel reads the adjoints of what the kernel wrote and accumulates into the adjoints of what
// it read: a load's adjoint is an atomic add into the adjoint of the element (a gather becomes
// a scatter), a store's and an atomic add's is a load of the adjoint of the element (a scatter
// becomes a gather); a store then zeroes the element's adjoint, since the value it overwrote
// has no further effect (so a kernel that updates state in place, x = f(x), reverses right). Values
// are recomputed, not stored: each reversed block first recomputes its values (everything but the
// kernel's stores and atomics), then walks its instructions backwards through the derivative rules
// of ops.def (ir/derivative.h). Parallel loops stay parallel, in reverse order; branches are
// reversed under the same condition. The gradients of float value parameters are reduced over every
// thread and returned, one return value per parameter, in parameter order; so are those of the
// float value members of argpack parameters (runtime/common/gradient_values.h).
//
// Serial loops (every `while`, every loop inside another loop, a top-level loop whose
// iterations hand a variable on, and any loop that breaks; ad_loops.h puts them in one form)
// need the values each iteration overwrote: the autodiff stack, as Taichi's AdStack. Where
// the reverse sweep reaches such a loop it restores the outer variables the loop reads (saved
// when the block was recomputed), runs the loop forward again pushing, at the start of each
// iteration, every variable and local array the loop both reads and overwrites, then runs the
// iterations backwards: pop, recompute the iteration, walk it backwards. The adjoints of those
// variables live outside the loop and carry from one reversed iteration to the one before.
// Branches save and restore the outer variables they read the same way, so a branch may read
// any variable. Cost: a stack is a local array of `stack_size` + 1 entries (the test that
// ends a loop takes one) per variable the loop carries, per thread (256 f32: 1 KiB; a carried
// local array: its size times that), zeroed where the loop is reversed; a serial loop runs
// three times in the adjoint (recomputation, forward with pushes, reverse), and a loop nested
// d deep 2d + 1 times. A thread's stacks may take 1 MiB in all. A loop that runs more
// iterations than its stack holds fails the launch (an assertion that stays in release
// builds) naming the kernel and the loop's node, on every backend.
//
// Like Taichi's, the result is right when the kernel obeys the global data access rule: it
// never reads a global element after overwriting it (the recomputation reads memory as the
// kernel left it). What this pass cannot differentiate yet it refuses with an error naming the
// kernel and node: a `return` that skips code, a struct_for inside another loop or carrying a
// variable, random numbers, atomic min/max on differentiated memory, and the value an atomic
// on memory returns.
#pragma once

#include <memory>
#include <vector>

#include "compiler/ir/inst.h"
#include "runtime/common/argpack_layout.h"

namespace loom::passes {

struct AdjointOptions {
  // By primal slot: whether the slot has an adjoint. Empty: every float field and ndarray
  // parameter slot (never argpack members or textures); a float ndarray inside an argpack has
  // one only when selected here (its adjoint is a parameter PARAM.PATH.grad, twin_slots.h).
  std::vector<bool> slot_has_adjoint;
  // The program's argpack types, laid out: the float value members of argpack parameters
  // get gradients too (runtime/common/gradient_values.h), and the ndarray members selected
  // above are found there. Empty: only value parameters do.
  std::vector<ArgpackType> argpack_types;
  // Entries of each autodiff stack: the iterations a serial loop may run per thread (and per
  // run of the loops around it) before the launch fails naming the loop.
  int stack_size = 256;
};

// The name of the adjoint kernel, of a slot's adjoint parameter or field: NAME + ".grad".
std::string adjoint_name(const std::string& name);

// The adjoint kernel of `primal` (typed, not offloaded; unchanged). Its ABI: the primal's
// parameters, then one ndarray parameter per ndarray slot with an adjoint; the primal's
// resource slots, then one slot per adjoint; one return value per float value parameter and
// argpack member, as gradient_values() lists them (its gradient); the primal's return values are
// not differentiated.
std::unique_ptr<ir::Kernel> make_adjoint(const ir::Kernel& primal,
                                         const AdjointOptions& options = {});

}  // namespace loom::passes
