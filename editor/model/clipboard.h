// Copy and paste as document text. Copied nodes become a small Loom document (a kernel
// named "clipboard" holding them, their positions, and the functions they call), so pasting
// into a text editor shows ordinary JSON and JSON pasted from outside works: a whole
// document (its first kernel, else its first function), a list of nodes, or one node.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "compiler/graph/document.h"
#include "editor/model/graph_ref.h"

namespace loom::editor {

// Nodes `ids` of graph `g` (a selected region node brings what it holds), the links among
// them (links to anything else are left out), their positions and the functions they call.
std::string copy_text(const graph::Document& doc, const GraphRef& g, const std::vector<int>& ids);

struct ClipboardContent {
  std::vector<graph::Node> nodes;              // top-level nodes, regions inside them
  std::vector<graph::NodePosition> positions;  // of any of them, nested included
  std::vector<graph::FunctionDecl> functions;  // functions they may call
};

// Reads clipboard text. Throws loom::Error with a clear message when it is not Loom nodes.
ClipboardContent parse_clipboard(std::string_view text);

}  // namespace loom::editor
