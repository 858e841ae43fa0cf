#include "editor/canvas/node_canvas.h"

#include <algorithm>
#include <cfloat>
#include <cmath>

#include "compiler/graph/node_library.h"
#include "editor/model/edits.h"
#include "editor/model/graph_access.h"
#include "editor/model/node_catalog.h"
#include "editor/model/operations.h"

namespace loom::editor {

void NodeCanvas::frame(EditorDocument& doc) {
  ImVec2 origin = ImGui::GetCursorScreenPos();
  ImVec2 avail = ImGui::GetContentRegionAvail();
  size_ = ImVec2(std::max(avail.x, 64.0f), std::max(avail.y, 64.0f));
  view_.origin = origin;
  // One item over the whole area: it owns the mouse while a drag lasts (the window does
  // not move) and tells whether the canvas, not a popup or another window, is hovered.
  ImGui::InvisibleButton("##loom_canvas", size_,
                         ImGuiButtonFlags_MouseButtonLeft | ImGuiButtonFlags_MouseButtonRight |
                             ImGuiButtonFlags_MouseButtonMiddle);
  hovered_ = ImGui::IsItemHovered();
  focused_ = ImGui::IsWindowFocused(ImGuiFocusedFlags_RootAndChildWindows);
  // Keys go to the panel under the mouse, so Delete over another panel never deletes nodes;
  // with the mouse over no window at all, to the canvas when it has the focus; during one of
  // its drags, to the canvas (Escape cancels it wherever the mouse has gone).
  constexpr ImGuiHoveredFlags kThrough = ImGuiHoveredFlags_AllowWhenBlockedByActiveItem;
  bool over_canvas = ImGui::IsWindowHovered(ImGuiHoveredFlags_ChildWindows | kThrough);
  bool over_any = ImGui::IsWindowHovered(ImGuiHoveredFlags_AnyWindow | kThrough |
                                         ImGuiHoveredFlags_AllowWhenBlockedByPopup);
  keys_ = over_canvas || (focused_ && !over_any) || mode_ != Mode::Idle;

  sync(doc);
  apply_pending_frame();
  handle_keyboard(doc);
  handle_mouse(doc);
  sync(doc);  // edits made this frame are drawn this frame
  draw(doc);
  tooltips(doc);
  draw_menus(doc);
  draw_comment_editor(doc);
  draw_inline_editor(doc);
  draw_value_editor(doc);
  draw_function_renamer(doc);
  if (auto choice = palette_.draw(fonts_ ? fonts_->ui() : nullptr)) apply_choice(doc, *choice);
  draw_help();
}

// ---------------------------------------------------------------- document and caches

void NodeCanvas::sync(EditorDocument& doc) {
  bool new_doc = doc_seen_ != &doc;
  doc_seen_ = &doc;
  // The graph shown must exist: a rename, a delete or another document may take it away.
  while (!crumbs_.empty() && !graph_nodes(doc.doc(), crumbs_.back())) crumbs_.pop_back();
  if (crumbs_.empty()) {
    if (!doc.doc().kernels.empty())
      crumbs_.push_back(GraphRef{doc.doc().kernels[0].name, false});
    else if (!doc.doc().functions.empty())
      crumbs_.push_back(GraphRef{doc.doc().functions[0].name, true});
    if (!crumbs_.empty()) pending_frame_ = Frame::All;
  }
  const GraphRef& g = graph();
  bool graph_changed = !(geo_graph_ == g);
  if (graph_changed || new_doc || shape_rev_ != doc.logic_revision()) {
    static const graph::GraphTypes no_types;
    geo_.build(doc.doc(), g, g.valid() ? doc.types(g) : no_types,
               [this](const std::string& s) { return measure(s); });
    shape_rev_ = doc.logic_revision();
    place_rev_ = ~0ull;
    problems_logic_rev_ = ~0ull;
    geo_graph_ = g;
  }
  if (place_rev_ != doc.revision()) {
    geo_.place(doc.doc(), g);
    place_rev_ = doc.revision();
  }
  if (problems_diag_rev_ != doc.diagnostics_revision() ||
      problems_logic_rev_ != doc.logic_revision()) {
    problems_diag_rev_ = doc.diagnostics_revision();
    problems_logic_rev_ = doc.logic_revision();
    problems_.clear();
    erring_.clear();
    notes_.clear();
    for (const Diagnostic& d : doc.notes())
      if (d.graph == g && d.node >= 0) notes_[d.node].push_back(d.message);
    for (const Diagnostic& d : doc.diagnostics()) {
      if (!(d.graph == g) || d.node < 0) continue;
      bool warning = d.severity == Diagnostic::Severity::Warning;
      problems_[d.node].push_back((d.pin.empty() ? "" : d.pin + ": ") +
                                  (warning ? "warning: " : "") + d.message);
      if (!warning) erring_.insert(d.node);
    }
    if (options_.live_problems && g.valid())
      for (const graph::NodeProblem& p : doc.types(g).problems) {
        if (p.node < 0) continue;
        std::string text = (p.pin.empty() ? "" : p.pin + ": ") + p.message;
        auto& list = problems_[p.node];
        if (std::find(list.begin(), list.end(), text) == list.end()) list.push_back(text);
        erring_.insert(p.node);
      }
  }
  if (!(doc.selection().graph == g)) {
    Selection s;
    s.graph = g;
    doc.set_selection(s);
  }
  if (pending_select_) {
    pending_select_ = false;
    if (find_node(doc.doc(), g, pending_node_)) select_only(doc, {pending_node_});
  }
}

const graph::GraphLayout* NodeCanvas::layout(const EditorDocument& doc) const {
  return find_layout(doc.doc(), graph().name);
}

std::vector<std::string> NodeCanvas::problems_of(int index) const {
  auto it = problems_.find(geo_.nodes()[static_cast<size_t>(index)].id);
  return it == problems_.end() ? std::vector<std::string>{} : it->second;
}

ImFont* NodeCanvas::font_for(float units) const {
  float px = units * view_.zoom;
  ImFont* f = fonts_ ? fonts_->nearest(px) : nullptr;
  return f ? f : ImGui::GetFont();
}

float NodeCanvas::measure(const std::string& text) const {
  float size = geo_.metrics().text;
  ImFont* f = fonts_ ? fonts_->nearest(size) : nullptr;
  if (!f) f = ImGui::GetFont();
  return f->CalcTextSizeA(size, FLT_MAX, 0.0f, text.c_str()).x;
}

Rect NodeCanvas::visible_rect() const {
  Vec2 a = view_.to_canvas(view_.origin);
  Vec2 b = view_.to_canvas(ImVec2(view_.origin.x + size_.x, view_.origin.y + size_.y));
  return Rect{a.x, a.y, b.x, b.y};
}

void NodeCanvas::apply_pending_frame() {
  if (pending_frame_ == Frame::None || geo_.nodes().empty() || size_.x <= 0) {
    if (geo_.nodes().empty()) pending_frame_ = Frame::None;
    return;
  }
  Rect r;
  bool any = false;
  auto add = [&](const Rect& x) {
    r = any ? r.united(x) : x;
    any = true;
  };
  if (pending_frame_ == Frame::All) {
    r = geo_.bounds();
    any = true;
  } else if (pending_frame_ == Frame::Node) {
    if (int i = geo_.index_of(pending_node_); i >= 0)
      add(geo_.nodes()[static_cast<size_t>(i)].rect());
  } else if (doc_seen_) {
    for (int id : doc_seen_->selection().nodes)
      if (int i = geo_.index_of(id); i >= 0) add(geo_.nodes()[static_cast<size_t>(i)].rect());
    if (!any) {
      r = geo_.bounds();
      any = true;
    }
  }
  Frame kind = pending_frame_;
  pending_frame_ = Frame::None;
  if (!any) return;
  r = r.expanded(40);
  float fit = std::min(size_.x / std::max(r.width(), 1.0f), size_.y / std::max(r.height(), 1.0f));
  // A focused node is shown at a readable zoom, not blown up to fill the canvas.
  float zoom = kind == Frame::Node ? std::clamp(view_.zoom, 0.8f, 1.5f) : std::min(fit, 1.5f);
  view_.zoom = std::clamp(zoom, ViewTransform::kMinZoom, ViewTransform::kMaxZoom);
  view_.center_on(Vec2{(r.x0 + r.x1) * 0.5f, (r.y0 + r.y1) * 0.5f}, size_);
}

// ---------------------------------------------------------------- navigation

void NodeCanvas::show(const GraphRef& g) {
  crumbs_ = {g};
  pending_frame_ = Frame::All;
  mode_ = Mode::Idle;
  palette_.close();
}

void NodeCanvas::enter_function(const std::string& name) {
  if (!crumbs_.empty() && crumbs_.back() == GraphRef{name, true}) return;
  crumbs_.push_back(GraphRef{name, true});
  pending_frame_ = Frame::All;
  palette_.close();
}

void NodeCanvas::leave() {
  if (crumbs_.size() <= 1) return;
  crumbs_.pop_back();
  pending_frame_ = Frame::All;
  palette_.close();
}

void NodeCanvas::focus(const GraphRef& g, int node) {
  if (!(graph() == g)) {
    auto it = std::find(crumbs_.begin(), crumbs_.end(), g);
    if (it != crumbs_.end())
      crumbs_.erase(it + 1, crumbs_.end());
    else if (g.function && !crumbs_.empty())
      crumbs_.push_back(g);
    else
      crumbs_ = {g};
  }
  pending_node_ = node;
  pending_frame_ = node >= 0 ? Frame::Node : Frame::All;
  pending_select_ = node >= 0;  // the next frame selects it (the document may be another by then)
}

// ---------------------------------------------------------------- screen positions

std::optional<ImVec2> NodeCanvas::node_screen_pos(int id) const {
  int i = geo_.index_of(id);
  if (i < 0) return std::nullopt;
  return view_.to_screen(geo_.nodes()[static_cast<size_t>(i)].pos);
}

std::optional<ImVec2> NodeCanvas::pin_screen_pos(const PinRef& pin, bool output) const {
  int i = geo_.index_of(pin.node);
  if (i < 0) return std::nullopt;
  int p = output ? geo_.output_index(i, pin.pin) : geo_.input_index(i, pin.pin);
  if (p < 0) return std::nullopt;
  return view_.to_screen(output ? geo_.output_pos(i, p) : geo_.input_pos(i, p));
}

std::optional<ImVec2> NodeCanvas::link_screen_point(const PinRef& input, float t) const {
  int i = geo_.index_of(input.node);
  if (i < 0) return std::nullopt;
  int p = geo_.input_index(i, input.pin);
  for (const LinkGeom& l : geo_.links())
    if (l.to == i && l.to_pin == p) return view_.to_screen(GraphGeometry::link_point(l, t));
  return std::nullopt;
}

std::optional<ImVec2> NodeCanvas::zone_screen_pos(const RegionRef& region) const {
  int z = geo_.zone_of(region);
  if (z < 0) return std::nullopt;
  const Rect& r = geo_.zones()[static_cast<size_t>(z)].rect;
  return view_.to_screen(Vec2{r.x0, r.y0});
}

std::optional<Rect> NodeCanvas::minimap_screen_rect() const {
  Minimap m = minimap();
  if (!m.shown) return std::nullopt;
  return m.screen;
}

std::optional<ImVec2> NodeCanvas::input_value_screen_pos(const PinRef& input) const {
  int i = geo_.index_of(input.node);
  if (i < 0) return std::nullopt;
  int p = geo_.input_index(i, input.pin);
  if (p < 0) return std::nullopt;
  Rect r = value_rect(i, p);
  if (r.width() <= 0) return std::nullopt;
  // Over the value when there is one (right of the name), else over the name.
  const PinGeom& pin = geo_.nodes()[static_cast<size_t>(i)].inputs[static_cast<size_t>(p)];
  float x = pin.literal.empty() ? (r.x0 + r.x1) * 0.5f
                                : std::min(r.x1 - 2, r.x0 + pin.name_w + 14 + geo_.metrics().pad);
  return view_.to_screen(Vec2{x, (r.y0 + r.y1) * 0.5f});
}

Vec2 NodeCanvas::clear_spot(Vec2 at, float w, float h) const {
  float margin = 12 / view_.zoom;
  Rect vis = visible_rect();
  Minimap map = minimap();
  Rect under;  // the minimap and a margin, in canvas units (it sits in the corner)
  if (map.shown) {
    Vec2 a = view_.to_canvas(ImVec2(map.screen.x0, map.screen.y0));
    under = Rect{a.x - margin, a.y - margin, vis.x1, vis.y1};
  }
  Rect box{at.x, at.y, at.x + w, at.y + h};
  if (box.inside(vis) && !(map.shown && box.overlaps(under))) return at;  // where it was asked
  Rect room{vis.x0 + margin, vis.y0 + margin, vis.x1 - margin, vis.y1 - margin};
  // Bigger than the view: its top-left corner shows.
  Vec2 p{std::max(room.x0, std::min(at.x, room.x1 - w)),
         std::max(room.y0, std::min(at.y, room.y1 - h))};
  if (map.shown) {
    if (Rect{p.x, p.y, p.x + w, p.y + h}.overlaps(under)) {
      // The shorter way out: left of it or above it (both stay in view: the minimap is small).
      float left = p.x + w - under.x0, up = p.y + h - under.y0;
      if (left <= up && under.x0 - w >= room.x0)
        p.x = under.x0 - w;
      else
        p.y = std::max(room.y0, under.y0 - h);
    }
  }
  return Vec2{std::round(p.x), std::round(p.y)};
}

// ---------------------------------------------------------------- edits

void NodeCanvas::select_only(EditorDocument& doc, std::vector<int> nodes,
                             std::vector<size_t> comments) {
  Selection s;
  s.graph = graph();
  s.nodes = std::move(nodes);
  s.comments = std::move(comments);
  doc.set_selection(std::move(s));
}

RegionRef NodeCanvas::region_at(Vec2 p) const {
  int z = geo_.zone_at(p);
  return z < 0 ? RegionRef{} : geo_.zones()[static_cast<size_t>(z)].region;
}

void NodeCanvas::open_palette(EditorDocument& doc, Vec2 at, ImVec2 screen, bool link) {
  PaletteRequest r;
  r.at = at;
  r.region = region_at(at);
  r.link = link;
  if (link) {
    r.anchor = anchor_;
    r.anchor_output = anchor_output_;
    const graph::GraphTypes& types = detached_types_ ? *detached_types_ : doc.types(graph());
    if (anchor_output_)
      if (auto v = output_value(detached_ ? *detached_ : doc.doc(), graph(), anchor_, types)) {
        r.value = *v;
        r.value_known = true;
      }
    // A node made for an output lives where the output can be read (beside its node; in the
    // loop's body for a loop index) unless dropped in a region.
    if (anchor_output_ && r.region.top()) r.region = reader_region(doc.doc(), graph(), anchor_);
  }
  palette_.open(doc.doc(), graph(), r, screen);
}

void NodeCanvas::apply_choice(EditorDocument& doc, const SearchPalette::Choice& choice) {
  const PaletteRequest& r = palette_.request();
  doc.begin_group("Add " + choice.entry.label);
  EditResult added = add_node(doc, graph(), r.region, choice.entry.type, r.at, choice.entry.params);
  if (added.ok && r.link && !choice.pin.empty()) {
    int id = added.nodes[0];
    EditResult linked = r.anchor_output ? connect(doc, graph(), r.anchor, PinRef{id, choice.pin})
                                        : connect(doc, graph(), PinRef{id, choice.pin}, r.anchor);
    if (!linked.ok) status_ = "not linked: " + linked.message;
  }
  if (added.ok) {
    // Its size is known once it is built: then it is moved wholly into view, off the minimap
    // (a link dropped near an edge would leave the new node half hidden).
    sync(doc);
    if (int i = geo_.index_of(added.nodes[0]); i >= 0) {
      const NodeGeom& n = geo_.nodes()[static_cast<size_t>(i)];
      Vec2 spot = clear_spot(n.pos, n.w, n.h);
      if (spot.x != n.pos.x || spot.y != n.pos.y)
        doc.execute(set_position(doc.doc(), graph().name, n.id, spot));
    }
  }
  doc.end_group();
  if (!added.ok) {
    status_ = added.message;
    return;
  }
  select_only(doc, added.nodes);
}

std::optional<PinRef> NodeCanvas::hovered_output() const {
  if (hover_.kind != Hit::Kind::Pin || !hover_.output || hover_.node < 0 ||
      static_cast<size_t>(hover_.node) >= geo_.nodes().size())
    return std::nullopt;
  const NodeGeom& n = geo_.nodes()[static_cast<size_t>(hover_.node)];
  if (hover_.pin < 0 || static_cast<size_t>(hover_.pin) >= n.outputs.size()) return std::nullopt;
  return PinRef{n.id, n.outputs[static_cast<size_t>(hover_.pin)].name};
}

}  // namespace loom::editor
