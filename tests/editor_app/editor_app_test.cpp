// The whole editor headless: an offscreen frame loop on the test device (lavapipe in CI)
// under the validation layer, Dear ImGui driven through its IO frame by frame (mouse on the
// controls the app reports, GLFW key codes), and assertions on the document, the file on
// disk and the running program.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <unistd.h>

#include "compiler/graph/document_json.h"
#include "editor/app/editor_host.h"
#include "editor/app/view_data.h"
#include "editor/model/graph_access.h"
#include "editor/model/operations.h"
#include "tests/support/vulkan_required.h"

namespace loom::editor {
namespace {

namespace fs = std::filesystem;

constexpr int kF5 = 294, kF6 = 295, kF7 = 296;

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

graph::Node* find_node(std::vector<graph::Node>& nodes, int id) {
  for (graph::Node& n : nodes) {
    if (n.id == id) return &n;
    for (graph::Region& r : n.regions)
      if (graph::Node* inner = find_node(r.nodes, id)) return inner;
  }
  return nullptr;
}
using loom::editor::find_node;  // the model's, by graph

class EditorAppTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("loom-editor-test-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    ::setenv("LOOM_CACHE_DIR", (dir_ / "cache").c_str(), 1);  // recovery files too
    LOOM_REQUIRE_VULKAN_OR_SKIP();                            // the host draws with Vulkan
  }
  void TearDown() override {
    if (host_) {
      std::vector<std::string> messages = host_->validation_messages();
      std::string text;
      for (const std::string& m : messages) text += "\n  " + m;
      EXPECT_TRUE(messages.empty()) << messages.size() << " Vulkan validation message(s):" << text;
    }
    host_.reset();
    fs::remove_all(dir_);
  }

  EditorHost& start(Backend backend = Backend::Cpu, int height = 720) {
    HostOptions o;
    o.headless = true;
    o.width = 1280;
    o.height = height;
    o.validation = true;
    o.backend = backend;
    o.offline_cache = false;
    host_ = std::make_unique<EditorHost>(o);
    return *host_;
  }
  // A copy of a sample in the test's folder (the mesh it names beside it).
  std::string copy_sample(const std::string& name) {
    std::string to = (dir_ / (name + ".loom.json")).string();
    fs::copy_file(std::string(LOOM_SOURCE_DIR) + "/assets/graphs/" + name + ".loom.json", to);
    return to;
  }
  EditorApp& app() { return host_->app(); }
  void frames(int n) {
    for (int i = 0; i < n; ++i) host_->frame();
  }
  void click_at(float x, float y) {
    ImGuiIO& io = host_->io();
    io.MousePos = ImVec2(x, y);
    frames(1);
    io.MouseDown[0] = true;
    frames(1);
    io.MouseDown[0] = false;
    frames(1);
  }
  void click(const std::string& control) {
    std::optional<ControlRect> r = app().control(control);
    ASSERT_TRUE(r.has_value()) << "no control named " << control;
    click_at(r->cx(), r->cy());
  }
  void key(int code, bool ctrl = false, bool shift = false) {
    ImGuiIO& io = host_->io();
    io.KeyCtrl = ctrl;
    io.KeyShift = shift;
    io.KeysDown[code] = true;
    frames(1);
    io.KeysDown[code] = false;
    frames(1);
    io.KeyCtrl = io.KeyShift = false;
  }
  void move(ImVec2 p) {
    host_->io().MousePos = p;
    frames(1);
  }
  void drag(ImVec2 from, ImVec2 to) {
    move(from);
    host_->io().MouseDown[0] = true;
    frames(1);
    for (int i = 1; i <= 8; ++i)
      move(ImVec2(from.x + (to.x - from.x) * i / 8, from.y + (to.y - from.y) * i / 8));
    host_->io().MouseDown[0] = false;
    frames(1);
  }
  void type(const std::string& text) {
    for (char c : text) {
      host_->io().AddInputCharacter(static_cast<unsigned>(c));
      frames(1);
    }
  }
  // Clicks a text field, selects what it holds, types `text` and presses Enter.
  void retype(const std::string& control, const std::string& text) {
    click(control);
    key('A', true);
    type(text);
    key(257);  // Enter
  }
  ImVec2 pin(int node, const char* name, bool output) {
    std::optional<ImVec2> p = app().canvas().pin_screen_pos(PinRef{node, name}, output);
    EXPECT_TRUE(p.has_value()) << node << "." << name;
    return p.value_or(ImVec2(0, 0));
  }
  void never_ending_loop_is_stopped(Backend backend, int n);
  // Heat's second launch value set to 0.125, not saved, autosaved at once.
  void unsaved_edit() {
    std::vector<LaunchValue> values = launch_values(app().document().doc());
    values[1].components[0] = 0.125;
    replace_document(app().document(), with_launch_value(app().document().doc(), values[1]), "k");
    frames(3);
  }
  std::string open_heat_with_an_unsaved_edit() {
    start();
    std::string path = copy_sample("heat");
    EXPECT_TRUE(app().open(path));
    app().session().set_autosave_interval(std::chrono::milliseconds(0));
    unsaved_edit();
    return path;
  }
  // Runs frames until `done` holds (the file watcher looks every 250 ms), at most 5 s.
  template <class F>
  bool frames_until(F done) {
    auto end = std::chrono::steady_clock::now() + std::chrono::seconds(15);
    while (!done() && std::chrono::steady_clock::now() < end) {
      frames(1);
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return done();
  }

  fs::path dir_;
  std::unique_ptr<EditorHost> host_;
};

TEST_F(EditorAppTest, PlayButtonRunsTheSampleAndTheViewportDrawsIt) {
  start();
  ASSERT_TRUE(app().open(copy_sample("mpm88")));
  frames(2);
  EXPECT_EQ(app().session().steps(), 0);
  EXPECT_EQ(view_label(app().viewport().view()), "x as points, coloured by v");
  click("viewport.play");
  EXPECT_TRUE(app().session().playing());
  frames(6);
  EXPECT_GE(app().session().steps(), 6);
  EXPECT_GE(app().viewport().uploads(), 6u);  // new data every step
  EXPECT_EQ(app().viewport().problem(), "");
  // The viewport shows particles: many pixels away from the background colour.
  host_->frame(true);
  RgbaImage shot = host_->viewport_of(host_->take_capture());
  ASSERT_GT(shot.width, 200);
  ASSERT_GT(shot.height, 200);
  size_t lit = 0;
  for (int y = 0; y < shot.height; ++y)
    for (int x = 0; x < shot.width; ++x)
      lit += shot.at(x, y)[0] + shot.at(x, y)[1] + shot.at(x, y)[2] > 150;
  EXPECT_GT(lit, 1000u) << "the particles are not drawn";
  click("viewport.play");  // pause
  EXPECT_FALSE(app().session().playing());
  int64_t paused_at = app().session().steps();
  frames(3);
  EXPECT_EQ(app().session().steps(), paused_at);
}

// A user's whole edit in the editor, mouse and keyboard only: a node from the palette, two
// links, a link the type checker refuses, undo and redo, copy and paste, save; then the
// saved file loads and the edited program computes what the graph says.
TEST_F(EditorAppTest, BuildAKernelWithMouseAndKeyboardSaveItAndRunIt) {
  start();
  std::string path = (dir_ / "small.loom.json").string();
  {
    std::ofstream(path) << R"({"format": "loom-graph", "version": 2,
  "fields": [{"name": "out", "type": "f32", "shape": [1]}],
  "kernels": [{"name": "k", "nodes": [
    {"id": 1, "type": "const", "params": {"value": 2.0}},
    {"id": 2, "type": "store", "inputs": {"i0": 0, "value": "1"}, "params": {"field": "out"}}]}],
  "pipelines": [{"name": "step", "launches": [{"kernel": "k"}]}],
  "layout": [{"graph": "k", "positions": {"1": [0, 0], "2": [420, 0]}}]})";
  }
  ASSERT_TRUE(app().open(path));
  frames(3);
  NodeCanvas& canvas = app().canvas();
  ASSERT_EQ(canvas.graph().name, "k");

