#include "compiler/passes/forward_mode.h"

#include <unordered_map>
#include <utility>

#include "compiler/ir/builder.h"
#include "compiler/ir/derivative.h"
#include "compiler/ir/op.h"
#include "compiler/passes/twin_slots.h"
#include "runtime/common/error.h"

namespace loom::passes {

using ir::Block;
using ir::Builder;
using ir::Inst;
using ir::Op;

std::string tangent_name(const std::string& name) { return name + ".dual"; }

namespace {

class Tangent {
 public:
  Tangent(const ir::Kernel& primal, const TangentOptions& options) : k_(primal.clone()) {
    k_->abi.name = tangent_name(primal.abi.name);
    // The names lowering gave the primal's slots (argpack members: "b.pos") stay; what the
    // derived code does to each is recorded after the passes (resource_access.h).
    for (ResourceAccess& a : k_->abi.resource_access) a.access = 0;
    k_->abi.resource_access_known = false;
    k_->abi.extent_assumptions.clear();
    k_->abi.extent_assumptions_known = false;
    add_tangent_params(options);
  }

  std::unique_ptr<ir::Kernel> run() {
    transform(*k_->body);
    return std::move(k_);
  }

 private:
  [[noreturn]] void refuse(const Inst& in, const std::string& why) const {
    throw Error(Place{"", k_->abi.name, in.node, ""},
                "cannot differentiate kernel '" + k_->abi.name + "' in forward mode: " + why);
  }

  void add_tangent_params(const TangentOptions& options) {
    KernelABI& abi = k_->abi;
    const size_t params = abi.params.size();
    for (size_t p = 0; p < params; ++p) {
      const ParamDesc& d = abi.params[p];
      bool value = d.kind == ParamKind::Value && is_float(d.type.scalar);
      bool pack = d.kind == ParamKind::Argpack && p < options.argpack_has_tangent.size() &&
                  options.argpack_has_tangent[p];
      if (!value && !pack) continue;
      ParamDesc t = d;
      t.name = tangent_name(d.name);
      value_tangent_[static_cast<int>(p)] = static_cast<int>(abi.params.size());
      abi.params.push_back(t);
    }
    tangent_slot_ = add_twin_slots(abi, options.slot_has_tangent, tangent_name(""),
                                   " in forward mode", options.argpack_types);
  }

  Inst* tangent(const Inst* v) const {
    auto it = tangent_.find(v);
    return it == tangent_.end() ? nullptr : it->second;
  }

  Inst* tangent_pointer(Builder& b, const Inst& ptr) {
    if (ptr.op != Op::GlobalPtr) return nullptr;
    int s = ptr.resource_slot();
    int slot = s >= 0 && static_cast<size_t>(s) < tangent_slot_.size()
                   ? tangent_slot_[static_cast<size_t>(s)]
                   : -1;
    if (slot < 0) return nullptr;
    return b.global_ptr(ptr.type, slot, ptr.operands, ptr.component());
  }

  // Rebuilds `block` in order: each instruction, then what computes its tangent.
  void transform(Block& block) {
    std::vector<std::unique_ptr<Inst>> old = std::move(block.insts);
    block.insts.clear();
    block.insts.reserve(old.size());
    for (auto& owned : old) {
      Inst* in = owned.get();
      block.insts.push_back(std::move(owned));
      for (auto& region : in->regions) transform(*region);
      Builder b(&block);
      b.set_node(in->node);
      emit_tangent(b, *in);
    }
  }

  void emit_tangent(Builder& b, const Inst& in) {
    switch (in.op) {
      case Op::ArgLoad: {
        auto it = value_tangent_.find(in.param_index());
        if (it != value_tangent_.end() && is_float(in.type))
          tangent_[&in] = b.arg(in.type, it->second, in.byte_offset());
        return;
      }
      case Op::GlobalLoad:
        if (Inst* p = tangent_pointer(b, *in.operands[0])) tangent_[&in] = b.global_load(p);
        return;
      case Op::GlobalStore:
        if (!is_float(in.operands[1]->type)) return;
        if (Inst* p = tangent_pointer(b, *in.operands[0]))
          b.global_store(p, tangent_or_zero(b, in.operands[1]));
        return;
      case Op::AtomicRMW: {
        const Inst* target = in.operands[0];
        if (!is_float(in.type)) return;
        ir::AtomicOp op = in.atomic_op();
        bool additive = op == ir::AtomicOp::Add || op == ir::AtomicOp::Sub;
        Inst* t = tangent(in.operands[1]);
        if (target->op == Op::Alloca) {
          Inst* tv = tangent(target);
          if (!tv) return;
          if (!additive)
            refuse(in,
                   "it takes the atomic " + std::string(ir::atomic_op_name(op)) + " of a variable");
          tangent_[&in] = b.local_load(tv);
          if (t) b.atomic(op, tv, t);
          return;
        }
        Inst* p = tangent_pointer(b, *target);
        if (!p) return;
        if (!additive)
          refuse(in, "it takes the atomic " + std::string(ir::atomic_op_name(op)) +
                         " of memory with a tangent");
        Inst* old = b.atomic(op, p, tangent_or_zero(b, in.operands[1]));
        tangent_[&in] = old;
        return;
      }
      case Op::Alloca:
        if (is_float(in.type)) tangent_[&in] = b.alloca_(in.type);
        return;
      case Op::LocalLoad:
        if (Inst* tv = tangent(in.operands[0])) tangent_[&in] = b.local_load(tv);
        return;
      case Op::LocalStore:
        if (Inst* tv = tangent(in.operands[0]))
          b.local_store(tv, tangent_or_zero(b, in.operands[1]));
        return;
      case Op::LocalArray:
        if (is_float(in.type))
          tangent_[&in] = b.make(Op::LocalArray, in.type, {}, in.length(), in.width());
        return;
      case Op::ArrayLoad:
        if (Inst* ta = tangent(in.operands[0]))
          tangent_[&in] = b.make(Op::ArrayLoad, in.type, {ta, in.operands[1]}, in.component());
        return;
      case Op::ArrayStore:
        if (Inst* ta = tangent(in.operands[0]))
          b.make(Op::ArrayStore, Scalar::Void,
                 {ta, in.operands[1], tangent_or_zero(b, in.operands[2])}, in.component());
        return;
      default: break;
    }
    if (ir::op_info(in.op).gradient != ir::Differentiable::Yes || !is_float(in.type)) return;
    Inst* sum = nullptr;
    for (size_t i = 0; i < in.operands.size(); ++i) {
      Inst* t = tangent(in.operands[i]);
      if (!t) continue;
      Inst* share = ir::operand_adjoint(b, in, static_cast<int>(i), t);
      if (!share) continue;
      sum = sum ? b.binary(Op::Add, sum, share) : share;
    }
    if (sum) tangent_[&in] = sum;
  }

  Inst* tangent_or_zero(Builder& b, const Inst* v) {
    Inst* t = tangent(v);
    return t ? t : b.const_float(v->type, 0.0);
  }

  std::unique_ptr<ir::Kernel> k_;
  std::unordered_map<int, int> value_tangent_;  // value parameter -> its tangent parameter
  std::vector<int> tangent_slot_;
  std::unordered_map<const Inst*, Inst*> tangent_;
};

}  // namespace

std::unique_ptr<ir::Kernel> make_tangent(const ir::Kernel& primal, const TangentOptions& options) {
  return Tangent(primal, options).run();
}

}  // namespace loom::passes
