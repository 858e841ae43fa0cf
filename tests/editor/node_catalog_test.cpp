// The palette's catalog for a link dropped on empty canvas: which nodes fit a dragged value,
// and that the one picked links.
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "compiler/graph/document_json.h"
#include "compiler/graph/infer.h"
#include "compiler/graph/node_library.h"
#include "editor/model/editor_document.h"
#include "editor/model/graph_access.h"
#include "editor/model/node_catalog.h"
#include "editor/model/operations.h"

using namespace loom;
using namespace loom::editor;

namespace {

const GraphRef kK{"k", false};

// A 2-d loop with an empty body (its indices read by nothing yet), 2-d and 1-d fields, and a
// second loop whose body makes an i32x2 index (node 11).
const char* kIndexDoc = R"({"format": "loom-graph", "version": 2,
  "fields": [
    {"name": "grid", "type": "f32", "shape": [8, 8]},
    {"name": "line", "type": "f32", "shape": [8]},
    {"name": "count", "type": "i32", "shape": [8, 8]}
  ],
  "kernels": [{"name": "k", "nodes": [
    {"id": 1, "type": "range_for", "inputs": {"end0": 8, "end1": 8}},
    {"id": 10, "type": "range_for", "inputs": {"end0": 8, "end1": 8}, "regions": {"body": [
      {"id": 11, "type": "vec2", "inputs": {"x": "10.i0", "y": "10.i1"}, "params": {"type": "i32"}}
    ]}}
  ]}]})";

// Label -> the pin a value links into, for the entries that fit it.
std::map<std::string, std::string> fitting(const graph::Document& doc,
                                           const graph::PinValue& value) {
  std::map<std::string, std::string> out;
  for (const CatalogEntry& e : node_catalog(doc, kK))
    if (std::string pin = compatible_input(doc, kK, e, value); !pin.empty()) out[e.label] = pin;
  return out;
}

}  // namespace

TEST(NodeCatalog, OffersAtomicsOfTheDocumentsFields) {
  graph::Document doc = graph::load_document(kIndexDoc);
  std::map<std::string, const CatalogEntry*> by_label;
  std::vector<CatalogEntry> entries = node_catalog(doc, kK);
  for (const CatalogEntry& e : entries) by_label[e.label] = &e;
  ASSERT_TRUE(by_label.count("atomic_add grid"));
  EXPECT_EQ(by_label["atomic_add grid"]->type, "atomic_add");
  EXPECT_TRUE(by_label.count("atomic_max line"));
  EXPECT_TRUE(by_label.count("atomic_or count"));
  EXPECT_FALSE(by_label.count("atomic_or grid"));  // bitwise atomics need integer memory
}

TEST(NodeCatalog, AnUnreadLoopIndexHasItsTypeAndFitsMemoryNodesAndArithmetic) {
  graph::Document doc = graph::load_document(kIndexDoc);
  graph::GraphTypes types = graph::infer_graph_types(doc, "k", false);
  ASSERT_EQ(types.output(1, "i0"), nullptr);  // nothing reads it: lowering never typed it
  std::optional<graph::PinValue> value = output_value(doc, kK, PinRef{1, "i0"}, types);
  ASSERT_TRUE(value);
  EXPECT_EQ(graph::pin_value_text(*value), "i32");
  EXPECT_FALSE(output_value(doc, kK, PinRef{1, "nope"}, types));

  std::map<std::string, std::string> fits = fitting(doc, *value);
  for (const char* label : {"load grid", "store grid", "atomic_add grid", "load line", "store line",
                            "atomic_add line", "atomic_or count"})
    EXPECT_EQ(fits[label], "i0") << label;
  for (const char* label : {"add", "mul", "sub", "cast"}) EXPECT_EQ(fits[label], "a") << label;

  // Picked from the palette: a load of the 2-d field, the index linked into i0 (the node then
  // waits for i1), then i1.
  EditorDocument d = EditorDocument::from_text(kIndexDoc);
  EditResult added = add_node(d, kK, RegionRef{1, "body"}, "load", Vec2{300, 0},
                              {{"field", graph::Literal::text("grid")}});
  ASSERT_TRUE(added.ok) << added.message;
  int load = added.nodes[0];
  EditResult linked = connect(d, kK, PinRef{1, "i0"}, PinRef{load, "i0"});
  EXPECT_TRUE(linked.ok) << linked.message;
  EXPECT_EQ(linked.message, "i32 into 'i0'");  // typed, though nothing read it before
  EXPECT_NE(d.types(kK).problem_of(load), nullptr);
  linked = connect(d, kK, PinRef{1, "i1"}, PinRef{load, "i1"});
  EXPECT_TRUE(linked.ok) << linked.message;
  EXPECT_EQ(d.types(kK).problem_of(load), nullptr);
}

