// Every keyboard and mouse shortcut of the canvas, once: the help overlay (F1 or ?) lists
// this table, and editor/README.md repeats it.
#pragma once

#include <vector>

namespace loom::editor {

struct Shortcut {
  const char* keys;
  const char* action;
};

const std::vector<Shortcut>& canvas_shortcuts();

}  // namespace loom::editor
