// The node palette's order: a menu by category when nothing is typed, best matches first
// when something is.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "compiler/graph/document_json.h"
#include "editor/canvas/search_palette.h"
#include "tests/editor/test_docs.h"

using namespace loom;
using namespace loom::editor;

TEST(Palette, WithNoQueryEntriesComeByCategoryAndEachCategoryOnce) {
  ImGui::CreateContext();  // the palette notes the frame it opened in
  graph::Document doc = graph::load_document(test::kSmallDoc);
  SearchPalette palette;
  palette.open(doc, GraphRef{"k", false}, PaletteRequest{}, ImVec2(0, 0));
  std::vector<CatalogEntry> all = node_catalog(doc, GraphRef{"k", false});
  std::vector<std::string> shown = palette.shown();
  ASSERT_EQ(shown.size(), all.size());
  auto category = [&](const std::string& label) {
    for (const CatalogEntry& e : all)
      if (e.label == label) return e.category;
    return std::string("?");
  };
  // Contiguous: once a category ends it never comes back.
  std::set<std::string> done;
  std::string current;
  for (const std::string& label : shown) {
    std::string c = category(label);
    if (c == current) continue;
    EXPECT_EQ(done.count(c), 0u) << c << " comes back at " << label;
    done.insert(current);
    current = c;
  }
  EXPECT_GE(done.size(), 5u);
  // The document's names are there too ("load f", "call twice").
  EXPECT_NE(std::find(shown.begin(), shown.end(), "call twice"), shown.end());
  ImGui::DestroyContext();
}
