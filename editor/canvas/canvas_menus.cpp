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
#include "editor/model/operations.h"

namespace loom::editor {

namespace {

constexpr const char* kMenu = "##loom_canvas_menu";

struct Swatch {
  const char* name;
  const char* hex;
};
constexpr Swatch kSwatches[] = {{"Blue", "#3a6ea5"}, {"Green", "#3f8f4f"}, {"Red", "#a53a3a"},
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
    if (menu_->hit.kind == Hit::Kind::Node || menu_->hit.kind == Hit::Kind::Zone) {
      int id = geo_.nodes()[static_cast<size_t>(menu_->hit.node)].id;
      if (!doc.selection().has(id)) select_only(doc, {id});
    } else if (menu_->hit.kind == Hit::Kind::Comment || menu_->hit.kind == Hit::Kind::CommentResize) {
      if (!doc.selection().has_comment(static_cast<size_t>(menu_->hit.comment)))
        select_only(doc, {}, {static_cast<size_t>(menu_->hit.comment)});
    }
  }
  if (fonts_ && fonts_->ui()) ImGui::PushFont(fonts_->ui());
  if (menu_ && ImGui::BeginPopup(kMenu)) {
    const Hit& hit = menu_->hit;
    Vec2 at = menu_->at;
    const Selection& sel = doc.selection();
    switch (hit.kind) {
      case Hit::Kind::Node:
      case Hit::Kind::Zone:
      case Hit::Kind::Pin: {
        const NodeGeom& n = geo_.nodes()[static_cast<size_t>(hit.node)];
        ImGui::TextDisabled("%s #%d", n.type.c_str(), n.id);
        ImGui::Separator();
        if (n.type == "call") {
          const graph::Node* node = find_node(doc.doc(), graph(), n.id);
          const graph::Literal* f = node ? node->param("function") : nullptr;
          if (ImGui::MenuItem("Enter function", "Enter", false, f && doc.doc().function(f->s))) enter_function(f->s);
        }
        if (ImGui::MenuItem("Copy", "Ctrl+C")) copy_selection(doc);
        if (ImGui::MenuItem("Duplicate", "Ctrl+D")) duplicate_nodes(doc, graph(), sel.nodes, Vec2{30, 30});
        if (ImGui::MenuItem("Delete", "Del")) delete_selection(doc);
        if (ImGui::MenuItem("Comment around", "C")) comment_around_selection(doc);
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
          RegionRef outer = n.parent >= 0 ? geo_.nodes()[static_cast<size_t>(n.parent)].region : RegionRef{};
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
          EditResult r = add_comment(doc, graph(), graph::CommentFrame{"Comment", std::round(at.x), std::round(at.y), 300, 180, ""});
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
  ImGuiWindowFlags flags = ImGuiWindowFlags_NoTitleBar | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoMove |
                           ImGuiWindowFlags_NoSavedSettings;
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
      if (renamed.title != f.title) set_comment(doc, graph(), static_cast<size_t>(comment_editing_), renamed);
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
  ImGui::SetNextWindowPos(ImVec2(view_.origin.x + size_.x * 0.5f, view_.origin.y + size_.y * 0.5f), ImGuiCond_Appearing,
                          ImVec2(0.5f, 0.5f));
  if (fonts_ && fonts_->ui()) ImGui::PushFont(fonts_->ui());
  // It does not take the keyboard from the canvas; when clicked, its own keys close it.
  if (ImGui::Begin("Canvas shortcuts", &help_open_,
                   ImGuiWindowFlags_AlwaysAutoResize | ImGuiWindowFlags_NoCollapse | ImGuiWindowFlags_NoSavedSettings |
                       ImGuiWindowFlags_NoFocusOnAppearing)) {
    if (ImGui::IsWindowFocused() && (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape), false) ||
                                     ImGui::IsKeyPressed(options_.keys.f1, false)))
      help_open_ = false;
    if (ImGui::BeginTable("##shortcuts", 2, ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV)) {
      for (const Shortcut& s : canvas_shortcuts()) {
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(s.keys);
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(s.action);
      }
      ImGui::EndTable();
    }
    ImGui::TextDisabled("Pins: circle float/int, diamond bool, square vector, crossed square matrix,");
    ImGui::TextDisabled("ring array/texture, triangle variable; filled when linked. F1 or ? closes.");
  }
  ImGui::End();
  if (fonts_ && fonts_->ui()) ImGui::PopFont();
}

}  // namespace loom::editor
