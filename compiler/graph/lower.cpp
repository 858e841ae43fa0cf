#include "compiler/graph/lower.h"

#include <algorithm>
#include <cstdio>
#include <unordered_set>

#include "compiler/graph/lowerer.h"
#include "compiler/ir/work_count.h"
#include "runtime/common/error.h"

namespace loom::graph {

const TemplateArg* TemplateArgs::find(const std::string& name) const {
  for (const auto& [n, a] : values)
    if (n == name) return &a;
  return nullptr;
}

void TemplateArgs::set(const std::string& name, TemplateArg arg) {
  for (auto& [n, a] : values)
    if (n == name) {
      a = std::move(arg);
      return;
    }
  values.emplace_back(name, std::move(arg));
}

std::string TemplateArgs::signature() const {
  auto sorted = values;
  std::sort(sorted.begin(), sorted.end(),
            [](const auto& x, const auto& y) { return x.first < y.first; });
  std::string s;
  for (const auto& [name, a] : sorted) {
    if (!s.empty()) s += ',';
    s += name + '=';
    switch (a.kind) {
      case TemplateArg::Kind::Field: s += "field:" + a.field; break;
      case TemplateArg::Kind::Ndarray: s += "ndarray:" + a.field + "/" + std::to_string(a.i); break;
      case TemplateArg::Kind::Int: s += "i:" + std::to_string(a.i); break;
      case TemplateArg::Kind::Bool: s += a.b ? "b:1" : "b:0"; break;
      case TemplateArg::Kind::Float: {
        char buf[40];
        std::snprintf(buf, sizeof buf, "f:%.17g", a.f);
        s += buf;
        break;
      }
    }
  }
  return s;
}

namespace {

void flatten_struct(const Document& doc, const KernelDecl& kernel, int type,
                    const std::string& prefix, std::vector<ReturnValue>& out, int depth) {
  const ArgpackType& t = doc.argpack_types.at(static_cast<size_t>(type));
  if (depth > 16)
    throw Error(Place{doc.path, kernel.name},
                "struct '" + t.name + "' nests too deeply to be returned");
  for (const ArgpackMember& m : t.members) {
    std::string name = prefix + "." + m.name;
    bool nested_struct = m.kind == MemberKind::Struct && m.nested >= 0 &&
                         static_cast<size_t>(m.nested) < doc.argpack_types.size();
    if (m.kind == MemberKind::Value) {
      out.push_back({name, m.type});
    } else if (nested_struct) {
      flatten_struct(doc, kernel, m.nested, name, out, depth + 1);
    } else {
      throw Error(Place{doc.path, kernel.name},
                  "struct '" + t.name + "' cannot be returned from a kernel: its member '" +
                      m.name + "' is " +
                      (m.kind == MemberKind::Pack ? "an argpack" : "a resource") +
                      "; structs of values (and of such structs) can");
    }
  }
}

}  // namespace

std::vector<ReturnValue> kernel_returns(const Document& doc, const KernelDecl& kernel) {
  std::vector<ReturnValue> out;
  for (size_t k = 0; k < kernel.returns.size(); ++k) {
    const std::string& r = kernel.returns[k];
    std::string pin = "r" + std::to_string(k);
    if (auto t = parse_value_type(r)) {
      out.push_back({pin, *t});
      continue;
    }
    int type = doc.argpack_type(r);
    if (type < 0)
      throw Error(Place{doc.path, kernel.name},
                  "kernel '" + kernel.name + "' returns an unknown type '" + r +
                      "' (a value type such as f32x3, or a struct type)");
    if (doc.argpack_types[static_cast<size_t>(type)].is_pack)
      throw Error(Place{doc.path, kernel.name},
                  "kernel '" + kernel.name + "': an argpack ('" + r +
                      "') cannot be returned from a kernel; return a struct (kind \"struct\") or "
                      "its values instead");
    flatten_struct(doc, kernel, type, pin, out, 0);
  }
  if (kernel.returns.size() > 16)
    throw Error(Place{doc.path, kernel.name},
                "kernel '" + kernel.name + "' declares " + std::to_string(kernel.returns.size()) +
                    " return values; the return node has pins r0 to r15");
  return out;
}

namespace detail {

std::unique_ptr<ir::Kernel> Lowerer::run() {
  kernel_ = std::make_unique<ir::Kernel>();
  GraphInst g;
  g.name = decl_.name;
  collect_ids(decl_.nodes, g.all);
  graph_ = &g;
  try {
    layout_argpack_types(types_);
  } catch (const Error& e) {
    fail(-1, "", e.message());
  }
  build_abi();
  Cursor cursor(kernel_->body.get());
  Scope root;
  root.graph = &g;
  root.cursor = &cursor;
  init_scope(root, decl_.nodes);
  lower_region(root);
  block_local_slots();
  return std::move(kernel_);
}

void Lowerer::fail(int node, const std::string& pin, const std::string& msg) const {
  bool function = as_function_ || (graph_ && graph_->is_function);
  throw Error(Place{doc_.path, graph_ ? graph_->name : decl_.name, node, pin, function}, msg);
}

void Lowerer::fail_here(const std::string& pin, const std::string& msg) const {
  fail(node_ ? node_->id : -1, pin, msg);
}

void Lowerer::build_abi() {
  kernel_->abi.name = decl_.name;
  kernel_->workgroup_size = decl_.workgroup_size;
  for (const KernelParam& p : decl_.params) {
    if (p.kind == graph::ParamKind::Template) {
      const TemplateArg* a = targs_.find(p.name);
      if (!a) fail(-1, p.name, "template parameter '" + p.name + "' needs an argument");
      bool is_field = a->kind == TemplateArg::Kind::Field;
      if (p.type == "field" && !is_field)
        fail(-1, p.name, "template parameter '" + p.name + "' needs a field name as its argument");
      if (parse_value_type(p.type) && is_field)
        fail(-1, p.name,
             "template parameter '" + p.name + "' needs a " + p.type + " constant, not field '" +
                 a->field + "'");
      continue;
    }
    ParamDesc d;
    d.name = p.name;
    switch (p.kind) {
      case graph::ParamKind::Value: {
        auto t = parse_value_type(p.type);
        if (!t) fail(-1, p.name, "parameter '" + p.name + "' has unknown type '" + p.type + "'");
        d.kind = loom::ParamKind::Value;
        d.type = *t;
        d.size = static_cast<uint32_t>(t->components() * size_of(t->scalar));
        break;
      }
      case graph::ParamKind::Ndarray: {
        // An ndarray parameter without a type takes element type and dimensions from the
        // ndarray bound at launch: each combination is its own instantiation (as Taichi).
        std::string type = p.type;
        int ndim = p.ndim;
        if (type.empty()) {
          const TemplateArg* a = targs_.find(p.name);
          if (!a || a->kind != TemplateArg::Kind::Ndarray)
            fail(-1, p.name,
                 "ndarray parameter '" + p.name +
                     "' leaves its element type open; it is instantiated per bound ndarray");
          type = a->field;
          ndim = static_cast<int>(a->i);
        }
        auto t = parse_value_type(type);
        if (!t)
          fail(-1, p.name,
               "ndarray parameter '" + p.name + "' has unknown element type '" + type + "'");
        if (ndim < 1 || ndim > kMaxDims)
          fail(-1, p.name, "ndarray parameter '" + p.name + "' needs 1 to 4 dimensions");
        d.kind = loom::ParamKind::Ndarray;
        d.type = *t;
        d.ndim = ndim;
        break;
      }
      case graph::ParamKind::Texture:
        if (p.ndim != 2 && p.ndim != 3)
          fail(-1, p.name, "texture parameter '" + p.name + "' must have 2 or 3 dimensions");
        d.kind = loom::ParamKind::Texture;
        d.type = vt(Scalar::F32, 4);
        d.ndim = p.ndim;
        break;
      case graph::ParamKind::Argpack: {
        int t = argpack_type_index(p.type);
        if (t < 0 || !types_[static_cast<size_t>(t)].is_pack)
          fail(-1, p.name, "parameter '" + p.name + "' names no argpack type ('" + p.type + "')");
        d.kind = loom::ParamKind::Argpack;
        d.argpack_type = t;
        d.size = types_[static_cast<size_t>(t)].size;
        break;
      }
      case graph::ParamKind::Template: break;
    }
    param_index_[p.name] = static_cast<int>(kernel_->abi.params.size());
    kernel_->abi.params.push_back(d);
  }
  // One slot per ndarray/texture parameter, in parameter order.
  for (size_t i = 0; i < kernel_->abi.params.size(); ++i) {
    const ParamDesc& d = kernel_->abi.params[i];
    if (d.kind != loom::ParamKind::Ndarray && d.kind != loom::ParamKind::Texture) continue;
    ResourceDesc r;
    r.kind = d.kind == loom::ParamKind::Ndarray ? ResourceKind::Ndarray : ResourceKind::Texture;
    r.dtype = d.type.scalar;
    r.components = d.type.components();
    r.ndim = d.ndim;
    r.param = static_cast<int>(i);
    if (r.kind == ResourceKind::Texture) {
      // The texel format is part of the compiled code, like an ndarray's dtype.
      const std::string& fmt =
          std::find_if(decl_.params.begin(), decl_.params.end(), [&](const KernelParam& p) {
            return p.name == d.name;
          })->type;
      if (!fmt.empty() && !parse_texture_format(fmt, &r.format))
        fail(-1, d.name,
             "texture parameter '" + d.name + "' has unknown format '" + fmt +
                 "' (r32f, rg32f, rgba32f, rgba8)");
    }
    add_slot("param:" + std::to_string(i), r);
  }
  for (const ReturnValue& r : kernel_returns(doc_, decl_)) kernel_->abi.returns.push_back(r.type);
}

void Lowerer::block_local_slots() {
  // A field has a slot only once a node uses it: one the kernel never touches adds nothing.
  // Every ndarray parameter has its slot (build_abi). A name that is both (a field and an
  // ndarray parameter, reached by different nodes) stages both.
  std::vector<int32_t>& out = kernel_->block_local_slots;
  auto add = [&](const std::string& key) {
    auto it = slots_.find(key);
    if (it != slots_.end() && std::find(out.begin(), out.end(), it->second) == out.end())
      out.push_back(it->second);
  };
  for (const std::string& name : decl_.block_local) {
    const KernelParam* p = kernel_param(name);
    if (p && p->kind == graph::ParamKind::Ndarray)
      add("param:" + std::to_string(param_index_.at(name)));
    add("field:" + name);
  }
}

int Lowerer::argpack_type_index(const std::string& name) const {
  for (size_t i = 0; i < types_.size(); ++i)
    if (types_[i].name == name) return static_cast<int>(i);
  return -1;
}

int Lowerer::add_slot(const std::string& key, const ResourceDesc& r) {
  auto it = slots_.find(key);
  if (it != slots_.end()) return it->second;
  int slot = static_cast<int>(kernel_->abi.resources.size());
  kernel_->abi.resources.push_back(r);
  slots_[key] = slot;
  return slot;
}

const KernelParam* Lowerer::kernel_param(const std::string& name) const {
  if (kernel_params_.empty())  // indexed once: a param node per parameter reads them all
    for (const KernelParam& p : decl_.params) kernel_params_.emplace(p.name, &p);  // the first
  auto it = kernel_params_.find(name);
  return it == kernel_params_.end() ? nullptr : it->second;
}

void Lowerer::init_scope(Scope& s, const std::vector<Node>& nodes) {
  s.nodes = &nodes;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (!s.index.emplace(nodes[i].id, i).second)
      fail(nodes[i].id, "", "node id " + std::to_string(nodes[i].id) + " is used twice");
  }
}

ir::Builder& Lowerer::B() {
  ir::Builder& b = cur_->cursor->b;
  b.set_node(graph_->stamp >= 0 ? graph_->stamp : (node_ ? node_->id : -1));
  return b;
}

void Lowerer::lower_region(Scope& s) {
  for (const Node& n : *s.nodes) {
    const NodeSpec* spec = find_node_spec(n.type);
    if (!spec && record_ && recording_here()) continue;  // tolerant: the pass below records it
    if (!spec) spec = spec_of(n);                        // throws
    if (spec->effectful) lower_node(s, n);
  }
  for (const Node& n : *s.nodes) {
    // Unused resource members would only add resource slots; everything else is checked.
    if (s.done.count(n.id) || unused_resource_member(n)) continue;
    lower_node(s, n);
  }
}

bool Lowerer::unused_resource_member(const Node& n) const {
  if (n.type != "member") return false;
  const Literal* pname = find_param(n, "param");
  const Literal* path = find_param(n, "path");
  if (!pname || !path || pname->kind != Literal::Kind::String ||
      path->kind != Literal::Kind::String)
    return false;
  auto index = param_index_.find(pname->s);
  if (index == param_index_.end()) return false;
  int root = kernel_->abi.params[static_cast<size_t>(index->second)].argpack_type;
  const ArgpackMember* m = root < 0 ? nullptr : find_member(types_, root, path->s, nullptr);
  return m && (m->kind == MemberKind::Ndarray || m->kind == MemberKind::Texture);
}

const NodeSpec* Lowerer::spec_of(const Node& n) const { return type_of(n).spec; }

const Input* Lowerer::find_input(const Node& n, const std::string& pin) {
  constexpr size_t kScanned = 16;  // nodes of the library have fewer pins: a scan is cheaper
  if (n.inputs.size() <= kScanned) {
    ir::count_work(n.inputs.size());
    for (const Input& i : n.inputs)
      if (i.pin == pin) return &i;
    return nullptr;
  }
  ir::count_work();
  auto& index = pins_[&n];
  if (index.empty())
    for (const Input& i : n.inputs) index.emplace(i.pin, &i);  // the first of a pin, as a scan
  auto it = index.find(pin);
  return it == index.end() ? nullptr : it->second;
}

const NodeType& Lowerer::type_of(const Node& n) const {
  const NodeType* type = find_node_type(n.type);
  if (!type) fail(n.id, "", "unknown node type '" + n.type + "'");
  return *type;
}

const Outs& Lowerer::lower_node(Scope& s, const Node& n) {
  ir::count_work();
  if (auto it = s.done.find(n.id); it != s.done.end()) return it->second;
  if (record_ && recording_here()) return lower_node_recorded(s, n);
  return lower_node_strict(s, n);
}

bool Lowerer::recording_here() const {
  return graph_ && graph_->name == record_graph_ && graph_->is_function == record_function_;
}

void Lowerer::note_problem(int node, const std::string& pin, const std::string& message) {
  for (const NodeProblem& p : record_->problems)
    if (p.node == node && p.pin == pin && p.message == message) return;  // unrolled bodies repeat
  record_->problems.push_back({node, pin, message});
}

void Lowerer::note_output(int node, const std::string& pin, const Val& v) {
  PinValue pv;
  pv.kind = v.kind == Val::Kind::Ref        ? PinValue::Kind::Ref
            : v.kind == Val::Kind::Resource ? PinValue::Kind::Array
            : v.kind == Val::Kind::Texture  ? PinValue::Kind::Texture
                                            : PinValue::Kind::Value;
  pv.type = v.type;
  pv.literal = v.weak;
  auto& outs = record_->outputs[node];
  for (auto& [name, value] : outs)
    if (name == pin) {
      value = pv;
      return;
    }
  outs.emplace_back(pin, pv);
}

const Outs& Lowerer::lower_node_recorded(Scope& s, const Node& n) {
  // What a failure part-way through may leave changed.
  Scope* saved_scope = cur_;
  const Node* saved_node = node_;
  GraphInst* saved_graph = graph_;
  std::vector<int> saved_stack = stack_;
  size_t saved_calls = calls_.size();
  int64_t saved_unroll = unroll_copies_;
  auto restore = [&] {
    cur_ = saved_scope;
    node_ = saved_node;
    graph_ = saved_graph;
    stack_ = std::move(saved_stack);
    calls_.resize(saved_calls);
    unroll_copies_ = saved_unroll;
  };
  try {
    const Outs& outs = lower_node_strict(s, n);
    for (const auto& [pin, v] : outs) note_output(n.id, pin, v);
    return outs;
  } catch (const Error& e) {
    restore();
    const Place& at = e.place();
    bool here = at.kernel == record_graph_ && at.function == record_function_ && at.node >= 0;
    if (here)
      note_problem(at.node, at.pin, e.message());
    else  // inside a function it calls: the call node is the one to fix or to look into
      note_problem(n.id, "",
                   (at.function ? "in function '" : "in '") + at.kernel + "'" +
                       (at.node >= 0 ? ", node " + std::to_string(at.node) : "") + ": " +
                       e.message());
  } catch (const PoisonedInput&) {
    restore();
  }
  poisoned_.insert(&n);
  return s.done[n.id] = Outs{};
}

const Outs& Lowerer::lower_node_strict(Scope& s, const Node& n) {
  if (std::find(stack_.begin(), stack_.end(), n.id) != stack_.end()) {
    std::string path;
    auto from = std::find(stack_.begin(), stack_.end(), n.id);
    for (auto it = from; it != stack_.end(); ++it) path += std::to_string(*it) + " -> ";
    path += std::to_string(n.id);
    fail(n.id, "", "the links form a cycle: " + path);
  }
  check_node_shape(n);
  stack_.push_back(n.id);
  lower_inputs_first(s, n);
  Scope* saved_scope = cur_;
  const Node* saved_node = node_;
  cur_ = &s;
  node_ = &n;
  Outs outs = dispatch(n);
  cur_ = saved_scope;
  node_ = saved_node;
  stack_.pop_back();
  return s.done[n.id] = std::move(outs);
}

void Lowerer::lower_inputs_first(Scope& s, const Node& n) {
  struct Item {
    Scope* scope;
    const Node* node;
    bool expanded;
  };
  std::vector<Item> work{{&s, &n, false}};
  std::unordered_set<const Node*> seen{&n};
  while (!work.empty()) {
    if (work.back().expanded) {
      Item item = work.back();
      work.pop_back();
      if (item.node != &n && !item.scope->done.count(item.node->id))
        lower_node(*item.scope, *item.node);
      continue;
    }
    work.back().expanded = true;
    Item item = work.back();
    // Reverse so the first input is lowered first (the work list is a stack).
    for (auto input = item.node->inputs.rbegin(); input != item.node->inputs.rend(); ++input) {
      const Input& in = *input;
      if (!in.linked) continue;
      for (Scope* at = item.scope; at; at = at->parent) {
        if (at->owner && at->owner->id == in.from_node) break;  // a region's own value
        auto found = at->index.find(in.from_node);
        if (found == at->index.end()) continue;
        const Node& src = (*at->nodes)[found->second];
        const NodeSpec* spec = find_node_spec(src.type);
        if (spec && !spec->effectful && !at->done.count(src.id) && seen.insert(&src).second)
          work.push_back({at, &src, false});
        break;
      }
    }
  }
}

void Lowerer::check_node_shape(const Node& n) {
  const NodeSpec* spec = spec_of(n);
  for (const Input& in : n.inputs)
    if (!spec->any_inputs && !spec->input(in.pin))
      fail(n.id, in.pin, "node type '" + n.type + "' has no input '" + in.pin + "'");
  for (const PinSpec& p : spec->inputs) {
    if (!p.required || find_input(n, p.name)) continue;
    std::string message =
        "input '" + p.name + "' of this " + n.type + " node needs a link or a value";
    if (!(record_ && recording_here())) fail(n.id, p.name, message);
    note_problem(n.id, p.name, message);  // tolerant: input() reads it as 0
  }
  for (const auto& [name, v] : n.params)
    if (!spec->param(name))
      fail(n.id, name, "node type '" + n.type + "' has no parameter '" + name + "'");
  for (const ParamSpec& p : spec->params)
    if (p.required && !find_param(n, p.name))
      fail(n.id, p.name, "this " + n.type + " node needs the parameter '" + p.name + "'");
  for (const Region& r : n.regions)
    if (std::find(spec->regions.begin(), spec->regions.end(), r.name) == spec->regions.end())
      fail(n.id, r.name, "node type '" + n.type + "' has no region '" + r.name + "'");
}

Val Lowerer::resolve(int id, const std::string& pin, const std::string& my_pin) {
  for (Scope* s = cur_; s; s = s->parent) {
    if (s->owner && s->owner->id == id) {
      for (auto& [name, v] : s->region_values)
        if (name == pin) {
          if (record_ && recording_here()) note_output(id, pin, v);
          return v;
        }
      if (s->loop && pin.size() == 2 && pin[0] == 'i' && pin[1] >= '0' && pin[1] <= '3') {
        int dim = pin[1] - '0';
        if (dim < s->loop_dims) {
          Scope* saved = cur_;
          cur_ = s;
          Inst* idx = B().loop_index(s->loop, dim);
          cur_ = saved;
          Val v = value(vt(Scalar::I32), {idx});
          s->region_values.emplace_back(pin, v);
          if (record_ && recording_here()) note_output(id, pin, v);
          return v;
        }
      }
      fail_here(my_pin, "the " + s->owner->type + " node " + std::to_string(id) + " gives no '" +
                            pin + "' inside its region");
    }
    auto it = s->index.find(id);
    if (it == s->index.end()) continue;
    const Node& src = (*s->nodes)[it->second];
    const NodeSpec* spec = spec_of(src);
    if (!s->done.count(id) && spec->effectful) {
      if (std::find(stack_.begin(), stack_.end(), id) != stack_.end())
        fail_here(my_pin, "node " + std::to_string(id) + " uses its own result (through node " +
                              std::to_string(node_->id) + "); the links form a cycle");
      fail_here(my_pin, "node " + std::to_string(id) + " (" + src.type +
                            ") runs after this node; move it earlier in its region");
    }
    const Outs& outs = lower_node(*s, src);
    if (!poisoned_.empty() && poisoned_.count(&src)) throw PoisonedInput{};
    for (auto& [name, v] : outs)
      if (name == pin) return v;
    fail_here(my_pin,
              "node " + std::to_string(id) + " (" + src.type + ") has no output '" + pin + "'");
  }
  if (graph_->all.count(id))
    fail_here(my_pin,
              "node " + std::to_string(id) + " is inside another region and cannot be used here");
  fail_here(my_pin, "link to node " + std::to_string(id) + ", which does not exist");
}

Outs Lowerer::one(Val v) { return Outs{{"out", std::move(v)}}; }

Outs Lowerer::dispatch(const Node& n) {
  const NodeType& t = type_of(n);
  return (this->*t.lower)(t);
}

// Any value, variable reference, array or texture passes through: the identity.
Outs Lowerer::lower_reroute(const NodeType&) { return one(input("in")); }

}  // namespace detail

