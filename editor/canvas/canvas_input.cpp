// Mouse and keyboard: what the user's hands do to the canvas and the document.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

#include "editor/canvas/node_canvas.h"
#include "editor/model/clipboard.h"
#include "editor/model/edits.h"
#include "editor/model/graph_access.h"
#include "editor/model/literal_text.h"
#include "editor/model/operations.h"

namespace loom::editor {

namespace {

constexpr float kDragThreshold = 4.0f;  // pixels before a press becomes a drag

float distance(ImVec2 a, ImVec2 b) { return std::hypot(a.x - b.x, a.y - b.y); }

// A scrubbed number as typed: integers stay integers; floats keep a point and the digits
// the step can change ("2.5", not "2.50000012").
std::string scrub_text(double v, bool integer, double step) {
  char buf[64];
  if (integer) {
    std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(std::llround(v)));
    return buf;
  }
  int decimals = std::clamp(static_cast<int>(-std::floor(std::log10(step))), 1, 9);
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  std::string t = buf;
  while (t.size() > 2 && t.back() == '0' && t[t.size() - 2] != '.') t.pop_back();
  return t;
}

bool key_pressed(ImGuiKey k) { return ImGui::IsKeyPressed(ImGui::GetKeyIndex(k), false); }

}  // namespace

NodeCanvas::Minimap NodeCanvas::minimap() const {
  Minimap m;
  if (!options_.minimap || size_.x < 360 || size_.y < 260 || geo_.nodes().empty()) return m;
  m.shown = true;
  float w = 200, h = 140, margin = 10;
  m.screen = Rect{view_.origin.x + size_.x - w - margin, view_.origin.y + size_.y - h - margin,
                  view_.origin.x + size_.x - margin, view_.origin.y + size_.y - margin};
  Rect world = geo_.bounds().united(visible_rect()).expanded(40);
  m.scale = std::min(w / std::max(world.width(), 1.0f), h / std::max(world.height(), 1.0f));
  // Centre the world in the minimap.
  float cx = (world.x0 + world.x1) * 0.5f, cy = (world.y0 + world.y1) * 0.5f;
  m.world = Rect{cx - w * 0.5f / m.scale, cy - h * 0.5f / m.scale, cx + w * 0.5f / m.scale,
                 cy + h * 0.5f / m.scale};
  return m;
}

Rect NodeCanvas::value_rect(int node, int pin) const {
  const NodeGeom& n = geo_.nodes()[static_cast<size_t>(node)];
  const NodeMetrics& m = geo_.metrics();
  if (n.reroute || n.collapsed || m.text * view_.zoom < 6.0f) return Rect{};
  const PinGeom& in = n.inputs[static_cast<size_t>(pin)];
  if (in.linked) return Rect{};
  Vec2 at = geo_.input_pos(node, pin);
  // The label and, without a value, room for one; never over the row's output label.
  float right = n.pos.x + n.w - m.pad;
  if (static_cast<size_t>(pin) < n.outputs.size())
    right -= n.outputs[static_cast<size_t>(pin)].width + 2 * m.pad;
  float x0 = at.x + m.pad;
  float x1 = std::min(right, x0 + 2 + std::max(in.width, in.name_w + 30));
  if (x1 <= x0) return Rect{};
  return Rect{x0, at.y - m.row * 0.5f, x1, at.y + m.row * 0.5f};
}

