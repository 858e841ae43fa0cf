// The proof of the editor as an authoring tool: a 2-d ripple built from File › New with
// mouse and keyboard events only, as a technical artist would (no document text written by
// the test): a second field, a laplacian function with five ports, a wave kernel with a
// 5-point stencil calling it, an advance kernel, the launches of the step pipeline, a comment
// around the stencil, the view; saved, then the simulated field checked against a C++
// reference. The number of input events it took is printed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include "compiler/graph/document_json.h"
#include "compiler/graph/validate.h"
#include "editor/app/editor_host.h"
#include "editor/model/graph_access.h"
#include "tests/support/vulkan_required.h"

namespace loom::editor {
namespace {

namespace fs = std::filesystem;

constexpr int kTab = 258, kEnter = 257, kEscape = 256, kHome = 268, kF6 = 295, kF7 = 296;
constexpr int kN = 128;  // the starter program's field size

class RippleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("loom-ripple-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    ::setenv("LOOM_CACHE_DIR", (dir_ / "cache").c_str(), 1);
    LOOM_REQUIRE_VULKAN_OR_SKIP();  // the host draws with Vulkan
    HostOptions o;
    o.headless = true;
    o.width = 1920;
    o.height = 1080;
    o.validation = true;
    o.backend = Backend::Cpu;
    o.offline_cache = false;
    host_ = std::make_unique<EditorHost>(o);
    frames(6);
  }
  void TearDown() override {
    if (host_) {
      std::vector<std::string> messages = host_->validation_messages();
      EXPECT_TRUE(messages.empty()) << messages.size() << " Vulkan validation message(s)";
    }
    host_.reset();
    fs::remove_all(dir_);
  }

  EditorApp& app() { return host_->app(); }
  NodeCanvas& canvas() { return app().canvas(); }
  const graph::Document& doc() { return app().document().doc(); }
  void frames(int n) {
    for (int i = 0; i < n; ++i) host_->frame();
  }

  // ---- input events, counted
  void move(ImVec2 p) {
    host_->io().MousePos = p;
    ++events_;
    frames(1);
  }
  void button(int b, bool down) {
    host_->io().MouseDown[b] = down;
    ++events_;
    frames(1);
  }
  void click_at(ImVec2 p) {
    move(p);
    button(0, true);
    button(0, false);
    frames(1);
  }
  void click(const std::string& control) {
    std::optional<ControlRect> r = app().control(control);
    ASSERT_TRUE(r.has_value()) << "no control named " << control;
    click_at(ImVec2(r->cx(), r->cy()));
    frames(2);
  }
  void drag(ImVec2 from, ImVec2 to, int b = 0) {
    move(from);
    button(b, true);
    for (int i = 1; i <= 6; ++i)
      move(ImVec2(from.x + (to.x - from.x) * i / 6, from.y + (to.y - from.y) * i / 6));
    button(b, false);
    frames(1);
  }
  void key(int code, bool ctrl = false) {
    ImGuiIO& io = host_->io();
    io.KeyCtrl = ctrl;
    io.KeysDown[code] = true;
    ++events_;
    frames(1);
    io.KeysDown[code] = false;
    io.KeyCtrl = false;
    frames(1);
  }
  // A letter key as a keyboard gives it: the key and its character in the same frame.
  void letter(char c) {
    ImGuiIO& io = host_->io();
    int code = std::toupper(static_cast<unsigned char>(c));
    io.KeysDown[code] = true;
    io.AddInputCharacter(static_cast<unsigned>(c));
    ++events_;
    frames(1);
    io.KeysDown[code] = false;
    frames(1);
  }
  void type(const std::string& text) {
    for (char c : text) {
      host_->io().AddInputCharacter(static_cast<unsigned>(c));
      ++events_;
      frames(1);
    }
  }
  void retype(const std::string& control, const std::string& text) {
    click(control);
    key('A', true);
    type(text);
    key(kEnter);
    frames(2);
  }

