// loom-editor-tour OUT_DIR: the editor driven as a person would (mouse and keys through
// Dear ImGui's IO, headless on the render device), a PNG of each step it shows: File › New,
// the program panel's inspectors, a field dragged onto the canvas, the node palette, Ctrl+F,
// the Open prompt, a probe and the spreadsheet. For reviews and the docs: what a feature looks
// like, from a clean build, without a display.
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>

#include "editor/app/editor_host.h"
#include "runtime/common/error.h"
#include "runtime/render/png.h"

namespace {

namespace fs = std::filesystem;
using loom::editor::ControlRect;
using loom::editor::EditorHost;

class Tour {
 public:
  Tour(EditorHost& host, fs::path out) : host_(host), out_(std::move(out)) {}

  void frames(int n) {
    for (int i = 0; i < n; ++i) host_.frame();
  }
  void move(float x, float y) {
    host_.io().MousePos = ImVec2(x, y);
    frames(1);
  }
  void click_at(float x, float y) {
    move(x, y);
    host_.io().MouseDown[0] = true;
    frames(1);
    host_.io().MouseDown[0] = false;
    frames(2);
  }
  bool click(const std::string& control) {
    std::optional<ControlRect> r = host_.app().control(control);
    if (!r) {
      std::fprintf(stderr, "loom-editor-tour: no control '%s'\n", control.c_str());
      return false;
    }
    click_at(r->cx(), r->cy());
    return true;
  }
  void drag(ImVec2 from, ImVec2 to) {
    move(from.x, from.y);
    host_.io().MouseDown[0] = true;
    frames(1);
    for (int i = 1; i <= 8; ++i)
      move(from.x + (to.x - from.x) * i / 8, from.y + (to.y - from.y) * i / 8);
    host_.io().MouseDown[0] = false;
    frames(2);
  }
  void key(int code, bool ctrl = false) {
    host_.io().KeyCtrl = ctrl;
    host_.io().KeysDown[code] = true;
    frames(1);
    host_.io().KeysDown[code] = false;
    host_.io().KeyCtrl = false;
    frames(1);
  }
  void type(const std::string& text) {
    for (char c : text) {
      host_.io().AddInputCharacter(static_cast<unsigned>(c));
      frames(1);
    }
  }
  void shot(const std::string& name) {
    host_.frame(true);
    fs::path path = out_ / (name + ".png");
    loom::write_png(path.string(), host_.take_capture());
    std::printf("%s\n", path.c_str());
  }

 private:
  EditorHost& host_;
  fs::path out_;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2 || std::string(argv[1]) == "--help") {
    std::fprintf(stderr,
                 "usage: loom-editor-tour OUT_DIR   (PNG screenshots of the editor's features)\n");
    return argc == 2 ? 0 : 2;
  }
  try {
    fs::create_directories(argv[1]);
    loom::editor::HostOptions options;
    options.headless = true;
    options.width = 1600;
    options.height = 900;
    options.hide_timings = true;
    EditorHost host(options);
    Tour t(host, argv[1]);
    t.frames(6);
    t.shot("01-file-new");  // the starter program, running
    // Data: + then field, named and shaped in the inspector.
    t.click("program.add.field");
    t.frames(2);
    t.shot("02-add-data-menu");
    t.click("program.add.data.field");
    t.click("program.inspector.name");
    t.key('A', true);
    t.type("v");
    t.key(257);

    t.click("program.inspector.shape");
    t.key('A', true);
    t.type("64x0");
    t.key(257);
    t.shot("03-field-refused-shape");
    t.click("program.kernel.step");
    t.frames(2);
    t.shot("04-kernel-inspector");
    t.click("program.pipeline.step");
    t.frames(2);
    t.shot("05-pipeline-inspector");
    // The field u dragged onto the step kernel's canvas: load or store?
    t.click("program.kernel.step");
    std::optional<ControlRect> u = host.app().control("program.field.u");
    ImVec2 spot = host.app().canvas().view().to_screen(loom::editor::Vec2{300, 420});
    if (u) t.drag(ImVec2(u->cx(), u->cy()), spot);
    t.frames(2);
    t.shot("06-field-dropped-on-canvas");
    t.click("drop.load");
    // The palette over the canvas: Tab, by category; then a query.
    t.click_at(spot.x + 200, spot.y + 40);
    t.key(258);
    t.frames(2);
    t.shot("07-palette-categories");
    t.type("sin");
    t.frames(2);
    t.shot("08-palette-query");
    t.key(256);  // Escape
    t.key('F', true);
    t.type("store");
    t.frames(2);
    t.shot("09-find");
    t.key(256);
    t.key('O', true);
    t.frames(3);
    t.shot("10-open-prompt");
    t.key(256);
    // The probe: the step kernel's product, for every cell, in the viewport; then the
    // spreadsheet of u while playing.
    t.click("program.kernel.step");
    std::optional<ImVec2> mul = host.app().canvas().node_screen_pos(4);
    if (mul) t.click_at(mul->x + 20, mul->y + 6);
    host.app().set_probe(true);
    t.key(294);  // F5: play
    t.frames(20);
    t.shot("11-probe");
    host.app().set_probe(false);
    t.click("tab.Spreadsheet");
    t.frames(10);
    t.shot("12-spreadsheet");
    return 0;
  } catch (const loom::Error& e) {
    std::fprintf(stderr, "loom-editor-tour: %s\n", e.what());
    return 1;
  }
}
