// Upgrades of older graph documents, applied to the JSON tree before it is read.
//
// Format version 1 (before 2026-11): the fields section was called "globals", links were
// objects {"node": 3, "pin": "out"}, and the interpolation node was "lerp" with pins
// "from", "to", "t" (now "mix" with "a", "b", "t"). Node types carry their own versions;
// kNodeUpgrades lists the per-node-type upgrades.
#pragma once

#include <string>

#include "compiler/graph/json_value.h"

namespace loom::graph {

// Rewrites `root` to the current format version in place; throws loom::Error (naming
// `path`) for a version newer than this build understands.
void migrate_document(JsonValue& root, const std::string& path);

}  // namespace loom::graph
