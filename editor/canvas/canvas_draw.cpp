// Drawing with ImDrawList: only what is on screen (grid hashes give the candidates), text
// with the baked font nearest to its size on screen, less detail as the view zooms out.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <unordered_set>

#include "compiler/graph/node_library.h"
#include "editor/canvas/node_canvas.h"
#include "editor/model/graph_access.h"

namespace loom::editor {

namespace {

constexpr float kMinTextPx = 5.5f;  // smaller labels are not drawn: they would be noise

ImU32 with_alpha(ImU32 c, int alpha) {
  return (c & 0x00ffffffu) | (static_cast<ImU32>(alpha) << 24);
}

ImU32 comment_color(const std::string& hex) {
  unsigned r = 70, g = 90, b = 120;
  if (hex.size() == 7 && hex[0] == '#') std::sscanf(hex.c_str() + 1, "%02x%02x%02x", &r, &g, &b);
  return IM_COL32(r, g, b, 255);
}

ImVec2 add(ImVec2 a, ImVec2 b) { return ImVec2(a.x + b.x, a.y + b.y); }

}  // namespace

void NodeCanvas::draw_text(ImDrawList* dl, Vec2 at, float units, ImU32 color,
                           const std::string& text, float right, float min_px) const {
  float px = std::max(units * view_.zoom, min_px);
  if (px < kMinTextPx || text.empty()) return;
  ImFont* font = fonts_ ? fonts_->nearest(px) : nullptr;
  if (!font) font = ImGui::GetFont();
  ImVec2 s = view_.to_screen(at);
  if (right <= at.x) {
    dl->AddText(font, px, s, color, text.c_str());
    return;
  }
  ImVec4 clip(s.x - px, s.y - px, view_.to_screen(Vec2{right, at.y}).x, s.y + 2 * px);
  dl->AddText(font, px, s, color, text.c_str(), nullptr, 0.0f, &clip);
}

std::string NodeCanvas::crumb_text(size_t i) const {
  return (crumbs_[i].function ? "function " : "kernel ") + crumbs_[i].name;
}

std::vector<Rect> NodeCanvas::crumb_rects() const {
  std::vector<Rect> out;
  ImFont* font = fonts_ && fonts_->ui() ? fonts_->ui() : ImGui::GetFont();
  float size = font->FontSize;
  float x = view_.origin.x + 10, y = view_.origin.y + 8;
  for (size_t i = 0; i < crumbs_.size(); ++i) {
    float w = font->CalcTextSizeA(size, 1e9f, 0, crumb_text(i).c_str()).x;
    out.push_back(Rect{x - 4, y - 3, x + w + 4, y + size + 3});
    x += w + font->CalcTextSizeA(size, 1e9f, 0, "  >  ").x;
  }
  return out;
}

void NodeCanvas::draw(EditorDocument& doc) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  ImVec2 a = view_.origin, b = add(view_.origin, size_);
  dl->PushClipRect(a, b, true);
  dl->AddRectFilled(a, b, IM_COL32(27, 28, 32, 255));
  if (options_.grid) draw_grid(dl);
  draw_comments(dl, doc);

  Rect vis = visible_rect().expanded(24.0f / view_.zoom);
  visible_nodes_.clear();
  geo_.nodes_in(vis, visible_nodes_);
  std::erase_if(visible_nodes_,
                [&](int i) { return !geo_.nodes()[static_cast<size_t>(i)].rect().overlaps(vis); });
  // Region nodes first, what they hold over them.
  std::sort(visible_nodes_.begin(), visible_nodes_.end(), [&](int x, int y) {
    int dx = geo_.nodes()[static_cast<size_t>(x)].depth,
        dy = geo_.nodes()[static_cast<size_t>(y)].depth;
    return dx != dy ? dx < dy : x < y;
  });
  visible_links_.clear();
  geo_.links_in(vis, visible_links_);
  std::erase_if(visible_links_,
                [&](int i) { return !geo_.links()[static_cast<size_t>(i)].bounds.overlaps(vis); });

  stats_ = FrameStats{};
  stats_.nodes_total = static_cast<int>(geo_.nodes().size());
  stats_.links_total = static_cast<int>(geo_.links().size());
  draw_zones(dl);
  draw_links(dl, doc);
  draw_nodes(dl, doc);
  draw_drag(dl, doc);
  draw_minimap(dl, doc);
  draw_breadcrumb(dl, doc);

