#include "editor/app/editor_app.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <utility>

#include <imgui_internal.h>

#include "compiler/graph/document_json.h"
#include "editor/app/file_browser.h"
#include "editor/app/view_data.h"
#include "editor/model/declarations.h"
#include "editor/model/diagnostics.h"
#include "editor/model/graph_search.h"
#include "editor/model/operations.h"
#include "editor/model/starter_program.h"
#include "runtime/common/error.h"

namespace loom::editor {

namespace fs = std::filesystem;

namespace {

constexpr float kGap = 4.0f;  // between tiled panels: the splitters
// Tiled panels draw no background of their own: the frame is cleared to the panel colour
// (EditorHost), which spares the rasteriser a full-screen layer (lavapipe is fill bound).
constexpr ImGuiWindowFlags kTiled = ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize |
                                    ImGuiWindowFlags_NoCollapse | ImGuiWindowFlags_NoSavedSettings |
                                    ImGuiWindowFlags_NoBringToFrontOnFocus |
                                    ImGuiWindowFlags_NoBackground;

double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

// Exponential smoothing for numbers printed every frame.
double smooth(double old_value, double sample) {
  return old_value <= 0 ? sample : old_value * 0.9 + sample * 0.1;
}

bool key_pressed(int key) { return key >= 0 && key < 512 && ImGui::IsKeyPressed(key, false); }

}  // namespace

EditorApp::EditorApp(EditorOptions options)
    : options_(std::move(options)), canvas_(options_.fonts), session_(options_.program) {
  panels_.edit = [this](graph::Document after) {
    replace_document(doc_, std::move(after), "Edit value");
  };
  panels_.begin_edit = [this](const std::string& label) { doc_.begin_group(label); };
  panels_.end_edit = [this] {
    if (doc_.in_group()) doc_.end_group();
  };
  panels_.focus = [this](const Place& place) { focus(place); };
  panels_.show_graph = [this](const std::string& name, bool function) {
    canvas_.show(GraphRef{name, function});
  };
  // Choosing what the viewport shows is for this session (viewport_.choose, no edit); the
  // Show menu's "Save as the default view" writes the document's view, an undoable edit.
  viewport_.on_save_default = [this](const graph::ViewSettings& view) {
    if (doc_.doc().view == view) return;
    graph::Document after = doc_.doc();
    after.view = view;
    replace_document(doc_, std::move(after), "Show " + view_label(view) + " by default");
  };
  // An untitled document until one is opened; it starts running at the first frame.
  set_document(starter_program(), "");
  session_.edit(doc_.doc());
}

EditorApp::~EditorApp() = default;

// ---------------------------------------------------------------- documents

void EditorApp::set_document(graph::Document doc, const std::string& path) {
  path_ = path;
  doc_.replace(std::move(doc));
  canvas_.show(GraphRef{});
  if (!doc_.doc().kernels.empty()) canvas_.show(GraphRef{doc_.doc().kernels.front().name, false});
  canvas_.frame_all();
  revision_sent_ = doc_.revision();
  error_shown_.clear();
  viewport_.set_view(default_view(doc_.doc()));
  viewport_.fit();
  panels_.selected_kernel.clear();
  panels_.code_key.clear();
}

bool EditorApp::open(const std::string& path) {
  try {
    session_.open_file(path);
  } catch (const Error& e) {
    session_.note(LogEntry::Level::Error, e.what(), e.place());
    return false;
  }
  set_document(session_.document(), path);
  if (session_.error()) focus(session_.error()->place());  // opened broken: show where
  recovery_path_ = LiveSession::recovery_for(path);
  if (!recovery_path_.empty()) {
    // Only a recovery file that differs from the document is worth asking about.
    bool same = false;
    try {
      same = graph::save_document(graph::load_document_file(recovery_path_)) == doc_.save_text();
    } catch (const Error&) {
      same = false;  // unreadable: the prompt says so when the user tries it
    }
    if (same) {
      std::error_code ec;
      fs::remove(recovery_path_, ec);
      recovery_path_.clear();
    } else {
      prompt_ = "recover";
    }
  }
  return true;
}

void EditorApp::request_new() {
  if (doc_.dirty())
    prompt_ = "save-before-new";
  else
    new_document();
}

void EditorApp::new_document() {
  graph::Document doc = starter_program();
  session_.open(doc);
  set_document(std::move(doc), "");
}

bool EditorApp::save() {
  if (path_.empty()) {
    prompt_ = "save-as";
    path_input_ = "untitled.loom.json";
    return false;
  }
  return save_as(path_);
}

bool EditorApp::save_as(const std::string& path) {
  try {
    session_.save(doc_.doc(), path);
  } catch (const Error& e) {
    session_.note(LogEntry::Level::Error, e.what(), e.place());
    return false;
  }
  path_ = path;
  doc_.mark_saved();
  return true;
}

void EditorApp::request_quit() {
  if (doc_.dirty())
    prompt_ = "save-before-quit";
  else
    quit_ = true;
}

std::string EditorApp::title() const {
  std::string name = path_.empty() ? "untitled" : fs::path(path_).filename().string();
  return name + (doc_.dirty() ? "*" : "") + " - Loom";
}

std::optional<ControlRect> EditorApp::control(const std::string& name) const {
  auto it = controls_.find(name);
  if (it != controls_.end()) return it->second;
  if (name.rfind("program.", 0) == 0) {
    auto p = panels_.controls.find(name.substr(8));
    if (p != panels_.controls.end()) return p->second;
  }
  if (name.rfind("optimise.", 0) == 0) {
    auto o = optimise_.controls().find(name.substr(9));
    if (o != optimise_.controls().end()) return o->second;
  }
  if (name.rfind("viewport.", 0) == 0) {
    auto v = viewport_.controls().find(name.substr(9));
    if (v != viewport_.controls().end()) return v->second;
  }
  return std::nullopt;
}

void EditorApp::focus(const Place& place) {
  if (place.node < 0 || place.kernel.empty()) return;
  canvas_.focus(GraphRef{place.kernel, place.function}, place.node);
}

// ---------------------------------------------------------------- the frame

void EditorApp::frame() {
  Clock::time_point now = Clock::now();
  if (last_frame_ != Clock::time_point{})
    times_.frame_ms = smooth(times_.frame_ms, ms_between(last_frame_, now));
  last_frame_ = now;

  // The frame boundary: edits of the last frame land, the program steps.
  FrameTimes t = session_.frame();
  if (t.step_ms > 0) times_.kernel_ms = smooth(times_.kernel_ms, t.step_ms);
  // Compile time: the reload's, or what compiling took this frame (kernels compile when
  // first launched, so an opened document shows its first compile).
  double compiled = 0;
  if (session_.has_program()) {
    const Stats& st = session_.program().stats();
    compiled = st.ms_lower + st.ms_passes + st.ms_codegen + st.ms_optimize + st.ms_emit +
               st.ms_cache_read + st.ms_load;
  }
  if (t.reload_ms > 0)
    times_.compile_ms = t.reload_ms;
  else if (compiled > compile_total_ + 1e-6)
    times_.compile_ms = compiled - compile_total_;
  compile_total_ = compiled;
  if (t.latency_ms >= 0) times_.latency_ms = t.latency_ms;
  if (std::optional<graph::Document> outside = session_.take_external_change()) {
    // The file changed on disk: the editor shows it, as one undoable step, and it is saved.
    replace_document(doc_, std::move(*outside), "Change on disk");
    doc_.mark_saved();
    revision_sent_ = doc_.revision();  // the session already runs it
    session_.forget_unsaved();
  }
  // Compile and run errors go on the nodes, and the running program's warnings (likely
  // mistakes, docs/porting-from-taichi.md) and notes (how each loop runs); a good reload
  // clears the errors.
  std::string error = session_.error() ? session_.error()->what() : "";
  if (error != error_shown_ || session_.warnings_version() != warnings_shown_) {
    error_shown_ = error;
    warnings_shown_ = session_.warnings_version();
    std::vector<Diagnostic> d;
    if (session_.error()) d.push_back(diagnostic_from(*session_.error()));
    for (const Program::Warning& w : session_.warnings())
      d.push_back(diagnostic_from(Error(w.place, w.message), Diagnostic::Severity::Warning));
    doc_.set_diagnostics(std::move(d));
    std::vector<Diagnostic> notes;
    for (const Program::TaskNote& n : session_.task_notes()) {
      Diagnostic note = diagnostic_from(Error(n.place, n.text), Diagnostic::Severity::Note);
      if (std::find(notes.begin(), notes.end(), note) == notes.end())
        notes.push_back(std::move(note));
    }
    doc_.set_notes(std::move(notes));
  }

  shortcuts();
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  float menu_h = ImGui::GetFrameHeight();
  float status_h = ImGui::GetFrameHeight();
  menu_bar();
  layout_windows(vp->Pos.y + menu_h, vp->Pos.y + vp->Size.y - status_h);
  status_bar(status_h);
  splitters(vp->Pos.y + menu_h, vp->Pos.y + vp->Size.y - status_h);
  prompts();
  find_window();
  update_probe();
  sync_view();
  sync_session();
}

void EditorApp::render_scene(render::SceneRenderer& scene, const render::Frame& frame) {
  viewport_.render(session_, scene, frame);
}

// Every change of the document (the canvas, the panels, undo) goes to the session, which
// recompiles at the next frame boundary when the program changed.
void EditorApp::sync_session() {
  if (doc_.revision() == revision_sent_) return;
  revision_sent_ = doc_.revision();
  // An edit while a frame is stuck (the fix, or an undo) stops it: the edit runs next.
  if (session_.stuck()) session_.stop();
  session_.edit(doc_.doc());
  // Back at the saved document (undone to it): no recovery file is kept for it.
  if (!doc_.dirty()) session_.forget_unsaved();
}

void EditorApp::sync_view() {
  graph::ViewSettings v = doc_.doc().view.empty() ? default_view(doc_.doc()) : doc_.doc().view;
  viewport_.set_view(v);
}

void EditorApp::shortcuts() {
  const ImGuiIO& io = ImGui::GetIO();
  if (!prompt_.empty()) return;
  const EditorOptions::Keys& k = options_.keys;
  bool ctrl = io.KeyCtrl, shift = io.KeyShift;
  if (ctrl && key_pressed(k.s))
    shift ? (void)(prompt_ = "save-as", path_input_ = path_) : (void)save();
  if (ctrl && key_pressed(k.o)) prompt_ = "open", path_input_ = path_;
  if (ctrl && key_pressed(k.n)) request_new();
  if (ctrl && key_pressed(k.q)) request_quit();
  if (ctrl && key_pressed(k.f)) open_find();
  if (io.WantTextInput) return;
  if (ctrl && key_pressed(k.space)) graph_maximized_ = !graph_maximized_;
  // Undo and redo wherever the edit was made (a panel, the viewport); the canvas takes them
  // itself while it has the focus.
  const ImGuiWindow* focused = GImGui->NavWindow ? GImGui->NavWindow->RootWindow : nullptr;
  bool canvas_focused = focused && std::strstr(focused->Name, "###Graph");
  if (ctrl && !canvas_focused && !ImGui::IsPopupOpen(nullptr, ImGuiPopupFlags_AnyPopupId)) {
    if (key_pressed(k.z)) shift ? doc_.redo() : doc_.undo();
    if (key_pressed(k.y)) doc_.redo();
  }
  if (key_pressed(k.f5)) session_.playing() ? session_.pause() : session_.play();
  if (key_pressed(k.f6)) session_.step_once();
  if (key_pressed(k.f7)) session_.reset();
  if (session_.stuck() && key_pressed(k.escape)) session_.stop();
}

void EditorApp::menu_bar() {
  if (!ImGui::BeginMainMenuBar()) return;
  if (ImGui::BeginMenu("File")) {
    if (ImGui::MenuItem("New", "Ctrl+N")) request_new();
    if (ImGui::MenuItem("Open...", "Ctrl+O")) prompt_ = "open", path_input_ = path_;
    if (ImGui::MenuItem("Save", "Ctrl+S")) save();
    if (ImGui::MenuItem("Save As...", "Ctrl+Shift+S")) prompt_ = "save-as", path_input_ = path_;
    ImGui::Separator();
    if (ImGui::MenuItem("Quit", "Ctrl+Q")) request_quit();
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("Edit")) {
    std::string undo = "Undo " + doc_.undo_label(), redo = "Redo " + doc_.redo_label();
    if (ImGui::MenuItem(undo.c_str(), "Ctrl+Z", false, doc_.can_undo())) doc_.undo();
    if (ImGui::MenuItem(redo.c_str(), "Ctrl+Shift+Z", false, doc_.can_redo())) doc_.redo();
    ImGui::Separator();
    if (ImGui::MenuItem("Find...", "Ctrl+F")) open_find();
    if (ImGui::MenuItem("Frame all", "Home")) canvas_.frame_all();
    if (ImGui::MenuItem("Frame selection", "F")) canvas_.frame_selection();
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("View")) {
    ImGui::MenuItem("Grid", nullptr, &canvas_.options().grid);
    ImGui::MenuItem("Minimap", nullptr, &canvas_.options().minimap);
    ImGui::MenuItem("Live type problems", nullptr, &canvas_.options().live_problems);
    ImGui::MenuItem("Probe the selected node", nullptr, &probe_on_);
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip(
          "The viewport shows the selected node's values for every thread of its kernel\n"
          "(an output pin the mouse rests on is shown whether this is on or not)");
    ImGui::Separator();
    if (ImGui::MenuItem("Fit the viewport")) viewport_.fit();
    if (ImGui::MenuItem("Maximise the graph", "Ctrl+Space", graph_maximized_))
      graph_maximized_ = !graph_maximized_;
    if (ImGui::MenuItem("Reset the panel layout")) tiles_ = Tiles{}, graph_maximized_ = false;
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("Run")) {
    bool can = session_.has_program() || session_.frame_in_flight();
    if (ImGui::MenuItem(session_.playing() ? "Pause" : "Play", "F5", false, can))
      session_.playing() ? session_.pause() : session_.play();
    if (ImGui::MenuItem("Step", "F6", false, can)) session_.step_once();
    if (ImGui::MenuItem("Reset", "F7", false, can)) session_.reset();
    if (ImGui::MenuItem("Stop", "Esc", session_.stuck(), session_.frame_in_flight()))
      session_.stop();
    bool checks = session_.bounds_checks();
    if (ImGui::MenuItem("Bounds checks", nullptr, &checks)) session_.set_bounds_checks(checks);
    if (ImGui::MenuItem("Optimise...")) optimise_.select_tab = true;
    ImGui::Separator();
    ImGui::TextDisabled("backend: %s",
                        session_.has_program() ? session_.program().device_name().c_str() : "none");
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("Help")) {
    if (ImGui::MenuItem("Canvas shortcuts", "F1")) canvas_.set_help_open(true);
    ImGui::EndMenu();
  }
  ImGui::EndMainMenuBar();
}

void EditorApp::status_bar(float height) {
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos(ImVec2(vp->Pos.x, vp->Pos.y + vp->Size.y - height));
  ImGui::SetNextWindowSize(ImVec2(vp->Size.x, height));
  ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, ImVec2(8, 2));
  ImGui::PushStyleVar(ImGuiStyleVar_WindowRounding, 0);
  ImGui::Begin("##status", nullptr,
               kTiled | ImGuiWindowFlags_NoTitleBar | ImGuiWindowFlags_NoScrollbar);
  // The canvas's last message (a refused link...) shows for a few seconds, not until the next.
  std::string left = canvas_.status();
  if (left != status_text_) status_text_ = left, status_since_ = Clock::now();
  if (Clock::now() - status_since_ > std::chrono::seconds(6)) left.clear();
  if (session_.error()) {
    left = session_.error()->what();
    if (left.rfind("<memory>: ", 0) == 0) left.erase(0, 10);  // an untitled document
    left = "error: " + left;
  }
  ImGui::TextUnformatted(left.empty() ? "Ready" : left.c_str());
  std::string right = (path_.empty() ? std::string("untitled") : path_) +
                      (doc_.dirty() ? "  (unsaved)" : "  (saved)");
  float w = ImGui::CalcTextSize(right.c_str()).x;
  ImGui::SameLine(std::max(ImGui::GetWindowWidth() - w - 10, 200.0f));
  ImGui::TextUnformatted(right.c_str());
  ImGui::End();
  ImGui::PopStyleVar(2);
}

