#include "compiler/passes/access_rule.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "compiler/ir/builder.h"
#include "compiler/ir/inst.h"
#include "compiler/ir/op.h"
#include "compiler/ir/work_count.h"
#include "compiler/passes/rewrite.h"
#include "runtime/common/error.h"

namespace loom::passes {

namespace {

using ir::Block;
using ir::Builder;
using ir::Inst;
using ir::Op;

// Starts the text of a primal condition made for a run-time check; the rest is the message.
constexpr std::string_view kMark =
    "\x1f"
    "access_rule\x1f";

constexpr int kMaxRuntimeChecks = 256;  // per kernel; later undecided pairs go unchecked
constexpr size_t kMaxPairs = 1 << 16;   // (write, read) pairs looked at per kernel
constexpr int kMaxDepth = 12;           // of an index expression compared or rebuilt

struct Access {
  Inst* inst;
  const Inst* ptr;    // its global_ptr
  const Inst* scope;  // the top-level loop around it, or null: serial code
  bool write;
};

enum class Same { Yes, No, Unknown };

bool is_loop(Op op) { return op == Op::RangeFor || op == Op::StructFor || op == Op::While; }

// The top-level instruction `in` is inside (itself at top level).
const Inst* top_level(const Inst* in) {
  while (in->parent && in->parent->owner) in = in->parent->owner;
  return in;
}

// By top-level instruction of `kernel`: a loop's ordinal among the top-level loops (1, 2,
// ...), serial code's the ordinal of the next loop. Code the checks insert holds no loop, so
// the primal before and after them numbers its loops alike.
std::unordered_map<const Inst*, int> top_level_ordinals(const ir::Kernel& kernel) {
  std::unordered_map<const Inst*, int> out;
  int loops = 0;
  for (const auto& in : kernel.body->insts) out[in.get()] = is_loop(in->op) ? ++loops : loops + 1;
  return out;
}

class AccessRule {
 public:
  AccessRule(ir::Kernel& kernel, bool shadows)
      : kernel_(kernel), shadows_(shadows && kernel.debug) {}

  AccessRuleChecks run() {
    collect(*kernel_.body, nullptr, true);
    // By read, in program order: the first violation is reported.
    std::unordered_map<int, std::vector<const Access*>> writes;  // by slot, so far
    size_t pairs = 0;
    for (const Access& a : accesses_) {
      std::vector<const Access*>& earlier = writes[a.ptr->resource_slot()];
      if (a.write) {
        earlier.push_back(&a);
        continue;
      }
      for (const Access* w : earlier) {
        if (++pairs > kMaxPairs) break;
        examine(*w, a);
      }
    }
    add_shadow_checks();
    ins_.apply();
    return {checks_, shadows_added_};
  }

 private:
  void collect(Block& block, const Inst* scope, bool top) {
    for (auto& owned : block.insts) {
      ir::count_work();
      Inst* in = owned.get();
      order_[in] = next_order_++;
      const Inst* target = in->operands.empty() ? nullptr : in->operands[0];
      bool memory = in->op == Op::GlobalLoad || in->op == Op::GlobalStore ||
                    (in->op == Op::AtomicRMW && target->op != Op::Alloca);
      if (memory && target->op == Op::GlobalPtr)
        accesses_.push_back({in, target, scope, in->op != Op::GlobalLoad});
      for (auto& region : in->regions) collect(*region, top && is_loop(in->op) ? in : scope, false);
    }
  }

  // The two arms of one `if`: never both in one run.
  static bool exclusive(const Inst* a, const Inst* b) {
    std::unordered_map<const Inst*, const Block*> arms;
    for (const Block* blk = a->parent; blk && blk->owner; blk = blk->owner->parent)
      if (blk->owner->op == Op::If) arms[blk->owner] = blk;
    for (const Block* blk = b->parent; blk && blk->owner; blk = blk->owner->parent) {
      auto it = arms.find(blk->owner);
      if (it != arms.end() && it->second != blk) return true;
    }
    return false;
  }

