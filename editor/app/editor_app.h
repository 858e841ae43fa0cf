// The editor without its window: the document and its undo history, the node canvas, the
// live session, the panels and the viewport, tiled in one ImGui frame with a menu bar and a
// status bar. main.cpp (GLFW, Vulkan) and the tests (headless ImGui, an offscreen frame loop)
// drive it the same way, once per frame:
//
//   ImGui::NewFrame(); app.frame(); ImGui::Render();
//   loop.begin_frame(&f); app.render_scene(scene, f); /* ImGui draw data */ loop.end_frame();
#pragma once

#include <imgui.h>

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "editor/app/live_session.h"
#include "editor/app/optimise_panel.h"
#include "editor/app/panels.h"
#include "editor/app/probe_runner.h"
#include "editor/app/program_panel.h"
#include "editor/app/spreadsheet_panel.h"
#include "editor/app/viewport.h"
#include "editor/canvas/canvas_fonts.h"
#include "editor/canvas/node_canvas.h"
#include "editor/model/editor_document.h"

namespace loom::render {
class SceneRenderer;
struct Frame;
}  // namespace loom::render

namespace loom::editor {

// The editor's kernels run with bounds checks and assertions (ProgramOptions::debug): a
// mistake made while authoring is an error on its node, not memory overwritten (CPU) or a
// store dropped (Vulkan). Run › Bounds checks turns them off for speed.
inline ProgramOptions editor_program_options() {
  ProgramOptions o;
  o.debug = true;
  return o;
}

struct EditorOptions {
  ProgramOptions program = editor_program_options();
  const CanvasFonts* fonts = nullptr;  // crisp canvas text; ImGui's default font without
  bool hide_timings = false;           // print times as "--" (reproducible screenshots)
  // Backend key codes (io.KeysDown) of the app's shortcuts; the defaults are GLFW's.
  struct Keys {
    int n = 'N', o = 'O', s = 'S', q = 'Q', z = 'Z', y = 'Y', f = 'F', space = ' ';
    int f1 = 290, f5 = 294, f6 = 295, f7 = 296, escape = 256;
  } keys;
};

class EditorApp {
 public:
  explicit EditorApp(EditorOptions options);
  ~EditorApp();
  EditorApp(const EditorApp&) = delete;
  EditorApp& operator=(const EditorApp&) = delete;

  // Opens a document file; false (the reason logged and shown) when it does not read. A
  // newer recovery file of it is offered in a prompt. A document that reads but does not
  // compile opens for editing, its errors on the nodes.
  bool open(const std::string& path);
  // A new untitled document: the starter program (editor/model/starter_program.h).
  void new_document();
  // File › New: asks to save first when there are unsaved edits (a prompt), else new_document().
  void request_new();
  // Writes the document canonically (and forgets the recovery file); false with the reason
  // logged when it cannot. save() without a path opens the Save As prompt.
  bool save();
  bool save_as(const std::string& path);

  // One frame of the UI, between ImGui::NewFrame() and ImGui::Render(): the live session's
  // frame boundary (hot reload, one step when playing), then every panel.
  void frame();
  // The viewport's scene, inside the frame's render pass before the UI's draw data.
  void render_scene(render::SceneRenderer& scene, const render::Frame& frame);

  // Closing: asks to save first when there are unsaved edits (a prompt); quit() is true
  // once the user agreed (or nothing was unsaved).
  void request_quit();
  bool quit() const { return quit_; }
  // "heat.loom.json* - Loom": the window title, '*' while unsaved.
  std::string title() const;

