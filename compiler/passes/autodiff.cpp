#include "compiler/passes/autodiff.h"

#include <map>
#include <unordered_map>
#include <unordered_set>

#include "compiler/ir/builder.h"
#include "compiler/ir/derivative.h"
#include "compiler/ir/op.h"
#include "compiler/passes/ad_loops.h"
#include "compiler/passes/twin_slots.h"
#include "runtime/common/error.h"
#include "runtime/common/gradient_values.h"

namespace loom::passes {

using ir::Block;
using ir::Builder;
using ir::Inst;
using ir::Op;

std::string adjoint_name(const std::string& name) { return name + ".grad"; }

namespace {

bool is_loop(Op op) { return op == Op::RangeFor || op == Op::StructFor || op == Op::While; }

// What one thread's stacks may take, all of a kernel's together: far below the stack of a CPU
// pool thread and of the threads lavapipe runs invocations on.
constexpr int64_t kMaxStackBytes = int64_t{1} << 20;
constexpr int kMaxStackEntries = 1 << 16;

// The primal with its loops in the forms the adjoint reverses (ad_loops.h).
std::unique_ptr<ir::Kernel> normalized(const ir::Kernel& primal,
                                       std::unordered_set<const Inst*>& terminals) {
  std::unique_ptr<ir::Kernel> k = primal.clone();
  terminals = normalize_adjoint_loops(*k);
  return k;
}

class Adjoint {
 public:
  Adjoint(const ir::Kernel& primal, const AdjointOptions& options)
      : work_(normalized(primal, terminals_)),
        primal_(*work_),
        out_(std::make_unique<ir::Kernel>()),
        stack_size_(options.stack_size),
        argpack_types_(options.argpack_types) {
    if (stack_size_ < 1 || stack_size_ > kMaxStackEntries)
      throw Error(Place{"", primal.abi.name, -1, ""},
                  "cannot differentiate kernel '" + primal.abi.name +
                      "': the autodiff stack size " + std::to_string(stack_size_) +
                      " is not in [1, " + std::to_string(kMaxStackEntries) +
                      "] (ProgramOptions::ad_stack_size)");
    out_->abi = primal.abi;
    out_->abi.name = adjoint_name(primal.abi.name);
    out_->abi.returns.clear();
    // The names lowering gave the primal's slots (argpack members: "b.pos") stay; what the
    // derived code does to each is recorded after the passes (resource_access.h).
    for (ResourceAccess& a : out_->abi.resource_access) a.access = 0;
    out_->abi.resource_access_known = false;
    out_->abi.extent_assumptions.clear();
    out_->abi.extent_assumptions_known = false;
    out_->debug = primal.debug;
    out_->fast_math = primal.fast_math;
    out_->index_bits = primal.index_bits;
    out_->workgroup_size = primal.workgroup_size;
    out_->block_local_slots = primal.block_local_slots;
    adjoint_slot_ = add_twin_slots(out_->abi, options.slot_has_adjoint, adjoint_name(""), "",
                                   options.argpack_types);
  }

  std::unique_ptr<ir::Kernel> run() {
    ir::walk(*primal_.body, [&](const Inst& in) {
      for (const Inst* o : in.operands) has_uses_.insert(o);
    });
    Block* body = out_->body.get();
    Builder top(body);
    // One accumulator per float component of every value parameter and argpack member
    // (gradient_values.h), returned at the end.
    for (const GradientValue& g : gradient_values(primal_.abi, argpack_types_)) {
      out_->abi.returns.push_back(g.type);
      for (uint32_t offset : g.offsets) {
        Inst* acc = top.alloca_(g.type.scalar);
        param_accumulators_[{g.param, static_cast<int32_t>(offset)}] = acc;
        returned_.push_back(acc);
      }
    }
    Scope scope(primal_.body.get(), nullptr);
    reverse_block(scope, body);
    Builder end(body);
    if (!returned_.empty()) {
      auto ret = std::make_unique<Inst>(Op::Return, Scalar::Void);
      for (Inst* acc : returned_) ret->operands.push_back(end.local_load(acc));
      end.insert(std::move(ret));
    }
    return std::move(out_);
  }

 private:
  // A variable (or local array) of the adjoint and the copy holding the value it had.
  struct Saved {
    Inst* var;
    Inst* copy;
  };