  static bool same_loop(const Inst* a, const Inst* b, bool rename, int depth) {
    if (a == b) return true;
    if (!rename || a->op != b->op || !a->same_attributes(*b)) return false;
    if (a->op == Op::StructFor) return true;
    if (a->op != Op::RangeFor || a->operands.size() != b->operands.size()) return false;
    for (size_t i = 0; i < a->operands.size(); ++i)
      if (!equal(a->operands[i], b->operands[i], false, depth + 1)) return false;
    return true;
  }

  // Provably the same value. `rename`: in two loops with the same iteration space, the loop
  // variables of the same dimension count as the same (the same iteration of each).
  static bool equal(const Inst* a, const Inst* b, bool rename, int depth) {
    if (a == b) return true;
    if (depth > kMaxDepth || a->op != b->op || a->type != b->type ||
        a->operands.size() != b->operands.size() || !a->same_attributes(*b))
      return false;
    switch (a->op) {
      case Op::Const: return a->bits == b->bits;
      case Op::ArgLoad:
      case Op::ResourceShape: return true;
      case Op::LoopIndex: return same_loop(a->operands[0], b->operands[0], rename, depth);
      default: break;
    }
    if (!ir::is_value_op(a->op)) return false;
    for (size_t i = 0; i < a->operands.size(); ++i)
      if (!equal(a->operands[i], b->operands[i], rename, depth + 1)) return false;
    return true;
  }

  // v as base + constant.
  static std::pair<const Inst*, int64_t> split(const Inst* v) {
    if (!is_int(v->type)) return {v, 0};
    if (v->op == Op::Add && v->operands[1]->is_const())
      return {v->operands[0], v->operands[1]->int_value()};
    if (v->op == Op::Add && v->operands[0]->is_const())
      return {v->operands[1], v->operands[0]->int_value()};
    if (v->op == Op::Sub && v->operands[1]->is_const())
      return {v->operands[0], -v->operands[1]->int_value()};
    return {v, 0};
  }

  // Provably different values; `one_thread`: both computed by the same thread.
  static bool different(const Inst* a, const Inst* b, bool one_thread) {
    if (a->is_const() && b->is_const()) return a->int_value() != b->int_value();
    if (!one_thread) return false;
    auto [base_a, ca] = split(a);
    auto [base_b, cb] = split(b);
    return ca != cb && equal(base_a, base_b, false, 0);
  }

  static Same same_element(const Inst* pw, const Inst* pr, bool one_thread) {
    if (pw->component() != pr->component()) return Same::No;
    if (pw->operands.size() != pr->operands.size()) return Same::Unknown;
    bool all = true;
    for (size_t d = 0; d < pw->operands.size(); ++d) {
      const Inst* a = pw->operands[d];
      const Inst* b = pr->operands[d];
      if (equal(a, b, !one_thread, 0)) continue;
      if (different(a, b, one_thread)) return Same::No;
      all = false;
    }
    return all ? Same::Yes : Same::Unknown;
  }

  // The name lowering gave an argpack's ndarray slot ("p.inner.vel"), or "".
  std::string member_name(int slot) const {
    for (const ResourceAccess& a : kernel_.abi.resource_access)
      if (a.slot == slot) return a.name;
    return "";
  }

  std::string slot_name(int slot) const {
    if (slot < 0 || static_cast<size_t>(slot) >= kernel_.abi.resources.size()) return "?";
    const ResourceDesc& r = kernel_.abi.resources[static_cast<size_t>(slot)];
    if (r.kind == ResourceKind::Field) return r.field;
    if (r.param_offset >= 0 && !member_name(slot).empty()) return member_name(slot);
    if (r.param >= 0 && static_cast<size_t>(r.param) < kernel_.abi.params.size())
      return kernel_.abi.params[static_cast<size_t>(r.param)].name;
    return "slot " + std::to_string(slot);
  }

  std::string describe_index(const Inst* v, int depth = 0) const {
    if (v->is_const()) return std::to_string(v->int_value());
    if (v->op == Op::LoopIndex) return "i" + std::to_string(v->dimension());
    if (v->op == Op::ArgLoad && static_cast<size_t>(v->param_index()) < kernel_.abi.params.size())
      return kernel_.abi.params[static_cast<size_t>(v->param_index())].name;
    auto [base, c] = split(v);
    if (c != 0 && depth < 2)
      return describe_index(base, depth + 1) + (c > 0 ? " + " : " - ") +
             std::to_string(c > 0 ? c : -c);
    return "...";
  }

