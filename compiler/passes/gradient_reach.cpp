#include "compiler/passes/gradient_reach.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "compiler/ir/inst.h"
#include "compiler/ir/op.h"
#include "compiler/ir/work_count.h"
#include "runtime/common/scalar.h"

namespace loom::passes {

namespace {

using ir::Inst;
using ir::Op;

constexpr int kMaxInputs = 64;  // inputs past these are not followed (one bit each)
constexpr int kMaxRounds = 8;   // variables stored after they are read need another round

// Which differentiated inputs a value depends on, and for which of them it is active.
struct Flow {
  uint64_t depends = 0;
  uint64_t active = 0;
  bool operator==(const Flow&) const = default;
};

class GradientReach {
 public:
  GradientReach(const ir::Kernel& kernel, const std::vector<bool>& slot_has_adjoint)
      : kernel_(kernel) {
    const std::vector<ResourceDesc>& rs = kernel.abi.resources;
    for (size_t s = 0; s < rs.size(); ++s) {
      bool can =
          is_float(rs[s].dtype) && rs[s].kind != ResourceKind::Texture && rs[s].param_offset < 0;
      bool has =
          slot_has_adjoint.empty() ? can : s < slot_has_adjoint.size() && slot_has_adjoint[s];
      slot_input_.push_back(has ? add_input(slot_name(static_cast<int>(s))) : -1);
    }
    for (const ParamDesc& p : kernel.abi.params)
      param_input_.push_back((p.kind == ParamKind::Value && is_float(p.type.scalar)) ||
                                     p.kind == ParamKind::Argpack
                                 ? add_input(p.name)
                                 : -1);
    // The float ndarrays inside argpacks without an adjoint (the launch binds none to the
    // ndarray the pack holds): tracked like inputs, to say where a gradient stops there.
    for (size_t s = 0; s < rs.size(); ++s) {
      bool member = rs[s].param_offset >= 0 && rs[s].kind == ResourceKind::Ndarray &&
                    is_float(rs[s].dtype) && slot_input_[s] < 0;
      int input = member ? add_input(member_name(static_cast<int>(s))) : -1;
      member_input_.push_back(input);
      member_bits_ |= bit(input);
    }
  }

  std::vector<GradientWarning> run() {
    for (int round = 0; round < kMaxRounds; ++round) {
      changed_ = false;
      ir::walk(*kernel_.body, [&](const Inst& in) { forward(in); });
      writers_done_ = true;
      if (!changed_) break;
    }
    // Outputs, walked back to where the gradient stops; one walk per output slot.
    std::unordered_map<int, std::unordered_set<const Inst*>> seen;
    ir::walk(*kernel_.body, [&](const Inst& in) {
      bool global = !in.operands.empty() &&
                    (in.operands[0]->op == Op::GlobalPtr || in.operands[0]->op == Op::ElementPtr);
      if (!global || (in.op != Op::GlobalStore && in.op != Op::AtomicRMW)) return;
      int slot = in.operands[0]->resource_slot();
      const Inst* v = in.operands[1];
      if (member_input(slot) >= 0) {  // into an argpack's ndarray: no gradient comes back
        if (flow(v).depends & ~member_bits_) member_store(in, slot);
        return;
      }
      if (slot_input(slot) < 0) return;
      uint64_t members = flow(v).depends & member_bits_;
      for (size_t s = 0; s < member_input_.size(); ++s)
        if (members & bit(member_input_[s])) member_read(static_cast<int>(s));
      uint64_t missing = flow(v).depends & ~flow(v).active & ~member_bits_;
      if (missing) back(v, missing, slot, seen[slot]);
    });
    std::vector<GradientWarning> out;
    for (const auto& [node, cut] : cuts_) out.push_back({node, message(cut)});
    for (auto& [slot, warning] : member_warnings_) out.push_back(std::move(warning));
    std::stable_sort(
        out.begin(), out.end(),
        [](const GradientWarning& a, const GradientWarning& b) { return a.node < b.node; });
    std::stable_sort(
        out.begin(), out.end(),
        [](const GradientWarning& a, const GradientWarning& b) { return a.node < b.node; });
    return out;
  }

 private:
  struct Cut {
    const Inst* op = nullptr;
    uint64_t inputs = 0;
    std::set<std::string> outputs;
  };

