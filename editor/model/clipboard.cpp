#include "editor/model/clipboard.h"

#include <set>
#include <unordered_map>

#include "compiler/graph/document_json.h"
#include "compiler/graph/json_value.h"
#include "editor/model/graph_access.h"
#include "runtime/common/error.h"

namespace loom::editor {

using graph::Document;
using graph::Node;

namespace {

void drop_outside_links(std::vector<Node>& nodes, const std::set<int>& kept) {
  for (Node& n : nodes) {
    std::erase_if(n.inputs,
                  [&](const graph::Input& in) { return in.linked && !kept.count(in.from_node); });
    for (graph::Region& r : n.regions) drop_outside_links(r.nodes, kept);
  }
}

void called_functions(const Document& doc, const std::vector<Node>& nodes,
                      std::set<std::string>& out) {
  for_each_node(nodes, [&](const Node& n, const RegionRef&) {
    if (n.type != "call") return;
    const graph::Literal* f = n.param("function");
    if (!f || f->kind != graph::Literal::Kind::String || !out.insert(f->s).second) return;
    if (const graph::FunctionDecl* fn = doc.function(f->s)) called_functions(doc, fn->nodes, out);
  });
}

}  // namespace

std::string copy_text(const Document& doc, const GraphRef& g, const std::vector<int>& ids) {
  Document clip;
  graph::KernelDecl k;
  k.name = "clipboard";
  std::set<int> selected(ids.begin(), ids.end());
  // Roots: selected nodes not inside another selected node, in document order.
  if (const std::vector<Node>* all = graph_nodes(doc, g)) {
    std::unordered_map<int, int> parent;
    for_each_node(*all, [&](const Node& n, const RegionRef& r) { parent[n.id] = r.node; });
    for_each_node(*all, [&](const Node& n, const RegionRef& r) {
      if (!selected.count(n.id)) return;
      for (int at = r.node; at >= 0; at = parent[at])
        if (selected.count(at)) return;
      k.nodes.push_back(n);
    });
  }
  std::set<int> kept;
  for (const Node& n : k.nodes)
    for (int id : subtree_ids(n)) kept.insert(id);
  drop_outside_links(k.nodes, kept);

  std::set<std::string> functions;
  called_functions(doc, k.nodes, functions);
  for (const graph::FunctionDecl& f : doc.functions)
    if (functions.count(f.name)) clip.functions.push_back(f);

  graph::GraphLayout layout{"clipboard", {}, {}};
  if (const graph::GraphLayout* l = find_layout(doc, g.name))
    for (const graph::NodePosition& p : l->positions)
      if (kept.count(p.node)) layout.positions.push_back(p);
  clip.kernels.push_back(std::move(k));
  if (!layout.positions.empty()) clip.layout.push_back(std::move(layout));
  return graph::save_document(clip);
}

ClipboardContent parse_clipboard(std::string_view text) {
  const std::string where = "<clipboard>";
  graph::JsonValue root = graph::parse_json(text, where);
  std::string doc_text(text);
  if (root.kind == graph::JsonValue::Kind::Object && !root.find("format")) {
    if (!root.find("id") || !root.find("type"))
      throw Error(Place{where},
                  "the clipboard holds a JSON object that is neither a Loom document nor a node");
    doc_text = "[" + doc_text + "]";
    root.kind = graph::JsonValue::Kind::Array;
  }
  if (root.kind == graph::JsonValue::Kind::Array)
    doc_text =
        R"({"format": "loom-graph", "version": 2, "kernels": [{"name": "clipboard", "nodes": )" +
        doc_text + "}]}";
  else if (root.kind != graph::JsonValue::Kind::Object)
    throw Error(
        Place{where},
        "the clipboard holds no Loom nodes (expected a document, a list of nodes or a node)");

  Document doc = graph::load_document(doc_text, where);
  ClipboardContent out;
  std::string graph;
  if (!doc.kernels.empty()) {
    out.nodes = doc.kernels[0].nodes;
    graph = doc.kernels[0].name;
  } else if (!doc.functions.empty()) {
    out.nodes = doc.functions[0].nodes;
    graph = doc.functions[0].name;
  }
  if (out.nodes.empty()) throw Error(Place{where}, "the clipboard document holds no nodes");
  if (const graph::GraphLayout* l = find_layout(doc, graph)) out.positions = l->positions;
  for (const graph::FunctionDecl& f : doc.functions)
    if (f.name != graph || !doc.kernels.empty()) out.functions.push_back(f);
  return out;
}

}  // namespace loom::editor
