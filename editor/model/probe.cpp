#include "editor/model/probe.h"

#include <algorithm>
#include <functional>

#include "compiler/graph/infer.h"
#include "editor/model/graph_access.h"

namespace loom::editor {

using graph::Input;
using graph::Literal;
using graph::Node;

namespace {

Input link(int node, const std::string& pin, const std::string& to) {
  Input in;
  in.pin = to;
  in.linked = true;
  in.from_node = node;
  in.from_pin = pin;
  return in;
}

Input int_literal(const std::string& pin, int64_t v) {
  Input in;
  in.pin = pin;
  in.literal = Literal::integer(v);
  return in;
}

// The nodes from the top level down to `id` (the node itself last); empty when absent.
bool path_to(const std::vector<Node>& nodes, int id, std::vector<const Node*>* path) {
  for (const Node& n : nodes) {
    path->push_back(&n);
    if (n.id == id) return true;
    for (const graph::Region& r : n.regions)
      if (path_to(r.nodes, id, path)) return true;
    path->pop_back();
  }
  return false;
}

// The probe copy writes nothing: stores go, atomics become loads of the same element.
void remove_writes(std::vector<Node>& nodes) {
  nodes.erase(
      std::remove_if(nodes.begin(), nodes.end(),
                     [](const Node& n) { return n.type == "store" || n.type == "tex_store"; }),
      nodes.end());
  for (Node& n : nodes) {
    if (n.type.rfind("atomic_", 0) == 0) {
      n.type = "load";
      n.version = 1;
      n.inputs.erase(std::remove_if(n.inputs.begin(), n.inputs.end(),
                                    [](const Input& in) { return in.pin == "value"; }),
                     n.inputs.end());
    }
    for (graph::Region& r : n.regions) remove_writes(r.nodes);
  }
}

std::vector<Node>* region_list(std::vector<Node>& nodes, int owner, const std::string& region) {
  for (Node& n : nodes) {
    for (graph::Region& r : n.regions) {
      if (n.id == owner && r.name == region) return &r.nodes;
      if (std::vector<Node>* inner = region_list(r.nodes, owner, region)) return inner;
    }
  }
  return nullptr;
}

// A literal whole number on input `pin` of `n` (its default when absent).
std::optional<int64_t> bound(const Node& n, const std::string& pin, int64_t fallback) {
  const Input* in = n.input(pin);
  if (!in) return fallback;
  if (in->linked || in->literal.kind != Literal::Kind::Int) return std::nullopt;
  return in->literal.i;
}

}  // namespace

std::optional<ProbePlan> plan_probe(const graph::Document& doc, const std::string& kernel,
                                    const PinRef& pin, std::string* why) {
  const graph::KernelDecl* k = doc.kernel(kernel);
  if (!k) {
    *why = "probes show kernel values: '" + kernel + "' is no kernel of the program";
    return std::nullopt;
  }
  std::vector<const Node*> path;
  if (!path_to(k->nodes, pin.node, &path)) {
    *why = "kernel '" + kernel + "' has no node " + std::to_string(pin.node);
    return std::nullopt;
  }
  graph::GraphTypes types = graph::infer_graph_types(doc, kernel, false);
  const graph::PinValue* value = types.output(pin.node, pin.pin);
  if (!value || value->kind != graph::PinValue::Kind::Value) {
    *why =
        "pin '" + pin.pin + "' of node " + std::to_string(pin.node) + " carries no value to show";
    return std::nullopt;
  }
  ValueType type = value->type;
  if (value->literal && type.scalar == Scalar::Void) type = ValueType{Scalar::F32};

  // The iteration space: the top-level loop around the node (or the node itself when it is
  // that loop and the pin is its index).
  const Node* loop = path.front();
  bool parallel = loop->type == "range_for" || loop->type == "struct_for";
  ProbePlan plan;
  std::vector<Input> indices;
  std::vector<int64_t> begins;  // per index: the loop's first value (the probe starts at 0)
  if (!parallel) {
    plan.shape = {1};
    indices.push_back(int_literal("i0", 0));
    begins.push_back(0);
  } else if (loop->type == "struct_for") {
    const Literal* f = loop->param("field");
    std::string name = f && f->kind == Literal::Kind::String ? f->s : "";
    for (const graph::Pipeline& p : doc.pipelines)  // a template parameter: its first binding
      for (const graph::Launch& l : p.launches)
        if (l.kernel == kernel)
          for (const auto& [param, arg] : l.args)
            if (param == name && arg.kind == Literal::Kind::String && !doc.field(name))
              name = arg.s;
    const FieldDesc* field = doc.field(name);
    if (!field) {
      *why = "the loop's field '" + name + "' is not known before a launch";
      return std::nullopt;
    }
    plan.shape = field->shape;
    for (size_t d = 0; d < field->shape.size(); ++d) {
      indices.push_back(link(loop->id, "i" + std::to_string(d), "i" + std::to_string(d)));
      begins.push_back(0);
    }
  } else {
    for (int d = 0; d < 3; ++d) {
      std::string ds = std::to_string(d);
      if (d > 0 && !loop->input("end" + ds)) break;
      std::optional<int64_t> b = bound(*loop, "begin" + ds, 0), e = bound(*loop, "end" + ds, 0);
      if (!b || !e) {
        *why = "the loop's bounds must be numbers to probe inside it (node " +
               std::to_string(loop->id) + ")";
        return std::nullopt;
      }
      plan.shape.push_back(std::max<int64_t>(*e - *b, 1));
      indices.push_back(link(loop->id, "i" + ds, "i" + ds));
      begins.push_back(*b);
    }
  }
  if (type.scalar == Scalar::Bool) type.scalar = Scalar::I32;
  plan.type = type;
  plan.kernel = "__probe_" + kernel;

  graph::Document& out = plan.document;
  out = doc;
  out.layout.clear();
  out.view = {};
  out.fields.push_back(FieldDesc{kProbeField, type, plan.shape, Layout::AoS});
  graph::KernelDecl probe = *k;
  probe.name = plan.kernel;
  remove_writes(probe.nodes);
  int next = 0;
  for_each_node(probe.nodes,
                [&](const Node& n, const RegionRef&) { next = std::max(next, n.id + 1); });

  // Where the store goes: after the node in its region, or inside the loop's body when the
  // pin is the loop's own index.
  std::vector<Node>* region = &probe.nodes;
  if (path.size() >= 2) {
    const Node* owner = path[path.size() - 2];
    for (const graph::Region& r : owner->regions)
      for (const Node& n : r.nodes)
        if (n.id == pin.node) region = region_list(probe.nodes, owner->id, r.name);
  }
  if (pin.node == loop->id && parallel) region = region_list(probe.nodes, loop->id, "body");
  if (!region) {
    *why = "node " + std::to_string(pin.node) + " is not reachable for a probe";
    return std::nullopt;
  }
  Node store;
  store.type = "store";
  store.params.emplace_back("field", Literal::text(kProbeField));
  for (size_t d = 0; d < indices.size(); ++d) {
    Input in = indices[d];
    if (begins[d] != 0) {  // the probe's index is i - begin
      Node sub;
      sub.id = next++;
      sub.type = "sub";
      sub.inputs = {in, int_literal("b", begins[d])};
      sub.inputs[0].pin = "a";
      region->push_back(sub);
      in = link(sub.id, "out", in.pin);
    }
    store.inputs.push_back(in);
  }
  Input v = link(pin.node, pin.pin, "value");
  if (value->type.scalar == Scalar::Bool) {
    Node cast;
    cast.id = next++;
    cast.type = "cast";
    cast.inputs = {link(pin.node, pin.pin, "a")};
    cast.params.emplace_back("type", Literal::text(value_type_name(type)));
    region->push_back(cast);
    v = link(cast.id, "out", "value");
  }
  store.inputs.push_back(v);
  store.id = next++;
  region->push_back(store);
  out.kernels.push_back(std::move(probe));

  graph::Launch launch{plan.kernel, {}};
  for (const char* pipe : {"step", "init"})
    if (const graph::Pipeline* p = doc.pipeline(pipe))
      for (const graph::Launch& l : p->launches)
        if (l.kernel == kernel && launch.args.empty()) launch.args = l.args;
  if (launch.args.empty())
    for (const graph::Pipeline& p : doc.pipelines)
      for (const graph::Launch& l : p.launches)
        if (l.kernel == kernel && launch.args.empty()) launch.args = l.args;
  out.pipelines.push_back(graph::Pipeline{kProbePipeline, {launch}});
  return plan;
}

}  // namespace loom::editor
