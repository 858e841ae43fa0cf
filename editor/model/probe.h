// A probe: the value one output pin carries, for every thread of its kernel's parallel loop,
// made into a field the viewport and the spreadsheet can show (Blender's viewer node,
// Houdini's middle-click on a wire). The plan is a document: the program plus a probe field
// shaped like the loop's iteration space, a copy of the kernel that stores the pin's value
// there at the loop's indices, and a pipeline launching it with the kernel's arguments.
//
// The copy writes nothing else: its stores are removed and its atomics read (an atomic's
// result is the value before it, which a load gives), so running it after a frame shows the
// value each thread would compute from the fields as they are, and changes no state. A value
// inside a serial loop shows its last iteration; one inside an `if` branch only where taken.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "compiler/graph/document.h"
#include "editor/model/graph_ref.h"

namespace loom::editor {

inline constexpr const char* kProbeField = "__probe";
inline constexpr const char* kProbePipeline = "__probe";

struct ProbePlan {
  graph::Document document;    // the program with the probe field, kernel and pipeline
  std::string kernel;          // "__probe_<kernel>"
  ValueType type;              // of the probe field (a bool pin is stored as i32)
  std::vector<int64_t> shape;  // the parallel loop's extents; [1] outside any loop
};

// The plan for output `pin` of a node of kernel `kernel`; nullopt with `*why` when there is
// none (a function's node, a pin that is no value, loop bounds that are not numbers...).
std::optional<ProbePlan> plan_probe(const graph::Document& doc, const std::string& kernel,
                                    const PinRef& pin, std::string* why);

}  // namespace loom::editor
