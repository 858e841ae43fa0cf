// What a kernel's code does to each resource it touches, for engines whose render graphs
// declare a pass's reads and writes before recording it.
#pragma once

namespace loom::ir {
class Kernel;
}

namespace loom::passes {

// Fills kernel.abi.resource_access (and sets resource_access_known) from the IR as it is
// now: every resource slot that a global_load or tex_load/tex_sample reads (r), a
// global_store or tex_store writes (w), or an atomic updates (a), in slot order, named by its
// field, its parameter, or the argpack member name lowering recorded. Slots no instruction
// touches are left out. run_pipeline calls it after the last pass, so loads the passes
// removed as dead do not count and atomics demoted in serial tasks count as read and write.
// Returns false: it records, it does not change the IR.
bool record_resource_access(ir::Kernel& kernel);

}  // namespace loom::passes
