#include "compiler/passes/full_simplify.h"

#include "compiler/passes/algebraic_simplify.h"
#include "compiler/passes/constant_fold.h"
#include "compiler/passes/cse.h"
#include "compiler/passes/die.h"
#include "compiler/passes/store_forward.h"

namespace loom::passes {

bool full_simplify(ir::Kernel& kernel, int max_rounds) {
  bool progress = false;
  for (int round = 0; round < max_rounds; ++round) {
    bool changed = false;
    changed |= constant_fold(kernel);
    changed |= algebraic_simplify(kernel);
    changed |= cse(kernel);
    changed |= store_forward(kernel);
    changed |= die(kernel);
    if (!changed) break;
    progress = true;
  }
  return progress;
}

}  // namespace loom::passes
