// Whether a link from an output pin to an input pin may be made, and why not: the live
// accept/reject feedback while a link is dragged. Structure is checked with validate's rules
// (pins, regions, order of ordered nodes, cycles); types with the real lowering, run on a
// copy of the document with the link made (infer.h): the link is refused when it brings a
// problem the graph did not have. On a document that is otherwise valid, a link is accepted
// exactly when graph::validate_document accepts the document with it.
#pragma once

#include <cstdint>
#include <string>

#include "compiler/graph/document.h"
#include "compiler/graph/infer.h"
#include "editor/model/graph_ref.h"

namespace loom::editor {

enum class LinkVerdict : uint8_t { Accept, Replace, Reject };

struct LinkCheck {
  LinkVerdict verdict = LinkVerdict::Reject;
  // Reject: why ("f32x3 cannot flow into 'i0': ...", "would make a cycle: 4 -> 2 -> 4");
  // otherwise what will flow, and what the link replaces.
  std::string reason;
  bool ok() const { return verdict != LinkVerdict::Reject; }
};

// `baseline`: the graph's types as it is (EditorDocument::types), computed when nullptr.
LinkCheck check_link(const graph::Document& doc, const GraphRef& g, const PinRef& from,
                     const PinRef& to, const graph::GraphTypes* baseline = nullptr);

// The structural part alone (no types): "" when the link is possible.
std::string link_structure_problem(const graph::Document& doc, const GraphRef& g,
                                   const PinRef& from, const PinRef& to);

}  // namespace loom::editor
