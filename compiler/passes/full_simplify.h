// The simplification fixed point.
#pragma once

#include <string>

namespace loom::ir {
class Kernel;
struct VerifyOptions;
}  // namespace loom::ir

namespace loom::passes {

// A kernel still changing after this many rounds has a pass that reports progress forever:
// an internal error, never a silent stop.
constexpr int kMaxSimplifyRounds = 1000;

struct SimplifyOptions {
  // When set, the IR verifier runs after every sub-pass; a failure names the sub-pass
  // ("full_simplify/cse, round 2").
  const ir::VerifyOptions* verify = nullptr;
  std::string name = "full_simplify";  // how verification failures name this run
  int* rounds = nullptr;               // receives the number of rounds run
};

// Runs constant_fold, algebraic_simplify, cse, store_forward and die in rounds until a round
// changes nothing (a true fixed point). Throws loom::InternalError after kMaxSimplifyRounds.
bool full_simplify(ir::Kernel& kernel, const SimplifyOptions& options = {});

}  // namespace loom::passes
