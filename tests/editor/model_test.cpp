// The editor's document model: every edit is one undo step, undo gives back the same bytes,
// revisions and notifications, selection, clipboard and functions.
#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include "compiler/graph/document_json.h"
#include "compiler/graph/validate.h"
#include "editor/model/clipboard.h"
#include "editor/model/editor_document.h"
#include "editor/model/edits.h"
#include "editor/model/graph_access.h"
#include "editor/model/literal_text.h"
#include "editor/model/operations.h"
#include "runtime/common/error.h"
#include "tests/editor/test_docs.h"

using namespace loom;
using namespace loom::editor;

namespace {

const GraphRef kK{"k", false};
const GraphRef kTwice{"twice", true};

graph::Literal real(double v) {
  graph::Literal l;
  l.kind = graph::Literal::Kind::Float;
  l.f = v;
  return l;
}

}  // namespace

TEST(EditorModel, TheSmallDocumentIsValid) {
  EXPECT_NO_THROW(graph::validate_document(graph::load_document(test::kSmallDoc)));
}

TEST(EditorModel, UntouchedDocumentsSaveByteIdentically) {
  int seen = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(LOOM_SOURCE_DIR) + "/assets/graphs")) {
    std::string text = test::read_text(entry.path().string());
    EditorDocument d = EditorDocument::from_text(text, entry.path().string());
    EXPECT_EQ(d.save_text(), text) << entry.path();
    EXPECT_FALSE(d.dirty());
    ++seen;
  }
  EXPECT_GE(seen, 5);
  EditorDocument d = EditorDocument::from_text(test::kSmallDoc);
  EXPECT_EQ(d.save_text(), test::kSmallDoc);
}

TEST(EditorModel, BadTextIsAClearErrorAndNoDocument) {
  try {
    EditorDocument::from_text(
        "{\"format\": \"loom-graph\", \"version\": 2, \"kernels\": [{\"name\": 3}]}",
        "bad.loom.json");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("kernels[0].name: expected a string"), std::string::npos)
        << e.what();
  }
}

TEST(EditorModel, AddNodeUndoRedo) {
  EditorDocument d = EditorDocument::from_text(test::kSmallDoc);
  std::string before = d.save_text();
  EditResult r = add_node(d, kK, RegionRef{2, "body"}, "sqrt", Vec2{300.4f, 260.6f});
  ASSERT_TRUE(r.ok) << r.message;
  ASSERT_EQ(r.nodes, std::vector<int>{8});
  EXPECT_EQ(region_of(d.doc(), kK, 8), (RegionRef{2, "body"}));
  EXPECT_EQ(*node_position(d.doc(), "k", 8), (Vec2{300, 261}));  // whole units: clean diffs
  EXPECT_TRUE(d.dirty());
  std::string after = d.save_text();
  EXPECT_NE(after.find("{\"id\": 8, \"type\": \"sqrt\"}"), std::string::npos) << after;
  EXPECT_EQ(d.undo_label(), "Add sqrt");
  ASSERT_TRUE(d.undo());
  EXPECT_EQ(d.save_text(), before);
  EXPECT_FALSE(d.dirty());
  ASSERT_TRUE(d.redo());
  EXPECT_EQ(d.save_text(), after);
  EXPECT_FALSE(d.redo());

  EXPECT_FALSE(add_node(d, kK, RegionRef{}, "sine", Vec2{}).ok);
  EXPECT_EQ(add_node(d, kK, RegionRef{1, "body"}, "add", Vec2{}).message,
            "node 1 (param) has no region 'body'");
  EXPECT_EQ(add_node(d, GraphRef{"nope", false}, RegionRef{}, "add", Vec2{}).message,
            "there is no kernel 'nope'");
  EXPECT_EQ(d.save_text(), after);
}

