#include "runtime/host/ndarray.h"

#include "runtime/common/error.h"

namespace loom::host {

namespace {
std::string describe(const std::string& name) {
  return name.empty() ? "ndarray" : "ndarray '" + name + "'";
}
}  // namespace

Ndarray::Ndarray(Scalar dtype, std::vector<int64_t> shape, int components, const std::string& name,
                 bool allocate)
    : dtype_(dtype), shape_(std::move(shape)), components_(components) {
  check(describe(name));
  if (!allocate) return;
  buffer_ = AlignedBuffer(bytes_, describe(name));
  data_ = buffer_.data();
}

Ndarray::Ndarray(void* data, Scalar dtype, std::vector<int64_t> shape, int components,
                 const std::string& name)
    : dtype_(dtype),
      shape_(std::move(shape)),
      components_(components),
      data_(static_cast<uint8_t*>(data)) {
  check(describe(name));
  if (!data_ && bytes_ > 0) throw Error(describe(name) + " wraps a null pointer");
}

void Ndarray::check(const std::string& what) {
  if (shape_.empty() || shape_.size() > static_cast<size_t>(kMaxDims))
    throw Error(what + " needs 1 to 4 dimensions");
  if (dtype_ == Scalar::Void || components_ < 1) throw Error(what + " needs an element type");
  StorageSize size = storage_size(shape_, int64_t{components_} * size_of(dtype_), what);
  count_ = size.elements;
  bytes_ = size.bytes;
}

ResourceView Ndarray::view() const {
  ResourceView v{};
  v.data = data_;
  for (size_t d = 0; d < shape_.size(); ++d) v.shape[d] = shape_[d];
  return v;
}

}  // namespace loom::host
