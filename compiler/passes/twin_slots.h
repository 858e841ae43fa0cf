// The resource slots autodiff adds beside a kernel's own: an adjoint (NAME.grad, autodiff.h)
// or a tangent (NAME.dual, forward_mode.h) of each differentiated field or ndarray parameter.
#pragma once

#include <string>
#include <vector>

#include "runtime/common/argpack_layout.h"
#include "runtime/common/kernel_abi.h"

namespace loom::passes {

// What an empty `wanted` selects: every float field and ndarray-parameter slot (never argpack
// members or textures).
std::vector<bool> default_twin_slots(const KernelABI& abi);

// Adds to `abi` a twin of each slot `wanted` selects (by slot; empty: default_twin_slots): a
// field's twin is the program's field NAME + suffix; an ndarray parameter's a new parameter
// NAME + suffix of the same type; a float ndarray inside an argpack parameter (found in `types`,
// the program's laid out argpack types) a new ndarray parameter PARAM.PATH + suffix of the
// member's element type and dimensions ("p.inner.vel.grad"), which the launcher binds to the
// twin of the ndarray the pack holds there. Returns, by original slot, its twin's slot or -1.
// A selected slot that cannot have a twin is an error naming the kernel; `mode` says which
// derivative in it ("", " in forward mode").
std::vector<int> add_twin_slots(KernelABI& abi, const std::vector<bool>& wanted,
                                const std::string& suffix, const std::string& mode,
                                const std::vector<ArgpackType>& types = {});

}  // namespace loom::passes