void EditorApp::record(const std::string& name) {
  ImVec2 a = ImGui::GetWindowPos(), s = ImGui::GetWindowSize();
  controls_["panel." + name] = ControlRect{a.x, a.y, a.x + s.x, a.y + s.y};
}

// The panels tiled in three columns: the program and the parameters on the left; the
// graph and the log in the middle; the viewport and the code on the right.
void EditorApp::layout_windows(float top, float bottom) {
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  float x0 = vp->Pos.x, width = vp->Size.x, height = std::max(bottom - top, 50.0f);
  float lw = std::round(width * tiles_.left), rw = std::round(width * tiles_.right);
  float mx = x0 + lw + kGap, mw = std::max(width - lw - rw - 2 * kGap, 50.0f), rx = x0 + width - rw;
  auto place = [](float x, float y, float w, float h) {
    ImGui::SetNextWindowPos(ImVec2(x, y));
    ImGui::SetNextWindowSize(ImVec2(std::max(w, 10.0f), std::max(h, 10.0f)));
  };
  auto rows = [](float h, float frac) { return std::round((h - kGap) * frac); };
  if (graph_maximized_) {  // Ctrl+Space: the graph alone, as Blender's maximised area
    place(x0, top, width, height);
    draw_graph_window();
    return;
  }

  // Left column: two rows.
  panels_.window_flags = kTiled;
  // The program panel highlights the graph on the canvas; the code view follows its kernel.
  const GraphRef& root =
      canvas_.breadcrumb().empty() ? canvas_.graph() : canvas_.breadcrumb().front();
  if (root.name != panels_.shown_graph || root.function != panels_.shown_function) {
    panels_.shown_graph = root.name;
    panels_.shown_function = root.function;
    if (!root.function && !root.name.empty()) panels_.selected_kernel = root.name;
  }
  panels_.document = &doc_.doc();
  float h1 = rows(height, tiles_.program);
  place(x0, top, lw, h1);
  program_panel_.draw(doc_, session_, panels_);
  place(x0, top + h1 + kGap, lw, height - h1 - kGap);
  draw_parameters_panel(session_, panels_);

  // Middle column: the graph over the log.
  float gh = rows(height, tiles_.graph);
  place(mx, top, mw, gh);
  draw_graph_window();
  place(mx, top + gh + kGap, mw, height - gh - kGap);
  draw_log_panel(session_, panels_);

  // Right column: the viewport over the code.
  float vh = rows(height, tiles_.viewport);
  place(rx, top, rw, vh);
  ViewportTimes shown = times_;
  if (options_.hide_timings) shown = ViewportTimes{-1, -1, -1, -1};
  viewport_.window_flags = kTiled;
  viewport_.draw(session_, shown);
  // Under it, Code, Spreadsheet and Optimise as tabs: a strip of tabs over the chosen panel.
  float tabs_h = ImGui::GetFrameHeight() + 2;
  place(rx, top + vh + kGap, rw, tabs_h);
  ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, ImVec2(4, 2));
  ImGui::Begin("##right tabs", nullptr,
               kTiled | ImGuiWindowFlags_NoTitleBar | ImGuiWindowFlags_NoScrollbar);
  bool spreadsheet_tab = false, optimise_tab = false;
  if (ImGui::BeginTabBar("##code or spreadsheet")) {
    if (ImGui::BeginTabItem("Code")) ImGui::EndTabItem();
    controls_["tab.Code"] = ControlRect::last_item();
    ImGuiTabItemFlags select = spreadsheet_.select_tab ? ImGuiTabItemFlags_SetSelected : 0;
    spreadsheet_.select_tab = false;
    if (ImGui::BeginTabItem("Spreadsheet", nullptr, select))
      spreadsheet_tab = true, ImGui::EndTabItem();
    controls_["tab.Spreadsheet"] = ControlRect::last_item();
    select = optimise_.select_tab ? ImGuiTabItemFlags_SetSelected : 0;
    optimise_.select_tab = false;
    if (ImGui::BeginTabItem("Optimise", nullptr, select)) optimise_tab = true, ImGui::EndTabItem();
    controls_["tab.Optimise"] = ControlRect::last_item();
    ImGui::EndTabBar();
  }
  ImGui::End();
  ImGui::PopStyleVar();
  place(rx, top + vh + kGap + tabs_h, rw, height - vh - kGap - tabs_h);
  if (spreadsheet_tab) {
    spreadsheet_.draw(session_, viewport_.view(), kTiled | ImGuiWindowFlags_NoTitleBar);
  } else if (optimise_tab) {
    optimise_.draw(session_, panels_, kTiled | ImGuiWindowFlags_NoTitleBar);
  } else {
    panels_.window_flags = kTiled | ImGuiWindowFlags_NoTitleBar;
    draw_code_panel(session_, panels_);
    panels_.window_flags = kTiled;
  }
}