  int add_input(const std::string& name) {
    if (names_.size() >= kMaxInputs) return -1;
    names_.push_back(name);
    return static_cast<int>(names_.size()) - 1;
  }

  std::string slot_name(int slot) const {
    const ResourceDesc& r = kernel_.abi.resources[static_cast<size_t>(slot)];
    if (r.kind == ResourceKind::Field) return r.field;
    if (r.param >= 0 && static_cast<size_t>(r.param) < kernel_.abi.params.size())
      return kernel_.abi.params[static_cast<size_t>(r.param)].name;
    return "slot " + std::to_string(slot);
  }

  // "p.grid": the parameter and the member's path, as lowering recorded it.
  std::string member_name(int slot) const {
    for (const ResourceAccess& a : kernel_.abi.resource_access)
      if (a.slot == slot) return a.name;
    return slot_name(slot);
  }

  int member_input(int slot) const {
    return slot >= 0 && static_cast<size_t>(slot) < member_input_.size()
               ? member_input_[static_cast<size_t>(slot)]
               : -1;
  }

  // An argpack's float ndarray without an adjoint (the ndarray the pack holds there has no
  // NAME.grad): a differentiated output that depends on what the kernel reads from it gets no
  // gradient into it, said at its first read.
  void member_read(int slot) {
    if (member_warnings_.count(slot)) return;
    int32_t node = -1;
    ir::walk(*kernel_.body, [&](const Inst& in) {
      if (node < 0 && in.op == Op::GlobalLoad && in.operands[0]->resource_slot() == slot)
        node = in.node;
    });
    member_warnings_[slot] = {
        node, "the ndarray of argpack member '" + member_name(slot) +
                  "' gets no gradient though what the kernel writes depends on it: the ndarray "
                  "the argpack holds there has no adjoint; declare that ndarray \"needs_grad\" "
                  "to have its NAME.grad filled (docs/autodiff.md)"};
  }

  // A store into one of them of a value that depends on a differentiated input: the gradient
  // of what it stores never reaches that input.
  void member_store(const Inst& store, int slot) {
    if (member_warnings_.count(slot)) return;
    member_warnings_[slot] = {
        store.node, "what this stores into the ndarray of argpack member '" + member_name(slot) +
                        "' depends on differentiated inputs, but the ndarray the argpack holds "
                        "there has no adjoint, so no gradient flows back through it; declare that "
                        "ndarray \"needs_grad\" to have its NAME.grad used (docs/autodiff.md)"};
  }

  int slot_input(int slot) const {
    return slot >= 0 && static_cast<size_t>(slot) < slot_input_.size()
               ? slot_input_[static_cast<size_t>(slot)]
               : -1;
  }

  static uint64_t bit(int input) { return input < 0 ? 0 : uint64_t{1} << input; }

  Flow flow(const Inst* v) const {
    auto it = flows_.find(v);
    return it == flows_.end() ? Flow{} : it->second;
  }

  // A variable or local array takes in what is stored into it, wherever.
  void store_into(const Inst* var, const Inst* value) {
    Flow& f = flows_[var];
    Flow before = f;
    Flow v = flow(value);
    f.depends |= v.depends;
    f.active |= v.active;
    if (!(f == before)) changed_ = true;
    if (writers_done_) return;
    writers_[var].push_back(value);
  }

  // The operands whose values flow into `in`'s value (not its addresses or conditions).
  static size_t first_value_operand(const Inst& in) { return in.op == Op::Select ? 1 : 0; }

