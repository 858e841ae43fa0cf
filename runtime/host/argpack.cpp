#include "runtime/host/argpack.h"

#include <cstring>
#include <utility>

#include "runtime/common/error.h"
#include "runtime/host/ndarray.h"
#include "runtime/host/texture.h"

namespace loom::host {

namespace {
Error member_error(const std::string& path, const std::string& what) {
  Place place;
  place.pin = path;
  return Error(place, "argpack member: " + what);
}
}  // namespace

Argpack::Argpack(std::vector<ArgpackType> types, int type) : types_(std::move(types)), type_(type) {
  if (type < 0 || static_cast<size_t>(type) >= types_.size())
    throw Error("argpack type index out of range");
  if (types_[static_cast<size_t>(type)].size == 0) layout_argpack_types(types_);
  buffer_ = AlignedBuffer(types_[static_cast<size_t>(type)].size);
}

const ArgpackMember& Argpack::member(const std::string& path, uint32_t* offset) const {
  const ArgpackMember* m = find_member(types_, type_, path, offset);
  if (!m) throw member_error(path, "no member '" + path + "' in argpack '" + type().name + "'");
  return *m;
}

void Argpack::write_values(const std::string& path, Scalar s, const void* values, int count) {
  uint32_t offset = 0;
  const ArgpackMember& m = member(path, &offset);
  if (m.kind != MemberKind::Value) throw member_error(path, "'" + path + "' is not a value member");
  if (m.type.scalar != s || m.type.components() != count)
    throw member_error(path, "'" + path + "' is " + value_type_name(m.type) + ", written as " +
                                 std::to_string(count) + " x " + std::string(scalar_name(s)));
  std::string rest;
  if (Binding* b = binding_of(path, &rest)) {  // a member of a bound pack: write that pack
    b->pack->write_values(rest, s, values, count);
    refresh(*b);
    return;
  }
  auto size = static_cast<size_t>(size_of(s));
  auto* src = static_cast<const uint8_t*>(values);
  for (int k = 0; k < count; ++k) {
    uint8_t* dst =
        buffer_.data() + offset + std140_component_offset(m.type, k % m.type.rows, k / m.type.rows);
    if (s == Scalar::Bool) {
      int32_t b = src[k] != 0;
      std::memcpy(dst, &b, 4);
    } else {
      std::memcpy(dst, src + static_cast<size_t>(k) * size, size);
    }
  }
  changed();
}

void Argpack::read_values(const std::string& path, Scalar s, void* values, int count) const {
  uint32_t offset = 0;
  const ArgpackMember& m = member(path, &offset);
  if (m.kind != MemberKind::Value) throw member_error(path, "'" + path + "' is not a value member");
  if (m.type.scalar != s || m.type.components() != count)
    throw member_error(path, "'" + path + "' is " + value_type_name(m.type) + ", read as " +
                                 std::to_string(count) + " x " + std::string(scalar_name(s)));
  std::string rest;
  if (const Binding* b = binding_of(path, &rest)) {  // the bound pack holds the current value
    b->pack->read_values(rest, s, values, count);
    return;
  }
  auto size = static_cast<size_t>(size_of(s));
  auto* dst = static_cast<uint8_t*>(values);
  for (int k = 0; k < count; ++k) {
    const uint8_t* src =
        buffer_.data() + offset + std140_component_offset(m.type, k % m.type.rows, k / m.type.rows);
    if (s == Scalar::Bool) {
      int32_t b;
      std::memcpy(&b, src, 4);
      dst[k] = b != 0;
    } else {
      std::memcpy(dst + static_cast<size_t>(k) * size, src, size);
    }
  }
}

void Argpack::set_ndarray(const std::string& path, const Ndarray& array) {
  uint32_t offset = 0;
  const ArgpackMember& m = member(path, &offset);
  if (m.kind != MemberKind::Ndarray)
    throw member_error(path, "'" + path + "' is not an ndarray member");
  if (m.type.scalar != array.dtype() || m.type.components() != array.components())
    throw member_error(path, "'" + path + "' holds " + value_type_name(m.type) +
                                 " elements, the ndarray " +
                                 std::string(scalar_name(array.dtype())) + " x " +
                                 std::to_string(array.components()));
  if (m.ndim != 0 && m.ndim != array.ndim())
    throw member_error(path, "'" + path + "' has " + std::to_string(m.ndim) +
                                 " dimensions, the ndarray " + std::to_string(array.ndim()));
  std::string rest;
  if (Binding* b = binding_of(path, &rest)) {
    b->pack->set_ndarray(rest, array);
    refresh(*b);
    return;
  }
  uint8_t* rec = buffer_.data() + offset;
  std::memset(rec, 0, 32);
  auto handle = reinterpret_cast<uint64_t>(array.data());
  std::memcpy(rec, &handle, 8);
  for (int d = 0; d < array.ndim(); ++d) {
    auto n = static_cast<int32_t>(array.shape()[static_cast<size_t>(d)]);
    std::memcpy(rec + 8 + 4 * static_cast<size_t>(d), &n, 4);
  }
  changed();
}

void Argpack::set_texture(const std::string& path, const Texture& texture) {
  uint32_t offset = 0;
  const ArgpackMember& m = member(path, &offset);
  if (m.kind != MemberKind::Texture)
    throw member_error(path, "'" + path + "' is not a texture member");
  if (m.ndim != 0 && m.ndim != texture.ndim())
    throw member_error(path, "'" + path + "' is a " + std::to_string(m.ndim) + "-d texture");
  std::string rest;
  if (Binding* b = binding_of(path, &rest)) {
    b->pack->set_texture(rest, texture);
    refresh(*b);
    return;
  }
  uint8_t* rec = buffer_.data() + offset;
  std::memset(rec, 0, 32);
  auto handle = reinterpret_cast<uint64_t>(texture.data());
  std::memcpy(rec, &handle, 8);
  int32_t size[3] = {texture.width(), texture.height(), texture.depth()};
  std::memcpy(rec + 8, size, sizeof size);
  changed();
}

void Argpack::set_pack(const std::string& path, Argpack& nested) {
  uint32_t offset = 0;
  const ArgpackMember& m = member(path, &offset);
  if (m.kind != MemberKind::Pack && m.kind != MemberKind::Struct)
    throw member_error(path, "'" + path + "' is not a nested pack or struct");
  const ArgpackType& want = types_[static_cast<size_t>(m.nested)];
  if (want.name != nested.type().name || want.size != nested.size())
    throw member_error(
        path, "'" + path + "' is of type '" + want.name + "', given '" + nested.type().name + "'");
  std::string rest;
  if (Binding* b = binding_of(path, &rest); b && !rest.empty()) {  // inside a bound pack
    b->pack->set_pack(rest, nested);
    refresh(*b);
    return;
  }
  // The member's old binding and any binding inside it are replaced.
  std::erase_if(bindings_, [&](const Binding& b) {
    return b.path == path || b.path.rfind(path + ".", 0) == 0;
  });
  nested.sync();
  std::memcpy(buffer_.data() + offset, nested.data(), want.size);
  if (m.kind == MemberKind::Pack)
    bindings_.push_back({path, offset, want.size, &nested, nested.version()});
  changed();
}

Argpack::Binding* Argpack::binding_of(const std::string& path, std::string* rest) {
  return const_cast<Binding*>(std::as_const(*this).binding_of(path, rest));
}

const Argpack::Binding* Argpack::binding_of(const std::string& path, std::string* rest) const {
  for (const Binding& b : bindings_) {
    if (path == b.path) {
      rest->clear();
      return &b;
    }
    if (path.size() > b.path.size() && path.compare(0, b.path.size(), b.path) == 0 &&
        path[b.path.size()] == '.') {
      *rest = path.substr(b.path.size() + 1);
      return &b;
    }
  }
  return nullptr;
}

void Argpack::refresh(Binding& b) {
  if (b.pack->version() == b.copied_version) return;
  std::memcpy(buffer_.data() + b.offset, b.pack->data(), b.size);
  b.copied_version = b.pack->version();
  changed();
}

bool Argpack::sync() {
  uint64_t before = version_;
  for (Binding& b : bindings_) {
    b.pack->sync();
    refresh(b);
  }
  return version_ != before;
}

ResourceView Argpack::resource_view_at(uint32_t offset) const {
  if (offset + 32 > size()) throw Error("argpack resource record outside the pack");
  ResourceView v{};
  const uint8_t* rec = buffer_.data() + offset;
  uint64_t handle;
  std::memcpy(&handle, rec, 8);
  v.data = reinterpret_cast<uint8_t*>(handle);
  for (int d = 0; d < kMaxDims; ++d) {
    int32_t n;
    std::memcpy(&n, rec + 8 + 4 * static_cast<size_t>(d), 4);
    v.shape[d] = n;
  }
  return v;
}

ResourceView Argpack::resource_view(const std::string& path) const {
  uint32_t offset = 0;
  const ArgpackMember& m = member(path, &offset);
  if (m.kind != MemberKind::Ndarray && m.kind != MemberKind::Texture)
    throw member_error(path, "'" + path + "' is not a resource member");
  std::string rest;
  if (const Binding* b = binding_of(path, &rest)) return b->pack->resource_view(rest);
  ResourceView v = resource_view_at(offset);
  if (m.kind == MemberKind::Texture) v.shape[3] = 0;
  return v;
}

}  // namespace loom::host
