#include "editor/canvas/canvas_fonts.h"

#include <imgui.h>

#include <cmath>
#include <fstream>

namespace loom::editor {

namespace {

// 5 to 64 pixels, about 20% apart: a label is never drawn more than ~10% off its baked
// size, which bilinear filtering keeps sharp. Smaller labels are not drawn at all.
constexpr float kLadder[] = {6, 7, 8, 9.5f, 11, 13, 15, 18, 21, 25, 30, 36, 43, 52, 62};

}  // namespace

void CanvasFonts::add_to(ImFontAtlas* atlas, const std::string& ttf, float ui_size) {
  sizes_.clear();
  fonts_.clear();
  fallback_ = !std::ifstream(ttf).good();
  if (fallback_) {
    ImFont* f = atlas->Fonts.empty() ? atlas->AddFontDefault() : atlas->Fonts[0];
    ui_ = f;
    sizes_.push_back(13);
    fonts_.push_back(f);
    return;
  }
  ImFontConfig ui_config;
  ui_config.OversampleH = 2;
  ui_ = atlas->AddFontFromFileTTF(ttf.c_str(), ui_size, &ui_config);
  for (float size : kLadder) {
    ImFontConfig config;
    // Sub-pixel oversampling matters for small glyphs only; big ones would bloat the atlas.
    config.OversampleH = size <= 20 ? 2 : 1;
    config.OversampleV = 1;
    ImFont* f = atlas->AddFontFromFileTTF(ttf.c_str(), size, &config);
    if (!f) continue;
    sizes_.push_back(size);
    fonts_.push_back(f);
  }
}

ImFont* CanvasFonts::nearest(float pixel_size) const {
  if (fonts_.empty()) return nullptr;
  size_t best = 0;
  for (size_t i = 1; i < sizes_.size(); ++i)
    if (std::fabs(std::log(sizes_[i] / pixel_size)) <
        std::fabs(std::log(sizes_[best] / pixel_size)))
      best = i;
  return fonts_[best];
}

}  // namespace loom::editor
