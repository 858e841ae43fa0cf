#include "editor/canvas/graph_geometry.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "compiler/graph/node_library.h"
#include "editor/model/graph_access.h"
#include "editor/model/literal_text.h"

namespace loom::editor {

using graph::Node;

namespace {

std::string shorten(std::string s, size_t n) {
  if (s.size() <= n) return s;
  s.resize(n - 3);
  return s + "...";
}

PinCategory literal_category(const graph::Literal& l) {
  switch (l.kind) {
    case graph::Literal::Kind::Bool: return PinCategory::Bool;
    case graph::Literal::Kind::Int: return PinCategory::Int;
    case graph::Literal::Kind::Float: return PinCategory::Float;
    case graph::Literal::Kind::List:
      return !l.list.empty() && l.list[0].kind == graph::Literal::Kind::List ? PinCategory::Matrix
                                                                             : PinCategory::Vector;
    default: return PinCategory::Any;
  }
}

float round_up(float v, float step) { return std::ceil(v / step) * step; }

// Dimensions of the field a template parameter is bound to by the kernel's first launch
// (-1 when no launch binds it to a field).
int template_field_dims(const graph::Document& doc, const std::string& kernel,
                        const std::string& param) {
  for (const graph::Pipeline& pipe : doc.pipelines)
    for (const graph::Launch& launch : pipe.launches) {
      if (launch.kernel != kernel) continue;
      for (const auto& [name, arg] : launch.args)
        if (name == param && arg.kind == graph::Literal::Kind::String)
          if (const FieldDesc* f = doc.field_or_derivative(arg.s))
            return static_cast<int>(f->shape.size());
      return -1;
    }
  return -1;
}

// A node's title: its type and, when it has one, the parameter that says what it works on
// ("load temperature", "param k", "call spring", "cast f32"). The other parameters go on the
// detail line under it.
const char* title_param(const std::string& type) {
  if (type == "load" || type == "store" || type.rfind("atomic_", 0) == 0 || type == "shape" ||
      type == "struct_for")
    return "field";
  if (type.rfind("tex_", 0) == 0) return "texture";
  if (type == "param" || type == "input" || type == "carried" || type == "next") return "name";
  if (type == "call") return "function";
  if (type == "cast" || type == "random" || type == "var") return "type";
  if (type == "const") return "value";
  if (type == "unroll") return "count";
  if (type == "member") return "path";
  return nullptr;
}

// The input pins a node shows: every pin that has something, and of the rest only those that
// matter here (index pins up to the field's dimensions, the array pin when no field or
// ndarray is named, loop bounds up to the dimensions in use and one more). Nodes stay
// compact; the value editor lists every pin.
std::vector<std::string> shown_inputs(const graph::Document& doc, const GraphRef& g,
                                      const Node& n) {
  std::vector<std::string> pins = graph::node_input_pins(doc, n);
  auto given = [&](const std::string& pin) { return n.input(pin) != nullptr; };
  bool memory = n.type == "load" || n.type == "store" || n.type.rfind("atomic_", 0) == 0;
  if (memory) {
    int ndim = -1;
    const graph::Literal* field = n.param("field");
    const graph::Literal* nd = n.param("ndarray");
    if (field && field->kind == graph::Literal::Kind::String) {
      if (const FieldDesc* f = doc.field_or_derivative(field->s))
        ndim = static_cast<int>(f->shape.size());
      if (const graph::KernelDecl* k = g.function ? nullptr : doc.kernel(g.name))
        for (const graph::KernelParam& p : k->params)
          if (p.name == field->s && p.kind == graph::ParamKind::Template)
            ndim = template_field_dims(doc, k->name, p.name);
    } else if (nd && nd->kind == graph::Literal::Kind::String) {
      if (const graph::KernelDecl* k = g.function ? nullptr : doc.kernel(g.name))
        for (const graph::KernelParam& p : k->params)
          if (p.name == nd->s && p.kind == graph::ParamKind::Ndarray && p.ndim > 0) ndim = p.ndim;
    }
    bool named = (field && field->kind == graph::Literal::Kind::String) ||
                 (nd && nd->kind == graph::Literal::Kind::String);
    std::erase_if(pins, [&](const std::string& p) {
      if (given(p)) return false;
      if (p == "array") return named;
      bool index = p.size() == 2 && p[0] == 'i' && p[1] >= '0' && p[1] <= '3';
      return index && ndim >= 0 && p[1] - '0' >= ndim;
    });
  } else if (n.type == "range_for") {
    int used = 0;
    for (int d = 0; d < 3; ++d)
      if (given("end" + std::to_string(d)) || given("begin" + std::to_string(d))) used = d + 1;
    std::erase_if(pins, [&](const std::string& p) {
      if (given(p)) return false;
      int d = p.back() - '0';
      if (p.rfind("begin", 0) == 0) return true;  // 0 unless given
      return d > used;                            // one more end than in use
    });
  }
  return pins;
}

}  // namespace

void GraphGeometry::build(const graph::Document& doc, const GraphRef& g,
                          const graph::GraphTypes& types, const Measure& measure,
                          const NodeMetrics& metrics) {
  m_ = metrics;
  nodes_.clear();
  zones_.clear();
  index_.clear();
  const std::vector<Node>* top = graph_nodes(doc, g);
  if (!top) return;
  // Pre-order: a region node comes before what it holds; its zones are made when reached.
  std::unordered_map<int, int> order_in_region;  // region key -> ordered nodes so far
  struct Item {
    const Node* node;
    RegionRef region;
    int parent, zone, depth;
  };
  std::vector<Item> work;
  for (auto it = top->rbegin(); it != top->rend(); ++it)
    work.push_back({&*it, RegionRef{}, -1, -1, 0});
  std::unordered_map<int, int> region_counter;
  while (!work.empty()) {
    Item item = work.back();
    work.pop_back();
    const Node& n = *item.node;
    const graph::NodeSpec* spec = graph::find_node_spec(n.type);
    NodeGeom ng;
    ng.id = n.id;
    ng.type = n.type;
    ng.category = spec ? spec->category : "value";
    ng.title = n.type;
    ng.region = item.region;
    ng.parent = item.parent;
    ng.zone = item.zone;
    ng.depth = item.depth;
    ng.reroute = n.type == "reroute";
    if (spec && spec->effectful) ng.order = ++region_counter[item.zone];
    const char* main_param = title_param(n.type);
    // A memory node names a field or, instead, an ndarray parameter.
    if (main_param && std::string(main_param) == "field" && !n.param("field") && n.param("ndarray"))
      main_param = "ndarray";
    std::string detail;
    for (const auto& [name, value] : n.params) {
      std::string v = literal_text(value);
      if (main_param && name == main_param && v.size() <= 24) {
        ng.title += " " + v;
        continue;
      }
      bool obvious = name == "expr" || (main_param && name == main_param);
      detail += (detail.empty() ? "" : ", ") + (obvious ? v : name + "=" + v);
    }
    ng.detail = shorten(detail, 48);
    for (const std::string& pin : shown_inputs(doc, g, n)) {
      PinGeom p;
      p.name = pin;
      if (const graph::Input* in = n.input(pin)) {
        p.linked = in->linked;
        if (in->linked) {
          p.from_id = in->from_node;
          p.from_pin = in->from_pin;
          const graph::PinValue* v = types.output(in->from_node, in->from_pin);
          p.category = v ? pin_category(v) : guess_pin_category(n.type, pin, false);
          if (v) p.type = graph::pin_value_text(*v);
        } else {
          p.literal = shorten(literal_text(in->literal), 14);
          p.category = literal_category(in->literal);
        }
      } else {
        p.category = guess_pin_category(n.type, pin, false);
      }
      ng.inputs.push_back(std::move(p));
    }
    std::vector<std::string> outputs = graph::node_output_pins(doc, n);
    // Loop indices of dimensions the loop does not have are left out.
    int loop_dims = -1;
    if (n.type == "range_for") {
      loop_dims = 0;
      for (int d = 0; d < 3; ++d)
        if (n.input("end" + std::to_string(d))) loop_dims = d + 1;
    } else if (n.type == "struct_for") {
      const graph::Literal* f = n.param("field");
      const FieldDesc* field =
          f && f->kind == graph::Literal::Kind::String ? doc.field_or_derivative(f->s) : nullptr;
      if (field) loop_dims = static_cast<int>(field->shape.size());
    }
    if (loop_dims >= 0)
      std::erase_if(outputs, [&](const std::string& p) {
        return p.size() == 2 && p[0] == 'i' && p[1] - '0' >= std::max(loop_dims, 1);
      });
    for (const std::string& pin : outputs) {
      PinGeom p;
      p.name = pin;
      const graph::PinValue* v = types.output(n.id, pin);
      p.category = v ? pin_category(v) : guess_pin_category(n.type, pin, true);
      if (v) p.type = graph::pin_value_text(*v);
      ng.outputs.push_back(std::move(p));
    }
    for (PinGeom& p : ng.inputs) {
      p.name_w = measure(p.name);
      p.width = p.name_w + (p.literal.empty() ? 0 : measure(" = " + p.literal));
    }
    for (PinGeom& p : ng.outputs) p.width = p.name_w = measure(p.name);
    ng.id_w = measure("#" + std::to_string(n.id));
    if (ng.reroute) {
      ng.w = ng.h = m_.reroute;
    } else {
      // The title (drawn at 14, measured at the label size), the id (at 12) and room for the
      // error badge beside it: none of them may overlap.
      float w =
          measure(ng.title) * 14.0f / m_.text + ng.id_w * 12.0f / m_.text + 3 * m_.pad + 18.0f;
      // A long formula does not make a huge node: the line is clipped to the box (the full
      // text is in the tooltip and the value editor).
      if (!ng.detail.empty()) w = std::max(w, std::min(measure(ng.detail), 190.0f) + 2 * m_.pad);
      size_t rows = std::max(ng.inputs.size(), ng.outputs.size());
      for (size_t r = 0; r < rows; ++r) {
        float left = 0, right = 0;
        if (r < ng.inputs.size()) left = ng.inputs[r].width;
        if (r < ng.outputs.size()) right = ng.outputs[r].width;
        w = std::max(w, left + right + 4 * m_.pad);
      }
      ng.w = round_up(std::max(w, m_.min_width), 10);
      ng.h = m_.header + (ng.detail.empty() ? 0 : m_.detail) + static_cast<float>(rows) * m_.row +
             m_.pad * 0.5f;
    }
    ng.open_h = ng.h;
    int index = static_cast<int>(nodes_.size());
    index_[n.id] = index;
    // Zones: the type's regions, and any other the document gives it.
    std::vector<std::string> names = spec ? spec->regions : std::vector<std::string>{};
    for (const graph::Region& r : n.regions)
      if (std::find(names.begin(), names.end(), r.name) == names.end()) names.push_back(r.name);
    for (const std::string& name : names) {
      ZoneGeom z;
      z.owner = index;
      z.region = RegionRef{n.id, name};
      z.depth = item.depth;
      ng.zones.push_back(static_cast<int>(zones_.size()));
      zones_.push_back(z);
    }
    std::vector<Item> children;
    for (size_t zi = 0; zi < names.size(); ++zi)
      for (const graph::Region& r : n.regions)
        if (r.name == names[zi])
          for (const Node& child : r.nodes)
            children.push_back(
                {&child, RegionRef{n.id, r.name}, index, ng.zones[zi], item.depth + 1});
    nodes_.push_back(std::move(ng));
    for (auto it = children.rbegin(); it != children.rend(); ++it) work.push_back(*it);
  }
}

void GraphGeometry::place(const graph::Document& doc, const GraphRef& g) {
  for (NodeGeom& n : nodes_) {
    n.positioned = n.collapsed = false;
    n.h = n.open_h;
  }
  if (const graph::GraphLayout* l = find_layout(doc, g.name)) {
    for (const graph::NodePosition& p : l->positions) {
      auto it = index_.find(p.node);
      if (it == index_.end()) continue;
      nodes_[static_cast<size_t>(it->second)].pos = Vec2{p.x, p.y};
      nodes_[static_cast<size_t>(it->second)].positioned = true;
    }
    for (int id : l->collapsed) {
      auto it = index_.find(id);
      if (it == index_.end()) continue;
      NodeGeom& n = nodes_[static_cast<size_t>(it->second)];
      if (n.reroute) continue;  // already just a dot
      n.collapsed = true;
      n.h = m_.header;
    }
  }
  auto_layout();
  compute_zones();

  links_.clear();
  for (NodeGeom& n : nodes_)
    for (PinGeom& p : n.outputs) p.linked = false;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const NodeGeom& n = nodes_[i];
    for (size_t p = 0; p < n.inputs.size(); ++p) {
      const PinGeom& pin = n.inputs[p];
      if (!pin.linked) continue;
      auto src = index_.find(pin.from_id);
      if (src == index_.end()) continue;  // a dangling link: the node shows the error
      LinkGeom l;
      l.from = src->second;
      l.to = static_cast<int>(i);
      l.from_pin = output_index(l.from, pin.from_pin);
      l.to_pin = static_cast<int>(p);
      const NodeGeom& s = nodes_[static_cast<size_t>(l.from)];
      l.p0 = l.from_pin >= 0 ? output_pos(l.from, l.from_pin)
                             : Vec2{s.pos.x + s.w, s.pos.y + m_.header * 0.5f};
      l.p1 = input_pos(l.to, l.to_pin);
      float d = std::max(40.0f, std::fabs(l.p1.x - l.p0.x) * 0.5f);
      l.bounds = Rect{std::min(l.p0.x, l.p1.x - d), std::min(l.p0.y, l.p1.y),
                      std::max(l.p0.x + d, l.p1.x), std::max(l.p0.y, l.p1.y)};
      if (l.from_pin >= 0)
        nodes_[static_cast<size_t>(l.from)].outputs[static_cast<size_t>(l.from_pin)].linked = true;
      links_.push_back(l);
    }
  }