TEST(EditorModel, RemoveNodesCutsLinksAndPositionsAndUndoRestoresBytes) {
  EditorDocument d = EditorDocument::from_text(test::kSmallDoc);
  std::string before = d.save_text();
  ASSERT_TRUE(remove_nodes(d, kK, {4}).ok);
  const graph::Node* call = find_node(d.doc(), kK, 5);
  ASSERT_NE(call, nullptr);
  EXPECT_EQ(call->input("x"), nullptr);  // the link from 4 is gone
  EXPECT_FALSE(node_position(d.doc(), "k", 4));
  EXPECT_EQ(find_node(d.doc(), kK, 4), nullptr);
  // Removing a region node removes what it holds, and their positions.
  ASSERT_TRUE(remove_nodes(d, kK, {2, 3}).ok);
  EXPECT_EQ(graph_nodes(d.doc(), kK)->size(), 1u);
  EXPECT_FALSE(node_position(d.doc(), "k", 6));
  EXPECT_NO_THROW(graph::load_document(d.save_text()));  // still consistent layout
  d.undo();
  d.undo();
  EXPECT_EQ(d.save_text(), before);
}

TEST(EditorModel, ConnectChecksTheLinkAndRefusalsChangeNothing) {
  EditorDocument d = EditorDocument::from_text(test::kSmallDoc);
  std::string before = d.save_text();
  uint64_t revision = d.revision();
  // f32x3 into the multiply makes it f32x3, which the f32 call after it cannot take.
  EditResult bad = connect(d, kK, PinRef{7, "out"}, PinRef{4, "b"});
  EXPECT_FALSE(bad.ok);
  EXPECT_EQ(
      bad.message,
      "breaks node 5: input 'x' is f32x3 but f32 is needed; add a cast node to convert explicitly");
  EXPECT_EQ(d.save_text(), before);
  EXPECT_EQ(d.revision(), revision);
  EXPECT_FALSE(d.can_undo());
  // A good one replaces the old link.
  EditResult good = connect(d, kK, PinRef{3, "out"}, PinRef{4, "b"});
  ASSERT_TRUE(good.ok) << good.message;
  EXPECT_NE(good.message.find("replaces the link from 1.out"), std::string::npos) << good.message;
  EXPECT_EQ(find_node(d.doc(), kK, 4)->input("b")->from_node, 3);
  EXPECT_NE(d.save_text().find("\"inputs\": {\"a\": \"3\", \"b\": \"3\"}"), std::string::npos);
  ASSERT_TRUE(disconnect(d, kK, PinRef{4, "b"}).ok);
  EXPECT_EQ(find_node(d.doc(), kK, 4)->input("b"), nullptr);
  EXPECT_FALSE(disconnect(d, kK, PinRef{4, "b"}).ok);
  d.undo();
  d.undo();
  EXPECT_EQ(d.save_text(), before);
}

TEST(EditorModel, LiteralsAndParamsKeepTheNodeTypesOrder) {
  EditorDocument d = EditorDocument::from_text(test::kSmallDoc);
  std::string before = d.save_text();
  int id = add_node(d, kK, RegionRef{}, "clamp", Vec2{0, 400}).nodes[0];
  ASSERT_TRUE(set_literal(d, kK, PinRef{id, "hi"}, real(1.0)).ok);
  ASSERT_TRUE(set_literal(d, kK, PinRef{id, "x"}, real(0.5)).ok);
  ASSERT_TRUE(set_literal(d, kK, PinRef{id, "lo"}, real(0.0)).ok);
  EXPECT_NE(d.save_text().find("{\"id\": 8, \"type\": \"clamp\", \"version\": 2, \"inputs\": "
                               "{\"x\": 0.5, \"lo\": 0.0, \"hi\": 1.0}}"),
            std::string::npos)
      << d.save_text();
  ASSERT_TRUE(set_param(d, kK, 3, "field", std::optional<graph::Literal>{}).ok);
  EXPECT_EQ(find_node(d.doc(), kK, 3)->param("field"), nullptr);
  EXPECT_FALSE(set_param(d, kK, 99, "field", std::nullopt).ok);
  while (d.undo()) {
  }
  EXPECT_EQ(d.save_text(), before);
}

