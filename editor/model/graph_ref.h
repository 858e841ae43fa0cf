// Small value types naming things inside a document: a graph (kernel or function), a region
// inside it, a pin, a point on the canvas. Node ids are the document's own (stable) ids.
#pragma once

#include <string>

namespace loom::editor {

// A kernel, or a function (a sub-graph) when `function`.
struct GraphRef {
  std::string name;
  bool function = false;

  bool valid() const { return !name.empty(); }
  bool operator==(const GraphRef&) const = default;
};

// Where nodes live inside a graph: the top level (node -1) or one region of a region node
// ("body" of a range_for, "then"/"else" of an if).
struct RegionRef {
  int node = -1;
  std::string region;

  bool top() const { return node < 0; }
  bool operator==(const RegionRef&) const = default;
};

// An input or output pin of a node.
struct PinRef {
  int node = -1;
  std::string pin;

  bool operator==(const PinRef&) const = default;
};

// Canvas units (the document's layout coordinates).
struct Vec2 {
  float x = 0, y = 0;

  bool operator==(const Vec2&) const = default;
};

}  // namespace loom::editor
