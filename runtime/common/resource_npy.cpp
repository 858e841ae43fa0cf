#include "runtime/common/resource_npy.h"

#include <cstring>

#include "runtime/common/error.h"
#include "runtime/common/npy.h"

namespace loom {

namespace {

int64_t product(const std::vector<int64_t>& v) {
  int64_t n = 1;
  for (int64_t d : v) n *= d;
  return n;
}

std::string shape_text(const std::vector<int64_t>& v) {
  std::string s = "(";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + ")";
}

// Copies between NumPy's order (C order, a matrix element as [rows][cols]) and the
// resource's storage order (AoS or SoA, matrix components column-major).
void copy_layout(const ResourceBytes& r, const uint8_t* from, uint8_t* to, bool to_storage) {
  int64_t elements = product(r.shape), comps = product(r.elem_dims);
  auto es = static_cast<size_t>(size_of(r.dtype));
  bool matrix = r.elem_dims.size() == 2;
  if ((r.layout == Layout::AoS && !matrix) || comps == 1) {
    std::memcpy(to, from, static_cast<size_t>(elements * comps) * es);
    return;
  }
  int64_t rows = matrix ? r.elem_dims[0] : comps, cols = matrix ? r.elem_dims[1] : 1;
  for (int64_t e = 0; e < elements; ++e)
    for (int64_t row = 0; row < rows; ++row)
      for (int64_t col = 0; col < cols; ++col) {
        int64_t c = col * rows + row;  // the component in storage
        auto numpy = static_cast<size_t>(e * comps + row * cols + col) * es;
        auto stored =
            static_cast<size_t>(r.layout == Layout::SoA ? c * elements + e : e * comps + c) * es;
        std::memcpy(to + (to_storage ? stored : numpy), from + (to_storage ? numpy : stored), es);
      }
}

}  // namespace

void write_resource_npy(const ResourceBytes& r, const std::string& path) {
  NpyArray a;
  a.dtype = r.dtype;
  a.shape = r.shape;
  a.shape.insert(a.shape.end(), r.elem_dims.begin(), r.elem_dims.end());
  a.data.resize(r.bytes);
  copy_layout(r, r.data, a.data.data(), false);
  write_npy(path, a);
}

void read_resource_npy(const ResourceBytes& r, const std::string& path) {
  NpyArray a = read_npy(path);
  std::vector<int64_t> want = r.shape;
  want.insert(want.end(), r.elem_dims.begin(), r.elem_dims.end());
  Place where{path, "", -1, ""};  // the messages name the resource; it is not a pin
  if (a.dtype != r.dtype)
    throw Error(where, "'" + r.name + "' holds " + std::string(scalar_name(r.dtype)) +
                           " but the file holds " + std::string(scalar_name(a.dtype)));
  if (a.shape != want)
    throw Error(where, "'" + r.name + "' has shape " + shape_text(want) + " but the file has " +
                           shape_text(a.shape));
  copy_layout(r, a.data.data(), r.data, true);
}

}  // namespace loom
