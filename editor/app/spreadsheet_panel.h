// The spreadsheet: a field's or ndarray's elements while the program runs, one row per
// element (its index, then one column per component: vectors and matrices by component), a
// page at a time. Only the page on screen is copied out of the program, and only when the
// session's data version moved (at most every `refresh_every` while it plays).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "compiler/graph/document.h"
#include "compiler/graph/view_settings.h"
#include "editor/app/control_rect.h"
#include "editor/app/live_session.h"

namespace loom::editor {

constexpr size_t kSpreadsheetRows = 256;  // elements a page

// A page of a resource's elements, read from the program.
struct SpreadsheetPage {
  std::string resource;
  std::vector<int64_t> shape;        // the resource's extents
  std::vector<std::string> columns;  // per component: "value"; "x" "y" "z" "w"; "m00" "m01"...
  size_t elements = 0;               // in the resource
  int64_t page = 0, pages = 1;       // this page (clamped) and how many there are
  size_t first = 0;                  // flat index (C order) of the first row
  size_t rows = 0;
  std::vector<double> values;  // rows x columns, row by row
  bool integer = false;        // integer or bool elements: printed as whole numbers
  double at(size_t row, size_t column) const { return values[row * columns.size() + column]; }
};

// Page `page` of `resource` (a field or ndarray of the program), clamped to the pages there
// are, `rows_per_page` elements a page. Matrices are listed row by row ("m01": row 0,
// column 1). Throws loom::Error naming the resource when the program has no such array.
SpreadsheetPage read_page(Program& program, const std::string& resource, int64_t page,
                          size_t rows_per_page = kSpreadsheetRows);
// "7" in a 1-d array, "3, 7" in a 2-d one: the index of flat element `element`.
std::string element_index_text(const std::vector<int64_t>& shape, size_t element);
// The flat index that "12" (a flat index) or "3, 7" / "[3, 7]" (one per dimension) names in
// an array of `shape`; nullopt when it does not parse or lies outside.
std::optional<size_t> parse_element_index(const std::vector<int64_t>& shape,
                                          const std::string& text);
// What the spreadsheet can list: the document's fields, then its ndarrays.
std::vector<std::string> spreadsheet_resources(const graph::Document& doc);

class SpreadsheetPanel {
 public:
  // The ImGui window "Spreadsheet" (inside an ImGui frame). Until another resource is picked
  // it lists what the viewport shows (`shown`), when that is a field or ndarray.
  void draw(LiveSession& session, const graph::ViewSettings& shown, int window_flags = 0);

  const std::string& resource() const { return listed_; }  // what is listed ("" nothing)
  void pick(const std::string& resource);                  // "" follows the viewport
  void go_to(size_t element);  // its page, the row highlighted and scrolled to
  int64_t page_number() const { return page_; }
  void set_page(int64_t page) { page_ = page; }
  const SpreadsheetPage& page() const { return data_; }
  uint64_t reads() const { return reads_; }  // pages copied out of the program so far
  int refresh_ms = 100;                      // while playing: at most this often
  bool select_tab = false;  // the app shows the Spreadsheet tab at the next frame (and clears it)
  // "resource", "first", "previous", "next", "last", "goto": where they were drawn.
  const std::map<std::string, ControlRect>& controls() const { return controls_; }

 private:
  void refresh(LiveSession& session);
  void toolbar(const std::vector<std::string>& resources);
  void table();

  std::string picked_;  // "" follows the viewport
  std::string listed_;
  int64_t page_ = 0;
  SpreadsheetPage data_;
  std::string read_key_;  // the resource, page, program and data version data_ was read for
  Clock::time_point read_at_{};
  std::string error_;
  std::string goto_text_;
  std::optional<size_t> highlight_;
  bool scroll_to_highlight_ = false;
  uint64_t reads_ = 0;
  std::map<std::string, ControlRect> controls_;
};

}  // namespace loom::editor