NodeCanvas::Hit NodeCanvas::hit_test(ImVec2 screen) const {
  Hit hit;
  std::vector<Rect> crumbs = crumb_rects();
  for (size_t i = 0; i < crumbs.size(); ++i)
    if (crumbs[i].contains(screen.x, screen.y)) {
      hit.kind = Hit::Kind::Breadcrumb;
      hit.node = static_cast<int>(i);
      return hit;
    }
  Minimap map = minimap();
  if (map.shown && map.screen.contains(screen.x, screen.y)) {
    hit.kind = Hit::Kind::Minimap;
    return hit;
  }
  Vec2 p = view_.to_canvas(screen);
  const NodeMetrics& m = geo_.metrics();
  float pin_reach = std::max(m.pin_radius * 1.6f, 9.0f / view_.zoom);
  GraphGeometry::PinHit pin = geo_.pin_at(p, pin_reach);
  if (pin.node >= 0) {
    hit.kind = Hit::Kind::Pin;
    hit.node = pin.node;
    hit.pin = pin.pin;
    hit.output = pin.output;
    return hit;
  }
  if (int n = geo_.node_at(p); n >= 0) {
    hit.kind = Hit::Kind::Node;
    hit.node = n;
    const NodeGeom& node = geo_.nodes()[static_cast<size_t>(n)];
    for (size_t k = 0; k < node.inputs.size(); ++k)
      if (value_rect(n, static_cast<int>(k)).contains(p.x, p.y)) {
        hit.kind = Hit::Kind::Value;
        hit.pin = static_cast<int>(k);
      }
    return hit;
  }
  // Zone label bars (the region node and what it holds move together from there).
  int best_zone = -1;
  for (size_t z = 0; z < geo_.zones().size(); ++z) {
    const Rect& r = geo_.zones()[z].rect;
    if (r.contains(p.x, p.y) && p.y <= r.y0 + m.zone_label &&
        (best_zone < 0 ||
         geo_.zones()[z].depth > geo_.zones()[static_cast<size_t>(best_zone)].depth))
      best_zone = static_cast<int>(z);
  }
  if (best_zone >= 0) {
    hit.kind = Hit::Kind::Zone;
    hit.zone = best_zone;
    hit.node = geo_.zones()[static_cast<size_t>(best_zone)].owner;
    return hit;
  }
  if (doc_seen_)
    if (const graph::GraphLayout* l = find_layout(doc_seen_->doc(), graph().name))
      for (size_t c = l->comments.size(); c-- > 0;) {
        const graph::CommentFrame& f = l->comments[c];
        float handle = 14.0f / view_.zoom;
        if (p.x >= f.x + f.w - handle && p.x <= f.x + f.w && p.y >= f.y + f.h - handle &&
            p.y <= f.y + f.h) {
          hit.kind = Hit::Kind::CommentResize;
          hit.comment = static_cast<int>(c);
          return hit;
        }
        if (p.x >= f.x && p.x <= f.x + f.w && p.y >= f.y && p.y <= f.y + std::min(f.h, 28.0f)) {
          hit.kind = Hit::Kind::Comment;
          hit.comment = static_cast<int>(c);
          return hit;
        }
      }
  if (int l = geo_.link_at(p, 6.0f / view_.zoom); l >= 0) {
    hit.kind = Hit::Kind::Link;
    hit.link = l;
  }
  return hit;
}

// The mouse, one frame: the wheel and panning first, then a left press starts what the hit
// under it asks for, and the mode it started follows the drag until the release.
void NodeCanvas::handle_mouse(EditorDocument& doc) {
  ImVec2 mouse = ImGui::GetIO().MousePos;
  Vec2 cm = view_.to_canvas(mouse);  // before this frame's zoom, as the press was aimed
  hover_ = hovered_ && mode_ == Mode::Idle ? hit_test(mouse) : Hit{};
  if (zoom_and_pan(mouse, cm)) return;
  if (press_left(doc, mouse)) return;
  follow_drag(doc, mouse, cm);
}

// Zoom: the wheel. Panning: middle drag, right drag, Space + left drag. A right click without
// a drag opens the menu of what is under the mouse (`cm`, canvas units). True while panning.
bool NodeCanvas::zoom_and_pan(ImVec2 mouse, Vec2 cm) {
  ImGuiIO& io = ImGui::GetIO();
  if (hovered_ && io.MouseWheel != 0.0f && mode_ != Mode::Pan)
    view_.zoom_at(mouse, view_.zoom * std::pow(1.2f, io.MouseWheel));

  if (hovered_ && mode_ == Mode::Idle && ImGui::IsMouseClicked(ImGuiMouseButton_Middle))
    mode_ = Mode::Pan;
  if (hovered_ && mode_ == Mode::Idle && ImGui::IsMouseClicked(ImGuiMouseButton_Right)) {
    right_down_ = true;
    press_screen_ = mouse;
  }
  if (right_down_ && mode_ == Mode::Idle && distance(mouse, press_screen_) > kDragThreshold)
    mode_ = Mode::Pan;
  if (ImGui::IsMouseReleased(ImGuiMouseButton_Right)) {
    if (right_down_ && mode_ == Mode::Idle) open_menu(hit_test(mouse), cm);
    right_down_ = false;
  }
  if (mode_ != Mode::Pan) return false;
  view_.scroll.x -= io.MouseDelta.x / view_.zoom;
  view_.scroll.y -= io.MouseDelta.y / view_.zoom;
  if (!ImGui::IsMouseDown(ImGuiMouseButton_Middle) && !ImGui::IsMouseDown(ImGuiMouseButton_Right) &&
      !ImGui::IsMouseDown(ImGuiMouseButton_Left))
    mode_ = Mode::Idle;
  return true;
}

// A left double-click acts on what it hits; a left press with Space held pans; any other
// left press starts the mode of what it hits. True when the frame's mouse work is done.
bool NodeCanvas::press_left(EditorDocument& doc, ImVec2 mouse) {
  ImGuiIO& io = ImGui::GetIO();
  bool space = keys_ && !io.WantTextInput && ImGui::IsKeyDown(ImGui::GetKeyIndex(ImGuiKey_Space));
  if (hovered_ && mode_ == Mode::Idle && ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left) &&
      !space && double_click(doc, hit_test(mouse)))
    return true;
  if (!hovered_ || mode_ != Mode::Idle || !ImGui::IsMouseClicked(ImGuiMouseButton_Left))
    return false;
  if (space) {
    mode_ = Mode::Pan;
    space_used_ = true;
    return true;
  }
  press_ = hit_test(mouse);
  press_screen_ = mouse;
  dragging_ = false;
  begin_press(doc);
  return false;
}