TEST(EditorModel, ADragIsOneUndoStepAndOnlyLayout) {
  EditorDocument d = EditorDocument::from_text(test::kSmallDoc);
  std::string before = d.save_text();
  uint64_t logic = d.logic_revision();
  uint64_t revision = d.revision();
  d.begin_group("Move");
  for (int step = 1; step <= 10; ++step)
    d.execute(change_layout(
        d.doc(),
        LayoutChange{"k", {{3, Vec2{250.0f + step, 10.0f * step}}, {4, Vec2{450, 0}}}, {}}));
  d.end_group();
  EXPECT_EQ(*node_position(d.doc(), "k", 3), (Vec2{260, 100}));
  EXPECT_EQ(d.logic_revision(), logic);  // nothing to recompile
  EXPECT_EQ(d.revision(), revision + 10);
  EXPECT_EQ(d.undo_label(), "Move");
  ASSERT_TRUE(d.undo());
  EXPECT_EQ(d.save_text(), before);
  EXPECT_FALSE(d.can_undo());
  // The content key, which keys compiled code, does not see layout.
  d.redo();
  EXPECT_EQ(graph::kernel_content_key(d.doc(), "k"),
            graph::kernel_content_key(graph::load_document(before), "k"));
}

TEST(EditorModel, NotificationsAndRevisions) {
  EditorDocument d = EditorDocument::from_text(test::kSmallDoc);
  std::vector<DocumentChange> seen;
  int id = d.subscribe([&](const DocumentChange& c) { seen.push_back(c); });
  add_node(d, kK, RegionRef{}, "sin", Vec2{});
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(seen.back().kind, DocumentChange::Kind::Edit);
  EXPECT_TRUE(seen.back().logic);
  seen.clear();
  d.undo();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].kind, DocumentChange::Kind::Undo);
  EXPECT_EQ(seen[0].revision, d.revision());
  EXPECT_TRUE(seen[0].logic);
  Selection s;
  s.graph = kK;
  s.nodes = {3};
  d.set_selection(s);
  EXPECT_EQ(seen.back().kind, DocumentChange::Kind::Selection);
  d.unsubscribe(id);
  seen.clear();
  d.redo();
  EXPECT_TRUE(seen.empty());
}

TEST(EditorModel, UndoPrunesTheSelection) {
  EditorDocument d = EditorDocument::from_text(test::kSmallDoc);
  int id = add_node(d, kK, RegionRef{}, "sin", Vec2{}).nodes[0];
  Selection s;
  s.graph = kK;
  s.nodes = {id, 1};
  d.set_selection(s);
  d.undo();
  EXPECT_EQ(d.selection().nodes, std::vector<int>{1});
}

TEST(EditorModel, InsertRerouteSplitsTheLinkInTheUsersRegion) {
  EditorDocument d = EditorDocument::from_text(test::kSmallDoc);
  std::string before = d.save_text();
  EditResult r = insert_reroute(d, kK, PinRef{4, "b"}, Vec2{350, 80});
  ASSERT_TRUE(r.ok) << r.message;
  int id = r.nodes[0];
  EXPECT_EQ(region_of(d.doc(), kK, id), (RegionRef{2, "body"}));
  EXPECT_EQ(find_node(d.doc(), kK, id)->input("in")->from_node, 1);
  EXPECT_EQ(find_node(d.doc(), kK, 4)->input("b")->from_node, id);
  EXPECT_NO_THROW(graph::validate_document(d.doc()));
  EXPECT_EQ(d.undo_label(), "Insert reroute");
  d.undo();
  EXPECT_EQ(d.save_text(), before);
  EXPECT_FALSE(insert_reroute(d, kK, PinRef{1, "x"}, Vec2{}).ok);
}

TEST(EditorModel, DuplicateKeepsLinksAndOffsets) {
  EditorDocument d = EditorDocument::from_text(test::kSmallDoc);
  EditResult r = duplicate_nodes(d, kK, {4, 5}, Vec2{30, 30});
  ASSERT_TRUE(r.ok);
  ASSERT_EQ(r.nodes, (std::vector<int>{8, 9}));
  EXPECT_EQ(find_node(d.doc(), kK, 9)->input("x")->from_node, 8);  // among the copies
  EXPECT_EQ(find_node(d.doc(), kK, 8)->input("a")->from_node, 3);  // from outside: kept
  EXPECT_EQ(region_of(d.doc(), kK, 8), (RegionRef{2, "body"}));
  EXPECT_EQ(*node_position(d.doc(), "k", 9), (Vec2{680, 30}));
  EXPECT_EQ(d.selection().nodes, (std::vector<int>{8, 9}));
  EXPECT_NO_THROW(graph::validate_document(d.doc()));
  EXPECT_EQ(d.undo_label(), "Duplicate");
}