  // What one reversed block knows: the recomputed copy of each of its primal values, and the
  // variable holding each one's adjoint (and each float variable's and local array's).
  struct Scope {
    Scope(const Block* primal, const Scope* parent) : primal(primal), parent(parent) {}
    const Block* primal;
    const Scope* parent;
    std::unordered_map<const Inst*, Inst*> value;
    std::unordered_map<const Inst*, Inst*> adjoint;
    std::unordered_map<const Inst*, Inst*> loop;  // primal loop -> its reversed copy
    // Per region of this block (if, loop): the outer variables it reads, as they were just
    // before it ran in the recomputation, restored before the region is recomputed again.
    std::unordered_map<const Inst*, std::vector<Saved>> saved;
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

  std::vector<Inst*> values(const Scope& s, const std::vector<Inst*>& primal) const {
    std::vector<Inst*> out;
    out.reserve(primal.size());
    for (const Inst* v : primal) out.push_back(value(s, v));
    return out;
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
  // global memory (they happened in the primal launch) and the parallel loops (reversed
  // later). Serial loops run whole. `reversible`: this block is reversed next (reverse_block),
  // so the outer variables each region reads are saved first for its own recomputation then.
  void recompute(Scope& s, Builder& b, const Block& primal, bool reversible) {
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
        case Op::StructFor: {  // a parallel loop: reversed by reverse()
          if (reversible) save(s, b, in);
          // Its accumulations `v += e` into outer variables run again for what follows.
          if (outer_access(in).written.empty()) break;
          Inst* loop = in.op == Op::RangeFor ? b.range_for(values(s, in.operands))
                                             : b.struct_for(in.resource_slot(), in.dims());
          Scope inner(in.region(0), &s);
          inner.loop[&in] = loop;
          Builder lb(loop->region(0));
          recompute(inner, lb, *in.region(0), false);
          break;
        }
        case Op::While: {
          if (reversible) save(s, b, in);
          Inst* w = b.while_();
          Scope inner(in.region(0), &s);
          Builder wb(w->region(0));
          recompute(inner, wb, *in.region(0), false);
          break;
        }
        case Op::Continue:  // normalize_adjoint_loops turned them into flags
          throw InternalError(Place{"", primal_.abi.name, in.node, ""},
                              "autodiff: a continue left in a loop");
        case Op::If: {
          if (reversible && terminals_.count(&in)) break;  // the reverse sweep runs the count
          if (reversible) save(s, b, in);
          Inst* c = b.if_(value(s, in.operands[0]));
          for (size_t r = 0; r < 2; ++r) {
            Scope inner(in.region(r), &s);
            Builder rb(c->region(r));
            recompute(inner, rb, *in.region(r), false);
          }
          break;
        }
        default:
          if (ir::has_regions(in.op))
            throw InternalError(Place{"", primal_.abi.name, in.node, ""},
                                "autodiff: unexpected region " + std::string(ir::op_name(in.op)));
          copy(s, b, in);  // a break copies too: it leaves a serial loop's copy
      }
    }
  }

  // Element `e` (component `c`) of variable or local array `var`.
  static Inst* load_element(Builder& b, Inst* var, Inst* e, int c) {
    if (var->op == Op::Alloca) return b.local_load(var);
    return b.make(Op::ArrayLoad, var->type, {var, e}, c);
  }
  static void store_element(Builder& b, Inst* var, Inst* e, int c, Inst* v) {
    if (var->op == Op::Alloca) {
      b.local_store(var, v);
      return;
    }
    b.make(Op::ArrayStore, Scalar::Void, {var, e, v}, c);
  }

  // Copies `n` elements of `width` components from `from`, starting at element `from_at`, to
  // `to` at `to_at` (a variable is one element; nullptr offsets: 0).
  static void copy_elements(Builder& b, Inst* to, Inst* to_at, Inst* from, Inst* from_at, int n,
                            int width) {
    if (!to_at) to_at = b.i32(0);
    if (!from_at) from_at = b.i32(0);
    Builder* at = &b;
    Builder inner(b.block());
    Inst* e = b.i32(0);
    if (n > 1) {
      Inst* loop = b.range_for({b.i32(0), b.i32(n)});
      inner.set_insert_end(loop->region(0));
      e = inner.loop_index(loop, 0);
      at = &inner;
    }
    Inst* src = at->binary(Op::Add, from_at, e);
    Inst* dst = at->binary(Op::Add, to_at, e);
    for (int c = 0; c < width; ++c) store_element(*at, to, dst, c, load_element(*at, from, src, c));
  }

