// Demotes atomics that need no atomicity.
#pragma once

namespace loom::ir {
class Kernel;
}

namespace loom::passes {

// AtomicRMW on a local variable (Alloca) becomes local_load / op / local_store, and one inside
// a serial Offload task becomes global_load / op / global_store; the loaded old value is the
// result. add/sub/min/max map to add/sub/min/max, and/or/xor to bit_and/bit_or/bit_xor.
bool demote_atomics(ir::Kernel& kernel);

}  // namespace loom::passes
