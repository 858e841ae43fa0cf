// Context menus (canvas, node, link, comment), the comment title editor and the help overlay.
#include <algorithm>
#include <cmath>

#include <imgui.h>
#include <imgui_stdlib.h>

#include "compiler/graph/node_library.h"
#include "editor/canvas/node_canvas.h"
#include "editor/canvas/shortcuts.h"
#include "editor/model/clipboard.h"
#include "editor/model/graph_access.h"
#include "editor/model/literal_text.h"
#include "editor/model/operations.h"

namespace loom::editor {

namespace {

constexpr const char* kMenu = "##loom_canvas_menu";

struct Swatch {
  const char* name;
  const char* hex;
};
constexpr Swatch kSwatches[] = {{"Blue", "#3a6ea5"},   {"Green", "#3f8f4f"},  {"Red", "#a53a3a"},
                                {"Yellow", "#a5923a"}, {"Purple", "#6e3aa5"}, {"Grey", "#5a5a5a"}};

}  // namespace

void NodeCanvas::open_menu(const Hit& hit, Vec2 at) {
  menu_ = Menu{hit, at};
  menu_requested_ = true;
}

void NodeCanvas::draw_menus(EditorDocument& doc) {
  if (menu_requested_) {
    ImGui::OpenPopup(kMenu);
    menu_requested_ = false;
    // Right-clicking an unselected node or comment acts on it alone.
    if (menu_->hit.kind == Hit::Kind::Node || menu_->hit.kind == Hit::Kind::Zone ||
        menu_->hit.kind == Hit::Kind::Value) {
      int id = geo_.nodes()[static_cast<size_t>(menu_->hit.node)].id;
      if (!doc.selection().has(id)) select_only(doc, {id});
    } else if (menu_->hit.kind == Hit::Kind::Comment ||
               menu_->hit.kind == Hit::Kind::CommentResize) {
      if (!doc.selection().has_comment(static_cast<size_t>(menu_->hit.comment)))
        select_only(doc, {}, {static_cast<size_t>(menu_->hit.comment)});
    }
  }
  if (fonts_ && fonts_->ui()) ImGui::PushFont(fonts_->ui());
  if (menu_ && ImGui::BeginPopup(kMenu)) {
    if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape), false)) ImGui::CloseCurrentPopup();
    const Hit& hit = menu_->hit;
    Vec2 at = menu_->at;
    const Selection& sel = doc.selection();
    switch (hit.kind) {
      case Hit::Kind::Node:
      case Hit::Kind::Zone:
      case Hit::Kind::Value:
      case Hit::Kind::Pin: {
        const NodeGeom& n = geo_.nodes()[static_cast<size_t>(hit.node)];
        ImGui::TextDisabled("%s #%d", n.type.c_str(), n.id);
        ImGui::Separator();
        if (n.type == "call") {
          const graph::Node* node = find_node(doc.doc(), graph(), n.id);
          const graph::Literal* f = node ? node->param("function") : nullptr;
          if (ImGui::MenuItem("Enter function", "Enter", false, f && doc.doc().function(f->s)))
            enter_function(f->s);
        }
        if (!n.reroute && ImGui::MenuItem("Edit values...", "Enter")) open_value_editor(doc, n.id);
        if (ImGui::MenuItem("Copy", "Ctrl+C")) copy_selection(doc);
        if (ImGui::MenuItem("Duplicate", "Ctrl+D"))
          duplicate_nodes(doc, graph(), sel.nodes, Vec2{30, 30});
        if (ImGui::MenuItem("Delete", "Del")) delete_selection(doc);
        if (ImGui::MenuItem("Comment around", "C")) comment_around_selection(doc);
        if (!n.reroute && ImGui::MenuItem(n.collapsed ? "Expand" : "Collapse", "H"))
          toggle_collapse(doc);
        bool linked = false;
        for (const PinGeom& p : n.inputs) linked |= p.linked;
        if (ImGui::MenuItem("Disconnect inputs", nullptr, false, linked)) {
          doc.begin_group("Disconnect inputs");
          for (const PinGeom& p : n.inputs)
            if (p.linked) disconnect(doc, graph(), PinRef{n.id, p.name});
          doc.end_group();
        }
        if (n.order > 0) {
          if (ImGui::MenuItem("Run earlier", "Alt+Up")) reorder_node(doc, graph(), n.id, -1);
          if (ImGui::MenuItem("Run later", "Alt+Down")) reorder_node(doc, graph(), n.id, 1);
        }
        if (!n.region.top() && ImGui::MenuItem("Move out of the region")) {
          RegionRef outer =
              n.parent >= 0 ? geo_.nodes()[static_cast<size_t>(n.parent)].region : RegionRef{};
          EditResult r = move_to_region(doc, graph(), sel.nodes, outer);
          if (!r.ok) status_ = r.message;
        }
        break;
      }
      case Hit::Kind::Link: {
        const LinkGeom& l = geo_.links()[static_cast<size_t>(hit.link)];
        const NodeGeom& to = geo_.nodes()[static_cast<size_t>(l.to)];
        PinRef input{to.id, to.inputs[static_cast<size_t>(l.to_pin)].name};
        ImGui::TextDisabled("link into %s of #%d", input.pin.c_str(), to.id);
        ImGui::Separator();
        if (ImGui::MenuItem("Delete link")) disconnect(doc, graph(), input);
        if (ImGui::MenuItem("Insert reroute", "double-click")) {
          float half = geo_.metrics().reroute * 0.5f;
          insert_reroute(doc, graph(), input, Vec2{at.x - half, at.y - half});
        }
        break;
      }
      case Hit::Kind::Comment:
      case Hit::Kind::CommentResize: {
        size_t c = static_cast<size_t>(hit.comment);
        const graph::GraphLayout* l = layout(doc);
        if (!l || c >= l->comments.size()) break;
        if (ImGui::MenuItem("Rename", "double-click")) {
          comment_editing_ = static_cast<int>(c);
          comment_title_ = l->comments[c].title;
          comment_focus_ = true;
        }
        if (ImGui::BeginMenu("Colour")) {
          for (const Swatch& s : kSwatches)
            if (ImGui::MenuItem(s.name)) {
              graph::CommentFrame f = l->comments[c];
              f.color = s.hex;
              set_comment(doc, graph(), c, f);
            }
          ImGui::EndMenu();
        }
        if (ImGui::MenuItem("Delete", "Del")) remove_comments(doc, graph(), {c});
        break;
      }
      default: {
        ImVec2 screen = view_.to_screen(at);
        if (ImGui::MenuItem("Add node...", "Tab")) open_palette(doc, at, screen, false);
        if (ImGui::MenuItem("Paste", "Ctrl+V")) {
          const char* text = ImGui::GetClipboardText();
          EditResult r = paste_text(doc, graph(), region_at(at), text ? text : "", at);
          status_ = r.ok ? "pasted" : r.message;
        }
        if (ImGui::MenuItem("Add comment", "C")) {
          EditResult r = add_comment(
              doc, graph(),
              graph::CommentFrame{"Comment", std::round(at.x), std::round(at.y), 300, 180, ""});
          if (r.ok) {
            comment_editing_ = r.nodes[0];
            comment_title_ = "Comment";
            comment_focus_ = true;
          }
        }
        ImGui::Separator();
        std::string undo = doc.undo_label().empty() ? "Undo" : "Undo " + doc.undo_label();
        if (ImGui::MenuItem(undo.c_str(), "Ctrl+Z", false, doc.can_undo())) doc.undo();
        if (ImGui::MenuItem("Redo", "Ctrl+Y", false, doc.can_redo())) doc.redo();
        if (ImGui::MenuItem("Frame all", "Home")) frame_all();
        ImGui::Separator();
        if (ImGui::MenuItem("New function")) new_function(doc);
        if (graph().function) {
          if (ImGui::MenuItem("Rename function...")) {
            renaming_function_ = true;
            function_name_ = graph().name;
            edit_focus_ = true;
          }
          if (ImGui::MenuItem("Delete function")) {
            std::string name = graph().name;
            EditResult r = delete_function(doc, name);
            status_ = r.ok ? "deleted function " + name : r.message;
          }
        }
        if (crumbs_.size() > 1 && ImGui::MenuItem("Leave function", "Esc")) leave();
        if (ImGui::MenuItem("Shortcuts", "F1")) help_open_ = true;
      }
    }
    ImGui::EndPopup();
  } else if (!ImGui::IsPopupOpen(kMenu)) {
    menu_.reset();
  }
  if (fonts_ && fonts_->ui()) ImGui::PopFont();
}

