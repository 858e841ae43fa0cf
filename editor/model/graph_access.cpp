#include "editor/model/graph_access.h"

#include <algorithm>

namespace loom::editor {

using graph::Document;
using graph::Node;

std::vector<Node>* graph_nodes(Document& doc, const GraphRef& g) {
  if (g.function) {
    for (graph::FunctionDecl& f : doc.functions)
      if (f.name == g.name) return &f.nodes;
    return nullptr;
  }
  for (graph::KernelDecl& k : doc.kernels)
    if (k.name == g.name) return &k.nodes;
  return nullptr;
}

const std::vector<Node>* graph_nodes(const Document& doc, const GraphRef& g) {
  return graph_nodes(const_cast<Document&>(doc), g);
}

namespace {

// Depth-first search for `id`; fills `slot`.
bool find_in(std::vector<Node>& nodes, int id, const RegionRef& region, NodeSlot& slot) {
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].id == id) {
      slot = NodeSlot{&nodes, i, region};
      return true;
    }
    for (graph::Region& r : nodes[i].regions)
      if (find_in(r.nodes, id, RegionRef{nodes[i].id, r.name}, slot)) return true;
  }
  return false;
}

}  // namespace

std::optional<NodeSlot> find_node_slot(Document& doc, const GraphRef& g, int id) {
  std::vector<Node>* nodes = graph_nodes(doc, g);
  NodeSlot slot;
  if (!nodes || !find_in(*nodes, id, RegionRef{}, slot)) return std::nullopt;
  return slot;
}

const Node* find_node(const Document& doc, const GraphRef& g, int id) {
  auto slot = find_node_slot(const_cast<Document&>(doc), g, id);
  return slot ? &slot->node() : nullptr;
}

RegionRef region_of(const Document& doc, const GraphRef& g, int id) {
  auto slot = find_node_slot(const_cast<Document&>(doc), g, id);
  return slot ? slot->region : RegionRef{};
}

std::vector<Node>* region_nodes(Document& doc, const GraphRef& g, const RegionRef& r, bool create) {
  if (r.top()) return graph_nodes(doc, g);
  auto slot = find_node_slot(doc, g, r.node);
  if (!slot) return nullptr;
  Node& owner = slot->node();
  for (graph::Region& region : owner.regions)
    if (region.name == r.region) return &region.nodes;
  if (!create) return nullptr;
  owner.regions.push_back(graph::Region{r.region, {}});
  return &owner.regions.back().nodes;
}

const std::vector<Node>* region_nodes(const Document& doc, const GraphRef& g, const RegionRef& r) {
  return region_nodes(const_cast<Document&>(doc), g, r, false);
}

void for_each_node(const std::vector<Node>& nodes,
                   const std::function<void(const Node&, const RegionRef&)>& fn,
                   const RegionRef& region) {
  for (const Node& n : nodes) {
    fn(n, region);
    for (const graph::Region& r : n.regions) for_each_node(r.nodes, fn, RegionRef{n.id, r.name});
  }
}

std::vector<int> subtree_ids(const Node& node) {
  std::vector<int> ids{node.id};
  for (const graph::Region& r : node.regions)
    for_each_node(r.nodes, [&](const Node& n, const RegionRef&) { ids.push_back(n.id); });
  return ids;
}

bool is_inside(const Document& doc, const GraphRef& g, int inner, int outer) {
  for (int at = inner; at >= 0;) {
    if (at == outer) return true;
    auto slot = find_node_slot(const_cast<Document&>(doc), g, at);
    if (!slot) return false;
    at = slot->region.node;
  }
  return false;
}

int next_node_id(const Document& doc, const GraphRef& g) {
  const std::vector<Node>* nodes = graph_nodes(doc, g);
  int next = 0;
  if (nodes)
    for_each_node(*nodes,
                  [&](const Node& n, const RegionRef&) { next = std::max(next, n.id + 1); });
  return next;
}

graph::GraphLayout* find_layout(Document& doc, const std::string& graph) {
  for (graph::GraphLayout& l : doc.layout)
    if (l.graph == graph) return &l;
  return nullptr;
}

const graph::GraphLayout* find_layout(const Document& doc, const std::string& graph) {
  return find_layout(const_cast<Document&>(doc), graph);
}

std::optional<Vec2> node_position(const Document& doc, const std::string& graph, int id) {
  const graph::GraphLayout* l = find_layout(doc, graph);
  if (!l) return std::nullopt;
  for (const graph::NodePosition& p : l->positions)
    if (p.node == id) return Vec2{p.x, p.y};
  return std::nullopt;
}

}  // namespace loom::editor