TEST(EditorModel, CopyIsJsonTextAndPasteRemapsIdsAndOffsets) {
  EditorDocument d = EditorDocument::from_text(test::kSmallDoc);
  std::string text = copy_text(d.doc(), kK, {4, 5, 6});
  // Plain document text: links among the copies, none to the rest, the called function.
  EXPECT_EQ(text.rfind("{\n  \"format\": \"loom-graph\"", 0), 0u) << text;
  EXPECT_NE(text.find("\"name\": \"twice\""), std::string::npos);
  EXPECT_NE(text.find("{\"id\": 5, \"type\": \"call\", \"inputs\": {\"x\": \"4\"}"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("{\"id\": 4, \"type\": \"mul\"}"), std::string::npos)
      << text;  // 3 and 1 not copied
  EXPECT_NE(text.find("\"positions\": {\"4\": [450, 0], \"5\": [650, 0], \"6\": [850, 0]}"),
            std::string::npos)
      << text;

  std::string before = d.save_text();
  EditResult r = paste_text(d, kK, RegionRef{2, "body"}, text, Vec2{100, 500});
  ASSERT_TRUE(r.ok) << r.message;
  EXPECT_EQ(r.nodes, (std::vector<int>{8, 9, 10}));
  EXPECT_EQ(find_node(d.doc(), kK, 9)->input("x")->from_node, 8);
  EXPECT_EQ(find_node(d.doc(), kK, 10)->input("value")->from_node, 9);
  EXPECT_EQ(*node_position(d.doc(), "k", 8), (Vec2{100, 500}));
  EXPECT_EQ(*node_position(d.doc(), "k", 10), (Vec2{500, 500}));
  EXPECT_EQ(d.selection().nodes, r.nodes);
  EXPECT_EQ(d.undo_label(), "Paste");
  d.undo();
  EXPECT_EQ(d.save_text(), before);

  // Into another document: the function comes along.
  EditorDocument other = EditorDocument::from_text(
      R"({"format": "loom-graph", "version": 2, "kernels": [{"name": "main", "nodes": []}]})");
  ASSERT_TRUE(paste_text(other, GraphRef{"main", false}, RegionRef{}, text).ok);
  EXPECT_NE(other.doc().function("twice"), nullptr);
  EXPECT_EQ(*node_position(other.doc(), "main", 0), (Vec2{490, 40}));  // no paste point: +40, +40
}

TEST(EditorModel, PasteAcceptsJsonFromOutsideAndRefusesGarbage) {
  EditorDocument d = EditorDocument::from_text(test::kSmallDoc);
  EditResult list =
      paste_text(d, kK, RegionRef{}, R"([{"id": 40, "type": "const", "params": {"value": 2.5}},
                                                       {"id": 41, "type": "sin", "inputs": {"a": "40"}}])");
  ASSERT_TRUE(list.ok) << list.message;
  EXPECT_EQ(find_node(d.doc(), kK, list.nodes[1])->input("a")->from_node, list.nodes[0]);
  EditResult one =
      paste_text(d, kK, RegionRef{},
                 R"({"id": 1, "type": "clamp", "inputs": {"value": 0, "min": 1, "max": 2}})");
  ASSERT_TRUE(one.ok) << one.message;  // an old node version: upgraded on the way in
  EXPECT_EQ(find_node(d.doc(), kK, one.nodes[0])->version, 2);
  EXPECT_NE(find_node(d.doc(), kK, one.nodes[0])->input("lo"), nullptr);
  std::string before = d.save_text();
  for (const char* bad : {"hello", "{\"a\": 1}", "[{\"id\": 1}]", "42",
                          "{\"format\": \"loom-graph\", \"version\": 2}"}) {
    EditResult r = paste_text(d, kK, RegionRef{}, bad);
    EXPECT_FALSE(r.ok) << bad;
    EXPECT_EQ(r.message.rfind("cannot paste: ", 0), 0u) << r.message;
  }
  EXPECT_EQ(d.save_text(), before);
}

