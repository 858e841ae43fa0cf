// The node canvas: draws one graph of an EditorDocument with ImDrawList into the current
// ImGui window and turns mouse and keyboard input into document edits. Needs an ImGui
// context and nothing else (no window, no GPU), so it runs headless in tests.
//
//   NodeCanvas canvas(&fonts);            // fonts.add_to(io.Fonts) before the atlas is built
//   ... each frame, inside ImGui::Begin("Graph") ... ImGui::End():
//   canvas.frame(doc);
//
// Regions (loop bodies, if branches) are zones: framed areas next to their region node that
// hold the region's nodes on the same canvas, so links into and out of a body stay visible.
// Functions are entered like sub-graphs (double-click a call node) with a breadcrumb back.
#pragma once

#include <imgui.h>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "compiler/graph/document.h"
#include "editor/canvas/canvas_fonts.h"
#include "editor/canvas/graph_geometry.h"
#include "editor/canvas/search_palette.h"
#include "editor/canvas/view_transform.h"
#include "editor/model/diagnostics.h"
#include "editor/model/editor_document.h"
#include "editor/model/link_check.h"

namespace loom::editor {

class NodeCanvas {
 public:
  // Backend key codes (io.KeysDown indices) for keys ImGui 1.86 has no ImGuiKey_ for; the
  // defaults are GLFW's (letters are their upper-case ASCII codes).
  struct Keys {
    int d = 'D';
    int f1 = 290;
  };
  struct Options {
    bool grid = true;
    bool minimap = true;
    bool live_problems = true;  // show type inference problems as they appear, not only the app's
    Keys keys;
  };
  struct FrameStats {
    int nodes_total = 0, links_total = 0;
    int nodes_drawn = 0, links_drawn = 0, zones_drawn = 0;
  };

  explicit NodeCanvas(const CanvasFonts* fonts = nullptr) : fonts_(fonts) {}

  // Draws the canvas over the rest of the current window's content region and handles input.
  void frame(EditorDocument& doc);

  // ---- navigation
  const GraphRef& graph() const { return crumbs_.empty() ? none_ : crumbs_.back(); }
  const std::vector<GraphRef>& breadcrumb() const { return crumbs_; }
  void show(const GraphRef& g);                  // starts the breadcrumb over
  void enter_function(const std::string& name);  // pushes onto the breadcrumb
  void leave();                                  // back to the graph before
  // Shows node `node` of graph `g` from the next frame on: switches graph, selects it and
  // frames it (a clicked log entry).
  void focus(const GraphRef& g, int node);
  // Opens the value editor of a node (its parameters and the literals on its inputs).
  void edit_values(EditorDocument& doc, int node) { open_value_editor(doc, node); }
  int value_editor_node() const { return editing_node_; }
  void focus(const Diagnostic& d) { focus(d.graph, d.node); }
  void frame_all() { pending_frame_ = Frame::All; }
  void frame_selection() { pending_frame_ = Frame::Selection; }

  ViewTransform& view() { return view_; }
  const ViewTransform& view() const { return view_; }
  Options& options() { return options_; }
  // The last message for the user: a refused link and why, a failed paste...
  const std::string& status() const { return status_; }
  const FrameStats& stats() const { return stats_; }
  const GraphGeometry& geometry() const { return geo_; }
  const SearchPalette& palette() const { return palette_; }
  bool help_open() const { return help_open_; }
  void set_help_open(bool open) { help_open_ = open; }

  // What is wrong with a node of the graph shown: the app's diagnostics and, with
  // live_problems, type inference's ("pin: message" when about one pin).
  // Compiler notes on a node (how its loop runs), for tests and tooltips.
  std::vector<std::string> notes(int node) const {
    auto it = notes_.find(node);
    return it == notes_.end() ? std::vector<std::string>{} : it->second;
  }
  std::vector<std::string> problems(int node) const {
    auto it = problems_.find(node);
    return it == problems_.end() ? std::vector<std::string>{} : it->second;
  }

  // Screen positions of what is on the canvas (tests drive the mouse with them).
  std::optional<ImVec2> node_screen_pos(int id) const;
  std::optional<ImVec2> pin_screen_pos(const PinRef& pin, bool output) const;
  std::optional<ImVec2> link_screen_point(const PinRef& input, float t = 0.5f) const;
  std::optional<ImVec2> zone_screen_pos(const RegionRef& region) const;
  // The centre of the value editor's text field `name` as last drawn (nullopt: not shown).
  std::optional<ImVec2> value_field_screen_pos(const std::string& name) const;
  // The output pin under the mouse in the last frame (nothing dragged), if any.
  std::optional<PinRef> hovered_output() const;
  // The middle of an unlinked input's label on its node, where a click edits its value in
  // place and a horizontal drag scrubs a number (nullopt: linked, collapsed or not shown).
  std::optional<ImVec2> input_value_screen_pos(const PinRef& input) const;
  // The input whose value is being typed on its node (node -1: none).
  const PinRef& inline_edit() const { return inline_pin_; }
  // The minimap's screen rectangle (nullopt: not shown).
  std::optional<Rect> minimap_screen_rect() const;
  ImVec2 canvas_screen_origin() const { return view_.origin; }
  ImVec2 canvas_screen_size() const { return size_; }

