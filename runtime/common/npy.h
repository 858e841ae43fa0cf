// NumPy .npy files (format 1.0/2.0, little-endian, C order) for dumping and loading
// field, ndarray and texture contents.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/common/scalar.h"

namespace loom {

struct NpyArray {
  Scalar dtype = Scalar::F32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;  // C-order, packed

  int64_t count() const;
};

// Throws loom::Error naming the file on any problem (missing, truncated, big-endian,
// Fortran order, unsupported dtype, a header that is not exactly NumPy's dict of 'descr',
// 'fortran_order' and 'shape'). The bytes the header claims are checked against the file's
// size before anything is allocated.
NpyArray read_npy(const std::string& path);
void write_npy(const std::string& path, const NpyArray& array);

std::string npy_descr(Scalar s);  // "<f4", "|b1", ...

}  // namespace loom
