// The link checker: structure with validate's rules, types with the real lowering, and the
// same answer as validate_document.
#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include "compiler/graph/document_json.h"
#include "compiler/graph/node_library.h"
#include "compiler/graph/validate.h"
#include "editor/model/graph_access.h"
#include "editor/model/link_check.h"
#include "editor/model/node_catalog.h"
#include "runtime/common/error.h"
#include "tests/editor/test_docs.h"

using namespace loom;
using namespace loom::editor;

namespace {

const GraphRef kK{"k", false};

graph::Document small() { return graph::load_document(test::kSmallDoc); }

}  // namespace

TEST(LinkCheck, AcceptsAndSaysWhatFlows) {
  graph::Document doc = small();
  LinkCheck c = check_link(doc, kK, PinRef{3, "out"}, PinRef{6, "value"});
  EXPECT_EQ(c.verdict, LinkVerdict::Replace);
  EXPECT_EQ(c.reason, "f32 into 'value'; replaces the link from 5.y");
  c = check_link(doc, kK, PinRef{2, "i0"}, PinRef{4, "b"});
  EXPECT_EQ(c.verdict, LinkVerdict::Replace);
  EXPECT_EQ(c.reason, "i32 into 'b'; replaces the link from 1.out");
}

TEST(LinkCheck, RefusesTypeErrorsWithTheReason) {
  graph::Document doc = small();
  LinkCheck c = check_link(doc, kK, PinRef{7, "out"}, PinRef{3, "i0"});
  EXPECT_EQ(c.verdict, LinkVerdict::Reject);
  EXPECT_EQ(c.reason,
            "f32x3 cannot flow into 'i0': index 'i0' is f32x3; indices are i32, u32 or narrower "
            "integers (add a cast node)");
  c = check_link(doc, kK, PinRef{7, "out"}, PinRef{6, "value"});
  EXPECT_EQ(c.verdict, LinkVerdict::Reject);
  EXPECT_NE(c.reason.find("f32x3 cannot flow into 'value'"), std::string::npos) << c.reason;
}

TEST(LinkCheck, RefusesCyclesRegionsAndOrder) {
  graph::Document doc = small();
  // Validate's order: an ordered node after its user is named first, then cycles.
  EXPECT_EQ(check_link(doc, kK, PinRef{5, "y"}, PinRef{4, "a"}).reason,
            "node 5 (call) runs after this node; move it earlier in its region");
  graph::Document pure = doc;
  pure.kernels[0].nodes.push_back(graph::Node{9, "neg", 1, {}, {}, {}});
  pure.kernels[0].nodes.push_back(graph::Node{10, "neg", 1, {}, {}, {}});
  pure.kernels[0].nodes.back().inputs.push_back(graph::Input{"a", true, 9, "out", {}});
  EXPECT_EQ(check_link(pure, kK, PinRef{10, "out"}, PinRef{9, "a"}).reason,
            "would make a cycle: 9 -> 10 -> 9");
  EXPECT_EQ(check_link(doc, kK, PinRef{4, "out"}, PinRef{4, "a"}).reason,
            "would make a cycle: a node cannot use its own output");
  // A loop index outside its loop; a body node used outside; an ordered node before it runs.
  graph::Document with_top = doc;
  with_top.kernels[0].nodes.push_back(graph::Node{9, "neg", 1, {}, {}, {}});
  EXPECT_EQ(check_link(with_top, kK, PinRef{2, "i0"}, PinRef{9, "a"}).reason,
            "'i0' of node 2 (range_for) exists only inside its body");
  EXPECT_EQ(check_link(with_top, kK, PinRef{4, "out"}, PinRef{9, "a"}).reason,
            "node 4 (mul) is inside another region and cannot be used here");
  EXPECT_EQ(check_link(doc, kK, PinRef{3, "out"}, PinRef{7, "i0"}).reason,
            "node 3 (load) runs after this node; move it earlier in its region");
  EXPECT_EQ(check_link(doc, kK, PinRef{4, "nope"}, PinRef{6, "value"}).reason,
            "node 4 (mul) has no output 'nope'");
  EXPECT_EQ(check_link(doc, kK, PinRef{4, "out"}, PinRef{6, "wat"}).reason,
            "node 6 (store) has no input 'wat'");
  EXPECT_EQ(check_link(doc, kK, PinRef{4, "out"}, PinRef{5, "q"}).reason,
            "node 5 (call) has no input 'q'");
  EXPECT_EQ(check_link(doc, kK, PinRef{40, "out"}, PinRef{5, "x"}).reason,
            "node 40 does not exist");
  EXPECT_EQ(check_link(doc, GraphRef{"zz", true}, PinRef{1, "out"}, PinRef{2, "a"}).reason,
            "the document has no function 'zz'");
  EXPECT_EQ(check_link(doc, kK, PinRef{4, "out"}, PinRef{5, "x"}).reason, "already connected");
}