  // ---- the canvas
  ImVec2 screen(Vec2 p) { return canvas().view().to_screen(p); }
  GraphRef shown() { return canvas().graph(); }
  int last_id() { return next_node_id(doc(), shown()) - 1; }
  // Pans (middle drag) so canvas point `p` is near the middle of the canvas.
  void show_point(Vec2 p) {
    ImVec2 o = canvas().canvas_screen_origin(), s = canvas().canvas_screen_size();
    ImVec2 at = screen(p), mid(o.x + s.x * 0.5f, o.y + s.y * 0.5f);
    if (at.x > o.x + 60 && at.y > o.y + 60 && at.x < o.x + s.x - 260 && at.y < o.y + s.y - 200)
      return;
    drag(mid, ImVec2(mid.x - (at.x - mid.x), mid.y - (at.y - mid.y)), 2);
  }
  // A node from the palette (Tab, a query, Enter) with the mouse at canvas point `p`.
  int add(Vec2 p, const std::string& query) {
    show_point(p);
    int before = next_node_id(doc(), shown());
    move(screen(p));
    key(kTab);
    type(query);
    key(kEnter);
    frames(2);
    EXPECT_EQ(next_node_id(doc(), shown()), before + 1) << "palette: " << query;
    return last_id();
  }
  // A declaration dragged from the program panel to canvas point `p` (Ctrl: load, Alt: store).
  int drop(const std::string& entry, Vec2 p, bool store) {
    show_point(p);
    int before = next_node_id(doc(), shown());
    std::optional<ControlRect> r = app().control("program." + entry);
    EXPECT_TRUE(r.has_value()) << entry;
    if (!r) return -1;
    ImGuiIO& io = host_->io();
    (store ? io.KeyAlt : io.KeyCtrl) = true;
    drag(ImVec2(r->cx(), r->cy()), screen(p));
    io.KeyAlt = io.KeyCtrl = false;
    frames(2);
    EXPECT_EQ(next_node_id(doc(), shown()), before + 1) << "dropped " << entry;
    return last_id();
  }
  // Moves a node by its title to canvas point `p` (its new top-left).
  void place(int id, Vec2 p) {
    std::optional<ImVec2> at = canvas().node_screen_pos(id);
    ASSERT_TRUE(at.has_value()) << id;
    float z = canvas().view().zoom;
    ImVec2 grab(at->x + 14 * z, at->y + 8 * z);
    ImVec2 to = screen(p);
    drag(grab, ImVec2(to.x + 14 * z, to.y + 8 * z));
  }
  bool on_canvas(std::optional<ImVec2> p) {
    ImVec2 o = canvas().canvas_screen_origin(), s = canvas().canvas_screen_size();
    return p && p->x > o.x + 4 && p->y > o.y + 4 && p->x < o.x + s.x - 4 && p->y < o.y + s.y - 4;
  }
  void link(int from, const char* out, int to, const char* in) {
    std::optional<ImVec2> a = canvas().pin_screen_pos(PinRef{from, out}, true);
    std::optional<ImVec2> b = canvas().pin_screen_pos(PinRef{to, in}, false);
    if (!on_canvas(a) || !on_canvas(b)) {  // both ends in view: frame everything
      key(kHome);
      frames(2);
      a = canvas().pin_screen_pos(PinRef{from, out}, true);
      b = canvas().pin_screen_pos(PinRef{to, in}, false);
    }
    ASSERT_TRUE(a && b) << from << "." << out << " -> " << to << "." << in;
    drag(*a, *b);
    const graph::Node* n = find_node(doc(), shown(), to);
    ASSERT_NE(n, nullptr);
    const graph::Input* input = n->input(in);
    ASSERT_TRUE(input && input->linked && input->from_node == from)
        << from << "." << out << " -> " << to << "." << in << ": " << canvas().status();
  }
  // Types `text` into the value editor's field `name` of node `id` (Enter on the node).
  void set_value(int id, const std::string& name, const std::string& text) {
    std::optional<Vec2> where = node_position(doc(), shown().name, id);
    if (where) show_point(*where);
    std::optional<ImVec2> at = canvas().node_screen_pos(id);
    ASSERT_TRUE(at.has_value());
    float z = canvas().view().zoom;
    click_at(ImVec2(at->x + 30 * z, at->y + 8 * z));
    key(kEnter);
    frames(2);
    ASSERT_EQ(canvas().value_editor_node(), id);
    std::optional<ImVec2> field = canvas().value_field_screen_pos(name);
    ASSERT_TRUE(field.has_value()) << name;
    click_at(*field);
    key('A', true);
    type(text);
    key(kEnter);
    key(kEscape);
    frames(1);
  }
  // The top-left of the body zone of region node `loop`, in canvas units.
  Vec2 zone_origin(int loop) {
    int z = canvas().geometry().zone_of(RegionRef{loop, "body"});
    EXPECT_GE(z, 0);
    if (z < 0) return Vec2{};
    const auto& rect = canvas().geometry().zones()[static_cast<size_t>(z)].rect;
    return Vec2{rect.x0, rect.y0};
  }
  // A point inside the body zone, free of nodes (its bottom-left corner inside the padding).
  Vec2 in_zone(int loop) {
    int z = canvas().geometry().zone_of(RegionRef{loop, "body"});
    const auto& rect = canvas().geometry().zones()[static_cast<size_t>(z)].rect;
    return Vec2{rect.x0 + 4, rect.y1 - 6};
  }
  // A node made in the loop's body, then moved to `p`.
  int body_node(int loop, const std::string& query, Vec2 p) {
    int id = add(in_zone(loop), query);
    place(id, p);
    EXPECT_EQ(region_of(doc(), shown(), id), (RegionRef{loop, "body"})) << query;
    return id;
  }
  int body_drop(int loop, const std::string& entry, bool store, Vec2 p) {
    int id = drop(entry, in_zone(loop), store);
    place(id, p);
    EXPECT_EQ(region_of(doc(), shown(), id), (RegionRef{loop, "body"})) << entry;
    return id;
  }