  // Status line: the last message, and the zoom.
  char zoom[32];
  std::snprintf(zoom, sizeof zoom, "%d%%", static_cast<int>(std::lround(view_.zoom * 100)));
  std::string line = std::string(zoom) + (status_.empty() ? "" : "   " + status_);
  ImFont* ui = fonts_ && fonts_->ui() ? fonts_->ui() : ImGui::GetFont();
  dl->AddText(ui, ui->FontSize, ImVec2(a.x + 10, b.y - ui->FontSize - 8),
              IM_COL32(170, 170, 170, 255), line.c_str());
  dl->PopClipRect();
}

void NodeCanvas::draw_grid(ImDrawList* dl) const {
  float step = 32;
  while (step * view_.zoom < 12) step *= 4;
  Rect vis = visible_rect();
  ImVec2 a = view_.origin, b = add(view_.origin, size_);
  for (float x = std::floor(vis.x0 / step) * step; x <= vis.x1; x += step) {
    bool major = std::fmod(std::fabs(x), step * 4) < 0.5f;
    float sx = view_.to_screen(Vec2{x, 0}).x;
    dl->AddLine(ImVec2(sx, a.y), ImVec2(sx, b.y),
                major ? IM_COL32(255, 255, 255, 22) : IM_COL32(255, 255, 255, 9));
  }
  for (float y = std::floor(vis.y0 / step) * step; y <= vis.y1; y += step) {
    bool major = std::fmod(std::fabs(y), step * 4) < 0.5f;
    float sy = view_.to_screen(Vec2{0, y}).y;
    dl->AddLine(ImVec2(a.x, sy), ImVec2(b.x, sy),
                major ? IM_COL32(255, 255, 255, 22) : IM_COL32(255, 255, 255, 9));
  }
}

void NodeCanvas::draw_comments(ImDrawList* dl, const EditorDocument& doc) const {
  const graph::GraphLayout* l = layout(doc);
  if (!l) return;
  Rect vis = visible_rect();
  for (size_t c = 0; c < l->comments.size(); ++c) {
    const graph::CommentFrame& f = l->comments[c];
    if (!Rect{f.x, f.y, f.x + f.w, f.y + f.h}.overlaps(vis)) continue;
    ImU32 col = comment_color(f.color);
    ImVec2 p0 = view_.to_screen(Vec2{f.x, f.y}), p1 = view_.to_screen(Vec2{f.x + f.w, f.y + f.h});
    float title = std::min(28.0f, f.h) * view_.zoom;
    dl->AddRectFilled(p0, p1, with_alpha(col, 48), 6 * view_.zoom);
    dl->AddRectFilled(p0, ImVec2(p1.x, p0.y + title), with_alpha(col, 150), 6 * view_.zoom,
                      ImDrawFlags_RoundCornersTop);
    bool selected = doc.selection().has_comment(c);
    dl->AddRect(p0, p1, selected ? IM_COL32(255, 200, 80, 255) : with_alpha(col, 200),
                6 * view_.zoom, 0, selected ? 2.0f : 1.0f);
    // Comment titles stay readable at any zoom: they are the map of a big graph.
    draw_text(dl, Vec2{f.x + 8 / view_.zoom * std::min(view_.zoom, 1.0f), f.y + 5}, 16,
              IM_COL32(240, 240, 240, 255), f.title, 0, 12.0f);
    float h = 12;
    dl->AddTriangleFilled(ImVec2(p1.x - h, p1.y), ImVec2(p1.x, p1.y - h), p1, with_alpha(col, 220));
  }
}

