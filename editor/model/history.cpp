#include "editor/model/history.h"

namespace loom::editor {

void History::push(std::unique_ptr<CommandGroup> group) {
  redo_.clear();
  undo_.push_back(Step{std::move(group), next_serial_++});
  while (undo_.size() > limit_) {
    base_ = undo_.front().serial;
    undo_.pop_front();
  }
}

const CommandGroup* History::undo(graph::Document& doc) {
  if (undo_.empty()) return nullptr;
  Step step = std::move(undo_.back());
  undo_.pop_back();
  step.group->revert(doc);
  redo_.push_back(std::move(step));
  return redo_.back().group.get();
}

const CommandGroup* History::redo(graph::Document& doc) {
  if (redo_.empty()) return nullptr;
  Step step = std::move(redo_.back());
  redo_.pop_back();
  step.group->apply(doc);
  undo_.push_back(std::move(step));
  return undo_.back().group.get();
}

void History::clear() {
  undo_.clear();
  redo_.clear();
  base_ = next_serial_++;
}

}  // namespace loom::editor
