// Structural and type checks of the IR. Runs after every pass in debug builds and tests,
// so a broken pass is caught at the pass that broke it.
#pragma once

#include <string>

namespace loom::ir {

class Kernel;

struct VerifyOptions {
  bool offloaded = false;  // body must be a list of Offload tasks only
  bool lowered = false;    // no GlobalPtr left (access lowering done)
  bool types = true;       // operand and result types; false before type_check (structure only)
};

// Returns "" when the kernel is well formed, otherwise the first problem found.
std::string verify(const Kernel& kernel, VerifyOptions options = {});
// Throws loom::InternalError naming the pass when verify() finds a problem (a pass, or the
// lowering that fed the pipeline, broke the IR: a bug in Loom, not in the user's graph):
// "IR verification failed after <after_pass>: <problem>".
void verify_or_throw(const Kernel& kernel, const std::string& after_pass,
                     VerifyOptions options = {});

}  // namespace loom::ir
