// The bounds of a parallel range that the host can evaluate at launch (RangeBound): an integer
// constant, a value parameter's 32-bit integer, or a resource's extent (a field's is a
// constant), each plus a constant (`shape - 1`, `n + 2`: the bounds of stencils and halos).
// One rule for the three users: the SPIR-V backend sizing dispatches exactly, llvmpipe's loop
// guard (tasks with such bounds need none) and the extent assumptions checked at launch.
#pragma once

#include <optional>

#include "compiler/ir/inst.h"
#include "runtime/common/kernel_abi.h"

namespace loom::ir {

// `v` as a bound the host evaluates like the code does (32-bit wrap-around included), or none.
std::optional<RangeBound> host_range_bound(const KernelABI& abi, const Inst* v);

}  // namespace loom::ir