TEST(LinkCheck, AChangeInsideAFunctionThatBreaksACallerIsRefused) {
  graph::Document doc = small();
  doc.functions[0].nodes.push_back(graph::Node{4, "vec3", 1, {}, {}, {}});
  for (const char* pin : {"x", "y", "z"}) {
    graph::Input in;
    in.pin = pin;
    in.literal.kind = graph::Literal::Kind::Float;
    in.literal.f = 1;
    doc.functions[0].nodes.back().inputs.push_back(in);
  }
  // Fine inside the function (y is f32: 'y' of output is converted? no: f32x3 into an f32 output
  // fails there)
  LinkCheck c = check_link(doc, GraphRef{"twice", true}, PinRef{4, "out"}, PinRef{2, "b"});
  EXPECT_EQ(c.verdict, LinkVerdict::Reject);
  EXPECT_NE(c.reason.find("breaks node 3"), std::string::npos) << c.reason;
}

TEST(LinkCheck, WorksOnUnfinishedGraphs) {
  // The graph already has problems (an add missing its b): the check is about this link only.
  graph::Document doc = graph::load_document(
      R"({"format": "loom-graph", "version": 2, "kernels": [{"name": "k", "params": [{"name": "p", "kind": "value", "type": "f32x3"}], "nodes": [
    {"id": 1, "type": "param", "params": {"name": "p"}},
    {"id": 2, "type": "add"},
    {"id": 3, "type": "sqrt"},
    {"id": 4, "type": "cross", "inputs": {"a": [1.0, 0.0, 0.0]}}]}]})");
  EXPECT_EQ(check_link(doc, kK, PinRef{1, "out"}, PinRef{2, "a"}).verdict, LinkVerdict::Accept);
  EXPECT_EQ(check_link(doc, kK, PinRef{2, "out"}, PinRef{3, "a"}).verdict, LinkVerdict::Accept);
  LinkCheck c = check_link(doc, kK, PinRef{3, "out"}, PinRef{4, "b"});
  EXPECT_EQ(c.verdict, LinkVerdict::Reject);
  EXPECT_NE(c.reason.find("cannot flow into 'b'"), std::string::npos) << c.reason;
}