TEST(EditorModel, CommentFramesAreLayoutAndUndoable) {
  EditorDocument d = EditorDocument::from_text(
      R"({"format": "loom-graph", "version": 2, "kernels": [{"name": "k", "nodes": []}]})");
  std::string before = d.save_text();
  uint64_t logic = d.logic_revision();
  EditResult r = add_comment(d, kK, graph::CommentFrame{"Setup", 10, 20, 300, 100, "#3a6ea5"});
  ASSERT_TRUE(r.ok);
  EXPECT_NE(
      d.save_text().find(
          R"({"graph": "k", "positions": {}, "comments": [{"title": "Setup", "rect": [10, 20, 300, 100], "color": "#3a6ea5"}]})"),
      std::string::npos)
      << d.save_text();
  ASSERT_TRUE(set_comment(d, kK, 0, graph::CommentFrame{"Setup", 10, 20, 400, 120, ""}).ok);
  EXPECT_EQ(find_layout(d.doc(), "k")->comments[0].w, 400.0f);
  EXPECT_FALSE(set_comment(d, kK, 3, graph::CommentFrame{"x", 0, 0, 1, 1, ""}).ok);
  EXPECT_FALSE(add_comment(d, kK, graph::CommentFrame{"x", 0, 0, 0, 1, ""}).ok);
  ASSERT_TRUE(remove_comments(d, kK, {0}).ok);
  EXPECT_TRUE(find_layout(d.doc(), "k")->comments.empty());
  EXPECT_EQ(d.logic_revision(), logic);
  while (d.undo()) {
  }
  EXPECT_EQ(d.save_text(), before);  // the layout entry the comment needed is gone again
}

TEST(EditorModel, CollapseIsLayoutOneUndoStepAndFollowsDeletes) {
  EditorDocument d = EditorDocument::from_text(test::kSmallDoc);
  std::string before = d.save_text();
  uint64_t logic = d.logic_revision();
  ASSERT_TRUE(set_collapsed(d, kK, {4, 2}, true).ok);
  EXPECT_EQ(find_layout(d.doc(), "k")->collapsed, (std::vector<int>{2, 4}));  // kept ascending
  EXPECT_NE(d.save_text().find(R"("7": [250, 120]}, "collapsed": [2, 4]})"), std::string::npos)
      << d.save_text();
  EXPECT_EQ(d.logic_revision(), logic);
  EXPECT_EQ(d.undo_label(), "Collapse");
  std::string collapsed = d.save_text();
  // Collapsing what is collapsed changes nothing; expanding one keeps the other.
  ASSERT_TRUE(set_collapsed(d, kK, {4}, true).ok);
  EXPECT_EQ(d.save_text(), collapsed);
  ASSERT_TRUE(set_collapsed(d, kK, {2}, false).ok);
  EXPECT_EQ(find_layout(d.doc(), "k")->collapsed, std::vector<int>{4});
  EXPECT_EQ(d.undo_label(), "Expand");
  EXPECT_FALSE(set_collapsed(d, kK, {99}, true).ok);
  // A deleted node leaves the list with it (the loader refuses ids the graph lacks).
  ASSERT_TRUE(remove_nodes(d, kK, {4}).ok);
  EXPECT_TRUE(find_layout(d.doc(), "k")->collapsed.empty());
  EXPECT_NO_THROW(graph::load_document(d.save_text()));
  d.undo();
  EXPECT_EQ(find_layout(d.doc(), "k")->collapsed, std::vector<int>{4});
  d.undo();
  EXPECT_EQ(d.save_text(), collapsed);
  d.undo();
  EXPECT_EQ(d.save_text(), before);
  // A graph without a layout entry gets one for the collapse, and loses it on undo.
  EditorDocument bare = EditorDocument::from_text(
      R"({"format": "loom-graph", "version": 2, "kernels": [{"name": "k", "nodes": [{"id": 1, "type": "const", "params": {"value": 1}}]}]})");
  std::string bare_text = bare.save_text();
  ASSERT_TRUE(set_collapsed(bare, kK, {1}, true).ok);
  EXPECT_NE(bare.save_text().find(R"({"graph": "k", "positions": {}, "collapsed": [1]})"),
            std::string::npos)
      << bare.save_text();
  bare.undo();
  EXPECT_EQ(bare.save_text(), bare_text);
}

TEST(EditorModel, FunctionsCreateRenameDelete) {
  EditorDocument d = EditorDocument::from_text(test::kSmallDoc);
  std::string before = d.save_text();
  ASSERT_TRUE(
      create_function(d, "spring", {{"x", "f32x3"}, {"k", "f32"}}, {{"force", "f32x3"}}).ok);
  const graph::FunctionDecl* f = d.doc().function("spring");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->nodes.size(), 3u);
  EXPECT_EQ(f->nodes[0].type, "input");
  EXPECT_EQ(f->nodes[2].type, "output");
  EXPECT_TRUE(node_position(d.doc(), "spring", 3));
  EXPECT_FALSE(create_function(d, "spring", {}, {}).ok);
  EXPECT_FALSE(create_function(d, "k", {}, {}).ok);
  EXPECT_FALSE(create_function(d, "bad", {{"x", "f33"}}, {}).ok);

  // Renaming follows the calls and the layout; the document stays valid.
  ASSERT_TRUE(rename_function(d, "twice", "double_it").ok);
  EXPECT_EQ(find_node(d.doc(), kK, 5)->param("function")->s, "double_it");
  EXPECT_NE(find_layout(d.doc(), "double_it"), nullptr);
  EXPECT_NO_THROW(graph::validate_document(d.doc()));
  EXPECT_FALSE(rename_function(d, "double_it", "spring").ok);

  // Deleting a called function is refused, naming the caller.
  EditResult del = delete_function(d, "double_it");
  EXPECT_FALSE(del.ok);
  EXPECT_EQ(
      del.message,
      "function 'double_it' is called by kernel 'k' (node 5); delete or retarget the call first");
  ASSERT_TRUE(delete_function(d, "spring").ok);
  EXPECT_EQ(d.doc().function("spring"), nullptr);
  EXPECT_EQ(find_layout(d.doc(), "spring"), nullptr);
  ASSERT_TRUE(set_function_ports(d, "double_it", {{"x", "f32"}}, {{"y", "f32"}, {"z", "i32"}}).ok);
  EXPECT_FALSE(set_function_ports(d, "double_it", {{"x", "nope"}}, {}).ok);
  while (d.undo()) {
  }
  EXPECT_EQ(d.save_text(), before);
}

