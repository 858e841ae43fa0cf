// Lowers N-d global accesses to linear element pointers.
#pragma once

namespace loom::ir {
class Kernel;
}

namespace loom::passes {

// Rewrites GlobalPtr(slot, component; N-d indices) into ElementPtr(slot; linear i64 index).
// Extents come from the resource: constants for fields, ResourceShape for ndarrays and
// textures (materialised once at the kernel top level, where every task can use them).
// AoS: element * components + component; SoA: component * elements + element.
// When kernel.debug, a BoundsCheck per dimension goes right before each access (load, store,
// atomic) carrying the access's node. Afterwards verify(kernel, {.lowered = true}) holds.
bool lower_access(ir::Kernel& kernel);

}  // namespace loom::passes
