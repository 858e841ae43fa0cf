// Passes that rebuild a block in order (so splicing a branch in its place stays linear) keep
// the instructions still to visit on a stack, the next one last.
#pragma once

#include <memory>
#include <vector>

#include "compiler/ir/inst.h"

namespace loom::ir {

// Moves every instruction of `block` onto `todo` so that its first is popped next; `block` is
// left empty.
inline void push_in_visit_order(Block& block, std::vector<std::unique_ptr<Inst>>& todo) {
  todo.reserve(todo.size() + block.insts.size());
  for (auto it = block.insts.rbegin(); it != block.insts.rend(); ++it)
    todo.push_back(std::move(*it));
  block.insts.clear();
}

}  // namespace loom::ir
