#include "editor/model/launch_params.h"

#include <cstring>

#include "runtime/common/scalar.h"

namespace loom::editor {

namespace {

constexpr const char* kSuffixes[] = {".grad", ".dual"};

// Float ndarray members of argpack type `type` (through structs and nested packs), as twins
// of parameter `pack` with `suffix`.
void member_twins(const graph::Document& doc, int type, const std::string& prefix,
                  const std::string& suffix, int depth, std::vector<LaunchParam>& out) {
  if (type < 0 || static_cast<size_t>(type) >= doc.argpack_types.size() || depth > 16) return;
  for (const ArgpackMember& m : doc.argpack_types[static_cast<size_t>(type)].members) {
    if (m.kind == MemberKind::Ndarray && is_float(m.type.scalar))
      out.push_back(
          {{prefix + m.name + suffix, graph::ParamKind::Ndarray, value_type_name(m.type), m.ndim},
           true});
    if (m.kind == MemberKind::Struct || m.kind == MemberKind::Pack)
      member_twins(doc, m.nested, prefix + m.name + ".", suffix, depth + 1, out);
  }
}

}  // namespace

const graph::KernelDecl* launched_kernel(const graph::Document& doc, const std::string& kernel,
                                         std::string* suffix) {
  if (suffix) suffix->clear();
  if (const graph::KernelDecl* k = doc.kernel(kernel)) return k;
  for (const char* s : kSuffixes) {
    if (!kernel.ends_with(s)) continue;
    const graph::KernelDecl* k = doc.kernel(kernel.substr(0, kernel.size() - std::strlen(s)));
    if (!k) continue;
    if (suffix) *suffix = s;
    return k;
  }
  return nullptr;
}

bool launches_kernel(const std::string& launch, const std::string& kernel) {
  if (launch == kernel) return true;
  for (const char* s : kSuffixes)
    if (launch == kernel + s) return true;
  return false;
}

std::vector<LaunchParam> launch_params(const graph::Document& doc, const std::string& kernel) {
  std::string suffix;
  const graph::KernelDecl* k = launched_kernel(doc, kernel, &suffix);
  std::vector<LaunchParam> out;
  if (!k) return out;
  for (const graph::KernelParam& p : k->params) out.push_back({p, false});
  if (suffix.empty()) return out;
  const bool tangent = suffix == ".dual";
  for (const graph::KernelParam& p : k->params) {
    auto type = parse_value_type(p.type);
    switch (p.kind) {
      case graph::ParamKind::Ndarray:
        if (!type || is_float(type->scalar))  // an open element type may be a float one
          out.push_back({{p.name + suffix, p.kind, p.type, p.ndim}, true});
        break;
      case graph::ParamKind::Value:
        if (tangent && type && is_float(type->scalar))
          out.push_back({{p.name + suffix, p.kind, p.type, 0}, true});
        break;
      case graph::ParamKind::Argpack:
        if (tangent) out.push_back({{p.name + suffix, p.kind, p.type, 0}, true});
        member_twins(doc, doc.argpack_type(p.type), p.name + ".", suffix, 0, out);
        break;
      case graph::ParamKind::Texture:
      case graph::ParamKind::Template: break;
    }
  }
  return out;
}

std::vector<std::string> launch_choices(const graph::KernelDecl& kernel) {
  return {kernel.name, kernel.name + kSuffixes[0], kernel.name + kSuffixes[1]};
}

}  // namespace loom::editor
