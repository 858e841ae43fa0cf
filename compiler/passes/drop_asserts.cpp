#include "compiler/passes/drop_asserts.h"

#include <unordered_set>

#include "compiler/ir/inst.h"
#include "compiler/passes/rewrite.h"

namespace loom::passes {

bool drop_asserts(ir::Kernel& kernel) {
  if (kernel.debug) return false;
  std::unordered_set<ir::Inst*> asserts;
  ir::walk(*kernel.body, [&](ir::Inst& inst) {
    // Checks of local array and vector indices (slot -1) are debug-only too; without them
    // the index is clamped into range.
    if (inst.op == ir::Op::Assert || (inst.op == ir::Op::BoundsCheck && inst.resource_slot() == -1))
      asserts.insert(&inst);
  });
  if (asserts.empty()) return false;
  replace_and_erase(kernel, {}, asserts);
  return true;
}

}  // namespace loom::passes
