// Likely mistakes of code ported from Taichi, found in a kernel's IR as lowering left it
// (before the optimiser folds them away), for `loom check` and the editor to show on the node.
// docs/porting-from-taichi.md lists the semantics that differ; this finds the ones the IR
// shows.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace loom::ir {
class Kernel;
}

namespace loom::passes {

struct PortingWarning {
  int32_t node = -1;  // the graph node that does the suspicious thing
  std::string message;
};

// One warning per node and kind of mistake, in node order:
// - an integer division whose quotient goes straight into a float (a cast, a float operand,
//   a float variable): Taichi's `/` is true division, Loom's truncates integers (`7 / 2` is
//   3, so it becomes 3.0, not 3.5). A quotient kept in integer math first (stored in an
//   integer variable, scaled, used as an index) is taken as meant.
// - a store, in a top-level range_for or struct_for, to an element every iteration writes
//   (its indices do not change in the loop: a 0-d field, x[0]) of a value computed from a
//   load of the same resource: Taichi's `g[None] += v` is atomic, Loom's load, add and store
//   race between threads (atomic_add is meant).
std::vector<PortingWarning> porting_warnings(const ir::Kernel& kernel);

}  // namespace loom::passes