void NodeCanvas::draw_comment_editor(EditorDocument& doc) {
  if (comment_editing_ < 0) return;
  const graph::GraphLayout* l = layout(doc);
  if (!l || static_cast<size_t>(comment_editing_) >= l->comments.size()) {
    comment_editing_ = -1;
    return;
  }
  const graph::CommentFrame& f = l->comments[static_cast<size_t>(comment_editing_)];
  ImGui::SetNextWindowPos(view_.to_screen(Vec2{f.x, f.y}));
  ImGui::SetNextWindowSize(ImVec2(std::max(220.0f, f.w * view_.zoom), 0));
  if (comment_focus_) ImGui::SetNextWindowFocus();
  ImGuiWindowFlags flags = ImGuiWindowFlags_NoTitleBar | ImGuiWindowFlags_NoResize |
                           ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoSavedSettings;
  if (fonts_ && fonts_->ui()) ImGui::PushFont(fonts_->ui());
  if (ImGui::Begin("##loom_comment_title", nullptr, flags)) {
    if (comment_focus_) {
      ImGui::SetKeyboardFocusHere();
      comment_focus_ = false;
    }
    ImGui::SetNextItemWidth(-1);
    bool done = ImGui::InputText("##title", &comment_title_, ImGuiInputTextFlags_EnterReturnsTrue);
    if (done) {
      graph::CommentFrame renamed = f;
      renamed.title = comment_title_;
      if (renamed.title != f.title)
        set_comment(doc, graph(), static_cast<size_t>(comment_editing_), renamed);
      comment_editing_ = -1;
    } else if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape))) {
      comment_editing_ = -1;
    }
  }
  ImGui::End();
  if (fonts_ && fonts_->ui()) ImGui::PopFont();
}

