// Crisp text at every zoom level. ImGui 1.86 fonts are bitmaps baked into the atlas, so
// scaling one font blurs it: CanvasFonts bakes DejaVuSans at a ladder of pixel sizes and
// the canvas draws each label with the baked size nearest to (text size x zoom). Without
// the TTF (fonts-dejavu-core) it falls back to ImGui's default font at every size.
#pragma once

#include <string>
#include <vector>

struct ImFont;
struct ImFontAtlas;

namespace loom::editor {

class CanvasFonts {
 public:
  static constexpr const char* kDefaultTtf = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";

  // Adds the ladder to `atlas`; call before the atlas is built (before the first NewFrame,
  // or rebuild the font texture after). The first size added is `ui_size`, so when the
  // atlas was empty it is also ImGui's default font for panels and menus.
  void add_to(ImFontAtlas* atlas, const std::string& ttf = kDefaultTtf, float ui_size = 15.0f);

  // The baked font nearest to `pixel_size` (nullptr before add_to).
  ImFont* nearest(float pixel_size) const;
  ImFont* ui() const { return ui_; }
  bool fallback() const { return fallback_; }
  const std::vector<float>& sizes() const { return sizes_; }

 private:
  std::vector<float> sizes_;    // ascending
  std::vector<ImFont*> fonts_;  // same order
  ImFont* ui_ = nullptr;
  bool fallback_ = false;
};

}  // namespace loom::editor
