// The node canvas driven through ImGui IO events, headless: mouse and keyboard in, the
// document (and its saved text) out.
#include <gtest/gtest.h>

#include <imgui.h>
#include <imgui_internal.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "compiler/graph/document_json.h"
#include "compiler/graph/validate.h"
#include "editor/model/graph_access.h"
#include "editor/model/literal_text.h"
#include "editor/model/operations.h"
#include "runtime/common/error.h"
#include "tests/editor/canvas_harness.h"
#include "tests/editor/test_docs.h"

using namespace loom;
using namespace loom::editor;
using test::CanvasHarness;

namespace {

const GraphRef kK{"k", false};

// A tooltip was drawn in the last frame.
bool tooltip_shown() {
  ImGuiWindow* w = ImGui::FindWindowByName("##Tooltip_00");
  return w && w->Active;
}

bool any_popup_open() { return ImGui::GetCurrentContext()->OpenPopupStack.Size > 0; }

ImVec2 mid(ImVec2 a, ImVec2 b) { return ImVec2((a.x + b.x) * 0.5f, (a.y + b.y) * 0.5f); }

// An empty spot of the canvas: top-left region well away from the sample's nodes.
ImVec2 empty_spot(NodeCanvas& c, Vec2 at) { return c.view().to_screen(at); }

void expect_valid(const EditorDocument& d) {
  try {
    graph::validate_document(graph::load_document(d.save_text()));
  } catch (const Error& e) {
    ADD_FAILURE() << e.what() << "\n" << d.save_text();
  }
}

ImVec2 pin(CanvasHarness& h, int node, const char* name, bool output) {
  auto p = h.canvas().pin_screen_pos(PinRef{node, name}, output);
  EXPECT_TRUE(p) << node << "." << name;
  return p.value_or(ImVec2(0, 0));
}

ImVec2 node_header(CanvasHarness& h, int node) {
  auto p = h.canvas().node_screen_pos(node);
  EXPECT_TRUE(p) << node;
  float z = h.canvas().view().zoom;
  return p ? ImVec2(p->x + 30 * z, p->y + 8 * z) : ImVec2(0, 0);
}

}  // namespace

TEST(EditorCanvas, FontsAreBakedAtSeveralSizesForCrispZoom) {
  CanvasHarness h;
  ASSERT_FALSE(h.fonts().fallback()) << "fonts-dejavu-core is not installed";
  EXPECT_GE(h.fonts().sizes().size(), 10u);
  EXPECT_GT(h.atlas_width(), 0);
  EXPECT_NEAR(h.fonts().nearest(13)->FontSize, 13, 0.01);
  EXPECT_NEAR(h.fonts().nearest(40)->FontSize, 43, 0.01);
  EXPECT_NEAR(h.fonts().nearest(2.6f)->FontSize, 6, 0.01);
  // Whatever the zoom, the font used is within ~12% of the size drawn.
  for (float px = 6; px < 62; px *= 1.07f) {
    float baked = h.fonts().nearest(px)->FontSize;
    EXPECT_LT(std::fabs(baked / px - 1), 0.13f) << px;
  }
  // Without the TTF: ImGui's own font, and nothing breaks.
  ImGuiContext* other = ImGui::CreateContext();
  ImGuiContext* saved = ImGui::GetCurrentContext();
  ImGui::SetCurrentContext(other);
  CanvasFonts missing;
  missing.add_to(ImGui::GetIO().Fonts, "/nonexistent/font.ttf");
  EXPECT_TRUE(missing.fallback());
  EXPECT_NE(missing.nearest(30), nullptr);
  ImGui::DestroyContext(other);
  ImGui::SetCurrentContext(saved);
}

TEST(EditorCanvas, DrawsTheSampleGraphsAndCullsWhatIsOffScreen) {
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(LOOM_SOURCE_DIR) + "/assets/graphs")) {
    CanvasHarness h;
    EditorDocument d = EditorDocument::from_file(entry.path().string());
    std::string text = d.save_text();
    h.frames(d, 3);
    const auto& stats = h.canvas().stats();
    EXPECT_GT(stats.nodes_total, 0) << entry.path();
    EXPECT_EQ(stats.nodes_drawn, stats.nodes_total) << entry.path();  // framed: everything shows
    EXPECT_GT(h.draw_data()->TotalVtxCount, 1000);
    // Zoomed in on a corner, most of it is culled.
    h.canvas().view().zoom = 3.5f;
    h.canvas().view().scroll = Vec2{-500, -500};
    h.frame(d);
    EXPECT_LT(h.canvas().stats().nodes_drawn, stats.nodes_total);
    EXPECT_EQ(d.save_text(), text);  // looking changes nothing
  }
}

TEST(EditorCanvas, CreateANodeThroughThePaletteByTyping) {
  CanvasHarness h;
  EditorDocument d = EditorDocument::from_text(test::kSmallDoc);
  h.frames(d, 2);
  // (A spot where the whole node shows: one partly off screen is moved into view.)
  ImVec2 spot = empty_spot(h.canvas(), Vec2{100, 330});
  h.click(d, spot);  // focus the canvas, clear the selection
  h.key(d, test::kKeyTab);
  ASSERT_TRUE(h.canvas().palette().is_open());
  h.type(d, "sqrt");
  ASSERT_FALSE(h.canvas().palette().shown().empty());
  EXPECT_EQ(h.canvas().palette().shown()[0], "sqrt");
  h.key(d, test::kKeyEnter);
  EXPECT_FALSE(h.canvas().palette().is_open());
  const graph::Node* n = find_node(d.doc(), kK, 8);
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->type, "sqrt");
  EXPECT_EQ(region_of(d.doc(), kK, 8), RegionRef{});
  auto at = node_position(d.doc(), "k", 8);
  ASSERT_TRUE(at);
  EXPECT_NEAR(at->x, 100, 1.5);
  EXPECT_NEAR(at->y, 330, 1.5);
  EXPECT_EQ(d.selection().nodes, std::vector<int>{8});
  EXPECT_NE(d.save_text().find("{\"id\": 8, \"type\": \"sqrt\"}"), std::string::npos);

  // From the keyboard alone, inside the loop body (the mouse is over its zone): Space, type,
  // arrows, Enter.
  auto body = h.canvas().zone_screen_pos(RegionRef{2, "body"});
  ASSERT_TRUE(body);
  h.move(d, ImVec2(body->x + 30, body->y + 200 * h.canvas().view().zoom));
  h.key(d, test::kKeySpace);
  ASSERT_TRUE(h.canvas().palette().is_open());
  h.type(d, "ad");
  std::vector<std::string> shown = h.canvas().palette().shown();
  ASSERT_GE(shown.size(), 2u);
  EXPECT_EQ(shown[0], "add");
  h.key(d, test::kKeyDown);
  h.key(d, test::kKeyEnter);
  const graph::Node* second = find_node(d.doc(), kK, 9);
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(second->type, shown[1]);
  EXPECT_EQ(region_of(d.doc(), kK, 9), (RegionRef{2, "body"}));

  // Escape closes without adding anything.
  std::string before = d.save_text();
  h.key(d, test::kKeyTab);
  h.type(d, "cos");
  h.key(d, test::kKeyEscape);
  EXPECT_FALSE(h.canvas().palette().is_open());
  EXPECT_EQ(d.save_text(), before);
}

