// A program field: dense N-d storage of scalar/vector/matrix elements, zero-initialised.
// N is 0 to 4; a 0-d field (empty shape) holds one element.
#pragma once

#include <cstdint>

#include "runtime/common/kernel_abi.h"
#include "runtime/host/aligned_buffer.h"

namespace loom::host {

class Field {
 public:
  // Extents must lie in [0, INT32_MAX] and the memory must be had; otherwise loom::Error
  // names the field and the extent or byte count. `allocate` false checks the same but takes
  // no memory (data() null, bytes() 0): a program loaded only to be checked (loom check).
  explicit Field(FieldDesc desc, bool allocate = true);

  const FieldDesc& desc() const { return desc_; }
  int64_t element_count() const { return count_; }
  int components() const { return desc_.elem.components(); }
  size_t bytes() const { return buffer_.size(); }
  uint8_t* data() const { return buffer_.data(); }
  template <typename T>
  T* data_as() const {
    return reinterpret_cast<T*>(buffer_.data());
  }

  // Scalar index of `component` of the element at row-major linear index `element`
  // (AoS: element-major, SoA: component-major), the index kernels use.
  int64_t scalar_index(int64_t element, int component) const {
    return desc_.layout == Layout::AoS ? element * components() + component
                                       : component * count_ + element;
  }

  ResourceView view() const;

 private:
  FieldDesc desc_;
  int64_t count_ = 1;
  AlignedBuffer buffer_;
};

}  // namespace loom::host