// A load or store of a 2-d field takes its indices one link at a time: missing index pins
// leave an incomplete node (a problem shown on it), not a refused link. More index values than
// dimensions, or a link that takes a complete node's index away, are still refused.
TEST(LinkCheck, A2dLoadOrStoreTakesItsIndicesOneLinkAtATime) {
  const char* text =
      R"({"format": "loom-graph", "version": 2,
    "fields": [{"name": "g", "type": "f32", "shape": [8, 8]}],
    "kernels": [{"name": "k", "nodes": [
    {"id": 1, "type": "range_for", "inputs": {"end0": 8, "end1": 8}, "regions": {"body": [
      {"id": 2, "type": "load", "params": {"field": "g"}},
      {"id": 3, "type": "store", "inputs": {"value": 1.0}, "params": {"field": "g"}},
      {"id": 4, "type": "vec2", "inputs": {"x": "1.i0", "y": "1.i1"}, "params": {"type": "i32"}}
    ]}}]}]})";
  graph::Document doc = graph::load_document(text);
  for (int node : {2, 3}) {
    LinkCheck c = check_link(doc, kK, PinRef{1, "i0"}, PinRef{node, "i0"});
    EXPECT_EQ(c.verdict, LinkVerdict::Accept) << node << ": " << c.reason;
    EXPECT_EQ(c.reason, "i32 into 'i0'");
    graph::Document one = doc;
    find_node_slot(one, kK, node)->node().inputs.push_back(graph::Input{"i0", true, 1, "i0", {}});
    graph::GraphTypes types = graph::infer_graph_types(one, "k", false);
    ASSERT_NE(types.problem_of(node), nullptr);  // shown on the node until i1 is linked
    c = check_link(one, kK, PinRef{1, "i1"}, PinRef{node, "i1"});
    EXPECT_EQ(c.verdict, LinkVerdict::Accept) << node << ": " << c.reason;
    // i1 first works as well.
    EXPECT_TRUE(check_link(doc, kK, PinRef{1, "i1"}, PinRef{node, "i1"}).ok()) << node;

    graph::Document both = one;
    find_node_slot(both, kK, node)->node().inputs.push_back(graph::Input{"i1", true, 1, "i1", {}});
    EXPECT_EQ(graph::infer_graph_types(both, "k", false).problem_of(node), nullptr);
    // A third index value is one too many; a scalar replacing the vector index takes one away.
    EXPECT_FALSE(check_link(both, kK, PinRef{1, "i0"}, PinRef{node, "i2"}).ok()) << node;
    graph::Document vec = doc;
    find_node_slot(vec, kK, node)->node().inputs.push_back(graph::Input{"i0", true, 4, "out", {}});
    EXPECT_EQ(graph::infer_graph_types(vec, "k", false).problem_of(node), nullptr);
    EXPECT_FALSE(check_link(vec, kK, PinRef{1, "i0"}, PinRef{node, "i0"}).ok()) << node;
    EXPECT_FALSE(check_link(vec, kK, PinRef{1, "i1"}, PinRef{node, "i1"}).ok()) << node;
  }
  // The compiler still refuses the document left with one index.
  std::string one_index = text;
  one_index.replace(one_index.find(R"("inputs": {"value": 1.0})"), 24,
                    R"("inputs": {"i0": "1.i0", "i1": "1.i1", "value": 1.0})");
  one_index.replace(one_index.find(R"("type": "load", )"), 16,
                    R"("type": "load", "inputs": {"i0": "1.i0"}, )");
  try {
    graph::validate_document(graph::load_document(one_index));
    ADD_FAILURE() << "a 2-d load with one index validated";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("1 index value(s)"), std::string::npos) << e.what();
  }
}

// The property the canvas relies on: on valid documents the checker and validate_document
// agree on every candidate link.
TEST(LinkCheck, AgreesWithValidateDocumentOnSampleGraphs) {
  std::mt19937 rng(11);
  int checked = 0, accepted = 0, moved_earlier = 0;
  std::vector<std::string> paths;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(LOOM_SOURCE_DIR) + "/assets/graphs"))
    paths.push_back(entry.path().string());
  std::sort(paths.begin(), paths.end());
  std::vector<std::pair<std::string, graph::Document>> docs;
  for (const std::string& p : paths) docs.emplace_back(p, graph::load_document_file(p));
  docs.emplace_back("small", small());
  for (auto& [path, named_doc] : docs) {
    graph::Document& doc = named_doc;  // a lambda below uses it: clang 14 cannot capture a binding
    std::vector<GraphRef> graphs;
    for (const auto& k : doc.kernels) graphs.push_back(GraphRef{k.name, false});
    for (const auto& f : doc.functions) graphs.push_back(GraphRef{f.name, true});
    for (const GraphRef& g : graphs) {
      std::vector<PinRef> outs, ins;
      for_each_node(*graph_nodes(doc, g), [&](const graph::Node& n, const RegionRef&) {
        for (const std::string& p : graph::node_output_pins(doc, n))
          outs.push_back(PinRef{n.id, p});
        for (const std::string& p : graph::node_input_pins(doc, n)) ins.push_back(PinRef{n.id, p});
      });
      if (outs.empty() || ins.empty()) continue;
      graph::GraphTypes base = graph::infer_graph_types(doc, g.name, g.function);
      for (int trial = 0; trial < 60; ++trial) {
        PinRef from = outs[rng() % outs.size()];
        PinRef to = ins[rng() % ins.size()];
        LinkCheck c = check_link(doc, g, from, to, &base);
        if (c.reason == "already connected") continue;
        graph::Document with = doc;
        if (c.run_before >= 0) {  // the checker's answer includes running `from` earlier
          NodeSlot src = *find_node_slot(with, g, from.node);
          graph::Node moved = src.node();
          src.list->erase(src.list->begin() + static_cast<std::ptrdiff_t>(src.index));
          auto at = std::find_if(src.list->begin(), src.list->end(),
                                 [&](const graph::Node& n) { return n.id == c.run_before; });
          ASSERT_NE(at, src.list->end()) << "node " << c.run_before << " is not in the region";
          src.list->insert(at, moved);
          ++moved_earlier;
        }
        NodeSlot slot = *find_node_slot(with, g, to.node);
        graph::Input link;
        link.pin = to.pin;
        link.linked = true;
        link.from_node = from.node;
        link.from_pin = from.pin;
        auto& inputs = slot.node().inputs;
        std::erase_if(inputs, [&](const graph::Input& in) { return in.pin == to.pin; });
        inputs.push_back(link);
        std::string error;
        try {
          graph::validate_document(with);
        } catch (const Error& e) {
          error = e.what();
        }
        EXPECT_EQ(c.ok(), error.empty())
            << path << " " << g.name << ": " << from.node << "." << from.pin << " -> " << to.node
            << "." << to.pin << "\n  checker: " << c.reason << "\n  validate: " << error;
        ++checked;
        accepted += c.ok();
      }
    }
  }
  EXPECT_GT(checked, 300);
  EXPECT_GT(accepted, 20);
  EXPECT_GT(moved_earlier, 0);
}

