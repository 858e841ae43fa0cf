#include "compiler/passes/autodiff.h"

#include <map>
#include <unordered_map>
#include <unordered_set>

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

std::string adjoint_name(const std::string& name) { return name + ".grad"; }

namespace {

bool is_loop(Op op) { return op == Op::RangeFor || op == Op::StructFor || op == Op::While; }

class Adjoint {
 public:
  Adjoint(const ir::Kernel& primal, const AdjointOptions& options)
      : primal_(primal), out_(std::make_unique<ir::Kernel>()) {
    out_->abi = primal.abi;
    out_->abi.name = adjoint_name(primal.abi.name);
    out_->abi.returns.clear();
    out_->abi.resource_access.clear();
    out_->abi.resource_access_known = false;
    out_->abi.extent_assumptions.clear();
    out_->abi.extent_assumptions_known = false;
    out_->debug = primal.debug;
    out_->fast_math = primal.fast_math;
    out_->index_bits = primal.index_bits;
    out_->workgroup_size = primal.workgroup_size;
    out_->block_local_slots = primal.block_local_slots;
    adjoint_slot_ = add_twin_slots(out_->abi, options.slot_has_adjoint, adjoint_name(""), "");
  }

  std::unique_ptr<ir::Kernel> run() {
    ir::walk(*primal_.body, [&](const Inst& in) {
      for (const Inst* o : in.operands) has_uses_.insert(o);
    });
    Block* body = out_->body.get();
    Builder top(body);
    // One accumulator per float component of every value parameter, returned at the end.
    for (size_t p = 0; p < primal_.abi.params.size(); ++p) {
      const ParamDesc& d = primal_.abi.params[p];
      if (d.kind != ParamKind::Value || !is_float(d.type.scalar)) continue;
      out_->abi.returns.push_back(d.type);
      int width = size_of(d.type.scalar);
      for (int c = 0; c < d.type.components(); ++c) {
        Inst* acc = top.alloca_(d.type.scalar);
        param_accumulators_[{static_cast<int>(p), c * width}] = acc;
        returned_.push_back(acc);
      }
    }
    Scope scope{primal_.body.get(), nullptr, {}, {}, {}};
    reverse_block(scope, body, /*in_parallel_loop=*/false);
    Builder end(body);
    if (!returned_.empty()) {
      auto ret = std::make_unique<Inst>(Op::Return, Scalar::Void);
      for (Inst* acc : returned_) ret->operands.push_back(end.local_load(acc));
      end.insert(std::move(ret));
    }
    return std::move(out_);
  }

 private:
  // What one reversed block knows: the recomputed copy of each of its primal values, and the
  // variable holding each one's adjoint (and each float variable's and local array's).
  struct Scope {
    const Block* primal;
    const Scope* parent;
    std::unordered_map<const Inst*, Inst*> value;
    std::unordered_map<const Inst*, Inst*> adjoint;
    std::unordered_map<const Inst*, Inst*> loop;  // primal loop -> its reversed copy
  };

  [[noreturn]] void refuse(const Inst& in, const std::string& why) const {
    throw Error(Place{"", primal_.abi.name, in.node, ""},
                "cannot differentiate kernel '" + primal_.abi.name + "': " + why);
  }

  int adjoint_slot(int slot) const {
    return slot >= 0 && static_cast<size_t>(slot) < adjoint_slot_.size()
               ? adjoint_slot_[static_cast<size_t>(slot)]
               : -1;
  }

  static Inst* find(const Scope* s, const Inst* v,
                    std::unordered_map<const Inst*, Inst*> Scope::*map) {
    for (; s; s = s->parent) {
      auto it = (s->*map).find(v);
      if (it != (s->*map).end()) return it->second;
    }
    return nullptr;
  }

  Inst* value(const Scope& s, const Inst* v) const {
    Inst* c = find(&s, v, &Scope::value);
    if (!c)
      throw InternalError(Place{"", primal_.abi.name, v->node, ""},
                          "autodiff: a value used before it was recomputed");
    return c;
  }

  // A copy of `in` (no regions) with its operands recomputed in `s`.
  Inst* copy(Scope& s, Builder& b, const Inst& in) {
    auto c = std::make_unique<Inst>(in.op, in.type);
    c->bits = in.bits;
    c->text = in.text;
    c->node = in.node;
    c->copy_attributes_from(in);
    for (const Inst* o : in.operands) {
      Inst* loop = is_loop(o->op) ? find(&s, o, &Scope::loop) : nullptr;
      c->operands.push_back(loop ? loop : value(s, o));
    }
    Inst* made = b.insert(std::move(c));
    s.value[&in] = made;
    return made;
  }

