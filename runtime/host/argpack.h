// An argument pack: bytes laid out by runtime/common/argpack_layout.h (std140), written
// member by member through dotted paths ("material.roughness", "grid.cells"). Nested packs
// and structs live inline; ndarray and texture members hold the 32-byte record (data
// pointer, then i32 extents). Writes mark the pack dirty so a device uploads it once.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/common/argpack_layout.h"
#include "runtime/host/aligned_buffer.h"
#include "runtime/host/scalar_traits.h"

namespace loom::host {

class Ndarray;
class Texture;

class Argpack {
 public:
  // `types` must be laid out (layout_argpack_types); `type` indexes it.
  Argpack(std::vector<ArgpackType> types, int type);

  const ArgpackType& type() const { return types_[static_cast<size_t>(type_)]; }
  uint8_t* data() const { return buffer_.data(); }
  uint32_t size() const { return type().size; }
  bool dirty() const { return dirty_; }
  void clear_dirty() { dirty_ = false; }

  // Scalar members; the C++ type must match the member's type exactly.
  template <typename T>
  void set(const std::string& path, T value) { write_values(path, scalar_of<T>(), &value, 1); }
  template <typename T>
  T get(const std::string& path) const {
    T value{};
    read_values(path, scalar_of<T>(), &value, 1);
    return value;
  }
  // Vector and matrix members: all components, column-major.
  template <typename T>
  void set_components(const std::string& path, const std::vector<T>& values) {
    write_values(path, scalar_of<T>(), values.data(), static_cast<int>(values.size()));
  }
  template <typename T>
  std::vector<T> get_components(const std::string& path, int count) const {
    std::vector<T> values(static_cast<size_t>(count));
    read_values(path, scalar_of<T>(), values.data(), count);
    return values;
  }

  void set_ndarray(const std::string& path, const Ndarray& array);
  void set_texture(const std::string& path, const Texture& texture);
  // Copies a whole nested pack or struct member from `nested` (of the member's type).
  void set_pack(const std::string& path, const Argpack& nested);
  // The view recorded in a resource member (data pointer and extents).
  ResourceView resource_view(const std::string& path) const;
  // Same, for a resource record at a byte offset (what ResourceDesc::param_offset names).
  ResourceView resource_view_at(uint32_t offset) const;

 private:
  const ArgpackMember& member(const std::string& path, uint32_t* offset) const;
  void write_values(const std::string& path, Scalar s, const void* values, int count);
  void read_values(const std::string& path, Scalar s, void* values, int count) const;

  std::vector<ArgpackType> types_;
  int type_;
  AlignedBuffer buffer_;
  bool dirty_ = true;
};

}  // namespace loom::host
