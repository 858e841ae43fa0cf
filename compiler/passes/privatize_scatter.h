// Atomic scatters through per-thread copies (CPU targets).
#pragma once

namespace loom::ir {
class Kernel;
}

namespace loom::passes {

// With Kernel::private_copies > 0 (a CPU target), gives a parallel task's atomic adds into a
// field private copies when that is provably the same computation: every access the task
// makes to the field is an atomic add or sub of a numeric scalar whose old value nothing
// reads (floats only under Kernel::fast_math: the sums are regrouped), no other slot of the
// task names the same field, and the field has a fixed shape (0-d included). Its
// element_ptrs get `bits` copies at a region of the kernel temporaries
// (compiler/ir/private_copies.h; one region per field, reused by every task), and the task's
// note says so. The CPU backend then lets each chunk of the task claim a free copy, add into
// it without atomics, and add the used copies into the field when the task ends
// (compiler/codegen_llvm/README.md); a chunk that finds no copy free uses the atomics as
// written. Results are those of the atomics up to the order of the additions: exact for
// integers, float sums regrouped (each contribution is added once).
//
// A task whose trip count is a constant keeps its atomics when they are fewer than the
// field's scalars (adding a copy into the field would cost more than it saves); the backend
// applies the same rule at run time to trip counts it only learns then. Copies per field:
// Kernel::private_copies (one per thread: no more chunks hold a copy at once) up to
// ir::kMaxPrivateCopies, sized by the field's declared shape and at most 16 MiB of them per
// field and 64 MiB per kernel; a field left fewer than two copies (one with one thread)
// keeps its atomics.
bool privatize_scatter(ir::Kernel& kernel);

}  // namespace loom::passes
