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
// the K.grad launch naming the read's node.
//
// Pairs across tasks it cannot decide (a field or ndarray parameter written in one top-level
// loop, read in a later one, at indices neither provably equal nor different) are checked
// at run time too when the caller provides shadows (`shadows`: the JIT program and AOT modules
// do in debug builds): each field such a read reads gets a shadow slot, the program's field
// NAME.written of the field's type and shape, each ndarray parameter a parameter NAME.written,
// which the program binds to a shadow ndarray of the one it binds to NAME, and each ndarray inside
// an argpack parameter a parameter PARAM.PATH.written, bound to the shadow of the ndarray the pack
// holds there (pipeline.cpp moves these parameters after the adjoint's twins: a launcher gives
// K's arguments and the twins, the runtime the shadows). The adjoint then starts by
// zeroing the shadows and running the primal again without its effects (add_access_rule_shadows),
// except that a write of a shadowed field in a top-level loop marks its element in the shadow with
// the loop's ordinal (1, 2, ... in program order) if no earlier loop marked it; the read's
// condition (recomputed in its reversed loop) is that its element is unmarked or marked by its own
// loop or a later one. Textures are not looked at.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace loom::ir {
class Kernel;
}

namespace loom::passes {

// "x.written": the shadow field of field `field`.
std::string access_shadow_name(const std::string& field);

struct AccessRuleChecks {
  int conditions = 0;                        // run-time conditions added
  std::vector<std::pair<int, int>> shadows;  // (slot, its shadow slot) added to the ABI
};

// On the primal (typed, simplified, not offloaded) before make_adjoint: throws loom::Error
// for a proven violation; in a debug kernel, adds the marked run-time conditions (and, with
// `shadows`, the shadow slots and conditions of pairs across loops).
AccessRuleChecks check_access_rule(ir::Kernel& primal, bool shadows = false);

// On make_adjoint's result: an assert after each marked condition (the mark is cleared).
void add_access_rule_asserts(ir::Kernel& adjoint);

// On make_adjoint's result, when check_access_rule added shadows: the prologue that zeroes
// them and marks the elements the primal's loops write (`primal`: as check_access_rule left
// it).
void add_access_rule_shadows(ir::Kernel& adjoint, const ir::Kernel& primal,
                             const AccessRuleChecks& checks);

}  // namespace loom::passes
