#include "compiler/graph/lowerer.h"

#include <algorithm>
#include <string_view>
#include <unordered_set>

#include "runtime/common/error.h"

namespace loom::graph::detail {

void Lowerer::open_child(Scope& child, const std::vector<Node>& nodes, Cursor* cursor) {
  child.parent = cur_;
  child.graph = graph_;
  child.owner = node_;
  child.cursor = cursor;
  init_scope(child, nodes);
}

namespace {

// Where `inst` is in the builder's block. Here it is always next to the insert point (a
// region instruction just placed, and what lowering adds meanwhile goes before it), so this
// is no scan of the block: a kernel of many ifs lowers in linear time.
size_t place_of(const ir::Builder& b, const Inst* inst) {
  const auto& insts = b.block()->insts;
  size_t p = b.position();
  if (p > 0 && insts[p - 1].get() == inst) return p - 1;
  if (p < insts.size() && insts[p].get() == inst) return p;
  return b.block()->index_of(inst);
}

}  // namespace

template <typename Setup>
void Lowerer::lower_into(Inst* inst, size_t block, const Region* region, Setup&& setup,
                         int branch) {
  ir::Builder& outer = cur_->cursor->b;
  outer.set_insert_point(outer.block(), place_of(outer, inst));
  Cursor inner(inst->region(block));
  Scope child;
  open_child(child, region ? region->nodes : empty_, &inner);
  child.branch = branch;
  setup(child);
  lower_in(child);
  outer.set_insert_point(outer.block(), place_of(outer, inst) + 1);
}

void Lowerer::lower_in(Scope& child) {
  Scope* saved = cur_;
  const Node* saved_node = node_;
  cur_ = &child;
  lower_region(child);
  cur_ = saved;
  node_ = saved_node;
}

Outs Lowerer::node_if() {
  Val c = input_value("cond");
  if (!c.type.is_scalar() || is_float(c.type.scalar))
    fail_here("cond", "the condition of an if is one bool, not " + tname(c.type));
  Inst* cond = comps(c, Scalar::Bool, -1, "cond")[0];
  Inst* inst = B().if_(cond);
  IfState state;
  const Node* self = node_;
  const char* names[] = {"then", "else"};
  for (int b = 0; b < 2; ++b)
    lower_into(
        inst, static_cast<size_t>(b), find_region(*self, names[b]),
        [&](Scope& s) { s.if_state = &state; }, b);
  // Outputs: every yielded name, typed by both branches together (weak literals adapt).
  std::vector<std::string> order;
  std::unordered_set<std::string_view> ordered;
  for (int b = 0; b < 2; ++b)
    for (const auto& y : state.yields[b])
      if (ordered.insert(y.name).second) order.push_back(y.name);
  ir::Builder& outer = cur_->cursor->b;
  Outs outs;
  for (const std::string& name : order) {
    const IfState::Yield* y[2] = {nullptr, nullptr};
    for (int b = 0; b < 2; ++b) {
      auto it = state.index[b].find(name);
      if (it != state.index[b].end()) y[b] = &state.yields[b][it->second];
    }
    for (int b = 0; b < 2; ++b)
      if (!y[b])
        fail(self->id, name,
             std::string("the '") + names[b] + "' branch of this if does not yield '" + name +
                 "'; both branches must yield every output");
    const Val& v0 = y[0]->value;
    const Val& v1 = y[1]->value;
    ValueType t = v0.type.is_scalar() ? v1.type : v0.type;
    t.scalar = common(v0, v1);
    if (v0.weak && v1.weak) t.scalar = promote(v0.type.scalar, v1.type.scalar);
    // allocas before the if
    outer.set_insert_point(outer.block(), place_of(outer, inst));
    std::vector<Inst*> vars;
    vars.reserve(static_cast<size_t>(t.components()));
    for (int i = 0; i < t.components(); ++i) vars.push_back(B().alloca_(t.scalar));
    // stores at the end of each branch
    for (int b = 0; b < 2; ++b) {
      Cursor end(inst->region(static_cast<size_t>(b)));
      Scope tmp;
      tmp.graph = graph_;
      tmp.cursor = &end;
      Scope* saved = cur_;
      const Node* saved_node = node_;
      cur_ = &tmp;
      node_ = y[b]->node;
      Val cv = convert(y[b]->value, t, name);
      for (size_t i = 0; i < vars.size(); ++i) B().local_store(vars[i], cv.c[i]);
      cur_ = saved;
      node_ = saved_node;
    }
    Val ref;
    ref.kind = Val::Kind::Ref;
    ref.type = t;
    ref.c = vars;
    outs.emplace_back(name, ref);
  }
  // The results, read once after the if.
  outer.set_insert_point(outer.block(), place_of(outer, inst) + 1);
  for (auto& [name, v] : outs) {
    std::vector<Inst*> loads;
    for (Inst* a : v.c) loads.push_back(B().local_load(a));
    v = value(v.type, loads);
  }
  return outs;
}

Outs Lowerer::node_yield() {
  Scope* s = cur_;
  if (!s->if_state)
    fail_here("", "a yield node must be directly inside the then or else region of an if");
  auto& list = s->if_state->yields[s->branch];
  auto& index = s->if_state->index[s->branch];
  for (const Input& in : node_->inputs) {
    Val v = input_value(in.pin);
    auto [it, added] = index.emplace(in.pin, list.size());
    if (added)
      list.push_back({in.pin, v, node_});
    else
      list[it->second] = {in.pin, v, node_};
  }
  return {};
}

Outs Lowerer::node_range_for() {
  std::vector<Inst*> bounds;
  int dims = 0;
  for (int d = 0; d < 3; ++d) {
    std::string e = "end" + std::to_string(d);
    if (!find_input(*node_, e)) break;
    for (const std::string& pin : {"begin" + std::to_string(d), e})
      bounds.push_back(loop_bound(input_value(pin), pin));
    ++dims;
  }
  Inst* inst = B().range_for(bounds);
  lower_into(inst, 0, find_region(*node_, "body"), [&](Scope& s) {
    s.loop = inst;
    s.loop_dims = dims;
  });
  return {};
}

Outs Lowerer::node_struct_for() {
  int slot = field_slot(param_string("field"), "field");
  int ndim = kernel_->abi.resources[static_cast<size_t>(slot)].ndim;
  // A 0-d field has one element and no index to loop over; its value is read and written
  // directly (load/store with no index pins), so a loop over it is refused, not run once.
  if (ndim == 0)
    fail_here("field", "struct_for needs a field with dimensions; '" +
                           kernel_->abi.resources[static_cast<size_t>(slot)].field +
                           "' is 0-d (shape []): use load/store on it without a loop");
  Inst* inst = B().struct_for(slot, ndim);
  lower_into(inst, 0, find_region(*node_, "body"), [&](Scope& s) {
    s.loop = inst;
    s.loop_dims = ndim;
  });
  return {};
}

Outs Lowerer::node_unroll() {
  int64_t count = param_int("count", 0);
  if (count < 0 || count > 1024) fail_here("count", "unroll count must be between 0 and 1024");
  const Region* body = find_region(*node_, "body");
  check_unrolled_size(count, body);
  int64_t saved_copies = unroll_copies_;
  unroll_copies_ *= std::max<int64_t>(count, 1);
  for (int64_t k = 0; k < count; ++k) {
    Scope child;
    open_child(child, body ? body->nodes : empty_, cur_->cursor);
    child.region_values.emplace_back("i", weak_int(vt(Scalar::I32), {k}));
    lower_in(child);
  }
  unroll_copies_ = saved_copies;
  return {};
}

bool Lowerer::has_break(const std::vector<Node>& nodes) {
  for (const Node& n : nodes) {
    if (n.type == "break") return true;
    // A break inside a nested loop leaves that loop, not this one.
    if (n.type == "while" || n.type == "range_for" || n.type == "struct_for") continue;
    for (const Region& r : n.regions)
      if (has_break(r.nodes)) return true;
  }
  return false;
}

Outs Lowerer::node_while() {
  const Node* self = node_;
  const Region* body = find_region(*self, "body");
  if (!body || !has_break(body->nodes))
    fail_here("", "this while loop has no break node and would never end");
  WhileState state;
  for (const Input& in : self->inputs) {
    Val v = materialize(input_value(in.pin));
    Val ref;
    ref.kind = Val::Kind::Ref;
    ref.type = v.type;
    for (Inst* x : v.c) {
      Inst* a = B().alloca_(x->type);
      B().local_store(a, x);
      ref.c.push_back(a);
    }
    state.vars.emplace_back(in.pin, ref);
  }
  Inst* inst = B().while_();
  lower_into(inst, 0, body, [&](Scope& s) {
    s.while_state = &state;
    Scope* saved = cur_;
    cur_ = &s;
    for (auto& [name, ref] : state.vars) {
      std::vector<Inst*> c;
      for (Inst* a : ref.c) c.push_back(B().local_load(a));
      state.current.emplace_back(name, value(ref.type, c));
    }
    cur_ = saved;
  });
  Outs outs;
  for (auto& [name, ref] : state.vars) {
    std::vector<Inst*> c;
    for (Inst* a : ref.c) c.push_back(B().local_load(a));
    outs.emplace_back(name, value(ref.type, c));
  }
  return outs;
}

WhileState* Lowerer::enclosing_while() {
  for (Scope* s = cur_; s; s = s->parent)
    if (s->while_state) return s->while_state;
  return nullptr;
}

Val Lowerer::node_carried() {
  std::string name = param_string("name");
  WhileState* w = enclosing_while();
  if (!w) fail_here("name", "a carried node must be inside the body of a while");
  for (auto& [n, v] : w->current)
    if (n == name) return v;
  fail_here("name", "the enclosing while has no input '" + name + "' to carry");
}

Outs Lowerer::node_next() {
  std::string name = param_string("name");
  WhileState* w = enclosing_while();
  if (!w) fail_here("name", "a next node must be inside the body of a while");
  for (auto& [n, ref] : w->vars) {
    if (n != name) continue;
    Val v = convert(input("value"), ref.type, "value");
    for (size_t i = 0; i < ref.c.size(); ++i) B().local_store(ref.c[i], v.c[i]);
    return {};
  }
  fail_here("name", "the enclosing while has no input '" + name + "' to carry");
}

// A break leaves the innermost loop around it: a while, or a range_for / struct_for that
// runs serially (inside a task). The loops at the top level of a kernel become parallel tasks,
// whose iterations have no order to stop in (Taichi refuses the same), and an unroll is not a
// loop at all: its body is copied at compile time.
void Lowerer::check_break_target() {
  for (Scope* s = cur_; s; s = s->parent) {
    if (s->while_state) return;
    if (s->owner && s->owner->type == "unroll")
      fail_here("", "a break cannot be inside an unroll body: the unroll (node " +
                        std::to_string(s->owner->id) +
                        ") copies its body at compile time and is not a loop; use a range_for, "
                        "which can break where it runs serially");
    if (!s->loop) continue;
    // A scratch kernel validating a function puts the function's loops at its top level;
    // the kernels calling the function decide whether the loop is parallel.
    if (s->loop->parent == kernel_->body.get() && !as_function_)
      fail_here("", "a parallel loop cannot break; the " + s->owner->type + " (node " +
                        std::to_string(s->owner->id) +
                        ") at the top level of the kernel runs its iterations in parallel. Use "
                        "continue to skip an iteration, or nest the loop that should stop inside "
                        "another loop (e.g. a range_for with end0 1), where it runs serially");
    return;
  }
  fail_here("",
            "a break node must be inside the body of a loop (a while, or a range_for or "
            "struct_for that runs serially)");
}

Outs Lowerer::node_break(bool is_break) {
  Op op = is_break ? Op::Break : Op::Continue;
  if (is_break) check_break_target();
  if (!is_break && !enclosing_while() && !enclosing_loop(cur_))
    fail_here("", "a continue node must be inside a loop body");
  Val c = input_value("cond");
  if (!c.type.is_scalar() || is_float(c.type.scalar))
    fail_here("cond", "the condition is one bool, not " + tname(c.type));
  Inst* cond = comps(c, Scalar::Bool)[0];
  if (cond->is_const() && cond->int_value() != 0) {
    B().make(op, Scalar::Void);
    return {};
  }
  Inst* inst = B().if_(cond);
  ir::Builder inner(inst->region(0));
  inner.set_node(inst->node);
  inner.make(op, Scalar::Void);
  return {};
}

Outs Lowerer::node_output() {
  if (!graph_->is_function)
    fail_here("", "output nodes belong in functions; kernels use return nodes");
  if (cur_->parent) fail_here("", "an output node must be at the top level of its function");
  for (const Input& in : node_->inputs) {
    const FunctionPort* port = nullptr;
    for (const FunctionPort& p : graph_->fn->outputs)
      if (p.name == in.pin) port = &p;
    if (!port) fail_here(in.pin, "function '" + graph_->name + "' has no output '" + in.pin + "'");
    auto t = parse_value_type(port->type);
    if (!t) fail_here(in.pin, "output '" + in.pin + "' has unknown type '" + port->type + "'");
    Val v = convert(input(in.pin), *t, in.pin);
    graph_->outputs.emplace_back(in.pin, v);
  }
  return {};
}

Outs Lowerer::node_return() {
  if (graph_->is_function)
    fail_here("", "return nodes belong in kernels; functions use output nodes");
  for (Scope* s = cur_; s; s = s->parent)
    if (s->loop || s->while_state) fail_here("", "a return node cannot be inside a loop");
  // One pin per returned value; a struct's value members by path ("r1.a", "r1.inner.x").
  std::vector<ReturnValue> rets = kernel_returns(doc_, decl_);
  for (const Input& in : node_->inputs) {
    if (std::any_of(rets.begin(), rets.end(),
                    [&](const ReturnValue& r) { return r.name == in.pin; }))
      continue;
    std::string members;
    for (const ReturnValue& r : rets)
      if (r.name.rfind(in.pin + ".", 0) == 0) members += (members.empty() ? "" : ", ") + r.name;
    if (!members.empty())
      fail_here(in.pin, "'" + in.pin + "' is a struct; give its members: " + members);
    std::string all;
    for (const ReturnValue& r : rets) all += (all.empty() ? "" : ", ") + r.name;
    fail_here(in.pin,
              "'" + in.pin + "' is not a return value of kernel '" + decl_.name + "' (" +
                  (all.empty() ? std::string("it returns nothing") : "its pins are " + all) + ")");
  }
  std::vector<Inst*> ops;
  for (const ReturnValue& r : rets) {
    Val v = convert(input(r.name), r.type, r.name);
    for (Inst* x : v.c) ops.push_back(x);
  }
  auto inst = std::make_unique<Inst>(Op::Return, Scalar::Void);
  inst->operands = ops;
  B().insert(std::move(inst));
  return {};
}

Outs Lowerer::lower_break(const NodeType&) { return node_break(true); }

Outs Lowerer::lower_continue(const NodeType&) { return node_break(false); }

Outs Lowerer::lower_assert(const NodeType&) {
  Val c = input_value("cond");
  if (!c.type.is_scalar()) fail_here("cond", "assert needs one bool");
  Inst* a = B().make(Op::Assert, Scalar::Void, {comps(c, Scalar::Bool)[0]}, node_->id);
  const Literal* m = param("message");
  a->text = m && m->kind == Literal::Kind::String ? m->s : "assertion failed";
  return {};
}

}  // namespace loom::graph::detail