  // Tab over empty canvas, type, Enter: a sqrt node where the mouse is.
  ImVec2 spot = canvas.view().to_screen(Vec2{200, 160});
  click_at(spot.x, spot.y);
  key(258);  // Tab
  ASSERT_TRUE(canvas.palette().is_open());
  type("sqrt");
  key(257);  // Enter
  const graph::Node* made = find_node(app().document().doc(), GraphRef{"k", false}, 3);
  ASSERT_NE(made, nullptr) << app().document().save_text();
  EXPECT_EQ(made->type, "sqrt");
  frames(2);

  // Links by dragging pin to pin: const -> sqrt -> store.value.
  drag(pin(1, "out", true), pin(3, "a", false));
  drag(pin(3, "out", true), pin(2, "value", false));
  const graph::Node* store = find_node(app().document().doc(), GraphRef{"k", false}, 2);
  ASSERT_NE(store->input("value"), nullptr);
  EXPECT_EQ(store->input("value")->from_node, 3);
  // A float into an index: refused, with the reason, and nothing changes.
  std::string before = app().document().save_text();
  drag(pin(3, "out", true), pin(2, "i0", false));
  EXPECT_EQ(app().document().save_text(), before);
  EXPECT_FALSE(canvas.status().empty());

  // Undo the last link, redo it.
  key('Z', true);
  EXPECT_NE(find_node(app().document().doc(), GraphRef{"k", false}, 2)->input("value")->from_node,
            3);
  key('Z', true, true);
  EXPECT_EQ(find_node(app().document().doc(), GraphRef{"k", false}, 2)->input("value")->from_node,
            3);

  // Copy the sqrt node and paste it: a new node with a new id, the clipboard holding JSON.
  std::optional<ImVec2> at = canvas.node_screen_pos(3);
  ASSERT_TRUE(at.has_value());
  click_at(at->x + 20, at->y + 8);
  EXPECT_EQ(app().document().selection().nodes, std::vector<int>{3});
  key('C', true);
  std::string clip = ImGui::GetClipboardText() ? ImGui::GetClipboardText() : "";
  EXPECT_NE(clip.find("\"type\": \"sqrt\""), std::string::npos) << clip;
  // Somewhere free in the lower part of the canvas, wherever the view has put the nodes.
  move(ImVec2(canvas.canvas_screen_origin().x + canvas.canvas_screen_size().x * 0.2f,
              canvas.canvas_screen_origin().y + canvas.canvas_screen_size().y * 0.85f));
  key('V', true);
  const graph::Node* pasted = find_node(app().document().doc(), GraphRef{"k", false}, 4);
  ASSERT_NE(pasted, nullptr) << app().document().save_text();
  EXPECT_EQ(pasted->type, "sqrt");
  // Its input link stayed behind: the program does not compile, the node says why, and the
  // kernels that ran before keep running.
  frames(2);
  ASSERT_TRUE(app().session().error().has_value());
  EXPECT_EQ(app().session().error()->place().node, 4);
  ASSERT_EQ(app().document().diagnostics().size(), 1u);
  EXPECT_EQ(app().document().diagnostics()[0].node, 4);
  EXPECT_EQ(app().document().selection().nodes, std::vector<int>{4});
  key(261);  // Delete
  EXPECT_EQ(find_node(app().document().doc(), GraphRef{"k", false}, 4), nullptr);

  // Save; the file is the document, canonical, and loads back.
  key('S', true);
  EXPECT_FALSE(app().document().dirty());
  std::string saved = read_text(path);
  EXPECT_EQ(saved, app().document().save_text());
  EXPECT_NO_THROW(graph::load_document(saved, path));

  // The edit runs: out[0] = sqrt(2).
  key(kF6);
  frames(2);
  ASSERT_FALSE(app().session().error().has_value()) << app().session().error()->what();
  ArrayView out = app().session().program().array("out");
  EXPECT_FLOAT_EQ(static_cast<float>(out.component(0, 0)), std::sqrt(2.0f));
}

// File › New, then data, kernel parameters and launches declared in the program panel with
// the mouse and keyboard only; every change undoable back to the starter program's bytes.
TEST_F(EditorAppTest, FromFileNewTheProgramPanelDeclaresTheProgram) {
  start();
  frames(6);
  const graph::Document& doc = app().document().doc();
  // An unsaved edit, then New: it asks first.
  click("program.add.kernel");
  ASSERT_TRUE(doc.kernel("kernel"));
  ASSERT_TRUE(app().document().dirty());
  key('N', true);
  ASSERT_EQ(app().prompt(), "save-before-new");
  click("prompt.don't save");
  frames(2);
  EXPECT_FALSE(app().document().dirty());
  EXPECT_FALSE(doc.kernel("kernel"));
  ASSERT_TRUE(doc.field("u"));
  ASSERT_TRUE(doc.kernel("init") && doc.kernel("step") && doc.pipeline("init") &&
              doc.pipeline("step"));
  EXPECT_EQ(doc.view.show, "u");
  std::string starter = app().document().save_text();

  // Data: + then "field"; renamed and reshaped in the inspector.
  click("program.add.field");
  frames(2);
  click("program.add.data.field");
  ASSERT_TRUE(doc.field("field")) << app().program_panel().error();
  retype("program.inspector.name", "h");
  ASSERT_TRUE(doc.field("h")) << app().program_panel().error();
  retype("program.inspector.shape", "64x32");
  EXPECT_EQ(doc.field("h")->shape, (std::vector<int64_t>{64, 32}));
  // A shape that does not fit is refused with the reason; nothing changes.
  std::string before = app().document().save_text();
  retype("program.inspector.shape", "64x0");
  EXPECT_EQ(app().document().save_text(), before);
  EXPECT_NE(app().program_panel().error().find("field 'h'"), std::string::npos)
      << app().program_panel().error();
  // A taken name too.
  retype("program.inspector.name", "u");
  EXPECT_TRUE(doc.field("h"));
  EXPECT_NE(app().program_panel().error().find("already"), std::string::npos);
  // Gradients: the boxes give it an adjoint and a tangent (docs/autodiff.md), one undo each.
  click("program.inspector.needs_grad");
  EXPECT_TRUE(doc.field("h")->needs_grad) << app().program_panel().error();
  click("program.inspector.needs_dual");
  EXPECT_TRUE(doc.field("h")->needs_dual);
  key('Z', true);
  EXPECT_TRUE(doc.field("h")->needs_grad);
  EXPECT_FALSE(doc.field("h")->needs_dual);

  // The step kernel: its parameter renamed, its launch and param node follow; a new one.
  click("program.kernel.step");
  EXPECT_EQ(app().canvas().graph().name, "step");
  retype("program.inspector.param", "damping");
  ASSERT_EQ(doc.kernel("step")->params[0].name, "damping");
  EXPECT_EQ(doc.pipeline("step")->launches[0].args[0].first, "damping");
  EXPECT_EQ(find_node(doc, GraphRef{"step", false}, 1)->param("name")->s, "damping");
  click("program.inspector.add_param");
  ASSERT_EQ(doc.kernel("step")->params.size(), 2u);
  EXPECT_EQ(doc.pipeline("step")->launches[0].args.size(), 2u);

  // The init pipeline launches init a second time, then the launch goes again.
  click("program.pipeline.init");
  click("program.inspector.add_launch");
  frames(2);  // the menu has its size
  click("program.inspector.launch.init");
  EXPECT_EQ(doc.pipeline("init")->launches.size(), 2u);

  // It runs: a step with the renamed parameter's value scales u.
  frames(2);
  ASSERT_FALSE(app().session().error().has_value()) << app().session().error()->what();
  key(kF7);
  frames(1);
  double u0 = app().session().program().array("u").component(5, 0);
  key(kF6);
  frames(2);
  EXPECT_NEAR(app().session().program().array("u").component(5, 0), u0 * 0.99, 1e-5);

  // Undo everything (Ctrl+Z, wherever the mouse is): the starter program's bytes.
  for (int i = 0; i < 20 && app().document().can_undo(); ++i) key('Z', true);
  EXPECT_EQ(app().document().save_text(), starter);
}

