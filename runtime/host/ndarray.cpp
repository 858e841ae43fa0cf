#include "runtime/host/ndarray.h"

#include "runtime/common/error.h"

namespace loom::host {

Ndarray::Ndarray(Scalar dtype, std::vector<int64_t> shape, int components)
    : dtype_(dtype), shape_(std::move(shape)), components_(components) {
  check();
  buffer_ = AlignedBuffer(bytes());
  data_ = buffer_.data();
}

Ndarray::Ndarray(void* data, Scalar dtype, std::vector<int64_t> shape, int components)
    : dtype_(dtype), shape_(std::move(shape)), components_(components), data_(static_cast<uint8_t*>(data)) {
  check();
}

void Ndarray::check() {
  if (shape_.empty() || shape_.size() > static_cast<size_t>(kMaxDims))
    throw Error("ndarray needs 1 to 4 dimensions");
  if (dtype_ == Scalar::Void || components_ < 1) throw Error("ndarray needs an element type");
  for (int64_t n : shape_) {
    if (n < 0) throw Error("ndarray has a negative extent");
    count_ *= n;
  }
}

ResourceView Ndarray::view() const {
  ResourceView v{};
  v.data = data_;
  for (size_t d = 0; d < shape_.size(); ++d) v.shape[d] = shape_[d];
  return v;
}

}  // namespace loom::host
