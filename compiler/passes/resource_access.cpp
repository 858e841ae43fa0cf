#include "compiler/passes/resource_access.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "compiler/ir/inst.h"
#include "runtime/common/error.h"

namespace loom::passes {

namespace {

using ir::Inst;
using ir::Op;

// The slot a global_load/global_store/atomic's pointer points into; -1 for a local variable.
int32_t pointer_slot(const Inst& pointer) {
  if (pointer.op == Op::GlobalPtr || pointer.op == Op::ElementPtr) return pointer.resource_slot();
  return -1;
}

// What `inst` does to a resource slot, or {-1, 0} when it touches none.
std::pair<int32_t, uint8_t> access_of(const Inst& inst, const KernelABI& abi) {
  switch (inst.op) {
    case Op::GlobalLoad: return {pointer_slot(*inst.operand(0)), kResourceRead};
    case Op::GlobalStore: return {pointer_slot(*inst.operand(0)), kResourceWrite};
    case Op::AtomicRMW: return {pointer_slot(*inst.operand(0)), kResourceAtomic};
    case Op::TexLoad:
    case Op::TexSample: return {inst.resource_slot(), kResourceRead};
    case Op::TexStore: return {inst.resource_slot(), kResourceWrite};
    // Memory the launch owns (locals, kernel temporaries) and pointers, which touch
    // nothing until a load, store or atomic uses them.
    case Op::Alloca:
    case Op::LocalLoad:
    case Op::LocalStore:
    case Op::LocalArray:
    case Op::ArrayLoad:
    case Op::ArrayStore:
    case Op::TmpLoad:
    case Op::TmpStore:
    case Op::Reduce:
    case Op::GlobalPtr:
    case Op::ElementPtr:
    case Op::ArgLoad: return {-1, 0};  // a parameter's bytes, not a resource
    default: break;
  }
  // A memory op added to ops.def without a case above would go unreported: a render graph
  // would then miss a dependency, so it is Loom's bug, said loudly.
  if (ir::op_info(inst.op).gradient == ir::Differentiable::Memory)
    throw InternalError(Place{"", abi.name}, "record_resource_access does not know memory op '" +
                                                 std::string(ir::op_info(inst.op).name) + "'");
  return {-1, 0};
}

std::string slot_name(const KernelABI& abi, int32_t slot,
                      const std::map<int32_t, std::string>& lowered_names) {
  const ResourceDesc& r = abi.resources[static_cast<size_t>(slot)];
  if (r.kind == ResourceKind::Field) return r.field;
  const std::string& param = abi.params[static_cast<size_t>(r.param)].name;
  if (r.param_offset < 0) return param;
  auto named = lowered_names.find(slot);
  if (named != lowered_names.end()) return named->second;
  // A kernel built without the graph front end: the member's byte offset is all there is.
  return param + "@" + std::to_string(r.param_offset);
}

}  // namespace

bool record_resource_access(ir::Kernel& kernel) {
  KernelABI& abi = kernel.abi;
  std::map<int32_t, std::string> lowered_names;
  for (ResourceAccess& a : abi.resource_access) lowered_names[a.slot] = std::move(a.name);
  std::map<int32_t, uint8_t> bits;  // ordered: the list comes out in slot order
  ir::walk(static_cast<const ir::Block&>(*kernel.body), [&](const Inst& inst) {
    auto [slot, access] = access_of(inst, abi);
    if (slot < 0) return;
    if (static_cast<size_t>(slot) >= abi.resources.size())
      throw InternalError(Place{"", abi.name, inst.node, ""},
                          "resource slot " + std::to_string(slot) + " is past the kernel's " +
                              std::to_string(abi.resources.size()));
    bits[slot] |= access;
  });
  abi.resource_access.clear();
  for (const auto& [slot, access] : bits)
    abi.resource_access.push_back({slot, slot_name(abi, slot, lowered_names), access});
  abi.resource_access_known = true;
  return false;
}

}  // namespace loom::passes