void NodeCanvas::draw_zones(ImDrawList* dl) {
  Rect vis = visible_rect();
  const NodeMetrics& m = geo_.metrics();
  for (size_t z = 0; z < geo_.zones().size(); ++z) {
    const ZoneGeom& zone = geo_.zones()[z];
    const NodeGeom& owner = geo_.nodes()[static_cast<size_t>(zone.owner)];
    if (!zone.rect.overlaps(vis) && !owner.rect().overlaps(vis)) continue;
    ++stats_.zones_drawn;
    ImVec2 p0 = view_.to_screen(Vec2{zone.rect.x0, zone.rect.y0});
    ImVec2 p1 = view_.to_screen(Vec2{zone.rect.x1, zone.rect.y1});
    ImU32 tint = category_color(owner.category);
    bool target = mode_ == Mode::MoveNodes && move_zone_target_ == static_cast<int>(z);
    float r = 8 * view_.zoom;
    dl->AddRectFilled(p0, p1, with_alpha(tint, zone.empty ? 18 : 34 + 8 * std::min(zone.depth, 4)),
                      r);
    dl->AddRectFilled(p0, ImVec2(p1.x, p0.y + m.zone_label * view_.zoom), with_alpha(tint, 90), r,
                      ImDrawFlags_RoundCornersTop);
    dl->AddRect(p0, p1, target ? IM_COL32(120, 230, 120, 255) : with_alpha(tint, 200), r, 0,
                target ? 3.0f : 1.2f);
    std::string label =
        zone.region.region + "  \xc2\xb7  " + owner.type + " #" + std::to_string(owner.id);
    if (target) label += "  \xc2\xab release to move here";
    draw_text(dl, Vec2{zone.rect.x0 + 8, zone.rect.y0 + 4}, 13, IM_COL32(230, 230, 230, 230), label,
              0, 9.0f);
    if (zone.empty)
      draw_text(dl, Vec2{zone.rect.x0 + 8, zone.rect.y0 + m.zone_label + 8}, 12,
                IM_COL32(200, 200, 200, 120), "empty: add nodes here");
    // Tie the zone to its node when they do not touch.
    Rect node = owner.rect();
    if (!node.overlaps(zone.rect)) {
      ImVec2 from = view_.to_screen(Vec2{node.x1, node.y0 + m.header * 0.5f});
      ImVec2 to = view_.to_screen(Vec2{zone.rect.x0, zone.rect.y0 + m.zone_label * 0.5f});
      dl->AddLine(from, to, with_alpha(tint, 160), 1.5f);
    }
  }
}

void NodeCanvas::draw_links(ImDrawList* dl, const EditorDocument& doc) {
  std::unordered_set<int> selected(doc.selection().nodes.begin(), doc.selection().nodes.end());
  float thickness = std::clamp(2.2f * view_.zoom, 1.0f, 4.0f);
  bool straight = view_.zoom < 0.2f;  // far away: curves are not worth their vertices
  // Nor is anti-aliasing a one-pixel line worth its fringe (lavapipe is fill bound).
  ImDrawListFlags flags = dl->Flags;
  if (straight) dl->Flags &= ~ImDrawListFlags_AntiAliasedLines;
  for (int i : visible_links_) {
    const LinkGeom& l = geo_.links()[static_cast<size_t>(i)];
    const NodeGeom& to = geo_.nodes()[static_cast<size_t>(l.to)];
    const NodeGeom& from = geo_.nodes()[static_cast<size_t>(l.from)];
    if (mode_ == Mode::Link && picked_up_.node == to.id &&
        picked_up_.pin == to.inputs[static_cast<size_t>(l.to_pin)].name)
      continue;  // lifted: drawn from the mouse instead
    PinCategory cat = to.inputs[static_cast<size_t>(l.to_pin)].category;
    bool hot = selected.count(to.id) || selected.count(from.id) ||
               (hover_.kind == Hit::Kind::Link && hover_.link == i);
    ImU32 col =
        l.from_pin < 0 ? IM_COL32(230, 80, 80, 255) : with_alpha(pin_color(cat), hot ? 255 : 170);
    ImVec2 p0 = view_.to_screen(l.p0), p1 = view_.to_screen(l.p1);
    float width = hot ? thickness * 1.5f : thickness;
    auto curve = [&](ImVec2 a, ImVec2 b) {
      float d = std::max(40.0f * view_.zoom, std::fabs(b.x - a.x) * 0.5f);
      dl->AddBezierCubic(a, ImVec2(a.x + d, a.y), ImVec2(b.x - d, b.y), b, col, width);
    };
    if (l.routed) {  // over or under the nodes in its way, halfway at via_y
      ImVec2 via = view_.to_screen(Vec2{(l.p0.x + l.p1.x) * 0.5f, l.via_y});
      if (straight) {
        dl->AddLine(p0, via, col, thickness);
        dl->AddLine(via, p1, col, thickness);
      } else {
        curve(p0, via);
        curve(via, p1);
      }
    } else if (straight) {
      dl->AddLine(p0, p1, col, thickness);
    } else {
      curve(p0, p1);
    }
    ++stats_.links_drawn;
  }
  dl->Flags = flags;
}