void NodeCanvas::draw_help() {
  if (!help_open_) return;
  ImGui::SetNextWindowPos(ImVec2(view_.origin.x + size_.x * 0.5f, view_.origin.y + size_.y * 0.5f),
                          ImGuiCond_Appearing, ImVec2(0.5f, 0.5f));
  if (fonts_ && fonts_->ui()) ImGui::PushFont(fonts_->ui());
  // It does not take the keyboard from the canvas; when clicked, its own keys close it.
  if (ImGui::Begin("Canvas shortcuts", &help_open_,
                   ImGuiWindowFlags_AlwaysAutoResize | ImGuiWindowFlags_NoCollapse |
                       ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_NoFocusOnAppearing)) {
    if (ImGui::IsWindowFocused() &&
        (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape), false) ||
         ImGui::IsKeyPressed(options_.keys.f1, false)))
      help_open_ = false;
    if (ImGui::BeginTable("##shortcuts", 2,
                          ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV)) {
      for (const Shortcut& s : canvas_shortcuts()) {
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(s.keys);
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(s.action);
      }
      ImGui::EndTable();
    }
    ImGui::TextDisabled(
        "Pins: circle float/int, diamond bool, square vector, crossed square matrix,");
    ImGui::TextDisabled(
        "ring array/texture, triangle variable; filled when linked. F1 or ? closes.");
  }
  ImGui::End();
  if (fonts_ && fonts_->ui()) ImGui::PopFont();
}

}  // namespace loom::editor

