#include "editor/app/spreadsheet_panel.h"

#include <imgui.h>

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "runtime/common/error.h"

namespace loom::editor {

namespace {

// Column names for `components` components of an element of type `elem` (from the document;
// Void when the program made the array itself).
std::vector<std::string> component_names(ValueType elem, int components) {
  if (components == 1) return {"value"};
  std::vector<std::string> out;
  if (elem.is_matrix() && elem.components() == components) {
    for (int r = 0; r < elem.rows; ++r)
      for (int c = 0; c < elem.cols; ++c)
        out.push_back("m" + std::to_string(r) + std::to_string(c));
    return out;
  }
  static const char* kXyzw[] = {"x", "y", "z", "w"};
  for (int c = 0; c < components; ++c)
    out.push_back(components <= 4 ? kXyzw[c] : "c" + std::to_string(c));
  return out;
}

// The storage component of column `column` (matrices are stored column-major).
int component_of(ValueType elem, int components, int column) {
  if (!elem.is_matrix() || elem.components() != components) return column;
  int r = column / elem.cols, c = column % elem.cols;
  return c * elem.rows + r;
}

std::string format_value(double v, bool integer) {
  char b[40];
  if (integer)
    std::snprintf(b, sizeof b, "%.0f", v);
  else
    std::snprintf(b, sizeof b, "%.7g", v);
  return b;
}

}  // namespace

SpreadsheetPage read_page(Program& program, const std::string& resource, int64_t page,
                          size_t rows_per_page) {
  const graph::Document& doc = program.document();
  ValueType elem;
  if (const FieldDesc* f = doc.field(resource))
    elem = f->elem;
  else if (const graph::NdarrayDecl* n = doc.ndarray(resource))
    elem = n->elem;
  ArrayView a = program.array(resource);  // throws naming the resource
  SpreadsheetPage p;
  p.resource = resource;
  p.shape = a.shape;
  p.columns = component_names(elem, a.components);
  p.elements = a.elements();
  p.integer = !is_float(a.dtype);
  rows_per_page = std::max<size_t>(rows_per_page, 1);
  p.pages =
      std::max<int64_t>(1, static_cast<int64_t>((p.elements + rows_per_page - 1) / rows_per_page));
  p.page = std::clamp<int64_t>(page, 0, p.pages - 1);
  p.first = static_cast<size_t>(p.page) * rows_per_page;
  p.rows = p.first < p.elements ? std::min(rows_per_page, p.elements - p.first) : 0;
  size_t columns = p.columns.size();
  p.values.resize(p.rows * columns);
  for (size_t r = 0; r < p.rows; ++r)
    for (size_t c = 0; c < columns; ++c)
      p.values[r * columns + c] =
          a.component(p.first + r, component_of(elem, a.components, static_cast<int>(c)));
  return p;
}

std::string element_index_text(const std::vector<int64_t>& shape, size_t element) {
  if (shape.empty()) return "()";  // a 0-d field's one value has no index
  if (shape.size() == 1) return std::to_string(element);
  std::vector<int64_t> index(shape.size());
  size_t rest = element;
  for (size_t d = shape.size(); d-- > 0;) {
    size_t extent = static_cast<size_t>(std::max<int64_t>(shape[d], 1));
    index[d] = static_cast<int64_t>(rest % extent);
    rest /= extent;
  }
  std::string s;
  for (size_t d = 0; d < index.size(); ++d) s += (d ? ", " : "") + std::to_string(index[d]);
  return s;
}

std::optional<size_t> parse_element_index(const std::vector<int64_t>& shape,
                                          const std::string& text) {
  std::vector<int64_t> numbers;
  size_t i = 0;
  auto skip = [&] {
    while (i < text.size() &&
           (std::isspace(static_cast<unsigned char>(text[i])) || text[i] == '[' || text[i] == ']' ||
            text[i] == '(' || text[i] == ')'))
      ++i;
  };
  skip();
  while (i < text.size()) {
    if (!std::isdigit(static_cast<unsigned char>(text[i]))) return std::nullopt;
    int64_t v = 0;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
      if (v > (INT64_MAX - 9) / 10) return std::nullopt;
      v = v * 10 + (text[i++] - '0');
    }
    numbers.push_back(v);
    skip();
    if (i < text.size() && text[i] == ',') ++i, skip();
  }
  size_t elements = 1;
  for (int64_t e : shape) elements *= static_cast<size_t>(std::max<int64_t>(e, 0));
  if (numbers.size() == 1) {
    if (static_cast<size_t>(numbers[0]) >= elements) return std::nullopt;
    return static_cast<size_t>(numbers[0]);
  }
  if (numbers.empty() || numbers.size() != shape.size()) return std::nullopt;
  size_t flat = 0;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (numbers[d] >= shape[d]) return std::nullopt;
    flat = flat * static_cast<size_t>(shape[d]) + static_cast<size_t>(numbers[d]);
  }
  return flat;
}

