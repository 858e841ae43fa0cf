// The document reader's JSON tree lives in runtime/common (AOT module metadata uses it too).
#pragma once

#include "runtime/common/json_value.h"

namespace loom::graph {
using loom::json_quote;
using loom::JsonValue;
using loom::parse_json;
}  // namespace loom::graph
