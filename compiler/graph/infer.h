// What flows out of every node of one graph, and what is wrong with each node, found by the
// real lowering run in a tolerant mode: a failing node records its problem and is skipped,
// nodes reading it are skipped without a problem of their own, and a missing required input
// is a problem that reads as a literal 0 (so an unfinished node still types its outputs).
// The editor colours pins and checks a candidate link with it; on a document whose other
// parts are valid it finds a problem exactly when validate_document fails.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "compiler/graph/document.h"

namespace loom::graph {

// The value on an output pin.
struct PinValue {
  enum class Kind : uint8_t { Value, Ref, Array, Texture };
  Kind kind = Kind::Value;
  ValueType type;        // Value: its type; Ref: the variable's; Array: the element type
  bool literal = false;  // a weak literal: takes the type of what it meets
};

// "f32x3", "i32 literal", "ref f32", "array of f32", "texture".
std::string pin_value_text(const PinValue& v);

struct NodeProblem {
  int node = -1;  // -1: the graph as a whole (its parameters, a function's outputs)
  std::string pin;
  std::string message;
};

struct GraphTypes {
  std::unordered_map<int, std::vector<std::pair<std::string, PinValue>>> outputs;
  std::vector<NodeProblem> problems;

  const PinValue* output(int node, const std::string& pin) const;
  // The first problem of `node`, or nullptr.
  const NodeProblem* problem_of(int node) const;
};

// `graph` names a kernel or, with `function`, a function. A kernel with template parameters
// is typed with the arguments of its first launch in the pipelines (as validate_document
// does); without one it reports that as a graph problem. Never throws for a bad document.
GraphTypes infer_graph_types(const Document& doc, const std::string& graph, bool function);

}  // namespace loom::graph
