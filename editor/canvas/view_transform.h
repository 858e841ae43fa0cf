// The canvas transform: canvas units (the document's layout coordinates) to screen pixels.
// `origin` is the screen position of the canvas area's top-left corner, `scroll` the canvas
// point shown there, `zoom` pixels per canvas unit.
#pragma once

#include <imgui.h>

#include "editor/model/graph_ref.h"

namespace loom::editor {

struct ViewTransform {
  ImVec2 origin{0, 0};
  Vec2 scroll{0, 0};
  float zoom = 1.0f;

  static constexpr float kMinZoom = 0.1f;
  static constexpr float kMaxZoom = 4.0f;

  ImVec2 to_screen(Vec2 p) const {
    return ImVec2(origin.x + (p.x - scroll.x) * zoom, origin.y + (p.y - scroll.y) * zoom);
  }
  Vec2 to_canvas(ImVec2 s) const {
    return Vec2{scroll.x + (s.x - origin.x) / zoom, scroll.y + (s.y - origin.y) / zoom};
  }
  // Zooms to `new_zoom` keeping the canvas point under screen position `anchor` in place.
  void zoom_at(ImVec2 anchor, float new_zoom) {
    Vec2 fixed = to_canvas(anchor);
    zoom = new_zoom < kMinZoom ? kMinZoom : new_zoom > kMaxZoom ? kMaxZoom : new_zoom;
    scroll = Vec2{fixed.x - (anchor.x - origin.x) / zoom, fixed.y - (anchor.y - origin.y) / zoom};
  }
  // Shows canvas point `center` in the middle of a `size` pixel area.
  void center_on(Vec2 center, ImVec2 size) {
    scroll = Vec2{center.x - size.x * 0.5f / zoom, center.y - size.y * 0.5f / zoom};
  }
};

}  // namespace loom::editor
