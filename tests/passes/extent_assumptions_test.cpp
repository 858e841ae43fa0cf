// record_extent_assumptions: which extents a kernel's final code assumes of the resources it
// indexes (checked at launch), and which accesses it cannot bound (unchecked).
#include "compiler/passes/extent_assumptions.h"

#include <gtest/gtest.h>

#include <string>

#include "compiler/graph/document_json.h"
#include "compiler/graph/lower.h"
#include "compiler/ir/inst.h"
#include "compiler/passes/pipeline.h"

using namespace loom;

namespace {

constexpr const char* kDoc = R"({
  "format": "loom-graph",
  "version": 2,
  "name": "extents",
  "fields": [{"name": "grid", "type": "f32", "shape": [16, 12]}, {"name": "vel", "type": "f32x2", "shape": [32]},
             {"name": "sq", "type": "i32", "shape": [8, 8]}],
  "argpack_types": [
    {"name": "Pair", "kind": "pack", "members": [
      {"name": "src", "ndarray": "f32", "ndim": 1}, {"name": "dst", "ndarray": "f32", "ndim": 1}]}
  ],
  "kernels": [
    {
      "name": "copy",
      "params": [{"name": "p", "kind": "argpack", "type": "Pair"}],
      "nodes": [
        {"id": 1, "type": "shape", "params": {"ndarray": "p.dst", "dim": 0}},
        {"id": 2, "type": "range_for", "inputs": {"end0": "1"}, "regions": {"body": [
          {"id": 3, "type": "load", "inputs": {"i0": "2.i0"}, "params": {"ndarray": "p.src"}},
          {"id": 4, "type": "store", "inputs": {"i0": "2.i0", "value": "3"}, "params": {"ndarray": "p.dst"}}
        ]}}
      ]
    },
    {
      "name": "shift",
      "params": [{"name": "a", "kind": "ndarray", "type": "f32", "ndim": 1},
                 {"name": "b", "kind": "ndarray", "type": "f32", "ndim": 1},
                 {"name": "n", "kind": "value", "type": "i32"}],
      "nodes": [
        {"id": 1, "type": "param", "params": {"name": "n"}},
        {"id": 2, "type": "range_for", "inputs": {"begin0": 1, "end0": "1"}, "regions": {"body": [
          {"id": 3, "type": "add", "inputs": {"a": "2.i0", "b": 1}},
          {"id": 4, "type": "sub", "inputs": {"a": "2.i0", "b": 1}},
          {"id": 5, "type": "load", "inputs": {"i0": "3"}, "params": {"ndarray": "a"}},
          {"id": 6, "type": "load", "inputs": {"i0": "4"}, "params": {"ndarray": "a"}},
          {"id": 7, "type": "add", "inputs": {"a": "5", "b": "6"}},
          {"id": 8, "type": "store", "inputs": {"i0": "2.i0", "value": "7"}, "params": {"ndarray": "b"}}
        ]}}
      ]
    },
    {
      "name": "plane",
      "params": [{"name": "a", "kind": "ndarray", "type": "f32", "ndim": 2},
                 {"name": "b", "kind": "ndarray", "type": "f32x3", "ndim": 2}],
      "nodes": [
        {"id": 1, "type": "shape", "params": {"ndarray": "a", "dim": 0}},
        {"id": 2, "type": "shape", "params": {"ndarray": "a", "dim": 1}},
        {"id": 3, "type": "range_for", "inputs": {"end0": "1", "end1": "2"}, "regions": {"body": [
          {"id": 4, "type": "load", "inputs": {"i0": "3.i0", "i1": "3.i1"}, "params": {"ndarray": "b"}},
          {"id": 5, "type": "expr", "inputs": {"v": "4"}, "params": {"expr": "v.x + v.y + v.z"}},
          {"id": 6, "type": "store", "inputs": {"i0": "3.i1", "i1": "3.i0", "value": "5"}, "params": {"ndarray": "a"}}
        ]}}
      ]
    },
    {
      "name": "search",
      "params": [{"name": "a", "kind": "ndarray", "type": "f32", "ndim": 1},
                 {"name": "b", "kind": "ndarray", "type": "i32", "ndim": 1},
                 {"name": "n", "kind": "value", "type": "i32"},
                 {"name": "m", "kind": "value", "type": "i32"}],
      "nodes": [
        {"id": 1, "type": "param", "params": {"name": "n"}},
        {"id": 2, "type": "param", "params": {"name": "m"}},
        {"id": 3, "type": "range_for", "inputs": {"end0": "1"}, "regions": {"body": [
          {"id": 4, "type": "var", "inputs": {"init": -1}},
          {"id": 5, "type": "range_for", "inputs": {"end0": "2"}, "regions": {"body": [
            {"id": 6, "type": "load", "inputs": {"i0": "5.i0"}, "params": {"ndarray": "a"}},
            {"id": 7, "type": "gt", "inputs": {"a": "6", "b": 0.0}},
            {"id": 8, "type": "set", "inputs": {"var": "4.ref", "value": "5.i0"}},
            {"id": 9, "type": "break", "inputs": {"cond": "7"}}
          ]}},
          {"id": 10, "type": "get", "inputs": {"var": "4.ref"}},
          {"id": 11, "type": "store", "inputs": {"i0": "3.i0", "value": "10"}, "params": {"ndarray": "b"}}
        ]}}
      ]
    },
    {
      "name": "stencil",
      "nodes": [
        {"id": 1, "type": "range_for", "inputs": {"begin0": 1, "end0": 15, "end1": 12}, "regions": {"body": [
          {"id": 2, "type": "sub", "inputs": {"a": "1.i0", "b": 1}},
          {"id": 3, "type": "add", "inputs": {"a": "1.i0", "b": 1}},
          {"id": 4, "type": "load", "inputs": {"i0": "2", "i1": "1.i1"}, "params": {"field": "grid"}},
          {"id": 5, "type": "load", "inputs": {"i0": "3", "i1": "1.i1"}, "params": {"field": "grid"}},
          {"id": 6, "type": "add", "inputs": {"a": "4", "b": "5"}},
          {"id": 7, "type": "store", "inputs": {"i0": "1.i0", "i1": "1.i1", "value": "6"}, "params": {"field": "grid"}},
          {"id": 8, "type": "load", "inputs": {"i0": "1.i1"}, "params": {"field": "vel"}},
          {"id": 9, "type": "store", "inputs": {"i0": "1.i0", "value": "8"}, "params": {"field": "vel"}}
        ]}}
      ]
    },
    {
      "name": "square",
      "nodes": [
        {"id": 1, "type": "range_for", "inputs": {"end0": 8, "end1": 8}, "regions": {"body": [
          {"id": 2, "type": "store", "inputs": {"i0": "1.i1", "i1": "1.i0", "value": 1}, "params": {"field": "sq"}}
        ]}}
      ]
    },
    {
      "name": "gather",
      "params": [{"name": "idx", "kind": "ndarray", "type": "i32", "ndim": 1},
                 {"name": "a", "kind": "ndarray", "type": "f32", "ndim": 1},
                 {"name": "out", "kind": "ndarray", "type": "f32", "ndim": 1}],
      "nodes": [
        {"id": 1, "type": "shape", "params": {"ndarray": "idx", "dim": 0}},
        {"id": 2, "type": "range_for", "inputs": {"end0": "1"}, "regions": {"body": [
          {"id": 3, "type": "load", "inputs": {"i0": "2.i0"}, "params": {"ndarray": "idx"}},
          {"id": 4, "type": "load", "inputs": {"i0": "3"}, "params": {"ndarray": "a"}},
          {"id": 5, "type": "gt", "inputs": {"a": "4", "b": 0.0}},
          {"id": 6, "type": "if", "inputs": {"cond": "5"}, "regions": {"then": [
            {"id": 7, "type": "store", "inputs": {"i0": "2.i0", "value": "4"}, "params": {"ndarray": "out"}}
          ]}}
        ]}}
      ]
    },
    {
      "name": "early",
      "params": [{"name": "a", "kind": "ndarray", "type": "f32", "ndim": 1},
                 {"name": "n", "kind": "value", "type": "i32"}],
      "returns": ["i32"],
      "nodes": [
        {"id": 1, "type": "param", "params": {"name": "n"}},
        {"id": 2, "type": "gt", "inputs": {"a": "1", "b": 5}},
        {"id": 3, "type": "if", "inputs": {"cond": "2"}, "regions": {"then": [
          {"id": 4, "type": "return", "inputs": {"r0": 1}}
        ]}},
        {"id": 5, "type": "range_for", "inputs": {"end0": "1"}, "regions": {"body": [
          {"id": 6, "type": "store", "inputs": {"i0": "5.i0", "value": 1.0}, "params": {"ndarray": "a"}}
        ]}}
      ]
    },
    {
      "name": "first",
      "params": [{"name": "c", "kind": "ndarray", "type": "i32", "ndim": 1}],
      "nodes": [
        {"id": 1, "type": "load", "inputs": {"i0": 3}, "params": {"ndarray": "c"}},
        {"id": 2, "type": "store", "inputs": {"i0": 0, "value": "1"}, "params": {"ndarray": "c"}}
      ]
    }
  ]
})";

