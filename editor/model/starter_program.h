// The program File › New starts from: small, valid and running, with every part a program
// has, so a new user edits rather than assembles: a 2-d field `u`, an `init` kernel filling
// it with a pattern, a `step` kernel scaling it by the parameter `decay`, the `init` and
// `step` pipelines launching them, and a view of `u` as an image.
#pragma once

#include "compiler/graph/document.h"

namespace loom::editor {

graph::Document starter_program();

}  // namespace loom::editor