// ---------------------------------------------------------------- probes

// The viewport shows the values of an output pin for every thread of its kernel: the pin
// the mouse rests on (a moment, so passing over pins does not flicker the viewport), or with
// View › Probe on, the selected node's first value output (Blender's viewer node).
// Recomputed when the pin, the program or its data change.
void EditorApp::update_probe() {
  const GraphRef& g = canvas_.graph();
  const Selection& sel = doc_.selection();
  std::optional<PinRef> pin;
  std::optional<PinRef> hovered =
      g.valid() && !g.function ? canvas_.hovered_output() : std::nullopt;
  if (hovered != hovered_pin_) hovered_pin_ = hovered, hovered_since_ = Clock::now();
  bool rested = hovered && Clock::now() - hovered_since_ >= std::chrono::milliseconds(350);
  if (hovered && (probe_on_ || rested)) pin = hovered;
  if (!pin && probe_on_ && g.valid() && !g.function && sel.graph == g && sel.nodes.size() == 1) {
    const graph::GraphTypes& types = doc_.types(g);
    auto it = types.outputs.find(sel.nodes[0]);
    if (it != types.outputs.end())
      for (const auto& [name, value] : it->second)
        if (value.kind == graph::PinValue::Kind::Value && !pin) pin = PinRef{sel.nodes[0], name};
  }
  if (!pin || !session_.has_program()) {
    viewport_.show_probe(nullptr, 0);
    probe_key_.clear();
    return;
  }
  std::string key = g.name + "#" + std::to_string(pin->node) + "." + pin->pin + "@" +
                    std::to_string(session_.data_version()) + "/" +
                    std::to_string(doc_.logic_revision());
  if (key != probe_key_) {
    probe_key_ = key;
    probe_.run(session_.document(), session_.program(), g.name, *pin);
    ++probe_version_;
  }
  viewport_.show_probe(&probe_.last(), probe_version_);
}