TEST(EditorCanvas, ConnectPinsByDraggingFromPinToPin) {
  CanvasHarness h;
  EditorDocument d = EditorDocument::from_text(test::kSmallDoc);
  h.frames(d, 2);
  h.drag(d, pin(h, 3, "out", true), pin(h, 4, "b", false));
  const graph::Input* b = find_node(d.doc(), kK, 4)->input("b");
  ASSERT_NE(b, nullptr);
  EXPECT_TRUE(b->linked);
  EXPECT_EQ(b->from_node, 3);
  EXPECT_NE(d.save_text().find("\"inputs\": {\"a\": \"3\", \"b\": \"3\"}"), std::string::npos);
  EXPECT_NE(h.canvas().status().find("replaces the link from 1.out"), std::string::npos)
      << h.canvas().status();
  expect_valid(d);
  // Backwards: from an unlinked input to an output.
  int id = add_node(d, kK, RegionRef{2, "body"}, "sqrt", Vec2{450, 250}).nodes[0];
  h.frames(d, 2);
  h.drag(d, pin(h, id, "a", false), pin(h, 4, "out", true));
  ASSERT_NE(find_node(d.doc(), kK, id)->input("a"), nullptr);
  EXPECT_EQ(find_node(d.doc(), kK, id)->input("a")->from_node, 4);
}

TEST(EditorCanvas, AnIllTypedLinkIsRefusedWithItsReasonAndChangesNothing) {
  CanvasHarness h;
  EditorDocument d = EditorDocument::from_text(test::kSmallDoc);
  h.frames(d, 2);
  std::string before = d.save_text();
  uint64_t revision = d.revision();
  ImVec2 from = pin(h, 7, "out", true), to = pin(h, 3, "i0", false);
  h.move(d, from);
  h.press(d);
  h.move(d, mid(from, to));
  h.move(d, to);
  h.frame(d);
  // While hovering: refused, and the tooltip says why.
  EXPECT_TRUE(tooltip_shown());
  h.release(d);
  EXPECT_EQ(d.save_text(), before);
  EXPECT_EQ(d.revision(), revision);
  EXPECT_EQ(h.canvas().status(),
            "link refused: f32x3 cannot flow into 'i0': index 'i0' is f32x3; indices are i32, u32 "
            "or narrower "
            "integers (add a cast node)");
  EXPECT_FALSE(d.can_undo());
}

TEST(EditorCanvas, DroppingALinkOnEmptyCanvasOffersTheNodesThatFit) {
  CanvasHarness h;
  EditorDocument d = EditorDocument::from_text(test::kSmallDoc);
  h.frames(d, 2);
  ImVec2 spot = empty_spot(h.canvas(), Vec2{500, 300});
  h.drag(d, pin(h, 7, "out", true), spot);  // 7 gives an f32x3
  ASSERT_TRUE(h.canvas().palette().is_open());
  std::vector<std::string> shown = h.canvas().palette().shown();
  auto has = [&](const char* label) {
    return std::find(shown.begin(), shown.end(), label) != shown.end();
  };
  EXPECT_TRUE(has("normalize"));
  EXPECT_TRUE(has("cross"));
  EXPECT_TRUE(has("store v"));
  EXPECT_FALSE(has("load f"));      // an index takes integers
  EXPECT_FALSE(has("call twice"));  // takes an f32
  h.type(d, "normalize");
  h.key(d, test::kKeyEnter);
  const graph::Node* n = find_node(d.doc(), kK, 8);
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->type, "normalize");
  ASSERT_NE(n->input("a"), nullptr);
  EXPECT_EQ(n->input("a")->from_node, 7);
  EXPECT_EQ(region_of(d.doc(), kK, 8), (RegionRef{2, "body"}));  // where its source lives
  expect_valid(d);
  EXPECT_EQ(d.undo_label(), "Add normalize");  // node and link: one step
  d.undo();
  EXPECT_EQ(find_node(d.doc(), kK, 8), nullptr);
}

TEST(EditorCanvas, ALoopIndexDroppedOnEmptyCanvasOffersMemoryNodesAndLinksIntoTheBody) {
  const char* text = R"({"format": "loom-graph", "version": 2,
  "fields": [{"name": "grid", "type": "f32", "shape": [8, 8]}],
  "kernels": [{"name": "k", "nodes": [
    {"id": 1, "type": "range_for", "inputs": {"end0": 8, "end1": 8}}
  ]}],
  "layout": [{"graph": "k", "positions": {"1": [0, 0]}}]})";
  CanvasHarness h;
  EditorDocument d = EditorDocument::from_text(text);
  h.frames(d, 2);
  h.drag(d, pin(h, 1, "i0", true), empty_spot(h.canvas(), Vec2{400, 300}));
  ASSERT_TRUE(h.canvas().palette().is_open());
  std::vector<std::string> shown = h.canvas().palette().shown();
  auto has = [&](const char* label) {
    return std::find(shown.begin(), shown.end(), label) != shown.end();
  };
  EXPECT_TRUE(has("load grid"));
  EXPECT_TRUE(has("store grid"));
  EXPECT_TRUE(has("atomic_add grid"));
  EXPECT_TRUE(has("add"));
  h.type(d, "load grid");
  h.key(d, test::kKeyEnter);
  const graph::Node* n = find_node(d.doc(), kK, 2);
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->type, "load");
  EXPECT_EQ(region_of(d.doc(), kK, 2), (RegionRef{1, "body"}));  // where the index exists
  ASSERT_NE(n->input("i0"), nullptr) << h.canvas().status();
  EXPECT_EQ(n->input("i0")->from_node, 1);
  EXPECT_FALSE(h.canvas().problems(2).empty());  // i1 still missing: shown on the node
  EXPECT_EQ(d.undo_label(), "Add load grid");
}

TEST(EditorCanvas, LiftingALinkOffAnInputMovesOrRemovesIt) {
  CanvasHarness h;
  EditorDocument d = EditorDocument::from_text(test::kSmallDoc);
  h.frames(d, 2);
  std::string before = d.save_text();
  // 4.b is linked from 1: drag it off onto nothing.
  h.drag(d, pin(h, 4, "b", false), empty_spot(h.canvas(), Vec2{500, 300}));
  EXPECT_EQ(find_node(d.doc(), kK, 4)->input("b"), nullptr);
  EXPECT_FALSE(h.canvas().palette().is_open());
  d.undo();
  EXPECT_EQ(d.save_text(), before);
  h.frames(d, 2);
  // Or onto another input: one step that moves it.
  h.drag(d, pin(h, 4, "b", false), pin(h, 4, "a", false));
  EXPECT_EQ(find_node(d.doc(), kK, 4)->input("b"), nullptr);
  EXPECT_EQ(find_node(d.doc(), kK, 4)->input("a")->from_node, 1);
  EXPECT_EQ(d.undo_label(), "Reconnect");
  d.undo();
  EXPECT_EQ(d.save_text(), before);
}

TEST(EditorCanvas, MoveUndoRedoWithTheKeyboard) {
  CanvasHarness h;
  EditorDocument d = EditorDocument::from_text(test::kSmallDoc);
  h.frames(d, 2);
  std::string before = d.save_text();
  float z = h.canvas().view().zoom;
  ImVec2 from = node_header(h, 1);
  h.drag(d, from, ImVec2(from.x + 100 * z, from.y + 50 * z), 0, 12);
  auto moved = node_position(d.doc(), "k", 1);
  ASSERT_TRUE(moved);
  EXPECT_NEAR(moved->x, 100, 1.5);
  EXPECT_NEAR(moved->y, 250, 1.5);
  EXPECT_EQ(d.undo_label(), "Move");
  std::string after = d.save_text();
  h.key(d, 'Z', /*ctrl=*/true);
  EXPECT_EQ(d.save_text(), before);  // the whole drag was one step
  h.key(d, 'Y', true);
  EXPECT_EQ(d.save_text(), after);
  h.key(d, 'Z', true);
  h.key(d, 'Z', true, /*shift=*/true);
  EXPECT_EQ(d.save_text(), after);
  // Escape during a drag puts everything back.
  from = node_header(h, 1);
  h.move(d, from);
  h.press(d);
  h.move(d, ImVec2(from.x + 80, from.y));
  h.move(d, ImVec2(from.x + 160, from.y));
  h.key(d, test::kKeyEscape);
  h.release(d);
  EXPECT_EQ(d.save_text(), after);
}

