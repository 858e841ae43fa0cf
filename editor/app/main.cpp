// loom-editor: the visual kernel editor. Opens a graph document in a window (GLFW, Vulkan,
// Dear ImGui); --headless renders offscreen instead, for screenshots and scripted runs.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "editor/app/editor_host.h"
#include "runtime/common/error.h"

namespace {

const char* kUsage = R"(usage: loom-editor [DOC] [options]

Opens DOC (a .loom.json graph document; a new one without it) in the editor.

  --backend B         the simulation: auto (default: Vulkan on the render GPU, a device of
                      its own; the CPU when the GPU is a software renderer), vulkan or cpu
  --device D          the Vulkan device: an index or part of its name (see `loom devices`)
  --validate          Vulkan validation layer; any message fails the run (exit code 3)
  --size WxH          window or image size in pixels (default 1600x900)
  --play              start playing at once
  --headless          render offscreen: no window, no display needed (needs --frames)
  --frames N          quit after N frames
  --screenshot PNG    write the last frame as a PNG file
  --viewport-screenshot PNG   write the viewport's scene of the last frame
  --hide-timings      print times as "--" (reproducible screenshots)
  --spreadsheet       show the Spreadsheet tab (beside Code) instead of the code
  --mouse X,Y         headless: the cursor at pixel X,Y (a tooltip in a screenshot)
  --no-vsync          do not wait for the display between frames
  --cache-dir DIR     compiled kernels (default $LOOM_CACHE_DIR or ~/.cache/loom)
  --help              this text
)";

[[noreturn]] void usage_error(const std::string& message) {
  std::fprintf(stderr, "loom-editor: %s\n(loom-editor --help lists the options)\n",
               message.c_str());
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  loom::editor::HostOptions options;
  options.backend = loom::Backend::Auto;
  std::string doc, screenshot, viewport_screenshot;
  long frames = -1;
  bool play = false, spreadsheet = false;
  float mouse_x = -1, mouse_y = -1;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage_error(a + " needs a value");
      return argv[++i];
    };
    if (a == "--help" || a == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (a == "--backend") {
      std::string b = value();
      if (b == "auto")
        options.backend = loom::Backend::Auto;
      else if (b == "vulkan")
        options.backend = loom::Backend::Vulkan;
      else if (b == "cpu")
        options.backend = loom::Backend::Cpu;
      else
        usage_error("unknown backend '" + b + "' (choose auto, vulkan or cpu)");
    } else if (a == "--device") {
      options.device = value();
    } else if (a == "--validate") {
      options.validation = true;
    } else if (a == "--size") {
      std::string s = value();
      unsigned w = 0, h = 0;
      char x = 0;
      if (std::sscanf(s.c_str(), "%u%c%u", &w, &x, &h) != 3 || x != 'x' || w < 320 || h < 240 ||
          w > 8192 || h > 8192)
        usage_error("--size wants WIDTHxHEIGHT from 320x240 to 8192x8192, not '" + s + "'");
      options.width = w;
      options.height = h;
    } else if (a == "--play") {
      play = true;
    } else if (a == "--headless") {
      options.headless = true;
    } else if (a == "--frames") {
      std::string s = value();
      char* end = nullptr;
      frames = std::strtol(s.c_str(), &end, 10);
      if (s.empty() || *end || frames < 1)
        usage_error("--frames wants a positive count, not '" + s + "'");
    } else if (a == "--screenshot") {
      screenshot = value();
    } else if (a == "--viewport-screenshot") {
      viewport_screenshot = value();
    } else if (a == "--hide-timings") {
      options.hide_timings = true;
    } else if (a == "--spreadsheet") {
      spreadsheet = true;
    } else if (a == "--mouse") {
      std::string s = value();
      char comma = 0;
      if (std::sscanf(s.c_str(), "%f%c%f", &mouse_x, &comma, &mouse_y) != 3 || comma != ',' ||
          mouse_x < 0 || mouse_y < 0)
        usage_error("--mouse wants X,Y in pixels, not '" + s + "'");
    } else if (a == "--no-vsync") {
      options.vsync = false;
    } else if (a == "--cache-dir") {
      options.cache_dir = value();
    } else if (!a.empty() && a[0] == '-') {
      usage_error("unknown option '" + a + "'");
    } else if (doc.empty()) {
      doc = a;
    } else {
      usage_error("one document at a time ('" + doc + "' and '" + a + "')");
    }
  }
  if (options.headless && frames < 0)
    usage_error("--headless runs a fixed number of frames: give --frames N");
  if ((!screenshot.empty() || !viewport_screenshot.empty()) && frames < 0)
    usage_error("a screenshot is of the last frame: give --frames N");

  try {
    loom::editor::EditorHost host(options);
    if (!doc.empty() && !host.app().open(doc)) {
      std::fprintf(stderr, "loom-editor: %s\n", host.app().session().log().back().message.c_str());
      if (frames > 0) return 1;  // a scripted run must not go on with something else
    }
    if (play) host.app().session().play();
    if (spreadsheet) host.app().spreadsheet().select_tab = true;
    if (mouse_x >= 0 && !host.windowed()) host.io().MousePos = ImVec2(mouse_x, mouse_y);
    int status = 0;
    while (true) {
      bool last = frames > 0 && static_cast<long>(host.frames()) + 1 >= frames;
      bool capture = last && (!screenshot.empty() || !viewport_screenshot.empty());
      if (!host.frame(capture) || last) {
        if (capture) {
          loom::RgbaImage image = host.take_capture();
          if (!screenshot.empty()) loom::write_png(screenshot, image);
          if (!viewport_screenshot.empty())
            loom::write_png(viewport_screenshot, host.viewport_of(image));
        }
        break;
      }
      if (options.validation) {
        std::vector<std::string> messages = host.validation_messages();
        for (const std::string& m : messages)
          std::fprintf(stderr, "loom-editor: validation: %s\n", m.c_str());
        if (!messages.empty()) status = 3;
      }
    }
    if (options.validation)
      for (const std::string& m : host.validation_messages()) {
        std::fprintf(stderr, "loom-editor: validation: %s\n", m.c_str());
        status = 3;
      }
    // Scripted runs report what went wrong in the document.
    if (frames > 0 && host.app().session().error())
      std::fprintf(stderr, "loom-editor: %s\n", host.app().session().error()->what());
    return status;
  } catch (const loom::Error& e) {
    std::fprintf(stderr, "loom-editor: %s\n", e.what());
    return 1;
  }
}