// A gradient step authored in the pipeline inspector: K.grad and K.dual are offered beside
// the kernels, and a derived launch lists its twins (here of the ndarrays an argpack holds),
// each "(default)" until one is picked; picking "(default)" again clears it, one undo step each.
TEST_F(EditorAppTest, APipelineLaunchesAKernelsAdjointWithItsTwins) {
  start(Backend::Cpu, 1400);  // the pipeline's twelve argument rows in view
  frames(6);
  std::string path = (dir_ / "bodies.loom.json").string();
  fs::copy_file(std::string(LOOM_SOURCE_DIR) + "/tests/e2e/docs/argpack_ndarray_adjoint.loom.json",
                path);
  ASSERT_TRUE(app().open(path));
  frames(4);
  const graph::Document& doc = app().document().doc();
  std::optional<ControlRect> list = app().control("program.kernel.init");
  ASSERT_TRUE(list.has_value());
  move(ImVec2(list->cx(), list->cy()));
  host_->io().MouseWheel = -10;  // the pipelines are under the kernels
  frames(2);
  click("program.pipeline.backward");
  frames(2);
  auto twin_arg = [&]() -> std::string {
    for (const auto& [name, value] : doc.pipeline("backward")->launches.at(2).args)
      if (name == "b.pos.grad") return value.s;
    return "";
  };
  ASSERT_EQ(doc.pipeline("backward")->launches.at(2).kernel, "energy.grad");
  click("program.inspector.arg.2.b.pos.grad");
  frames(2);  // the combo has its size
  click("program.inspector.arg.2.b.pos.grad=pos.grad");
  EXPECT_EQ(twin_arg(), "pos.grad") << app().program_panel().error();
  click("program.inspector.arg.2.b.pos.grad");
  frames(2);
  click("program.inspector.arg.2.b.pos.grad=(default)");
  EXPECT_EQ(twin_arg(), "");
  key('Z', true);
  EXPECT_EQ(twin_arg(), "pos.grad");
  // The launch menu offers the tangent kernel; its launch gets K's arguments only.
  std::optional<ControlRect> rows = app().control("program.inspector.arg.2.b");
  ASSERT_TRUE(rows.has_value());
  move(ImVec2(rows->cx(), rows->cy()));
  host_->io().MouseWheel = -10;  // the launch menu is under the rows
  frames(2);
  click("program.inspector.add_launch");
  frames(2);
  click("program.inspector.launch.advance.dual");
  ASSERT_EQ(doc.pipeline("backward")->launches.size(), 5u) << app().program_panel().error();
  const graph::Launch& dual = doc.pipeline("backward")->launches.back();
  EXPECT_EQ(dual.kernel, "advance.dual");
  EXPECT_EQ(dual.args.size(), 2u);  // b and dt
  frames(2);
  EXPECT_TRUE(app().control("program.inspector.arg.4.b.inner.w.dual").has_value());
  EXPECT_TRUE(app().control("program.inspector.arg.4.dt.dual").has_value());
  ASSERT_FALSE(app().session().error().has_value()) << app().session().error()->what();
}

// A field's shape emptied in the program panel's inspector makes it 0-d (Taichi's shape=()):
// a kernel counts into it with an index-free atomic_add, the spreadsheet lists its one value,
// and undo gives the shape back.
TEST_F(EditorAppTest, AFieldsShapeEmptiedInTheInspectorIsAZeroDimensionalFieldThatRuns) {
  start();
  frames(6);
  const graph::Document& doc = app().document().doc();
  click("program.add.field");
  frames(2);
  click("program.add.data.field");
  ASSERT_TRUE(doc.field("field")) << app().program_panel().error();
  retype("program.inspector.name", "steps");
  ASSERT_TRUE(doc.field("steps")) << app().program_panel().error();
  std::string with_2d_field = app().document().save_text();
  retype("program.inspector.shape", "()");
  ASSERT_TRUE(doc.field("steps")->shape.empty()) << app().program_panel().error();
  EXPECT_NE(app().document().save_text().find(R"({"name": "steps", "type": "f32", "shape": []})"),
            std::string::npos);

  // step adds one to it on every launch.
  graph::Document edited = doc;
  graph::Node add;
  add.id = 6;
  add.type = "atomic_add";
  add.params.emplace_back("field", graph::Literal::text("steps"));
  graph::Input value;
  value.pin = "value";
  value.literal = graph::Literal::real(1.0);
  add.inputs.push_back(value);
  edited.kernels[1].nodes.push_back(add);
  replace_document(app().document(), edited, "count the steps");
  frames(2);
  ASSERT_FALSE(app().session().error().has_value()) << app().session().error()->what();
  key(kF7);
  frames(1);
  key(kF6);
  frames(2);
  key(kF6);
  frames(2);
  ArrayView steps = app().session().program().array("steps");
  EXPECT_TRUE(steps.shape.empty());
  EXPECT_EQ(steps.component(0, 0), 2.0);

  app().spreadsheet().pick("steps");
  click("tab.Spreadsheet");
  frames(3);
  EXPECT_EQ(app().spreadsheet().resource(), "steps");
  const SpreadsheetPage& page = app().spreadsheet().page();
  EXPECT_TRUE(page.shape.empty());
  ASSERT_EQ(page.rows, 1u);
  EXPECT_EQ(page.at(0, 0), 2.0);

  // Undo the kernel edit, then the shape: the 2-d field is back.
  move(ImVec2(5, 300));
  key('Z', true);
  key('Z', true);
  frames(2);
  EXPECT_EQ(app().document().save_text(), with_2d_field);
}

// Text typed into one entry's field and left by clicking another entry applies to the entry
// it was typed for (leaving a field sets it, as in Blender), never to the other one.
// A kernel's "block local" row in the inspector: names typed there become the document's
// block_local (one undo step), the kernel's IR lists their slots, a name that is neither a
// field nor an ndarray parameter is refused with the reason, and the CPU runs as before.
TEST_F(EditorAppTest, TheKernelInspectorsBlockLocalRowSetsTheListAndRefusesBadNames) {
  start();
  frames(6);
  const graph::Document& doc = app().document().doc();
  std::string starter = app().document().save_text();
  click("program.kernel.step");
  frames(2);
  // At 1280x720 the kernel's last rows are under the inspector's edge: scroll it.
  std::optional<ControlRect> returns = app().control("program.inspector.returns");
  ASSERT_TRUE(returns.has_value());
  move(ImVec2(returns->cx(), returns->cy()));
  host_->io().MouseWheel = -5;
  frames(2);
  retype("program.inspector.block_local", "u");
  ASSERT_EQ(doc.kernel("step")->block_local, std::vector<std::string>{"u"})
      << app().program_panel().error();
  EXPECT_TRUE(app().program_panel().error().empty()) << app().program_panel().error();
  EXPECT_NE(app().document().save_text().find("\"block_local\": [\"u\"]"), std::string::npos);
  frames(3);
  ASSERT_FALSE(app().session().error().has_value()) << app().session().error()->what();
  EXPECT_EQ(app().panels().selected_kernel, "step");
  EXPECT_NE(app().panels().code.find("  block_local $0\n"), std::string::npos)
      << app().panels().code.substr(0, 400);
  std::string with = app().document().save_text();

  // Refused, with the reason under the inspector; the document as it was.
  retype("program.inspector.block_local", "u, tmp");
  EXPECT_EQ(app().document().save_text(), with);
  EXPECT_NE(app().program_panel().error().find(
                "kernel 'step': block_local names 'tmp', which is neither a field nor an ndarray "
                "parameter of the kernel"),
            std::string::npos)
      << app().program_panel().error();

  // It runs on the CPU as before: a step scales u by decay.
  key(kF7);
  frames(1);
  double u0 = app().session().program().array("u").component(5, 0);
  key(kF6);
  frames(2);
  EXPECT_NEAR(app().session().program().array("u").component(5, 0), u0 * 0.99, 1e-5);

  // Undo (Ctrl+Z): the starter program's bytes.
  key('Z', true);
  EXPECT_EQ(app().document().save_text(), starter);
}