  static int elements(const Inst* var) { return var->op == Op::LocalArray ? var->length() : 1; }
  static int width(const Inst* var) { return var->op == Op::LocalArray ? var->width() : 1; }

  // Saves the outer variables `region` reads as they are now.
  void save(Scope& s, Builder& b, const Inst& region) {
    std::vector<Saved>& saved = s.saved[&region];
    for (const Inst* v : outer_access(region).read) {
      Inst* var = value(s, v);
      Inst* copy = v->op == Op::LocalArray
                       ? b.make(Op::LocalArray, v->type, {}, v->length(), v->width())
                       : b.alloca_(v->type);
      copy_elements(b, copy, nullptr, var, nullptr, elements(v), width(v));
      saved.push_back({var, copy});
    }
  }

  // Gives the outer variables `region` reads back the values save() kept.
  void restore(const Scope& s, Builder& b, const Inst& region) {
    auto it = s.saved.find(&region);
    if (it == s.saved.end()) return;
    for (const Saved& v : it->second)
      copy_elements(b, v.var, nullptr, v.copy, nullptr, elements(v.var), width(v.var));
  }

  // A serial loop (a `while` ending in its only break, ad_loops.h), reversed with a stack per
  // variable the loop both reads and overwrites: its outer variables are restored to what they
  // were before it, it runs again pushing those variables at the start of each iteration,
  // then the iterations run backwards, each popping them, recomputing its values and walking
  // its instructions backwards. The adjoints of those variables live outside the loop, so
  // they carry from one reversed iteration to the one before.
  void reverse_serial_loop(Scope& s, Builder& b, const Inst& loop) {
    restore(s, b, loop);
    OuterAccess access = outer_access(loop);
    std::unordered_set<const Inst*> written(access.written.begin(), access.written.end());
    struct Stack {
      Inst* var;
      Inst* entries;
      int n;
      int width;
    };
    std::vector<Stack> stacks;
    for (const Inst* v : access.read) {
      if (!written.count(v)) continue;
      int n = elements(v), w = width(v);
      int64_t scalars = (int64_t{stack_size_} + 1) * n * w;
      stack_bytes_ += scalars * (v->type == Scalar::Bool ? 1 : bit_width(v->type) / 8);
      if (stack_bytes_ > kMaxStackBytes || scalars > INT32_MAX)
        refuse(loop, "its autodiff stacks of " + std::to_string(stack_size_) +
                         " entries per variable would take " + std::to_string(stack_bytes_) +
                         " bytes per thread, more than " + std::to_string(kMaxStackBytes) +
                         " (lower ProgramOptions::ad_stack_size, or carry fewer "
                         "or smaller local arrays through the loop)");
      // One entry more than the option says: the test that ends a loop is an iteration too.
      Inst* entries = b.make(Op::LocalArray, v->type, {}, (stack_size_ + 1) * n, w);
      stacks.push_back({value(s, v), entries, n, w});
    }
    Inst* depth = b.alloca_(Scalar::I32);

    // Forward: the loop again, each iteration first pushing what it will overwrite.
    Inst* forward = b.while_();
    Builder f(forward->region(0));
    f.set_node(loop.node);
    Inst* d = f.local_load(depth);
    auto check = std::make_unique<Inst>(Op::Assert, Scalar::Void);
    check->operands.push_back(f.binary(Op::Le, d, f.i32(stack_size_)));
    check->text =
        "the autodiff stack of " + std::to_string(stack_size_) +
        " entries overflowed: the loop of node " + std::to_string(loop.node) +
        " ran more iterations than the stack holds (the reverse sweep needs the values "
        "each iteration overwrote); raise ProgramOptions::ad_stack_size (loom --ad-stack N)";
    check->set_assert_node(loop.node);
    f.insert(std::move(check));
    for (const Stack& st : stacks)
      copy_elements(f, st.entries, f.binary(Op::Mul, d, f.i32(st.n)), st.var, nullptr, st.n,
                    st.width);
    f.local_store(depth, f.binary(Op::Add, d, f.i32(1)));
    Scope fs(loop.region(0), &s);
    recompute(fs, f, *loop.region(0), false);

    // Reverse: the iterations backwards, each popping what it overwrote.
    Inst* backward = b.while_();
    Builder r(backward->region(0));
    r.set_node(loop.node);
    Inst* left = r.local_load(depth);
    Inst* empty = r.if_(r.binary(Op::Le, left, r.i32(0)));
    Builder(empty->region(0)).make(Op::Break, Scalar::Void);
    Inst* top = r.binary(Op::Sub, left, r.i32(1));
    r.local_store(depth, top);
    for (const Stack& st : stacks)
      copy_elements(r, st.var, nullptr, st.entries, r.binary(Op::Mul, top, r.i32(st.n)), st.n,
                    st.width);
    Scope rs(loop.region(0), &s);
    reverse_block(rs, backward->region(0));
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

  void reverse_block(Scope& s, Block* out) {
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
    recompute(s, b, primal, true);
    for (auto it = primal.insts.rbegin(); it != primal.insts.rend(); ++it) {
      const Inst& in = **it;
      if (terminals_.count(&in)) continue;
      b.set_node(in.node);
      reverse(s, b, in);
    }
  }

  void reverse(Scope& s, Builder& b, const Inst& in) {
    switch (in.op) {
      case Op::While: reverse_serial_loop(s, b, in); return;
      case Op::RangeFor:
      case Op::StructFor: {
        restore(s, b, in);
        Inst* loop;
        if (in.op == Op::RangeFor) {
          loop = b.range_for(values(s, in.operands));
        } else {
          loop = b.struct_for(in.resource_slot(), in.dims());
        }
        Scope inner(in.region(0), &s);
        inner.loop[&in] = loop;
        reverse_block(inner, loop->region(0));
        return;
      }
      case Op::If: {
        restore(s, b, in);
        Inst* c = b.if_(value(s, in.operands[0]));
        for (size_t r = 0; r < 2; ++r) {
          Scope inner(in.region(r), &s);
          reverse_block(inner, c->region(r));
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

  std::unordered_set<const Inst*> terminals_;  // each serial loop's `if (done) break`
  std::unique_ptr<ir::Kernel> work_;           // the primal, loops normalized
  const ir::Kernel& primal_;
  std::unique_ptr<ir::Kernel> out_;
  int stack_size_;
  const std::vector<ArgpackType>& argpack_types_;
  int64_t stack_bytes_ = 0;
  std::vector<int> adjoint_slot_;
  std::map<std::pair<int, int>, Inst*> param_accumulators_;
  std::vector<Inst*> returned_;
  std::unordered_set<const Inst*> has_uses_;
};

}  // namespace

namespace {

// A `return` that skips nothing: the last instruction of its block, whose enclosing regions
// are all `if`s, each the last instruction of its own block. Any other return ends the launch
// before code the adjoint would still reverse (it reverses the kernel as written), so the
// gradients would be wrong: refused, naming the return's node.
void refuse_early_returns(const ir::Kernel& primal) {
  ir::walk(*primal.body, [&](const Inst& in) {
    if (in.op != Op::Return) return;
    for (const Inst* at = &in; at && at->parent; at = at->parent->owner) {
      const Block& b = *at->parent;
      bool last = b.index_of(at) + 1 == b.insts.size();
      bool in_if = !b.owner || b.owner->op == Op::If;
      if (last && in_if) continue;
      throw Error(Place{"", primal.abi.name, in.node, ""},
                  "cannot differentiate kernel '" + primal.abi.name + "': node " +
                      std::to_string(in.node) + " returns early" +
                      (in_if ? ", before code that then does not run"
                             : ", out of a loop whose later iterations then do not run") +
                      ", and the adjoint would reverse that code too (the gradients would be "
                      "wrong); return at the end, or put the rest under an `if` "
                      "(docs/autodiff.md)");
    }
  });
}

}  // namespace

std::unique_ptr<ir::Kernel> make_adjoint(const ir::Kernel& primal, const AdjointOptions& options) {
  refuse_early_returns(primal);
  return Adjoint(primal, options).run();
}

}  // namespace loom::passes