TEST(EditorCanvas, CopyAndPasteGoThroughTheClipboardAsJson) {
  CanvasHarness h;
  EditorDocument d = EditorDocument::from_text(test::kSmallDoc);
  h.frames(d, 2);
  h.click(d, node_header(h, 4));
  ASSERT_EQ(d.selection().nodes, std::vector<int>{4});
  h.key(d, 'C', true);
  std::string clip = ImGui::GetClipboardText();
  EXPECT_EQ(clip.rfind("{\n  \"format\": \"loom-graph\",\n  \"version\": 2,", 0), 0u) << clip;
  EXPECT_NE(clip.find("{\"id\": 4, \"type\": \"mul\"}"), std::string::npos) << clip;
  ImVec2 spot = empty_spot(h.canvas(), Vec2{200, 350});
  h.move(d, spot);
  h.key(d, 'V', true);
  const graph::Node* pasted = find_node(d.doc(), kK, 8);
  ASSERT_NE(pasted, nullptr);
  EXPECT_EQ(pasted->type, "mul");
  auto at = node_position(d.doc(), "k", 8);
  ASSERT_TRUE(at);
  EXPECT_NEAR(at->x, 200, 1.5);
  EXPECT_NEAR(at->y, 350, 1.5);
  EXPECT_EQ(d.selection().nodes, std::vector<int>{8});
  // JSON typed elsewhere pastes too; garbage is refused with a message and nothing changes.
  ImGui::SetClipboardText(R"([{"id": 1, "type": "const", "params": {"value": 4.5}}])");
  h.key(d, 'V', true);
  ASSERT_NE(find_node(d.doc(), kK, 9), nullptr);
  EXPECT_EQ(find_node(d.doc(), kK, 9)->type, "const");
  EXPECT_NEAR(node_position(d.doc(), "k", 9)->x, 200,
              1.5);  // no position given: where it was pasted
  EXPECT_NEAR(node_position(d.doc(), "k", 9)->y, 350, 1.5);
  std::string before = d.save_text();
  ImGui::SetClipboardText("not json at all");
  h.key(d, 'V', true);
  EXPECT_EQ(d.save_text(), before);
  EXPECT_EQ(h.canvas().status().rfind("cannot paste: ", 0), 0u) << h.canvas().status();
  // Cut.
  h.click(d, node_header(h, 9));
  h.key(d, 'X', true);
  EXPECT_EQ(find_node(d.doc(), kK, 9), nullptr);
  EXPECT_NE(std::string(ImGui::GetClipboardText()).find("\"const\""), std::string::npos);
}

TEST(EditorCanvas, DuplicateWithCtrlD) {
  CanvasHarness h;
  EditorDocument d = EditorDocument::from_text(test::kSmallDoc);
  h.frames(d, 2);
  h.click(d, node_header(h, 4));
  h.click(d, node_header(h, 5));  // (not ctrl: 5 alone)
  ImGuiIO& io = ImGui::GetIO();
  io.KeyCtrl = true;
  h.click(d, node_header(h, 4));  // Ctrl+click adds
  io.KeyCtrl = false;
  ASSERT_EQ(d.selection().nodes.size(), 2u);
  h.key(d, 'D', true);
  EXPECT_EQ(d.selection().nodes, (std::vector<int>{8, 9}));
  EXPECT_EQ(find_node(d.doc(), kK, 9)->input("x")->from_node, 8);
  EXPECT_EQ(d.undo_label(), "Duplicate");
  expect_valid(d);
}

TEST(EditorCanvas, DeleteRemovesTheSelection) {
  CanvasHarness h;
  EditorDocument d = EditorDocument::from_text(test::kSmallDoc);
  h.frames(d, 2);
  h.click(d, node_header(h, 4));
  h.key(d, test::kKeyDelete);
  EXPECT_EQ(find_node(d.doc(), kK, 4), nullptr);
  EXPECT_EQ(find_node(d.doc(), kK, 5)->input("x"), nullptr);
  h.key(d, 'Z', true);
  EXPECT_NE(find_node(d.doc(), kK, 4), nullptr);
}

TEST(EditorCanvas, BoxSelection) {
  CanvasHarness h;
  EditorDocument d = EditorDocument::from_text(test::kSmallDoc);
  h.frames(d, 2);
  // Around nodes 3 (250, 0) and 4 (450, 0), from empty space inside the zone below them.
  ImVec2 a = h.canvas().view().to_screen(Vec2{240, 90});
  ImVec2 b = h.canvas().view().to_screen(Vec2{560, 10});
  h.drag(d, a, b);
  std::vector<int> sel = d.selection().nodes;
  std::sort(sel.begin(), sel.end());
  EXPECT_EQ(sel, (std::vector<int>{3, 4}));  // 7 sits below 3
  // A click on empty canvas clears it.
  h.click(d, empty_spot(h.canvas(), Vec2{100, 350}));
  EXPECT_TRUE(d.selection().nodes.empty());
}

TEST(EditorCanvas, CommentFramesCarryTheirNodes) {
  CanvasHarness h;
  EditorDocument d = EditorDocument::from_text(test::kSmallDoc);
  h.frames(d, 2);
  h.click(d, node_header(h, 1));
  h.type(d, "c");  // comment around the selection, title editor open
  const graph::GraphLayout* l = find_layout(d.doc(), "k");
  ASSERT_EQ(l->comments.size(), 1u);
  h.frame(d);
  for (int i = 0; i < 7; ++i) {  // replace "Comment"
    ImGui::GetIO().KeysDown[test::kKeyBackspace] = true;
    h.frame(d);
    ImGui::GetIO().KeysDown[test::kKeyBackspace] = false;
    h.frame(d);
  }
  h.type(d, "Inputs");
  h.key(d, test::kKeyEnter);
  l = find_layout(d.doc(), "k");
  ASSERT_EQ(l->comments[0].title, "Inputs");
  graph::CommentFrame frame = l->comments[0];
  EXPECT_LT(frame.x, 0);
  Vec2 node_before = *node_position(d.doc(), "k", 1);
  std::string before = d.save_text();

  // Drag the comment by its title: it and the node inside move together, as one step.
  float z = h.canvas().view().zoom;
  ImVec2 title = h.canvas().view().to_screen(Vec2{frame.x + frame.w - 20, frame.y + 6});
  h.drag(d, title, ImVec2(title.x + 60 * z, title.y + 40 * z), 0, 10);
  l = find_layout(d.doc(), "k");
  EXPECT_NEAR(l->comments[0].x, frame.x + 60, 1.5);
  EXPECT_NEAR(l->comments[0].y, frame.y + 40, 1.5);
  Vec2 node_after = *node_position(d.doc(), "k", 1);
  EXPECT_NEAR(node_after.x, node_before.x + 60, 1.5);
  EXPECT_NEAR(node_after.y, node_before.y + 40, 1.5);
  EXPECT_EQ(*node_position(d.doc(), "k", 3), (Vec2{250, 0}));  // outside: stays
  EXPECT_NE(d.save_text().find("\"comments\": [{\"title\": \"Inputs\", \"rect\": ["),
            std::string::npos);
  d.undo();
  EXPECT_EQ(d.save_text(), before);

  // Resized from its corner.
  ImVec2 corner = h.canvas().view().to_screen(Vec2{frame.x + frame.w - 3, frame.y + frame.h - 3});
  h.frames(d, 2);
  h.drag(d, corner, ImVec2(corner.x + 50 * z, corner.y + 20 * z));
  l = find_layout(d.doc(), "k");
  EXPECT_NEAR(l->comments[0].w, frame.w + 50, 1.5);
  EXPECT_NEAR(l->comments[0].h, frame.h + 20, 1.5);
  EXPECT_EQ(d.undo_label(), "Resize comment");
}

