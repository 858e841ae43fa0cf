#include "runtime/host/field.h"

#include "runtime/common/error.h"

namespace loom::host {

Field::Field(FieldDesc desc) : desc_(std::move(desc)) {
  if (desc_.shape.size() > static_cast<size_t>(kMaxDims))
    throw Error("field '" + desc_.name + "' has more than 4 dimensions");
  for (int64_t n : desc_.shape) {
    if (n < 0) throw Error("field '" + desc_.name + "' has a negative extent");
    count_ *= n;
  }
  if (desc_.elem.scalar == Scalar::Void) throw Error("field '" + desc_.name + "' has no element type");
  buffer_ = AlignedBuffer(static_cast<size_t>(count_ * components() * size_of(desc_.elem.scalar)));
}

ResourceView Field::view() const {
  ResourceView v{};
  v.data = buffer_.data();
  for (size_t d = 0; d < desc_.shape.size(); ++d) v.shape[d] = desc_.shape[d];
  return v;
}

}  // namespace loom::host
