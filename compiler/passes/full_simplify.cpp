#include "compiler/passes/full_simplify.h"

#include "compiler/ir/inst.h"
#include "compiler/ir/verifier.h"
#include "compiler/passes/algebraic_simplify.h"
#include "compiler/passes/constant_fold.h"
#include "compiler/passes/cse.h"
#include "compiler/passes/die.h"
#include "compiler/passes/store_forward.h"
#include "runtime/common/error.h"

namespace loom::passes {

namespace {

struct SubPass {
  const char* name;
  bool (*run)(ir::Kernel&);
};

// store_forward resolves ifs whose conditions forwarding makes constant, so chains of
// variable-dependent ifs settle in a round or two instead of one if per round.
constexpr SubPass kSubPasses[] = {
    {"constant_fold", constant_fold},
    {"algebraic_simplify", algebraic_simplify},
    {"cse", cse},
    {"store_forward", store_forward},
    {"die", die},
};

}  // namespace

bool full_simplify(ir::Kernel& kernel, const SimplifyOptions& options) {
  bool progress = false;
  for (int round = 1;; ++round) {
    if (round > kMaxSimplifyRounds)
      throw InternalError(options.name + " did not reach a fixed point in " +
                          std::to_string(kMaxSimplifyRounds) +
                          " rounds: a simplification keeps reporting progress");
    bool changed = false;
    for (const SubPass& pass : kSubPasses) {
      changed |= pass.run(kernel);
      if (options.verify)
        ir::verify_or_throw(kernel,
                            options.name + "/" + pass.name + ", round " + std::to_string(round),
                            *options.verify);
      kernel.free_erased();  // after the check, which reports uses of them
    }
    if (!changed) {
      if (options.rounds) *options.rounds = round;
      return progress;
    }
    progress = true;
  }
}

}  // namespace loom::passes