TEST_F(EditorAppTest, TextLeftInAnInspectorFieldNeverRenamesAnotherEntry) {
  start();
  frames(6);
  click("program.add.field");
  frames(2);
  click("program.add.data.field");
  ASSERT_TRUE(app().document().doc().field("field"));
  click("program.inspector.name");
  key('A', true);
  type("zzz");
  click("program.field.u");  // another entry, without Enter
  frames(3);
  const graph::Document& doc = app().document().doc();
  EXPECT_TRUE(doc.field("u"));
  EXPECT_TRUE(doc.field("zzz"));
  EXPECT_FALSE(doc.field("field"));
  EXPECT_EQ(app().program_panel().selected().name, "u");
  EXPECT_EQ(doc.fields.size(), 2u);
}

TEST_F(EditorAppTest, AResourceDroppedOnTheCanvasMakesItsLoadOrStore) {
  start();
  frames(2);
  click("program.kernel.step");
  std::optional<ControlRect> u = app().control("program.field.u");
  ASSERT_TRUE(u.has_value());
  // Drag u onto the canvas, below the loop, and pick "store u" in the menu that opens.
  NodeCanvas& canvas = app().canvas();
  ImVec2 spot = canvas.view().to_screen(Vec2{300, 400});
  drag(ImVec2(u->cx(), u->cy()), spot);
  frames(1);
  click("drop.store");
  int made = -1;
  for_each_node(app().document().doc().kernel("step")->nodes,
                [&](const graph::Node& n, const RegionRef&) {
                  if (n.type == "store" && n.id > 5) made = n.id;
                });
  ASSERT_GE(made, 0) << app().document().save_text();
  EXPECT_EQ(find_node(app().document().doc(), GraphRef{"step", false}, made)->param("field")->s,
            "u");
  EXPECT_EQ(app().document().selection().nodes, std::vector<int>{made});
  key('Z', true);
  EXPECT_EQ(find_node(app().document().doc(), GraphRef{"step", false}, made), nullptr);
}

TEST_F(EditorAppTest, TheOpenPromptWalksFoldersAndOpensADocument) {
  start();
  frames(6);
  fs::create_directories(dir_ / "samples");
  fs::copy_file(std::string(LOOM_SOURCE_DIR) + "/assets/graphs/heat.loom.json",
                dir_ / "samples" / "heat.loom.json");
  ASSERT_TRUE(app().save_as((dir_ / "start.loom.json").string()));
  key('O', true);
  ASSERT_EQ(app().prompt(), "open");
  frames(2);
  click("browse.samples");  // into the folder
  frames(2);
  ASSERT_TRUE(app().control("browse.heat.loom.json").has_value());
  ASSERT_TRUE(app().control("browse...").has_value());  // and back up is offered
  click("browse.heat.loom.json");
  click("prompt.open");
  frames(2);
  EXPECT_EQ(fs::path(app().path()).filename(), "heat.loom.json");
  EXPECT_TRUE(app().document().doc().field("temperature"));
}

TEST_F(EditorAppTest, CtrlSpaceMaximisesTheGraphAndRestoresThePanels) {
  start();
  frames(6);
  std::optional<ControlRect> graph = app().control("panel.Graph");
  ASSERT_TRUE(graph.has_value());
  move(ImVec2(graph->cx(), graph->cy()));
  key(' ', true);
  frames(1);
  std::optional<ControlRect> big = app().control("panel.Graph");
  EXPECT_LT(big->x0, graph->x0);
  EXPECT_GT(big->x1 - big->x0, (graph->x1 - graph->x0) * 1.5f);
  key(' ', true);
  frames(1);
  EXPECT_FLOAT_EQ(app().control("panel.Graph")->x0, graph->x0);
}

TEST_F(EditorAppTest, CtrlFFindsANodeInAnotherKernelAndShowsIt) {
  start();
  ASSERT_TRUE(app().open(copy_sample("heat")));
  frames(6);
  ASSERT_EQ(app().canvas().graph().name, "init");
  key('F', true);
  frames(1);
  type("4.0 * c");
  ASSERT_TRUE(app().control("find.match.0").has_value());
  key(257);  // Enter
  frames(2);
  EXPECT_EQ(app().canvas().graph().name, "diffuse");
  EXPECT_EQ(app().document().selection().nodes, std::vector<int>{12});
  EXPECT_FALSE(app().control("find.query").has_value() && ImGui::GetIO().WantTextInput);
}

TEST_F(EditorAppTest, TheProbeShowsTheHoveredPinsOrTheSelectedNodesValuesInTheViewport) {
  start();
  ASSERT_TRUE(app().open(copy_sample("heat")));
  frames(4);
  key(kF6);  // one step: data to probe
  frames(2);
  key('F', true);
  type("4.0 * c");
  key(257);  // Enter: diffuse's stencil formula, selected
  frames(2);
  ASSERT_EQ(app().document().selection().nodes, std::vector<int>{12});
  app().set_probe(true);
  frames(3);
  EXPECT_TRUE(app().viewport().probing());
  EXPECT_EQ(app().probe().error, "");
  EXPECT_EQ(app().probe().shape, (std::vector<int64_t>{254, 254}));
  EXPECT_TRUE(app().viewport().legend_shown());
  EXPECT_GT(app().viewport().uploads(), 0u);
  // A value outside any loop (the parameter k): numbers, not a picture.
  move(ImVec2(app().canvas().canvas_screen_origin().x + 50,
              app().canvas().canvas_screen_origin().y + 50));
  key(268);  // Home: everything in view
  std::optional<ImVec2> k = app().canvas().node_screen_pos(1);
  ASSERT_TRUE(k.has_value());
  click_at(k->x + 20, k->y + 6);
  frames(3);
  ASSERT_EQ(app().document().selection().nodes, std::vector<int>{1});
  EXPECT_EQ(app().probe().shape, std::vector<int64_t>{1});
  ASSERT_EQ(app().probe().values.size(), 1u);
  EXPECT_NEAR(app().probe().values[0], 0.2, 1e-6);
  // Hovering an output pin probes it, whatever is selected: the range_for's i1 index.
  std::optional<ImVec2> i1 = app().canvas().pin_screen_pos(PinRef{2, "i1"}, true);
  ASSERT_TRUE(i1.has_value());
  move(*i1);
  frames(2);
  EXPECT_EQ(app().probe().pin, (PinRef{2, "i1"}));
  ASSERT_EQ(app().probe().values.size(), 254u * 254u);
  EXPECT_EQ(app().probe().values[3 * 254 + 17], 18);  // the loop starts at 1
  // Probing off: the view again; a pin the mouse rests on is probed all the same.
  app().set_probe(false);
  move(ImVec2(app().canvas().canvas_screen_origin().x + 5,
              app().canvas().canvas_screen_origin().y + 5));
  frames(2);
  EXPECT_FALSE(app().viewport().probing());
  move(*i1);
  ASSERT_TRUE(frames_until([&] { return app().viewport().probing(); }));
  EXPECT_EQ(app().probe().pin, (PinRef{2, "i1"}));
}