  node_grid_.clear();
  link_grid_.clear();
  bounds_ = Rect{};
  bool first = true;
  auto grow = [&](const Rect& r) {
    bounds_ = first ? r : bounds_.united(r);
    first = false;
  };
  for (size_t i = 0; i < nodes_.size(); ++i) {
    node_grid_.insert(static_cast<int>(i), nodes_[i].rect().expanded(m_.pin_radius * 2));
    grow(nodes_[i].rect());
  }
  for (const ZoneGeom& z : zones_) grow(z.rect);
  route_links();
  for (size_t i = 0; i < links_.size(); ++i)
    link_grid_.insert(static_cast<int>(i), links_[i].bounds);
}

// A link whose plain curve passes behind other nodes goes over or under them instead (the
// side nearer its ends), where that keeps it readable: a link hidden behind a node looks like
// it ends there. Nodes a link passes behind are found through the node grid.
void GraphGeometry::route_links() {
  std::vector<int> near;
  for (LinkGeom& l : links_) {
    Rect hit;
    bool any = false;
    for (int s = 1; s < 16; ++s) {
      Vec2 q = curve_point(l.p0, l.p1, static_cast<float>(s) / 16);
      near.clear();
      node_grid_.query(Rect{q.x, q.y, q.x, q.y}, near);
      for (int n : near) {
        if (n == l.from || n == l.to) continue;
        Rect r = nodes_[static_cast<size_t>(n)].rect();
        if (!r.contains(q.x, q.y)) continue;
        hit = any ? hit.united(r) : r;
        any = true;
      }
    }
    if (!any) continue;
    float mid = (l.p0.y + l.p1.y) * 0.5f;
    float above = hit.y0 - 2 * m_.pad, below = hit.y1 + 2 * m_.pad;
    l.routed = true;
    l.via_y = std::fabs(above - mid) <= std::fabs(below - mid) ? above : below;
    l.bounds.y0 = std::min(l.bounds.y0, l.via_y);
    l.bounds.y1 = std::max(l.bounds.y1, l.via_y);
  }
}