  // Recomputes the values of `primal` into `b`: everything but the kernel's effects on
  // global memory (they happened in the primal launch) and the loops (reversed later).
  void recompute(Scope& s, Builder& b, const Block& primal, bool in_parallel_loop) {
    for (const auto& owned : primal.insts) {
      const Inst& in = *owned;
      switch (in.op) {
        case Op::GlobalStore:
        case Op::TexStore:
        case Op::Return:
        case Op::Assert:
        case Op::BoundsCheck: break;
        case Op::AtomicRMW:
          if (in.operands[0]->op == Op::Alloca) {
            copy(s, b, in);
          } else if (has_uses_.count(&in)) {
            refuse(in, "it uses the value an atomic returns");
          }
          break;
        case Op::Rand: refuse(in, "it draws random numbers (the reverse sweep would draw others)");
        case Op::RangeFor:
        case Op::StructFor:
        case Op::While:
          if (in_parallel_loop || in.op == Op::While)
            refuse(in,
                   "it has a loop inside a parallel loop or a serial loop (not yet "
                   "differentiable: the reverse sweep needs a stack of the values each "
                   "iteration overwrote)");
          break;  // a parallel loop: reversed by reverse_block
        case Op::Break:
        case Op::Continue: refuse(in, "it leaves a loop early (not yet differentiable)");
        case Op::If: {
          Inst* c = b.if_(value(s, in.operands[0]));
          for (size_t r = 0; r < 2; ++r) {
            Scope inner{in.region(r), &s, {}, {}, {}};
            Builder rb(c->region(r));
            recompute(inner, rb, *in.region(r), in_parallel_loop);
          }
          break;
        }
        default:
          if (ir::has_regions(in.op))
            throw InternalError(Place{"", primal_.abi.name, in.node, ""},
                                "autodiff: unexpected region " + std::string(ir::op_name(in.op)));
          copy(s, b, in);
      }
    }
  }

  // The variable holding the adjoint of `v`, or nullptr (not a float, or a constant).
  Inst* adjoint_of(const Scope& s, const Inst* v) const { return find(&s, v, &Scope::adjoint); }

  // adjoint(v) += contribution.
  void accumulate(const Scope& s, Builder& b, const Inst* v, Inst* contribution) {
    if (!contribution) return;
    Inst* acc = nullptr;
    if (v->op == Op::ArgLoad) {
      auto it = param_accumulators_.find({v->param_index(), v->byte_offset()});
      if (it != param_accumulators_.end()) acc = it->second;
    } else {
      acc = adjoint_of(s, v);
    }
    if (!acc) return;
    b.local_store(acc, b.binary(Op::Add, b.local_load(acc), contribution));
  }

  Inst* adjoint_pointer(Scope& s, Builder& b, const Inst& ptr) {
    int slot = adjoint_slot(ptr.resource_slot());
    if (slot < 0) return nullptr;
    std::vector<Inst*> indices;
    for (const Inst* i : ptr.operands) indices.push_back(value(s, i));
    return b.global_ptr(ptr.type, slot, indices, ptr.component());
  }

  // Refuses a branch that reads a variable defined outside it: its recomputation inside the
  // reversed branch would read the variable as the whole block left it.
  void check_branch_reads(const Block& branch, const Inst& owner) {
    ir::walk(branch, [&](const Inst& in) {
      if ((in.op == Op::LocalLoad || in.op == Op::ArrayLoad) &&
          !ir::is_inside(in.operands[0], &branch))
        refuse(in, "a branch (node " + std::to_string(owner.node) +
                       ") reads a variable defined outside it (not yet differentiable)");
    });
  }

  void reverse_block(Scope& s, Block* out, bool in_parallel_loop) {
    Builder b(out);
    const Block& primal = *s.primal;
    // Adjoint variables first, so they dominate every accumulation into them.
    for (const auto& owned : primal.insts) {
      const Inst& in = *owned;
      if (!is_float(in.type)) continue;
      if (in.op == Op::Const || in.op == Op::ArgLoad) continue;
      if (in.op == Op::LocalArray) {
        s.adjoint[&in] = b.make(Op::LocalArray, in.type, {}, in.length(), in.width());
      } else if (in.op == Op::Alloca || ir::is_value_op(in.op) || in.op == Op::GlobalLoad ||
                 in.op == Op::LocalLoad || in.op == Op::ArrayLoad ||
                 (in.op == Op::AtomicRMW && in.operands[0]->op == Op::Alloca)) {
        s.adjoint[&in] = b.alloca_(in.type);
      }
    }
    recompute(s, b, primal, in_parallel_loop);
    for (auto it = primal.insts.rbegin(); it != primal.insts.rend(); ++it) {
      const Inst& in = **it;
      b.set_node(in.node);
      reverse(s, b, in, in_parallel_loop);
    }
  }