TEST(EditorModel, ReorderAndMoveBetweenRegions) {
  EditorDocument d = EditorDocument::from_text(test::kSmallDoc);
  std::string before = d.save_text();
  ASSERT_TRUE(reorder_node(d, kK, 7, 10).ok);
  EXPECT_EQ(graph_nodes(d.doc(), kK)->at(1).regions[0].nodes[4].id, 7);
  EXPECT_EQ(d.undo_label(), "Run later");
  EXPECT_FALSE(reorder_node(d, kK, 7, 1).ok);
  ASSERT_TRUE(move_to_region(d, kK, {1}, RegionRef{2, "body"}).ok);
  EXPECT_EQ(region_of(d.doc(), kK, 1), (RegionRef{2, "body"}));
  EXPECT_FALSE(move_to_region(d, kK, {2}, RegionRef{2, "body"}).ok);  // into itself
  EXPECT_FALSE(move_to_region(d, kK, {3}, RegionRef{4, "body"}).ok);  // a mul has no regions
  ASSERT_TRUE(move_to_region(d, kK, {1}, RegionRef{}).ok);
  while (d.undo()) {
  }
  EXPECT_EQ(d.save_text(), before);
}

namespace {

std::vector<int> ids_of(const std::vector<graph::Node>& nodes) {
  std::vector<int> ids;
  for (const graph::Node& n : nodes) ids.push_back(n.id);
  return ids;
}

graph::Literal name(const std::string& s) {
  graph::Literal l;
  l.kind = graph::Literal::Kind::String;
  l.s = s;
  return l;
}

}  // namespace