void GraphGeometry::auto_layout() {
  // Children of each zone, and the top level, in document order.
  std::vector<std::vector<int>> zone_children(zones_.size());
  std::vector<int> top;
  for (size_t i = 0; i < nodes_.size(); ++i)
    (nodes_[i].zone < 0 ? top : zone_children[static_cast<size_t>(nodes_[i].zone)])
        .push_back(static_cast<int>(i));
  std::vector<bool> placed(nodes_.size());
  bool any_missing = false;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    placed[i] = nodes_[i].positioned;
    any_missing |= !placed[i];
  }
  if (!any_missing) return;

  constexpr float kColumnGap = 60, kRowGap = 30, kZoneGap = 50;
  // Lays out the nodes of one list without a position, in columns by link depth among
  // them, starting at `origin`; region nodes take their zones to their right. Returns the
  // size of what it placed.
  std::function<Vec2(const std::vector<int>&, Vec2)> lay = [&](const std::vector<int>& list,
                                                               Vec2 origin) -> Vec2 {
    std::unordered_map<int, int> column;  // node index -> column
    std::unordered_map<int, int> in_list;
    for (int i : list) in_list[nodes_[static_cast<size_t>(i)].id] = i;
    std::function<int(int, int)> depth_of = [&](int i, int guard) -> int {
      if (auto it = column.find(i); it != column.end()) return it->second;
      if (guard > static_cast<int>(list.size())) return 0;  // a cycle: stop
      int d = 0;
      // A region node goes after what the nodes it holds read from this list, too.
      int depth = nodes_[static_cast<size_t>(i)].depth;
      for (size_t k = static_cast<size_t>(i);
           k < nodes_.size() && (k == static_cast<size_t>(i) || nodes_[k].depth > depth); ++k)
        for (const PinGeom& p : nodes_[k].inputs)
          if (p.linked)
            if (auto src = in_list.find(p.from_id); src != in_list.end() && src->second != i)
              d = std::max(d, depth_of(src->second, guard + 1) + 1);
      column[i] = d;
      return d;
    };
    std::vector<std::vector<int>> columns;
    for (int i : list) {
      if (placed[static_cast<size_t>(i)]) continue;
      size_t c = static_cast<size_t>(depth_of(i, 0));
      if (columns.size() <= c) columns.resize(c + 1);
      columns[c].push_back(i);
    }
    float x = origin.x, bottom = origin.y;
    for (const std::vector<int>& col : columns) {
      float y = origin.y, widest = 0;
      for (int i : col) {
        NodeGeom& n = nodes_[static_cast<size_t>(i)];
        n.pos = Vec2{x, y};  // for the view only: the document is not changed
        placed[static_cast<size_t>(i)] = true;
        float block_w = n.w, block_h = n.h;
        float zy = y;
        for (int z : n.zones) {
          Vec2 size = lay(zone_children[static_cast<size_t>(z)],
                          Vec2{x + n.w + kZoneGap, zy + m_.zone_label + m_.zone_pad});
          size.x += 2 * m_.zone_pad;
          size.y += m_.zone_label + 2 * m_.zone_pad;
          if (zone_children[static_cast<size_t>(z)].empty()) size = Vec2{160, 70};
          block_w = std::max(block_w, n.w + kZoneGap + size.x);
          zy += size.y + kRowGap;
        }
        block_h = std::max(block_h, zy - y - kRowGap);
        y += block_h + kRowGap;
        widest = std::max(widest, block_w);
      }
      bottom = std::max(bottom, y - kRowGap);
      x += widest + kColumnGap;
    }
    // Unplaced children of region nodes that had a position already.
    for (int i : list) {
      NodeGeom& n = nodes_[static_cast<size_t>(i)];
      float zy = n.pos.y;
      for (int z : n.zones) {
        bool missing = false;
        for (int c : zone_children[static_cast<size_t>(z)])
          missing |= !placed[static_cast<size_t>(c)];
        if (missing)
          zy += lay(zone_children[static_cast<size_t>(z)], Vec2{n.pos.x + n.w + kZoneGap, zy}).y +
                kRowGap;
      }
    }
    return Vec2{std::max(0.0f, x - kColumnGap - origin.x), bottom - origin.y};
  };
  // Below what has a position already.
  Vec2 origin{0, 0};
  bool any = false;
  float x0 = std::numeric_limits<float>::max(), y1 = std::numeric_limits<float>::lowest();
  for (const NodeGeom& n : nodes_)
    if (n.positioned && n.zone < 0) {
      any = true;
      x0 = std::min(x0, n.pos.x);
      y1 = std::max(y1, n.pos.y + n.h);
    }
  if (any) origin = Vec2{x0, y1 + 80};
  lay(top, origin);
}