void NodeCanvas::draw_nodes(ImDrawList* dl, const EditorDocument& doc) {
  std::unordered_set<int> selected(doc.selection().nodes.begin(), doc.selection().nodes.end());
  // With 16-bit indices and a renderer that cannot offset vertices, one draw list holds
  // 65536 vertices at most: past that, nodes are drawn as plain boxes (ImGui would assert).
  bool limited = sizeof(ImDrawIdx) == 2 &&
                 !(ImGui::GetIO().BackendFlags & ImGuiBackendFlags_RendererHasVtxOffset);
  // Far out, nodes are square cards: their edges need no anti-aliased fringe.
  ImDrawListFlags flags = dl->Flags;
  if (view_.zoom < 0.2f) dl->Flags &= ~ImDrawListFlags_AntiAliasedFill;
  for (int i : visible_nodes_) {
    const NodeGeom& n = geo_.nodes()[static_cast<size_t>(i)];
    bool sel = selected.count(n.id) > 0;
    if (limited && dl->_VtxCurrentIdx > 60000) {
      if (dl->_VtxCurrentIdx < 65000)
        dl->AddRectFilled(view_.to_screen(n.pos),
                          view_.to_screen(Vec2{n.pos.x + n.w, n.pos.y + n.h}),
                          sel ? IM_COL32(255, 200, 80, 255) : category_color(n.category));
      continue;
    }
    draw_node(dl, doc, i, sel);
  }
  dl->Flags = flags;
}