// A new ordered node is appended last in its region; a link from it into a node listed before
// it moves it to run just before that node (one undo step with the link), unless the move
// would break what it reads.
TEST(EditorModel, ConnectRunsANewOrderedNodeEarlierWhenTheLinkNeedsIt) {
  EditorDocument d = EditorDocument::from_text(test::kSmallDoc);
  const RegionRef body{2, "body"};
  auto body_ids = [&] { return ids_of(*region_nodes(d.doc(), kK, body)); };
  ASSERT_TRUE(add_node(d, kK, body, "call", Vec2{0, 300}, {{"function", name("twice")}}).ok);
  ASSERT_EQ(body_ids(), (std::vector<int>{7, 3, 4, 5, 6, 8}));
  std::string before = d.save_text();
  EditResult r = connect(d, kK, PinRef{8, "y"}, PinRef{6, "value"});  // into the store before it
  ASSERT_TRUE(r.ok) << r.message;
  EXPECT_NE(r.message.find("node 8 moves to run before node 6"), std::string::npos) << r.message;
  EXPECT_EQ(body_ids(), (std::vector<int>{7, 3, 4, 5, 8, 6}));
  EXPECT_EQ(find_node(d.doc(), kK, 6)->input("value")->from_node, 8);
  EXPECT_EQ(d.undo_label(), "Connect");
  ASSERT_TRUE(d.undo());  // the move and the link together
  EXPECT_EQ(d.save_text(), before);

  // Out of a loop body: a call at the top level, after the loop, runs before the loop.
  ASSERT_TRUE(add_node(d, kK, RegionRef{}, "call", Vec2{0, 400}, {{"function", name("twice")}}).ok);
  ASSERT_EQ(ids_of(*graph_nodes(d.doc(), kK)), (std::vector<int>{1, 2, 9}));
  r = connect(d, kK, PinRef{9, "y"}, PinRef{4, "b"});
  ASSERT_TRUE(r.ok) << r.message;
  EXPECT_EQ(ids_of(*graph_nodes(d.doc(), kK)), (std::vector<int>{1, 9, 2}));
}

TEST(EditorModel, ConnectRefusesAMoveEarlierThatWouldBreakWhatTheNodeReads) {
  EditorDocument d = EditorDocument::from_text(test::kSmallDoc);
  const RegionRef body{2, "body"};
  // A load (8) and an atomic (9) that reads it, both appended after the store.
  ASSERT_TRUE(add_node(d, kK, body, "load", Vec2{0, 300}, {{"field", name("f")}}).ok);
  ASSERT_TRUE(connect(d, kK, PinRef{2, "i0"}, PinRef{8, "i0"}).ok);
  ASSERT_TRUE(add_node(d, kK, body, "atomic_add", Vec2{0, 400}, {{"field", name("f")}}).ok);
  ASSERT_TRUE(connect(d, kK, PinRef{2, "i0"}, PinRef{9, "i0"}).ok);
  ASSERT_TRUE(connect(d, kK, PinRef{8, "out"}, PinRef{9, "value"}).ok);
  std::string before = d.save_text();
  // Running the atomic before the multiply would put it before the load it reads.
  EditResult r = connect(d, kK, PinRef{9, "out"}, PinRef{4, "b"});
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.message, "node 9 (atomic_add) runs after this node; move it earlier in its region");
  EXPECT_EQ(d.save_text(), before);
  // The load alone can run earlier: it reads only the loop index.
  r = connect(d, kK, PinRef{8, "out"}, PinRef{4, "b"});
  ASSERT_TRUE(r.ok) << r.message;
  EXPECT_EQ(ids_of(*region_nodes(d.doc(), kK, body)), (std::vector<int>{7, 3, 8, 4, 5, 6, 9}));
  EXPECT_NO_THROW(graph::validate_document(graph::load_document(d.save_text())));
}

