// An undoable change of a document. A command is built against the document as it is,
// applied once, and then reverted and re-applied any number of times by the history, always
// in stack order, so each one restores exactly what it changed (vector positions included:
// undo gives back the same bytes).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "compiler/graph/document.h"

namespace loom::editor {

class Command {
 public:
  virtual ~Command() = default;
  virtual void apply(graph::Document& doc) = 0;
  virtual void revert(graph::Document& doc) = 0;
  // Whether it changes the program (false: layout and comments only, nothing to recompile).
  virtual bool logic() const { return true; }
  // Folds `next` (already applied) into this command so that one revert undoes both; used
  // while dragging. False when the two are of different kinds or about different things.
  virtual bool merge(const Command& next) { return false; }
};

// Commands applied together and undone together, in reverse order.
class CommandGroup : public Command {
 public:
  explicit CommandGroup(std::string label) : label_(std::move(label)) {}
  void add(std::unique_ptr<Command> c) { commands_.push_back(std::move(c)); }
  bool empty() const { return commands_.empty(); }
  Command* last() { return commands_.empty() ? nullptr : commands_.back().get(); }
  const std::string& label() const { return label_; }

  void apply(graph::Document& doc) override {
    for (auto& c : commands_) c->apply(doc);
  }
  void revert(graph::Document& doc) override {
    for (auto it = commands_.rbegin(); it != commands_.rend(); ++it) (*it)->revert(doc);
  }
  bool logic() const override {
    for (const auto& c : commands_)
      if (c->logic()) return true;
    return false;
  }

 private:
  std::string label_;
  std::vector<std::unique_ptr<Command>> commands_;
};

}  // namespace loom::editor
