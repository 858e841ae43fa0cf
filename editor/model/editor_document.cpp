#include "editor/model/editor_document.h"

#include "compiler/graph/document_json.h"
#include "editor/model/graph_access.h"

namespace loom::editor {

EditorDocument::EditorDocument() { doc_.path = "<memory>"; }

EditorDocument::EditorDocument(graph::Document doc) : doc_(std::move(doc)) {
  saved_state_ = history_.state();
}

EditorDocument EditorDocument::from_text(std::string_view text, const std::string& path) {
  return EditorDocument(graph::load_document(text, path));
}

EditorDocument EditorDocument::from_file(const std::string& path) {
  return EditorDocument(graph::load_document_file(path));
}

void EditorDocument::replace(graph::Document doc) {
  doc_ = std::move(doc);
  open_.reset();
  group_depth_ = 0;
  history_.clear();
  saved_state_ = history_.state();
  selection_ = Selection{};
  diagnostics_.clear();
  notes_.clear();
  ++diagnostics_revision_;
  types_.clear();
  bump(true);
  notify(DocumentChange::Kind::Replace, true);
}

std::string EditorDocument::save_text() const { return graph::save_document(doc_); }

void EditorDocument::save_file(const std::string& path) {
  graph::save_document_file(doc_, path);
  mark_saved();
}

void EditorDocument::execute(std::unique_ptr<Command> c, const std::string& label) {
  if (!c) return;
  c->apply(doc_);
  bool logic = c->logic();
  if (open_) {
    Command* last = open_->last();
    if (!last || !last->merge(*c)) open_->add(std::move(c));
  } else {
    auto group = std::make_unique<CommandGroup>(label);
    group->add(std::move(c));
    history_.push(std::move(group));
  }
  bump(logic);
  if (!open_) notify(DocumentChange::Kind::Edit, logic);  // groups notify once, at their end
}

void EditorDocument::begin_group(const std::string& label) {
  if (group_depth_++ == 0) open_ = std::make_unique<CommandGroup>(label);
}

void EditorDocument::end_group() {
  if (group_depth_ == 0) return;
  if (--group_depth_ > 0) return;
  std::unique_ptr<CommandGroup> group = std::move(open_);
  if (!group || group->empty()) return;
  bool logic = group->logic();
  history_.push(std::move(group));
  notify(DocumentChange::Kind::Edit, logic);
}

bool EditorDocument::undo() {
  // An action still in progress (a drag) is finished first, then undone as a whole.
  while (group_depth_ > 0) end_group();
  const CommandGroup* g = history_.undo(doc_);
  if (!g) return false;
  prune_selection();
  bump(g->logic());
  notify(DocumentChange::Kind::Undo, g->logic());
  return true;
}

bool EditorDocument::redo() {
  if (group_depth_ > 0) return false;
  const CommandGroup* g = history_.redo(doc_);
  if (!g) return false;
  prune_selection();
  bump(g->logic());
  notify(DocumentChange::Kind::Redo, g->logic());
  return true;
}

void EditorDocument::set_selection(Selection s) {
  if (s == selection_) return;
  selection_ = std::move(s);
  DocumentChange change{DocumentChange::Kind::Selection, revision_, false};
  for (auto& [id, fn] : listeners_) fn(change);
}

int EditorDocument::subscribe(Listener listener) {
  listeners_.emplace_back(next_listener_, std::move(listener));
  return next_listener_++;
}

void EditorDocument::unsubscribe(int id) {
  std::erase_if(listeners_, [&](const auto& l) { return l.first == id; });
}

void EditorDocument::set_notes(std::vector<Diagnostic> notes) {
  if (notes == notes_) return;
  notes_ = std::move(notes);
  ++diagnostics_revision_;
}

void EditorDocument::set_diagnostics(std::vector<Diagnostic> d) {
  if (d == diagnostics_) return;
  diagnostics_ = std::move(d);
  ++diagnostics_revision_;
}

const graph::GraphTypes& EditorDocument::types(const GraphRef& g) const {
  TypesEntry& e = types_[{g.name, g.function}];
  if (e.logic_revision != logic_revision_ + 1) {  // +1: a fresh entry (0) is never current
    e.types = graph::infer_graph_types(doc_, g.name, g.function);
    e.logic_revision = logic_revision_ + 1;
  }
  return e.types;
}

void EditorDocument::bump(bool logic) {
  ++revision_;
  if (logic) ++logic_revision_;
}

void EditorDocument::notify(DocumentChange::Kind kind, bool logic) {
  DocumentChange change{kind, revision_, logic};
  // A copy: a listener may subscribe or unsubscribe.
  auto listeners = listeners_;
  for (auto& [id, fn] : listeners) fn(change);
}

void EditorDocument::prune_selection() {
  Selection s = selection_;
  std::erase_if(s.nodes, [&](int id) { return !find_node(doc_, s.graph, id); });
  const graph::GraphLayout* l = find_layout(doc_, s.graph.name);
  size_t comments = l ? l->comments.size() : 0;
  std::erase_if(s.comments, [&](size_t c) { return c >= comments; });
  set_selection(std::move(s));
}

}  // namespace loom::editor
