// The primitive commands every editor operation is made of. Each changes one place of the
// document and remembers what was there (and at which index), so reverting restores the
// exact order of nodes, inputs, parameters and positions. Built from the document's current
// state; a command whose place has gone (a bug elsewhere) does nothing rather than crash.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "compiler/graph/document.h"
#include "editor/model/command.h"
#include "editor/model/graph_ref.h"

namespace loom::editor {

// Inserts `node` at `index` of a region (clamped to its size; the region is created when the
// region node lacks it).
std::unique_ptr<Command> insert_node(const GraphRef& g, const RegionRef& r, size_t index,
                                     graph::Node node);
// Removes node `id` (and everything nested in it). nullptr when there is no such node.
std::unique_ptr<Command> erase_node(const graph::Document& doc, const GraphRef& g, int id);
// Sets (or with nullopt removes) one input of a node: a link or a literal.
std::unique_ptr<Command> set_input(const graph::Document& doc, const GraphRef& g, int node,
                                   const std::string& pin, std::optional<graph::Input> value);
// Sets (or removes) one parameter of a node.
std::unique_ptr<Command> set_param(const graph::Document& doc, const GraphRef& g, int node,
                                   const std::string& name, std::optional<graph::Literal> value);
// Sets (or removes) a node's position; creates the graph's layout entry when needed.
std::unique_ptr<Command> set_position(const graph::Document& doc, const std::string& graph,
                                      int node, std::optional<Vec2> value);
// Collapses (draws as its title bar only) or expands a node; layout only, kept in the graph's
// layout entry (created when needed). nullptr when the node is already so.
std::unique_ptr<Command> set_collapsed(const graph::Document& doc, const std::string& graph,
                                       int node, bool collapsed);

// Moves existing positions and replaces comment frames (moved, resized, retitled,
// recoloured); consecutive changes of the same things merge into one, so a drag is one undo
// step. Layout only. Positions the graph lacks are skipped: give them one first.
struct LayoutChange {
  std::string graph;
  std::vector<std::pair<int, Vec2>> nodes;                       // node id -> new position
  std::vector<std::pair<size_t, graph::CommentFrame>> comments;  // comment index -> new frame
};
std::unique_ptr<Command> change_layout(const graph::Document& doc, const LayoutChange& change);

// Inserts or removes comment frame `index` of a graph's layout (creating the layout entry).
std::unique_ptr<Command> insert_comment(const std::string& graph, size_t index,
                                        graph::CommentFrame frame);
std::unique_ptr<Command> erase_comment(const graph::Document& doc, const std::string& graph,
                                       size_t index);

// The whole document replaced by `next` (a panel's edit, a change on disk): one command,
// holding both versions.
std::unique_ptr<Command> swap_document(const graph::Document& current, graph::Document next);

// Functions (sub-graphs): insert at `index`, erase by name, rename the declaration (callers
// and layout are separate edits), set its ports.
std::unique_ptr<Command> insert_function(size_t index, graph::FunctionDecl f);
std::unique_ptr<Command> erase_function(const graph::Document& doc, const std::string& name);
std::unique_ptr<Command> rename_function(const std::string& from, const std::string& to);
std::unique_ptr<Command> rename_layout(const std::string& from, const std::string& to);
// Removes the layout entry of `graph` (positions and comments). nullptr when there is none.
std::unique_ptr<Command> erase_layout(const graph::Document& doc, const std::string& graph);
std::unique_ptr<Command> set_function_ports(const graph::Document& doc, const std::string& name,
                                            std::vector<graph::FunctionPort> inputs,
                                            std::vector<graph::FunctionPort> outputs);

}  // namespace loom::editor
