// A generated graph document for the editor's scale benchmarks: `n` nodes in columns,
// constants first, then arithmetic reading one or two nodes of the column before (a typical
// dataflow fan), a tenth of them inside a loop body, and a comment frame per 100 nodes; one
// kernel named "big", laid out.
#pragma once

#include <string>

namespace loom::bench {

std::string big_graph(int n);

}  // namespace loom::bench
