// Loops on devices that end them silently after a number of iterations (llvmpipe): which
// tasks must check how their loops were left. The emitter (emit_spirv.cpp) does the checking.
#pragma once

#include "compiler/codegen_spirv/spirv_codegen.h"

namespace loom::ir {
class Kernel;
class Inst;
}  // namespace loom::ir

namespace loom::codegen {

// Whether task `offload` of `kernel` may run into `target.loop_iteration_limit`: it holds a
// loop of its own (while, range_for, struct_for), or it is a parallel task whose invocations
// may each cover many elements (bounds only the shader knows, a reduction, or a workgroup of
// one, a 64-bit reduction on one workgroup). A parallel task without inner loops that the host
// sizes exactly gives each invocation at most 2^32 / (65535 * workgroup size) iterations in
// 1-d, and about 2 * rows / 65535 in n-d: below 65535 for any range under 2^31 rows. A
// reduction's fewer, fuller workgroups stay under kMaxGridStrideTrips (the runtime sizes them
// so), so it needs no guard either and keeps its one atomic per workgroup.
bool task_needs_loop_guard(const ir::Kernel& kernel, const ir::Inst& offload,
                           const SpirvTarget& target);

}  // namespace loom::codegen
