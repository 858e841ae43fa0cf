// A uniform grid hash over canvas space: items (nodes, links) are filed under every cell
// their bounding box touches, so "what is near this point" and "what is on screen" cost
// the cells looked at, not the size of the graph.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace loom::editor {

struct Rect {
  float x0 = 0, y0 = 0, x1 = 0, y1 = 0;

  bool contains(float x, float y) const { return x >= x0 && x <= x1 && y >= y0 && y <= y1; }
  bool overlaps(const Rect& o) const {
    return x0 <= o.x1 && o.x0 <= x1 && y0 <= o.y1 && o.y0 <= y1;
  }
  bool inside(const Rect& o) const { return x0 >= o.x0 && x1 <= o.x1 && y0 >= o.y0 && y1 <= o.y1; }
  Rect expanded(float d) const { return Rect{x0 - d, y0 - d, x1 + d, y1 + d}; }
  Rect united(const Rect& o) const {
    return Rect{x0 < o.x0 ? x0 : o.x0, y0 < o.y0 ? y0 : o.y0, x1 > o.x1 ? x1 : o.x1,
                y1 > o.y1 ? y1 : o.y1};
  }
  float width() const { return x1 - x0; }
  float height() const { return y1 - y0; }
};

class SpatialGrid {
 public:
  explicit SpatialGrid(float cell = 256.0f) : cell_(cell) {}
  void clear();
  // Items spanning more than `max_cells` cells go to a list every query scans (long links).
  void insert(int item, const Rect& r, int max_cells = 256);
  // Appends the items whose cells touch `r`, each once (callers test exact overlap).
  void query(const Rect& r, std::vector<int>& out) const;
  size_t cells() const { return cells_.size(); }

 private:
  static int64_t key(int64_t cx, int64_t cy) { return (cx << 32) ^ (cy & 0xffffffff); }
  int64_t cell_of(float v) const;

  float cell_;
  std::unordered_map<int64_t, std::vector<int>> cells_;
  std::vector<int> large_;
  mutable std::vector<uint32_t> seen_;  // per item: the query that last returned it
  mutable uint32_t stamp_ = 0;
};

}  // namespace loom::editor