// The mode a left press on `press_` starts, and the selection it makes at once.
void NodeCanvas::begin_press(EditorDocument& doc) {
  switch (press_.kind) {
    case Hit::Kind::Minimap: mode_ = Mode::Minimap; return;
    case Hit::Kind::Breadcrumb:
      if (static_cast<size_t>(press_.node) + 1 < crumbs_.size()) {
        crumbs_.resize(static_cast<size_t>(press_.node) + 1);
        pending_frame_ = Frame::All;
        palette_.close();
      }
      return;
    case Hit::Kind::Pin: begin_link(doc, press_); return;
    case Hit::Kind::Value:  // a click types a value, a drag scrubs it (see Mode::Value)
      mode_ = Mode::Value;
      scrubbing_ = false;
      return;
    case Hit::Kind::Node:
    case Hit::Kind::Zone: press_node(doc); return;
    case Hit::Kind::Comment: press_comment(doc); return;
    case Hit::Kind::CommentResize: {
      const graph::GraphLayout* l = layout(doc);
      if (!l || static_cast<size_t>(press_.comment) >= l->comments.size()) return;
      resize_start_ = l->comments[static_cast<size_t>(press_.comment)];
      doc.begin_group("Resize comment");
      mode_ = Mode::ResizeComment;
      return;
    }
    case Hit::Kind::Link:
    case Hit::Kind::None: mode_ = Mode::Box; return;
  }
}

// A press on an unselected node selects it (adds it with Ctrl or Shift); a drag moves the
// selection.
void NodeCanvas::press_node(EditorDocument& doc) {
  const Selection& sel = doc.selection();
  int id = geo_.nodes()[static_cast<size_t>(press_.node)].id;
  press_was_selected_ = sel.has(id);
  if (!sel.has(id)) {
    if (ImGui::GetIO().KeyCtrl || ImGui::GetIO().KeyShift) {
      Selection s = sel;
      s.add(id);
      doc.set_selection(s);
    } else {
      select_only(doc, {id});
    }
  }
  mode_ = Mode::MoveNodes;
}

void NodeCanvas::press_comment(EditorDocument& doc) {
  const Selection& sel = doc.selection();
  size_t c = static_cast<size_t>(press_.comment);
  if (!sel.has_comment(c)) {
    if (ImGui::GetIO().KeyCtrl || ImGui::GetIO().KeyShift) {
      Selection s = sel;
      s.add_comment(c);
      doc.set_selection(s);
    } else {
      select_only(doc, {}, {c});
    }
  }
  mode_ = Mode::MoveNodes;
}

// The mode a press started, while the left button is held and when it is released.
void NodeCanvas::follow_drag(EditorDocument& doc, ImVec2 mouse, Vec2 cm) {
  bool released =
      ImGui::IsMouseReleased(ImGuiMouseButton_Left) || !ImGui::IsMouseDown(ImGuiMouseButton_Left);
  if (!dragging_ && mode_ != Mode::Idle && distance(mouse, press_screen_) > kDragThreshold) {
    dragging_ = true;
    if (mode_ == Mode::MoveNodes) begin_move(doc, press_);
  }
  switch (mode_) {
    case Mode::Minimap: return drag_minimap(mouse, released);
    case Mode::MoveNodes: return drag_nodes(doc, released);
    case Mode::Box: return drag_box(doc, cm, released);
    case Mode::Value: return drag_value(doc, released);
    case Mode::Link: return drag_link(doc, cm, released);
    case Mode::ResizeComment: return drag_comment_corner(doc, mouse, released);
    default: return;
  }
}

void NodeCanvas::drag_minimap(ImVec2 mouse, bool released) {
  Minimap map = minimap();
  if (map.shown) view_.center_on(map.to_world(mouse), size_);
  if (released) mode_ = Mode::Idle;
}

// A drag moves the selection; a click without one settles the selection on what it hit
// (with Ctrl or Shift, a click on a node that was selected takes it out).
void NodeCanvas::drag_nodes(EditorDocument& doc, bool released) {
  ImGuiIO& io = ImGui::GetIO();
  if (dragging_) update_move(doc);
  if (!released) return;
  if (dragging_) {
    end_move(doc);
  } else if (press_.kind == Hit::Kind::Node || press_.kind == Hit::Kind::Zone) {
    int id = geo_.nodes()[static_cast<size_t>(press_.node)].id;
    if (io.KeyCtrl || io.KeyShift) {
      if (press_was_selected_) {  // a click on a selected node with Ctrl takes it out
        Selection s = doc.selection();
        s.remove(id);
        doc.set_selection(s);
      }
    } else {
      select_only(doc, {id});
    }
  } else if (press_.kind == Hit::Kind::Comment && !io.KeyCtrl && !io.KeyShift) {
    select_only(doc, {}, {static_cast<size_t>(press_.comment)});
  }
  mode_ = Mode::Idle;
}

