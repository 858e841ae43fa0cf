// The graph document: the one front end of Loom. A document is JSON text (see
// docs/graph-format.md); this is its in-memory form, which the editor edits and the
// lowering reads. Order of everything is kept as written so load -> save is byte-identical.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "compiler/graph/literal.h"
#include "compiler/graph/view_settings.h"
#include "runtime/common/argpack_layout.h"
#include "runtime/common/kernel_abi.h"
#include "runtime/common/scalar.h"

namespace loom::graph {

constexpr int kFormatVersion = 2;

// One input pin of a node: either linked to another node's output pin, or a literal.
struct Input {
  std::string pin;
  bool linked = false;
  int from_node = -1;    // linked: source node id
  std::string from_pin;  // linked: source output pin ("out" when omitted in text)
  Literal literal;       // not linked: the constant value
};

struct Node;

// A nested block of a region node ("body" of a loop, "then"/"else" of an if).
struct Region {
  std::string name;
  std::vector<Node> nodes;
};

// Within a region, effectful nodes (stores, atomics, variable writes, regions, break) run
// in the order they are listed; pure nodes are evaluated where their results are needed.
struct Node {
  int id = -1;       // unique inside its kernel or function, across nested regions
  std::string type;  // node type name from the node library, e.g. "add", "range_for"
  int version = 1;   // per node type; older versions are upgraded on load
  std::vector<Input> inputs;
  std::vector<std::pair<std::string, Literal>> params;
  std::vector<Region> regions;

  const Literal* param(const std::string& name) const;
  const Input* input(const std::string& pin) const;
};

enum class ParamKind : uint8_t { Value, Ndarray, Texture, Argpack, Template };

struct KernelParam {
  std::string name;
  ParamKind kind = ParamKind::Value;
  std::string type;  // Value: value type ("f32x3"); Ndarray: element type; Argpack: type name
  int ndim = 0;      // Ndarray / Texture
};

struct KernelDecl {
  std::string name;
  std::vector<KernelParam> params;
  std::vector<std::string> returns;  // value types
  int workgroup_size = 0;            // GPU invocations per workgroup; 0: the program's option
  // Fields or ndarray parameters to stage in GPU workgroup memory (Taichi's ti.block_local);
  // CPU code ignores it.
  std::vector<std::string> block_local;
  std::vector<Node> nodes;
};

struct FunctionPort {
  std::string name;
  std::string type;  // value type
};

// A sub-graph reused across kernels; inlined at every call node.
struct FunctionDecl {
  std::string name;
  std::vector<FunctionPort> inputs;
  std::vector<FunctionPort> outputs;
  std::vector<Node> nodes;
};

struct NdarrayDecl {
  std::string name;
  ValueType elem;
  std::vector<int64_t> shape;
  bool needs_grad = false;  // the program also holds the ndarray NAME.grad (FieldDesc's)
  bool needs_dual = false;  // and NAME.dual
};

struct TextureDecl {
  std::string name;
  std::vector<int64_t> size;  // 2 or 3 extents
  TextureFormat format = TextureFormat::RGBA32F;
};

// An argpack instance of the program with its initial member values (dotted paths).
struct ArgpackDecl {
  std::string name;
  std::string type;
  std::vector<std::pair<std::string, Literal>> values;
};

// One launch of a pipeline: kernel arguments by parameter name. A string literal names a
// program resource (field, ndarray, texture, argpack); numbers and lists are values.
struct Launch {
  std::string kernel;
  std::vector<std::pair<std::string, Literal>> args;
};

struct Pipeline {
  std::string name;  // at least "init" and "step" for `loom run`
  std::vector<Launch> launches;
};

// Editor-only placement, kept apart from logic so moving a node never changes the program.
struct NodePosition {
  int node = -1;
  float x = 0, y = 0;
};
// A titled, coloured rectangle behind nodes (the editor moves the nodes inside with it).
// Layout only: comments never change a kernel's content key.
struct CommentFrame {
  std::string title;
  float x = 0, y = 0, w = 0, h = 0;  // w and h are positive
  std::string color;                 // "#rrggbb" as written, or "" (the editor's default)
};
struct GraphLayout {
  std::string graph;  // kernel or function name
  std::vector<NodePosition> positions;
  std::vector<CommentFrame> comments;
  std::vector<int> collapsed;  // nodes drawn as their title bar only; ascending, no repeats
};

// What is wrong with the shape of an array of `elem` elements ("" when nothing): extents
// must be 1 to 2147483647 (kernels index with i32) and the whole array must fit in 2^63
// bytes. `elem_bytes` is the size of one element.
std::string shape_problem(const std::vector<int64_t>& shape, int64_t elem_bytes);

struct Document;

// Every node id of each kernel and function (nested regions included), by graph name: what
// has_graph and graph_has_node answer one at a time, for checks of many nodes (the positions
// of a layout) in time linear in the document.
using GraphNodeIds = std::unordered_map<std::string, std::unordered_set<int>>;
GraphNodeIds graph_node_ids(const Document& doc);

struct Document {
  std::string path;  // where it was loaded from ("<memory>" otherwise); not saved
  int version = kFormatVersion;
  std::string name;
  std::vector<FieldDesc> fields;
  std::vector<NdarrayDecl> ndarrays;
  std::vector<TextureDecl> textures;
  std::vector<ArgpackType> argpack_types;  // laid out by layout_argpack_types after load
  std::vector<ArgpackDecl> argpacks;
  std::vector<FunctionDecl> functions;
  std::vector<KernelDecl> kernels;
  std::vector<Pipeline> pipelines;
  std::vector<GraphLayout> layout;
  ViewSettings view;  // the editor's viewport; editor-only like layout

  const KernelDecl* kernel(const std::string& name) const;
  const FunctionDecl* function(const std::string& name) const;
  const FieldDesc* field(const std::string& name) const;
  // The field a node or launch names: a declared field, or NAME.grad / NAME.dual of a field
  // that needs_grad / needs_dual (the same type and shape; docs/autodiff.md). Null otherwise.
  const FieldDesc* field_or_derivative(const std::string& name) const;
  const NdarrayDecl* ndarray(const std::string& name) const;
  const TextureDecl* texture(const std::string& name) const;
  const ArgpackDecl* argpack(const std::string& name) const;
  int argpack_type(const std::string& name) const;  // -1 when absent
  const Pipeline* pipeline(const std::string& name) const;
  // Layout consistency: a kernel or function of that name exists / has that node (in any
  // region). Layout entries for anything else are errors (see docs/graph-format.md).
  bool has_graph(const std::string& name) const;
  bool graph_has_node(const std::string& graph, int node) const;
};

}  // namespace loom::graph