TEST_F(EditorAppTest, ShortcutsStepResetAndSave) {
  start();
  std::string path = copy_sample("heat");
  ASSERT_TRUE(app().open(path));
  frames(2);
  key(kF6);
  EXPECT_EQ(app().session().steps(), 1);
  key(kF6);
  EXPECT_EQ(app().session().steps(), 2);
  key(kF7);
  EXPECT_EQ(app().session().steps(), 0);
  key(kF5);
  EXPECT_TRUE(app().session().playing());
  key(kF5);
  EXPECT_FALSE(app().session().playing());

  // An edit (a launch value, as the parameters panel makes it), then Ctrl+S.
  std::vector<LaunchValue> values = launch_values(app().document().doc());
  ASSERT_FALSE(values.empty());
  values[0].components[0] = 0.15;
  replace_document(app().document(), with_launch_value(app().document().doc(), values[0]), "k");
  frames(2);
  EXPECT_TRUE(app().document().dirty());
  EXPECT_EQ(app().title(), "heat.loom.json* - Loom");
  key('S', true);
  EXPECT_FALSE(app().document().dirty());
  EXPECT_EQ(app().title(), "heat.loom.json - Loom");
  std::string saved = read_text(path);
  EXPECT_EQ(saved, graph::save_document(app().document().doc()));
  EXPECT_NE(saved.find("\"k\": 0.15"), std::string::npos);
  // Undo after saving: unsaved again, and the running program follows.
  app().document().undo();
  frames(2);
  EXPECT_TRUE(app().document().dirty());
  EXPECT_DOUBLE_EQ(launch_values(app().session().document())[0].components[0], 0.2);
}

TEST_F(EditorAppTest, AnEditThatDoesNotCompileKeepsTheKernelsRunningAndMarksTheNode) {
  start();
  ASSERT_TRUE(app().open(copy_sample("heat")));
  app().session().play();
  frames(3);
  graph::Document broken = app().document().doc();
  graph::Node* expr = find_node(broken.kernels[1].nodes, 12);
  ASSERT_NE(expr, nullptr);
  for (auto& [name, value] : expr->params)
    if (name == "expr") value.s = "c + k * (n + s + w + e - 4.0 * q)";  // q: no such input
  replace_document(app().document(), broken, "break it");
  frames(3);
  ASSERT_TRUE(app().session().error().has_value());
  EXPECT_EQ(app().session().error()->place().kernel, "diffuse");
  EXPECT_EQ(app().session().error()->place().node, 12);
  const std::vector<Diagnostic>& d = app().document().diagnostics();
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].graph.name, "diffuse");
  EXPECT_EQ(d[0].node, 12);
  int64_t steps = app().session().steps();
  frames(3);
  EXPECT_EQ(app().session().steps(), steps + 3) << "the previous kernels stopped";
  // Undo: the error goes away, and so does the badge.
  app().document().undo();
  frames(3);
  EXPECT_FALSE(app().session().error().has_value());
  EXPECT_TRUE(app().document().diagnostics().empty());
}

// A likely porting mistake (docs/porting-from-taichi.md) is a warning on its node while the
// kernels run; the edit that fixes it takes the warning away, and undo brings it back.
TEST_F(EditorAppTest, ALikelyMistakeIsAWarningOnItsNodeWhileTheKernelsRun) {
  start();
  ASSERT_TRUE(app().open(copy_sample("heat")));
  app().session().play();
  frames(2);
  EXPECT_TRUE(app().document().diagnostics().empty());
  graph::Document edited = app().document().doc();
  for (auto& [name, value] : find_node(edited.kernels[1].nodes, 12)->params)
    if (name == "expr") value.s = "c + k * (n + s + w + e - 4.0 * c) * (3 / 2)";
  replace_document(app().document(), edited, "integer division");
  frames(3);
  EXPECT_FALSE(app().session().error().has_value());
  int64_t steps = app().session().steps();
  frames(2);
  EXPECT_EQ(app().session().steps(), steps + 2) << "a warning does not stop the kernels";
  const std::vector<Diagnostic>& d = app().document().diagnostics();
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].severity, Diagnostic::Severity::Warning);
  EXPECT_EQ(d[0].graph.name, "diffuse");
  EXPECT_EQ(d[0].node, 12);
  EXPECT_NE(d[0].message.find("integer division truncates"), std::string::npos) << d[0].message;
  app().document().undo();
  frames(3);
  EXPECT_TRUE(app().document().diagnostics().empty());
  app().document().redo();
  frames(3);
  ASSERT_EQ(app().document().diagnostics().size(), 1u);
  EXPECT_EQ(app().document().diagnostics()[0].node, 12);
}

// Each loop node says how it runs: in parallel (with its reductions), or serially and why,
// the same words as `loom check`; a node that is not a loop gets no such note.
TEST_F(EditorAppTest, LoopNodesSayWhetherTheyRunInParallelAndWhyNot) {
  start();
  std::string path = (dir_ / "loop_notes.loom.json").string();
  fs::copy_file(std::string(LOOM_SOURCE_DIR) + "/tests/editor_app/loop_notes.loom.json", path);
  ASSERT_TRUE(app().open(path));
  frames(3);
  ASSERT_FALSE(app().session().error().has_value());
  EXPECT_EQ(app().canvas().graph(), (GraphRef{"count", false}));
  std::vector<std::string> serial = app().canvas().notes(2);
  ASSERT_EQ(serial.size(), 1u);
  EXPECT_EQ(serial[0].rfind("serial: node 5 writes the variable of node 1", 0), 0u) << serial[0];
  std::vector<std::string> parallel = app().canvas().notes(7);
  ASSERT_EQ(parallel.size(), 1u);
  EXPECT_NE(parallel[0].find("parallel; reduction"), std::string::npos) << parallel[0];
  EXPECT_TRUE(app().canvas().problems(2).empty());  // a note, not a problem
  EXPECT_TRUE(app().canvas().notes(5).empty());
  // An edit that makes the first loop a reduction changes its note at the next reload.
  graph::Document edited = app().document().doc();
  for (auto& [name, value] : find_node(edited.kernels[0].nodes, 4)->params)
    if (name == "expr") value.s = "a + 2";
  replace_document(app().document(), edited, "a sum");
  frames(3);
  serial = app().canvas().notes(2);
  ASSERT_EQ(serial.size(), 1u);
  EXPECT_NE(serial[0].find("parallel; reduction"), std::string::npos) << serial[0];
}

TEST_F(EditorAppTest, ABrokenDocumentOpensAtItsErrorAndRunsOnceFixed) {
  start();
  std::string path = copy_sample("heat");
  std::string text = read_text(path);
  size_t at = text.find("4.0 * c)");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 8, "4.0 * q)");
  { std::ofstream(path, std::ios::binary | std::ios::trunc) << text; }
  ASSERT_TRUE(app().open(path));  // it reads: open for editing
  frames(3);
  EXPECT_FALSE(app().session().has_program());
  EXPECT_EQ(app().canvas().graph(), (GraphRef{"diffuse", false}));
  EXPECT_EQ(app().document().selection().nodes, std::vector<int>{12});
  ASSERT_EQ(app().document().diagnostics().size(), 1u);
  EXPECT_EQ(app().document().diagnostics()[0].node, 12);
  // The fix: the program starts.
  graph::Document fixed = app().document().doc();
  for (auto& [name, value] : find_node(fixed.kernels[1].nodes, 12)->params)
    if (name == "expr") value.s = "c + k * (n + s + w + e - 4.0 * c)";
  replace_document(app().document(), fixed, "fix");
  frames(3);
  EXPECT_TRUE(app().session().has_program());
  EXPECT_TRUE(app().document().diagnostics().empty());
}

