// Drives a NodeCanvas headless: an ImGui context with the canvas fonts baked into its atlas
// (never uploaded anywhere), IO events fed frame by frame, the canvas drawn in a window that
// fills the display. No window system, no GPU.
#pragma once

#include <imgui.h>

#include <string>

#include "editor/canvas/canvas_fonts.h"
#include "editor/canvas/node_canvas.h"
#include "editor/model/editor_document.h"

namespace loom::editor::test {

// io.KeysDown indices, as GLFW numbers them (what the app's backend will use).
enum Key : int {
  kKeyTab = 258,
  kKeyLeft = 263,
  kKeyRight = 262,
  kKeyUp = 265,
  kKeyDown = 264,
  kKeyPageUp = 266,
  kKeyPageDown = 267,
  kKeyHome = 268,
  kKeyEnd = 269,
  kKeyInsert = 260,
  kKeyDelete = 261,
  kKeyBackspace = 259,
  kKeySpace = 32,
  kKeyEnter = 257,
  kKeyEscape = 256,
  kKeyPadEnter = 335,
  kKeyF1 = 290
};

class CanvasHarness {
 public:
  explicit CanvasHarness(ImVec2 display = ImVec2(1280, 800)) {
    ctx_ = ImGui::CreateContext();
    ImGuiIO& io = ImGui::GetIO();
    io.DisplaySize = display;
    io.IniFilename = nullptr;
    io.DeltaTime = 1.0f / 60.0f;
    io.BackendFlags |= ImGuiBackendFlags_RendererHasVtxOffset;  // as the Vulkan backend
    int map[][2] = {{ImGuiKey_Tab, kKeyTab},
                    {ImGuiKey_LeftArrow, kKeyLeft},
                    {ImGuiKey_RightArrow, kKeyRight},
                    {ImGuiKey_UpArrow, kKeyUp},
                    {ImGuiKey_DownArrow, kKeyDown},
                    {ImGuiKey_PageUp, kKeyPageUp},
                    {ImGuiKey_PageDown, kKeyPageDown},
                    {ImGuiKey_Home, kKeyHome},
                    {ImGuiKey_End, kKeyEnd},
                    {ImGuiKey_Insert, kKeyInsert},
                    {ImGuiKey_Delete, kKeyDelete},
                    {ImGuiKey_Backspace, kKeyBackspace},
                    {ImGuiKey_Space, kKeySpace},
                    {ImGuiKey_Enter, kKeyEnter},
                    {ImGuiKey_Escape, kKeyEscape},
                    {ImGuiKey_KeyPadEnter, kKeyPadEnter},
                    {ImGuiKey_A, 'A'},
                    {ImGuiKey_C, 'C'},
                    {ImGuiKey_V, 'V'},
                    {ImGuiKey_X, 'X'},
                    {ImGuiKey_Y, 'Y'},
                    {ImGuiKey_Z, 'Z'}};
    for (auto& m : map) io.KeyMap[m[0]] = m[1];
    fonts_.add_to(io.Fonts);
    unsigned char* pixels = nullptr;
    int w = 0, h = 0;
    io.Fonts->GetTexDataAsRGBA32(&pixels, &w, &h);  // builds the atlas; nothing uploads it
    atlas_w_ = w;
    atlas_h_ = h;
    io.MousePos = ImVec2(-1, -1);
  }
  ~CanvasHarness() { ImGui::DestroyContext(ctx_); }
  CanvasHarness(const CanvasHarness&) = delete;
  CanvasHarness& operator=(const CanvasHarness&) = delete;

  NodeCanvas& canvas() { return canvas_; }
  const CanvasFonts& fonts() const { return fonts_; }
  int atlas_width() const { return atlas_w_; }
  int atlas_height() const { return atlas_h_; }
  ImDrawData* draw_data() { return ImGui::GetDrawData(); }