  // "x[i0]", "loss", "v[i0] (component 1)".
  std::string describe(const Inst* ptr) const {
    std::string s = slot_name(ptr->resource_slot());
    if (!ptr->operands.empty()) {
      s += '[';
      for (size_t d = 0; d < ptr->operands.size(); ++d)
        s += (d ? ", " : "") + describe_index(ptr->operands[d]);
      s += ']';
    }
    int slot = ptr->resource_slot();
    if (slot >= 0 && static_cast<size_t>(slot) < kernel_.abi.resources.size() &&
        kernel_.abi.resources[static_cast<size_t>(slot)].components > 1)
      s += " (component " + std::to_string(ptr->component()) + ")";
    return s;
  }

  std::string violation(const Access& w, const Access& r, bool same_thread) const {
    std::string wn = "node " + std::to_string(w.inst->node);
    std::string rn = "node " + std::to_string(r.inst->node);
    return rn + " reads " + describe(r.ptr) + " after " + wn +
           (same_thread ? "" : " (in an earlier loop)") + " wrote " +
           (w.inst->op == Op::AtomicRMW ? "to " : "") + "it; the adjoint would recompute " + rn +
           " from memory that " + wn +
           " changed, so the gradients would be wrong (the global data access rule: keep the "
           "value " +
           wn +
           " stores and use it instead of reading it back, or split the "
           "kernel) (docs/autodiff.md)";
  }

  void examine(const Access& w, const Access& r) {
    if (exclusive(w.inst, r.inst)) return;
    // Serial code before a loop runs before every thread of it: one thread, as far as the
    // rule goes. Otherwise the write's loop is an earlier task than the read's.
    bool one_thread = w.scope == r.scope || w.scope == nullptr;
    Same same = same_element(w.ptr, r.ptr, one_thread);
    if (same == Same::No) return;
    if (same == Same::Yes)
      throw Error(
          Place{"", kernel_.abi.name, r.inst->node, ""},
          "cannot differentiate kernel '" + kernel_.abi.name + "': " + violation(w, r, one_thread));
    if (one_thread && kernel_.debug && checks_ < kMaxRuntimeChecks) add_check(w, r);
    if (!one_thread && shadows_ && can_shadow(r.ptr->resource_slot())) {
      auto it = std::find_if(across_.begin(), across_.end(),
                             [&](const auto& p) { return p.first == &r; });
      if (it == across_.end()) it = across_.insert(across_.end(), {&r, {}});
      it->second.push_back(&w);
    }
  }

  // The message of a read that an earlier loop's write may have hit (`writes`: those the
  // indices leave undecided, in program order).
  std::string across(const std::vector<const Access*>& writes, const Access& r) const {
    if (writes.size() == 1) return violation(*writes[0], r, false);
    std::string nodes;
    for (size_t i = 0; i < writes.size(); ++i)
      nodes += (i == 0                   ? ""
                : i + 1 == writes.size() ? " or "
                                         : ", ") +
               std::string("node ") + std::to_string(writes[i]->inst->node);
    std::string rn = "node " + std::to_string(r.inst->node);
    return rn + " reads " + describe(r.ptr) + " after an earlier loop wrote it (" + nodes +
           "); the adjoint would recompute " + rn +
           " from memory that loop changed, so the gradients would be wrong (the global data "
           "access rule: keep the value stored and use it instead of reading it back, or split "
           "the kernel) (docs/autodiff.md)";
  }

  // A field, an ndarray parameter, or an ndarray inside an argpack parameter.
  bool can_shadow(int slot) const {
    if (slot < 0 || static_cast<size_t>(slot) >= kernel_.abi.resources.size()) return false;
    const ResourceDesc& r = kernel_.abi.resources[static_cast<size_t>(slot)];
    if (r.kind == ResourceKind::Field) return true;
    if (r.kind != ResourceKind::Ndarray || r.param < 0) return false;
    return r.param_offset < 0 || !member_name(slot).empty();
  }

