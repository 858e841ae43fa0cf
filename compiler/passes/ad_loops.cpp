#include "compiler/passes/ad_loops.h"

#include <iterator>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>

#include "compiler/ir/builder.h"
#include "compiler/ir/op.h"
#include "runtime/common/error.h"

namespace loom::passes {

using ir::Block;
using ir::Builder;
using ir::Inst;
using ir::Op;

namespace {

bool is_loop(Op op) { return op == Op::RangeFor || op == Op::StructFor || op == Op::While; }

bool declared_in(const Inst* var, const Inst& region) {
  for (const auto& r : region.regions)
    if (ir::is_inside(var, r.get())) return true;
  return false;
}

// Whether `block` holds a break (or, with `continues`, a continue) of its own loop: one not
// inside a loop nested in it.
bool exits(const Block& block, bool continues) {
  for (const auto& in : block.insts) {
    ir::count_work();
    if (in->op == Op::Break || (continues && in->op == Op::Continue)) return true;
    if (is_loop(in->op)) continue;
    for (const auto& r : in->regions)
      if (exits(*r, continues)) return true;
  }
  return false;
}

bool may_exit(const Inst& in) {
  if (in.op == Op::Break || in.op == Op::Continue) return true;
  if (is_loop(in.op)) return false;
  for (const auto& r : in.regions)
    if (exits(*r, true)) return true;
  return false;
}

// Whether `loop`'s iterations hand values to each other through variables or local arrays
// declared outside it: anything but `v = v + e`, `v = e + v`, `v = v - e` (the load of v used
// by that update alone) and atomic adds whose old value is unused, whose adjoints need no
// values of v.
bool carries_values(Inst& loop) {
  Block& body = *loop.region(0);
  auto outside = [&](const Inst* v) { return !ir::is_inside(v, &body); };
  std::unordered_map<const Inst*, int> uses = ir::count_uses(body);
  auto used_once = [&](const Inst* v) {
    auto it = uses.find(v);
    return it != uses.end() && it->second == 1;
  };
  bool carried = false;
  std::unordered_set<const Inst*> written, update_loads;
  ir::walk(body, [&](Inst& in) {
    if (carried) return;
    if (in.op == Op::ArrayStore && outside(in.operands[0])) carried = true;
    if (in.op == Op::AtomicRMW && in.operands[0]->op == Op::Alloca && outside(in.operands[0])) {
      written.insert(in.operands[0]);
      ir::AtomicOp op = in.atomic_op();
      if ((op != ir::AtomicOp::Add && op != ir::AtomicOp::Sub) || uses.count(&in)) carried = true;
    }
    if (in.op != Op::LocalStore || !outside(in.operands[0])) return;
    const Inst* var = in.operands[0];
    written.insert(var);
    const Inst* sum = in.operands[1];
    auto is_load = [&](const Inst* v) {
      return v->op == Op::LocalLoad && v->operands[0] == var && used_once(v);
    };
    const Inst* load = nullptr;
    if ((sum->op == Op::Add || sum->op == Op::Sub) && used_once(sum)) {
      if (is_load(sum->operands[0]))
        load = sum->operands[0];
      else if (sum->op == Op::Add && is_load(sum->operands[1]))
        load = sum->operands[1];
    }
    if (load)
      update_loads.insert(load);
    else
      carried = true;
  });
  if (carried) return true;
  ir::walk(body, [&](Inst& in) {
    if (in.op == Op::LocalLoad && written.count(in.operands[0]) && !update_loads.count(&in))
      carried = true;
  });
  return carried;
}

class LoopNormalizer {
 public:
  explicit LoopNormalizer(ir::Kernel& kernel) : k_(kernel) {}

  std::unordered_set<const Inst*> run() {
    std::vector<std::pair<Inst*, bool>> loops;  // each loop; whether it is inside another
    collect(*k_.body, false, loops);
    for (auto& [loop, nested] : loops) normalize(loop, nested);
    return std::move(terminals_);
  }

 private:
  [[noreturn]] void refuse(const Inst& in, const std::string& why) const {
    throw Error(Place{"", k_.abi.name, in.node, ""},
                "cannot differentiate kernel '" + k_.abi.name + "': " + why);
  }

