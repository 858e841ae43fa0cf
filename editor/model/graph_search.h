// Finding nodes in a program by what a person remembers of them: the node type ("store"),
// the resource, parameter or function it names ("temperature"), its formula text
// ("4.0 * c"), or its id ("#12"). Every kernel and function is searched; matches in the
// graph being shown come first.
#pragma once

#include <string>
#include <vector>

#include "compiler/graph/document.h"
#include "editor/model/graph_ref.h"

namespace loom::editor {

struct SearchMatch {
  GraphRef graph;
  int node = -1;
  std::string label;  // "store temperature  (kernel init, #3)"
  std::string why;    // the matched text: "field temperature", "formula ...", "type store"
};

// Case-insensitive; every word of `query` must match somewhere in the node. At most `limit`.
std::vector<SearchMatch> search_program(const graph::Document& doc, const std::string& query,
                                        const GraphRef& first = {}, size_t limit = 200);

}  // namespace loom::editor
