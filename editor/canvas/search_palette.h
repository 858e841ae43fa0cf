// The node search palette: type to filter the catalog (node_catalog.h), Up/Down to choose,
// Enter or a click to pick, Escape to close; usable from the keyboard alone. Opened from a
// dragged link, it lists only the nodes that fit and says which pin will be linked.
#pragma once

#include <imgui.h>

#include <optional>
#include <string>
#include <vector>

#include "compiler/graph/document.h"
#include "compiler/graph/infer.h"
#include "editor/model/graph_ref.h"
#include "editor/model/node_catalog.h"

namespace loom::editor {

// Where the palette was opened and, for a link dropped on empty canvas, what to link.
struct PaletteRequest {
  Vec2 at;           // canvas position of the new node
  RegionRef region;  // where it goes
  bool link = false;
  PinRef anchor;  // the dragged pin
  bool anchor_output = true;
  graph::PinValue value;  // what the anchor gives (anchor_output)
  bool value_known = false;
};

class SearchPalette {
 public:
  struct Choice {
    CatalogEntry entry;
    std::string pin;  // link: the new node's input (from an output anchor) or output
  };

  void open(const graph::Document& doc, const GraphRef& g, const PaletteRequest& request,
            ImVec2 screen_pos);
  void close() { open_ = false; }
  bool is_open() const { return open_; }
  const PaletteRequest& request() const { return request_; }
  // Draws the palette (its own ImGui window); the entry the user picked, if any this frame.
  std::optional<Choice> draw(const ImFont* font);
  // Labels shown for the current query, best first (for tests and the status line).
  std::vector<std::string> shown() const;

 private:
  std::vector<size_t> filtered() const;

  bool open_ = false;
  int opened_frame_ = -1;
  bool focus_input_ = false;
  bool input_active_ = false;
  bool deselect_ = false;
  ImVec2 pos_{0, 0};
  ImVec2 size_{320, 360};  // the window's size in the last frame (it is kept on screen)
  PaletteRequest request_;
  std::vector<CatalogEntry> entries_;
  std::vector<std::string> pins_;  // per entry: the pin to link ("" hides it in link mode)
  std::string query_;
  int highlight_ = 0;
};

}  // namespace loom::editor
