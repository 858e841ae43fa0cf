#include "editor/canvas/spatial_grid.h"

#include <cmath>

namespace loom::editor {

void SpatialGrid::clear() {
  cells_.clear();
  large_.clear();
}

int64_t SpatialGrid::cell_of(float v) const {
  float c = std::floor(v / cell_);
  // Coordinates are floats from the document: keep absurd ones in range.
  if (!(c > -1e9f)) return -1000000000;
  if (!(c < 1e9f)) return 1000000000;
  return static_cast<int64_t>(c);
}

void SpatialGrid::insert(int item, const Rect& r, int max_cells) {
  if (item >= static_cast<int>(seen_.size())) seen_.resize(static_cast<size_t>(item) + 1, 0);
  int64_t x0 = cell_of(r.x0), x1 = cell_of(r.x1), y0 = cell_of(r.y0), y1 = cell_of(r.y1);
  if ((x1 - x0 + 1) * (y1 - y0 + 1) > max_cells) {
    large_.push_back(item);
    return;
  }
  for (int64_t cy = y0; cy <= y1; ++cy)
    for (int64_t cx = x0; cx <= x1; ++cx) cells_[key(cx, cy)].push_back(item);
}

void SpatialGrid::query(const Rect& r, std::vector<int>& out) const {
  if (++stamp_ == 0) {  // wrapped: forget every old stamp
    std::fill(seen_.begin(), seen_.end(), 0);
    stamp_ = 1;
  }
  auto take = [&](int item) {
    if (seen_[static_cast<size_t>(item)] == stamp_) return;
    seen_[static_cast<size_t>(item)] = stamp_;
    out.push_back(item);
  };
  for (int item : large_) take(item);
  int64_t x0 = cell_of(r.x0), x1 = cell_of(r.x1), y0 = cell_of(r.y0), y1 = cell_of(r.y1);
  // A view far larger than the graph: scanning its cells would cost more than every item.
  if ((x1 - x0 + 1) * (y1 - y0 + 1) > static_cast<int64_t>(cells_.size()) * 2) {
    for (const auto& [k, items] : cells_)
      for (int item : items) take(item);
    return;
  }
  for (int64_t cy = y0; cy <= y1; ++cy)
    for (int64_t cx = x0; cx <= x1; ++cx) {
      auto it = cells_.find(key(cx, cy));
      if (it == cells_.end()) continue;
      for (int item : it->second) take(item);
    }
}

}  // namespace loom::editor