// Box selection from the press to `cm` (canvas units) at the release: nodes it touches,
// comments it holds whole; a click on empty canvas clears the selection.
void NodeCanvas::drag_box(EditorDocument& doc, Vec2 cm, bool released) {
  ImGuiIO& io = ImGui::GetIO();
  if (!released) return;
  if (dragging_) {
    Vec2 a = view_.to_canvas(press_screen_);
    Rect box{std::min(a.x, cm.x), std::min(a.y, cm.y), std::max(a.x, cm.x), std::max(a.y, cm.y)};
    Selection s = io.KeyCtrl || io.KeyShift ? doc.selection() : Selection{};
    s.graph = graph();
    std::vector<int> found;
    geo_.nodes_in(box, found);
    std::sort(found.begin(), found.end());
    for (int i : found)
      if (geo_.nodes()[static_cast<size_t>(i)].rect().overlaps(box))
        s.add(geo_.nodes()[static_cast<size_t>(i)].id);
    if (const graph::GraphLayout* l = layout(doc))
      for (size_t c = 0; c < l->comments.size(); ++c) {
        const graph::CommentFrame& f = l->comments[c];
        if (Rect{f.x, f.y, f.x + f.w, f.y + f.h}.inside(box)) s.add_comment(c);
      }
    doc.set_selection(s);
  } else if (!io.KeyCtrl && !io.KeyShift) {
    select_only(doc, {});
  }
  mode_ = Mode::Idle;
}

// A press on an input's value label: a drag scrubs a number (or moves the node when there is
// no number to scrub), a click opens the inline editor.
void NodeCanvas::drag_value(EditorDocument& doc, bool released) {
  const NodeGeom& n = geo_.nodes()[static_cast<size_t>(press_.node)];
  PinRef input{n.id, n.inputs[static_cast<size_t>(press_.pin)].name};
  if (dragging_ && !scrubbing_) {
    const graph::Node* node = find_node(doc.doc(), graph(), n.id);
    const graph::Input* in = node ? node->input(input.pin) : nullptr;
    if (in && !in->linked && in->literal.is_number()) {
      scrubbing_ = true;
      scrub_int_ = in->literal.kind == graph::Literal::Kind::Int;
      scrub_start_ = in->literal.as_double();
      // The step is fixed at the press: a rate of the changing value would run away.
      scrub_step_ = std::max(std::fabs(scrub_start_) * 0.005, scrub_int_ ? 1.0 : 0.001);
      doc.begin_group("Scrub " + input.pin);
    } else {  // nothing to scrub: the label moves its node as the rest of the box does
      int id = n.id;
      if (!doc.selection().has(id)) select_only(doc, {id});
      press_.kind = Hit::Kind::Node;
      mode_ = Mode::MoveNodes;
      begin_move(doc, press_);
      return;
    }
  }
  if (scrubbing_) update_scrub(doc);
  if (!released) return;
  if (scrubbing_)
    end_scrub(doc, false);
  else
    open_inline_editor(doc, input);
  mode_ = Mode::Idle;
}

// A link being drawn from `anchor_`: the pin of the other direction near `cm` is its target.
void NodeCanvas::drag_link(EditorDocument& doc, Vec2 cm, bool released) {
  link_has_target_ = false;
  if (GraphGeometry::PinHit pin =
          geo_.pin_at(cm, std::max(12.0f / view_.zoom, geo_.metrics().pin_radius * 2));
      pin.node >= 0 && pin.output != anchor_output_) {
    const NodeGeom& n = geo_.nodes()[static_cast<size_t>(pin.node)];
    link_target_ = PinRef{n.id, pin.output ? n.outputs[static_cast<size_t>(pin.pin)].name
                                           : n.inputs[static_cast<size_t>(pin.pin)].name};
    link_has_target_ = true;
  }
  if (released) end_link(doc);
}

// The comment's lower right corner follows the mouse; the whole resize is one undo step.
void NodeCanvas::drag_comment_corner(EditorDocument& doc, ImVec2 mouse, bool released) {
  if (dragging_) {
    graph::CommentFrame f = resize_start_;
    f.w = std::max(60.0f, std::round(resize_start_.w + (mouse.x - press_screen_.x) / view_.zoom));
    f.h = std::max(40.0f, std::round(resize_start_.h + (mouse.y - press_screen_.y) / view_.zoom));
    doc.execute(change_layout(
        doc.doc(), LayoutChange{graph().name, {}, {{static_cast<size_t>(press_.comment), f}}}));
  }
  if (!released) return;
  doc.end_group();
  mode_ = Mode::Idle;
}

// ---------------------------------------------------------------- scrubbing

