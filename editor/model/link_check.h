// Whether a link from an output pin to an input pin may be made, and why not: the live
// accept/reject feedback while a link is dragged. Structure is checked with validate's rules
// (pins, regions, order of ordered nodes, cycles); types with the real lowering, run on a
// copy of the document with the link made (infer.h): the link is refused when it brings a
// problem the graph did not have. An ordered node listed after the node that would read it is
// accepted when running it just before that node breaks nothing (`run_before`). A memory
// node's indices link one at a time: an index link that leaves it short of indices (no
// shorter than before) makes it incomplete, not refused. On a document that is otherwise
// valid, a link is accepted exactly when graph::validate_document accepts the document with it
// (and the move, if any).
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
  // Accepted once the ordered node `from` runs earlier: connect moves it to just before this
  // node of its region, the first one that needs it (-1: no move).
  int run_before = -1;
  bool ok() const { return verdict != LinkVerdict::Reject; }
};

// `baseline`: the graph's types as it is (EditorDocument::types), computed when nullptr.
LinkCheck check_link(const graph::Document& doc, const GraphRef& g, const PinRef& from,
                     const PinRef& to, const graph::GraphTypes* baseline = nullptr);

// The structural part alone (no types): "" when the link is possible.
std::string link_structure_problem(const graph::Document& doc, const GraphRef& g,
                                   const PinRef& from, const PinRef& to);

// Where a new node reading output `from` goes when dropped outside every zone: beside the
// output's node, or inside the node's region for an output that exists only there (a loop
// index).
RegionRef reader_region(const graph::Document& doc, const GraphRef& g, const PinRef& from);

}  // namespace loom::editor