std::vector<std::string> spreadsheet_resources(const graph::Document& doc) {
  std::vector<std::string> out;
  for (const FieldDesc& f : doc.fields) out.push_back(f.name);
  for (const graph::NdarrayDecl& n : doc.ndarrays) out.push_back(n.name);
  return out;
}

// ---------------------------------------------------------------- the panel

void SpreadsheetPanel::pick(const std::string& resource) {
  if (resource == picked_) return;
  picked_ = resource;
  page_ = 0;
  highlight_.reset();
}

void SpreadsheetPanel::go_to(size_t element) {
  page_ = static_cast<int64_t>(element / kSpreadsheetRows);
  highlight_ = element;
  scroll_to_highlight_ = true;
}

void SpreadsheetPanel::draw(LiveSession& session, const graph::ViewSettings& shown,
                            int window_flags) {
  ImGui::Begin("Spreadsheet", nullptr, window_flags);
  // The running document's resources, also while a frame is in flight (has_program() false):
  // the last page read stays on screen until the program can be read again.
  std::vector<std::string> resources = spreadsheet_resources(session.document());
  auto has = [&](const std::string& name) {
    return std::find(resources.begin(), resources.end(), name) != resources.end();
  };
  std::string listed = has(picked_)        ? picked_
                       : has(shown.show)   ? shown.show
                       : resources.empty() ? std::string()
                                           : resources.front();
  if (listed != listed_) {
    listed_ = listed;
    page_ = 0;
    highlight_.reset();
  }
  toolbar(resources);
  if (listed_.empty()) {
    ImGui::TextDisabled("the program has no field or ndarray");
    ImGui::End();
    return;
  }
  if (session.has_program()) refresh(session);
  if (data_.resource != listed_ && error_.empty())
    ImGui::TextDisabled("no program running");
  else if (!error_.empty())
    ImGui::TextColored(ImVec4(1.0f, 0.55f, 0.5f, 1.0f), "%s", error_.c_str());
  else
    table();
  ImGui::End();
}

// Copies the page out of the program when it, the program or its data changed; while the
// program plays, at most every refresh_ms (a table changing 60 times a second is unreadable).
void SpreadsheetPanel::refresh(LiveSession& session) {
  char key[512];
  std::snprintf(key, sizeof key, "%s|%lld|%p|%llu", listed_.c_str(), static_cast<long long>(page_),
                static_cast<const void*>(&session.program()),
                static_cast<unsigned long long>(session.data_version()));
  if (key == read_key_) return;
  bool same_place = read_key_.rfind(listed_ + "|" + std::to_string(page_) + "|", 0) == 0;
  Clock::time_point now = Clock::now();
  if (same_place && session.playing() && now - read_at_ < std::chrono::milliseconds(refresh_ms))
    return;
  read_key_ = key;
  read_at_ = now;
  try {
    data_ = read_page(session.program(), listed_, page_);
    page_ = data_.page;
    error_.clear();
    ++reads_;
  } catch (const Error& e) {
    data_ = SpreadsheetPage{};
    error_ = e.what();
  }
}