void NodeCanvas::update_scrub(EditorDocument& doc) {
  ImGui::SetMouseCursor(ImGuiMouseCursor_ResizeEW);
  const NodeGeom& n = geo_.nodes()[static_cast<size_t>(press_.node)];
  PinRef input{n.id, n.inputs[static_cast<size_t>(press_.pin)].name};
  double dx = std::round(ImGui::GetIO().MousePos.x - press_screen_.x);
  double v = scrub_start_ + dx * scrub_step_;
  if (!scrub_int_) v = std::round(v / scrub_step_) * scrub_step_;
  std::string error;
  std::optional<graph::Literal> value =
      parse_literal_text(scrub_text(v, scrub_int_, scrub_step_), false, &error);
  const graph::Node* node = find_node(doc.doc(), graph(), n.id);
  const graph::Input* in = node ? node->input(input.pin) : nullptr;
  if (!value || (in && !in->linked && in->literal.spelling == value->spelling)) return;
  set_literal(doc, graph(), input, value);
  sync(doc);
}

void NodeCanvas::end_scrub(EditorDocument& doc, bool cancel) {
  scrubbing_ = false;
  doc.end_group();
  if (cancel && doc.undo_label().rfind("Scrub ", 0) == 0) doc.undo();
}

// ---------------------------------------------------------------- moving

void NodeCanvas::begin_move(EditorDocument& doc, const Hit& hit) {
  doc.begin_group("Move");
  const Selection& sel = doc.selection();
  const auto& nodes = geo_.nodes();
  std::vector<bool> moving(nodes.size(), false);
  for (int id : sel.nodes)
    if (int i = geo_.index_of(id); i >= 0) moving[static_cast<size_t>(i)] = true;
  move_comments_.clear();
  if (const graph::GraphLayout* l = layout(doc))
    for (size_t c : sel.comments) {
      if (c >= l->comments.size()) continue;
      const graph::CommentFrame& f = l->comments[c];
      move_comments_.emplace_back(c, f);
      // A comment carries the nodes lying inside it.
      Rect r{f.x, f.y, f.x + f.w, f.y + f.h};
      for (size_t i = 0; i < nodes.size(); ++i)
        if (nodes[i].rect().inside(r)) moving[i] = true;
    }
  // A region node carries what its regions hold (pre-order: parents come first).
  for (size_t i = 0; i < nodes.size(); ++i)
    if (nodes[i].parent >= 0 && moving[static_cast<size_t>(nodes[i].parent)]) moving[i] = true;
  std::vector<std::pair<int, Vec2>> unplaced;
  move_nodes_.clear();
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (!moving[i]) continue;
    move_nodes_.emplace_back(nodes[i].id, nodes[i].pos);
    if (!nodes[i].positioned) unplaced.emplace_back(nodes[i].id, nodes[i].pos);
  }
  // Nodes shown at their automatic place get that place written, in this same undo step.
  if (!unplaced.empty()) place_nodes(doc, graph(), unplaced);
  move_zone_target_ = -1;
  (void)hit;
}

void NodeCanvas::update_move(EditorDocument& doc) {
  ImVec2 mouse = ImGui::GetIO().MousePos;
  float dx = std::round((mouse.x - press_screen_.x) / view_.zoom);
  float dy = std::round((mouse.y - press_screen_.y) / view_.zoom);
  LayoutChange change{graph().name, {}, {}};
  for (const auto& [id, start] : move_nodes_)
    change.nodes.emplace_back(id, Vec2{start.x + dx, start.y + dy});
  for (const auto& [c, f] : move_comments_) {
    graph::CommentFrame moved = f;
    moved.x += dx;
    moved.y += dy;
    change.comments.emplace_back(c, moved);
  }
  doc.execute(change_layout(doc.doc(), change));
  sync(doc);
  move_zone_target_ = drop_zone();
}

int NodeCanvas::drop_zone() const {
  if (press_.kind != Hit::Kind::Node || press_.node < 0) return -1;
  const auto& nodes = geo_.nodes();
  int primary =
      geo_.index_of(move_nodes_.empty() ? -1 : nodes[static_cast<size_t>(press_.node)].id);
  if (primary < 0) return -1;
  std::set<int> moving;
  for (const auto& [id, start] : move_nodes_) moving.insert(geo_.index_of(id));
  std::set<int> ancestors;
  for (int p = nodes[static_cast<size_t>(primary)].parent; p >= 0;
       p = nodes[static_cast<size_t>(p)].parent)
    ancestors.insert(p);
  const NodeGeom& n = nodes[static_cast<size_t>(primary)];
  Vec2 c{n.pos.x + n.w * 0.5f, n.pos.y + n.h * 0.5f};
  int best = -1;
  for (size_t z = 0; z < geo_.zones().size(); ++z) {
    const ZoneGeom& zone = geo_.zones()[z];
    if (!zone.rect.contains(c.x, c.y) || moving.count(zone.owner) || ancestors.count(zone.owner) ||
        static_cast<int>(z) == n.zone)
      continue;
    if (best < 0 || zone.depth > geo_.zones()[static_cast<size_t>(best)].depth)
      best = static_cast<int>(z);
  }
  return best;
}