TEST(EditorCanvas, DoubleClickingALinkInsertsAReroute) {
  CanvasHarness h;
  EditorDocument d = EditorDocument::from_text(test::kSmallDoc);
  h.frames(d, 2);
  // The link from param s (top level) into the multiply's b, a quarter of the way along.
  auto on_link = h.canvas().link_screen_point(PinRef{4, "b"}, 0.25f);
  ASSERT_TRUE(on_link);
  h.double_click(d, *on_link);
  const graph::Node* r = find_node(d.doc(), kK, 8);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->type, "reroute");
  EXPECT_EQ(r->input("in")->from_node, 1);
  EXPECT_EQ(find_node(d.doc(), kK, 4)->input("b")->from_node, 8);
  EXPECT_EQ(region_of(d.doc(), kK, 8), (RegionRef{2, "body"}));  // where its user lives
  expect_valid(d);
  // The reroute's output can be dragged on like any pin.
  h.frames(d, 2);
  h.drag(d, pin(h, 8, "out", true), pin(h, 6, "value", false));
  EXPECT_EQ(find_node(d.doc(), kK, 6)->input("value")->from_node, 8);
  expect_valid(d);
}

TEST(EditorCanvas, EnterAndLeaveAFunction) {
  CanvasHarness h;
  EditorDocument d = EditorDocument::from_text(test::kSmallDoc);
  h.frames(d, 2);
  EXPECT_EQ(h.canvas().graph(), kK);
  h.double_click(d, node_header(h, 5));
  EXPECT_EQ(h.canvas().graph(), (GraphRef{"twice", true}));
  ASSERT_EQ(h.canvas().breadcrumb().size(), 2u);
  h.frames(d, 2);
  EXPECT_EQ(h.canvas().stats().nodes_total, 3);
  // Edits inside go to the function.
  h.drag(d, pin(h, 1, "out", true), pin(h, 2, "b", false));
  EXPECT_EQ(d.doc().function("twice")->nodes[1].input("b")->from_node, 1);
  h.key(d, test::kKeyEscape);
  EXPECT_EQ(h.canvas().graph(), kK);
  // Enter from the keyboard, back with the breadcrumb.
  h.frames(d, 2);
  h.click(d, node_header(h, 5));
  h.key(d, test::kKeyEnter);
  EXPECT_EQ(h.canvas().graph(), (GraphRef{"twice", true}));
  h.frame(d);
  h.click(d, ImVec2(30, 16));  // "kernel k" in the breadcrumb
  EXPECT_EQ(h.canvas().graph(), kK);
}

TEST(EditorCanvas, DroppingANodeInARegionZoneMovesItIntoTheRegion) {
  CanvasHarness h;
  EditorDocument d = EditorDocument::from_text(test::kSmallDoc);
  h.frames(d, 2);
  ImVec2 from = node_header(h, 1);
  ImVec2 to = h.canvas().view().to_screen(Vec2{560, 150});
  h.drag(d, from, to, 0, 10);
  EXPECT_EQ(region_of(d.doc(), kK, 1), (RegionRef{2, "body"}));
  EXPECT_EQ(d.undo_label(), "Move");
  expect_valid(d);  // 1 was used only inside the body
  d.undo();
  EXPECT_EQ(region_of(d.doc(), kK, 1), RegionRef{});
}

TEST(EditorCanvas, PanZoomAndMinimap) {
  CanvasHarness h;
  EditorDocument d = EditorDocument::from_text(test::kSmallDoc);
  h.frames(d, 2);
  ImVec2 at(700, 400);
  Vec2 under = h.canvas().view().to_canvas(at);
  float zoom = h.canvas().view().zoom;
  h.wheel(d, at, 2);
  EXPECT_GT(h.canvas().view().zoom, zoom * 1.3f);
  Vec2 still = h.canvas().view().to_canvas(at);
  EXPECT_NEAR(still.x, under.x, 0.01);  // zoom around the cursor
  EXPECT_NEAR(still.y, under.y, 0.01);
  // Middle drag pans.
  Vec2 scroll = h.canvas().view().scroll;
  h.drag(d, ImVec2(600, 600), ImVec2(500, 550), 2);
  EXPECT_NEAR(h.canvas().view().scroll.x, scroll.x + 100 / h.canvas().view().zoom, 0.5);
  EXPECT_NEAR(h.canvas().view().scroll.y, scroll.y + 50 / h.canvas().view().zoom, 0.5);
  // Right drag pans too (and opens no menu).
  scroll = h.canvas().view().scroll;
  h.drag(d, ImVec2(600, 600), ImVec2(650, 600), 1);
  EXPECT_NEAR(h.canvas().view().scroll.x, scroll.x - 50 / h.canvas().view().zoom, 0.5);
  EXPECT_FALSE(any_popup_open());
  // A click on the minimap's bottom-right corner moves the view towards there.
  Vec2 center_before = h.canvas().view().to_canvas(ImVec2(640, 400));
  h.click(d, ImVec2(1280 - 30, 800 - 30));
  Vec2 center = h.canvas().view().to_canvas(ImVec2(640, 400));
  EXPECT_GT(center.x, center_before.x + 100);
  EXPECT_GT(center.y, center_before.y + 100);
}

TEST(EditorCanvas, ErrorsShowOnTheNodeAndFocusFramesIt) {
  CanvasHarness h;
  EditorDocument d = EditorDocument::from_text(test::kSmallDoc);
  h.frames(d, 2);
  EXPECT_TRUE(h.canvas().problems(4).empty());
  // The app reports a compile error at node 4, pin b.
  d.set_diagnostics(
      {Diagnostic{kK, 4, "b", "division by zero ahead", Diagnostic::Severity::Error}});
  h.frame(d);
  ASSERT_EQ(h.canvas().problems(4), std::vector<std::string>{"b: division by zero ahead"});
  h.move(d, node_header(h, 4));
  h.frames(d, 2);
  EXPECT_TRUE(tooltip_shown());
  // Live problems from type inference: a node missing an input.
  add_node(d, kK, RegionRef{}, "sqrt", Vec2{0, 600});
  h.frame(d);
  ASSERT_EQ(h.canvas().problems(8),
            std::vector<std::string>{"a: input 'a' of this sqrt node needs a link or a value"});
  // A log entry clicked in the app: the node is selected and framed.
  h.canvas().view().scroll = Vec2{5000, 5000};
  h.canvas().focus(d.diagnostics()[0]);
  h.frame(d);
  EXPECT_EQ(d.selection().nodes, std::vector<int>{4});
  auto p = h.canvas().node_screen_pos(4);
  ASSERT_TRUE(p);
  EXPECT_GT(p->x, 300);
  EXPECT_LT(p->x, 900);
  // In a function: the canvas goes there.
  h.canvas().focus(GraphRef{"twice", true}, 2);
  h.frame(d);
  EXPECT_EQ(h.canvas().graph(), (GraphRef{"twice", true}));
  EXPECT_EQ(d.selection().nodes, std::vector<int>{2});
}

