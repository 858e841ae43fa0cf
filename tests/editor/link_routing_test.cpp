// Links go over or under the nodes their plain curve would pass behind, and are hit-tested
// along the path they are drawn on.
#include <gtest/gtest.h>

#include "editor/model/editor_document.h"
#include "editor/model/edits.h"
#include "tests/editor/canvas_harness.h"

using namespace loom;
using namespace loom::editor;

namespace {

// A constant feeding a node far to its right, with a third node right on the way.
constexpr const char* kBlocked = R"({
  "format": "loom-graph",
  "version": 2,
  "fields": [{"name": "f", "type": "f32", "shape": [4]}],
  "kernels": [
    {
      "name": "k",
      "nodes": [
        {"id": 1, "type": "const", "params": {"value": 2.0}},
        {"id": 2, "type": "sqrt", "inputs": {"a": 3.0}},
        {"id": 3, "type": "store", "inputs": {"i0": 0, "value": "1"}, "params": {"field": "f"}}
      ]
    }
  ],
  "layout": [
    {"graph": "k", "positions": {"1": [0, 0], "2": [300, 20], "3": [600, 0]}}
  ]
})";

}  // namespace

TEST(LinkRouting, ALinkGoesAroundANodeInItsWayAndIsHitWhereItIsDrawn) {
  test::CanvasHarness h;
  EditorDocument d = EditorDocument::from_text(kBlocked);
  h.frames(d, 2);
  const GraphGeometry& geo = h.canvas().geometry();
  ASSERT_EQ(geo.links().size(), 1u);
  const LinkGeom& l = geo.links()[0];
  ASSERT_TRUE(l.routed);
  const NodeGeom& middle = geo.nodes()[static_cast<size_t>(geo.index_of(2))];
  EXPECT_TRUE(l.via_y < middle.pos.y || l.via_y > middle.pos.y + middle.h) << l.via_y;
  // Halfway, the link is where it is drawn (via_y), not behind the node.
  Vec2 half = GraphGeometry::link_point(l, 0.5f);
  EXPECT_FLOAT_EQ(half.y, l.via_y);
  EXPECT_EQ(geo.link_at(half, 4), 0);
  Vec2 behind = GraphGeometry::curve_point(l.p0, l.p1, 0.5f);
  EXPECT_EQ(geo.link_at(behind, 4), -1);
  // Moved out of the way, the node no longer bends the link.
  d.execute(change_layout(d.doc(), LayoutChange{"k", {{2, Vec2{300, 400}}}, {}}));
  h.frames(d, 2);
  EXPECT_FALSE(h.canvas().geometry().links()[0].routed);
}
