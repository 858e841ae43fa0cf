#include "runtime/common/argpack_layout.h"

#include "runtime/common/error.h"

namespace loom {

namespace {
uint32_t align_up(uint32_t v, uint32_t a) { return (v + a - 1) / a * a; }
uint32_t scalar_bytes(Scalar s) {
  return s == Scalar::Bool ? 4u : static_cast<uint32_t>(size_of(s));
}
}  // namespace

uint32_t std140_align(ValueType t) {
  uint32_t e = scalar_bytes(t.scalar);
  if (t.is_scalar()) return e;
  if (t.is_matrix()) return align_up(4 * e, 16);
  return t.rows == 2 ? 2 * e : 4 * e;
}

uint32_t std140_size(ValueType t) {
  uint32_t e = scalar_bytes(t.scalar);
  if (t.is_scalar()) return e;
  if (t.is_matrix()) return static_cast<uint32_t>(t.cols) * align_up(4 * e, 16);
  return static_cast<uint32_t>(t.rows) * e;
}

uint32_t std140_component_offset(ValueType t, int row, int col) {
  uint32_t e = scalar_bytes(t.scalar);
  if (t.is_matrix())
    return static_cast<uint32_t>(col) * align_up(4 * e, 16) + static_cast<uint32_t>(row) * e;
  return static_cast<uint32_t>(row) * e;
}

namespace {
void layout_one(std::vector<ArgpackType>& types, size_t index, std::vector<int>& state) {
  if (state[index] == 2) return;
  if (state[index] == 1) throw Error("argpack type '" + types[index].name + "' contains itself");
  state[index] = 1;
  ArgpackType& t = types[index];
  uint32_t at = 0;
  for (ArgpackMember& m : t.members) {
    uint32_t align = 4, size = 4;
    switch (m.kind) {
      case MemberKind::Value:
        align = std140_align(m.type);
        size = std140_size(m.type);
        break;
      case MemberKind::Struct:
      case MemberKind::Pack:
        if (m.nested < 0 || static_cast<size_t>(m.nested) >= types.size())
          throw Error("argpack type '" + t.name + "': member '" + m.name + "' names no type");
        layout_one(types, static_cast<size_t>(m.nested), state);
        align = 16;
        size = types[static_cast<size_t>(m.nested)].size;
        break;
      case MemberKind::Ndarray:
      case MemberKind::Texture:
        align = 16;
        size = 32;
        break;
    }
    at = align_up(at, align);
    m.offset = at;
    at += size;
  }
  t.size = align_up(at == 0 ? 16 : at, 16);
  state[index] = 2;
}
}  // namespace

void layout_argpack_types(std::vector<ArgpackType>& types) {
  std::vector<int> state(types.size(), 0);
  for (size_t i = 0; i < types.size(); ++i) layout_one(types, i, state);
}

const ArgpackMember* find_member(const std::vector<ArgpackType>& types, int root,
                                 const std::string& path, uint32_t* offset) {
  uint32_t at = 0;
  int type = root;
  const ArgpackMember* found = nullptr;
  size_t start = 0;
  while (start <= path.size()) {
    if (type < 0 || static_cast<size_t>(type) >= types.size()) return nullptr;
    size_t dot = path.find('.', start);
    std::string name =
        path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    found = nullptr;
    for (const ArgpackMember& m : types[static_cast<size_t>(type)].members)
      if (m.name == name) found = &m;
    if (!found) return nullptr;
    at += found->offset;
    if (dot == std::string::npos) break;
    type = found->nested;
    start = dot + 1;
  }
  if (offset) *offset = at;
  return found;
}

namespace {

void collect_float_ndarrays(const std::vector<ArgpackType>& types, int type,
                            const std::string& prefix, int depth, std::vector<std::string>& out) {
  if (type < 0 || static_cast<size_t>(type) >= types.size() || depth > 16) return;
  for (const ArgpackMember& m : types[static_cast<size_t>(type)].members) {
    if (m.kind == MemberKind::Ndarray && is_float(m.type.scalar)) out.push_back(prefix + m.name);
    if (m.kind == MemberKind::Struct || m.kind == MemberKind::Pack)
      collect_float_ndarrays(types, m.nested, prefix + m.name + ".", depth + 1, out);
  }
}

}  // namespace

std::vector<std::string> float_ndarray_members(const std::vector<ArgpackType>& types, int root) {
  std::vector<std::string> out;
  collect_float_ndarrays(types, root, "", 0, out);
  return out;
}

const ArgpackMember* find_resource_member_at(const std::vector<ArgpackType>& types, int root,
                                             uint32_t offset, std::string* path) {
  if (root < 0 || static_cast<size_t>(root) >= types.size()) return nullptr;
  for (const ArgpackMember& m : types[static_cast<size_t>(root)].members) {
    if (offset < m.offset) continue;
    if (m.kind == MemberKind::Ndarray || m.kind == MemberKind::Texture) {
      if (m.offset != offset) continue;
      if (path) *path = m.name;
      return &m;
    }
    if (m.kind == MemberKind::Value) continue;
    std::string rest;
    const ArgpackMember* inner = find_resource_member_at(types, m.nested, offset - m.offset, &rest);
    if (!inner) continue;
    if (path) *path = m.name + "." + rest;
    return inner;
  }
  return nullptr;
}

}  // namespace loom
