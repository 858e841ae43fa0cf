// The loops of a kernel in the form reverse-mode autodiff reverses (autodiff.h), and what a
// region reads and writes of the variables declared outside it.
//
// A loop whose iterations hand values to each other through a variable or a local array
// declared outside it (`v = v * a + x`), every `while` loop and every loop inside another loop
// is reversed serially, with a per-thread stack of what each iteration overwrote; the other
// top-level loops stay parallel. normalize_adjoint_loops rewrites a kernel (a copy of the
// primal) so that the adjoint meets only two loop forms:
//  - serial: a `while` whose body ends with its only break, `if (done) break` (a range loop
//    becomes a `while` over one linear counter, its indices computed from it);
//  - parallel: a top-level `range_for` or `struct_for` with no break.
// Breaks and continues of a loop become flags: `done` (leave) and `skip` (end the
// iteration), with the rest of the body after anything that may set them under `if (!skip)`.
// Loops that reading or writing outer variables makes serial are what offload also runs in
// order, except updates `v += e` / `v -= e` (no other read of v), which stay parallel.
#pragma once

#include <unordered_set>
#include <vector>

#include "compiler/ir/inst.h"

namespace loom::passes {

// Rewrites `kernel`'s loops into the two forms above; returns the `if (done) break` that ends
// each serial loop's body. Throws loom::Error naming kernel and node for a struct_for that
// must run serially (inside another loop, or carrying a variable).
std::unordered_set<const ir::Inst*> normalize_adjoint_loops(ir::Kernel& kernel);

// The variables (allocas) and local arrays declared outside `region` (an If or a loop) that
// its blocks read or write, each once, in program order.
struct OuterAccess {
  std::vector<const ir::Inst*> read;
  std::vector<const ir::Inst*> written;
};
OuterAccess outer_access(const ir::Inst& region);

}  // namespace loom::passes