void NodeCanvas::draw_node(ImDrawList* dl, const EditorDocument& doc, int index, bool selected) {
  ++stats_.nodes_drawn;
  const NodeGeom& n = geo_.nodes()[static_cast<size_t>(index)];
  const NodeMetrics& m = geo_.metrics();
  float z = view_.zoom;
  ImVec2 p0 = view_.to_screen(n.pos), p1 = view_.to_screen(Vec2{n.pos.x + n.w, n.pos.y + n.h});
  auto pit = problems_.find(n.id);
  bool broken = pit != problems_.end() && !pit->second.empty();
  // Errors are red; a node with warnings alone (a likely mistake that still runs) is amber.
  bool erring = broken && erring_.count(n.id) != 0;
  ImU32 problem_color = erring ? IM_COL32(235, 70, 70, 255) : IM_COL32(230, 160, 40, 255);
  bool hot = (hover_.kind == Hit::Kind::Node || hover_.kind == Hit::Kind::Pin ||
              hover_.kind == Hit::Kind::Value) &&
             hover_.node == index;
  ImU32 border = selected ? IM_COL32(255, 200, 80, 255)
                 : broken ? problem_color
                 : hot    ? IM_COL32(150, 150, 160, 255)
                          : IM_COL32(12, 12, 14, 255);
  if (n.reroute) {
    ImVec2 c((p0.x + p1.x) * 0.5f, (p0.y + p1.y) * 0.5f);
    PinCategory cat = !n.inputs.empty() ? n.inputs[0].category : PinCategory::Any;
    dl->AddCircleFilled(c, n.w * 0.5f * z, pin_color(cat), 16);
    dl->AddCircle(c, n.w * 0.5f * z + 1, border, 16, selected || broken ? 2.5f : 1.0f);
    return;
  }
  ImU32 head = category_color(n.category);
  if (p1.x - p0.x < 14) {  // far away: a swatch
    dl->AddRectFilled(p0, p1,
                      selected ? IM_COL32(255, 200, 80, 255)
                      : broken ? problem_color
                               : head);
    return;
  }
  // Far out, a box narrower than a short word would show two letters of its title: a plain
  // card (body and header, square corners, no text) is what the eye reads there, and it
  // costs a twentieth of the vertices; comment titles stay the map of the graph.
  if (p1.x - p0.x < 36) {
    dl->AddRectFilled(p0, p1, IM_COL32(40, 42, 48, 240));
    dl->AddRectFilled(p0, ImVec2(p1.x, std::min(p1.y, p0.y + m.header * z)), head);
    if (selected || broken) dl->AddRect(p0, p1, border, 0, 0, 2.0f);
    return;
  }
  float rounding = 5 * z;
  if (n.collapsed) {  // the title bar alone; its links meet its edges
    dl->AddRectFilled(p0, p1, head, rounding);
    dl->AddRect(p0, p1, border, rounding, 0, selected || broken ? 2.5f : 1.0f);
  } else {
    dl->AddRectFilled(p0, p1, IM_COL32(40, 42, 48, 240), rounding);
    dl->AddRectFilled(p0, ImVec2(p1.x, p0.y + m.header * z), head, rounding,
                      ImDrawFlags_RoundCornersTop);
    dl->AddRect(p0, p1, border, rounding, 0, selected || broken ? 2.5f : 1.0f);
  }

  float label = m.text;
  // Titles stay readable zoomed out (at least 9 pixels, clipped to the box): they are how
  // a big graph is found one's way around in.
  float title_px = std::max(14 * z, 9.0f);
  // The title ends before the id and the error badge (both drawn when labels are).
  bool labels = m.text * z >= 6.0f;
  float id_right = n.pos.x + n.w - m.pad - (broken ? 18 : 0);
  float title_end = labels ? id_right - n.id_w * 12 / label - m.pad * 0.5f : n.pos.x + n.w - 2;
  draw_text(dl, Vec2{n.pos.x + m.pad, n.pos.y + m.header * 0.5f - title_px * 0.5f / z}, 14,
            IM_COL32(245, 245, 245, 255), n.title, title_end, 9.0f);
  if (!labels) return;  // pins, labels and badges would be specks
  draw_text(dl, Vec2{id_right - n.id_w * 12 / label, n.pos.y + (m.header - 12) * 0.5f}, 12,
            IM_COL32(255, 255, 255, 120), "#" + std::to_string(n.id));
  if (n.collapsed) {
    float r = 3 * z;
    for (int side = 0; side < 2; ++side)  // where the links attach
      if (side ? !n.outputs.empty() : !n.inputs.empty())
        dl->AddCircleFilled(view_.to_screen(Vec2{n.pos.x + (side ? n.w : 0), n.pos.y + n.h * 0.5f}),
                            r, IM_COL32(220, 220, 220, 255), 10);
  }
  auto nit = notes_.find(n.id);
  bool loop = n.type == "range_for" || n.type == "struct_for";
  if (loop && nit != notes_.end() && !nit->second.empty()) {
    // How the loop runs, above its top edge: green when parallel, amber when it runs on one
    // thread (the trap a port falls into); hovering the node gives the compiler's whole note.
    const std::string& note = nit->second.front();
    bool serial = note.rfind("serial", 0) == 0;
    std::string tag = serial ? "runs serially" : "parallel";
    if (!serial && note.find("reduction") != std::string::npos) tag += " + reduction";
    draw_text(dl, Vec2{n.pos.x + 12, n.pos.y - 13}, 11,
              serial ? IM_COL32(230, 160, 40, 255) : IM_COL32(120, 210, 130, 255), tag);
  }
  if (broken) {  // the badge; hovering the node lists the problems
    ImVec2 c = view_.to_screen(Vec2{n.pos.x + n.w - 10, n.pos.y + m.header * 0.5f});
    dl->AddCircleFilled(c, 7 * z, problem_color, 12);
    draw_text(dl, Vec2{n.pos.x + n.w - 12, n.pos.y + m.header * 0.5f - 6.5f}, 13, IM_COL32_WHITE,
              "!");
  }
  if (n.collapsed) return;
  float top = n.pos.y + m.header;
  if (!n.detail.empty()) {
    draw_text(dl, Vec2{n.pos.x + m.pad, top + 2}, 12, IM_COL32(200, 205, 215, 220), n.detail,
              n.pos.x + n.w - m.pad * 0.5f);
    top += m.detail;
  }
  // Ordered nodes: their place in their region's order, as a badge on the corner.
  if (n.order > 0 && 7 * z >= 3) {
    ImVec2 c = view_.to_screen(n.pos);
    dl->AddCircleFilled(c, 8 * z, IM_COL32(20, 20, 24, 255), 12);
    dl->AddCircle(c, 8 * z, IM_COL32(200, 200, 200, 200), 12, 1);
    draw_text(dl, Vec2{n.pos.x - (n.order > 9 ? 5.5f : 3), n.pos.y - 5.5f}, 10,
              IM_COL32(230, 230, 230, 255), std::to_string(n.order));
  }
  float r = m.pin_radius * z;
  const std::vector<std::string> problems = broken ? pit->second : std::vector<std::string>{};
  auto pin_broken = [&](const std::string& pin) {
    for (const std::string& p : problems)
      if (p.rfind(pin + ": ", 0) == 0) return true;
    return false;
  };
  for (size_t k = 0; k < n.inputs.size(); ++k) {
    const PinGeom& pin = n.inputs[k];
    Vec2 at = geo_.input_pos(index, static_cast<int>(k));
    ImVec2 s = view_.to_screen(at);
    if (r >= 1.5f) draw_pin(dl, s, r, pin.category, pin.linked);
    if (pin_broken(pin.name)) dl->AddCircle(s, r + 3, problem_color, 12, 2);
    if (hover_.kind == Hit::Kind::Pin && hover_.node == index && !hover_.output &&
        hover_.pin == static_cast<int>(k))
      dl->AddCircle(s, r + 3, IM_COL32(255, 255, 255, 200), 12, 1.5f);
    if (hover_.kind == Hit::Kind::Value && hover_.node == index &&
        hover_.pin == static_cast<int>(k)) {  // a click types here, a drag scrubs a number
      Rect v = value_rect(index, static_cast<int>(k));
      dl->AddRectFilled(view_.to_screen(Vec2{v.x0, v.y0 + 2}),
                        view_.to_screen(Vec2{v.x1, v.y1 - 2}), IM_COL32(255, 255, 255, 28), 3 * z);
    }
    if (inline_pin_.node == n.id && inline_pin_.pin == pin.name) continue;  // the field is over it
    draw_text(dl, Vec2{at.x + m.pad + 2, at.y - label * 0.55f}, label, IM_COL32(215, 215, 215, 255),
              pin.name);
    if (!pin.literal.empty())
      draw_text(dl, Vec2{at.x + m.pad + 2 + pin.name_w, at.y - label * 0.55f}, label,
                IM_COL32(150, 200, 255, 220), " = " + pin.literal);
  }
  for (size_t k = 0; k < n.outputs.size(); ++k) {
    const PinGeom& pin = n.outputs[k];
    Vec2 at = geo_.output_pos(index, static_cast<int>(k));
    ImVec2 s = view_.to_screen(at);
    if (r >= 1.5f) draw_pin(dl, s, r, pin.category, pin.linked);
    if (hover_.kind == Hit::Kind::Pin && hover_.node == index && hover_.output &&
        hover_.pin == static_cast<int>(k))
      dl->AddCircle(s, r + 3, IM_COL32(255, 255, 255, 200), 12, 1.5f);
    draw_text(dl, Vec2{at.x - m.pad - 2 - pin.width, at.y - label * 0.55f}, label,
              IM_COL32(215, 215, 215, 255), pin.name);
  }
  (void)doc;
}