// ---------------------------------------------------------------- find (Ctrl+F)

void EditorApp::open_find() {
  find_open_ = true;
  find_focus_ = true;
  find_highlight_ = 0;
}

// A box over the top of the graph: type part of a node's type, resource, formula or id;
// Up/Down choose, Enter (or a click) shows the node on the canvas, Escape closes.
void EditorApp::find_window() {
  if (!find_open_) return;
  std::optional<ControlRect> graph = control("panel.Graph");
  float w = 460;
  ImVec2 at =
      graph ? ImVec2(std::max(graph->x0, graph->cx() - w / 2), graph->y0 + 30) : ImVec2(40, 60);
  ImGui::SetNextWindowPos(at);
  ImGui::SetNextWindowSize(ImVec2(w, 0));
  ImGui::Begin("##find", nullptr,
               ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoSavedSettings |
                   ImGuiWindowFlags_AlwaysAutoResize);
  ImGui::BringWindowToDisplayFront(ImGui::GetCurrentWindow());
  if (find_focus_) ImGui::SetKeyboardFocusHere();
  find_focus_ = false;
  char buf[256];
  std::snprintf(buf, sizeof buf, "%s", find_query_.c_str());
  ImGui::SetNextItemWidth(-1);
  if (ImGui::InputTextWithHint("##query", "find nodes: type, resource, formula or #id", buf,
                               sizeof buf))
    find_highlight_ = 0;
  controls_["find.query"] = ControlRect::last_item();
  find_query_ = buf;
  std::vector<SearchMatch> matches = search_program(doc_.doc(), find_query_, canvas_.graph(), 50);
  int n = static_cast<int>(matches.size());
  if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_DownArrow)))
    find_highlight_ = std::min(find_highlight_ + 1, n - 1);
  if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_UpArrow)))
    find_highlight_ = std::max(find_highlight_ - 1, 0);
  int picked = -1;
  if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Enter)) && n > 0)
    picked = std::clamp(find_highlight_, 0, n - 1);
  if (!find_query_.empty() && matches.empty()) ImGui::TextDisabled("no node matches");
  for (int i = 0; i < n; ++i) {
    ImGui::PushID(i);
    if (ImGui::Selectable(matches[static_cast<size_t>(i)].label.c_str(), i == find_highlight_))
      picked = i;
    controls_["find.match." + std::to_string(i)] = ControlRect::last_item();
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip("%s", matches[static_cast<size_t>(i)].why.c_str());
    ImGui::PopID();
  }
  if (picked >= 0) {
    const SearchMatch& m = matches[static_cast<size_t>(picked)];
    canvas_.focus(m.graph, m.node);
    find_open_ = false;
  }
  if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape))) find_open_ = false;
  ImGui::End();
}