// Any sequence of edits undone in full gives back the exact bytes, and redone in full gives
// the same bytes as before the undos.
TEST(EditorModel, RandomEditsUndoToTheSameBytes) {
  EditorDocument d = EditorDocument::from_text(test::kSmallDoc);
  std::string before = d.save_text();
  std::mt19937 rng(7);
  const char* types[] = {"add", "sin", "const", "reroute", "vec3", "load"};
  for (int step = 0; step < 200; ++step) {
    std::vector<int> ids;
    for_each_node(*graph_nodes(d.doc(), kK),
                  [&](const graph::Node& n, const RegionRef&) { ids.push_back(n.id); });
    int pick = ids.empty() ? -1 : ids[rng() % ids.size()];
    switch (rng() % 7) {
      case 0:
        add_node(d, kK, rng() % 2 ? RegionRef{} : RegionRef{2, "body"}, types[rng() % 6],
                 Vec2{float(rng() % 900), float(rng() % 500)});
        break;
      case 1:
        if (pick >= 0 && pick != 2) remove_nodes(d, kK, {pick});
        break;
      case 2:
        if (ids.size() > 1)
          connect(d, kK, PinRef{ids[rng() % ids.size()], "out"}, PinRef{pick, "a"});
        break;
      case 3:
        if (pick >= 0) set_literal(d, kK, PinRef{pick, "b"}, real(double(rng() % 10)));
        break;
      case 4:
        if (pick >= 0) duplicate_nodes(d, kK, {pick}, Vec2{20, 20});
        break;
      case 5:
        if (pick >= 0) paste_text(d, kK, RegionRef{}, copy_text(d.doc(), kK, {pick}));
        break;
      case 6: add_comment(d, kK, graph::CommentFrame{"c", 0, 0, 50, 50, ""}); break;
    }
    EXPECT_NO_THROW(graph::load_document(d.save_text())) << "step " << step;
  }
  std::string after = d.save_text();
  int undone = 0;
  while (d.undo()) ++undone;
  EXPECT_GT(undone, 50);
  EXPECT_EQ(d.save_text(), before);
  while (d.redo()) {
  }
  EXPECT_EQ(d.save_text(), after);
}

TEST(EditorModel, LiteralTextRoundTrips) {
  std::string error;
  auto n = parse_literal_text(" 1.50 ", false, &error);
  ASSERT_TRUE(n);
  EXPECT_EQ(n->kind, graph::Literal::Kind::Float);
  EXPECT_EQ(literal_text(*n), "1.50");  // as typed
  auto v = parse_literal_text("[1, [2, 3], true]", false, &error);
  ASSERT_TRUE(v);
  EXPECT_EQ(literal_text(*v), "[1, [2, 3], true]");
  auto big = parse_literal_text("18446744073709551615", false, &error);
  ASSERT_TRUE(big);
  EXPECT_TRUE(big->above_int64);
  EXPECT_FALSE(parse_literal_text("temperature", false, &error));
  EXPECT_EQ(error,
            "'temperature' is not a value (a number, true or false, or a list like [1, 0, 0])");
  EXPECT_FALSE(parse_literal_text("{\"a\": 1}", false, &error));
  EXPECT_FALSE(error.empty());
  EXPECT_FALSE(parse_literal_text("99999999999999999999999", false, &error));
  EXPECT_NE(error.find("out of range"), std::string::npos);
  auto name = parse_literal_text("  a*sin(b) ", true, &error);
  ASSERT_TRUE(name);
  EXPECT_EQ(name->s, "a*sin(b)");
  EXPECT_EQ(parse_literal_text("\"x\"", true, &error)->s, "x");
  EXPECT_FALSE(parse_literal_text("   ", false, &error));
  EXPECT_TRUE(error.empty());
  EXPECT_TRUE(is_text_param("expr"));
  EXPECT_FALSE(is_text_param("count"));
}

TEST(EditorModel, ReplacingTheWholeDocumentIsOneUndoStep) {
  EditorDocument d = EditorDocument::from_text(test::kSmallDoc, "small.loom.json");
  std::string before = d.save_text();
  graph::Document next = d.doc();
  next.pipelines[0].launches[0].args[0].second = real(0.75);  // as the parameters panel does
  next.path.clear();
  uint64_t logic = d.logic_revision();
  ASSERT_TRUE(replace_document(d, next, "Set s").ok);
  EXPECT_GT(d.logic_revision(), logic);
  EXPECT_EQ(d.doc().path, "small.loom.json");
  EXPECT_NE(d.save_text().find("\"s\": 0.75"), std::string::npos);
  EXPECT_EQ(d.undo_label(), "Set s");
  EXPECT_EQ(replace_document(d, d.doc()).message, "unchanged");
  d.undo();
  EXPECT_EQ(d.save_text(), before);
}