void NodeCanvas::draw_drag(ImDrawList* dl, EditorDocument& doc) {
  ImVec2 mouse = ImGui::GetIO().MousePos;
  if (mode_ == Mode::Link) {
    std::optional<ImVec2> anchor = pin_screen_pos(anchor_, anchor_output_);
    if (!anchor) return;
    ImVec2 end = mouse;
    ImU32 col = IM_COL32(220, 220, 220, 255);
    if (link_has_target_) {
      if (auto t = pin_screen_pos(link_target_, !anchor_output_)) end = *t;
      PinRef from = anchor_output_ ? anchor_ : link_target_;
      PinRef to = anchor_output_ ? link_target_ : anchor_;
      if (picked_up_.node >= 0 && to == picked_up_) {
        col = IM_COL32(120, 220, 120, 255);
      } else {
        const LinkCheck& c = checked(doc, from, to);
        col = c.verdict == LinkVerdict::Accept    ? IM_COL32(120, 220, 120, 255)
              : c.verdict == LinkVerdict::Replace ? IM_COL32(240, 200, 70, 255)
                                                  : IM_COL32(235, 70, 70, 255);
      }
    }
    ImVec2 p0 = anchor_output_ ? *anchor : end, p1 = anchor_output_ ? end : *anchor;
    float d = std::max(40.0f * view_.zoom, std::fabs(p1.x - p0.x) * 0.5f);
    dl->AddBezierCubic(p0, ImVec2(p0.x + d, p0.y), ImVec2(p1.x - d, p1.y), p1, col,
                       std::clamp(2.5f * view_.zoom, 1.5f, 4.0f));
  }
  if (mode_ == Mode::Box && dragging_) {
    ImVec2 a(std::min(press_screen_.x, mouse.x), std::min(press_screen_.y, mouse.y));
    ImVec2 b(std::max(press_screen_.x, mouse.x), std::max(press_screen_.y, mouse.y));
    dl->AddRectFilled(a, b, IM_COL32(90, 150, 255, 40));
    dl->AddRect(a, b, IM_COL32(90, 150, 255, 200));
  }
}