TEST_F(EditorAppTest, AChangeOnDiskReloadsAndCanBeUndone) {
  start();
  std::string path = copy_sample("heat");
  ASSERT_TRUE(app().open(path));
  frames(2);
  std::string text = read_text(path);
  size_t at = text.find("\"k\": 0.2}");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 9, "\"k\": 0.25}");
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // a newer modification time
  { std::ofstream(path, std::ios::binary | std::ios::trunc) << text; }
  ASSERT_TRUE(
      frames_until([&] { return launch_values(app().document().doc())[0].components[0] == 0.25; }));
  EXPECT_FALSE(app().document().dirty());  // it is what the file holds
  ASSERT_TRUE(frames_until(
      [&] { return launch_values(app().session().document())[0].components[0] == 0.25; }));
  EXPECT_EQ(app().document().undo_label(), "Change on disk");
  app().document().undo();
  frames(2);
  EXPECT_EQ(launch_values(app().document().doc())[0].components[0], 0.2);
  EXPECT_TRUE(app().document().dirty());
}

TEST_F(EditorAppTest, EditsSurviveACrashThroughTheRecoveryPrompt) {
  std::string path;
  {
    path = open_heat_with_an_unsaved_edit();
    ASSERT_TRUE(fs::exists(app().session().autosave_path()));
    host_.reset();  // gone without saving
  }
  start();
  ASSERT_TRUE(app().open(path));
  EXPECT_EQ(app().prompt(), "recover");
  frames(2);
  click("prompt.recover");
  EXPECT_EQ(app().prompt(), "");
  EXPECT_EQ(launch_values(app().document().doc())[1].components[0], 0.125);
  EXPECT_TRUE(app().document().dirty());
  EXPECT_EQ(app().document().undo_label(), "Recover unsaved edits");
  // Saving forgets the recovery file.
  app().document().undo();
  key('S', true);
  EXPECT_FALSE(fs::exists(app().session().autosave_path()));
}

// The recovery prompt only when the recovery file holds edits: an undo back to the saved
// document, a quit with "Don't save" and a recovery file equal to the document leave none.
TEST_F(EditorAppTest, TheRecoveryPromptComesOnlyWithEditsToRecover) {
  std::string path;
  {
    path = open_heat_with_an_unsaved_edit();
    ASSERT_TRUE(fs::exists(app().session().autosave_path()));
    key('Z', true);  // back to the saved document
    frames(3);
    EXPECT_FALSE(app().document().dirty());
    EXPECT_FALSE(fs::exists(app().session().autosave_path()));
    unsaved_edit();
    ASSERT_TRUE(fs::exists(app().session().autosave_path()));
    app().request_quit();
    frames(2);
    click("prompt.don't save");
    EXPECT_TRUE(app().quit());
    EXPECT_FALSE(fs::exists(app().session().autosave_path()));
    host_.reset();
  }
  start();
  ASSERT_TRUE(app().open(path));
  EXPECT_EQ(app().prompt(), "");
  // A recovery file that is the document itself (a crash right after saving) asks nothing.
  std::string recovery = app().session().autosave_path();
  fs::create_directories(fs::path(recovery).parent_path());
  fs::copy_file(path, recovery, fs::copy_options::overwrite_existing);
  fs::last_write_time(recovery, fs::last_write_time(path) + std::chrono::seconds(5));
  host_.reset();
  start();
  ASSERT_TRUE(app().open(path));
  EXPECT_EQ(app().prompt(), "");
  EXPECT_FALSE(fs::exists(recovery));
}

// An edit that makes a loop never end: the editor keeps drawing, the loop's node is marked,
// Stop (in the viewport) cancels the frame, and undoing the edit runs again.
void EditorAppTest::never_ending_loop_is_stopped(Backend backend, int n) {
  start(backend);
  std::string path = (dir_ / "loop.loom.json").string();
  std::ofstream(path) << R"({"format": "loom-graph", "version": 2,
  "fields": [{"name": "x", "type": "f32", "shape": [)" +
                             std::to_string(n) + R"(]}],
  "kernels": [{"name": "grow", "nodes": [
    {"id": 2, "type": "range_for", "inputs": {"end0": )" +
                             std::to_string(n) + R"(}, "regions": {"body": [
      {"id": 3, "type": "load", "inputs": {"i0": "2.i0"}, "params": {"field": "x"}},
      {"id": 4, "type": "while", "inputs": {"v": "3", "n": 0}, "regions": {"body": [
        {"id": 5, "type": "carried", "params": {"name": "v"}},
        {"id": 6, "type": "carried", "params": {"name": "n"}},
        {"id": 7, "type": "expr", "inputs": {"n": "6"}, "params": {"expr": "n >= 3"}},
        {"id": 8, "type": "break", "inputs": {"cond": "7"}},
        {"id": 9, "type": "add", "inputs": {"a": "5", "b": 1.0}},
        {"id": 10, "type": "add", "inputs": {"a": "6", "b": 1}},
        {"id": 11, "type": "next", "inputs": {"value": "9"}, "params": {"name": "v"}},
        {"id": 12, "type": "next", "inputs": {"value": "10"}, "params": {"name": "n"}}]}},
      {"id": 13, "type": "store", "inputs": {"i0": "2.i0", "value": "4.v"}, "params": {"field": "x"}}]}}]}],
  "pipelines": [{"name": "step", "launches": [{"kernel": "grow"}]}]})";
  ASSERT_TRUE(app().open(path));
  app().session().set_stuck_limit(std::chrono::milliseconds(400));
  app().session().set_frame_wait(std::chrono::milliseconds(20));  // the UI's frames go on
  frames(3);
  bool llvmpipe = backend == Backend::Vulkan &&
                  app().session().program().device_name().find("llvmpipe") != std::string::npos;
  key(kF5);  // play
  frames(5);
  ASSERT_FALSE(app().session().error().has_value());
  // The break's condition can never hold any more.
  graph::Literal never;
  never.kind = graph::Literal::Kind::String;
  never.s = "n < 0";
  ASSERT_TRUE(set_param(app().document(), GraphRef{"grow", false}, 7, "expr", never).ok);
  if (llvmpipe) {
    // lavapipe ends any loop after 65535 trips, which Loom reports as an error on the loop's
    // node (docs/nodes.md, "Long loops on llvmpipe"): the frame fails and the session pauses.
    ASSERT_TRUE(frames_until([&] { return app().session().error().has_value(); }));
    EXPECT_EQ(app().session().error()->place().kernel, "grow");
    EXPECT_EQ(app().session().error()->place().node, 4);
    EXPECT_NE(app().session().error()->message().find("ended this loop early"), std::string::npos)
        << app().session().error()->what();
    EXPECT_FALSE(app().session().playing());
    return;
  }
  // The editor keeps drawing frames meanwhile: the frame loop is never held by the kernel.
  uint64_t drawn = host_->frames();
  ASSERT_TRUE(frames_until([&] { return app().session().stuck(); }));
  EXPECT_GT(host_->frames(), drawn + 3);
  frames(2);
  EXPECT_NE(app().viewport().controls().count("stop"), 0u);
  ASSERT_TRUE(app().session().error().has_value());
  EXPECT_EQ(app().session().error()->place().kernel, "grow");
  EXPECT_EQ(app().session().error()->place().node, 4);
  click("viewport.stop");
  EXPECT_FALSE(app().session().frame_in_flight());
  EXPECT_FALSE(app().session().playing());
  // Undo the edit and play: it runs again from the last good frame.
  key('Z', true);
  key(kF5);
  int64_t steps = app().session().steps();
  ASSERT_TRUE(frames_until([&] { return app().session().steps() > steps + 2; }));
  EXPECT_FALSE(app().session().stuck());
}

TEST_F(EditorAppTest, ALoopThatNeverEndsIsStoppedFromTheViewport) {
  never_ending_loop_is_stopped(Backend::Cpu, 256);
}