  // A field's shadow is the program's field NAME.written; an ndarray parameter's a parameter
  // NAME.written, which the program binds to the shadow of the ndarray it binds to NAME; an
  // argpack's ndarray's a parameter PARAM.PATH.written, bound to the shadow of the ndarray the
  // pack holds there.
  int shadow_of(int slot) {
    for (const auto& [field, shadow] : shadows_added_)
      if (field == slot) return shadow;
    ResourceDesc r = kernel_.abi.resources[static_cast<size_t>(slot)];
    if (r.kind == ResourceKind::Field) {
      r.field = access_shadow_name(r.field);
    } else if (r.param_offset < 0) {
      ParamDesc p = kernel_.abi.params.at(static_cast<size_t>(r.param));
      p.name = access_shadow_name(p.name);
      p.type.scalar = Scalar::I32;
      r.param = static_cast<int>(kernel_.abi.params.size());
      kernel_.abi.params.push_back(p);
    } else {
      ParamDesc p;
      p.name = access_shadow_name(member_name(slot));
      p.kind = ParamKind::Ndarray;
      p.type = ValueType{Scalar::I32, static_cast<uint8_t>(r.components), 1};
      p.ndim = r.ndim;
      r.param = static_cast<int>(kernel_.abi.params.size());
      r.param_offset = -1;
      kernel_.abi.params.push_back(p);
    }
    r.dtype = Scalar::I32;  // loop ordinals, whatever the element type
    int shadow = static_cast<int>(kernel_.abi.resources.size());
    kernel_.abi.resources.push_back(r);
    shadows_added_.emplace_back(slot, shadow);
    return shadow;
  }

  // Before each read of a pair across loops: ok = its element's shadow is 0 (no loop wrote
  // it) or at least the read's own loop's ordinal (add_access_rule_shadows marks it).
  void add_shadow_checks() {
    std::unordered_map<const Inst*, int> ordinal = top_level_ordinals(kernel_);
    for (const auto& [r, writes] : across_) {
      if (checks_ >= kMaxRuntimeChecks) return;
      int shadow = shadow_of(r->ptr->resource_slot());
      auto ptr = new_inst(Op::GlobalPtr, Scalar::I32, r->ptr->operands, r->inst->node);
      ptr->copy_attributes_from(*r->ptr);
      ptr->set_resource_slot(shadow);
      Inst* at = ins_.before(r->inst, std::move(ptr));
      Inst* mark = before(r->inst, Op::GlobalLoad, Scalar::I32, {at});
      Inst* read = r->inst;
      auto constant = [&](int64_t v) {
        auto c = ir::make_const_int(Scalar::I32, v);
        c->node = read->node;
        return ins_.before(read, std::move(c));
      };
      Inst* none = before(r->inst, Op::Eq, Scalar::Bool, {mark, constant(0)});
      Inst* later =
          before(r->inst, Op::Ge, Scalar::Bool, {mark, constant(ordinal.at(top_level(r->inst)))});
      Inst* ok = before(r->inst, Op::LogicOr, Scalar::Bool, {none, later});
      ok->text = std::string(kMark) + "kernel '" + kernel_.abi.name + "': " + across(writes, *r);
      ++checks_;
    }
  }

  bool dominates(const Inst* v, const Inst* at) const {
    if (!v->parent || !ir::is_inside(at, v->parent)) return false;
    auto it = order_.find(v);
    return it != order_.end() && it->second < order_.at(at);
  }

