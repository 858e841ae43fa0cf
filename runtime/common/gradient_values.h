// The values whose gradients an adjoint kernel returns (passes/autodiff.h), in return order:
// every float value parameter and every float value member of an argpack parameter (nested
// structs and packs included), in parameter order and, inside a pack, in layout order. The
// compiler builds the returns from this list and the runtime names them with it, so the two
// cannot disagree.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/common/argpack_layout.h"
#include "runtime/common/kernel_abi.h"

namespace loom {

struct GradientValue {
  std::string name;  // the parameter ("w"), or the parameter and member path ("p.wind.x")
  int param = -1;    // index into KernelABI::params
  ValueType type;
  // Per component, column-major (component k of a matrix is row k % rows, column k / rows):
  // its byte offset inside the parameter's bytes, where the kernel's ArgLoad reads it.
  std::vector<uint32_t> offsets;
};

// `types`: the program's argpack types, laid out (layout_argpack_types); an argpack
// parameter whose type is not in it contributes nothing.
std::vector<GradientValue> gradient_values(const KernelABI& abi,
                                           const std::vector<ArgpackType>& types);

}  // namespace loom