// On a GPU the loop never ends: many elements keep the dispatch running, on the simulation's
// own device while the editor draws on its render device. On lavapipe, which ends loops after
// 65535 trips, it is an error on the loop's node (a few elements are enough).
TEST_F(EditorAppTest, ALoopThatNeverEndsOnVulkanIsStoppedWhileTheEditorDraws) {
  bool llvmpipe = false;
  for (const std::string& d : enumerate_vulkan_devices())
    llvmpipe = llvmpipe || d.find("llvmpipe") != std::string::npos;
  never_ending_loop_is_stopped(Backend::Vulkan, llvmpipe ? 64 : 1 << 17);
}

TEST_F(EditorAppTest, QuittingWithUnsavedEditsAsksFirst) {
  start();
  ASSERT_TRUE(app().open(copy_sample("life")));
  frames(1);
  app().request_quit();
  EXPECT_TRUE(app().quit()) << "nothing unsaved: quits at once";
  host_.reset();
  start();
  ASSERT_TRUE(app().open(copy_sample("nbody")));
  graph::Document d = app().document().doc();
  d.name = "renamed";
  replace_document(app().document(), d, "rename");
  key('Q', true);
  EXPECT_EQ(app().prompt(), "save-before-quit");
  EXPECT_FALSE(app().quit());
  click("prompt.cancel");
  EXPECT_EQ(app().prompt(), "");
  EXPECT_FALSE(app().quit());
  app().request_quit();
  frames(1);
  click("prompt.don't save");
  EXPECT_TRUE(app().quit());
  EXPECT_FALSE(host_->frame());
}

TEST_F(EditorAppTest, ChoosingWhatTheViewportShowsIsForTheSessionSavingItAsTheDefaultIsAnEdit) {
  start();
  ASSERT_TRUE(app().open(copy_sample("mpm88")));
  app().session().play();
  frames(3);
  graph::ViewSettings grid;
  grid.show = "grid_m";
  grid.as = "image";
  graph::ViewSettings particles = app().document().doc().view;
  app().viewport().choose(grid);
  frames(3);
  EXPECT_EQ(app().document().doc().view, particles);  // the document is as it was
  EXPECT_FALSE(app().document().dirty());
  EXPECT_FALSE(app().document().can_undo());
  EXPECT_EQ(app().viewport().view(), grid);
  EXPECT_TRUE(app().viewport().chosen());
  EXPECT_EQ(app().viewport().problem(), "");
  EXPECT_FALSE(app().session().error().has_value());
  // Saved as the default view: the document's view, one undo step.
  app().viewport().on_save_default(grid);
  frames(2);
  EXPECT_EQ(app().document().doc().view, grid);
  EXPECT_TRUE(app().document().dirty());
  EXPECT_EQ(app().document().undo_label(), "Show grid_m as image by default");
  EXPECT_EQ(app().viewport().view(), grid);
  EXPECT_FALSE(app().viewport().chosen());
  app().document().undo();
  frames(2);
  EXPECT_EQ(app().document().doc().view, particles);
  EXPECT_FALSE(app().document().dirty());
  EXPECT_EQ(view_label(app().viewport().view()), "x as points, coloured by v");
}

TEST_F(EditorAppTest, WhilePlayingTheViewportAndSpreadsheetShowValuesAndChoosingAViewIsNoEdit) {
  start();
  std::string path = copy_sample("heat");
  ASSERT_TRUE(app().open(path));
  app().session().play();
  frames(3);
  EXPECT_EQ(view_label(app().viewport().view()), "temperature as image");
  EXPECT_TRUE(app().viewport().legend_shown());  // scalars through the colour map
  // Paused, the value under the cursor is the program's element there (the image's centre).
  app().session().pause();
  frames(2);
  std::optional<ControlRect> scene = app().control("viewport.scene");
  ASSERT_TRUE(scene.has_value());
  move(ImVec2(scene->cx(), scene->cy()));
  frames(1);
  ASSERT_TRUE(app().viewport().hovered().has_value());
  HoveredValue under = *app().viewport().hovered();
  ASSERT_EQ(under.index.size(), 2u);
  EXPECT_NEAR(static_cast<double>(under.index[0]), 128, 2);
  EXPECT_NEAR(static_cast<double>(under.index[1]), 128, 2);
  EXPECT_EQ(under.element, static_cast<size_t>(under.index[0] * 256 + under.index[1]));
  ASSERT_EQ(under.values.size(), 1u);
  EXPECT_EQ(under.values[0],
            app().session().program().array("temperature").component(under.element, 0));
  EXPECT_NE(app().viewport().hovered_text().find("temperature["), std::string::npos);
  // A fixed range: the legend and the colours keep it.
  ValueRange automatic = app().viewport().legend_range();
  app().viewport().color_range("temperature") = ColorRange{true, -1.0f, 3.0f};
  frames(1);
  EXPECT_EQ(app().viewport().legend_range().min, -1.0f);
  EXPECT_EQ(app().viewport().legend_range().max, 3.0f);
  app().viewport().color_range("temperature").fixed = false;
  frames(1);
  EXPECT_EQ(app().viewport().legend_range().max, automatic.max);
  move(ImVec2(5, 300));
  app().session().play();
  // Show › scratch as image: what is shown changes, the document does not.
  click("viewport.show");
  frames(2);  // the menu opens, then settles where it fits on screen
  click("viewport.show.1");
  frames(2);
  EXPECT_EQ(view_label(app().viewport().view()), "scratch as image");
  EXPECT_FALSE(app().document().dirty());
  EXPECT_EQ(app().title(), "heat.loom.json - Loom");
  EXPECT_EQ(app().document().doc().view.show, "temperature");
  // The spreadsheet lists what the viewport shows.
  click("tab.Spreadsheet");
  frames(2);
  EXPECT_EQ(app().spreadsheet().resource(), "scratch");
  EXPECT_EQ(app().spreadsheet().page().elements, 256u * 256u);
  EXPECT_EQ(app().spreadsheet().page().rows, 256u);
  // Its pages: the next one, then "go to index" 3, 7 (element 775, on page 3).
  std::optional<ControlRect> next = app().spreadsheet().controls().at("next");
  click_at(next->cx(), next->cy());
  frames(1);
  EXPECT_EQ(app().spreadsheet().page().page, 1);
  EXPECT_EQ(app().spreadsheet().page().first, 256u);
  std::optional<ControlRect> go = app().spreadsheet().controls().at("goto");
  click_at(go->cx(), go->cy());
  type("3, 7");
  key(257);  // Enter
  frames(1);
  EXPECT_EQ(app().spreadsheet().page().page, 3);
  EXPECT_EQ(app().spreadsheet().page().first, 768u);
  // Show › Save as the default view: an edit, undone by Ctrl+Z.
  click("viewport.show");
  frames(2);
  click("viewport.save-default");
  frames(2);
  EXPECT_EQ(app().document().doc().view.show, "scratch");
  EXPECT_TRUE(app().document().dirty());
  EXPECT_EQ(app().document().undo_label(), "Show scratch as image by default");
  move(ImVec2(5, 300));
  key('Z', true);
  frames(2);
  EXPECT_EQ(app().document().doc().view.show, "temperature");
  EXPECT_FALSE(app().document().dirty());
  EXPECT_EQ(view_label(app().viewport().view()), "temperature as image");
  // Saved to disk, the file still shows temperature.
  EXPECT_NE(read_text(path).find("\"show\": \"temperature\""), std::string::npos);
}

