#include "editor/canvas/search_palette.h"

#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>
#include <cstdint>

namespace loom::editor {

void SearchPalette::open(const graph::Document& doc, const GraphRef& g,
                         const PaletteRequest& request, ImVec2 screen_pos) {
  open_ = true;
  opened_frame_ = ImGui::GetFrameCount();
  focus_input_ = true;
  input_active_ = false;
  deselect_ = true;
  pos_ = screen_pos;
  request_ = request;
  query_.clear();
  highlight_ = 0;
  entries_ = node_catalog(doc, g);
  pins_.assign(entries_.size(), "");
  for (size_t i = 0; i < entries_.size(); ++i) {
    if (!request.link) continue;
    if (request.anchor_output)
      pins_[i] = request.value_known ? compatible_input(doc, g, entries_[i], request.value) : "";
    else
      pins_[i] = first_output(doc, entries_[i]);
  }
}

std::vector<size_t> SearchPalette::filtered() const {
  std::vector<std::pair<int, size_t>> scored;
  for (size_t i = 0; i < entries_.size(); ++i) {
    if (request_.link && pins_[i].empty()) continue;
    int s = match_score(query_, entries_[i].label);
    if (s >= 0) scored.emplace_back(s, i);
  }
  // Stable: equal scores keep the library's palette order. With no query the palette is a
  // menu by category (in the order categories first appear), as Blender's Add menu.
  if (query_.empty()) {
    std::vector<std::string> order;
    for (const auto& [score, i] : scored)
      if (std::find(order.begin(), order.end(), entries_[i].category) == order.end())
        order.push_back(entries_[i].category);
    auto rank = [&](size_t i) {
      return std::find(order.begin(), order.end(), entries_[i].category) - order.begin();
    };
    std::stable_sort(scored.begin(), scored.end(),
                     [&](const auto& a, const auto& b) { return rank(a.second) < rank(b.second); });
  } else {
    std::stable_sort(scored.begin(), scored.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
  }
  std::vector<size_t> out;
  out.reserve(scored.size());
  for (const auto& [s, i] : scored) out.push_back(i);
  return out;
}

std::vector<std::string> SearchPalette::shown() const {
  std::vector<std::string> out;
  for (size_t i : filtered()) out.push_back(entries_[i].label);
  return out;
}

std::optional<SearchPalette::Choice> SearchPalette::draw(const ImFont* font) {
  if (!open_) return std::nullopt;
  std::optional<Choice> picked;
  // On screen whole: opened near an edge, it moves in (its size is last frame's).
  ImVec2 display = ImGui::GetIO().DisplaySize;
  ImVec2 at(std::clamp(pos_.x, 0.0f, std::max(display.x - size_.x, 0.0f)),
            std::clamp(pos_.y, 0.0f, std::max(display.y - size_.y, 0.0f)));
  ImGui::SetNextWindowPos(at, ImGuiCond_Always);
  ImGui::SetNextWindowSize(ImVec2(320, 0), ImGuiCond_Always);
  if (focus_input_) ImGui::SetNextWindowFocus();
  ImGuiWindowFlags flags = ImGuiWindowFlags_NoTitleBar | ImGuiWindowFlags_NoResize |
                           ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoSavedSettings |
                           ImGuiWindowFlags_AlwaysAutoResize;
  if (font) ImGui::PushFont(const_cast<ImFont*>(font));
  if (ImGui::Begin("##loom_node_palette", nullptr, flags)) {
    if (request_.link)
      ImGui::TextDisabled(request_.anchor_output ? "Nodes that take this value"
                                                 : "Nodes that give this input");
    else
      ImGui::TextDisabled("Add a node");
    if (focus_input_) {
      ImGui::SetKeyboardFocusHere();
      focus_input_ = false;
    }
    // Until the input is active (focus lands a frame after the request), typed characters
    // would be lost: keep them for it.
    if (!input_active_)
      for (ImWchar c : ImGui::GetIO().InputQueueCharacters)
        if (c >= 32 && c < 127) {
          query_ += static_cast<char>(c);
          highlight_ = 0;
        }
    ImGui::SetNextItemWidth(-1);
    // Focus given by code selects all the text; what was typed before must not be replaced.
    auto keep_cursor_at_end = [](ImGuiInputTextCallbackData* data) {
      auto* self = static_cast<SearchPalette*>(data->UserData);
      if (self->deselect_) {
        data->CursorPos = data->SelectionStart = data->SelectionEnd = data->BufTextLen;
        self->deselect_ = false;
      }
      return 0;
    };
    if (ImGui::InputTextWithHint("##query", "search...", &query_,
                                 ImGuiInputTextFlags_CallbackAlways, keep_cursor_at_end, this))
      highlight_ = 0;
    input_active_ = ImGui::IsItemActive();
    std::vector<size_t> items = filtered();
    int count = static_cast<int>(items.size());
    if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_DownArrow)))
      highlight_ = std::min(highlight_ + 1, count - 1);
    if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_UpArrow)))
      highlight_ = std::max(highlight_ - 1, 0);
    highlight_ = std::clamp(highlight_, 0, std::max(count - 1, 0));
    bool enter = ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Enter)) ||
                 ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_KeyPadEnter));
    if (enter && count > 0)
      picked = Choice{entries_[items[static_cast<size_t>(highlight_)]],
                      pins_[items[static_cast<size_t>(highlight_)]]};
    float row = ImGui::GetTextLineHeightWithSpacing();
    size_t hovered = SIZE_MAX;
    ImGui::BeginChild("##entries",
                      ImVec2(0, row * static_cast<float>(std::clamp(count, 1, 12)) + 4), false);
    std::string heading;
    for (int k = 0; k < count; ++k) {
      const CatalogEntry& e = entries_[items[static_cast<size_t>(k)]];
      const std::string& pin = pins_[items[static_cast<size_t>(k)]];
      if (query_.empty() && e.category != heading) {  // the menu's category headings
        heading = e.category;
        ImGui::TextDisabled("%s", heading.c_str());
      }
      std::string label = e.label + (request_.link && !pin.empty() ? "  (" + pin + ")" : "") +
                          "##" + std::to_string(k);
      bool selected = k == highlight_;
      if (ImGui::Selectable(label.c_str(), selected)) picked = Choice{e, pin};
      if (selected && (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_DownArrow)) ||
                       ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_UpArrow))))
        ImGui::SetScrollHereY();
      if (ImGui::IsItemHovered() && !e.summary.empty()) hovered = items[static_cast<size_t>(k)];
      if (!query_.empty()) {  // found by a query: which category it comes from
        ImGui::SameLine(ImGui::GetWindowContentRegionMax().x -
                        ImGui::CalcTextSize(e.category.c_str()).x);
        ImGui::TextDisabled("%s", e.category.c_str());
      }
    }
    if (count == 0) ImGui::TextDisabled(request_.link ? "no node fits" : "nothing matches");
    ImGui::EndChild();
    // What the highlighted (or hovered) node does, in a line of its own under the list.
    size_t described = hovered != SIZE_MAX ? hovered
                       : count > 0         ? items[static_cast<size_t>(highlight_)]
                                           : SIZE_MAX;
    ImGui::Separator();
    ImGui::PushTextWrapPos(ImGui::GetWindowContentRegionMax().x);
    ImGui::TextDisabled("%s", described == SIZE_MAX ? " " : entries_[described].summary.c_str());
    ImGui::PopTextWrapPos();
    bool outside_click = ImGui::IsMouseClicked(0) &&
                         !ImGui::IsWindowHovered(ImGuiHoveredFlags_ChildWindows) &&
                         ImGui::GetFrameCount() > opened_frame_;
    if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape)) || outside_click) open_ = false;
    size_ = ImGui::GetWindowSize();
  }
  ImGui::End();
  if (font) ImGui::PopFont();
  if (picked) open_ = false;
  return picked;
}

}  // namespace loom::editor