  fs::path dir_;
  std::unique_ptr<EditorHost> host_;
  int events_ = 0;
};

// The same ripple in C++: init, then `steps` times wave (k) and advance.
void reference(int steps, float k, std::vector<float>* u, std::vector<float>* v) {
  u->assign(kN * kN, 0.0f);
  v->assign(kN * kN, 0.0f);
  for (int i = 0; i < kN; ++i)
    for (int j = 0; j < kN; ++j)
      (*u)[static_cast<size_t>(i * kN + j)] =
          std::sin(static_cast<float>(i) * 0.1f) * std::cos(static_cast<float>(j) * 0.1f);
  auto at = [](std::vector<float>& a, int i, int j) -> float& {
    return a[static_cast<size_t>(i * kN + j)];
  };
  for (int s = 0; s < steps; ++s) {
    for (int i = 1; i < kN - 1; ++i)
      for (int j = 1; j < kN - 1; ++j) {
        float c = at(*u, i, j);
        float lap =
            at(*u, i - 1, j) + at(*u, i + 1, j) + at(*u, i, j - 1) + at(*u, i, j + 1) - 4.0f * c;
        at(*v, i, j) += k * lap;
      }
    for (int i = 0; i < kN; ++i)
      for (int j = 0; j < kN; ++j) at(*u, i, j) += at(*v, i, j);
  }
}

TEST_F(RippleTest, ARippleFromFileNewWithMouseAndKeyboardOnly) {
  // File › New: the starter program (u, init, step, their pipelines, u as an image).
  key('N', true);
  frames(2);
  ASSERT_TRUE(doc().field("u") && doc().kernel("init"));

  // ---- data: a second field, v
  click("program.add.field");
  click("program.add.data.field");
  retype("program.inspector.name", "v");
  ASSERT_TRUE(doc().field("v"));
  EXPECT_EQ(doc().field("v")->shape, (std::vector<int64_t>{128, 128}));

  // ---- init also clears v: a store of v in the loop's body
  click("program.kernel.init");
  ASSERT_EQ(shown().name, "init");
  key(kHome);
  Vec2 z = zone_origin(1);
  int clear_v = body_drop(1, "field.v", /*store=*/true, Vec2{z.x + 520, z.y + 150});
  link(1, "i0", clear_v, "i0");  // one index at a time
  link(1, "i1", clear_v, "i1");
  set_value(clear_v, "value", "0.0");

  // ---- the laplacian, a function with five inputs
  click("program.add.function");
  retype("program.inspector.name", "lap");
  ASSERT_TRUE(doc().function("lap"));
  retype("program.inspector.port.0", "c");  // the first input, x, renamed
  for (int p = 0; p < 4; ++p) click("program.inspector.add_input");
  const char* names[] = {"n", "s", "e", "w"};
  for (int p = 0; p < 4; ++p) {
    // Each new port (in1, in2, ...) renamed in its field.
    retype("program.inspector.port." + std::to_string(p + 1), names[p]);
  }
  ASSERT_EQ(doc().function("lap")->inputs.size(), 5u);
  ASSERT_EQ(shown(), (GraphRef{"lap", true}));
  key(kHome);
  const std::vector<graph::Node>& fnodes = *graph_nodes(doc(), shown());
  int input_c = -1, output = -1;
  for (const graph::Node& n : fnodes) {
    if (n.type == "input") input_c = n.id;
    if (n.type == "output") output = n.id;
  }
  ASSERT_GE(input_c, 0);
  ASSERT_GE(output, 0);
  std::optional<Vec2> c_at = node_position(doc(), "lap", input_c);
  Vec2 base = c_at.value_or(Vec2{0, 0});
  int inputs[5] = {input_c, 0, 0, 0, 0};
  for (int p = 0; p < 4; ++p)
    inputs[p + 1] = add(Vec2{base.x, base.y + 90.0f * static_cast<float>(p + 1)},
                        std::string("input ") + names[p]);
  int formula = add(Vec2{base.x + 260, base.y + 120}, "expr");
  set_value(formula, "expr", "n + s + e + w - 4.0 * c");
  key(kHome);
  const char* vars[5] = {"c", "n", "s", "e", "w"};
  for (int p = 0; p < 5; ++p) link(inputs[p], "out", formula, vars[p]);
  place(output, Vec2{base.x + 560, base.y + 120});
  link(formula, "out", output, "y");

  // ---- the wave kernel: v += k * lap(u) over the interior, through a 5-point stencil
  click("program.add.kernel");
  retype("program.inspector.name", "wave");
  click("program.inspector.add_param");
  retype("program.inspector.param.0", "k");
  ASSERT_EQ(shown(), (GraphRef{"wave", false}));
  Vec2 origin = canvas().view().to_canvas(
      ImVec2(canvas().canvas_screen_origin().x + 60, canvas().canvas_screen_origin().y + 80));
  int loop = add(origin, "range_for");
  for (const char* pin : {"begin0", "begin1"}) set_value(loop, pin, "1");
  for (const char* pin : {"end0", "end1"}) set_value(loop, pin, "127");
  int param_k = add(Vec2{origin.x, origin.y + 260}, "param k");
  key(kHome);
  z = zone_origin(loop);
  // Column by column: the four neighbour indices, the five loads, the call, v, the update.
  int idx[4];
  const char* ops[4] = {"sub", "add", "sub", "add"};
  for (int q = 0; q < 4; ++q) {
    idx[q] = body_node(loop, ops[q], Vec2{z.x + 30, z.y + 40 + 100.0f * static_cast<float>(q)});
  }
  int loads[5];
  for (int q = 0; q < 5; ++q)
    loads[q] = body_drop(loop, "field.u", false,
                         Vec2{z.x + 280, z.y + 40 + 100.0f * static_cast<float>(q)});
  int call = body_drop(loop, "function.lap", false, Vec2{z.x + 540, z.y + 40});
  int load_v = body_drop(loop, "field.v", false, Vec2{z.x + 540, z.y + 340});
  int update = body_node(loop, "expr", Vec2{z.x + 780, z.y + 140});
  set_value(update, "expr", "v + k * l");
  int store_v = body_drop(loop, "field.v", true, Vec2{z.x + 1000, z.y + 140});
  key(kHome);
  // Indices: i0 - 1, i0 + 1, i1 - 1, i1 + 1.
  for (int q = 0; q < 4; ++q) {
    link(loop, q < 2 ? "i0" : "i1", idx[q], "a");
    set_value(idx[q], "b", "1");
  }
  // Loads: centre (i0, i1), north (i0-1, i1), south (i0+1, i1), west (i0, i1-1), east (i0, i1+1).
  const int rows[5] = {-1, idx[0], idx[1], -1, -1};
  const int cols[5] = {-1, -1, -1, idx[2], idx[3]};
  for (int q = 0; q < 5; ++q) {
    if (rows[q] < 0)
      link(loop, "i0", loads[q], "i0");
    else
      link(rows[q], "out", loads[q], "i0");
    if (cols[q] < 0)
      link(loop, "i1", loads[q], "i1");
    else
      link(cols[q], "out", loads[q], "i1");
  }
  for (int q = 0; q < 5; ++q) link(loads[q], "out", call, vars[q]);
  link(loop, "i0", load_v, "i0");
  link(loop, "i1", load_v, "i1");
  link(load_v, "out", update, "v");
  link(param_k, "out", update, "k");
  link(call, "y", update, "l");
  link(loop, "i0", store_v, "i0");
  link(loop, "i1", store_v, "i1");
  link(update, "out", store_v, "value");
  // A comment around the stencil: box-select the index nodes and loads, then C.
  std::optional<ImVec2> a = canvas().node_screen_pos(idx[0]);
  std::optional<ImVec2> b = canvas().node_screen_pos(loads[4]);
  ASSERT_TRUE(a && b);
  float zoom = canvas().view().zoom;
  drag(ImVec2(a->x - 12, a->y - 12), ImVec2(b->x + 200 * zoom, b->y + 90 * zoom));
  EXPECT_GE(app().document().selection().nodes.size(), 9u);
  letter('c');
  frames(2);
  key('A', true);
  type("5-point stencil");
  key(kEnter);

  // ---- advance: u += v everywhere
  click("program.add.kernel");
  retype("program.inspector.name", "advance");
  origin = canvas().view().to_canvas(
      ImVec2(canvas().canvas_screen_origin().x + 60, canvas().canvas_screen_origin().y + 80));
  int all = add(origin, "range_for");
  set_value(all, "end0", "128");
  set_value(all, "end1", "128");
  key(kHome);
  z = zone_origin(all);
  int load_u = body_drop(all, "field.u", false, Vec2{z.x + 30, z.y + 40});
  int load_v2 = body_drop(all, "field.v", false, Vec2{z.x + 30, z.y + 160});
  int sum = body_node(all, "add", Vec2{z.x + 280, z.y + 100});
  int store_u = body_drop(all, "field.u", true, Vec2{z.x + 500, z.y + 100});
  key(kHome);
  for (int load : {load_u, load_v2, store_u}) {
    link(all, "i0", load, "i0");
    link(all, "i1", load, "i1");
  }
  link(load_u, "out", sum, "a");
  link(load_v2, "out", sum, "b");
  link(sum, "out", store_u, "value");

  // ---- the step pipeline: wave (k = 0.2) then advance, instead of the starter's step
  click("program.pipeline.step");
  click("program.inspector.remove_launch.0");
  click("program.inspector.add_launch");
  frames(2);
  click("program.inspector.launch.wave");
  click("program.inspector.add_launch");
  frames(2);
  click("program.inspector.launch.advance");
  retype("program.inspector.arg.0.k", "0.2");
  ASSERT_EQ(doc().pipeline("step")->launches.size(), 2u);
  EXPECT_EQ(doc().pipeline("step")->launches[0].kernel, "wave");

  // ---- save it: Ctrl+S on an untitled document asks where
  std::string path = (dir_ / "ripple.loom.json").string();
  key('S', true);
  ASSERT_EQ(app().prompt(), "save-as");
  frames(2);
  retype("prompt.path", path);  // Enter saves
  ASSERT_EQ(app().prompt(), "");
  ASSERT_TRUE(fs::exists(path));
  EXPECT_FALSE(app().document().dirty());
  std::printf("[ ripple   ] built from File > New and saved with %d input events\n", events_);

  // ---- the saved document: what was built, and valid
  graph::Document saved = graph::load_document_file(path);
  EXPECT_NO_THROW(graph::validate_document(saved));
  EXPECT_TRUE(saved.field("u") && saved.field("v"));
  ASSERT_TRUE(saved.function("lap"));
  EXPECT_EQ(saved.function("lap")->inputs.size(), 5u);
  ASSERT_TRUE(saved.kernel("wave") && saved.kernel("advance"));
  EXPECT_EQ(saved.kernel("wave")->params.size(), 1u);
  const graph::GraphLayout* layout = nullptr;
  for (const graph::GraphLayout& l : saved.layout)
    if (l.graph == "wave") layout = &l;
  ASSERT_NE(layout, nullptr);
  ASSERT_EQ(layout->comments.size(), 1u);
  EXPECT_EQ(layout->comments[0].title, "5-point stencil");
  EXPECT_EQ(saved.view.show, "u");

  // ---- run it: reset (init), five steps; u against the C++ ripple
  frames(2);
  ASSERT_FALSE(app().session().error().has_value()) << app().session().error()->what();
  key(kF7);
  for (int s = 0; s < 5; ++s) key(kF6);
  frames(2);
  std::vector<float> u, v;
  reference(5, 0.2f, &u, &v);
  ArrayView field = app().session().program().array("u");
  double worst = 0;
  for (int i = 0; i < kN * kN; i += 37)
    worst = std::max(worst, std::fabs(field.component(i, 0) - u[static_cast<size_t>(i)]));
  EXPECT_LT(worst, 1e-4);
  EXPECT_GT(std::fabs(field.component(64 * kN + 64, 0) - std::sin(6.4f) * std::cos(6.4f)), 1e-6)
      << "the ripple moved nothing";
}

}  // namespace
}  // namespace loom::editor