TEST(EditorCanvas, HelpOverlayAndContextMenu) {
  CanvasHarness h;
  EditorDocument d = EditorDocument::from_text(test::kSmallDoc);
  h.frames(d, 2);
  h.click(d, empty_spot(h.canvas(), Vec2{100, 350}));
  h.key(d, test::kKeyF1);
  EXPECT_TRUE(h.canvas().help_open());
  h.frame(d);
  ImGuiWindow* help = ImGui::FindWindowByName("Canvas shortcuts");
  ASSERT_NE(help, nullptr);
  EXPECT_TRUE(help->Active);
  h.key(d, test::kKeyF1);
  EXPECT_FALSE(h.canvas().help_open());
  h.type(d, "?");
  EXPECT_TRUE(h.canvas().help_open());
  h.key(d, test::kKeyEscape);
  EXPECT_FALSE(h.canvas().help_open());
  // Right click on a node opens its menu and selects it.
  h.click(d, node_header(h, 4), 1);
  EXPECT_TRUE(any_popup_open());
  EXPECT_EQ(d.selection().nodes, std::vector<int>{4});
}

TEST(EditorCanvas, SavedTextAfterEditingIsValidCanonicalAndLoadsBack) {
  CanvasHarness h;
  EditorDocument d = EditorDocument::from_text(test::kSmallDoc);
  h.frames(d, 2);
  h.drag(d, pin(h, 3, "out", true), pin(h, 4, "b", false));
  h.double_click(d, *h.canvas().link_screen_point(PinRef{6, "value"}, 0.5f));
  h.click(d, node_header(h, 1));
  h.key(d, 'D', true);
  h.type(d, "c");
  h.key(d, test::kKeyEnter);
  std::string saved = d.save_text();
  graph::Document back = graph::load_document(saved, "saved.loom.json");
  EXPECT_NO_THROW(graph::validate_document(back));
  EXPECT_EQ(graph::save_document(back), saved);
  EXPECT_NE(saved.find("\"type\": \"reroute\""), std::string::npos);
  EXPECT_NE(saved.find("\"comments\": [{\"title\": \"Comment\""), std::string::npos);
}

// 2,000 nodes: the canvas stays correct and only draws what is on screen.
TEST(EditorCanvas, ABigGraphIsCulled) {
  std::string nodes;
  std::string positions;
  for (int i = 0; i < 2000; ++i) {
    std::string in = i == 0 ? "1.0" : "\"" + std::to_string(i - 1) + "\"";
    nodes += std::string(i ? ",\n" : "") + "{\"id\": " + std::to_string(i) +
             ", \"type\": \"add\", \"inputs\": {\"a\": " + in + ", \"b\": 1.0}}";
    positions += std::string(i ? ", " : "") + "\"" + std::to_string(i) + "\": [" +
                 std::to_string((i % 50) * 220) + ", " + std::to_string((i / 50) * 120) + "]";
  }
  std::string text =
      R"({"format": "loom-graph", "version": 2, "kernels": [{"name": "big", "nodes": [)" + nodes +
      R"(]}], "layout": [{"graph": "big", "positions": {)" + positions + "}}]}";
  CanvasHarness h;
  EditorDocument d = EditorDocument::from_text(text);
  h.frames(d, 2);
  EXPECT_EQ(h.canvas().stats().nodes_total, 2000);
  h.canvas().view().zoom = 1;
  h.canvas().view().scroll = Vec2{3000, 2000};
  h.frame(d);
  EXPECT_GT(h.canvas().stats().nodes_drawn, 10);
  EXPECT_LT(h.canvas().stats().nodes_drawn, 80);
  EXPECT_LT(h.canvas().stats().links_drawn, 100);
  // Hit tests go through the grid hash: a click far away in the graph still lands.
  int id = 20 * 50 + 16;  // at (3520, 2400): on screen
  h.click(d, node_header(h, id));
  EXPECT_EQ(d.selection().nodes, std::vector<int>{id});
}

TEST(EditorCanvas, TheValueEditorSetsParametersAndLiterals) {
  CanvasHarness h;
  EditorDocument d = EditorDocument::from_text(test::kSmallDoc);
  h.frames(d, 2);
  // A new const from the palette, its value typed in the editor (keyboard only).
  h.click(d, empty_spot(h.canvas(), Vec2{100, 330}));
  h.key(d, test::kKeyTab);
  h.type(d, "const");
  h.key(d, test::kKeyEnter);
  ASSERT_EQ(find_node(d.doc(), kK, 8)->type, "const");
  h.key(d, test::kKeyEnter);  // Enter on the selected node opens its values
  ASSERT_EQ(h.canvas().value_editor_node(), 8);
  h.frame(d);
  for (int i = 0; i < 4; ++i) {  // "0.0" -> ""
    ImGui::GetIO().KeysDown[test::kKeyBackspace] = true;
    h.frame(d);
    ImGui::GetIO().KeysDown[test::kKeyBackspace] = false;
    h.frame(d);
  }
  h.type(d, "[1, 2.5, 3]");
  h.key(d, test::kKeyEnter);
  const graph::Literal* v = find_node(d.doc(), kK, 8)->param("value");
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->kind, graph::Literal::Kind::List);
  EXPECT_NE(
      d.save_text().find("{\"id\": 8, \"type\": \"const\", \"params\": {\"value\": [1, 2.5, 3]}}"),
      std::string::npos);
  h.key(d, test::kKeyEscape);
  EXPECT_EQ(h.canvas().value_editor_node(), -1);

  // A literal on an input pin, by double-clicking the node; a bad value is refused.
  h.double_click(d, node_header(h, 4));
  ASSERT_EQ(h.canvas().value_editor_node(), 4);
  EXPECT_EQ(find_node(d.doc(), kK, 4)->input("a")->from_node,
            3);                  // linked pins are shown, not edited
  h.canvas().edit_values(d, 1);  // the app can open it too: param node 1's name
  h.frames(d, 2);
  for (int i = 0; i < 2; ++i) {
    ImGui::GetIO().KeysDown[test::kKeyBackspace] = true;
    h.frame(d);
    ImGui::GetIO().KeysDown[test::kKeyBackspace] = false;
    h.frame(d);
  }
  h.type(d, "t");  // a name is text: no quotes needed
  h.key(d, test::kKeyEnter);
  EXPECT_EQ(find_node(d.doc(), kK, 1)->param("name")->s, "t");
  EXPECT_FALSE(h.canvas().problems(1).empty());  // there is no parameter 't': shown at once
  h.key(d, 'Z', true);
  h.frame(d);
}

TEST(EditorCanvas, TheValueEditorTakesMouseClicksInItsFields) {
  CanvasHarness h;
  EditorDocument d = EditorDocument::from_text(test::kSmallDoc);
  h.frames(d, 2);
  h.double_click(d, node_header(h, 2));  // the range_for: begin0, end0, ...
  ASSERT_EQ(h.canvas().value_editor_node(), 2);
  auto end0 = h.canvas().value_field_screen_pos("end0");
  auto begin0 = h.canvas().value_field_screen_pos("begin0");
  ASSERT_TRUE(end0 && begin0);
  h.click(d, *end0);  // the second field, by mouse
  EXPECT_EQ(h.canvas().value_editor_node(), 2);
  h.click(d, *begin0);  // and back to the first
  EXPECT_EQ(h.canvas().value_editor_node(), 2);
  h.click(d, *end0);
  ASSERT_EQ(h.canvas().value_editor_node(), 2);
  h.key(d, 'A', /*ctrl=*/true);  // select what is there: "64"
  h.type(d, "32");
  h.key(d, test::kKeyEnter);
  EXPECT_EQ(h.canvas().value_editor_node(), 2);
  const graph::Input* in = find_node(d.doc(), kK, 2)->input("end0");
  ASSERT_NE(in, nullptr);
  EXPECT_EQ(literal_text(in->literal), "32");
  // A click outside still closes it.
  h.click(d, empty_spot(h.canvas(), Vec2{100, 330}));
  EXPECT_EQ(h.canvas().value_editor_node(), -1);
}