namespace loom::editor {

void NodeCanvas::open_value_editor(EditorDocument& doc, int node) {
  const graph::Node* n = find_node(doc.doc(), graph(), node);
  if (!n) return;
  editing_node_ = node;
  ++edit_opening_;
  edit_focus_ = true;
  edit_opened_frame_ = ImGui::GetFrameCount();
  edit_fields_.clear();
  const graph::NodeSpec* spec = graph::find_node_spec(n->type);
  std::vector<std::string> params;
  if (spec)
    for (const graph::ParamSpec& p : spec->params) params.push_back(p.name);
  for (const auto& [name, v] : n->params)
    if (std::find(params.begin(), params.end(), name) == params.end()) params.push_back(name);
  for (const std::string& name : params) {
    EditField f;
    f.name = name;
    f.param = true;
    if (const graph::Literal* l = n->param(name)) f.text = literal_text(*l);
    edit_fields_.push_back(std::move(f));
  }
  for (const std::string& pin : graph::node_input_pins(doc.doc(), *n)) {
    EditField f;
    f.name = pin;
    if (const graph::Input* in = n->input(pin)) {
      f.linked = in->linked;
      f.text = in->linked ? std::to_string(in->from_node) + "." + in->from_pin
                          : literal_text(in->literal);
    }
    edit_fields_.push_back(std::move(f));
  }
}

std::optional<ImVec2> NodeCanvas::value_field_screen_pos(const std::string& name) const {
  if (editing_node_ < 0) return std::nullopt;
  for (const EditField& f : edit_fields_)
    if (f.name == name && !f.linked && f.center.x >= 0) return f.center;
  return std::nullopt;
}

void NodeCanvas::draw_value_editor(EditorDocument& doc) {
  if (editing_node_ < 0) return;
  int index = geo_.index_of(editing_node_);
  const graph::Node* node = find_node(doc.doc(), graph(), editing_node_);
  if (index < 0 || !node) {
    editing_node_ = -1;
    return;
  }
  const NodeGeom& n = geo_.nodes()[static_cast<size_t>(index)];
  // Beside the node, kept whole on screen (its height is last frame's): near the right edge
  // it moves to the node's left.
  ImVec2 at = view_.to_screen(Vec2{n.pos.x + n.w + 12, n.pos.y});
  ImVec2 display = ImGui::GetIO().DisplaySize;
  if (at.x + 300 > display.x) at.x = view_.to_screen(Vec2{n.pos.x, n.pos.y}).x - 312;
  at.x = std::clamp(at.x, 0.0f, std::max(display.x - 300, 0.0f));
  at.y = std::clamp(at.y, 0.0f, std::max(display.y - value_editor_height_, 0.0f));
  ImGui::SetNextWindowPos(at);
  ImGui::SetNextWindowSize(ImVec2(300, 0));
  if (edit_focus_) ImGui::SetNextWindowFocus();
  ImGuiWindowFlags flags = ImGuiWindowFlags_NoTitleBar | ImGuiWindowFlags_NoResize |
                           ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoSavedSettings |
                           ImGuiWindowFlags_AlwaysAutoResize;
  if (fonts_ && fonts_->ui()) ImGui::PushFont(fonts_->ui());
  bool close = false;
  if (ImGui::Begin("##loom_value_editor", nullptr, flags)) {
    ImGui::Text("%s #%d", node->type.c_str(), node->id);
    // The node's problems here, where the error tooltip would have covered this editor.
    for (const std::string& p : problems(node->id))
      ImGui::TextColored(ImVec4(1, 0.45f, 0.45f, 1), "%s", p.c_str());
    ImGui::TextDisabled("Enter applies a field, Escape closes; empty removes");
    ImGui::Separator();
    // ImGui keeps an active text field's own buffer (and a recycled one's cursor) by id: ids
    // new to this opening make every field start from the node's values.
    ImGui::PushID(edit_opening_);
    bool first_edit = true;
    for (EditField& f : edit_fields_) {
      ImGui::PushID(static_cast<int>(&f - edit_fields_.data()));
      ImGui::AlignTextToFramePadding();
      ImGui::TextUnformatted(f.name.c_str());
      ImGui::SameLine(110);
      ImGui::SetNextItemWidth(-1);
      if (f.linked) {
        ImGui::TextDisabled("linked from %s", f.text.c_str());
      } else {
        if (edit_focus_ && first_edit) {
          ImGui::SetKeyboardFocusHere();
          edit_focus_ = false;
        }
        first_edit = false;
        bool enter = ImGui::InputText("##v", &f.text, ImGuiInputTextFlags_EnterReturnsTrue);
        ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
        f.center = ImVec2((a.x + b.x) * 0.5f, (a.y + b.y) * 0.5f);
        if (enter || ImGui::IsItemDeactivatedAfterEdit()) {
          const graph::Literal* now = f.param ? node->param(f.name) : nullptr;
          bool text_ok = f.param && (is_text_param(f.name) ||
                                     (now && now->kind == graph::Literal::Kind::String));
          std::optional<graph::Literal> value = parse_literal_text(f.text, text_ok, &f.error);
          if (f.error.empty()) {
            EditResult r = f.param ? set_param(doc, graph(), node->id, f.name, value)
                                   : set_literal(doc, graph(), PinRef{node->id, f.name}, value);
            if (!r.ok) f.error = r.message;
            node = find_node(doc.doc(), graph(), editing_node_);
            if (!node) {
              ImGui::PopID();
              close = true;
              break;
            }
          }
          if (!f.error.empty()) status_ = f.name + ": " + f.error;
        }
        if (!f.error.empty()) ImGui::TextColored(ImVec4(1, 0.4f, 0.4f, 1), "%s", f.error.c_str());
      }
      ImGui::PopID();
    }
    ImGui::PopID();
    if (edit_fields_.empty()) ImGui::TextDisabled("nothing to set");
    // A click into a field makes that field the active item before this check, which plain
    // IsWindowHovered counts as not hovered.
    bool outside = ImGui::IsMouseClicked(0) &&
                   !ImGui::IsWindowHovered(ImGuiHoveredFlags_ChildWindows |
                                           ImGuiHoveredFlags_AllowWhenBlockedByActiveItem) &&
                   ImGui::GetFrameCount() > edit_opened_frame_ + 1;
    if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape)) || outside) close = true;
    value_editor_height_ = ImGui::GetWindowHeight();
  }
  ImGui::End();
  if (fonts_ && fonts_->ui()) ImGui::PopFont();
  if (close) editing_node_ = -1;
}

