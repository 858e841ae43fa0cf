// The program panel (Unity's Blackboard, Unreal's parameters panel): everything a program
// declares, listed by section, each section with "+" to add one; an entry clicked is
// selected and shown in the inspector below the list (a kernel or function also on the
// canvas), where it is renamed, retyped, reshaped and reordered; right-click for the same
// menu; entries drag onto the canvas (a resource makes its load or store, a function its
// call). Every change is one undoable edit of editor/model/declarations.h; a refused one
// leaves the document as it was and shows why under the inspector.
#pragma once

#include <imgui.h>

#include <string>

#include "editor/app/panels.h"
#include "editor/model/declarations.h"
#include "editor/model/editor_document.h"

namespace loom::editor {

// The payload type of a declaration dragged out of the panel: "<kind>:<name>" text with
// kind "field", "ndarray", "texture", "argpack" or "function".
inline constexpr const char* kDeclarationPayload = "LOOM_DECL";

class ProgramPanel {
 public:
  // Draws the panel window (flags and the canvas hooks come from `state`).
  void draw(EditorDocument& doc, LiveSession& session, PanelState& state);

  // What the inspector shows.
  struct Selected {
    DeclKind kind = DeclKind::Kernel;
    std::string name;  // "" none; the view when `view`
    bool view = false;
  };
  const Selected& selected() const { return selected_; }
  void select(DeclKind kind, const std::string& name) { selected_ = Selected{kind, name, false}; }
  void select_view() { selected_ = Selected{DeclKind::Kernel, "", true}; }
  // The last refused edit's reason ("" after a good one).
  const std::string& error() const { return error_; }

 private:
  void list(EditorDocument& doc, PanelState& state);
  void section(EditorDocument& doc, PanelState& state, const char* title, DeclKind add_kind,
               const std::vector<std::pair<DeclKind, std::string>>& entries,
               const std::vector<std::string>& details);
  void inspector(EditorDocument& doc, PanelState& state);
  void inspect_field(EditorDocument& doc, PanelState& state);
  void inspect_ndarray(EditorDocument& doc, PanelState& state);
  bool derivative_rows(PanelState& state, bool is_float_type, bool* needs_grad, bool* needs_dual);
  void inspect_texture(EditorDocument& doc, PanelState& state);
  void inspect_argpack_type(EditorDocument& doc, PanelState& state);
  void inspect_argpack(EditorDocument& doc, PanelState& state);
  void inspect_kernel(EditorDocument& doc, PanelState& state);
  void inspect_function(EditorDocument& doc, PanelState& state);
  void inspect_pipeline(EditorDocument& doc, PanelState& state);
  void inspect_view(EditorDocument& doc, PanelState& state);
  bool name_row(EditorDocument& doc, PanelState& state);
  // A text field showing `value` that gives the typed text once, when Enter is pressed or
  // the field is left after a change.
  bool text_field(PanelState& state, const char* id, const std::string& value, std::string* out,
                  float width = -1);
  void apply(const EditResult& r);

  Selected selected_;
  std::string error_;
  std::string note_;
  bool open_[5] = {true, true, true, true, true};  // Data, Kernels, Functions, Pipelines, View
  ImGuiID text_id_ = 0;                            // the text field being typed in
  std::string text_;
};

}  // namespace loom::editor