 private:
  enum class Mode { Idle, Pan, Box, MoveNodes, Link, ResizeComment, Minimap, Value };
  enum class Frame { None, All, Selection, Node };
  struct Hit {
    enum class Kind {
      None,
      Pin,
      Node,
      Zone,
      Comment,
      CommentResize,
      Link,
      Minimap,
      Breadcrumb,
      Value  // an unlinked input's label: `node`, `pin` (an input)
    } kind = Kind::None;
    int node = -1, pin = -1, link = -1, zone = -1, comment = -1;
    bool output = false;
  };
  struct Menu {
    Hit hit;
    Vec2 at;
  };

  // node_canvas.cpp
  void sync(EditorDocument& doc);
  void apply_pending_frame();
  Rect visible_rect() const;
  ImFont* font_for(float units) const;
  float measure(const std::string& text) const;
  const graph::GraphLayout* layout(const EditorDocument& doc) const;
  std::vector<std::string> problems_of(int node_index) const;
  void select_only(EditorDocument& doc, std::vector<int> nodes, std::vector<size_t> comments = {});
  RegionRef region_at(Vec2 p) const;
  void open_palette(EditorDocument& doc, Vec2 at, ImVec2 screen, bool link);
  void apply_choice(EditorDocument& doc, const SearchPalette::Choice& choice);
  // Where a new node of size w x h asked for at `at` goes so that all of it is on screen and
  // none of it under the minimap.
  Vec2 clear_spot(Vec2 at, float w, float h) const;

  // The minimap's screen rectangle and its mapping to canvas units.
  struct Minimap {
    bool shown = false;
    Rect screen, world;
    float scale = 1;
    ImVec2 to_screen(Vec2 p) const {
      return ImVec2(screen.x0 + (p.x - world.x0) * scale, screen.y0 + (p.y - world.y0) * scale);
    }
    Vec2 to_world(ImVec2 s) const {
      return Vec2{world.x0 + (s.x - screen.x0) / scale, world.y0 + (s.y - screen.y0) / scale};
    }
  };
  Minimap minimap() const;
  // Screen rectangles of the breadcrumb's segments.
  std::vector<Rect> crumb_rects() const;
  std::string crumb_text(size_t i) const;

  // canvas_input.cpp
  Hit hit_test(ImVec2 screen) const;
  void handle_mouse(EditorDocument& doc);
  // handle_mouse's steps; a bool step is true when the frame's mouse work ends there.
  // `cm`: the mouse in canvas units, taken before this frame's wheel zoom.
  bool zoom_and_pan(ImVec2 mouse, Vec2 cm);
  bool press_left(EditorDocument& doc, ImVec2 mouse);
  void begin_press(EditorDocument& doc);
  void press_node(EditorDocument& doc);
  void press_comment(EditorDocument& doc);
  void follow_drag(EditorDocument& doc, ImVec2 mouse, Vec2 cm);
  void drag_minimap(ImVec2 mouse, bool released);
  void drag_nodes(EditorDocument& doc, bool released);
  void drag_box(EditorDocument& doc, Vec2 cm, bool released);
  void drag_value(EditorDocument& doc, bool released);
  void drag_link(EditorDocument& doc, Vec2 cm, bool released);
  void drag_comment_corner(EditorDocument& doc, ImVec2 mouse, bool released);
  void handle_keyboard(EditorDocument& doc);
  void begin_move(EditorDocument& doc, const Hit& hit);
  void update_move(EditorDocument& doc);
  void end_move(EditorDocument& doc);
  int drop_zone() const;
  void begin_link(EditorDocument& doc, const Hit& hit);
  void end_link(EditorDocument& doc);
  const LinkCheck& checked(EditorDocument& doc, const PinRef& from, const PinRef& to);
  // Acts on a double-click; false when `hit` has no double-click action (a plain click then).
  bool double_click(EditorDocument& doc, const Hit& hit);
  void delete_selection(EditorDocument& doc);
  void copy_selection(EditorDocument& doc);
  void paste(EditorDocument& doc);
  void comment_around_selection(EditorDocument& doc);
  // H: collapses the selected nodes, or expands them when all are collapsed.
  void toggle_collapse(EditorDocument& doc);
  // The label of input `pin` of node index `node` (canvas units); empty when it takes no value
  // there (linked, collapsed, labels too small to see).
  Rect value_rect(int node, int pin) const;
  void update_scrub(EditorDocument& doc);
  void end_scrub(EditorDocument& doc, bool cancel);
  // canvas_draw.cpp
  void draw(EditorDocument& doc);
  void draw_grid(ImDrawList* dl) const;
  void draw_comments(ImDrawList* dl, const EditorDocument& doc) const;
  void draw_zones(ImDrawList* dl);
  void draw_links(ImDrawList* dl, const EditorDocument& doc);
  void draw_nodes(ImDrawList* dl, const EditorDocument& doc);
  void draw_node(ImDrawList* dl, const EditorDocument& doc, int index, bool selected);
  void draw_drag(ImDrawList* dl, EditorDocument& doc);
  void draw_breadcrumb(ImDrawList* dl, EditorDocument& doc);
  void draw_minimap(ImDrawList* dl, const EditorDocument& doc);
  // Text at canvas point `at`, `units` tall (at least `min_px` pixels); clipped at canvas x
  // `right` when given.
  void draw_text(ImDrawList* dl, Vec2 at, float units, ImU32 color, const std::string& text,
                 float right = 0, float min_px = 0) const;
  void tooltips(EditorDocument& doc);