void NodeCanvas::end_move(EditorDocument& doc) {
  if (move_zone_target_ >= 0) {
    const ZoneGeom& z = geo_.zones()[static_cast<size_t>(move_zone_target_)];
    RegionRef target = z.region;
    std::vector<int> roots;
    for (int id : doc.selection().nodes) roots.push_back(id);
    EditResult r = move_to_region(doc, graph(), roots, target);
    status_ = r.ok ? "moved into " + target.region + " of node " + std::to_string(target.node)
                   : r.message;
  }
  doc.end_group();
  move_zone_target_ = -1;
  move_nodes_.clear();
  move_comments_.clear();
}

// ---------------------------------------------------------------- links

void NodeCanvas::begin_link(EditorDocument& doc, const Hit& hit) {
  const NodeGeom& n = geo_.nodes()[static_cast<size_t>(hit.node)];
  picked_up_ = PinRef{};
  detached_.reset();
  detached_types_.reset();
  if (hit.output) {
    anchor_ = PinRef{n.id, n.outputs[static_cast<size_t>(hit.pin)].name};
    anchor_output_ = true;
  } else {
    const PinGeom& pin = n.inputs[static_cast<size_t>(hit.pin)];
    if (pin.linked && geo_.index_of(pin.from_id) >= 0) {
      // Lift the link off this input: it now hangs from its source.
      picked_up_ = PinRef{n.id, pin.name};
      anchor_ = PinRef{pin.from_id, pin.from_pin};
      anchor_output_ = true;
      detached_ = doc.doc();
      if (auto slot = find_node_slot(*detached_, graph(), n.id))
        std::erase_if(slot->node().inputs,
                      [&](const graph::Input& in) { return in.pin == pin.name; });
      detached_types_ = graph::infer_graph_types(*detached_, graph().name, graph().function);
    } else {
      anchor_ = PinRef{n.id, pin.name};
      anchor_output_ = false;
    }
  }
  mode_ = Mode::Link;
  link_has_target_ = false;
}

const LinkCheck& NodeCanvas::checked(EditorDocument& doc, const PinRef& from, const PinRef& to) {
  if (checks_rev_ != doc.revision()) {
    checks_.clear();
    checks_rev_ = doc.revision();
  }
  std::string key = std::to_string(from.node) + "." + from.pin + ">" + std::to_string(to.node) +
                    "." + to.pin +
                    (detached_ ? "~" + std::to_string(picked_up_.node) + "." + picked_up_.pin : "");
  auto it = checks_.find(key);
  if (it != checks_.end()) return it->second;
  LinkCheck c = detached_ ? check_link(*detached_, graph(), from, to, &*detached_types_)
                          : check_link(doc.doc(), graph(), from, to, &doc.types(graph()));
  return checks_.emplace(key, std::move(c)).first->second;
}

void NodeCanvas::end_link(EditorDocument& doc) {
  mode_ = Mode::Idle;
  ImVec2 mouse = ImGui::GetIO().MousePos;
  Vec2 cm = view_.to_canvas(mouse);
  if (link_has_target_) {
    PinRef from = anchor_output_ ? anchor_ : link_target_;
    PinRef to = anchor_output_ ? link_target_ : anchor_;
    if (picked_up_.node >= 0 && to == picked_up_) {  // put back where it was
      status_.clear();
    } else {
      LinkCheck c = checked(doc, from, to);
      if (!c.ok()) {
        status_ = "link refused: " + c.reason;
      } else {
        doc.begin_group(picked_up_.node >= 0 ? "Reconnect" : "Connect");
        if (picked_up_.node >= 0) disconnect(doc, graph(), picked_up_);
        EditResult r = connect(doc, graph(), from, to);
        doc.end_group();
        if (!r.ok) {
          if (picked_up_.node >= 0) doc.undo();
          status_ = "link refused: " + r.message;
        } else {
          status_ = r.message;
        }
      }
    }
  } else if (picked_up_.node >= 0) {
    disconnect(doc, graph(), picked_up_);
    status_ = "link removed";
  } else if (hovered_) {
    open_palette(doc, cm, mouse, /*link=*/true);
  }
  picked_up_ = PinRef{};
  detached_.reset();
  detached_types_.reset();
  link_has_target_ = false;
}

// ---------------------------------------------------------------- clicks and keys

