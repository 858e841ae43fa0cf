#include "compiler/passes/twin_slots.h"

#include "runtime/common/error.h"

namespace loom::passes {

namespace {

bool is_member(const ResourceDesc& r) { return r.param >= 0 && r.param_offset >= 0; }

bool can_have_twin(const ResourceDesc& r) {
  return is_float(r.dtype) && r.kind != ResourceKind::Texture;
}

}  // namespace

std::vector<bool> default_twin_slots(const KernelABI& abi) {
  std::vector<bool> out;
  for (const ResourceDesc& r : abi.resources) out.push_back(can_have_twin(r) && !is_member(r));
  return out;
}

std::vector<int> add_twin_slots(KernelABI& abi, const std::vector<bool>& wanted,
                                const std::string& suffix, const std::string& mode,
                                const std::vector<ArgpackType>& types) {
  const size_t slots = abi.resources.size();
  std::vector<int> twin_of(slots, -1);
  const std::vector<bool> selected = wanted.empty() ? default_twin_slots(abi) : wanted;
  for (size_t s = 0; s < slots; ++s) {
    if (s >= selected.size() || !selected[s]) continue;
    ResourceDesc twin = abi.resources[s];  // a copy: push_back below may move the vector
    if (!can_have_twin(twin))
      throw Error(Place{"", abi.name, -1, ""},
                  "cannot differentiate kernel '" + abi.name + "'" + mode +
                      ": only float fields and ndarrays have derivatives");
    if (twin.kind == ResourceKind::Field) {
      twin.field += suffix;
    } else if (!is_member(twin)) {
      ParamDesc p = abi.params.at(static_cast<size_t>(twin.param));
      p.name += suffix;
      twin.param = static_cast<int>(abi.params.size());
      abi.params.push_back(p);
    } else {  // an argpack's ndarray: its twin comes as a parameter of its own
      const ParamDesc& pack = abi.params.at(static_cast<size_t>(twin.param));
      std::string path;
      const ArgpackMember* m = find_resource_member_at(
          types, pack.argpack_type, static_cast<uint32_t>(twin.param_offset), &path);
      if (!m || m->kind != MemberKind::Ndarray)
        throw Error(Place{"", abi.name, -1, pack.name},
                    "cannot differentiate kernel '" + abi.name + "'" + mode +
                        ": no ndarray member of argpack '" + pack.name + "' at byte " +
                        std::to_string(twin.param_offset));
      ParamDesc p;
      p.name = pack.name + "." + path + suffix;
      p.kind = ParamKind::Ndarray;
      p.type = m->type;
      p.ndim = m->ndim;
      twin.param = static_cast<int>(abi.params.size());
      twin.param_offset = -1;
      abi.params.push_back(p);
    }
    twin_of[s] = static_cast<int>(abi.resources.size());
    abi.resources.push_back(twin);
  }
  return twin_of;
}

}  // namespace loom::passes
