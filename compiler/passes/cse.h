// Common subexpression elimination.
#pragma once

namespace loom::ir {
class Kernel;
}

namespace loom::passes {

// Hierarchical value numbering of pure instructions: an instruction equal to one that
// dominates it (earlier in its block or in an enclosing block) in op, type, attributes and
// operands (commutative operands in canonical order) is replaced by it. Values never flow
// between sibling regions, so nothing is shared across Offload tasks.
bool cse(ir::Kernel& kernel);

}  // namespace loom::passes
