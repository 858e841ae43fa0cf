// Structural and semantic checks of a whole document, without changing it: node types,
// pins, links and their visibility, duplicate ids, cycles, parameters, types (by lowering
// every kernel), functions, pipelines and launch arguments. The first problem is thrown as
// a loom::Error whose Place names the document, kernel or function, node and pin.
#pragma once

#include <string>

#include "compiler/graph/document.h"

namespace loom::graph {

void validate_document(const Document& doc);

// What is wrong with `kernel`'s `block_local` list in `doc` ("" when nothing): every name is
// a field of the document or an ndarray parameter of the kernel, and none comes twice.
std::string block_local_problem(const Document& doc, const KernelDecl& kernel);

}  // namespace loom::graph