// Opened on a node at the screen's bottom-right corner, the value editor is whole on screen.
TEST(EditorCanvas, TheValueEditorStaysOnScreenNearAnEdge) {
  CanvasHarness h;
  EditorDocument d = EditorDocument::from_text(test::kSmallDoc);
  h.frames(d, 2);
  // Scroll so the range_for (node 2, at 0,0) sits near the bottom-right corner.
  ImVec2 display = ImGui::GetIO().DisplaySize;
  ViewTransform& v = h.canvas().view();
  ImVec2 at = v.to_screen(Vec2{0, 0});
  v.scroll.x -= (display.x - 60 - at.x) / v.zoom;
  v.scroll.y -= (display.y - 40 - at.y) / v.zoom;
  h.frames(d, 2);
  h.canvas().edit_values(d, 2);
  h.frames(d, 3);
  ASSERT_EQ(h.canvas().value_editor_node(), 2);
  for (const char* field : {"begin0", "end0"}) {
    auto p = h.canvas().value_field_screen_pos(field);
    ASSERT_TRUE(p.has_value()) << field;
    EXPECT_GE(p->x, 0);
    EXPECT_LT(p->x, display.x) << field;
    EXPECT_GE(p->y, 0);
    EXPECT_LT(p->y, display.y) << field;
  }
}

TEST(EditorCanvas, TheValueEditorStartsFromTheNodesValuesEachTimeItOpens) {
  CanvasHarness h;
  EditorDocument d = EditorDocument::from_text(test::kSmallDoc);
  h.frames(d, 2);
  // Opened on node 1 (its first field: name "s"), typed into, then opened on the store 6
  // (its first field: field "f"): the field shows "f", and what is typed replaces it.
  h.canvas().edit_values(d, 1);
  h.frames(d, 2);
  h.type(d, "x");
  h.canvas().edit_values(d, 6);
  h.frames(d, 2);
  ASSERT_EQ(h.canvas().value_editor_node(), 6);
  h.type(d, "v");
  h.key(d, test::kKeyEnter);
  EXPECT_EQ(find_node(d.doc(), kK, 6)->param("field")->s, "v");
  EXPECT_EQ(find_node(d.doc(), kK, 1)->param("name")->s, "s");
  h.key(d, test::kKeyEscape);
  ASSERT_EQ(h.canvas().value_editor_node(), -1);

  // The same by hand: Enter on node 1, type, Escape; click node 6, Enter, type, Enter.
  h.click(d, node_header(h, 1));
  h.key(d, test::kKeyEnter);
  ASSERT_EQ(h.canvas().value_editor_node(), 1);
  h.frame(d);
  h.type(d, "xyz");  // typed, never applied
  h.key(d, test::kKeyEscape);
  ASSERT_EQ(h.canvas().value_editor_node(), -1);
  h.click(d, node_header(h, 6));
  h.key(d, test::kKeyEnter);
  ASSERT_EQ(h.canvas().value_editor_node(), 6);
  h.frame(d);
  h.type(d, "f");
  h.key(d, test::kKeyEnter);
  EXPECT_EQ(find_node(d.doc(), kK, 6)->param("field")->s, "f");
  EXPECT_EQ(find_node(d.doc(), kK, 1)->param("name")->s, "s");
}

TEST(EditorCanvas, NewRenameAndDeleteFunctionsFromTheMenus) {
  CanvasHarness h;
  EditorDocument d = EditorDocument::from_text(test::kSmallDoc);
  h.frames(d, 2);
  h.click(d, empty_spot(h.canvas(), Vec2{100, 330}), 1);  // canvas menu
  ASSERT_TRUE(any_popup_open());
  ImGuiWindow* menu = ImGui::GetCurrentContext()->OpenPopupStack.back().Window;
  ASSERT_NE(menu, nullptr);
  // Find "New function" by walking the menu with the keyboard is brittle; call what it calls.
  h.key(d, test::kKeyEscape);
  EXPECT_FALSE(any_popup_open());
  // The model operation the menu item runs, then the canvas shows it.
  ASSERT_TRUE(create_function(d, "spring", {{"x", "f32"}}, {{"y", "f32"}}).ok);
  h.canvas().enter_function("spring");
  h.frames(d, 2);
  EXPECT_EQ(h.canvas().graph(), (GraphRef{"spring", true}));
  EXPECT_EQ(h.canvas().stats().nodes_total, 2);
  expect_valid(d);
  // Renamed behind the canvas's back: the canvas follows what exists.
  ASSERT_TRUE(rename_function(d, "spring", "spring2").ok);
  h.frames(d, 2);
  EXPECT_EQ(h.canvas().graph(), kK);
  d.undo();
  h.canvas().enter_function("spring");
  h.frames(d, 2);
  ASSERT_TRUE(delete_function(d, "spring").ok);
  h.frames(d, 2);
  EXPECT_EQ(h.canvas().graph(), kK);
}

// Broken documents (an unknown node type, dangling links, duplicate ids, a cycle, a region
// the type lacks) draw and take edits without crashing, and say what is wrong.
TEST(EditorCanvas, BrokenDocumentsDrawAndShowTheirProblems) {
  EditorDocument d = EditorDocument::from_text(
      R"({"format": "loom-graph", "version": 2, "kernels": [{"name": "k", "nodes": [
    {"id": 1, "type": "sine", "inputs": {"a": "9"}},
    {"id": 2, "type": "add", "inputs": {"a": "3", "b": "2"}},
    {"id": 3, "type": "mul", "inputs": {"a": "2.nope", "b": "44.out"}},
    {"id": 4, "type": "add", "regions": {"body": [{"id": 4, "type": "neg"}]}},
    {"id": 5, "type": "range_for", "inputs": {"end0": 4.5}, "regions": {"body": [{"id": 6, "type": "index", "params": {"dim": 7}}]}}
  ]}]})");
  CanvasHarness h;
  h.frames(d, 3);
  EXPECT_GE(h.canvas().stats().nodes_total, 5);
  EXPECT_FALSE(h.canvas().problems(1).empty());
  EXPECT_FALSE(h.canvas().problems(5).empty());
  // Every kind of interaction on it.
  for (int id : {1, 2, 3, 5}) {
    if (auto p = h.canvas().node_screen_pos(id)) {
      h.click(d, ImVec2(p->x + 20, p->y + 6));
      h.drag(d, ImVec2(p->x + 20, p->y + 6), ImVec2(p->x + 60, p->y + 40));
      h.key(d, 'D', true);
      h.key(d, test::kKeyDelete);
      h.key(d, 'Z', true);
    }
  }
  h.key(d, 'A', true);
  h.key(d, 'C', true);
  h.key(d, 'V', true);
  h.frames(d, 2);
  EXPECT_NO_THROW(graph::load_document(d.save_text()));
}