TEST_F(EditorAppTest, AMeshViewMovesTheClothMeshAndAMissingMeshIsReported) {
  start();
  std::string path = copy_sample("cloth");
  ASSERT_TRUE(app().open(path));
  app().session().play();
  frames(3);
  // The sample's mesh is ../meshes/cloth_grid.obj beside assets/graphs: not beside the copy.
  EXPECT_NE(app().viewport().problem().find("cloth_grid.obj"), std::string::npos)
      << app().viewport().problem();
  bool logged = false;
  for (const LogEntry& e : app().session().log())
    logged |= e.message.find("viewport:") == 0 && e.level == LogEntry::Level::Error;
  EXPECT_TRUE(logged);
  graph::Document d = app().document().doc();
  d.view.mesh = std::string(LOOM_SOURCE_DIR) + "/assets/meshes/cloth_grid.obj";
  replace_document(app().document(), d, "mesh");
  frames(3);
  EXPECT_EQ(app().viewport().problem(), "");
  EXPECT_GE(app().viewport().uploads(), 2u);
}

// Issue 16's Optimise panel as a user drives it on the cannon: tick speed and angle, type a
// range, press Optimise, watch the loss fall and the viewport replay the values; Revert leaves
// the document alone; Keep writes the values as one undo step, which Ctrl+Z takes back.
TEST_F(EditorAppTest, TheOptimisePanelTunesTheCannonKeepIsOneUndoStepRevertNone) {
  start();
  std::string path = copy_sample("cannon");
  ASSERT_TRUE(app().open(path));
  frames(3);
  const std::string saved = app().document().save_text();
  auto speed_in = [](const graph::Document& doc) {
    for (const LaunchValue& v : launch_values(doc))
      if (v.pipeline == "init" && v.param == "speed") return v.components.at(0);
    return -1.0;
  };
  OptimisePanel& panel = app().optimise_panel();
  click("tab.Optimise");
  frames(1);
  click("optimise.tune.speed");
  click("optimise.tune.angle");
  retype("optimise.max.speed", "2.5");
  frames(3);  // what was typed stays
  std::vector<OptimisePanel::Row>& rows = panel.rows();
  auto row = [&](const std::string& name) {
    for (OptimisePanel::Row& r : rows)
      if (r.value.name == name) return r;
    ADD_FAILURE() << "no row " << name;
    return OptimisePanel::Row{};
  };
  EXPECT_TRUE(row("speed").tune);
  EXPECT_TRUE(row("angle").tune);
  EXPECT_FALSE(row("dt").tune);
  EXPECT_DOUBLE_EQ(row("speed").max, 2.5);
  retype("optimise.iterations", "4");
  EXPECT_EQ(panel.settings.iterations, 4);

  // A short run, reverted: the document is as it was, the session runs its values again.
  click("optimise.optimise");
  ASSERT_NE(panel.optimiser(), nullptr) << panel.message();
  ASSERT_TRUE(frames_until([&] { return !panel.optimiser()->running(); }));
  frames(2);
  EXPECT_EQ(panel.optimiser()->progress().done(), 4);
  EXPECT_NE(speed_in(app().session().document()), 1.2);  // the viewport replays the tuned run
  uint64_t revision = app().document().revision();
  click("optimise.revert");
  EXPECT_EQ(panel.optimiser(), nullptr);
  EXPECT_EQ(app().document().revision(), revision);
  EXPECT_EQ(app().document().save_text(), saved);
  frames(2);
  EXPECT_DOUBLE_EQ(speed_in(app().session().document()), 1.2);

  // A longer one: the loss falls; Keep; Ctrl+Z.
  retype("optimise.iterations", "30");
  click("optimise.optimise");
  ASSERT_NE(panel.optimiser(), nullptr) << panel.message();
  ASSERT_TRUE(frames_until([&] { return !panel.optimiser()->running(); }));
  frames(2);
  OptimiseProgress p = panel.optimiser()->progress();
  ASSERT_EQ(p.done(), 30) << panel.message();
  EXPECT_LT(p.losses.back(), 0.2 * p.losses.front());
  EXPECT_LE(p.values[0], 2.5);
  // The plot spans the panel (as wide as the parameter table's row).
  std::optional<ControlRect> plot = app().control("optimise.plot");
  std::optional<ControlRect> tune = app().control("optimise.max.speed");
  ASSERT_TRUE(plot.has_value());
  ASSERT_TRUE(tune.has_value());
  EXPECT_GT(plot->x1 - plot->x0, 0.9f * (tune->x1 - plot->x0))
      << plot->x0 << " " << plot->x1 << " / " << tune->x1;
  EXPECT_GT(plot->y1 - plot->y0, 40);
  click("optimise.keep");
  frames(2);
  EXPECT_EQ(panel.optimiser(), nullptr);
  EXPECT_NEAR(speed_in(app().document().doc()), p.values[0], 1e-5);
  EXPECT_TRUE(app().document().dirty());
  EXPECT_NEAR(speed_in(app().session().document()), p.values[0], 1e-5);
  key('Z', true);  // Ctrl+Z: the panel has the focus, the app undoes
  frames(2);
  EXPECT_EQ(app().document().save_text(), saved);
  EXPECT_DOUBLE_EQ(speed_in(app().session().document()), 1.2);
}

TEST_F(EditorAppTest, AKernelClickedInTheProgramPanelShowsItsGraphAndItsCode) {
  start();
  ASSERT_TRUE(app().open(copy_sample("mpm88")));
  frames(2);
  EXPECT_EQ(app().canvas().graph().name, "seed");
  click("program.kernel.p2g");
  frames(2);
  EXPECT_EQ(app().canvas().graph(), (GraphRef{"p2g", false}));
  EXPECT_GT(app().canvas().stats().nodes_total, 10);
  // The code panel follows: the IR of p2g.
  EXPECT_EQ(app().panels().selected_kernel, "p2g");
  EXPECT_EQ(app().panels().code.rfind("kernel p2g", 0), 0u) << app().panels().code.substr(0, 200);
}

TEST_F(EditorAppTest, DraggingTheGapBetweenPanelsResizesThem) {
  start();
  ASSERT_TRUE(app().open(copy_sample("heat")));
  frames(2);
  std::optional<ControlRect> graph = app().control("panel.Graph");
  ASSERT_TRUE(graph.has_value());
  float width = graph->x1 - graph->x0;
  ImGuiIO& io = host_->io();
  io.MousePos = ImVec2(graph->x0 - 2, (graph->y0 + graph->y1) / 2);  // the gap left of the graph
  frames(1);
  io.MouseDown[0] = true;
  frames(1);
  io.MousePos.x += 100;
  frames(2);
  io.MouseDown[0] = false;
  frames(2);
  graph = app().control("panel.Graph");
  EXPECT_NEAR(graph->x1 - graph->x0, width - 100, 2.0f);
}

// On Vulkan the simulation has a device of its own (a runaway dispatch cannot hold the queue
// the editor draws with); the viewport shows its data all the same.
TEST_F(EditorAppTest, TheSimulationRunsOnVulkanWhenAskedTo) {
  start(Backend::Vulkan);
  ASSERT_TRUE(app().open(copy_sample("julia")));
  app().session().play();
  frames(4);
  ASSERT_TRUE(app().session().has_program());
  EXPECT_EQ(app().session().program().backend(), Backend::Vulkan);
  EXPECT_GE(app().session().steps(), 4);
  EXPECT_GE(app().viewport().uploads(), 4u);
  EXPECT_EQ(app().viewport().problem(), "");
}

TEST_F(EditorAppTest, AutoKeepsTheSimulationOnTheCpuBesideASoftwareRenderer) {
  start(Backend::Auto);
  bool software = false;
  for (const LogEntry& e : app().session().log())
    software |= e.message.find("renders on the CPU too") != std::string::npos;
  ASSERT_TRUE(app().open(copy_sample("life")));
  frames(1);
  EXPECT_EQ(app().session().program().backend(), software ? Backend::Cpu : Backend::Vulkan);
}

}  // namespace
}  // namespace loom::editor