TEST(NodeCatalog, OffersDocumentNamesAndFindsCompatiblePins) {
  graph::Document doc = small();
  std::vector<CatalogEntry> kernel_entries = node_catalog(doc, kK);
  auto find = [](const std::vector<CatalogEntry>& v,
                 const std::string& label) -> const CatalogEntry* {
    for (const CatalogEntry& e : v)
      if (e.label == label) return &e;
    return nullptr;
  };
  ASSERT_NE(find(kernel_entries, "param s"), nullptr);
  ASSERT_NE(find(kernel_entries, "call twice"), nullptr);
  ASSERT_NE(find(kernel_entries, "load v"), nullptr);
  EXPECT_EQ(find(kernel_entries, "input"), nullptr);  // functions only
  std::vector<CatalogEntry> fn_entries = node_catalog(doc, GraphRef{"twice", true});
  EXPECT_NE(find(fn_entries, "input x"), nullptr);
  EXPECT_EQ(find(fn_entries, "call twice"), nullptr);  // no recursion
  EXPECT_EQ(find(fn_entries, "param"), nullptr);

  graph::PinValue vec3{graph::PinValue::Kind::Value, *parse_value_type("f32x3"), false};
  graph::PinValue f32{graph::PinValue::Kind::Value, *parse_value_type("f32"), false};
  EXPECT_EQ(compatible_input(doc, kK, *find(kernel_entries, "add"), vec3), "a");
  EXPECT_EQ(compatible_input(doc, kK, *find(kernel_entries, "cross"), vec3), "a");
  EXPECT_EQ(compatible_input(doc, kK, *find(kernel_entries, "cross"), f32), "");
  EXPECT_EQ(compatible_input(doc, kK, *find(kernel_entries, "load v"), vec3),
            "");  // indices are integers
  EXPECT_EQ(compatible_input(doc, kK, *find(kernel_entries, "store v"), vec3), "value");
  EXPECT_EQ(compatible_input(doc, kK, *find(kernel_entries, "call twice"), f32), "x");
  EXPECT_EQ(compatible_input(doc, kK, *find(kernel_entries, "expr"), vec3), "a");
  EXPECT_EQ(first_output(doc, *find(kernel_entries, "call twice")), "y");
  EXPECT_EQ(first_output(doc, *find(kernel_entries, "store v")), "");
}

TEST(NodeCatalog, MatchScoreRanksPrefixesFirst) {
  EXPECT_EQ(match_score("xyz", "add"), -1);
  EXPECT_GE(match_score("ad", "add"), 0);
  EXPECT_LT(match_score("ad", "add"), match_score("ad", "load"));
  EXPECT_LT(match_score("lo", "load"), match_score("lo", "floor"));
  EXPECT_GE(match_score("ld temp", "load temperature"), 0);
  EXPECT_GE(match_score("ADD", "add"), 0);
}