void EditorApp::draw_graph_window() {
  ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, ImVec2(0, 0));
  std::string graph_title = "Graph";
  if (canvas_.graph().valid()) graph_title += ": " + canvas_.graph().name;
  if (graph_maximized_) graph_title += "  (maximised: Ctrl+Space restores the panels)";
  graph_title += "###Graph";
  ImGui::Begin(graph_title.c_str(), nullptr,
               kTiled | ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
  record("Graph");
  canvas_.frame(doc_);
  accept_declaration_drop();
  ImGui::End();
  ImGui::PopStyleVar();
}

// A declaration dragged from the program panel onto the canvas: a function makes its call;
// a resource asks which node (Ctrl: the first, load; Alt: the second, store), as Unreal's
// variables do.
void EditorApp::accept_declaration_drop() {
  if (!canvas_.graph().valid()) return;
  ImGuiWindow* window = ImGui::GetCurrentWindow();
  if (ImGui::BeginDragDropTargetCustom(window->InnerRect, ImGui::GetID("declaration drop"))) {
    if (const ImGuiPayload* payload = ImGui::AcceptDragDropPayload(kDeclarationPayload)) {
      std::string text(static_cast<const char*>(payload->Data),
                       static_cast<size_t>(std::max(payload->DataSize - 1, 0)));
      size_t colon = text.find(':');
      std::string kind = text.substr(0, colon);
      DeclDrop drop;
      drop.name = colon == std::string::npos ? "" : text.substr(colon + 1);
      drop.kind = kind == "field"      ? DeclKind::Field
                  : kind == "ndarray"  ? DeclKind::Ndarray
                  : kind == "texture"  ? DeclKind::Texture
                  : kind == "function" ? DeclKind::Function
                                       : DeclKind::Argpack;
      drop.at = canvas_.view().to_canvas(ImGui::GetMousePos());
      int zone = canvas_.geometry().zone_at(drop.at);
      if (zone >= 0) drop.region = canvas_.geometry().zones()[static_cast<size_t>(zone)].region;
      std::vector<std::string> types = declaration_node_types(drop.kind);
      const ImGuiIO& io = ImGui::GetIO();
      pending_drop_ = drop;
      if (types.empty())
        session_.note(LogEntry::Level::Notice,
                      std::string("an ") + kind +
                          " is read through a kernel parameter: add one in the kernel's inspector");
      else if (types.size() == 1 || io.KeyCtrl)
        make_drop_node(types[0]);
      else if (io.KeyAlt)
        make_drop_node(types[1]);
      else
        ImGui::OpenPopup("make from declaration");
    }
    ImGui::EndDragDropTarget();
  }
  if (ImGui::BeginPopup("make from declaration")) {
    for (const std::string& type : declaration_node_types(pending_drop_.kind)) {
      if (ImGui::MenuItem((type + " " + pending_drop_.name).c_str())) make_drop_node(type);
      controls_["drop." + type] = ControlRect::last_item();
    }
    ImGui::EndPopup();
  }
}

