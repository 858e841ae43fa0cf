// The editor's panels around the canvas and the viewport (the program panel is
// program_panel.h): parameters and argpack values (edited live), generated code for
// the selected kernel, the log. Each draws one ImGui window from the live session; edits to
// the document go through `edit` (the canvas model makes them undoable), a click on a log
// entry through `focus`.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "compiler/graph/document.h"
#include "editor/app/control_rect.h"
#include "editor/app/live_session.h"

namespace loom::editor {

struct PanelState {
  std::string selected_kernel;
  int code_kind = 0;     // 0: IR, 1: SPIR-V, 2: LLVM IR
  std::string ir_pass;   // "" the final IR; else a name of Program::pass_names()
  std::string code_key;  // what `code` was made for
  std::string code;
  bool log_errors_only = false;
  // The document being edited, when it is not the running one (an edit that does not
  // compile yet): launch values are edited in it. Null: the session's.
  const graph::Document* document = nullptr;
  std::function<void(graph::Document)> edit;  // replace the document (one undo step)
  // Around a value being dragged: its edits are one undo step.
  std::function<void(const std::string& label)> begin_edit;
  std::function<void()> end_edit;
  int window_flags = 0;  // ImGuiWindowFlags of every panel's window (the app tiles them)
  std::function<void(const Place&)> focus;  // show a node on the canvas
  // The graph the canvas shows (highlighted in the program panel), and how to show another.
  std::string shown_graph;
  bool shown_function = false;
  std::function<void(const std::string& name, bool function)> show_graph;
  // Where the program panel drew its entries ("kernel.<name>", "function.<name>").
  std::map<std::string, ControlRect> controls;
};

void draw_parameters_panel(LiveSession& session, PanelState& state);
void draw_code_panel(LiveSession& session, PanelState& state);
void draw_log_panel(LiveSession& session, PanelState& state);

// ---- the logic behind them, testable without a UI

// The numbers of a literal (a number, a bool as 0 or 1, a list or a list of columns),
// flattened in order: column-major for a matrix given as its columns.
std::vector<double> literal_components(const graph::Literal& l);

// A value a pipeline launch passes to a kernel parameter: what the parameters panel edits.
struct LaunchValue {
  std::string pipeline;
  size_t launch = 0;
  std::string kernel;
  std::string param;
  ValueType type;
  std::vector<double> components;  // column-major
};
std::vector<LaunchValue> launch_values(const graph::Document& doc);
// The document with one launch value changed (components column-major).
graph::Document with_launch_value(const graph::Document& doc, const LaunchValue& value);

// A value member of an argpack instance: a path ("material.tint") and its type.
struct MemberValue {
  std::string pack;
  std::string path;
  ValueType type;
};
std::vector<MemberValue> argpack_values(const graph::Document& doc);

// The template arguments of the first launch of `kernel` in any pipeline (the code view
// shows that instantiation), empty when no pipeline launches it.
Args first_launch_args(const graph::Document& doc, const std::string& kernel);

}  // namespace loom::editor
