// Graph documents (*.loom.json) load through the compiler where it is installed: the `loom`
// command line, run as a child process (`loom compile DOC -o FILE --arch A`). The plugin
// itself links neither the compiler nor LLVM, and a compiler failure cannot take the host
// down. Found as $LOOM_COMPILER, else `loom` beside libloom.so, else on PATH.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace loom::capi {

bool is_graph_document(const std::string& path);
// The document compiled into module archive bytes for `arch` ("cpu" or "vulkan"). Throws
// ApiError: LOOM_ERROR_NOT_SUPPORTED when no compiler is installed, LOOM_ERROR_IO when the
// document cannot be read, LOOM_ERROR_INVALID_ARGUMENT with the compiler's message (naming
// the document and node) when it does not compile.
std::vector<uint8_t> compile_document(const std::string& path, const char* arch);

}  // namespace loom::capi