void GraphGeometry::compute_zones() {
  for (ZoneGeom& z : zones_) z.empty = true;
  std::vector<Rect> content(zones_.size());
  // Reverse pre-order: what a zone holds (nodes and their own zones) is known before it.
  for (size_t k = nodes_.size(); k-- > 0;) {
    const NodeGeom& n = nodes_[k];
    int slot = 0;
    for (int zi : n.zones) {
      ZoneGeom& z = zones_[static_cast<size_t>(zi)];
      if (z.empty) {  // a place to drop or create nodes, to the right of its node
        z.rect = Rect{n.pos.x + n.w + 40, n.pos.y + slot * 90.0f, n.pos.x + n.w + 200,
                      n.pos.y + slot * 90.0f + 70};
      } else {
        Rect c = content[static_cast<size_t>(zi)];
        z.rect = Rect{c.x0 - m_.zone_pad, c.y0 - m_.zone_pad - m_.zone_label, c.x1 + m_.zone_pad,
                      c.y1 + m_.zone_pad};
      }
      ++slot;
    }
    if (n.zone < 0) continue;
    Rect mine = n.rect();
    for (int zi : n.zones) mine = mine.united(zones_[static_cast<size_t>(zi)].rect);
    ZoneGeom& holder = zones_[static_cast<size_t>(n.zone)];
    content[static_cast<size_t>(n.zone)] =
        holder.empty ? mine : content[static_cast<size_t>(n.zone)].united(mine);
    holder.empty = false;
  }
}

