#include "engine_plugin/api/resource_npy.h"

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

// Copies between AoS order (what NumPy sees) and the resource's storage order.
void copy_layout(const ResourceBytes& r, const uint8_t* from, uint8_t* to, bool to_storage) {
  int64_t elements = product(r.shape), comps = product(r.elem_dims);
  auto es = static_cast<size_t>(size_of(r.dtype));
  if (r.layout == Layout::AoS || comps == 1) {
    std::memcpy(to, from, static_cast<size_t>(elements * comps) * es);
    return;
  }
  for (int64_t e = 0; e < elements; ++e)
    for (int64_t c = 0; c < comps; ++c) {
      size_t aos = static_cast<size_t>(e * comps + c) * es, soa = static_cast<size_t>(c * elements + e) * es;
      std::memcpy(to + (to_storage ? soa : aos), from + (to_storage ? aos : soa), es);
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
  Place where{path, "", -1, r.name};
  if (a.dtype != r.dtype)
    throw Error(where, "'" + r.name + "' holds " + std::string(scalar_name(r.dtype)) + " but the file holds " +
                           std::string(scalar_name(a.dtype)));
  if (a.shape != want)
    throw Error(where, "'" + r.name + "' has shape " + shape_text(want) + " but the file has " + shape_text(a.shape));
  copy_layout(r, a.data.data(), r.data, true);
}

}  // namespace loom
