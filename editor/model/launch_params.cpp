#include "editor/model/launch_params.h"

#include <cstring>

#include "runtime/common/argpack_layout.h"
#include "runtime/common/scalar.h"

namespace loom::editor {

namespace {

constexpr const char* kSuffixes[] = {".grad", ".dual"};

// The twins of the float ndarrays argpack parameter `pack` holds (argpack_layout.h).
void member_twins(const graph::Document& doc, const graph::KernelParam& pack,
                  const std::string& suffix, std::vector<LaunchParam>& out) {
  int type = doc.argpack_type(pack.type);
  for (const std::string& path : float_ndarray_members(doc.argpack_types, type)) {
    const ArgpackMember* m = find_member(doc.argpack_types, type, path, nullptr);
    out.push_back({{pack.name + "." + path + suffix, graph::ParamKind::Ndarray,
                    value_type_name(m->type), m->ndim},
                   true});
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
        member_twins(doc, p, suffix, out);
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