int GraphGeometry::index_of(int id) const {
  auto it = index_.find(id);
  return it == index_.end() ? -1 : it->second;
}

Vec2 GraphGeometry::input_pos(int node, int pin) const {
  const NodeGeom& n = nodes_[static_cast<size_t>(node)];
  if (n.reroute || n.collapsed) return Vec2{n.pos.x, n.pos.y + n.h * 0.5f};
  float top = n.pos.y + m_.header + (n.detail.empty() ? 0 : m_.detail);
  return Vec2{n.pos.x, top + (static_cast<float>(pin) + 0.5f) * m_.row};
}

Vec2 GraphGeometry::output_pos(int node, int pin) const {
  const NodeGeom& n = nodes_[static_cast<size_t>(node)];
  if (n.reroute || n.collapsed) return Vec2{n.pos.x + n.w, n.pos.y + n.h * 0.5f};
  float top = n.pos.y + m_.header + (n.detail.empty() ? 0 : m_.detail);
  return Vec2{n.pos.x + n.w, top + (static_cast<float>(pin) + 0.5f) * m_.row};
}

int GraphGeometry::input_index(int node, const std::string& pin) const {
  const auto& pins = nodes_[static_cast<size_t>(node)].inputs;
  for (size_t i = 0; i < pins.size(); ++i)
    if (pins[i].name == pin) return static_cast<int>(i);
  return -1;
}

