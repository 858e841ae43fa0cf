#include "runtime/host/field.h"

#include "runtime/common/error.h"

namespace loom::host {

Field::Field(FieldDesc desc, bool allocate) : desc_(std::move(desc)) {
  const std::string what = "field '" + desc_.name + "'";
  if (desc_.shape.size() > static_cast<size_t>(kMaxDims))
    throw Error(what + " has more than 4 dimensions");
  if (desc_.elem.scalar == Scalar::Void) throw Error(what + " has no element type");
  StorageSize size =
      storage_size(desc_.shape, int64_t{components()} * size_of(desc_.elem.scalar), what);
  count_ = size.elements;
  if (allocate) buffer_ = AlignedBuffer(size.bytes, what);
}

ResourceView Field::view() const {
  ResourceView v{};
  v.data = buffer_.data();
  for (size_t d = 0; d < desc_.shape.size(); ++d) v.shape[d] = desc_.shape[d];
  return v;
}

}  // namespace loom::host
