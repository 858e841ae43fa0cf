// Problems to show on the canvas: the ones the app reports (compile and run errors, as
// loom::Error places) and the ones type inference finds while editing. Each names a graph,
// a node (-1: the graph as a whole) and maybe a pin.
#pragma once

#include <string>
#include <vector>

#include "editor/model/graph_ref.h"

namespace loom {
class Error;
}

namespace loom::editor {

struct Diagnostic {
  // Note: not a problem: what the compiler did with the node (how a loop runs in parallel
  // or why it is serial), shown beside the node.
  enum class Severity : uint8_t { Error, Warning, Note };
  GraphRef graph;
  int node = -1;
  std::string pin;
  std::string message;
  Severity severity = Severity::Error;

  bool operator==(const Diagnostic&) const = default;
};

// The place of a loom::Error (kernel or function, node, pin) and its message.
Diagnostic diagnostic_from(const Error& e,
                           Diagnostic::Severity severity = Diagnostic::Severity::Error);

// The diagnostics of one node of one graph, in the given order.
std::vector<const Diagnostic*> diagnostics_of(const std::vector<Diagnostic>& all, const GraphRef& g,
                                              int node);

}  // namespace loom::editor
