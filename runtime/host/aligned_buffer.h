// Zeroed, cache-line aligned bytes owned by one storage object, and the checked size of an
// N-d storage shape. Neither ever yields a null buffer or a wrapped-around size: both throw
// loom::Error naming the resource.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "runtime/common/error.h"

namespace loom::host {

class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  // `what` names the owner in the error when the memory cannot be had ("field 'rho'").
  explicit AlignedBuffer(size_t bytes, const std::string& what = "a buffer") : size_(bytes) {
    size_t rounded = bytes > SIZE_MAX - kAlign ? 0 : (bytes + kAlign - 1) / kAlign * kAlign;
    if (bytes == 0) rounded = kAlign;
    if (rounded != 0) data_.reset(static_cast<uint8_t*>(std::aligned_alloc(kAlign, rounded)));
    if (!data_) throw Error("cannot allocate " + std::to_string(bytes) + " bytes for " + what);
    std::memset(data_.get(), 0, rounded);
  }
  uint8_t* data() const { return data_.get(); }
  size_t size() const { return size_; }

  static constexpr size_t kAlign = 64;

 private:
  struct Free {
    void operator()(uint8_t* p) const { std::free(p); }
  };
  std::unique_ptr<uint8_t, Free> data_;
  size_t size_ = 0;
};

// Elements and bytes of storage of `shape` with `element_bytes` per element. Kernels index
// with 32-bit integers, so every extent must lie in [0, INT32_MAX]; the products must fit in
// 63 bits. Otherwise throws loom::Error naming `what` ("ndarray 'x'").
struct StorageSize {
  int64_t elements = 1;
  size_t bytes = 0;
};

inline std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t d = 0; d < shape.size(); ++d) s += (d ? ", " : "") + std::to_string(shape[d]);
  return s + "]";
}

inline StorageSize storage_size(const std::vector<int64_t>& shape, int64_t element_bytes,
                                const std::string& what) {
  StorageSize size;
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t n = shape[d];
    if (n < 0 || n > INT32_MAX)
      throw Error(what + ": extent " + std::to_string(n) + " of dimension " + std::to_string(d) +
                  " is outside [0, " + std::to_string(INT32_MAX) +
                  "] (kernels index with 32-bit integers)");
    if (__builtin_mul_overflow(size.elements, n, &size.elements))
      throw Error(what + ": shape " + shape_text(shape) + " has more than 2^63 elements");
  }
  int64_t bytes = 0;
  if (__builtin_mul_overflow(size.elements, element_bytes, &bytes))
    throw Error(what + ": shape " + shape_text(shape) + " needs more than 2^63 bytes (" +
                std::to_string(size.elements) + " elements of " + std::to_string(element_bytes) +
                " bytes)");
  size.bytes = static_cast<size_t>(bytes);
  return size;
}

}  // namespace loom::host