  // `v`'s value, computed again just before `at` where `v` does not reach it (pure values
  // only), or null.
  Inst* rebuild(Inst* v, Inst* at, std::unordered_map<const Inst*, Inst*>& made, int depth) {
    if (dominates(v, at)) return v;
    auto it = made.find(v);
    if (it != made.end()) return it->second;
    if (depth > kMaxDepth) return nullptr;
    bool pure = v->op == Op::Const || v->op == Op::ArgLoad || v->op == Op::ResourceShape ||
                v->op == Op::LoopIndex || ir::is_value_op(v->op);
    if (!pure) return nullptr;
    std::vector<Inst*> operands;
    for (Inst* o : v->operands) {
      if (v->op == Op::LoopIndex) {
        if (!ir::is_inside(at, o->region(0))) return nullptr;
        operands.push_back(o);
        continue;
      }
      Inst* m = rebuild(o, at, made, depth + 1);
      if (!m) return nullptr;
      operands.push_back(m);
    }
    auto copy = new_inst(v->op, v->type, std::move(operands), v->node);
    copy->bits = v->bits;
    copy->copy_attributes_from(*v);
    Inst* placed = ins_.before(at, std::move(copy));
    made[v] = placed;
    return placed;
  }

  Inst* before(Inst* at, Op op, Scalar type, std::vector<Inst*> operands) {
    return ins_.before(at, new_inst(op, type, std::move(operands), at->node));
  }

  // Before the read: ok = !(the write ran && its indices equal the read's).
  void add_check(const Access& w, const Access& r) {
    std::unordered_map<const Inst*, Inst*> made;
    std::vector<Inst*> terms;
    // The `if`s the write is in and the read is not: their conditions say whether it ran.
    for (const Block* b = w.inst->parent; b && b->owner && !ir::is_inside(r.inst, b);
         b = b->owner->parent) {
      Inst* owner = b->owner;
      if (owner->op != Op::If) return;
      Inst* c = rebuild(owner->operands[0], r.inst, made, 0);
      if (!c) return;
      terms.push_back(b == owner->region(0) ? c : before(r.inst, Op::LogicNot, Scalar::Bool, {c}));
    }
    for (size_t d = 0; d < w.ptr->operands.size(); ++d) {
      Inst* a = rebuild(w.ptr->operands[d], r.inst, made, 0);
      Inst* b = r.ptr->operands[d];
      if (!a || a->type != b->type) return;
      terms.push_back(before(r.inst, Op::Eq, Scalar::Bool, {a, b}));
    }
    if (terms.empty()) return;
    Inst* hit = terms[0];
    for (size_t i = 1; i < terms.size(); ++i)
      hit = before(r.inst, Op::LogicAnd, Scalar::Bool, {hit, terms[i]});
    Inst* ok = before(r.inst, Op::LogicNot, Scalar::Bool, {hit});
    ok->text = std::string(kMark) + "kernel '" + kernel_.abi.name + "': " + violation(w, r, true);
    ++checks_;
  }

