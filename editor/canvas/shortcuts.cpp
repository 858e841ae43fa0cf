#include "editor/canvas/shortcuts.h"

namespace loom::editor {

const std::vector<Shortcut>& canvas_shortcuts() {
  static const std::vector<Shortcut> table = {
      {"Tab, Space, Shift+A, double-click", "search palette: type to filter, Up/Down, Enter"},
      {"Drag from a pin", "link: green accepts, yellow replaces, red refuses (hover: why)"},
      {"Drop a link on empty canvas", "palette of the nodes that fit, connected when picked"},
      {"Drag a linked input", "pick the link up; drop it on nothing to remove it"},
      {"Double-click a link", "insert a reroute node"},
      {"Click an input's value on the node",
       "type it there: Enter or click away sets, Esc cancels"},
      {"Drag an input's number sideways", "scrub it (one undo step)"},
      {"Click, Ctrl+click, drag on empty canvas", "select, toggle, box select (Ctrl adds)"},
      {"Drag a node or a comment title", "move (comments carry the nodes inside them)"},
      {"Drop nodes in a loop body or if branch", "move them into that region"},
      {"Middle or right drag, Space+drag", "pan"},
      {"Mouse wheel", "zoom around the cursor"},
      {"F / Home", "frame the selection / frame everything"},
      {"Delete, Backspace", "delete the selection"},
      {"Ctrl+C, Ctrl+X, Ctrl+V", "copy, cut, paste (the clipboard holds document JSON)"},
      {"Ctrl+D", "duplicate"},
      {"Ctrl+A", "select all"},
      {"Ctrl+Z, Ctrl+Y, Ctrl+Shift+Z", "undo, redo"},
      {"C", "comment frame around the selection"},
      {"H", "collapse the selected nodes to their title bars, or expand them"},
      {"Alt+Up, Alt+Down", "ordered node runs earlier, later in its region"},
      {"Double-click or Enter on a call node",
       "enter its function (on other nodes: the value editor)"},
      {"Escape, breadcrumb", "cancel, close, leave the function"},
      {"Right click", "menus for the canvas, a node, a link or a comment"},
      {"Minimap: click or drag", "move the view there"},
      {"F1, ?", "this help"},
  };
  return table;
}

}  // namespace loom::editor