// A document without positions (mpm88 has no layout section) is laid out automatically:
// nothing overlaps, the document is not touched, and moving a node writes its position.
TEST(EditorCanvas, NodesWithoutPositionsGetAnAutomaticLayout) {
  std::string path = std::string(LOOM_SOURCE_DIR) + "/assets/graphs/mpm88.loom.json";
  std::string text = test::read_text(path);
  ASSERT_EQ(text.find("\"layout\""), std::string::npos);
  EditorDocument d = EditorDocument::from_text(text, path);
  CanvasHarness h;
  for (const graph::KernelDecl& k : d.doc().kernels) {
    h.canvas().show(GraphRef{k.name, false});
    h.frames(d, 2);
    const auto& nodes = h.canvas().geometry().nodes();
    ASSERT_FALSE(nodes.empty());
    for (size_t i = 0; i < nodes.size(); ++i) {
      EXPECT_FALSE(nodes[i].positioned);
      for (size_t j = i + 1; j < nodes.size(); ++j)
        EXPECT_FALSE(nodes[i].rect().overlaps(nodes[j].rect()))
            << k.name << ": " << nodes[i].id << " overlaps " << nodes[j].id;
    }
    // Zones hold their nodes.
    for (const NodeGeom& n : nodes)
      if (n.zone >= 0) {
        EXPECT_TRUE(
            n.rect().inside(h.canvas().geometry().zones()[static_cast<size_t>(n.zone)].rect));
      }
  }
  EXPECT_EQ(d.save_text(), text);
  h.canvas().show(GraphRef{"p2g", false});
  h.frames(d, 2);
  ImVec2 from = node_header(h, 3);
  h.drag(d, from, ImVec2(from.x + 40, from.y + 40));
  EXPECT_TRUE(node_position(d.doc(), "p2g", 3));
  EXPECT_NE(d.save_text().find("\"layout\": [\n    {\"graph\": \"p2g\", \"positions\": {\"3\": ["),
            std::string::npos);
  d.undo();
  EXPECT_EQ(d.save_text(), text);  // the drag, its position written first: one step
}

// Blender, Unity: an unlinked input's value is typed on the node itself, and a number is
// scrubbed by dragging it sideways.
TEST(EditorCanvas, AnInputsValueIsTypedOnTheNodeAndScrubbedByDragging) {
  CanvasHarness h;
  EditorDocument d = EditorDocument::from_text(test::kSmallDoc);
  h.frames(d, 2);
  const PinRef end0{2, "end0"};
  auto literal = [&](const GraphRef& g, const PinRef& p) {
    const graph::Input* in = find_node(d.doc(), g, p.node)->input(p.pin);
    return in && !in->linked ? literal_text(in->literal) : std::string("(none)");
  };
  auto value = h.canvas().input_value_screen_pos(end0);
  ASSERT_TRUE(value);
  EXPECT_FALSE(h.canvas().input_value_screen_pos(PinRef{4, "a"}));  // linked: nothing to type
  h.click(d, *value);
  ASSERT_EQ(h.canvas().inline_edit(), end0);
  EXPECT_EQ(h.canvas().value_editor_node(), -1);  // on the node, not the editor beside it
  h.frame(d);
  h.type(d, "128");  // what was there is selected: typing replaces it
  h.key(d, test::kKeyEnter);
  EXPECT_EQ(h.canvas().inline_edit().node, -1);
  EXPECT_EQ(literal(kK, end0), "128");
  EXPECT_EQ(d.undo_label(), "Set value");
  // Escape cancels.
  h.click(d, *h.canvas().input_value_screen_pos(end0));
  ASSERT_EQ(h.canvas().inline_edit(), end0);
  h.frame(d);
  h.type(d, "7");
  h.key(d, test::kKeyEscape);
  EXPECT_EQ(h.canvas().inline_edit().node, -1);
  EXPECT_EQ(literal(kK, end0), "128");
  // A click elsewhere commits.
  h.click(d, *h.canvas().input_value_screen_pos(end0));
  h.frame(d);
  h.type(d, "32");
  h.click(d, empty_spot(h.canvas(), Vec2{100, 400}));
  EXPECT_EQ(h.canvas().inline_edit().node, -1);
  EXPECT_EQ(literal(kK, end0), "32");
  h.frames(d, 30);  // the next press is no double-click

  // Dragging the number sideways scrubs it: an integer by at least 1 a pixel, one undo step.
  std::string before = d.save_text();
  value = h.canvas().input_value_screen_pos(end0);
  h.drag(d, *value, ImVec2(value->x + 40, value->y), 0, 10);
  EXPECT_EQ(literal(kK, end0), "72");
  EXPECT_EQ(find_node(d.doc(), kK, 2)->input("end0")->literal.kind, graph::Literal::Kind::Int);
  EXPECT_EQ(d.undo_label(), "Scrub end0");
  EXPECT_EQ(h.canvas().inline_edit().node, -1);
  EXPECT_EQ(*node_position(d.doc(), "k", 2), (Vec2{0, 0}));  // the node did not move
  d.undo();
  EXPECT_EQ(d.save_text(), before);
  // Escape during a scrub puts the value back.
  h.frames(d, 30);
  value = h.canvas().input_value_screen_pos(end0);
  h.move(d, *value);
  h.press(d);
  h.move(d, ImVec2(value->x + 10, value->y));
  h.move(d, ImVec2(value->x + 30, value->y));
  EXPECT_EQ(literal(kK, end0), "62");
  h.key(d, test::kKeyEscape);
  h.release(d);
  EXPECT_EQ(d.save_text(), before);

  // A label with no number to scrub (end1 has no value) moves its node, as the box does.
  h.frames(d, 30);
  value = h.canvas().input_value_screen_pos(PinRef{2, "end1"});
  ASSERT_TRUE(value);
  float z = h.canvas().view().zoom;
  h.drag(d, *value, ImVec2(value->x + 40 * z, value->y + 20 * z), 0, 10);
  EXPECT_EQ(d.undo_label(), "Move");
  EXPECT_NEAR(node_position(d.doc(), "k", 2)->x, 40, 1.5);
  EXPECT_NEAR(node_position(d.doc(), "k", 2)->y, 20, 1.5);
  d.undo();
  EXPECT_EQ(d.save_text(), before);
  h.frames(d, 30);

  // A right click there is the node's menu.
  h.click(d, *h.canvas().input_value_screen_pos(end0), 1);
  EXPECT_TRUE(any_popup_open());
  EXPECT_EQ(d.selection().nodes, std::vector<int>{2});
  h.key(d, test::kKeyEscape);
  EXPECT_FALSE(any_popup_open());

  // A float keeps its point: 2.0 by 0.5% a pixel.
  const GraphRef twice{"twice", true};
  h.canvas().enter_function("twice");
  h.frames(d, 30);
  value = h.canvas().input_value_screen_pos(PinRef{2, "b"});
  ASSERT_TRUE(value);
  h.drag(d, *value, ImVec2(value->x + 50, value->y), 0, 10);
  EXPECT_EQ(literal(twice, PinRef{2, "b"}), "2.5");
  EXPECT_EQ(find_node(d.doc(), twice, 2)->input("b")->literal.kind, graph::Literal::Kind::Float);
  EXPECT_NE(d.save_text().find(R"({"id": 2, "type": "mul", "inputs": {"a": "1", "b": 2.5}})"),
            std::string::npos);
  // The pin circle itself still starts a link.
  h.frames(d, 30);
  h.drag(d, pin(h, 2, "b", false), pin(h, 1, "out", true));
  EXPECT_EQ(h.canvas().inline_edit().node, -1);
  ASSERT_TRUE(find_node(d.doc(), twice, 2)->input("b")->linked);
  EXPECT_EQ(find_node(d.doc(), twice, 2)->input("b")->from_node, 1);
  expect_valid(d);
}