int GraphGeometry::output_index(int node, const std::string& pin) const {
  const auto& pins = nodes_[static_cast<size_t>(node)].outputs;
  for (size_t i = 0; i < pins.size(); ++i)
    if (pins[i].name == pin) return static_cast<int>(i);
  return -1;
}

int GraphGeometry::node_at(Vec2 p) const {
  std::vector<int> near;
  node_grid_.query(Rect{p.x, p.y, p.x, p.y}, near);
  int best = -1;
  for (int i : near) {
    if (!nodes_[static_cast<size_t>(i)].rect().contains(p.x, p.y)) continue;
    if (best < 0 ||
        nodes_[static_cast<size_t>(i)].depth > nodes_[static_cast<size_t>(best)].depth ||
        (nodes_[static_cast<size_t>(i)].depth == nodes_[static_cast<size_t>(best)].depth &&
         i > best))
      best = i;
  }
  return best;
}

int GraphGeometry::zone_at(Vec2 p) const {
  int best = -1;
  for (size_t i = 0; i < zones_.size(); ++i)
    if (zones_[i].rect.contains(p.x, p.y) &&
        (best < 0 || zones_[i].depth >= zones_[static_cast<size_t>(best)].depth))
      best = static_cast<int>(i);
  return best;
}

int GraphGeometry::zone_of(const RegionRef& region) const {
  for (size_t i = 0; i < zones_.size(); ++i)
    if (zones_[i].region == region) return static_cast<int>(i);
  return -1;
}