void EditorApp::make_drop_node(const std::string& type) {
  EditResult r = add_declaration_node(doc_, canvas_.graph(), pending_drop_.region, pending_drop_.at,
                                      pending_drop_.kind, pending_drop_.name, type);
  if (!r.ok) {
    session_.note(LogEntry::Level::Error, r.message);
    return;
  }
  Selection s;
  s.graph = canvas_.graph();
  s.nodes = r.nodes;
  doc_.set_selection(s);
}

// The gaps between panels move the tiles: drag one to resize its neighbours.
void EditorApp::splitters(float top, float bottom) {
  if (graph_maximized_) return;
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  const ImGuiIO& io = ImGui::GetIO();
  float x0 = vp->Pos.x, width = vp->Size.x, height = bottom - top;
  float lw = std::round(width * tiles_.left), rw = std::round(width * tiles_.right);
  float mx = x0 + lw + kGap, rx = x0 + width - rw;
  struct Splitter {
    bool vertical;       // a vertical gap moves along x
    float pos;           // the gap's start on its axis
    float lo, hi;        // its extent along the other axis
    float origin, span;  // the fraction's reference
    float* fraction;
    bool from_end;  // the fraction is measured from the far end (the right column)
  };
  Splitter all[] = {
      {true, x0 + lw, top, bottom, x0, width, &tiles_.left, false},
      {true, rx - kGap, top, bottom, x0, width, &tiles_.right, true},
      {false, top + std::round((height - kGap) * tiles_.program), x0, x0 + lw, top, height - kGap,
       &tiles_.program, false},
      {false, top + std::round((height - kGap) * tiles_.graph), mx, rx - kGap, top, height - kGap,
       &tiles_.graph, false},
      {false, top + std::round((height - kGap) * tiles_.viewport), rx, x0 + width, top,
       height - kGap, &tiles_.viewport, false},
  };
  ImVec2 m = io.MousePos;
  int hovered = -1;
  for (int i = 0; i < static_cast<int>(std::size(all)); ++i) {
    const Splitter& s = all[i];
    float along = s.vertical ? m.x : m.y, across = s.vertical ? m.y : m.x;
    if (along >= s.pos - 1 && along <= s.pos + kGap + 1 && across >= s.lo && across <= s.hi)
      hovered = i;
  }
  bool over_window =
      ImGui::IsWindowHovered(ImGuiHoveredFlags_AnyWindow) || ImGui::IsAnyItemActive();
  if (dragging_splitter_ < 0 && hovered >= 0 && !over_window &&
      ImGui::IsMouseClicked(ImGuiMouseButton_Left))
    dragging_splitter_ = hovered;
  if (dragging_splitter_ >= 0 && !ImGui::IsMouseDown(ImGuiMouseButton_Left))
    dragging_splitter_ = -1;
  int shown = dragging_splitter_ >= 0 ? dragging_splitter_ : (over_window ? -1 : hovered);
  if (shown >= 0)
    ImGui::SetMouseCursor(all[shown].vertical ? ImGuiMouseCursor_ResizeEW
                                              : ImGuiMouseCursor_ResizeNS);
  // The gaps, drawn under the panels: dark, lit while hovered or dragged.
  ImDrawList* bg = ImGui::GetBackgroundDrawList();
  for (int i = 0; i < static_cast<int>(std::size(all)); ++i) {
    const Splitter& s = all[i];
    ImVec2 a = s.vertical ? ImVec2(s.pos, s.lo) : ImVec2(s.lo, s.pos);
    ImVec2 b = s.vertical ? ImVec2(s.pos + kGap, s.hi) : ImVec2(s.hi, s.pos + kGap);
    bg->AddRectFilled(a, b, i == shown ? IM_COL32(90, 130, 200, 255) : IM_COL32(16, 16, 19, 255));
  }
  if (dragging_splitter_ >= 0) {
    const Splitter& s = all[dragging_splitter_];
    float along = s.vertical ? m.x : m.y;
    float f = (s.from_end ? s.origin + s.span - along - kGap : along - s.origin) / s.span;
    *s.fraction = std::clamp(f, 0.08f, 0.8f);
    // Columns and rows keep room for their neighbours.
    tiles_.left = std::min(tiles_.left, 0.9f - tiles_.right);
    tiles_.right = std::min(tiles_.right, 0.9f - tiles_.left);
  }
}

