// What a kernel's code assumes about the extents of the resources it indexes, so a launch can
// refuse arguments that would make it read or write out of bounds (issue 13 §6).
#pragma once

namespace loom::ir {
class Kernel;
}

namespace loom::passes {

// Fills kernel.abi.extent_assumptions (and sets extent_assumptions_known) from the IR as it
// is now. For every global load, store or atomic that runs in every iteration of the range
// loops around it (no `if`, `while`, struct_for or jump on the way), each dimension of the
// index it uses (recovered from the lowered element offset) that is a loop's variable plus a
// constant, or a constant, becomes a checked entry: the loops' bounds (constants, value
// parameters, resource extents) and the constants, so the launch can check it. Every other
// dimension (computed, gathered, conditional) is listed once per slot and dimension as
// unchecked. Debug kernels check every access in their code: nothing is recorded for them.
// Run by run_pipeline after the last pass, before record_resource_access (it reads the
// argpack member names lowering left there). Returns false: it records, it does not change
// the IR.
bool record_extent_assumptions(ir::Kernel& kernel);

}  // namespace loom::passes
