// Upgrades of older graph documents, applied to the JSON tree before it is read. Two kinds:
//
// - Format versions (the document's "version"): format 1 (before 2026-11) called the fields
//   section "globals", wrote links as objects {"node": 3, "pin": "out"}, and had the
//   interpolation node "lerp" with pins "from", "to", "t" (now "mix" with "a", "b", "t").
// - Node type versions (a node's own "version", 1 when absent): each node type's upgrades
//   are keyed by (type, version) and applied one version at a time until the node is at
//   the version node_library() gives its type. See docs/nodes.md, "Node versions".
#pragma once

#include <string>

#include "compiler/graph/json_value.h"

namespace loom::graph {

// Rewrites `root` to the current format version, and every node to its type's current
// version, in place. Throws loom::Error naming `path`, line and column for a format version
// that is not a number this build understands (newer, below 1, too large).
void migrate_document(JsonValue& root, const std::string& path);

}  // namespace loom::graph