std::string bound(const RangeBound& b) {
  switch (b.kind) {
    case RangeBound::Kind::Const: return std::to_string(b.value);
    case RangeBound::Kind::Arg: return "arg" + std::to_string(b.value);
    case RangeBound::Kind::Shape:
      return "shape$" + std::to_string(b.value) + "." + std::to_string(b.offset);
  }
  return "?";
}

std::string plus(int64_t c) { return c == 0 ? "" : (c > 0 ? "+" : "") + std::to_string(c); }

// One entry per line: "name.dim [first, end)" for the range its index covers ("unchecked"
// otherwise), then every range that must be non-empty for the access to run.
std::string extents(const std::string& kernel, bool debug = false) {
  graph::Document doc = graph::load_document(kDoc);
  std::unique_ptr<ir::Kernel> k = graph::lower_kernel(doc, kernel, {});
  passes::PipelineOptions o;
  o.debug = debug;
  passes::run_pipeline(*k, o);
  if (!k->abi.extent_assumptions_known) return "unknown";
  std::string out;
  for (const ExtentAssumption& e : k->abi.extent_assumptions) {
    out += e.name + "." + std::to_string(e.dim) + " ";
    if (!e.checked) {
      out += "unchecked\n";
      continue;
    }
    if (e.loop < 0) {
      out += "[" + std::to_string(e.low) + ", " + std::to_string(e.high + 1) + ")";
    } else {
      size_t l = static_cast<size_t>(e.loop);
      out += "[" + bound(e.begin[l]) + plus(e.low) + ", " + bound(e.end[l]) + plus(e.high) + ")";
      if (!e.bound_name.empty()) out += " by " + e.bound_name;
    }
    if (!e.end.empty()) out += " when";
    for (size_t r = 0; r < e.end.size(); ++r)
      out += " " + bound(e.begin[r]) + ".." + bound(e.end[r]);
    out += "\n";
  }
  return out;
}

}  // namespace

