// What is selected on the canvas: nodes (by id) and comment frames (by index) of one graph.
// Not part of the document and not undoable (as in every node editor); the model prunes it
// when an undo removes what it names.
#pragma once

#include <algorithm>
#include <vector>

#include "editor/model/graph_ref.h"

namespace loom::editor {

struct Selection {
  GraphRef graph;
  std::vector<int> nodes;        // in the order they were selected
  std::vector<size_t> comments;  // indices into the graph's comment frames

  bool empty() const { return nodes.empty() && comments.empty(); }
  bool has(int node) const { return std::find(nodes.begin(), nodes.end(), node) != nodes.end(); }
  bool has_comment(size_t c) const {
    return std::find(comments.begin(), comments.end(), c) != comments.end();
  }
  void clear() {
    nodes.clear();
    comments.clear();
  }
  void add(int node) {
    if (!has(node)) nodes.push_back(node);
  }
  void remove(int node) { nodes.erase(std::remove(nodes.begin(), nodes.end(), node), nodes.end()); }
  void toggle(int node) { has(node) ? remove(node) : add(node); }
  void add_comment(size_t c) {
    if (!has_comment(c)) comments.push_back(c);
  }
  void toggle_comment(size_t c) {
    if (has_comment(c))
      comments.erase(std::remove(comments.begin(), comments.end(), c), comments.end());
    else
      comments.push_back(c);
  }
  bool operator==(const Selection&) const = default;
};

}  // namespace loom::editor