  static void collect(Block& block, bool in_loop, std::vector<std::pair<Inst*, bool>>& out) {
    for (auto& in : block.insts) {
      ir::count_work();
      if (is_loop(in->op)) out.emplace_back(in.get(), in_loop);
      for (auto& r : in->regions) collect(*r, in_loop || is_loop(in->op), out);
    }
  }

  void normalize(Inst* loop, bool nested) {
    Block& body = *loop->region(0);
    bool breaks = exits(body, false);
    if (loop->op == Op::StructFor) {
      if (nested) refuse(*loop, "it has a struct_for inside another loop (not differentiable yet)");
      if (breaks || carries_values(*loop))
        refuse(*loop,
               "its struct_for breaks or hands values from one iteration to the next "
               "(only range and while loops are reversed in order)");
    }
    bool serial = loop->op != Op::StructFor &&
                  (nested || loop->op == Op::While || breaks || carries_values(*loop));
    if (!serial) {  // parallel: only continues to rewrite
      if (!exits(body, true)) return;
      Builder b(&body, 0);
      b.set_node(loop->node);
      Inst* skip = b.alloca_(Scalar::Bool);
      rewrite_exits(body, b.position(), nullptr, skip);
      return;
    }
    if (loop->op == Op::While)
      normalize_while(loop);
    else
      range_to_while(loop);
  }

  // Ends the body with `if (done) break`, its only break.
  Inst* end_with_break(Block& body, Inst* done, int32_t node) {
    Builder e(&body);
    e.set_node(node);
    Inst* t = e.if_(e.local_load(done));
    Builder tb(t->region(0));
    tb.set_node(node);
    tb.make(Op::Break, Scalar::Void);
    terminals_.insert(t);
    return t;
  }

  void normalize_while(Inst* loop) {
    Block& body = *loop->region(0);
    Builder b(&body, 0);
    b.set_node(loop->node);
    Inst* done = b.alloca_(Scalar::Bool);
    Inst* skip = b.alloca_(Scalar::Bool);
    rewrite_exits(body, b.position(), done, skip);
    end_with_break(body, done, loop->node);
  }

  // for (i0, i1...) in ranges { body }  ->  k = 0; while { if (k < n) { i = indices(k);
  // body } else { done = true }; k = k + 1; if (done) break }
  void range_to_while(Inst* loop) {
    Block* parent = loop->parent;
    Builder b(parent, parent->index_of(loop));
    b.set_node(loop->node);
    int dims = loop->dims();
    std::vector<Inst*> lo, extent;
    Inst* total = nullptr;
    for (int d = 0; d < dims; ++d) {
      auto i32 = [&](Inst* v) { return v->type == Scalar::I32 ? v : b.cast(Scalar::I32, v); };
      Inst* begin = i32(loop->operands[2 * static_cast<size_t>(d)]);
      Inst* end = i32(loop->operands[2 * static_cast<size_t>(d) + 1]);
      Inst* e = b.binary(Op::Max, b.binary(Op::Sub, end, begin), b.i32(0));
      lo.push_back(begin);
      extent.push_back(e);
      total = total ? b.binary(Op::Mul, total, e) : e;
    }
    Inst* counter = b.alloca_(Scalar::I32);
    Inst* w = b.while_();
    Block& body = *w->region(0);
    Builder wb(&body);
    wb.set_node(loop->node);
    Inst* done = wb.alloca_(Scalar::Bool);
    Inst* skip = wb.alloca_(Scalar::Bool);
    Inst* k = wb.local_load(counter);
    Inst* in_range = wb.if_(wb.binary(Op::Lt, k, total));
    Builder out_of_range(in_range->region(1));
    out_of_range.set_node(loop->node);
    out_of_range.local_store(done, out_of_range.const_bool(true));
    wb.local_store(counter, wb.binary(Op::Add, k, wb.i32(1)));
    end_with_break(body, done, loop->node);

    Block& inner = *in_range->region(0);
    Builder ib(&inner);
    ib.set_node(loop->node);
    std::vector<Inst*> index(static_cast<size_t>(dims));
    Inst* rest = k;  // the last dimension varies fastest
    for (int d = dims - 1; d >= 0; --d) {
      auto u = static_cast<size_t>(d);
      Inst* i = d == 0 ? rest : ib.binary(Op::Mod, rest, extent[u]);
      index[u] = ib.binary(Op::Add, lo[u], i);
      if (d > 0) rest = ib.binary(Op::Div, rest, extent[u]);
    }
    size_t start = inner.insts.size();
    for (auto& in : loop->regions[0]->insts) inner.append(std::move(in));
    loop->regions[0]->insts.clear();
    std::unordered_map<Inst*, Inst*> indices;
    std::vector<Inst*> loop_indices;
    ir::walk(inner, [&](Inst& in) {
      if (in.op == Op::LoopIndex && in.operands[0] == loop) {
        indices[&in] = index[static_cast<size_t>(in.dimension())];
        loop_indices.push_back(&in);
      }
    });
    ir::replace_uses(inner, indices);
    for (Inst* li : loop_indices) k_.erase(li->parent->remove(li->parent->index_of(li)));
    rewrite_exits(inner, start, done, skip);
    k_.erase(parent->remove(parent->index_of(loop)));
  }