void EditorApp::prompts() {
  if (prompt_.empty()) return;
  const char* titles[][2] = {{"recover", "Recover unsaved edits?"},
                             {"save-before-quit", "Save changes?"},
                             {"save-before-new", "Save changes first?"},
                             {"save-as", "Save As"},
                             {"open", "Open"}};
  std::string title;
  for (auto& t : titles)
    if (prompt_ == t[0]) title = t[1];
  if (title.empty()) {
    prompt_.clear();
    return;
  }
  if (!ImGui::IsPopupOpen(title.c_str())) {
    ImGui::OpenPopup(title.c_str());
    browse_dir_.clear();  // the file lists start beside the document
  }
  ImGui::SetNextWindowPos(ImGui::GetMainViewport()->GetCenter(), ImGuiCond_Always,
                          ImVec2(0.5f, 0.5f));
  if (!ImGui::BeginPopupModal(title.c_str(), nullptr, ImGuiWindowFlags_AlwaysAutoResize)) return;
  // Escape cancels a question (the recovery prompt waits for an answer: it holds edits).
  if (prompt_ != "recover" && ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape))) {
    answer_prompt("cancel");
    ImGui::EndPopup();
    return;
  }
  auto button = [&](const char* label, const char* choice) {
    if (ImGui::Button(label, ImVec2(110, 0))) answer_prompt(choice);
    ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
    controls_[std::string("prompt.") + choice] = ControlRect{a.x, a.y, b.x, b.y};
    ImGui::SameLine();
  };
  if (prompt_ == "recover") {
    ImGui::Text("Loom was closed with edits of %s that were not saved.",
                fs::path(path_).filename().string().c_str());
    ImGui::TextDisabled("%s", recovery_path_.c_str());
    ImGui::Spacing();
    button("Recover", "recover");
    button("Discard", "discard");
  } else if (prompt_ == "save-before-quit" || prompt_ == "save-before-new") {
    ImGui::Text("%s has edits that are not saved.",
                path_.empty() ? "The document" : fs::path(path_).filename().string().c_str());
    if (prompt_ == "save-before-new") ImGui::TextDisabled("A new document replaces it.");
    ImGui::Spacing();
    button("Save", "save");
    button("Don't save", "don't save");
    button("Cancel", "cancel");
  } else {
    bool open = prompt_ == "open";
    ImGui::TextUnformatted(open ? "Open a graph document (.loom.json):" : "Save the document as:");
    ImGui::SetNextItemWidth(520);
    if (ImGui::IsWindowAppearing()) ImGui::SetKeyboardFocusHere();
    char buf[1024];
    std::snprintf(buf, sizeof buf, "%s", path_input_.c_str());
    bool enter = ImGui::InputText("##path", buf, sizeof buf, ImGuiInputTextFlags_EnterReturnsTrue);
    controls_["prompt.path"] = ControlRect::last_item();
    path_input_ = buf;
    // The folder's documents and subfolders: a folder clicked is entered, a document picked.
    if (browse_dir_.empty())
      browse_dir_ =
          path_.empty() ? fs::current_path().string() : fs::absolute(path_).parent_path().string();
    std::error_code ec;
    if (enter && fs::is_directory(path_input_, ec)) {  // a folder typed: go there
      browse_dir_ = fs::absolute(path_input_).lexically_normal().string();
      enter = false;
    }
    ImGui::TextDisabled("%s", browse_dir_.c_str());
    std::string why;
    std::vector<BrowserEntry> entries = browse_folder(browse_dir_, &why);
    ImGui::BeginChild("files", ImVec2(520, 200), true);
    if (!why.empty()) ImGui::TextDisabled("%s", why.c_str());
    std::string enter_folder;
    for (const BrowserEntry& e : entries) {
      std::string full = (fs::path(browse_dir_) / e.name).lexically_normal().string();
      std::string shown = e.folder && e.name != ".." ? e.name + "/" : e.name;
      if (ImGui::Selectable(shown.c_str(), full == path_input_,
                            ImGuiSelectableFlags_AllowDoubleClick)) {
        if (e.folder) {
          enter_folder = full;
        } else {
          path_input_ = full;
          if (ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left)) enter = true;
        }
      }
      controls_["browse." + e.name] = ControlRect::last_item();
    }
    ImGui::EndChild();
    if (!enter_folder.empty()) {
      browse_dir_ = enter_folder;
      if (!open) path_input_ = (fs::path(enter_folder) / fs::path(path_input_).filename()).string();
    }
    ImGui::Spacing();
    if (enter)
      answer_prompt(open ? "open" : "save");
    else {
      button(open ? "Open" : "Save", open ? "open" : "save");
      button("Cancel", "cancel");
    }
  }
  ImGui::NewLine();
  ImGui::EndPopup();
}

