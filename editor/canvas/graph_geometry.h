// Where everything of one graph is on the canvas, in canvas units: node boxes and their pins,
// region zones (the framed areas holding the nodes of a loop body or an if branch), link
// end points, and grid hashes for hit tests and culling. Built in two steps so that dragging
// stays cheap: shapes (titles, pins, sizes; text measured once) when the program changes,
// placement (positions, automatic layout, zones, links, hashes) when anything moves.
#pragma once

#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "compiler/graph/document.h"
#include "compiler/graph/infer.h"
#include "editor/canvas/pin_style.h"
#include "editor/canvas/spatial_grid.h"
#include "editor/model/graph_ref.h"

namespace loom::editor {

// Sizes in canvas units.
struct NodeMetrics {
  float text = 13.0f;  // label size
  float header = 26.0f;
  float detail = 18.0f;  // the parameter line under the header
  float row = 20.0f;
  float pad = 8.0f;
  float pin_radius = 5.0f;
  float reroute = 14.0f;
  float min_width = 110.0f;
  float zone_pad = 18.0f;
  float zone_label = 22.0f;
};

struct PinGeom {
  std::string name;
  PinCategory category = PinCategory::Any;
  std::string type;     // inferred, for tooltips ("f32x3"); "" when unknown
  bool linked = false;  // inputs: has a link; outputs: feeds one
  std::string literal;  // inputs: the value given, shown after the name
  int from_id = -1;     // inputs: the linked node and pin
  std::string from_pin;
  float name_w = 0;  // of the name at the label size
  float width = 0;   // of the name and the literal
};

struct NodeGeom {
  int id = -1;
  std::string type, category, title, detail;
  RegionRef region;
  int parent = -1;  // index of the region node around it, -1 at the top level
  int zone = -1;    // index of the zone it lives in, -1 at the top level
  int depth = 0;
  int order = 0;  // ordered nodes: 1-based place among the ordered nodes of its region
  bool reroute = false;
  bool positioned = false;  // has a position in the document (else automatic layout)
  bool collapsed = false;   // drawn as its title bar, links on the bar's edges (layout)
  float w = 0, h = 0;       // h: the title bar's when collapsed
  float open_h = 0;         // the height with its pins
  float id_w = 0;           // of "#id" at the label size
  Vec2 pos;
  std::vector<PinGeom> inputs, outputs;
  std::vector<int> zones;  // indices of its regions' zones

  Rect rect() const { return Rect{pos.x, pos.y, pos.x + w, pos.y + h}; }
};

struct ZoneGeom {
  int owner = -1;  // node index of the region node
  RegionRef region;
  Rect rect;
  bool empty = true;
  int depth = 0;
};

struct LinkGeom {
  int from = -1, to = -1;          // node indices
  int from_pin = -1, to_pin = -1;  // pin indices (from_pin -1: the source has no such output)
  Vec2 p0, p1;
  Rect bounds;
  // Routed around the nodes its plain curve would pass behind: two curves meeting halfway,
  // at height via_y, above or below them.
  bool routed = false;
  float via_y = 0;
};

class GraphGeometry {
 public:
  using Measure = std::function<float(const std::string&)>;  // text width at metrics.text

  // Shapes: nodes, titles, pins and sizes. `types` colours the pins.
  void build(const graph::Document& doc, const GraphRef& g, const graph::GraphTypes& types,
             const Measure& measure, const NodeMetrics& metrics = {});
  // Placement: positions (document, else automatic), collapse, zones, links, grid hashes.
  void place(const graph::Document& doc, const GraphRef& g);

  const std::vector<NodeGeom>& nodes() const { return nodes_; }
  const std::vector<ZoneGeom>& zones() const { return zones_; }
  const std::vector<LinkGeom>& links() const { return links_; }
  const NodeMetrics& metrics() const { return m_; }
  int index_of(int id) const;
  Vec2 input_pos(int node, int pin) const;
  Vec2 output_pos(int node, int pin) const;
  int input_index(int node, const std::string& pin) const;
  int output_index(int node, const std::string& pin) const;
  // Everything: nodes, zones (and the comment frames, which the canvas adds).
  Rect bounds() const { return bounds_; }

  // Candidates for culling and hit tests (exact tests are the caller's).
  void nodes_in(const Rect& r, std::vector<int>& out) const { node_grid_.query(r, out); }
  void links_in(const Rect& r, std::vector<int>& out) const { link_grid_.query(r, out); }
  // The topmost node at `p` (nested nodes are above their region node), or -1.
  int node_at(Vec2 p) const;
  // The innermost zone containing `p`, or -1.
  int zone_at(Vec2 p) const;
  // The zone of `region`, or -1.
  int zone_of(const RegionRef& region) const;
  // A pin within `radius` of `p`: node index, pin index, output?; node -1 when none.
  // Collapsed nodes show no pins, so have none to hit.
  struct PinHit {
    int node = -1, pin = -1;
    bool output = false;
  };
  PinHit pin_at(Vec2 p, float radius) const;
  // The link whose curve passes within `tolerance` of `p`, or -1.
  int link_at(Vec2 p, float tolerance) const;

  // Points along a link's curve, for drawing and hit tests: the plain curve between two
  // points, and a link's own (routed ones pass via_y halfway).
  static Vec2 curve_point(Vec2 p0, Vec2 p1, float t);
  static Vec2 link_point(const LinkGeom& l, float t);

 private:
  void auto_layout();
  void compute_zones();
  void route_links();

  NodeMetrics m_;
  std::vector<NodeGeom> nodes_;
  std::vector<ZoneGeom> zones_;
  std::vector<LinkGeom> links_;
  std::unordered_map<int, int> index_;
  Rect bounds_;
  SpatialGrid node_grid_{256.0f}, link_grid_{256.0f};
};

}  // namespace loom::editor
