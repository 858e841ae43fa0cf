// Undo and redo stacks of command groups. Each group is one user action (a drag, a paste,
// a connect); a group is reverted as a whole. Every pushed group gets a serial number so
// the document can tell whether it is back at the state it was saved in.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>

#include "editor/model/command.h"

namespace loom::editor {

class History {
 public:
  explicit History(size_t limit = 1000) : limit_(limit) {}

  // `group` is already applied. Clears the redo stack; drops the oldest step past the limit.
  void push(std::unique_ptr<CommandGroup> group);
  // Reverts / re-applies the last step; nullptr when there is none. The returned group stays
  // owned by the history.
  const CommandGroup* undo(graph::Document& doc);
  const CommandGroup* redo(graph::Document& doc);

  bool can_undo() const { return !undo_.empty(); }
  bool can_redo() const { return !redo_.empty(); }
  std::string undo_label() const { return undo_.empty() ? "" : undo_.back().group->label(); }
  std::string redo_label() const { return redo_.empty() ? "" : redo_.back().group->label(); }
  size_t undo_depth() const { return undo_.size(); }
  // The serial of the step on top of the undo stack (0 at the beginning of history).
  uint64_t state() const { return undo_.empty() ? base_ : undo_.back().serial; }
  void clear();

 private:
  struct Step {
    std::unique_ptr<CommandGroup> group;
    uint64_t serial;
  };
  size_t limit_;
  std::deque<Step> undo_, redo_;
  uint64_t next_serial_ = 1;
  uint64_t base_ = 0;  // state() with an empty undo stack (moves when old steps are dropped)
};

}  // namespace loom::editor
