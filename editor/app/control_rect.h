// A control's rectangle on screen (ImGui coordinates) as drawn in the last frame: the app
// reports them by name so tests can click what a user would.
#pragma once

#include <imgui.h>

namespace loom::editor {

struct ControlRect {
  float x0 = 0, y0 = 0, x1 = 0, y1 = 0;
  float cx() const { return (x0 + x1) / 2; }
  float cy() const { return (y0 + y1) / 2; }
  // The last ImGui item's rectangle.
  static ControlRect last_item() {
    ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
    return ControlRect{a.x, a.y, b.x, b.y};
  }
};

}  // namespace loom::editor
