// Reading element offsets back into indices: the N-d index of an element offset as access
// lowering builds it, and an index as a loop's variable plus a constant. The extent
// assumptions checked at launch and the SPIR-V backend's tiles for stencils read the same
// shapes through these.
#pragma once

#include <cstdint>
#include <vector>

#include "compiler/ir/inst.h"
#include "runtime/common/kernel_abi.h"

namespace loom::ir {

// An index the launch can bound: the variable of `loop` along `dim` plus `c`, or (no loop)
// the constant `c`.
struct Affine {
  const Inst* loop = nullptr;
  int32_t dim = 0;
  int64_t c = 0;
};

// `v` as an Affine (null `v`: the constant 0, an index lowering folded away); false for any
// other shape, or offsets of 2^30 or more.
bool affine(const Inst* v, Affine* out);

// The N-d index of element offset `linear` into slot `slot` (described by `r`) as lower_access
// builds it: ((i0 * e1 + i1) * e2 + i2) ..., times the components plus the component for AoS
// vectors. An index entry may be null (0, folded away). False when the offset has another
// shape (or two readings).
bool delinearize(const Inst* linear, int32_t slot, const ResourceDesc& r,
                 std::vector<const Inst*>* index);

}  // namespace loom::ir
