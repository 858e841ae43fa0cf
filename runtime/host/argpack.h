// An argument pack: bytes laid out by runtime/common/argpack_layout.h (std140), written
// member by member through dotted paths ("material.roughness", "grid.cells"). Structs live
// inline; ndarray and texture members hold the 32-byte record (data pointer, then i32
// extents). A nested pack member is bound by reference, as in Taichi: its bytes are a copy
// of the bound pack, refreshed by sync() when that pack changed, and writes through this
// pack ("c.a") go to the bound pack. Every change bumps version() and marks the pack dirty,
// so a device uploads a changed pack once before its next launch.
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
  // Counts changes of the bytes (this pack's writes and refreshed nested packs).
  uint64_t version() const { return version_; }
  // Re-copies the bytes of bound nested packs that changed since they were copied (their
  // own nested packs first). Call before a launch reads data(); true when bytes changed.
  bool sync();

  // Scalar members; the C++ type must match the member's type exactly.
  template <typename T>
  void set(const std::string& path, T value) {
    write_values(path, scalar_of<T>(), &value, 1);
  }
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
  // A nested pack member refers to `nested` (of the member's type) from now on; `nested`
  // must outlive this pack or be unbound by another set_pack. A struct member is a value:
  // `nested`'s bytes are copied once.
  void set_pack(const std::string& path, Argpack& nested);
  // The view recorded in a resource member (data pointer and extents).
  ResourceView resource_view(const std::string& path) const;
  // Same, for a resource record at a byte offset (what ResourceDesc::param_offset names).
  ResourceView resource_view_at(uint32_t offset) const;

 private:
  const ArgpackMember& member(const std::string& path, uint32_t* offset) const;
  void write_values(const std::string& path, Scalar s, const void* values, int count);
  void read_values(const std::string& path, Scalar s, void* values, int count) const;

  // A nested pack member bound to another pack.
  struct Binding {
    std::string path;
    uint32_t offset = 0;
    uint32_t size = 0;
    Argpack* pack = nullptr;
    uint64_t copied_version = 0;  // the bound pack's version our bytes hold
  };
  // The binding `path` goes through ("c.a" with "c" bound), and the rest of the path ("a").
  Binding* binding_of(const std::string& path, std::string* rest);
  const Binding* binding_of(const std::string& path, std::string* rest) const;
  // Copies the bound pack's bytes when they changed since the last copy.
  void refresh(Binding& b);
  void changed() {
    dirty_ = true;
    ++version_;
  }

  std::vector<ArgpackType> types_;
  int type_;
  AlignedBuffer buffer_;
  std::vector<Binding> bindings_;
  bool dirty_ = true;
  uint64_t version_ = 0;
};

}  // namespace loom::host
