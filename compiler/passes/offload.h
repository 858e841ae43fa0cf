// Splits the kernel's top level into offloaded tasks.
#pragma once

namespace loom::ir {
class Kernel;
}

namespace loom::passes {

// Turns every top-level RangeFor (with uniform bounds) into a range_for task and every
// StructFor into a struct_for task, their LoopIndex users repointed to the task; each run of
// other top-level statements becomes one serial task. Loops that must run in order stay in
// a serial task: a RangeFor whose bounds are computed by earlier statements, and a loop that
// writes a variable declared outside it (which would race in parallel) unless every access
// to the variable there is `v = v OP e` with one of + - * min max & | ^ (a reduction: each
// update becomes `reduce OP @temp e`, combined per thread and then into the variable's
// temporary). kernel.task_notes gets one line per task: how it runs and, when serial, why. Uniform
// values (constants, arguments, shapes and pure math on them) stay at the top level, where every
// task may use them. A value or variable that one task produces and a later one uses goes through
// kernel temporaries (TmpStore/TmpLoad at 8-byte slots allocated in kernel.abi.temps_size);
// pointers are recomputed in the task that uses them. Afterwards verify(kernel, {.offloaded =
// true}) holds.
bool offload(ir::Kernel& kernel);

}  // namespace loom::passes
