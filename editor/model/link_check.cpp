#include "editor/model/link_check.h"

#include <algorithm>
#include <cstdio>
#include <optional>
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

// Lowering's index count check on a memory node ("this memory has 2 dimension(s) but 1
// index value(s) were given"): {dimensions, values given}, or nullopt for other problems.
std::optional<std::pair<int, int>> index_count(const graph::NodeProblem& p) {
  int dims = 0, given = 0, used = 0;
  if (std::sscanf(p.message.c_str(),
                  "this memory has %d dimension(s) but %d index value(s) were given%n", &dims,
                  &given, &used) != 2 ||
      used != static_cast<int>(p.message.size()))
    return std::nullopt;
  return std::pair{dims, given};
}

bool index_pin(const std::string& pin) {
  return pin.size() == 2 && pin[0] == 'i' && pin[1] >= '0' && pin[1] <= '3';
}

// A link into an index pin that leaves its memory node short of indices, having no fewer than
// before: one step of linking the indices one at a time. The node is incomplete, not wrong.
bool partial_indices(const graph::NodeProblem& fresh, const graph::GraphTypes& before,
                     const PinRef& to) {
  if (fresh.node != to.node || !index_pin(to.pin)) return false;
  auto after = index_count(fresh);
  if (!after || after->second >= after->first) return false;
  int had = after->first;  // a node without the problem had all its indices
  for (const graph::NodeProblem& q : before.problems)
    if (q.node == to.node)
      if (auto count = index_count(q)) had = count->second;
  return after->second >= had;
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

namespace {

// Whether node `id` of `with`, its empty input pins given a literal 0, has no problem that
// `before` did not have.
bool completes_with_zeros(const Document& with, const GraphRef& g, int id,
                          const graph::GraphTypes& before) {
  Document filled = with;
  Node& n = find_node_slot(filled, g, id)->node();
  const graph::NodeSpec* spec = graph::find_node_spec(n.type);
  if (!spec) return false;
  for (const std::string& pin : graph::node_input_pins(filled, n)) {
    // Required pins, and the named pins of expr and call nodes; optional ones stay empty.
    auto fixed = std::find_if(spec->inputs.begin(), spec->inputs.end(),
                              [&](const graph::PinSpec& p) { return p.name == pin; });
    if (n.input(pin) || (fixed != spec->inputs.end() && !fixed->required)) continue;
    graph::Input zero;
    zero.pin = pin;
    zero.literal = graph::Literal::integer(0);
    n.inputs.push_back(zero);
  }
  graph::GraphTypes after = graph::infer_graph_types(filled, g.name, g.function);
  for (const graph::NodeProblem& p : after.problems) {
    bool old = false;
    for (const graph::NodeProblem& q : before.problems) old |= same_problem(p, q);
    if (!old) return false;
  }
  return true;
}

}  // namespace

RegionRef reader_region(const Document& doc, const GraphRef& g, const PinRef& from) {
  const Node* n = find_node(doc, g, from.node);
  if (!n || !inner_output(*n, from.pin)) return region_of(doc, g, from.node);
  const graph::NodeSpec* spec = graph::find_node_spec(n->type);
  return spec && !spec->regions.empty() ? RegionRef{from.node, spec->regions[0]}
                                        : region_of(doc, g, from.node);
}

namespace {

// The node of `from`'s region that `to` is or lies in, when `from` is an ordered node listed
// after it there: `from` must run before it for the link.
std::optional<int> needed_earlier(const Document& doc, const GraphRef& g, const PinRef& from,
                                  const PinRef& to) {
  const std::vector<Node>* nodes = graph_nodes(doc, g);
  if (!nodes) return std::nullopt;
  Index index = index_graph(*nodes);
  auto src = index.find(from.node);
  if (src == index.end() || !effectful(*src->second.node)) return std::nullopt;
  for (auto at = index.find(to.node); at != index.end(); at = index.find(at->second.parent)) {
    if (at->second.parent == from.node) return std::nullopt;
    if (at->second.siblings == src->second.siblings) {
      if (at->second.position >= src->second.position) return std::nullopt;
      return at->first;
    }
  }
  return std::nullopt;
}

// `doc` with node `id` moved to just before node `before` of the same region.
Document moved_before(const Document& doc, const GraphRef& g, int id, int before) {
  Document out = doc;
  NodeSlot slot = *find_node_slot(out, g, id);
  Node node = std::move(slot.node());
  slot.list->erase(slot.list->begin() + static_cast<std::ptrdiff_t>(slot.index));
  auto at = std::find_if(slot.list->begin(), slot.list->end(),
                         [&](const Node& n) { return n.id == before; });
  slot.list->insert(at, std::move(node));
  return out;
}

// Whether `moved` (node `id` run earlier) keeps every link read inside `id` that `doc`
// allowed: the only links whose order a move earlier can break.
bool reads_stay_valid(const Document& doc, const Document& moved, const GraphRef& g, int id) {
  std::vector<int> inside = subtree_ids(*find_node(moved, g, id));
  for (int reader : inside)
    for (const graph::Input& in : find_node(moved, g, reader)->inputs) {
      if (!in.linked || std::find(inside.begin(), inside.end(), in.from_node) != inside.end())
        continue;
      PinRef from{in.from_node, in.from_pin}, to{reader, in.pin};
      if (!link_structure_problem(moved, g, from, to).empty() &&
          link_structure_problem(doc, g, from, to).empty())
        return false;
    }
  return true;
}

}  // namespace

LinkCheck check_link(const Document& doc, const GraphRef& g, const PinRef& from, const PinRef& to,
                     const graph::GraphTypes* baseline) {
  LinkCheck result;
  result.reason = link_structure_problem(doc, g, from, to);
  // An ordered node listed too late for this link: the link is made on a copy where it runs
  // just before the node that needs it, when that move breaks no other link.
  std::optional<Document> moved;
  std::string refusal = result.reason;
  if (!refusal.empty()) {
    std::optional<int> before = needed_earlier(doc, g, from, to);
    if (!before) return result;
    moved = moved_before(doc, g, from.node, *before);
    if (!link_structure_problem(*moved, g, from, to).empty() ||
        !reads_stay_valid(doc, *moved, g, from.node))
      return result;
    result.run_before = *before;
  }

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

  Document with = moved ? std::move(*moved) : Document(doc);
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
    if (!value && affected == g)  // an output read by nothing before (a loop index) is now read
      if (const graph::PinValue* v = after.output(from.node, from.pin))
        what = graph::pin_value_text(*v);
    std::vector<const graph::NodeProblem*> fresh;
    for (const graph::NodeProblem& p : after.problems) {
      bool old = false;
      for (const graph::NodeProblem& q : before->problems) old |= same_problem(p, q);
      if (!old && !(affected == g && partial_indices(p, *before, to))) fresh.push_back(&p);
    }
    // Only the target node complains, and filling its other empty pins with a 0 settles it:
    // it is unfinished (an expr's or call's inputs linked one at a time), not wrong.
    if (!fresh.empty() && affected == g &&
        std::all_of(fresh.begin(), fresh.end(),
                    [&](const graph::NodeProblem* p) { return p->node == to.node; }) &&
        completes_with_zeros(with, g, to.node, *before))
      fresh.clear();
    if (fresh.empty()) continue;
    if (result.run_before >= 0) {  // refused as it was: the order is what the user sees first
      result.run_before = -1;
      result.reason = refusal;
      return result;
    }
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
  if (result.run_before >= 0)
    result.reason += "; node " + std::to_string(from.node) + " moves to run before node " +
                     std::to_string(result.run_before);
  return result;
}

}  // namespace loom::editor
