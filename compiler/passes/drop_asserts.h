// Assertions exist only in debug builds.
#pragma once

namespace loom::ir {
class Kernel;
}

namespace loom::passes {

// Unless Kernel::debug, removes every Assert and every BoundsCheck of a local array or
// vector index (slot -1; their conditions are left for die). A kernel compiled without debug
// checks nothing, as docs/nodes.md promises: local indices are then clamped by the accesses.
bool drop_asserts(ir::Kernel& kernel);

}  // namespace loom::passes