bool NodeCanvas::double_click(EditorDocument& doc, const Hit& hit) {
  ImVec2 mouse = ImGui::GetIO().MousePos;
  Vec2 cm = view_.to_canvas(mouse);
  switch (hit.kind) {
    case Hit::Kind::Link: {
      const LinkGeom& l = geo_.links()[static_cast<size_t>(hit.link)];
      const NodeGeom& to = geo_.nodes()[static_cast<size_t>(l.to)];
      float half = geo_.metrics().reroute * 0.5f;
      EditResult r =
          insert_reroute(doc, graph(), PinRef{to.id, to.inputs[static_cast<size_t>(l.to_pin)].name},
                         Vec2{cm.x - half, cm.y - half});
      if (r.ok)
        select_only(doc, r.nodes);
      else
        status_ = r.message;
      return true;
    }
    case Hit::Kind::Node: {
      const NodeGeom& n = geo_.nodes()[static_cast<size_t>(hit.node)];
      if (n.type != "call") {
        if (n.reroute) return false;
        open_value_editor(doc, n.id);
        return true;
      }
      const graph::Node* node = find_node(doc.doc(), graph(), n.id);
      const graph::Literal* f = node ? node->param("function") : nullptr;
      if (f && f->kind == graph::Literal::Kind::String && doc.doc().function(f->s))
        enter_function(f->s);
      else
        status_ = "this call names no function of the document";
      return true;
    }
    case Hit::Kind::Comment:
      comment_editing_ = hit.comment;
      if (const graph::GraphLayout* l = layout(doc))
        comment_title_ = l->comments[static_cast<size_t>(hit.comment)].title;
      comment_focus_ = true;
      return true;
    case Hit::Kind::None: open_palette(doc, cm, mouse, false); return true;
    default: return false;
  }
}

void NodeCanvas::handle_keyboard(EditorDocument& doc) {
  ImGuiIO& io = ImGui::GetIO();
  if (palette_.is_open() || comment_editing_ >= 0 || editing_node_ >= 0 || inline_pin_.node >= 0 ||
      renaming_function_ || io.WantTextInput ||
      ImGui::IsPopupOpen(nullptr, ImGuiPopupFlags_AnyPopupId))
    return;
  // Undo and redo stay with the focused canvas wherever the mouse is: the app takes them
  // exactly when the canvas is not focused, so one of the two (never both) acts.
  auto undo_redo = [&] {
    if (!focused_ || mode_ != Mode::Idle || !io.KeyCtrl) return;
    if (key_pressed(ImGuiKey_Z)) {
      if (io.KeyShift ? doc.redo() : doc.undo()) status_ = io.KeyShift ? "redo" : "undo";
    } else if (key_pressed(ImGuiKey_Y)) {
      if (doc.redo()) status_ = "redo";
    }
  };
  if (!keys_) {
    undo_redo();
    return;
  }
  ImVec2 mouse = io.MousePos;
  bool mouse_in = mouse.x >= view_.origin.x && mouse.y >= view_.origin.y &&
                  mouse.x < view_.origin.x + size_.x && mouse.y < view_.origin.y + size_.y;
  ImVec2 at_screen =
      mouse_in ? mouse : ImVec2(view_.origin.x + size_.x * 0.5f, view_.origin.y + size_.y * 0.5f);
  Vec2 at = view_.to_canvas(at_screen);
  const Selection& sel = doc.selection();

  if (key_pressed(ImGuiKey_Escape)) {
    if (mode_ == Mode::MoveNodes && dragging_) {  // cancel the drag: as if it never happened
      doc.end_group();
      doc.undo();
      mode_ = Mode::Idle;
    } else if (mode_ == Mode::ResizeComment) {
      doc.end_group();
      doc.undo();
      mode_ = Mode::Idle;
    } else if (mode_ == Mode::Value) {
      if (scrubbing_) end_scrub(doc, true);  // back to the value at the press
      mode_ = Mode::Idle;
    } else if (mode_ != Mode::Idle) {
      mode_ = Mode::Idle;
      picked_up_ = PinRef{};
      detached_.reset();
    } else if (help_open_) {
      help_open_ = false;
    } else if (crumbs_.size() > 1) {
      leave();
    } else {
      select_only(doc, {});
    }
    return;
  }
  if (mode_ != Mode::Idle) return;
  if (io.KeyCtrl) {
    if (key_pressed(ImGuiKey_Z) || key_pressed(ImGuiKey_Y)) {
      undo_redo();
    } else if (key_pressed(ImGuiKey_C)) {
      copy_selection(doc);
    } else if (key_pressed(ImGuiKey_X)) {
      copy_selection(doc);
      delete_selection(doc);
    } else if (key_pressed(ImGuiKey_V)) {
      paste(doc);
    } else if (key_pressed(ImGuiKey_A)) {
      std::vector<int> all;
      for (const NodeGeom& n : geo_.nodes()) all.push_back(n.id);
      select_only(doc, all);
    } else if (ImGui::IsKeyPressed(options_.keys.d, false)) {
      EditResult r = duplicate_nodes(doc, graph(), sel.nodes, Vec2{30, 30});
      if (!r.ok) status_ = r.message;
    }
    return;
  }
  if (io.KeyAlt && sel.nodes.size() == 1) {
    int delta = key_pressed(ImGuiKey_UpArrow) ? -1 : key_pressed(ImGuiKey_DownArrow) ? 1 : 0;
    if (delta) {
      EditResult r = reorder_node(doc, graph(), sel.nodes[0], delta);
      status_ = r.ok ? "runs " + std::string(delta < 0 ? "earlier" : "later") : r.message;
    }
  }
  if (key_pressed(ImGuiKey_Delete) || key_pressed(ImGuiKey_Backspace)) delete_selection(doc);
  if (key_pressed(ImGuiKey_Tab)) open_palette(doc, at, at_screen, false);
  if (key_pressed(ImGuiKey_Home)) frame_all();
  if ((key_pressed(ImGuiKey_Enter) || key_pressed(ImGuiKey_KeyPadEnter)) && sel.nodes.size() == 1) {
    const graph::Node* n = find_node(doc.doc(), graph(), sel.nodes[0]);
    const graph::Literal* f = n && n->type == "call" ? n->param("function") : nullptr;
    if (f && f->kind == graph::Literal::Kind::String && doc.doc().function(f->s))
      enter_function(f->s);
    else if (n)
      open_value_editor(doc, n->id);
  }
  if (ImGui::IsKeyPressed(options_.keys.f1, false)) help_open_ = !help_open_;
  // Space: a tap opens the palette, a hold pans (see handle_mouse).
  if (key_pressed(ImGuiKey_Space)) space_used_ = false;
  if (ImGui::IsKeyReleased(ImGui::GetKeyIndex(ImGuiKey_Space)) && !space_used_)
    open_palette(doc, at, at_screen, false);
  for (ImWchar c : io.InputQueueCharacters) {
    if (c == '?') help_open_ = !help_open_;
    if (c == 'f' || c == 'F') frame_selection();
    if (c == 'c' || c == 'C') comment_around_selection(doc);
    if (c == 'h' || c == 'H') toggle_collapse(doc);
    if (c == 'A') open_palette(doc, at, at_screen, false);
  }
}