TEST(NodeCatalog, AVectorIndexFitsMemoryNodesThroughI0) {
  graph::Document doc = graph::load_document(kIndexDoc);
  graph::GraphTypes types = graph::infer_graph_types(doc, "k", false);
  std::optional<graph::PinValue> value = output_value(doc, kK, PinRef{11, "out"}, types);
  ASSERT_TRUE(value);
  EXPECT_EQ(graph::pin_value_text(*value), "i32x2");
  std::map<std::string, std::string> fits = fitting(doc, *value);
  for (const char* label : {"load grid", "store grid", "atomic_add grid", "atomic_xor count"})
    EXPECT_EQ(fits[label], "i0") << label;
  EXPECT_FALSE(fits.count("load line"));  // two index values for one dimension
  EXPECT_EQ(fits["add"], "a");

  EditorDocument d = EditorDocument::from_text(kIndexDoc);
  EditResult added = add_node(d, kK, RegionRef{10, "body"}, "store", Vec2{300, 0},
                              {{"field", graph::Literal::text("grid")}});
  ASSERT_TRUE(added.ok) << added.message;
  EditResult linked = connect(d, kK, PinRef{11, "out"}, PinRef{added.nodes[0], "i0"});
  EXPECT_TRUE(linked.ok) << linked.message;
}

// Every node type of the library is offered in kernels or in functions, as its table entry
// says, and starts with the parameters its entry gives.
TEST(NodeCatalog, OffersEveryNodeTypeWhereItsEntryAllowsIt) {
  graph::Document doc = graph::load_document(R"({"format": "loom-graph", "version": 2,
    "functions": [{"name": "f", "inputs": [], "outputs": [], "nodes": []}],
    "kernels": [{"name": "k", "nodes": []}]})");
  const std::vector<CatalogEntry> kernel_entries = node_catalog(doc, kK);
  const std::vector<CatalogEntry> function_entries = node_catalog(doc, GraphRef{"f", true});
  auto by_type = [](const std::vector<CatalogEntry>& entries) {
    std::map<std::string, const CatalogEntry*> types;  // the library's own entries
    for (const CatalogEntry& e : entries)
      if (e.label == e.type) types[e.type] = &e;
    return types;
  };
  auto in_kernel = by_type(kernel_entries);
  auto in_function = by_type(function_entries);
  for (const graph::NodeSpec& s : graph::node_library()) {
    EXPECT_EQ(in_kernel.count(s.name) == 1, s.scope != graph::NodeScope::FunctionOnly) << s.name;
    EXPECT_EQ(in_function.count(s.name) == 1, s.scope != graph::NodeScope::KernelOnly) << s.name;
    const CatalogEntry* e = in_kernel.count(s.name) ? in_kernel[s.name] : in_function[s.name];
    ASSERT_NE(e, nullptr) << s.name;
    EXPECT_EQ(e->params.size(), s.starting_params.size()) << s.name;
    EXPECT_EQ(e->summary, s.summary) << s.name;
  }
  EXPECT_EQ(in_kernel.count("param"), 1u);
  EXPECT_EQ(in_function.count("param"), 0u);
  EXPECT_EQ(in_function.count("output"), 1u);
  EXPECT_EQ(in_kernel["unroll"]->params.size(), 1u);
}