  ir::Kernel& kernel_;
  std::vector<Access> accesses_;
  std::unordered_map<const Inst*, int> order_;
  int next_order_ = 0;
  Insertions ins_;
  int checks_ = 0;
  const bool shadows_;
  // Reads across loops, each with the writes of earlier loops the indices leave undecided.
  std::vector<std::pair<const Access*, std::vector<const Access*>>> across_;
  std::vector<std::pair<int, int>> shadows_added_;
};

}  // namespace

std::string access_shadow_name(const std::string& field) { return field + ".written"; }

AccessRuleChecks check_access_rule(ir::Kernel& primal, bool shadows) {
  return AccessRule(primal, shadows).run();
}

void add_access_rule_asserts(ir::Kernel& adjoint) {
  std::vector<Inst*> marked;
  ir::walk(*adjoint.body, [&](Inst& in) {
    if (in.op != Op::Assert && in.text.compare(0, kMark.size(), kMark) == 0) marked.push_back(&in);
  });
  Insertions ins;
  for (Inst* in : marked) {
    auto check = new_inst(Op::Assert, Scalar::Void, {in}, in->node);
    check->set_assert_node(in->node);
    check->text = in->text.substr(kMark.size());
    in->text.clear();
    ins.after(in, std::move(check));
  }
  ins.apply();
}

void add_access_rule_shadows(ir::Kernel& adjoint, const ir::Kernel& primal,
                             const AccessRuleChecks& checks) {
  if (checks.shadows.empty()) return;
  std::unordered_map<int, int> shadow(checks.shadows.begin(), checks.shadows.end());
  // The primal again, its effects gone but for the marks.
  std::unique_ptr<ir::Kernel> again = primal.clone();
  std::unordered_map<const Inst*, int> ordinal = top_level_ordinals(*again);
  std::vector<Inst*> effects;
  ir::walk(*again->body, [&](Inst& in) {
    if (in.text.compare(0, kMark.size(), kMark) == 0) in.text.clear();  // checked in the adjoint
    bool memory =
        (in.op == Op::GlobalStore || in.op == Op::AtomicRMW) && in.operands[0]->op != Op::Alloca;
    // A return goes too: the adjoint runs after this (make_adjoint refuses early returns, so
    // nothing follows one).
    if (memory || in.op == Op::TexStore || in.op == Op::Assert || in.op == Op::Return)
      effects.push_back(&in);
  });
  Insertions ins;
  std::unordered_map<Inst*, Inst*> replaced;
  auto constant = [](Scalar t, int64_t v, int32_t node) {
    auto c = ir::make_const_int(t, v);
    c->node = node;
    return c;
  };
  for (Inst* in : effects) {
    if (in->op != Op::GlobalStore && in->op != Op::AtomicRMW) continue;
    Inst* ptr = in->operands[0];
    auto it = shadow.find(ptr->resource_slot());
    const Inst* top = top_level(in);
    if (it != shadow.end() && top != in && is_loop(top->op)) {
      // shadow[e] = shadow[e] == 0 ? this loop's ordinal : shadow[e]
      Scalar t = Scalar::I32;
      auto sp = new_inst(Op::GlobalPtr, t, ptr->operands, in->node);
      sp->copy_attributes_from(*ptr);
      sp->set_resource_slot(it->second);
      Inst* at = ins.before(in, std::move(sp));
      Inst* old = ins.before(in, new_inst(Op::GlobalLoad, t, {at}, in->node));
      Inst* zero = ins.before(in, constant(t, 0, in->node));
      Inst* own = ins.before(in, constant(t, ordinal.at(top), in->node));
      Inst* unmarked = ins.before(in, new_inst(Op::Eq, Scalar::Bool, {old, zero}, in->node));
      Inst* mark = ins.before(in, new_inst(Op::Select, t, {unmarked, own, old}, in->node));
      ins.before(in, new_inst(Op::GlobalStore, Scalar::Void, {at, mark}, in->node));
    }
    if (in->op == Op::AtomicRMW)  // where its value is used: what memory holds
      replaced[in] = ins.before(in, new_inst(Op::GlobalLoad, in->type, {ptr}, in->node));
  }
  ins.apply();
  ir::replace_uses(*again->body, replaced);
  for (Inst* in : effects) in->parent->remove(in->parent->index_of(in));

  // Before it, every shadow zeroed.
  ir::Block zeroing;
  Builder b(&zeroing);
  for (const auto& [field, slot] : checks.shadows) {
    const ResourceDesc& r = adjoint.abi.resources.at(static_cast<size_t>(slot));
    Builder in_loop = b;
    std::vector<Inst*> indices;
    if (r.ndim > 0) {
      std::vector<Inst*> bounds;
      for (int d = 0; d < r.ndim; ++d) {
        bounds.push_back(b.i32(0));
        bounds.push_back(r.kind == ResourceKind::Field
                             ? b.i32(r.shape[static_cast<size_t>(d)])
                             : b.make(Op::ResourceShape, Scalar::I32, {}, slot, d));
      }
      Inst* loop = b.range_for(bounds);
      in_loop = Builder(loop->region(0));
      for (int d = 0; d < r.ndim; ++d) indices.push_back(in_loop.loop_index(loop, d));
    }
    for (int c = 0; c < r.components; ++c)
      in_loop.global_store(in_loop.global_ptr(Scalar::I32, slot, indices, c), in_loop.i32(0));
  }
  std::vector<std::unique_ptr<Inst>> body;
  for (auto* from : {&zeroing.insts, &again->body->insts, &adjoint.body->insts})
    for (auto& in : *from) body.push_back(std::move(in));
  adjoint.body->insts.clear();
  for (auto& in : body) adjoint.body->append(std::move(in));
}

}  // namespace loom::passes