TEST(ExtentAssumptions, PackMembersIndexedByALoopOverAnotherMemberExtent) {
  // The loop runs over p.dst's extent (slot 0); p.src (slot 1) must be at least as long.
  EXPECT_EQ(extents("copy"),
            "p.dst.0 [0, shape$0.0) by p.dst when 0..shape$0.0\n"
            "p.src.0 [0, shape$0.0) by p.dst when 0..shape$0.0\n");
}

TEST(ExtentAssumptions, ConstantOffsetsWidenTheRangeAndValueParametersBoundIt) {
  // a[i + 1] and a[i - 1] for i in [1, n): a covers [0, n + 1).
  EXPECT_EQ(extents("shift"),
            "a.0 [1-1, arg2+1) by n when 1..arg2\n"
            "b.0 [1, arg2) by n when 1..arg2\n");
}

TEST(ExtentAssumptions, DimensionsAreRecoveredFromTheLoweredOffset) {
  // a[j, i] over a's own extents (i along dim 0): dim 0 of a is indexed by the loop over
  // dim 1 and the other way round; b is a vec3 ndarray (AoS offsets times 3 plus component).
  EXPECT_EQ(extents("plane"),
            "a.0 [0, shape$0.1) by a when 0..shape$0.0 0..shape$0.1\n"
            "a.1 [0, shape$0.0) by a when 0..shape$0.0 0..shape$0.1\n"
            "b.0 [0, shape$0.0) by a when 0..shape$0.0 0..shape$0.1\n"
            "b.1 [0, shape$0.1) by a when 0..shape$0.0 0..shape$0.1\n");
}

