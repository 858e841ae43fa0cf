// The edits a user makes, each one undo step of an EditorDocument (a group of the primitive
// commands of edits.h). Bad requests (a missing node, a refused link, a taken name) change
// nothing and say why in the result; they never throw.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "compiler/graph/document.h"
#include "editor/model/editor_document.h"
#include "editor/model/graph_ref.h"

namespace loom::editor {

struct EditResult {
  bool ok = true;
  std::string message;     // why not (or a note on what happened)
  std::vector<int> nodes;  // nodes created (for add, paste, duplicate, reroute)

  static EditResult fail(std::string why) { return EditResult{false, std::move(why), {}}; }
};

using Params = std::vector<std::pair<std::string, graph::Literal>>;

// A new node of `type` at the end of `region`, at `at` (rounded to whole units).
EditResult add_node(EditorDocument& d, const GraphRef& g, const RegionRef& region,
                    const std::string& type, Vec2 at, const Params& params = {});
// Removes nodes (with what they hold), their positions and every link into them.
EditResult remove_nodes(EditorDocument& d, const GraphRef& g, const std::vector<int>& ids);

// Links output `from` to input `to` (replacing what `to` had) when check_link accepts it.
EditResult connect(EditorDocument& d, const GraphRef& g, const PinRef& from, const PinRef& to);
EditResult disconnect(EditorDocument& d, const GraphRef& g, const PinRef& to);
// A literal on an input pin (nullopt: nothing, the pin's default).
EditResult set_literal(EditorDocument& d, const GraphRef& g, const PinRef& to,
                       std::optional<graph::Literal> value);
EditResult set_param(EditorDocument& d, const GraphRef& g, int node, const std::string& name,
                     std::optional<graph::Literal> value);
// Splits the link into input `to` with a reroute node at `at` (in the user's region).
EditResult insert_reroute(EditorDocument& d, const GraphRef& g, const PinRef& to, Vec2 at);

// Positions: nodes without one get one (automatic layout positions made explicit).
EditResult place_nodes(EditorDocument& d, const GraphRef& g,
                       const std::vector<std::pair<int, Vec2>>& positions);

// Copies of `ids` offset by `offset`, each in its original's region; links among them are
// copied, links from other nodes into them are kept (the copies sit where the originals do).
EditResult duplicate_nodes(EditorDocument& d, const GraphRef& g, const std::vector<int>& ids,
                           Vec2 offset);
// Pastes clipboard text (clipboard.h) into `region` with fresh ids; the nodes' top-left goes
// to `at`, or 40 units right and down of where they were copied from (nodes that came
// without positions are put in a row at `at`, or left to the automatic layout). Functions
// they call that the document lacks are added.
EditResult paste_text(EditorDocument& d, const GraphRef& g, const RegionRef& region,
                      std::string_view text, std::optional<Vec2> at = std::nullopt);

// Ordered nodes run in list order: moves `id` `delta` places within its region.
EditResult reorder_node(EditorDocument& d, const GraphRef& g, int id, int delta);
// Moves nodes (with what they hold) to the end of another region of the same graph.
EditResult move_to_region(EditorDocument& d, const GraphRef& g, const std::vector<int>& ids,
                          const RegionRef& region);

// Comment frames (layout only). add_comment returns the new index in result.nodes[0].
EditResult add_comment(EditorDocument& d, const GraphRef& g, graph::CommentFrame frame);
EditResult remove_comments(EditorDocument& d, const GraphRef& g, std::vector<size_t> indices);
EditResult set_comment(EditorDocument& d, const GraphRef& g, size_t index,
                       graph::CommentFrame frame);
// Collapses (title bar only) or expands nodes: layout, one undo step; nodes already so are
// left as they are.
EditResult set_collapsed(EditorDocument& d, const GraphRef& g, const std::vector<int>& ids,
                         bool collapsed);

// The whole document replaced, as one undo step (the app's panels edit launch values and
// resources this way; a file changed on disk too). Nothing happens when it is the same.
EditResult replace_document(EditorDocument& d, graph::Document next,
                            const std::string& label = "Edit document");

// Functions (sub-graphs). A new function gets an input node per input port and an output
// node giving 0 on every output, so it is valid from the start.
EditResult create_function(EditorDocument& d, const std::string& name,
                           std::vector<graph::FunctionPort> inputs,
                           std::vector<graph::FunctionPort> outputs);
// Renames the function, its call nodes everywhere and its layout entry.
EditResult rename_function(EditorDocument& d, const std::string& from, const std::string& to);
// Refused while call nodes use it (the message names one).
EditResult delete_function(EditorDocument& d, const std::string& name);
EditResult set_function_ports(EditorDocument& d, const std::string& name,
                              std::vector<graph::FunctionPort> inputs,
                              std::vector<graph::FunctionPort> outputs);

}  // namespace loom::editor
