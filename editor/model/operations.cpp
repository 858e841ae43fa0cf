#include "editor/model/operations.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <unordered_map>

#include "compiler/graph/document_json.h"
#include "compiler/graph/expression.h"
#include "compiler/graph/node_library.h"
#include "editor/model/clipboard.h"
#include "editor/model/edits.h"
#include "editor/model/graph_access.h"
#include "editor/model/link_check.h"
#include "runtime/common/error.h"

namespace loom::editor {

using graph::Document;
using graph::Node;

namespace {

// One undo step for everything done while it lives.
class Step {
 public:
  Step(EditorDocument& d, const std::string& label) : d_(d) { d_.begin_group(label); }
  ~Step() { d_.end_group(); }
  Step(const Step&) = delete;
  Step& operator=(const Step&) = delete;

 private:
  EditorDocument& d_;
};

Vec2 rounded(Vec2 v) { return Vec2{std::round(v.x), std::round(v.y)}; }

std::string no_node(int id) { return "there is no node " + std::to_string(id); }

// A region nodes can be put in: the top level, or a region its node's type has.
std::string region_problem(const Document& doc, const GraphRef& g, const RegionRef& r) {
  if (!graph_nodes(doc, g))
    return (g.function ? "there is no function '" : "there is no kernel '") + g.name + "'";
  if (r.top()) return "";
  const Node* owner = find_node(doc, g, r.node);
  if (!owner) return no_node(r.node);
  const graph::NodeSpec* spec = graph::find_node_spec(owner->type);
  if (!spec ||
      std::find(spec->regions.begin(), spec->regions.end(), r.region) == spec->regions.end())
    return "node " + std::to_string(r.node) + " (" + owner->type + ") has no region '" + r.region +
           "'";
  return "";
}

// Selected ids that are not inside another selected node, in document order.
std::vector<int> roots_of(const Document& doc, const GraphRef& g, const std::vector<int>& ids) {
  std::set<int> selected(ids.begin(), ids.end());
  std::vector<int> roots;
  const std::vector<Node>* nodes = graph_nodes(doc, g);
  if (!nodes) return roots;
  std::unordered_map<int, int> parent;
  for_each_node(*nodes, [&](const Node& n, const RegionRef& r) { parent[n.id] = r.node; });
  for_each_node(*nodes, [&](const Node& n, const RegionRef& r) {
    if (!selected.count(n.id)) return;
    for (int at = r.node; at >= 0; at = parent[at])
      if (selected.count(at)) return;
    roots.push_back(n.id);
  });
  return roots;
}

// Gives every node of `nodes` (nested included) a fresh id from `next`; links among them
// follow, other links are dropped (or kept, `keep_outside`). Returns old -> new.
std::unordered_map<int, int> renumber(std::vector<Node>& nodes, int& next, bool keep_outside) {
  std::unordered_map<int, int> ids;
  std::function<void(std::vector<Node>&)> number = [&](std::vector<Node>& list) {
    for (Node& n : list) {
      ids.emplace(n.id, next);
      n.id = next++;
      for (graph::Region& r : n.regions) number(r.nodes);
    }
  };
  number(nodes);
  std::function<void(std::vector<Node>&)> relink = [&](std::vector<Node>& list) {
    for (Node& n : list) {
      std::erase_if(n.inputs, [&](graph::Input& in) {
        if (!in.linked) return false;
        auto it = ids.find(in.from_node);
        if (it == ids.end()) return !keep_outside;
        in.from_node = it->second;
        in.literal.spelling.clear();
        return false;
      });
      for (graph::Region& r : n.regions) relink(r.nodes);
    }
  };
  relink(nodes);
  return ids;
}

void select_nodes(EditorDocument& d, const GraphRef& g, std::vector<int> ids) {
  Selection s;
  s.graph = g;
  s.nodes = std::move(ids);
  d.set_selection(std::move(s));
}

}  // namespace

EditResult add_node(EditorDocument& d, const GraphRef& g, const RegionRef& region,
                    const std::string& type, Vec2 at, const Params& params) {
  const Document& doc = d.doc();
  if (std::string problem = region_problem(doc, g, region); !problem.empty())
    return EditResult::fail(problem);
  const graph::NodeSpec* spec = graph::find_node_spec(type);
  if (!spec) return EditResult::fail("unknown node type '" + type + "'");
  Node n;
  n.id = next_node_id(doc, g);
  n.type = type;
  n.version = spec->version;
  n.params = params;
  Step step(d, "Add " + type);
  const std::vector<Node>* list = region_nodes(doc, g, region);
  d.execute(insert_node(g, region, list ? list->size() : 0, n));
  d.execute(set_position(d.doc(), g.name, n.id, rounded(at)));
  return EditResult{true, "", {n.id}};
}

EditResult remove_nodes(EditorDocument& d, const GraphRef& g, const std::vector<int>& ids) {
  const Document& doc = d.doc();
  std::vector<int> roots = roots_of(doc, g, ids);
  if (roots.empty()) return EditResult::fail("nothing to delete");
  std::set<int> gone;
  for (int id : roots)
    for (int x : subtree_ids(*find_node(doc, g, id))) gone.insert(x);
  Step step(d, roots.size() == 1 ? "Delete node" : "Delete nodes");
  // Links into the removed nodes from the nodes that stay.
  std::vector<std::pair<int, std::string>> cut;
  for_each_node(*graph_nodes(doc, g), [&](const Node& n, const RegionRef&) {
    if (gone.count(n.id)) return;
    for (const graph::Input& in : n.inputs)
      if (in.linked && gone.count(in.from_node)) cut.emplace_back(n.id, in.pin);
  });
  for (const auto& [node, pin] : cut) d.execute(set_input(d.doc(), g, node, pin, std::nullopt));
  for (int id : gone) {
    if (node_position(d.doc(), g.name, id))
      d.execute(set_position(d.doc(), g.name, id, std::nullopt));
    // The layout names live nodes only (the loader refuses others).
    d.execute(loom::editor::set_collapsed(d.doc(), g.name, id, false));
  }
  for (int id : roots) d.execute(erase_node(d.doc(), g, id));
  Selection s = d.selection();
  std::erase_if(s.nodes, [&](int id) { return gone.count(id) > 0; });
  d.set_selection(s);
  return EditResult{};
}

EditResult connect(EditorDocument& d, const GraphRef& g, const PinRef& from, const PinRef& to) {
  LinkCheck check = check_link(d.doc(), g, from, to, &d.types(g));
  if (!check.ok()) return EditResult::fail(check.reason);
  graph::Input link;
  link.pin = to.pin;
  link.linked = true;
  link.from_node = from.node;
  link.from_pin = from.pin;
  Step step(d, "Connect");
  if (check.run_before >= 0) {  // the source runs just before the first node that needs it
    Node copy = *find_node(d.doc(), g, from.node);
    RegionRef region = region_of(d.doc(), g, from.node);
    d.execute(erase_node(d.doc(), g, from.node));
    const std::vector<Node>& list = *region_nodes(d.doc(), g, region);
    auto at = std::find_if(list.begin(), list.end(),
                           [&](const Node& n) { return n.id == check.run_before; });
    d.execute(insert_node(g, region, static_cast<size_t>(at - list.begin()), std::move(copy)));
  }
  d.execute(set_input(d.doc(), g, to.node, to.pin, link));
  return EditResult{true, check.reason, {}};
}

EditResult disconnect(EditorDocument& d, const GraphRef& g, const PinRef& to) {
  const Node* n = find_node(d.doc(), g, to.node);
  if (!n) return EditResult::fail(no_node(to.node));
  const graph::Input* in = n->input(to.pin);
  if (!in || !in->linked)
    return EditResult::fail("input '" + to.pin + "' of node " + std::to_string(to.node) +
                            " has no link");
  d.execute(set_input(d.doc(), g, to.node, to.pin, std::nullopt), "Disconnect");
  return EditResult{};
}

EditResult set_literal(EditorDocument& d, const GraphRef& g, const PinRef& to,
                       std::optional<graph::Literal> value) {
  if (!find_node(d.doc(), g, to.node)) return EditResult::fail(no_node(to.node));
  std::optional<graph::Input> in;
  if (value) {
    in = graph::Input{};
    in->pin = to.pin;
    in->literal = std::move(*value);
  }
  d.execute(set_input(d.doc(), g, to.node, to.pin, std::move(in)), "Set value");
  return EditResult{};
}

EditResult set_param(EditorDocument& d, const GraphRef& g, int node, const std::string& name,
                     std::optional<graph::Literal> value) {
  const Node* n = find_node(d.doc(), g, node);
  if (!n) return EditResult::fail(no_node(node));
  // An expr's pins are its formula's variables: inputs a new formula no longer reads go, in
  // the same undo step (node_input_pins shows the new variables as pins).
  std::vector<std::string> unused;
  if (n->type == "expr" && name == "expr" && value && value->kind == graph::Literal::Kind::String) {
    try {
      std::vector<std::string> vars = graph::expression_inputs(*graph::parse_expression(value->s));
      for (const graph::Input& in : n->inputs)
        if (std::find(vars.begin(), vars.end(), in.pin) == vars.end()) unused.push_back(in.pin);
    } catch (const Error&) {
      // Not a formula yet: its inputs stay until it is one.
    }
  }
  Step step(d, "Set " + name);
  d.execute(set_param(d.doc(), g, node, name, std::move(value)));
  for (const std::string& pin : unused) d.execute(set_input(d.doc(), g, node, pin, std::nullopt));
  return EditResult{};
}

EditResult insert_reroute(EditorDocument& d, const GraphRef& g, const PinRef& to, Vec2 at) {
  const Node* user = find_node(d.doc(), g, to.node);
  if (!user) return EditResult::fail(no_node(to.node));
  const graph::Input* in = user->input(to.pin);
  if (!in || !in->linked) return EditResult::fail("input '" + to.pin + "' has no link to reroute");
  graph::Input old = *in;
  RegionRef region = region_of(d.doc(), g, to.node);
  Step step(d, "Insert reroute");
  EditResult added = add_node(d, g, region, "reroute", at);
  int id = added.nodes.at(0);
  graph::Input feed = old;
  feed.pin = "in";
  d.execute(set_input(d.doc(), g, id, "in", feed));
  graph::Input out;
  out.pin = to.pin;
  out.linked = true;
  out.from_node = id;
  out.from_pin = "out";
  d.execute(set_input(d.doc(), g, to.node, to.pin, out));
  return EditResult{true, "", {id}};
}

EditResult place_nodes(EditorDocument& d, const GraphRef& g,
                       const std::vector<std::pair<int, Vec2>>& positions) {
  Step step(d, "Place nodes");
  for (const auto& [id, at] : positions)
    if (find_node(d.doc(), g, id) && !node_position(d.doc(), g.name, id))
      d.execute(set_position(d.doc(), g.name, id, rounded(at)));
  return EditResult{};
}

EditResult duplicate_nodes(EditorDocument& d, const GraphRef& g, const std::vector<int>& ids,
                           Vec2 offset) {
  std::vector<int> roots = roots_of(d.doc(), g, ids);
  if (roots.empty()) return EditResult::fail("nothing to duplicate");
  std::vector<Node> copies;
  std::vector<RegionRef> regions;
  for (int id : roots) {
    copies.push_back(*find_node(d.doc(), g, id));
    regions.push_back(region_of(d.doc(), g, id));
  }
  int next = next_node_id(d.doc(), g);
  std::unordered_map<int, int> ids_map = renumber(copies, next, /*keep_outside=*/true);
  Step step(d, "Duplicate");
  for (size_t i = 0; i < copies.size(); ++i) {
    const std::vector<Node>* list = region_nodes(d.doc(), g, regions[i]);
    d.execute(insert_node(g, regions[i], list ? list->size() : 0, copies[i]));
  }
  for (const auto& [old_id, new_id] : ids_map)
    if (auto p = node_position(d.doc(), g.name, old_id))
      d.execute(
          set_position(d.doc(), g.name, new_id, rounded(Vec2{p->x + offset.x, p->y + offset.y})));
  EditResult result;
  for (const Node& n : copies) result.nodes.push_back(n.id);
  select_nodes(d, g, result.nodes);
  return result;
}

EditResult paste_text(EditorDocument& d, const GraphRef& g, const RegionRef& region,
                      std::string_view text, std::optional<Vec2> at) {
  if (std::string problem = region_problem(d.doc(), g, region); !problem.empty())
    return EditResult::fail(problem);
  ClipboardContent content;
  try {
    content = parse_clipboard(text);
  } catch (const Error& e) {
    return EditResult::fail(std::string("cannot paste: ") + e.what());
  }
  int next = next_node_id(d.doc(), g);
  std::unordered_map<int, int> ids = renumber(content.nodes, next, /*keep_outside=*/false);
  Vec2 delta{40, 40};
  if (at) {
    float x = std::numeric_limits<float>::max(), y = x;
    for (const graph::NodePosition& p : content.positions) {
      x = std::min(x, p.x);
      y = std::min(y, p.y);
    }
    if (!content.positions.empty()) delta = Vec2{at->x - x, at->y - y};
  }
  Step step(d, "Paste");
  for (const graph::FunctionDecl& f : content.functions)
    if (!d.doc().function(f.name)) d.execute(insert_function(d.doc().functions.size(), f));
  for (const Node& n : content.nodes) {
    const std::vector<Node>* list = region_nodes(d.doc(), g, region);
    d.execute(insert_node(g, region, list ? list->size() : 0, n));
  }
  std::set<int> placed;
  for (const graph::NodePosition& p : content.positions)
    if (auto it = ids.find(p.node); it != ids.end()) {
      d.execute(
          set_position(d.doc(), g.name, it->second, rounded(Vec2{p.x + delta.x, p.y + delta.y})));
      placed.insert(it->second);
    }
  // Top-level nodes that came without positions go where the user pasted, in a row.
  if (at) {
    float x = at->x;
    for (const Node& n : content.nodes)
      if (!placed.count(n.id)) {
        d.execute(set_position(d.doc(), g.name, n.id, rounded(Vec2{x, at->y})));
        x += 200;
      }
  }
  EditResult result;
  for (const Node& n : content.nodes) result.nodes.push_back(n.id);
  select_nodes(d, g, result.nodes);
  return result;
}

EditResult reorder_node(EditorDocument& d, const GraphRef& g, int id, int delta) {
  auto slot = find_node_slot(const_cast<Document&>(d.doc()), g, id);
  if (!slot) return EditResult::fail(no_node(id));
  long target = static_cast<long>(slot->index) + delta;
  target = std::clamp(target, 0L, static_cast<long>(slot->list->size()) - 1);
  if (target == static_cast<long>(slot->index)) return EditResult::fail("already there");
  Node copy = slot->node();
  RegionRef region = slot->region;
  Step step(d, delta < 0 ? "Run earlier" : "Run later");
  d.execute(erase_node(d.doc(), g, id));
  d.execute(insert_node(g, region, static_cast<size_t>(target), std::move(copy)));
  return EditResult{};
}

EditResult move_to_region(EditorDocument& d, const GraphRef& g, const std::vector<int>& ids,
                          const RegionRef& region) {
  if (std::string problem = region_problem(d.doc(), g, region); !problem.empty())
    return EditResult::fail(problem);
  std::vector<int> roots = roots_of(d.doc(), g, ids);
  for (int id : roots)
    if (!region.top() && is_inside(d.doc(), g, region.node, id))
      return EditResult::fail("node " + std::to_string(id) + " cannot be moved into itself");
  Step step(d, "Move to region");
  for (int id : roots) {
    if (region_of(d.doc(), g, id) == region) continue;
    Node copy = *find_node(d.doc(), g, id);
    d.execute(erase_node(d.doc(), g, id));
    const std::vector<Node>* list = region_nodes(d.doc(), g, region);
    d.execute(insert_node(g, region, list ? list->size() : 0, std::move(copy)));
  }
  return EditResult{};
}

EditResult add_comment(EditorDocument& d, const GraphRef& g, graph::CommentFrame frame) {
  if (!d.doc().has_graph(g.name)) return EditResult::fail("there is no graph '" + g.name + "'");
  if (!(frame.w > 0) || !(frame.h > 0))
    return EditResult::fail("a comment needs a positive width and height");
  const graph::GraphLayout* l = find_layout(d.doc(), g.name);
  size_t index = l ? l->comments.size() : 0;
  d.execute(insert_comment(g.name, index, std::move(frame)), "Add comment");
  return EditResult{true, "", {static_cast<int>(index)}};
}

EditResult remove_comments(EditorDocument& d, const GraphRef& g, std::vector<size_t> indices) {
  std::sort(indices.rbegin(), indices.rend());  // from the back: indices stay valid
  indices.erase(std::unique(indices.begin(), indices.end()), indices.end());
  Step step(d, "Delete comment");
  for (size_t i : indices) d.execute(erase_comment(d.doc(), g.name, i));
  Selection s = d.selection();
  s.comments.clear();
  d.set_selection(s);
  return EditResult{};
}

EditResult set_comment(EditorDocument& d, const GraphRef& g, size_t index,
                       graph::CommentFrame frame) {
  const graph::GraphLayout* l = find_layout(d.doc(), g.name);
  if (!l || index >= l->comments.size())
    return EditResult::fail("there is no comment " + std::to_string(index));
  if (!(frame.w > 0) || !(frame.h > 0))
    return EditResult::fail("a comment needs a positive width and height");
  LayoutChange change{g.name, {}, {{index, std::move(frame)}}};
  d.execute(change_layout(d.doc(), change), "Edit comment");
  return EditResult{};
}

EditResult set_collapsed(EditorDocument& d, const GraphRef& g, const std::vector<int>& ids,
                         bool collapsed) {
  for (int id : ids)
    if (!find_node(d.doc(), g, id)) return EditResult::fail(no_node(id));
  Step step(d, collapsed ? "Collapse" : "Expand");
  for (int id : ids) d.execute(loom::editor::set_collapsed(d.doc(), g.name, id, collapsed));
  return EditResult{};
}

EditResult replace_document(EditorDocument& d, graph::Document next, const std::string& label) {
  if (next.path.empty() || next.path == "<memory>") next.path = d.doc().path;
  if (graph::save_document(next) == d.save_text()) return EditResult{true, "unchanged", {}};
  d.execute(swap_document(d.doc(), std::move(next)), label);
  return EditResult{};
}

EditResult create_function(EditorDocument& d, const std::string& name,
                           std::vector<graph::FunctionPort> inputs,
                           std::vector<graph::FunctionPort> outputs) {
  if (name.empty()) return EditResult::fail("a function needs a name");
  if (d.doc().function(name))
    return EditResult::fail("there is a function named '" + name + "' already");
  if (d.doc().kernel(name))
    return EditResult::fail("there is a kernel named '" + name + "' (layout is by name)");
  for (const auto& port : inputs)
    if (!parse_value_type(port.type))
      return EditResult::fail("input '" + port.name + "': unknown type '" + port.type + "'");
  for (const auto& port : outputs)
    if (!parse_value_type(port.type))
      return EditResult::fail("output '" + port.name + "': unknown type '" + port.type + "'");
  graph::FunctionDecl f;
  f.name = name;
  f.inputs = std::move(inputs);
  f.outputs = std::move(outputs);
  graph::GraphLayout layout{name, {}, {}};
  int id = 1;
  for (const graph::FunctionPort& port : f.inputs) {
    Node n;
    n.id = id++;
    n.type = "input";
    n.params.emplace_back("name", graph::Literal::text(port.name));
    layout.positions.push_back({n.id, 0, static_cast<float>(80 * (n.id - 1))});
    f.nodes.push_back(std::move(n));
  }
  Node out;
  out.id = id;
  out.type = "output";
  for (const graph::FunctionPort& port : f.outputs) {  // zeros, so the new function is valid
    graph::Input zero;
    zero.pin = port.name;
    zero.literal = graph::Literal::integer(0);
    out.inputs.push_back(zero);
  }
  layout.positions.push_back({out.id, 400, 0});
  f.nodes.push_back(std::move(out));
  Step step(d, "Create function");
  d.execute(insert_function(d.doc().functions.size(), std::move(f)));
  for (const graph::NodePosition& p : layout.positions)
    d.execute(set_position(d.doc(), name, p.node, Vec2{p.x, p.y}));
  return EditResult{};
}

EditResult rename_function(EditorDocument& d, const std::string& from, const std::string& to) {
  if (!d.doc().function(from)) return EditResult::fail("there is no function '" + from + "'");
  if (to.empty()) return EditResult::fail("a function needs a name");
  if (to == from) return EditResult{};
  if (d.doc().function(to) || d.doc().kernel(to))
    return EditResult::fail("the name '" + to + "' is taken");
  Step step(d, "Rename function");
  graph::Literal name = graph::Literal::text(to);
  auto retarget = [&](const GraphRef& g) {
    std::vector<int> calls;
    for_each_node(*graph_nodes(d.doc(), g), [&](const Node& n, const RegionRef&) {
      const graph::Literal* f = n.type == "call" ? n.param("function") : nullptr;
      if (f && f->kind == graph::Literal::Kind::String && f->s == from) calls.push_back(n.id);
    });
    for (int id : calls) d.execute(set_param(d.doc(), g, id, "function", name));
  };
  for (const graph::KernelDecl& k : std::vector<graph::KernelDecl>(d.doc().kernels))
    retarget(GraphRef{k.name, false});
  for (const graph::FunctionDecl& f : std::vector<graph::FunctionDecl>(d.doc().functions))
    retarget(GraphRef{f.name, true});
  d.execute(rename_function(from, to));
  if (find_layout(d.doc(), from) && !find_layout(d.doc(), to)) d.execute(rename_layout(from, to));
  Selection s = d.selection();
  if (s.graph == GraphRef{from, true}) {
    s.graph.name = to;
    d.set_selection(s);
  }
  return EditResult{};
}

EditResult delete_function(EditorDocument& d, const std::string& name) {
  if (!d.doc().function(name)) return EditResult::fail("there is no function '" + name + "'");
  auto caller = [&](const std::vector<Node>& nodes) {
    int found = -1;
    for_each_node(nodes, [&](const Node& n, const RegionRef&) {
      const graph::Literal* f = n.type == "call" ? n.param("function") : nullptr;
      if (found < 0 && f && f->kind == graph::Literal::Kind::String && f->s == name) found = n.id;
    });
    return found;
  };
  for (const graph::KernelDecl& k : d.doc().kernels)
    if (int id = caller(k.nodes); id >= 0)
      return EditResult::fail("function '" + name + "' is called by kernel '" + k.name +
                              "' (node " + std::to_string(id) +
                              "); delete or retarget the call first");
  for (const graph::FunctionDecl& f : d.doc().functions)
    if (int id = f.name == name ? -1 : caller(f.nodes); id >= 0)
      return EditResult::fail("function '" + name + "' is called by function '" + f.name +
                              "' (node " + std::to_string(id) +
                              "); delete or retarget the call first");
  Step step(d, "Delete function");
  if (!d.doc().kernel(name)) d.execute(erase_layout(d.doc(), name));
  d.execute(erase_function(d.doc(), name));
  return EditResult{};
}

EditResult set_function_ports(EditorDocument& d, const std::string& name,
                              std::vector<graph::FunctionPort> inputs,
                              std::vector<graph::FunctionPort> outputs) {
  if (!d.doc().function(name)) return EditResult::fail("there is no function '" + name + "'");
  for (const auto* ports : {&inputs, &outputs})
    for (const auto& port : *ports) {
      if (port.name.empty()) return EditResult::fail("a port needs a name");
      if (!parse_value_type(port.type))
        return EditResult::fail("port '" + port.name + "': unknown type '" + port.type + "'");
    }
  d.execute(set_function_ports(d.doc(), name, std::move(inputs), std::move(outputs)),
            "Edit function ports");
  return EditResult{};
}

}  // namespace loom::editor