TEST(ExtentAssumptions, FieldStencilsAndConstantBounds) {
  // Fields have constant extents (16 x 12 is no power of two in dim 1: a multiply; vel is a
  // vec2 field: its offsets are shifted by one).
  EXPECT_EQ(extents("stencil"),
            "grid.0 [1-1, 15+1) when 1..15 0..12\n"
            "grid.1 [0, 12) when 1..15 0..12\n"
            "vel.0 [0, 12) when 1..15 0..12\n"
            "vel.0 [1, 15) when 1..15 0..12\n");
}

TEST(ExtentAssumptions, PowerOfTwoExtentsLoweredToShifts) {
  // sq[j, i]: the offset j * 8 + i is a shift by 3 after simplification.
  EXPECT_EQ(extents("square"),
            "sq.0 [0, 8) when 0..8 0..8\n"
            "sq.1 [0, 8) when 0..8 0..8\n");
}

TEST(ExtentAssumptions, GathersAndConditionalAccessesAreUnchecked) {
  EXPECT_EQ(extents("gather"),
            "idx.0 [0, shape$0.0) by idx when 0..shape$0.0\n"
            "a.0 unchecked\n"
            "out.0 unchecked\n");
}

TEST(ExtentAssumptions, ALoopThatBreaksMayStopBeforeItsEnd) {
  // for i in range(n): for j in range(m): if a[j] > 0: break — a[j] need not cover [0, m)
  // when every row stops early; the store b[i] after the inner loop runs for every i.
  EXPECT_EQ(extents("search"),
            "a.0 unchecked\n"
            "b.0 [0, arg2) by n when 0..arg2\n");
}

TEST(ExtentAssumptions, AReturnMayEndTheLaunchBeforeLaterTasks) {
  // n > 5 returns before the loop: a[i] for i < n does not run for every n.
  EXPECT_EQ(extents("early"), "a.0 unchecked\n");
}

TEST(ExtentAssumptions, ConstantIndicesInSerialCode) {
  EXPECT_EQ(extents("first"), "c.0 [0, 4)\n");
}

TEST(ExtentAssumptions, DebugKernelsCheckInTheirCodeAndRecordNothing) {
  EXPECT_EQ(extents("copy", /*debug=*/true), "unknown");
  graph::Document doc = graph::load_document(kDoc);
  std::unique_ptr<ir::Kernel> k = graph::lower_kernel(doc, "copy", {});
  EXPECT_FALSE(passes::record_extent_assumptions(*k));  // records, never changes the IR
  EXPECT_TRUE(k->abi.extent_assumptions_known);
  EXPECT_EQ(k->abi.extent_assumptions.size(), 2u);  // the unlowered pointers read directly
}