  // From `from` on: a break or continue becomes `skip = true` (and `done = true` for a
  // break), ending the block; after anything that may set them, the rest of the block runs
  // under `if (!skip)`.
  void rewrite_exits(Block& block, size_t from, Inst* done, Inst* skip) {
    for (size_t i = from; i < block.insts.size(); ++i) {
      Inst* in = block.insts[i].get();
      if (!may_exit(*in)) continue;
      if (in->op == Op::Break || in->op == Op::Continue) {
        bool leave = in->op == Op::Break;
        int32_t node = in->node;
        while (block.insts.size() > i) k_.erase(block.remove(block.insts.size() - 1));
        Builder b(&block);
        b.set_node(node);
        Inst* yes = b.const_bool(true);
        b.local_store(skip, yes);
        if (leave) b.local_store(done, yes);
        return;
      }
      for (auto& r : in->regions) rewrite_exits(*r, 0, done, skip);
      if (i + 1 == block.insts.size()) return;
      Builder b(&block, i + 1);
      b.set_node(in->node);
      Inst* go = b.if_(b.unary(Op::LogicNot, b.local_load(skip)));
      size_t rest = b.position();
      Block& guarded = *go->region(0);
      std::vector<std::unique_ptr<Inst>> tail(
          std::make_move_iterator(block.insts.begin() + static_cast<std::ptrdiff_t>(rest)),
          std::make_move_iterator(block.insts.end()));
      block.insts.erase(block.insts.begin() + static_cast<std::ptrdiff_t>(rest), block.insts.end());
      for (auto& t : tail) guarded.append(std::move(t));
      rewrite_exits(guarded, 0, done, skip);
      return;
    }
  }

  ir::Kernel& k_;
  std::unordered_set<const Inst*> terminals_;
};

}  // namespace

std::unordered_set<const Inst*> normalize_adjoint_loops(ir::Kernel& kernel) {
  return LoopNormalizer(kernel).run();
}

OuterAccess outer_access(const Inst& region) {
  OuterAccess a;
  std::unordered_set<const Inst*> read, written;
  auto note = [&](const Inst* var, bool reads, bool writes) {
    if (declared_in(var, region)) return;
    if (reads && read.insert(var).second) a.read.push_back(var);
    if (writes && written.insert(var).second) a.written.push_back(var);
  };
  for (const auto& r : region.regions)
    ir::walk(static_cast<const Block&>(*r), [&](const Inst& in) {
      switch (in.op) {
        case Op::LocalLoad:
        case Op::ArrayLoad: note(in.operands[0], true, false); break;
        case Op::LocalStore:
        case Op::ArrayStore: note(in.operands[0], false, true); break;
        case Op::AtomicRMW:
          if (in.operands[0]->op == Op::Alloca) note(in.operands[0], true, true);
          break;
        default: break;
      }
    });
  return a;
}

}  // namespace loom::passes