  EditorDocument& document() { return doc_; }
  LiveSession& session() { return session_; }
  NodeCanvas& canvas() { return canvas_; }
  ViewportPanel& viewport() { return viewport_; }
  void set_probe(bool on) { probe_on_ = on; }  // View › Probe the selected node
  const ProbeValues& probe() const { return probe_.last(); }
  const PanelState& panels() const { return panels_; }
  ProgramPanel& program_panel() { return program_panel_; }
  SpreadsheetPanel& spreadsheet() { return spreadsheet_; }
  OptimisePanel& optimise_panel() { return optimise_; }
  const std::string& path() const { return path_; }
  // A prompt waiting for an answer ("recover", "save-before-quit", "save-before-new", "save-as",
  // "open"; "" none).
  const std::string& prompt() const { return prompt_; }
  void answer_prompt(
      const std::string& choice);  // "recover"/"discard", "save"/"don't save"/"cancel"

  // Screen rectangles of named controls in the last frame (tests click them):
  // "viewport.play", "viewport.step", "viewport.reset", "viewport.show", "viewport.show.<i>",
  // "viewport.save-default", "tab.Code", "tab.Spreadsheet", "tab.Optimise",
  // "optimise.<control>" (OptimisePanel::controls), "panel.<window name>",
  // "program.kernel.<name>", "program.function.<name>", "prompt.<choice>", "find.query",
  // "find.match.<i>".
  std::optional<ControlRect> control(const std::string& name) const;

 private:
  struct Tiles {                        // fractions of the tiled layout, moved by dragging the gaps
    float left = 0.19f, right = 0.36f;  // column widths (of the window)
    float program = 0.68f;              // left column: the program over the parameters
    float graph = 0.70f;                // middle column
    float viewport = 0.58f;             // right column
  };
  void shortcuts();
  void menu_bar();
  void status_bar(float height);
  void layout_windows(float top, float bottom);
  void splitters(float top, float bottom);
  void prompts();
  void sync_session();
  void sync_view();
  void record(const std::string& name);
  void set_document(graph::Document doc, const std::string& path);
  void focus(const Place& place);
  void draw_graph_window();
  void update_probe();
  void open_find();
  void find_window();
  void accept_declaration_drop();
  void make_drop_node(const std::string& type);

  EditorOptions options_;
  EditorDocument doc_;
  NodeCanvas canvas_;
  LiveSession session_;
  PanelState panels_;
  ProgramPanel program_panel_;
  ViewportPanel viewport_;
  SpreadsheetPanel spreadsheet_;
  OptimisePanel optimise_;
  ViewportTimes times_;
  double compile_total_ = 0;  // the program's compile time so far (its stats)
  std::string path_;
  uint64_t revision_sent_ = 0;   // the document revision the session has
  std::string error_shown_;      // the session error already put on the nodes
  uint64_t warnings_shown_ = 0;  // the session's warnings_version() already on the nodes
  Tiles tiles_;
  int dragging_splitter_ = -1;
  bool graph_maximized_ = false;
  ProbeRunner probe_;  // View › Probe: the selected node's values in the viewport
  bool probe_on_ = false;
  std::string probe_key_;              // what probe_ last ran for
  std::optional<PinRef> hovered_pin_;  // the output pin under the mouse, and since when
  Clock::time_point hovered_since_{};
  uint64_t probe_version_ = 0;
  bool find_open_ = false, find_focus_ = false;  // the Ctrl+F box
  std::string find_query_;
  int find_highlight_ = 0;
  std::string prompt_;
  std::string recovery_path_;
  std::string path_input_;
  std::string browse_dir_;  // the folder the Open and Save As prompts list
  bool quit_ = false;
  bool quit_after_save_ = false;
  bool new_after_save_ = false;
  Clock::time_point last_frame_{};
  std::string status_text_;  // the canvas message on the status bar, and since when
  Clock::time_point status_since_{};
  std::map<std::string, ControlRect> controls_;
  struct DeclDrop {  // a declaration dropped on the canvas, waiting for the node to make
    DeclKind kind = DeclKind::Field;
    std::string name;
    Vec2 at;
    RegionRef region;
  };
  DeclDrop pending_drop_;
};

}  // namespace loom::editor
