// The node library: every node type a graph document may use, with its pins, parameters,
// regions and whether it is ordered (effectful). Type rules live with the lowering
// (lower.cpp); this table is what the editor palette and the validator read.
// docs/nodes.md describes every entry.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "compiler/graph/document.h"

namespace loom::graph {

struct PinSpec {
  std::string name;
  bool required = false;  // must be linked or given a literal
  Literal default_value;  // Kind::None: no default (absent pins are simply not used)
};

struct ParamSpec {
  std::string name;
  bool required = false;
};

struct NodeSpec {
  std::string name;
  int version = 1;
  std::string category;  // "value", "math", "vector", "memory", "control", ...
  std::string summary;   // one line for palettes and tooltips
  std::vector<PinSpec> inputs;
  std::vector<std::string> outputs;
  std::vector<ParamSpec> params;
  std::vector<std::string> regions;  // nested blocks, e.g. {"then", "else"}
  bool effectful = false;            // runs in listed order inside its region
  bool any_inputs = false;           // pins are named by the user (call, yield, while, expr...)
  bool any_outputs = false;          // output pins depend on the node's use (if, while, call)

  const PinSpec* input(std::string_view pin) const;
  bool has_output(std::string_view pin) const;
  const ParamSpec* param(std::string_view name) const;
};

// All node types, in palette order.
const std::vector<NodeSpec>& node_library();
// nullptr when `type` is not a node type.
const NodeSpec* find_node_spec(std::string_view type);

// The pins a node shows, for the editor: the fixed pins of its type, or the pins it takes
// from the document (call: the function's ports; if: the names its branches yield; while:
// the names of its initial values; expr: the variables of its formula, then any other input
// it has; yield/output/while: the inputs it has).
std::vector<std::string> node_input_pins(const Document& doc, const Node& node);
std::vector<std::string> node_output_pins(const Document& doc, const Node& node);

}  // namespace loom::graph
