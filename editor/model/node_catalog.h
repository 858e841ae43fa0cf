// What the search palette offers in a graph: every node type of the library that makes
// sense there, plus ready-made entries for the document's names ("param dt", "call spring",
// "load temperature", "atomic_add grid", "input x"), and which of them fit a link dragged onto
// empty canvas.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "compiler/graph/document.h"
#include "compiler/graph/infer.h"
#include "editor/model/graph_ref.h"

namespace loom::editor {

struct CatalogEntry {
  std::string label;     // what the palette shows and matches: "add", "param dt", "call spring"
  std::string type;      // node type
  std::string category;  // the library's category, "document" for the ready-made entries
  std::string summary;
  std::vector<std::pair<std::string, graph::Literal>> params;  // set on the new node
};

std::vector<CatalogEntry> node_catalog(const graph::Document& doc, const GraphRef& g);

// The first input pin of a new node of `entry` that takes `value`: the real lowering, on a
// scratch kernel where the node's other required pins get the same value or a literal 0,
// finds no problem with the node. "" when no pin does.
std::string compatible_input(const graph::Document& doc, const GraphRef& g,
                             const CatalogEntry& entry, const graph::PinValue& value);
// What output `from` of `g` gives, for a link dragged from it: `types` (the graph's inferred
// types) when they know it, else the lowering of a copy where a reroute reads it (a loop
// index nothing reads yet has no type until it is read). nullopt when neither knows.
std::optional<graph::PinValue> output_value(const graph::Document& doc, const GraphRef& g,
                                            const PinRef& from, const graph::GraphTypes& types);
// The output pin a new node of `entry` would be linked from ("" when it has none).
std::string first_output(const graph::Document& doc, const CatalogEntry& entry);

// Palette matching: every character of `query` in order in `label` (case-insensitive);
// a lower score is a better match (prefix, then word start, then anywhere). -1: no match.
int match_score(const std::string& query, const std::string& label);

}  // namespace loom::editor
