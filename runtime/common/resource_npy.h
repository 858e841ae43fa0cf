// Field, ndarray and texture contents as NumPy arrays: the logical shape is the resource's
// extents followed by the element's dimensions (vector: [n], matrix: [rows, cols],
// texture: [channels]), in C order as NumPy expects: a matrix element is [rows][cols]
// (m[r, c]), although Loom stores its components column-major; SoA fields are transposed
// to and from that order too.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/common/kernel_abi.h"
#include "runtime/common/scalar.h"

namespace loom {

struct ResourceBytes {
  std::string name;
  Scalar dtype = Scalar::F32;
  std::vector<int64_t> shape;      // extents, outermost first
  std::vector<int64_t> elem_dims;  // per-element dimensions, empty for scalars; [rows, cols]: a
                                   // matrix, stored column-major
  Layout layout = Layout::AoS;
  uint8_t* data = nullptr;
  size_t bytes = 0;
};

void write_resource_npy(const ResourceBytes& r, const std::string& path);
// Throws loom::Error naming the resource and the file when dtype or shape differ.
void read_resource_npy(const ResourceBytes& r, const std::string& path);

}  // namespace loom