GraphGeometry::PinHit GraphGeometry::pin_at(Vec2 p, float radius) const {
  std::vector<int> near;
  node_grid_.query(Rect{p.x - radius, p.y - radius, p.x + radius, p.y + radius}, near);
  PinHit best;
  float best_d = radius * radius;
  for (int i : near) {
    const NodeGeom& n = nodes_[static_cast<size_t>(i)];
    if (n.collapsed) continue;
    auto consider = [&](Vec2 at, int pin, bool output) {
      float d = (at.x - p.x) * (at.x - p.x) + (at.y - p.y) * (at.y - p.y);
      if (d <= best_d) {
        best_d = d;
        best = PinHit{i, pin, output};
      }
    };
    for (size_t k = 0; k < n.inputs.size(); ++k)
      consider(input_pos(i, static_cast<int>(k)), static_cast<int>(k), false);
    for (size_t k = 0; k < n.outputs.size(); ++k)
      consider(output_pos(i, static_cast<int>(k)), static_cast<int>(k), true);
  }
  return best;
}

Vec2 GraphGeometry::curve_point(Vec2 p0, Vec2 p1, float t) {
  float d = std::max(40.0f, std::fabs(p1.x - p0.x) * 0.5f);
  Vec2 c0{p0.x + d, p0.y}, c1{p1.x - d, p1.y};
  float u = 1 - t;
  float a = u * u * u, b = 3 * u * u * t, c = 3 * u * t * t, e = t * t * t;
  return Vec2{a * p0.x + b * c0.x + c * c1.x + e * p1.x, a * p0.y + b * c0.y + c * c1.y + e * p1.y};
}

Vec2 GraphGeometry::link_point(const LinkGeom& l, float t) {
  if (!l.routed) return curve_point(l.p0, l.p1, t);
  Vec2 via{(l.p0.x + l.p1.x) * 0.5f, l.via_y};
  return t < 0.5f ? curve_point(l.p0, via, t * 2) : curve_point(via, l.p1, t * 2 - 1);
}

int GraphGeometry::link_at(Vec2 p, float tolerance) const {
  std::vector<int> near;
  link_grid_.query(Rect{p.x - tolerance, p.y - tolerance, p.x + tolerance, p.y + tolerance}, near);
  int best = -1;
  float best_d = tolerance * tolerance;
  for (int i : near) {
    const LinkGeom& l = links_[static_cast<size_t>(i)];
    if (!l.bounds.expanded(tolerance).contains(p.x, p.y)) continue;
    Vec2 prev = l.p0;
    for (int s = 1; s <= 24; ++s) {
      Vec2 cur = link_point(l, static_cast<float>(s) / 24);
      float dx = cur.x - prev.x, dy = cur.y - prev.y;
      float len = dx * dx + dy * dy;
      float t =
          len > 0 ? std::clamp(((p.x - prev.x) * dx + (p.y - prev.y) * dy) / len, 0.0f, 1.0f) : 0;
      float qx = prev.x + t * dx - p.x, qy = prev.y + t * dy - p.y;
      if (qx * qx + qy * qy <= best_d) {
        best_d = qx * qx + qy * qy;
        best = i;
      }
      prev = cur;
    }
  }
  return best;
}

}  // namespace loom::editor
