#include "compiler/passes/twin_slots.h"

#include "runtime/common/error.h"

namespace loom::passes {

namespace {

bool can_have_twin(const ResourceDesc& r) {
  return is_float(r.dtype) && r.kind != ResourceKind::Texture && r.param_offset < 0;
}

}  // namespace

std::vector<bool> default_twin_slots(const KernelABI& abi) {
  std::vector<bool> out;
  for (const ResourceDesc& r : abi.resources) out.push_back(can_have_twin(r));
  return out;
}

std::vector<int> add_twin_slots(KernelABI& abi, const std::vector<bool>& wanted,
                                const std::string& suffix, const std::string& mode) {
  const size_t slots = abi.resources.size();
  std::vector<int> twin_of(slots, -1);
  for (size_t s = 0; s < slots; ++s) {
    ResourceDesc twin = abi.resources[s];  // a copy: push_back below may move the vector
    bool can = can_have_twin(twin);
    bool selected = wanted.empty() ? can : s < wanted.size() && wanted[s];
    if (!selected) continue;
    if (!can)
      throw Error(Place{"", abi.name, -1, ""},
                  "cannot differentiate kernel '" + abi.name + "'" + mode +
                      ": only float fields and ndarray parameters have derivatives");
    if (twin.kind == ResourceKind::Field) {
      twin.field += suffix;
    } else {
      ParamDesc p = abi.params.at(static_cast<size_t>(twin.param));
      p.name += suffix;
      twin.param = static_cast<int>(abi.params.size());
      abi.params.push_back(p);
    }
    twin_of[s] = static_cast<int>(abi.resources.size());
    abi.resources.push_back(twin);
  }
  return twin_of;
}

}  // namespace loom::passes