std::unique_ptr<ir::Kernel> lower_kernel(const Document& doc, const std::string& kernel,
                                         const TemplateArgs& args) {
  const KernelDecl* decl = nullptr;
  ir::count_work(doc.kernels.size());  // a scan: lowering many kernels passes the KernelDecl
  for (const KernelDecl& k : doc.kernels)
    if (k.name == kernel) decl = &k;
  if (!decl)
    throw Error(Place{doc.path, kernel, -1, ""}, "the document has no kernel '" + kernel + "'");
  return lower_kernel(doc, *decl, args);
}

std::unique_ptr<ir::Kernel> lower_kernel(const Document& doc, const KernelDecl& kernel,
                                         const TemplateArgs& args) {
  std::unique_ptr<ir::Kernel> k = detail::Lowerer(doc, kernel, args).run();
  k->distinct_ndarrays = args.distinct_ndarrays;
  return k;
}

KernelDecl function_probe(const FunctionDecl& f) {
  KernelDecl probe;
  probe.name = f.name;
  Node call;
  call.id = 0;
  call.type = "call";
  call.params.emplace_back("function", Literal::text(f.name));
  int id = 1;
  for (const FunctionPort& port : f.inputs) {
    probe.params.push_back({port.name, ParamKind::Value, port.type, 0});
    Node param;
    param.id = id;
    param.type = "param";
    param.params.emplace_back("name", Literal::text(port.name));
    probe.nodes.push_back(param);
    Input in;
    in.pin = port.name;
    in.linked = true;
    in.from_node = id++;
    in.from_pin = "out";
    call.inputs.push_back(in);
  }
  probe.nodes.push_back(call);
  return probe;
}

}  // namespace loom::graph