void NodeCanvas::delete_selection(EditorDocument& doc) {
  Selection sel = doc.selection();
  if (sel.empty()) return;
  doc.begin_group("Delete");
  if (!sel.nodes.empty()) remove_nodes(doc, graph(), sel.nodes);
  if (!sel.comments.empty()) remove_comments(doc, graph(), sel.comments);
  doc.end_group();
  select_only(doc, {});
  status_ = "deleted";
}

void NodeCanvas::toggle_collapse(EditorDocument& doc) {
  std::vector<int> ids;
  bool all_collapsed = true;
  for (int id : doc.selection().nodes)
    if (int i = geo_.index_of(id); i >= 0 && !geo_.nodes()[static_cast<size_t>(i)].reroute) {
      ids.push_back(id);
      all_collapsed &= geo_.nodes()[static_cast<size_t>(i)].collapsed;
    }
  if (ids.empty()) return;
  EditResult r = set_collapsed(doc, graph(), ids, !all_collapsed);
  status_ = r.ok ? (all_collapsed ? "expanded" : "collapsed (H expands)") : r.message;
}

void NodeCanvas::copy_selection(EditorDocument& doc) {
  const Selection& sel = doc.selection();
  if (sel.nodes.empty()) return;
  ImGui::SetClipboardText(copy_text(doc.doc(), graph(), sel.nodes).c_str());
  status_ = "copied " + std::to_string(sel.nodes.size()) + " node(s) as JSON";
}

void NodeCanvas::paste(EditorDocument& doc) {
  const char* text = ImGui::GetClipboardText();
  if (!text || !*text) {
    status_ = "the clipboard is empty";
    return;
  }
  ImVec2 mouse = ImGui::GetIO().MousePos;
  bool mouse_in = hovered_;
  Vec2 at = mouse_in ? view_.to_canvas(mouse)
                     : view_.to_canvas(ImVec2(view_.origin.x + size_.x * 0.5f,
                                              view_.origin.y + size_.y * 0.5f));
  EditResult r = paste_text(doc, graph(), region_at(at), text, at);
  status_ = r.ok ? "pasted " + std::to_string(r.nodes.size()) + " node(s)" : r.message;
}

void NodeCanvas::comment_around_selection(EditorDocument& doc) {
  Rect r;
  bool any = false;
  for (int id : doc.selection().nodes)
    if (int i = geo_.index_of(id); i >= 0) {
      const NodeGeom& n = geo_.nodes()[static_cast<size_t>(i)];
      Rect x = n.rect();
      for (int z : n.zones) x = x.united(geo_.zones()[static_cast<size_t>(z)].rect);
      r = any ? r.united(x) : x;
      any = true;
    }
  if (!any) {
    Vec2 at = view_.to_canvas(ImGui::GetIO().MousePos);
    r = Rect{at.x, at.y, at.x + 300, at.y + 180};
  } else {
    r = Rect{r.x0 - 30, r.y0 - 50, r.x1 + 30, r.y1 + 30};
  }
  EditResult added =
      add_comment(doc, graph(),
                  graph::CommentFrame{"Comment", std::round(r.x0), std::round(r.y0),
                                      std::round(r.width()), std::round(r.height()), ""});
  if (!added.ok) {
    status_ = added.message;
    return;
  }
  comment_editing_ = added.nodes[0];
  comment_title_ = "Comment";
  comment_focus_ = true;
}

}  // namespace loom::editor
