// The document being edited: a graph::Document (the program itself; saving writes the
// canonical text, so an untouched document saves byte-identically), its undo history,
// revision counters, the selection, diagnostics and change notifications. Every change goes
// through execute() as a Command; operations.h builds the user-level edits from them.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "compiler/graph/document.h"
#include "compiler/graph/infer.h"
#include "editor/model/command.h"
#include "editor/model/diagnostics.h"
#include "editor/model/graph_ref.h"
#include "editor/model/history.h"
#include "editor/model/selection.h"

namespace loom::editor {

struct DocumentChange {
  enum class Kind : uint8_t { Edit, Undo, Redo, Replace, Selection };
  Kind kind = Kind::Edit;
  uint64_t revision = 0;
  bool logic = false;  // the program changed: recompile (false for layout, comments, selection)
};

class EditorDocument {
 public:
  EditorDocument();
  explicit EditorDocument(graph::Document doc);
  // Loads document text (graph::load_document); throws loom::Error naming the place.
  static EditorDocument from_text(std::string_view text, const std::string& path = "<memory>");
  static EditorDocument from_file(const std::string& path);
  EditorDocument(EditorDocument&&) = default;
  EditorDocument& operator=(EditorDocument&&) = default;

  const graph::Document& doc() const { return doc_; }
  // Starts over with another document: history, selection and diagnostics are cleared.
  void replace(graph::Document doc);
  std::string save_text() const;
  void save_file(const std::string& path);  // and mark_saved()
  bool dirty() const { return history_.state() != saved_state_; }
  void mark_saved() { saved_state_ = history_.state(); }

  // ---- changes. execute() applies `c` and records it: inside begin_group/end_group it joins
  // the open group (merging with the previous command when it can, as drags do), otherwise
  // it is one undo step of its own. A null command is ignored.
  void execute(std::unique_ptr<Command> c, const std::string& label = "");
  void begin_group(const std::string& label);
  void end_group();
  bool in_group() const { return group_depth_ > 0; }
  bool undo();
  bool redo();
  bool can_undo() const { return history_.can_undo() || (open_ && !open_->empty()); }
  bool can_redo() const { return history_.can_redo(); }
  std::string undo_label() const { return history_.undo_label(); }
  std::string redo_label() const { return history_.redo_label(); }
  // Any change at all (layout included) / changes of the program only. Never go back down:
  // an undo is a new revision too.
  uint64_t revision() const { return revision_; }
  uint64_t logic_revision() const { return logic_revision_; }

  // ---- selection (of the graph the canvas shows)
  const Selection& selection() const { return selection_; }
  void set_selection(Selection s);

  // ---- notifications: after every change outside a group, once at the end of a group (a
  // drag notifies when it ends; revision() counts every step meanwhile). Ids unsubscribe.
  using Listener = std::function<void(const DocumentChange&)>;
  int subscribe(Listener listener);
  void unsubscribe(int id);

  // ---- problems: the app's (compile and run errors) and the live ones of type inference.
  void set_diagnostics(std::vector<Diagnostic> d);
  const std::vector<Diagnostic>& diagnostics() const { return diagnostics_; }
  // What the compiler did with nodes, not problems (Severity::Note: how each loop runs), kept
  // apart so the problems stay what diagnostics() lists; diagnostics_revision() counts both.
  void set_notes(std::vector<Diagnostic> notes);
  const std::vector<Diagnostic>& notes() const { return notes_; }
  uint64_t diagnostics_revision() const { return diagnostics_revision_; }
  // Output types and node problems of one graph, recomputed once per logic revision.
  const graph::GraphTypes& types(const GraphRef& g) const;

 private:
  void bump(bool logic);
  void notify(DocumentChange::Kind kind, bool logic);
  void prune_selection();

  graph::Document doc_;
  History history_;
  std::unique_ptr<CommandGroup> open_;
  int group_depth_ = 0;
  uint64_t saved_state_ = 0;
  uint64_t revision_ = 0;
  uint64_t logic_revision_ = 0;
  Selection selection_;
  std::vector<Diagnostic> diagnostics_;
  std::vector<Diagnostic> notes_;
  uint64_t diagnostics_revision_ = 0;
  std::vector<std::pair<int, Listener>> listeners_;
  int next_listener_ = 1;
  struct TypesEntry {
    uint64_t logic_revision = 0;
    graph::GraphTypes types;
  };
  mutable std::map<std::pair<std::string, bool>, TypesEntry> types_;
};

}  // namespace loom::editor
