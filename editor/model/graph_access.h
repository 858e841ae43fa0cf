// Finding things inside a graph::Document: a graph's node list, a node by id (nested regions
// included), the region a node lives in, layout entries and positions. Linear searches: the
// model edits one place at a time; the canvas keeps its own per-frame indices.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "compiler/graph/document.h"
#include "editor/model/graph_ref.h"

namespace loom::editor {

// The top-level nodes of a kernel or function; nullptr when it does not exist.
std::vector<graph::Node>* graph_nodes(graph::Document& doc, const GraphRef& g);
const std::vector<graph::Node>* graph_nodes(const graph::Document& doc, const GraphRef& g);

// The node list of a region; nullptr when the graph, the region node or the region is missing.
// A region the region node lacks (an empty "else" never written) is created when `create`.
std::vector<graph::Node>* region_nodes(graph::Document& doc, const GraphRef& g, const RegionRef& r,
                                       bool create = false);
const std::vector<graph::Node>* region_nodes(const graph::Document& doc, const GraphRef& g,
                                             const RegionRef& r);

// A node and where it is: the list holding it, its index there and that list's region.
struct NodeSlot {
  std::vector<graph::Node>* list = nullptr;
  size_t index = 0;
  RegionRef region;
  graph::Node& node() const { return (*list)[index]; }
};
std::optional<NodeSlot> find_node_slot(graph::Document& doc, const GraphRef& g, int id);
const graph::Node* find_node(const graph::Document& doc, const GraphRef& g, int id);
RegionRef region_of(const graph::Document& doc, const GraphRef& g, int id);

// Calls `fn` for every node of `nodes`, nested regions included, with the region it lives in.
void for_each_node(const std::vector<graph::Node>& nodes,
                   const std::function<void(const graph::Node&, const RegionRef&)>& fn,
                   const RegionRef& region = {});
// Ids of `node` and everything nested inside it.
std::vector<int> subtree_ids(const graph::Node& node);
// True when `inner` is `outer` or nested (at any depth) inside the regions of `outer`.
bool is_inside(const graph::Document& doc, const GraphRef& g, int inner, int outer);
// One more than the largest id in the graph (0 for an empty graph).
int next_node_id(const graph::Document& doc, const GraphRef& g);

graph::GraphLayout* find_layout(graph::Document& doc, const std::string& graph);
const graph::GraphLayout* find_layout(const graph::Document& doc, const std::string& graph);
std::optional<Vec2> node_position(const graph::Document& doc, const std::string& graph, int id);

}  // namespace loom::editor