// Blender's rule: the keyboard goes to the panel under the mouse.
TEST(EditorCanvas, KeysGoToThePanelUnderTheMouse) {
  CanvasHarness h;
  EditorDocument d = EditorDocument::from_text(test::kSmallDoc);
  h.set_panel(ImVec2(1000, 0), ImVec2(280, 800));
  h.frames(d, 2);
  ASSERT_LT(node_header(h, 4).x, 1000);
  h.click(d, node_header(h, 4));  // the canvas has the focus
  ASSERT_EQ(d.selection().nodes, std::vector<int>{4});
  h.move(d, ImVec2(1100, 400));  // over the other panel
  h.key(d, test::kKeyDelete);
  EXPECT_NE(find_node(d.doc(), kK, 4), nullptr);
  h.type(d, "c");
  EXPECT_EQ(find_layout(d.doc(), "k")->comments.size(), 0u);
  // The other panel clicked (it has the focus), the mouse back over the canvas: keys act there.
  h.click(d, ImVec2(1100, 400));
  h.move(d, empty_spot(h.canvas(), Vec2{100, 400}));
  h.key(d, test::kKeyDelete);
  EXPECT_EQ(find_node(d.doc(), kK, 4), nullptr);
  // Undo and redo follow the focus, as the app expects (it takes them when the canvas is not
  // focused): not here, with the panel focused...
  h.key(d, 'Z', /*ctrl=*/true);
  EXPECT_EQ(find_node(d.doc(), kK, 4), nullptr);
  // ...and with the canvas focused, wherever the mouse is.
  h.click(d, empty_spot(h.canvas(), Vec2{100, 400}));
  h.move(d, ImVec2(1100, 400));
  h.key(d, 'Z', /*ctrl=*/true);
  EXPECT_NE(find_node(d.doc(), kK, 4), nullptr);
  // The mouse over no window at all: the canvas, when it has the focus.
  h.click(d, node_header(h, 4));
  h.move(d, ImVec2(-1000, -1000));
  h.key(d, test::kKeyDelete);
  EXPECT_EQ(find_node(d.doc(), kK, 4), nullptr);
}

// A node made where a link was dropped, or from the palette near an edge, is moved wholly into
// view and off the minimap.
TEST(EditorCanvas, NewNodesLandInViewAndClearOfTheMinimap) {
  CanvasHarness h;
  EditorDocument d = EditorDocument::from_text(test::kSmallDoc);
  h.frames(d, 2);
  auto map = h.canvas().minimap_screen_rect();
  ASSERT_TRUE(map);
  auto screen_rect = [&](int id) {
    const NodeGeom& n =
        h.canvas().geometry().nodes()[static_cast<size_t>(h.canvas().geometry().index_of(id))];
    ImVec2 a = h.canvas().view().to_screen(n.pos);
    ImVec2 b = h.canvas().view().to_screen(Vec2{n.pos.x + n.w, n.pos.y + n.h});
    return Rect{a.x, a.y, b.x, b.y};
  };
  Rect canvas{0, 0, 1280, 800};
  h.drag(d, pin(h, 7, "out", true), ImVec2(map->x0 + 40, map->y0 + 40));
  ASSERT_TRUE(h.canvas().palette().is_open());
  h.type(d, "normalize");
  h.key(d, test::kKeyEnter);
  ASSERT_NE(find_node(d.doc(), kK, 8), nullptr);
  EXPECT_EQ(find_node(d.doc(), kK, 8)->input("a")->from_node, 7);
  EXPECT_EQ(d.undo_label(), "Add normalize");  // the move is part of the one step
  Rect r = screen_rect(8);
  EXPECT_FALSE(r.overlaps(*map)) << r.x0 << "," << r.y0 << " " << r.x1 << "," << r.y1;
  EXPECT_TRUE(r.inside(canvas));
  // From the palette with the mouse at the right edge, above the minimap.
  h.move(d, ImVec2(1265, 120));
  h.key(d, test::kKeyTab);
  h.type(d, "sqrt");
  h.key(d, test::kKeyEnter);
  ASSERT_NE(find_node(d.doc(), kK, 9), nullptr);
  r = screen_rect(9);
  EXPECT_TRUE(r.inside(canvas)) << r.x0 << "," << r.y0 << " " << r.x1 << "," << r.y1;
  EXPECT_FALSE(r.overlaps(*map));
  EXPECT_NEAR(r.y0, 120, 1.5 * h.canvas().view().zoom);  // only as far as needed
}

// Blender's H, Houdini: a collapsed node is its title bar, links on its edges; saved in the
// layout.
TEST(EditorCanvas, HCollapsesTheSelectedNodesToTheirTitleBars) {
  CanvasHarness h;
  EditorDocument d = EditorDocument::from_text(test::kSmallDoc);
  h.frames(d, 2);
  std::string before = d.save_text();
  h.click(d, node_header(h, 4));
  h.type(d, "h");
  EXPECT_EQ(find_layout(d.doc(), "k")->collapsed, std::vector<int>{4});
  EXPECT_EQ(d.undo_label(), "Collapse");
  EXPECT_NE(d.save_text().find("\"collapsed\": [4]"), std::string::npos);
  h.frame(d);
  const GraphGeometry& geo = h.canvas().geometry();
  const NodeGeom& n = geo.nodes()[static_cast<size_t>(geo.index_of(4))];
  EXPECT_TRUE(n.collapsed);
  EXPECT_EQ(n.h, geo.metrics().header);
  // Links in meet the bar's left edge, links out its right edge.
  float z = h.canvas().view().zoom;
  ImVec2 at = *h.canvas().node_screen_pos(4);
  ImVec2 in = *h.canvas().link_screen_point(PinRef{4, "a"}, 1.0f);
  ImVec2 out = *h.canvas().link_screen_point(PinRef{5, "x"}, 0.0f);
  EXPECT_NEAR(in.x, at.x, 0.5);
  EXPECT_NEAR(in.y, at.y + n.h * 0.5f * z, 0.5);
  EXPECT_NEAR(out.x, at.x + n.w * z, 0.5);
  EXPECT_NEAR(out.y, at.y + n.h * 0.5f * z, 0.5);
  EXPECT_FALSE(h.canvas().input_value_screen_pos(PinRef{4, "b"}));
  // Saved and loaded back, it stays collapsed.
  EditorDocument back = EditorDocument::from_text(d.save_text());
  EXPECT_EQ(find_layout(back.doc(), "k")->collapsed, std::vector<int>{4});
  expect_valid(d);
  // H again expands; undo collapses again, and again gives the document back.
  h.type(d, "h");
  EXPECT_TRUE(find_layout(d.doc(), "k")->collapsed.empty());
  EXPECT_EQ(d.undo_label(), "Expand");
  h.frame(d);
  EXPECT_FALSE(h.canvas().geometry().nodes()[static_cast<size_t>(geo.index_of(4))].collapsed);
  d.undo();
  d.undo();
  EXPECT_EQ(d.save_text(), before);
}

TEST(EditorCanvas, TheErrorTooltipNeverCoversTheValueEditorOfItsNode) {
  CanvasHarness h;
  EditorDocument d = EditorDocument::from_text(test::kSmallDoc);
  h.frames(d, 2);
  d.set_diagnostics(
      {Diagnostic{kK, 4, "b", "division by zero ahead", Diagnostic::Severity::Error}});
  h.move(d, node_header(h, 4));
  h.frames(d, 2);
  ASSERT_TRUE(tooltip_shown());
  h.canvas().edit_values(d, 4);
  h.frames(d, 2);
  ASSERT_EQ(h.canvas().value_editor_node(), 4);
  for (float dx : {0.0f, 40.0f, 70.0f}) {  // anywhere on the node, next to the editor
    ImVec2 p = node_header(h, 4);
    h.move(d, ImVec2(p.x + dx, p.y));
    h.frames(d, 2);
    EXPECT_FALSE(tooltip_shown()) << dx;
  }
  EXPECT_EQ(h.canvas().value_editor_node(), 4);
  // Other nodes' tooltips still show.
  d.set_diagnostics({Diagnostic{kK, 4, "b", "division by zero ahead", Diagnostic::Severity::Error},
                     Diagnostic{kK, 3, "", "something else", Diagnostic::Severity::Error}});
  h.move(d, node_header(h, 3));
  h.frames(d, 2);
  EXPECT_TRUE(tooltip_shown());
}
