// Dead instruction elimination.
#pragma once

namespace loom::ir {
class Kernel;
}

namespace loom::passes {

// Removes pure instructions and loads (local, global, temporary) whose values are unused,
// variables that are never read (with their stores), If/RangeFor/StructFor/Offload regions
// with nothing inside, and code after Break/Continue/Return in a block.
bool die(ir::Kernel& kernel);

}  // namespace loom::passes