void EditorApp::answer_prompt(const std::string& choice) {
  std::string was = prompt_;
  prompt_.clear();
  if (ImGui::GetCurrentContext()) ImGui::CloseCurrentPopup();
  if (was == "recover") {
    if (choice == "recover") {
      try {
        graph::Document recovered = graph::load_document_file(recovery_path_);
        recovered.path = doc_.doc().path;
        replace_document(doc_, std::move(recovered), "Recover unsaved edits");
        session_.note(LogEntry::Level::Notice, "recovered unsaved edits from " + recovery_path_ +
                                                   " (undo goes back to the file)");
      } catch (const Error& e) {
        session_.note(LogEntry::Level::Error,
                      "the recovery file does not load: " + std::string(e.what()), e.place());
      }
    } else {
      std::error_code ec;
      fs::remove(recovery_path_, ec);
    }
  } else if (was == "save-before-quit") {
    if (choice == "save") {
      if (save())
        quit_ = true;
      else if (prompt_ == "save-as")
        quit_after_save_ = true;
    } else if (choice == "don't save") {
      session_.forget_unsaved();  // the user chose to lose them: no recovery prompt next time
      quit_ = true;
    }
  } else if (was == "save-before-new") {
    if (choice == "save") {
      if (save())
        new_document();
      else if (prompt_ == "save-as")
        new_after_save_ = true;
    } else if (choice == "don't save") {
      session_.forget_unsaved();
      new_document();
    }
  } else if (was == "save-as" && choice == "save") {
    bool saved = save_as(path_input_);
    if (saved && quit_after_save_) quit_ = true;
    if (saved && new_after_save_) new_document();
    quit_after_save_ = false;
    new_after_save_ = false;
  } else if (was == "open" && choice == "open") {
    if (doc_.dirty()) {
      session_.note(LogEntry::Level::Notice,
                    "save or undo the edits first: opening another document would lose them");
    } else {
      open(path_input_);
    }
  } else {
    quit_after_save_ = false;
    new_after_save_ = false;
  }
}

}  // namespace loom::editor
