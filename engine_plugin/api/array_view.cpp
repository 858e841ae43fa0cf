// Reading a field's or ndarray's host view as numbers, whatever its scalar type and layout.
#include <cstring>

#include "engine_plugin/include/loom/program.h"

namespace loom {

namespace {

template <class T>
double load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return static_cast<double>(v);
}

}  // namespace

size_t ArrayView::elements() const {
  size_t n = 1;
  for (int64_t e : shape) n *= static_cast<size_t>(e);
  return n;
}

double ArrayView::scalar(size_t i) const {
  const uint8_t* p = data + i * static_cast<size_t>(size_of(dtype));
  switch (dtype) {
    case Scalar::Bool: return *p != 0;
    case Scalar::I8: return load<int8_t>(p);
    case Scalar::I16: return load<int16_t>(p);
    case Scalar::I32: return load<int32_t>(p);
    case Scalar::I64: return load<int64_t>(p);
    case Scalar::U8: return load<uint8_t>(p);
    case Scalar::U16: return load<uint16_t>(p);
    case Scalar::U32: return load<uint32_t>(p);
    case Scalar::U64: return load<uint64_t>(p);
    case Scalar::F32: return load<float>(p);
    case Scalar::F64: return load<double>(p);
    case Scalar::Void: break;
  }
  return 0;
}

}  // namespace loom