void NodeCanvas::draw_breadcrumb(ImDrawList* dl, EditorDocument& doc) {
  std::vector<Rect> rects = crumb_rects();
  if (rects.empty()) return;
  ImFont* font = fonts_ && fonts_->ui() ? fonts_->ui() : ImGui::GetFont();
  ImVec2 mouse = ImGui::GetIO().MousePos;
  dl->AddRectFilled(ImVec2(rects.front().x0 - 4, rects.front().y0 - 2),
                    ImVec2(rects.back().x1 + 4, rects.back().y1 + 2), IM_COL32(15, 15, 18, 200), 4);
  for (size_t i = 0; i < rects.size(); ++i) {
    bool last = i + 1 == rects.size();
    bool hot = !last && rects[i].contains(mouse.x, mouse.y);
    ImU32 col = last  ? IM_COL32(255, 255, 255, 255)
                : hot ? IM_COL32(140, 190, 255, 255)
                      : IM_COL32(170, 170, 170, 255);
    dl->AddText(font, font->FontSize, ImVec2(rects[i].x0 + 4, rects[i].y0 + 3), col,
                crumb_text(i).c_str());
    if (!last)
      dl->AddText(font, font->FontSize, ImVec2(rects[i].x1 + 2, rects[i].y0 + 3),
                  IM_COL32(120, 120, 120, 255), ">");
  }
  (void)doc;
}

void NodeCanvas::draw_minimap(ImDrawList* dl, const EditorDocument& doc) {
  Minimap map = minimap();
  if (!map.shown) return;
  ImVec2 a(map.screen.x0, map.screen.y0), b(map.screen.x1, map.screen.y1);
  dl->AddRectFilled(a, b, IM_COL32(12, 12, 15, 220), 4);
  dl->PushClipRect(a, b, true);
  if (const graph::GraphLayout* l = layout(doc))
    for (const graph::CommentFrame& f : l->comments)
      dl->AddRectFilled(map.to_screen(Vec2{f.x, f.y}), map.to_screen(Vec2{f.x + f.w, f.y + f.h}),
                        with_alpha(comment_color(f.color), 60));
  for (const ZoneGeom& z : geo_.zones())
    dl->AddRect(map.to_screen(Vec2{z.rect.x0, z.rect.y0}),
                map.to_screen(Vec2{z.rect.x1, z.rect.y1}), IM_COL32(255, 255, 255, 40));
  // Every node, at least a pixel: the whole graph at a glance costs one rectangle each.
  std::unordered_set<int> selected(doc.selection().nodes.begin(), doc.selection().nodes.end());
  for (const NodeGeom& n : geo_.nodes()) {
    ImVec2 p0 = map.to_screen(n.pos);
    ImVec2 p1 = map.to_screen(Vec2{n.pos.x + n.w, n.pos.y + n.h});
    p1.x = std::max(p1.x, p0.x + 1);
    p1.y = std::max(p1.y, p0.y + 1);
    dl->AddRectFilled(p0, p1,
                      selected.count(n.id)    ? IM_COL32(255, 200, 80, 255)
                      : erring_.count(n.id)   ? IM_COL32(235, 70, 70, 255)
                      : problems_.count(n.id) ? IM_COL32(230, 160, 40, 255)
                                              : category_color(n.category));
  }
  Rect vis = visible_rect();
  dl->AddRect(map.to_screen(Vec2{vis.x0, vis.y0}), map.to_screen(Vec2{vis.x1, vis.y1}),
              IM_COL32(255, 255, 255, 200), 0, 0, 1.5f);
  dl->PopClipRect();
  dl->AddRect(a, b, IM_COL32(90, 90, 100, 255), 4);
}