  // Another panel over part of the canvas (the app's program panel, say): a window drawn after
  // the canvas's, so it is on top. A zero size removes it.
  void set_panel(ImVec2 pos, ImVec2 size) {
    panel_pos_ = pos;
    panel_size_ = size;
  }

  // One frame: the canvas in a window covering the display (and the panel, if any).
  void frame(EditorDocument& doc) {
    ImGuiIO& io = ImGui::GetIO();
    ImGui::NewFrame();
    ImGui::SetNextWindowPos(ImVec2(0, 0));
    ImGui::SetNextWindowSize(io.DisplaySize);
    ImGui::Begin("Graph", nullptr,
                 ImGuiWindowFlags_NoTitleBar | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoMove |
                     ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse |
                     ImGuiWindowFlags_NoBringToFrontOnFocus);
    canvas_.frame(doc);
    ImGui::End();
    if (panel_size_.x > 0) {
      ImGui::SetNextWindowPos(panel_pos_);
      ImGui::SetNextWindowSize(panel_size_);
      ImGui::Begin(
          "Panel", nullptr,
          ImGuiWindowFlags_NoTitleBar | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoMove);
      ImGui::TextUnformatted("another panel");
      ImGui::End();
    }
    ImGui::Render();
    io.MouseWheel = 0;
    io.InputQueueCharacters.resize(0);
  }
  void frames(EditorDocument& doc, int n) {
    for (int i = 0; i < n; ++i) frame(doc);
  }

  // ---- mouse
  void move(EditorDocument& doc, ImVec2 p) {
    ImGui::GetIO().MousePos = p;
    frame(doc);
  }
  void press(EditorDocument& doc, int button = 0) {
    ImGui::GetIO().MouseDown[button] = true;
    frame(doc);
  }
  void release(EditorDocument& doc, int button = 0) {
    ImGui::GetIO().MouseDown[button] = false;
    frame(doc);
  }
  void click(EditorDocument& doc, ImVec2 p, int button = 0) {
    move(doc, p);
    press(doc, button);
    release(doc, button);
  }
  // Two clicks within the double-click time; then enough frames that the next click is new.
  void double_click(EditorDocument& doc, ImVec2 p) {
    click(doc, p);
    click(doc, p);
    frames(doc, 30);
  }
  void drag(EditorDocument& doc, ImVec2 from, ImVec2 to, int button = 0, int steps = 8) {
    move(doc, from);
    press(doc, button);
    for (int i = 1; i <= steps; ++i) {
      float t = static_cast<float>(i) / static_cast<float>(steps);
      move(doc, ImVec2(from.x + (to.x - from.x) * t, from.y + (to.y - from.y) * t));
    }
    release(doc, button);
  }
  void wheel(EditorDocument& doc, ImVec2 at, float amount) {
    ImGui::GetIO().MousePos = at;
    ImGui::GetIO().MouseWheel = amount;
    frame(doc);
  }

  // ---- keyboard
  void key(EditorDocument& doc, int key, bool ctrl = false, bool shift = false, bool alt = false) {
    ImGuiIO& io = ImGui::GetIO();
    io.KeyCtrl = ctrl;
    io.KeyShift = shift;
    io.KeyAlt = alt;
    io.KeysDown[key] = true;
    frame(doc);
    io.KeysDown[key] = false;
    frame(doc);
    io.KeyCtrl = io.KeyShift = io.KeyAlt = false;
  }
  void type(EditorDocument& doc, const std::string& text) {
    for (char c : text) {
      ImGui::GetIO().AddInputCharacter(static_cast<unsigned>(c));
      frame(doc);
    }
  }

 private:
  ImGuiContext* ctx_ = nullptr;
  CanvasFonts fonts_;
  NodeCanvas canvas_{&fonts_};
  int atlas_w_ = 0, atlas_h_ = 0;
  ImVec2 panel_pos_{0, 0}, panel_size_{0, 0};
};

}  // namespace loom::editor::test
