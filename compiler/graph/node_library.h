// The node library: every node type a graph document may use, with its pins, parameters,
// regions and whether it is ordered (effectful). One table in node_library.cpp declares each
// type once, with its lowering (lower_*.cpp) and whether formulas may call it; this is the
// part the editor palette and the validator read. docs/nodes.md describes every entry and
// docs/graph.schema.json lists them (tests/graph/node_library_test.cpp checks both).
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

// The pins a node of a type with any_inputs / any_outputs takes from the document.
using DocumentPins = std::vector<std::string> (*)(const Document& doc, const Node& node);

// The graphs a node type may be used in.
enum class NodeScope { Any, KernelOnly, FunctionOnly };

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
  DocumentPins document_inputs = nullptr;   // any_inputs: the pins after the fixed ones
  DocumentPins document_outputs = nullptr;  // any_outputs: the pins
  bool formula_call = false;                // formulas may call it by name: sin(x), vec3(a, b, c)
  NodeScope scope = NodeScope::Any;  // param, member, return: kernels; input, output: functions
  // Parameters a node new in the editor starts with, so it is valid as soon as it can be.
  std::vector<std::pair<std::string, Literal>> starting_params;

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