void NodeCanvas::open_inline_editor(EditorDocument& doc, const PinRef& pin) {
  const graph::Node* n = find_node(doc.doc(), graph(), pin.node);
  if (!n) return;
  const graph::Input* in = n->input(pin.pin);
  if (in && in->linked) return;
  inline_pin_ = pin;
  inline_text_ = in ? literal_text(in->literal) : "";
  inline_focus_ = true;
  inline_opened_frame_ = ImGui::GetFrameCount();
  ++inline_opening_;
}

void NodeCanvas::commit_inline(EditorDocument& doc) {
  PinRef pin = inline_pin_;
  inline_pin_ = PinRef{};
  const graph::Node* n = find_node(doc.doc(), graph(), pin.node);
  if (!n) return;
  const graph::Input* in = n->input(pin.pin);
  if (in && in->linked) return;  // linked meanwhile: the value would be thrown away
  std::string error;
  std::optional<graph::Literal> value = parse_literal_text(inline_text_, false, &error);
  if (!error.empty()) {
    status_ = pin.pin + ": " + error;
    return;
  }
  std::string now = in ? literal_text(in->literal) : "";
  if ((value ? literal_text(*value) : "") == now && (value.has_value() == (in != nullptr)))
    return;  // unchanged: no undo step
  EditResult r = set_literal(doc, graph(), pin, value);
  status_ = r.ok ? pin.pin + " = " + (inline_text_.empty() ? "(none)" : inline_text_) : r.message;
}

