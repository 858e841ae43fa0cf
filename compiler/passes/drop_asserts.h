// Assertions exist only in debug builds.
#pragma once

namespace loom::ir {
class Kernel;
}

namespace loom::passes {

// Unless Kernel::debug, removes every Assert (their conditions are left for die). A kernel
// compiled without debug checks nothing, as docs/nodes.md promises.
bool drop_asserts(ir::Kernel& kernel);

}  // namespace loom::passes