void SpreadsheetPanel::toolbar(const std::vector<std::string>& resources) {
  ImGui::SetNextItemWidth(std::min(200.0f, ImGui::GetContentRegionAvail().x * 0.4f));
  if (ImGui::BeginCombo("##resource", listed_.empty() ? "nothing" : listed_.c_str())) {
    if (ImGui::Selectable("what the viewport shows", picked_.empty())) pick("");
    ImGui::Separator();
    for (const std::string& r : resources)
      if (ImGui::Selectable(r.c_str(), r == picked_)) pick(r);
    ImGui::EndCombo();
  }
  controls_["resource"] = ControlRect::last_item();
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("The field or ndarray listed");
  if (listed_.empty()) return;
  int64_t pages = data_.resource == listed_ ? data_.pages : 1;
  auto button = [&](const char* label, const char* name, int64_t to, bool enabled) {
    ImGui::SameLine();
    if (!enabled) ImGui::BeginDisabled();
    if (ImGui::Button(label)) page_ = to, highlight_.reset();
    if (!enabled) ImGui::EndDisabled();
    controls_[name] = ControlRect::last_item();
  };
  button("|<", "first", 0, page_ > 0);
  button("<", "previous", page_ - 1, page_ > 0);
  ImGui::SameLine();
  ImGui::Text("page %lld of %lld", static_cast<long long>(page_) + 1,
              static_cast<long long>(pages));
  button(">", "next", page_ + 1, page_ + 1 < pages);
  button(">|", "last", pages - 1, page_ + 1 < pages);
  ImGui::SameLine();
  ImGui::SetNextItemWidth(std::max(60.0f, std::min(140.0f, ImGui::GetContentRegionAvail().x)));
  char buf[64];
  std::snprintf(buf, sizeof buf, "%s", goto_text_.c_str());
  bool enter = ImGui::InputTextWithHint("##goto", "go to index", buf, sizeof buf,
                                        ImGuiInputTextFlags_EnterReturnsTrue);
  goto_text_ = buf;
  controls_["goto"] = ControlRect::last_item();
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("An element: its flat index, or one index per dimension (3, 7)");
  if (enter) {
    std::optional<size_t> e = parse_element_index(data_.shape, goto_text_);
    if (e) go_to(*e);
  }
}

void SpreadsheetPanel::table() {
  const SpreadsheetPage& p = data_;
  std::string shape;
  for (size_t d = 0; d < p.shape.size(); ++d)
    shape += (d ? " x " : "") + std::to_string(p.shape[d]);
  if (p.shape.size() > 1)
    shape = " (" + shape + ")";
  else
    shape.clear();
  if (p.shape.empty()) {
    ImGui::TextDisabled("%s: 0-d, one value", p.resource.c_str());
  } else {
    ImGui::TextDisabled("%s: %zu elements%s; rows %zu to %zu", p.resource.c_str(), p.elements,
                        shape.c_str(), p.first, p.first + (p.rows ? p.rows - 1 : 0));
  }
  int columns = static_cast<int>(p.columns.size()) + 1;
  ImGuiTableFlags flags = ImGuiTableFlags_ScrollY | ImGuiTableFlags_ScrollX |
                          ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV |
                          ImGuiTableFlags_Resizable | ImGuiTableFlags_SizingFixedFit;
  if (columns > 64 || !ImGui::BeginTable("##elements", columns, flags)) return;
  ImGui::TableSetupScrollFreeze(1, 1);
  // Widths for the widest text a column can hold: rows come and go with the clipper.
  std::string widest_index = element_index_text(p.shape, p.elements ? p.elements - 1 : 0);
  float index_w =
      std::max(ImGui::CalcTextSize(widest_index.c_str()).x, ImGui::CalcTextSize("index").x);
  ImGui::TableSetupColumn("index", ImGuiTableColumnFlags_WidthFixed, index_w + 4);
  float value_w = ImGui::CalcTextSize(p.integer ? "-2147483648" : "-0.0001234567").x + 4;
  for (const std::string& c : p.columns)
    ImGui::TableSetupColumn(c.c_str(), ImGuiTableColumnFlags_WidthFixed, value_w);
  ImGui::TableHeadersRow();
  float row_h = ImGui::GetTextLineHeight() + 2 * ImGui::GetStyle().CellPadding.y;
  if (scroll_to_highlight_ && highlight_ && *highlight_ >= p.first &&
      *highlight_ < p.first + p.rows) {
    ImGui::SetScrollY(std::max(0.0f, row_h * static_cast<float>(*highlight_ - p.first - 2)));
    scroll_to_highlight_ = false;
  }
  ImGuiListClipper clipper;
  clipper.Begin(static_cast<int>(p.rows), row_h);
  while (clipper.Step()) {
    for (int r = clipper.DisplayStart; r < clipper.DisplayEnd; ++r) {
      size_t row = static_cast<size_t>(r);
      ImGui::TableNextRow();
      if (highlight_ && *highlight_ == p.first + row)
        ImGui::TableSetBgColor(ImGuiTableBgTarget_RowBg1, IM_COL32(70, 100, 160, 160));
      ImGui::TableNextColumn();
      ImGui::TextDisabled("%s", element_index_text(p.shape, p.first + row).c_str());
      for (size_t c = 0; c < p.columns.size(); ++c) {
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(format_value(p.at(row, c), p.integer).c_str());
      }
    }
  }
  ImGui::EndTable();
}

}  // namespace loom::editor