void NodeCanvas::tooltips(EditorDocument& doc) {
  ImVec2 mouse = ImGui::GetIO().MousePos;
  if (mode_ == Mode::Link) {
    if (!link_has_target_) {
      ImGui::SetTooltip(picked_up_.node >= 0 ? "release on empty canvas to remove the link"
                                             : "release on empty canvas to add a node that fits");
      return;
    }
    PinRef from = anchor_output_ ? anchor_ : link_target_;
    PinRef to = anchor_output_ ? link_target_ : anchor_;
    if (picked_up_.node >= 0 && to == picked_up_) {
      ImGui::SetTooltip("unchanged");
      return;
    }
    const LinkCheck& c = checked(doc, from, to);
    const char* verdict = c.verdict == LinkVerdict::Accept    ? "link"
                          : c.verdict == LinkVerdict::Replace ? "replace"
                                                              : "refused";
    ImGui::SetTooltip("%s: %s", verdict, c.reason.c_str());
    return;
  }
  if (!hovered_ || mode_ != Mode::Idle || palette_.is_open()) return;
  Hit hit = hit_test(mouse);
  if (hit.kind == Hit::Kind::Pin) {
    const NodeGeom& n = geo_.nodes()[static_cast<size_t>(hit.node)];
    const PinGeom& p = hit.output ? n.outputs[static_cast<size_t>(hit.pin)]
                                  : n.inputs[static_cast<size_t>(hit.pin)];
    std::string text =
        p.name + ": " + (p.type.empty() ? std::string(pin_category_name(p.category)) : p.type);
    if (!p.literal.empty()) text += " = " + p.literal;
    auto it = problems_.find(n.id);
    if (it != problems_.end())
      for (const std::string& msg : it->second)
        if (msg.rfind(p.name + ": ", 0) == 0) text += "\n" + msg;
    ImGui::SetTooltip("%s", text.c_str());
  } else if (hit.kind == Hit::Kind::Node || hit.kind == Hit::Kind::Value) {
    const NodeGeom& n = geo_.nodes()[static_cast<size_t>(hit.node)];
    if (hit.kind == Hit::Kind::Value) {
      const PinGeom& p = n.inputs[static_cast<size_t>(hit.pin)];
      if (!p.literal.empty() &&
          (p.category == PinCategory::Int || p.category == PinCategory::Float))
        ImGui::SetMouseCursor(ImGuiMouseCursor_ResizeEW);  // a drag scrubs it
    }
    // The value editor beside the node lists these itself: a tooltip would cover it.
    if (n.id == editing_node_ || n.id == inline_pin_.node) return;
    auto it = problems_.find(n.id);
    auto nit = notes_.find(n.id);
    bool problems = it != problems_.end() && !it->second.empty();
    // A serial task's note names its first statement's node too: only loops show theirs.
    bool notes = (n.type == "range_for" || n.type == "struct_for") && nit != notes_.end() &&
                 !nit->second.empty();
    if (!problems && !notes) return;
    std::string text = n.type + " #" + std::to_string(n.id) + ":";
    if (problems)
      for (const std::string& msg : it->second) text += "\n  " + msg;
    if (notes)
      for (const std::string& msg : nit->second) text += "\n  " + msg;
    // Wrapped: the compiler's notes and warnings are sentences, wider than the screen.
    ImGui::BeginTooltip();
    ImGui::PushTextWrapPos(ImGui::GetFontSize() * 45.0f);
    ImGui::TextUnformatted(text.c_str());
    ImGui::PopTextWrapPos();
    ImGui::EndTooltip();
  }
}

}  // namespace loom::editor