void NodeCanvas::draw_inline_editor(EditorDocument& doc) {
  if (inline_pin_.node < 0) return;
  int index = geo_.index_of(inline_pin_.node);
  int pin = index < 0 ? -1 : geo_.input_index(index, inline_pin_.pin);
  Rect r = pin < 0 ? Rect{} : value_rect(index, pin);
  if (r.width() <= 0) {  // gone, linked, zoomed too far out to show: nothing to type into
    inline_pin_ = PinRef{};
    return;
  }
  const NodeGeom& n = geo_.nodes()[static_cast<size_t>(index)];
  ImFont* font = font_for(geo_.metrics().text);
  float px = geo_.metrics().text * view_.zoom;
  ImVec2 a = view_.to_screen(Vec2{r.x0, r.y0});
  float width = std::max(60.0f, view_.to_screen(Vec2{n.pos.x + n.w, 0}).x - a.x - 4);
  ImGui::SetNextWindowPos(ImVec2(a.x, a.y));
  if (inline_focus_) ImGui::SetNextWindowFocus();
  ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, ImVec2(0, 0));
  ImGui::PushStyleVar(ImGuiStyleVar_FramePadding,
                      ImVec2(2, std::max(0.0f, (r.height() * view_.zoom - px) * 0.5f)));
  ImGui::PushFont(font);
  ImGuiWindowFlags flags = ImGuiWindowFlags_NoTitleBar | ImGuiWindowFlags_NoResize |
                           ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoSavedSettings |
                           ImGuiWindowFlags_AlwaysAutoResize | ImGuiWindowFlags_NoScrollbar;
  bool commit = false, cancel = false;
  if (ImGui::Begin("##loom_inline_value", nullptr, flags)) {
    ImGui::PushID(inline_opening_);  // a fresh field each opening: it starts from the value
    if (inline_focus_) {
      ImGui::SetKeyboardFocusHere();
      inline_focus_ = false;
    }
    ImGui::SetNextItemWidth(width);
    ImGui::SetWindowFontScale(px / font->FontSize);
    commit =
        ImGui::InputText("##v", &inline_text_,
                         ImGuiInputTextFlags_EnterReturnsTrue | ImGuiInputTextFlags_AutoSelectAll);
    ImGui::SetWindowFontScale(1);
    ImGui::PopID();
    cancel = ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape));
    // A click anywhere else commits, as leaving a field does in Blender.
    bool outside = ImGui::IsMouseClicked(0) &&
                   !ImGui::IsWindowHovered(ImGuiHoveredFlags_AllowWhenBlockedByActiveItem) &&
                   ImGui::GetFrameCount() > inline_opened_frame_ + 1;
    commit |= outside;
  }
  ImGui::End();
  ImGui::PopFont();
  ImGui::PopStyleVar(2);
  if (cancel)
    inline_pin_ = PinRef{};
  else if (commit)
    commit_inline(doc);
}

void NodeCanvas::new_function(EditorDocument& doc) {
  std::string name;
  for (int i = 1; name.empty() || doc.doc().function(name) || doc.doc().kernel(name); ++i)
    name = "function" + std::to_string(i);
  EditResult r = create_function(doc, name, {{"x", "f32"}}, {{"y", "f32"}});
  if (!r.ok) {
    status_ = r.message;
    return;
  }
  enter_function(name);
  status_ = "new function " + name + " (rename it from the canvas menu)";
}

void NodeCanvas::draw_function_renamer(EditorDocument& doc) {
  if (!renaming_function_) return;
  if (!graph().function) {
    renaming_function_ = false;
    return;
  }
  std::vector<Rect> crumbs = crumb_rects();
  ImGui::SetNextWindowPos(ImVec2(crumbs.back().x0, crumbs.back().y1 + 4));
  ImGui::SetNextWindowSize(ImVec2(260, 0));
  if (edit_focus_) ImGui::SetNextWindowFocus();
  if (fonts_ && fonts_->ui()) ImGui::PushFont(fonts_->ui());
  if (ImGui::Begin("##loom_function_name", nullptr,
                   ImGuiWindowFlags_NoTitleBar | ImGuiWindowFlags_NoResize |
                       ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoSavedSettings)) {
    ImGui::TextUnformatted("Function name");
    if (edit_focus_) {
      ImGui::SetKeyboardFocusHere();
      edit_focus_ = false;
    }
    ImGui::SetNextItemWidth(-1);
    if (ImGui::InputText("##name", &function_name_, ImGuiInputTextFlags_EnterReturnsTrue)) {
      std::string from = graph().name;
      EditResult r = rename_function(doc, from, function_name_);
      if (r.ok) {
        for (GraphRef& g : crumbs_)
          if (g == GraphRef{from, true}) g.name = function_name_;
        renaming_function_ = false;
      }
      status_ = r.ok ? "renamed to " + function_name_ : r.message;
    }
    if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape))) renaming_function_ = false;
  }
  ImGui::End();
  if (fonts_ && fonts_->ui()) ImGui::PopFont();
}

}  // namespace loom::editor
