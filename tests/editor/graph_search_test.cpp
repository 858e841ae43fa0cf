// Finding nodes by type, resource, formula text or id across the program.
#include "editor/model/graph_search.h"

#include <gtest/gtest.h>

#include "compiler/graph/document_json.h"
#include "tests/editor/test_docs.h"

using namespace loom;
using namespace loom::editor;

namespace {

graph::Document heat() {
  return graph::load_document_file(std::string(LOOM_SOURCE_DIR) + "/assets/graphs/heat.loom.json");
}

}  // namespace

TEST(GraphSearch, FindsByResourceFormulaTypeAndId) {
  graph::Document doc = heat();
  std::vector<SearchMatch> m = search_program(doc, "temperature");
  ASSERT_EQ(m.size(), 1u);  // the store of init (diffuse reads template parameters)
  EXPECT_EQ(m[0].graph, (GraphRef{"init", false}));
  EXPECT_EQ(m[0].node, 3);
  EXPECT_NE(m[0].label.find("store temperature"), std::string::npos) << m[0].label;
  EXPECT_NE(m[0].why.find("field temperature"), std::string::npos);

  m = search_program(doc, "4.0 * c");
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].graph.name, "diffuse");
  EXPECT_EQ(m[0].node, 12);

  // Every word must match; case does not matter.
  m = search_program(doc, "LOAD src");
  EXPECT_EQ(m.size(), 5u);
  m = search_program(doc, "#13");
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].node, 13);
  EXPECT_TRUE(search_program(doc, "nothing like this").empty());
  EXPECT_TRUE(search_program(doc, "   ").empty());
}

TEST(GraphSearch, TheShownGraphComesFirstAndFunctionsAreSearched) {
  graph::Document doc = graph::load_document(test::kSmallDoc);
  std::vector<SearchMatch> m = search_program(doc, "type");
  ASSERT_FALSE(m.empty());
  m = search_program(doc, "x", GraphRef{"twice", true});
  ASSERT_FALSE(m.empty());
  EXPECT_EQ(m[0].graph, (GraphRef{"twice", true}));
  EXPECT_EQ(search_program(doc, "store", {}, 1).size(), 1u);
}