  void reverse(Scope& s, Builder& b, const Inst& in, bool in_parallel_loop) {
    switch (in.op) {
      case Op::RangeFor:
      case Op::StructFor: {
        Inst* loop;
        if (in.op == Op::RangeFor) {
          std::vector<Inst*> bounds;
          for (const Inst* o : in.operands) bounds.push_back(value(s, o));
          loop = b.range_for(bounds);
        } else {
          loop = b.struct_for(in.resource_slot(), in.dims());
        }
        Scope inner{in.region(0), &s, {}, {}, {}};
        inner.loop[&in] = loop;
        reverse_block(inner, loop->region(0), true);
        return;
      }
      case Op::If: {
        check_branch_reads(*in.region(0), in);
        check_branch_reads(*in.region(1), in);
        Inst* c = b.if_(value(s, in.operands[0]));
        for (size_t r = 0; r < 2; ++r) {
          Scope inner{in.region(r), &s, {}, {}, {}};
          reverse_block(inner, c->region(r), in_parallel_loop);
        }
        return;
      }
      case Op::GlobalLoad: {
        Inst* acc = adjoint_of(s, &in);
        if (!acc) return;
        if (Inst* p = adjoint_pointer(s, b, *in.operands[0]))
          b.atomic(ir::AtomicOp::Add, p, b.local_load(acc));
        return;
      }
      case Op::GlobalStore: {
        if (!is_float(in.operands[1]->type)) return;
        // The store overwrote the element: its adjoint passes to the stored value and the
        // overwritten value's adjoint starts at 0 (what a kernel that updates state in place,
        // x = f(x), needs when a tape reverses many launches).
        if (Inst* p = adjoint_pointer(s, b, *in.operands[0])) {
          accumulate(s, b, in.operands[1], b.global_load(p));
          b.global_store(p, b.const_float(in.operands[1]->type, 0.0));
        }
        return;
      }
      case Op::AtomicRMW: {
        const Inst* target = in.operands[0];
        const Inst* v = in.operands[1];
        if (!is_float(v->type)) return;
        ir::AtomicOp op = in.atomic_op();
        if (target->op == Op::Alloca) {  // a variable updated in place
          Inst* var_adj = adjoint_of(s, target);
          if (!var_adj) return;
          if (op != ir::AtomicOp::Add && op != ir::AtomicOp::Sub)
            refuse(in, "it takes the atomic " + std::string(ir::atomic_op_name(op)) +
                           " of a variable (not differentiable)");
          Inst* g = b.local_load(var_adj);
          accumulate(s, b, v, op == ir::AtomicOp::Sub ? b.unary(Op::Neg, g) : g);
          return;
        }
        Inst* p = adjoint_pointer(s, b, *target);
        if (!p) return;
        if (op != ir::AtomicOp::Add && op != ir::AtomicOp::Sub)
          refuse(in, "it takes the atomic " + std::string(ir::atomic_op_name(op)) +
                         " of memory with an adjoint (not differentiable)");
        Inst* g = b.global_load(p);
        accumulate(s, b, v, op == ir::AtomicOp::Sub ? b.unary(Op::Neg, g) : g);
        return;
      }
      case Op::LocalLoad: {
        Inst* acc = adjoint_of(s, &in);
        if (acc) accumulate(s, b, in.operands[0], b.local_load(acc));
        return;
      }
      case Op::LocalStore: {
        Inst* var_adj = adjoint_of(s, in.operands[0]);
        if (!var_adj) return;
        accumulate(s, b, in.operands[1], b.local_load(var_adj));
        b.local_store(var_adj, b.const_float(in.operands[0]->type, 0.0));
        return;
      }
      case Op::ArrayLoad: {
        Inst* acc = adjoint_of(s, &in);
        Inst* arr_adj = adjoint_of(s, in.operands[0]);
        if (!acc || !arr_adj) return;
        Inst* index = value(s, in.operands[1]);
        Inst* old = b.make(Op::ArrayLoad, in.type, {arr_adj, index}, in.component());
        Inst* sum = b.binary(Op::Add, old, b.local_load(acc));
        b.make(Op::ArrayStore, Scalar::Void, {arr_adj, index, sum}, in.component());
        return;
      }
      case Op::ArrayStore: {
        Inst* arr_adj = adjoint_of(s, in.operands[0]);
        if (!arr_adj || !is_float(in.operands[2]->type)) return;
        Inst* index = value(s, in.operands[1]);
        Scalar ty = in.operands[2]->type;
        accumulate(s, b, in.operands[2],
                   b.make(Op::ArrayLoad, ty, {arr_adj, index}, in.component()));
        b.make(Op::ArrayStore, Scalar::Void, {arr_adj, index, b.const_float(ty, 0.0)},
               in.component());
        return;
      }
      default: break;
    }
    (void)in_parallel_loop;
    if (ir::op_info(in.op).gradient != ir::Differentiable::Yes) return;
    Inst* acc = adjoint_of(s, &in);
    if (!acc) return;
    Inst* g = b.local_load(acc);
    Inst* recomputed = value(s, &in);
    for (size_t i = 0; i < in.operands.size(); ++i) {
      const Inst* o = in.operands[i];
      if (o->op == Op::Const || !is_float(o->type)) continue;
      accumulate(s, b, o, ir::operand_adjoint(b, *recomputed, static_cast<int>(i), g));
    }
  }

  const ir::Kernel& primal_;
  std::unique_ptr<ir::Kernel> out_;
  std::vector<int> adjoint_slot_;
  std::map<std::pair<int, int>, Inst*> param_accumulators_;
  std::vector<Inst*> returned_;
  std::unordered_set<const Inst*> has_uses_;
};

}  // namespace

std::unique_ptr<ir::Kernel> make_adjoint(const ir::Kernel& primal, const AdjointOptions& options) {
  return Adjoint(primal, options).run();
}

}  // namespace loom::passes