  void forward(const Inst& in) {
    switch (in.op) {
      case Op::GlobalLoad: {
        const Inst* p = in.operands[0];
        if (p->op != Op::GlobalPtr && p->op != Op::ElementPtr) return;
        uint64_t b = bit(slot_input(p->resource_slot()));
        flows_[&in] = {b | bit(member_input(p->resource_slot())), b};  // members: never active
        return;
      }
      case Op::ArgLoad: {
        auto p = static_cast<size_t>(in.param_index());
        uint64_t b = p < param_input_.size() && is_float(in.type) ? bit(param_input_[p]) : 0;
        flows_[&in] = {b, b};
        return;
      }
      case Op::LocalLoad:
      case Op::ArrayLoad: flows_[&in] = flow(in.operands[0]); return;
      case Op::LocalStore: store_into(in.operands[0], in.operands[1]); return;
      case Op::ArrayStore: store_into(in.operands[0], in.operands[2]); return;
      case Op::AtomicRMW:
        if (in.operands[0]->op != Op::Alloca) return;
        flows_[&in] = flow(in.operands[0]);
        store_into(in.operands[0], in.operands[1]);
        return;
      default: break;
    }
    if (!ir::is_value_op(in.op)) return;
    bool differentiable =
        is_float(in.type) && ir::op_info(in.op).gradient == ir::Differentiable::Yes;
    Flow f;
    for (size_t i = first_value_operand(in); i < in.operands.size(); ++i) {
      Flow o = flow(in.operands[i]);
      f.depends |= o.depends;
      if (differentiable && is_float(in.operands[i]->type)) f.active |= o.active;
    }
    flows_[&in] = f;
  }

  void back(const Inst* from, uint64_t missing, int slot, std::unordered_set<const Inst*>& seen) {
    std::vector<const Inst*> stack = {from};
    while (!stack.empty()) {
      ir::count_work();
      const Inst* n = stack.back();
      stack.pop_back();
      Flow fn = flow(n);
      uint64_t bits = fn.depends & missing & ~fn.active;
      if (!bits || !seen.insert(n).second) continue;
      std::vector<const Inst*> sources;
      if (n->op == Op::LocalLoad || n->op == Op::ArrayLoad || n->op == Op::AtomicRMW) {
        auto it = writers_.find(n->operands[0]);
        if (it != writers_.end()) sources = it->second;
      } else if (ir::is_value_op(n->op)) {
        for (size_t i = first_value_operand(*n); i < n->operands.size(); ++i)
          sources.push_back(n->operands[i]);
      }
      uint64_t stopped = 0;
      for (const Inst* s : sources) {
        Flow fs = flow(s);
        stopped |= fs.active & bits;
        if (fs.depends & bits & ~fs.active) stack.push_back(s);
      }
      if (!stopped) continue;
      Cut& cut = cuts_[n->node];
      if (!cut.op) cut.op = n;
      cut.inputs |= stopped;
      cut.outputs.insert(slot_name(slot));
    }
  }

  static std::string list(const std::vector<std::string>& names) {
    std::string s;
    for (size_t i = 0; i < names.size(); ++i)
      s += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i];
    return s;
  }

  std::string message(const Cut& cut) const {
    std::vector<std::string> inputs;
    for (size_t i = 0; i < names_.size(); ++i)
      if (cut.inputs & bit(static_cast<int>(i))) inputs.push_back(names_[i]);
    std::vector<std::string> outputs(cut.outputs.begin(), cut.outputs.end());
    std::string op(ir::op_name(cut.op->op));
    if (cut.op->op == Op::Cast) op = "conversion to " + std::string(scalar_name(cut.op->type));
    std::string in = list(inputs);
    std::string out = list(outputs);
    return "the gradient of " + out + " with respect to " + in + " stops at this " + op +
           ", which is constant for gradients: what the kernel writes to " + out + " depends on " +
           in +
           " only through ops without a derivative (integer math, "
           "comparisons, rounding, bit operations, conversions to integers), so the adjoint "
           "passes nothing from " +
           out + " to " + in + " (docs/autodiff.md)";
  }

  const ir::Kernel& kernel_;
  std::vector<std::string> names_;  // by input
  std::vector<int> slot_input_;     // by slot: its input, or -1
  std::vector<int> param_input_;    // by parameter
  std::vector<int> member_input_;   // by slot: an argpack's float ndarray's input, or -1
  uint64_t member_bits_ = 0;
  std::map<int, GradientWarning> member_warnings_;  // by slot
  std::unordered_map<const Inst*, Flow> flows_;
  std::unordered_map<const Inst*, std::vector<const Inst*>> writers_;
  bool writers_done_ = false;
  bool changed_ = false;
  std::map<int32_t, Cut> cuts_;  // by node
};

}  // namespace

std::vector<GradientWarning> gradient_reach(const ir::Kernel& kernel,
                                            const std::vector<bool>& slot_has_adjoint) {
  return GradientReach(kernel, slot_has_adjoint).run();
}

}  // namespace loom::passes
