// Formulas of expression nodes (one line of text in a document): parse, list the inputs,
// shorten for messages. Deep nesting must be refused, never overflow the stack.
#include <string>

#include "compiler/graph/expression.h"
#include "runtime/common/error.h"
#include "tests/fuzz/fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace loom;
  std::string text(reinterpret_cast<const char*>(data), size);
  graph::formula_excerpt(text);
  try {
    std::unique_ptr<graph::Expr> expr = graph::parse_expression(text);
    graph::expression_inputs(*expr);
  } catch (const Error&) {
  }
  return 0;
}
