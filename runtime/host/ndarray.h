// An ndarray: N-d elements of `components` scalars (AoS), owning zeroed memory or wrapping
// memory the caller keeps alive.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/common/kernel_abi.h"
#include "runtime/host/aligned_buffer.h"

namespace loom::host {

class Ndarray {
 public:
  // Extents must lie in [0, INT32_MAX] and the memory must be had; otherwise loom::Error
  // names the ndarray (`name`, when given) and the extent or byte count. `allocate` false
  // checks the same but takes no memory (data() null): a program only being checked.
  Ndarray(Scalar dtype, std::vector<int64_t> shape, int components = 1,
          const std::string& name = "", bool allocate = true);
  // Wraps `data` (not owned).
  Ndarray(void* data, Scalar dtype, std::vector<int64_t> shape, int components = 1,
          const std::string& name = "");

  Scalar dtype() const { return dtype_; }
  int components() const { return components_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  int ndim() const { return static_cast<int>(shape_.size()); }
  int64_t element_count() const { return count_; }
  size_t bytes() const { return bytes_; }
  uint8_t* data() const { return data_; }
  template <typename T>
  T* data_as() const {
    return reinterpret_cast<T*>(data_);
  }
  bool owns_memory() const { return buffer_.data() != nullptr; }

  ResourceView view() const;

 private:
  void check(const std::string& what);

  Scalar dtype_;
  std::vector<int64_t> shape_;
  int components_;
  int64_t count_ = 1;
  size_t bytes_ = 0;
  AlignedBuffer buffer_;
  uint8_t* data_ = nullptr;
};

}  // namespace loom::host