  // canvas_menus.cpp
  void open_value_editor(EditorDocument& doc, int node);
  void draw_value_editor(EditorDocument& doc);
  void draw_function_renamer(EditorDocument& doc);
  void new_function(EditorDocument& doc);
  void open_menu(const Hit& hit, Vec2 at);
  void draw_menus(EditorDocument& doc);
  void draw_help();
  void draw_comment_editor(EditorDocument& doc);
  void open_inline_editor(EditorDocument& doc, const PinRef& pin);
  void draw_inline_editor(EditorDocument& doc);
  void commit_inline(EditorDocument& doc);
  const CanvasFonts* fonts_;
  Options options_;
  ViewTransform view_;
  ImVec2 size_{0, 0};
  bool hovered_ = false, focused_ = false;
  bool keys_ = false;  // the keyboard is the canvas's: the mouse is over it (Blender's rule)
  std::vector<GraphRef> crumbs_;
  GraphRef none_;
  std::string status_;
  FrameStats stats_;

  // Caches keyed by document revisions.
  const EditorDocument* doc_seen_ = nullptr;
  uint64_t shape_rev_ = ~0ull, place_rev_ = ~0ull;
  uint64_t problems_diag_rev_ = ~0ull, problems_logic_rev_ = ~0ull;
  GraphRef geo_graph_;
  GraphGeometry geo_;
  std::map<int, std::vector<std::string>> problems_;  // node id -> messages
  std::set<int> erring_;  // nodes with an error among their problems (else only warnings)
  std::map<int, std::vector<std::string>> notes_;  // node id -> compiler notes (Severity::Note)
  std::vector<int> visible_nodes_, visible_links_;

  // Interaction.
  Mode mode_ = Mode::Idle;
  Hit press_;
  Hit hover_;  // what is under the mouse while nothing is dragged (drawn highlighted)
  ImVec2 press_screen_{0, 0};
  bool dragging_ = false;
  bool press_was_selected_ = false;
  bool right_down_ = false;
  bool space_used_ = false;
  std::vector<std::pair<int, Vec2>> move_nodes_;  // start positions
  std::vector<std::pair<size_t, graph::CommentFrame>> move_comments_;
  int move_zone_target_ = -1;
  PinRef anchor_;
  bool anchor_output_ = true;
  PinRef picked_up_;                         // a link lifted off this input (node -1: none)
  std::optional<graph::Document> detached_;  // the document without the lifted link
  std::optional<graph::GraphTypes> detached_types_;
  std::map<std::string, LinkCheck> checks_;
  uint64_t checks_rev_ = ~0ull;
  PinRef link_target_;
  bool link_has_target_ = false;

  Frame pending_frame_ = Frame::None;
  int pending_node_ = -1;
  bool pending_select_ = false;

  SearchPalette palette_;
  std::optional<Menu> menu_;
  bool menu_requested_ = false;
  bool help_open_ = false;
  graph::CommentFrame resize_start_;
  struct EditField {
    std::string name;
    bool param = false;
    bool linked = false;
    std::string text, error;
    ImVec2 center{-1, -1};  // on screen, as last drawn
  };
  int editing_node_ = -1;
  float value_editor_height_ =
      200;  // last frame's (the editor is kept on screen)  // the value editor's node
  std::vector<EditField> edit_fields_;
  bool edit_focus_ = false;
  int edit_opened_frame_ = -1;
  int edit_opening_ = 0;  // counts openings: each one's fields get fresh ImGui ids
  bool renaming_function_ = false;
  std::string function_name_;
  int comment_editing_ = -1;
  std::string comment_title_;
  bool comment_focus_ = false;
  // Typing a value on the node, and scrubbing one by dragging.
  PinRef inline_pin_;
  std::string inline_text_;
  bool inline_focus_ = false;
  int inline_opened_frame_ = -1;
  int inline_opening_ = 0;
  bool scrubbing_ = false;
  bool scrub_int_ = false;
  double scrub_start_ = 0, scrub_step_ = 1;
};

}  // namespace loom::editor
