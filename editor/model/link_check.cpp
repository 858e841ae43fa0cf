#include "editor/model/link_check.h"

#include <algorithm>
#include <set>
#include <unordered_map>

#include "compiler/graph/node_library.h"
#include "editor/model/graph_access.h"

namespace loom::editor {

using graph::Document;
using graph::Node;

namespace {

struct Place {
  const Node* node = nullptr;
  const std::vector<Node>* siblings = nullptr;
  size_t position = 0;
  int parent = -1;
};

using Index = std::unordered_map<int, Place>;

Index index_graph(const std::vector<Node>& nodes) {
  Index index;
  std::vector<std::pair<const std::vector<Node>*, int>> work{{&nodes, -1}};
  while (!work.empty()) {
    auto [list, parent] = work.back();
    work.pop_back();
    for (size_t i = 0; i < list->size(); ++i) {
      const Node& n = (*list)[i];
      index.emplace(n.id, Place{&n, list, i, parent});
      for (const graph::Region& r : n.regions) work.emplace_back(&r.nodes, n.id);
    }
  }
  return index;
}

bool encloses(const Index& index, int outer, int inner) {
  for (auto it = index.find(inner); it != index.end() && it->second.parent >= 0;
       it = index.find(it->second.parent))
    if (it->second.parent == outer) return true;
  return false;
}

bool effectful(const Node& n) {
  const graph::NodeSpec* spec = graph::find_node_spec(n.type);
  return spec && spec->effectful;
}

// Outputs a region node gives inside its own body only (loop indices).
bool inner_output(const Node& n, const std::string& pin) {
  if (n.type == "range_for" || n.type == "struct_for") return pin.size() == 2 && pin[0] == 'i';
  return n.type == "unroll" && pin == "i";
}

// A path from `from` to `to` along dependencies (validate's: link sources, except the region
// nodes around a node, and every region node on what it holds), empty when there is none.
std::vector<int> dependency_path(const Index& index, int from, int to) {
  std::unordered_map<int, std::vector<int>> deps;
  for (const auto& [id, place] : index) {
    for (const graph::Input& in : place.node->inputs)
      if (in.linked && !encloses(index, in.from_node, id)) deps[id].push_back(in.from_node);
    if (place.parent >= 0) deps[place.parent].push_back(id);
  }
  std::unordered_map<int, int> came_from{{from, from}};
  std::vector<int> stack{from};
  while (!stack.empty()) {
    int id = stack.back();
    stack.pop_back();
    if (id == to) {
      std::vector<int> path{to};
      for (int at = to; at != from;) path.push_back(at = came_from[at]);
      std::reverse(path.begin(), path.end());
      return path;
    }
    for (int d : deps[id])
      if (came_from.emplace(d, id).second) stack.push_back(d);
  }
  return {};
}

std::string describe(const Node& n) { return "node " + std::to_string(n.id) + " (" + n.type + ")"; }

bool same_problem(const graph::NodeProblem& a, const graph::NodeProblem& b) {
  return a.node == b.node && a.pin == b.pin && a.message == b.message;
}

// Graphs whose types depend on function `name`: itself and its callers, transitively.
std::vector<GraphRef> affected_graphs(const Document& doc, const GraphRef& g) {
  std::vector<GraphRef> out{g};
  if (!g.function) return out;
  std::set<std::string> functions{g.name};
  bool grew = true;
  auto calls_any = [&](const std::vector<Node>& nodes) {
    bool found = false;
    for_each_node(nodes, [&](const Node& n, const RegionRef&) {
      const graph::Literal* f = n.type == "call" ? n.param("function") : nullptr;
      found |= f && functions.count(f->s);
    });
    return found;
  };
  while (grew) {
    grew = false;
    for (const graph::FunctionDecl& f : doc.functions)
      if (!functions.count(f.name) && calls_any(f.nodes)) grew = functions.insert(f.name).second;
  }
  for (const graph::FunctionDecl& f : doc.functions)
    if (f.name != g.name && functions.count(f.name)) out.push_back(GraphRef{f.name, true});
  for (const graph::KernelDecl& k : doc.kernels)
    if (calls_any(k.nodes)) out.push_back(GraphRef{k.name, false});
  return out;
}

}  // namespace

std::string link_structure_problem(const Document& doc, const GraphRef& g, const PinRef& from,
                                   const PinRef& to) {
  const std::vector<Node>* nodes = graph_nodes(doc, g);
  if (!nodes)
    return (g.function ? "the document has no function '" : "the document has no kernel '") +
           g.name + "'";
  Index index = index_graph(*nodes);
  auto src_it = index.find(from.node);
  auto dst_it = index.find(to.node);
  if (src_it == index.end()) return "node " + std::to_string(from.node) + " does not exist";
  if (dst_it == index.end()) return "node " + std::to_string(to.node) + " does not exist";
  const Node& src = *src_it->second.node;
  const Node& dst = *dst_it->second.node;
  if (from.node == to.node) return "would make a cycle: a node cannot use its own output";

  std::vector<std::string> outs = graph::node_output_pins(doc, src);
  if (std::find(outs.begin(), outs.end(), from.pin) == outs.end())
    return describe(src) + " has no output '" + from.pin + "'";
  const graph::NodeSpec* spec = graph::find_node_spec(dst.type);
  if (!spec) return describe(dst) + " is of an unknown type";
  std::vector<std::string> ins = graph::node_input_pins(doc, dst);
  bool known_pin = std::find(ins.begin(), ins.end(), to.pin) != ins.end();
  if (!known_pin && (!spec->any_inputs || dst.type == "call"))
    return describe(dst) + " has no input '" + to.pin + "'";

  if (inner_output(src, from.pin) && !encloses(index, from.node, to.node))
    return "'" + from.pin + "' of " + describe(src) + " exists only inside its " +
           (src.regions.empty() ? std::string("body") : src.regions[0].name);

  // Visibility and order, as validate_document: walk out from the user.
  bool visible = false;
  for (int level = to.node;;) {
    const Place& at = index.at(level);
    if (at.parent == from.node) {
      visible = true;
      break;
    }
    if (at.siblings == src_it->second.siblings) {
      if (effectful(src) && src_it->second.position >= at.position)
        return describe(src) + " runs after this node; move it earlier in its region";
      visible = true;
      break;
    }
    if (at.parent < 0) break;
    level = at.parent;
  }
  if (!visible) return describe(src) + " is inside another region and cannot be used here";

  if (!encloses(index, from.node, to.node)) {
    std::vector<int> path = dependency_path(index, from.node, to.node);
    if (!path.empty()) {
      std::string text = std::to_string(to.node);
      for (int id : path) text += " -> " + std::to_string(id);
      return "would make a cycle: " + text;
    }
  }
  return "";
}

LinkCheck check_link(const Document& doc, const GraphRef& g, const PinRef& from, const PinRef& to,
                     const graph::GraphTypes* baseline) {
  LinkCheck result;
  result.reason = link_structure_problem(doc, g, from, to);
  if (!result.reason.empty()) return result;

  const Node* dst = find_node(doc, g, to.node);
  const graph::Input* existing = dst->input(to.pin);
  std::string replaces;
  if (existing && existing->linked) {
    if (existing->from_node == from.node && existing->from_pin == from.pin) {
      result.reason = "already connected";
      return result;
    }
    replaces = "; replaces the link from " + std::to_string(existing->from_node) + "." +
               existing->from_pin;
  } else if (existing) {
    replaces = "; replaces the value given to '" + to.pin + "'";
  }

  // Types: the real lowering on a copy with the link made.
  graph::GraphTypes own_before;
  if (!baseline) {
    own_before = graph::infer_graph_types(doc, g.name, g.function);
    baseline = &own_before;
  }
  const graph::PinValue* value = baseline->output(from.node, from.pin);
  std::string what = value ? graph::pin_value_text(*value) : "this value";

  Document with = doc;
  NodeSlot slot = *find_node_slot(with, g, to.node);
  graph::Input link;
  link.pin = to.pin;
  link.linked = true;
  link.from_node = from.node;
  link.from_pin = from.pin;
  auto& inputs = slot.node().inputs;
  auto it = std::find_if(inputs.begin(), inputs.end(),
                         [&](const graph::Input& in) { return in.pin == to.pin; });
  if (it != inputs.end())
    *it = link;
  else
    inputs.push_back(link);

  for (const GraphRef& affected : affected_graphs(doc, g)) {
    graph::GraphTypes before_other;
    const graph::GraphTypes* before = baseline;
    if (!(affected == g)) {
      before_other = graph::infer_graph_types(doc, affected.name, affected.function);
      before = &before_other;
    }
    graph::GraphTypes after = graph::infer_graph_types(with, affected.name, affected.function);
    std::vector<const graph::NodeProblem*> fresh;
    for (const graph::NodeProblem& p : after.problems) {
      bool old = false;
      for (const graph::NodeProblem& q : before->problems) old |= same_problem(p, q);
      if (!old) fresh.push_back(&p);
    }
    if (fresh.empty()) continue;
    const graph::NodeProblem* best = fresh[0];
    bool here = affected == g;
    for (const graph::NodeProblem* p : fresh)
      if (here && p->node == to.node && (best->node != to.node || p->pin == to.pin)) best = p;
    if (here && best->node == to.node)
      result.reason = what + " cannot flow into '" + to.pin + "': " + best->message;
    else if (here && best->node >= 0)
      result.reason = "breaks node " + std::to_string(best->node) + ": " + best->message;
    else
      result.reason = std::string("breaks ") + (affected.function ? "function '" : "kernel '") +
                      affected.name + "'" +
                      (best->node >= 0 ? " (node " + std::to_string(best->node) + ")" : "") + ": " +
                      best->message;
    return result;
  }
  result.verdict = replaces.empty() ? LinkVerdict::Accept : LinkVerdict::Replace;
  result.reason = what + " into '" + to.pin + "'" + replaces;
  return result;
}

}  // namespace loom::editor
