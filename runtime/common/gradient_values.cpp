#include "runtime/common/gradient_values.h"

namespace loom {

namespace {

void add_members(const std::vector<ArgpackType>& types, int type, uint32_t base,
                 const std::string& prefix, int param, std::vector<int>& open,
                 std::vector<GradientValue>& out) {
  if (type < 0 || static_cast<size_t>(type) >= types.size()) return;
  for (int t : open)
    if (t == type) return;  // a cycle: layout_argpack_types refuses it, never followed here
  open.push_back(type);
  for (const ArgpackMember& m : types[static_cast<size_t>(type)].members) {
    uint32_t at = base + m.offset;
    std::string name = prefix + "." + m.name;
    if (m.kind == MemberKind::Struct || m.kind == MemberKind::Pack) {
      add_members(types, m.nested, at, name, param, open, out);
    } else if (m.kind == MemberKind::Value && is_float(m.type.scalar)) {
      GradientValue g{name, param, m.type, {}};
      for (int col = 0; col < m.type.cols; ++col)
        for (int row = 0; row < m.type.rows; ++row)
          g.offsets.push_back(at + std140_component_offset(m.type, row, col));
      out.push_back(std::move(g));
    }
  }
  open.pop_back();
}

}  // namespace

std::vector<GradientValue> gradient_values(const KernelABI& abi,
                                           const std::vector<ArgpackType>& types) {
  std::vector<GradientValue> out;
  for (size_t p = 0; p < abi.params.size(); ++p) {
    const ParamDesc& d = abi.params[p];
    int param = static_cast<int>(p);
    if (d.kind == ParamKind::Value && is_float(d.type.scalar)) {
      GradientValue g{d.name, param, d.type, {}};
      auto width = static_cast<uint32_t>(size_of(d.type.scalar));
      for (int c = 0; c < d.type.components(); ++c) g.offsets.push_back(c * width);
      out.push_back(std::move(g));
    } else if (d.kind == ParamKind::Argpack) {
      std::vector<int> open;
      add_members(types, d.argpack_type, 0, d.name, param, open, out);
    }
  }
  return out;
}

}  // namespace loom
