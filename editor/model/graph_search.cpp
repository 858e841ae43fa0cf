#include "editor/model/graph_search.h"

#include <algorithm>
#include <cctype>
#include <sstream>

#include "editor/model/graph_access.h"

namespace loom::editor {

namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::vector<std::string> words(const std::string& query) {
  std::vector<std::string> out;
  std::istringstream in(lower(query));
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// The texts a node is known by: its type, its id, and its string parameters by name.
std::vector<std::string> node_texts(const graph::Node& n) {
  std::vector<std::string> texts = {"type " + n.type, "#" + std::to_string(n.id)};
  for (const auto& [name, value] : n.params)
    if (value.kind == graph::Literal::Kind::String) texts.push_back(name + " " + value.s);
  return texts;
}

std::string title(const graph::Node& n) {
  for (const char* key : {"field", "ndarray", "texture", "function", "name", "param"})
    if (const graph::Literal* l = n.param(key); l && l->kind == graph::Literal::Kind::String)
      return n.type + " " + l->s;
  return n.type;
}

void search_graph(const std::vector<graph::Node>& nodes, const GraphRef& g,
                  const std::vector<std::string>& query, size_t limit,
                  std::vector<SearchMatch>* out) {
  for_each_node(nodes, [&](const graph::Node& n, const RegionRef&) {
    if (out->size() >= limit) return;
    std::vector<std::string> texts = node_texts(n);
    std::string why;
    for (const std::string& w : query) {
      auto hit = std::find_if(texts.begin(), texts.end(), [&](const std::string& t) {
        return lower(t).find(w) != std::string::npos;
      });
      if (hit == texts.end()) return;
      if (why.find(*hit) == std::string::npos) why += (why.empty() ? "" : "; ") + *hit;
    }
    out->push_back(SearchMatch{g, n.id,
                               title(n) + "  (" + (g.function ? "function " : "kernel ") + g.name +
                                   ", #" + std::to_string(n.id) + ")",
                               why});
  });
}

}  // namespace

std::vector<SearchMatch> search_program(const graph::Document& doc, const std::string& query,
                                        const GraphRef& first, size_t limit) {
  std::vector<std::string> q = words(query);
  std::vector<SearchMatch> out;
  if (q.empty()) return out;
  std::vector<GraphRef> graphs;
  if (first.valid() && graph_nodes(doc, first)) graphs.push_back(first);
  for (const graph::KernelDecl& k : doc.kernels)
    if (!(first == GraphRef{k.name, false})) graphs.push_back(GraphRef{k.name, false});
  for (const graph::FunctionDecl& f : doc.functions)
    if (!(first == GraphRef{f.name, true})) graphs.push_back(GraphRef{f.name, true});
  for (const GraphRef& g : graphs) search_graph(*graph_nodes(doc, g), g, q, limit, &out);
  return out;
}

}  // namespace loom::editor
