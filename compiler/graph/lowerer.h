// Internals of the graph lowering, shared by lower.cpp (driver, scopes, links),
// lower_values.cpp (literals, conversions, parameters), lower_math.cpp (operations, vectors,
// formulas), lower_memory.cpp (fields, ndarrays, textures), lower_control.cpp (regions),
// lower_calls.cpp (function calls) and lower_arrays.cpp (local arrays, element). Not a public
// header: include lower.h.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "compiler/graph/document.h"
#include "compiler/graph/expression.h"
#include "compiler/graph/infer.h"
#include "compiler/graph/lower.h"
#include "compiler/graph/node_library.h"
#include "compiler/ir/builder.h"
#include "compiler/ir/inst.h"

namespace loom::graph::detail {

// Node instances that unrolling (nested unrolls multiply) may create in one kernel.
constexpr int64_t kMaxUnrolledNodes = int64_t{1} << 20;

using ir::Inst;
using ir::Op;

// A whole-number literal exactly as written: -2^63 .. 2^64-1.
struct IntLit {
  IntLit(int64_t v = 0, bool above = false) : value(v), above_int64(above) {}
  int64_t value;     // the number, or its bits when above_int64
  bool above_int64;  // 2^63 .. 2^64-1 (only u64 holds it)
  double as_double() const;
  std::string text() const;
  bool fits(Scalar s) const;  // exactly representable in s (floats: always; bool: any)
};

// A value flowing along a link. Vectors and matrices are kept as scalar components
// (column-major). Untyped literals are "weak": they take the type of what they meet.
struct Val {
  enum class Kind { Value, Ref, Resource, Texture };
  Kind kind = Kind::Value;
  ValueType type;
  std::vector<Inst*> c;      // Value: components; Ref: one alloca per component
  std::vector<double> lit;   // weak literal components (c is empty)
  std::vector<IntLit> ilit;  // the same, exactly, when they are whole numbers
  bool weak = false;
  int slot = -1;        // Resource / Texture
  bool member = false;  // read from an argpack member (read-only)
  int length = 0;       // Ref of a var with a length: a local array, c holds its local_array
  // A type as an argument (the `type` param of a cast node, `u8` in cast(x, u8)): only `type`
  // means anything.
  bool type_name = false;
};

using Outs = std::vector<std::pair<std::string, Val>>;
using Pins = std::vector<std::string>;

class Lowerer;
struct NodeType;

// How a node type lowers the current node (Lowerer::node_) to its output values.
using LowerNode = Outs (Lowerer::*)(const NodeType&);
// A pure operation's value from its argument values: a node's inputs in pin order, or the
// arguments of a formula call (whose pins all read "expr").
using ValueForm = Val (Lowerer::*)(const NodeType&, const std::vector<Val>&, const Pins&);

// A node type's entry in the node table (node_library.cpp): its spec and how it lowers.
struct NodeType {
  const NodeSpec* spec = nullptr;
  LowerNode lower = nullptr;
  // Formulas may call exactly the types that have a value form, by the type's name.
  ValueForm value = nullptr;
  ir::Op op{};             // the IR op, for value forms that several node types share
  bool any_arity = false;  // the value form takes any number of arguments (vec2..vec4)
  // The node's `type` param is the value form's last argument; a formula writes it as a type
  // name: cast(x, u8), vec3(1, 2, 3, f64).
  bool type_arg = false;
};

// nullptr when `name` is not a node type.
const NodeType* find_node_type(std::string_view name);

inline ValueType vt(Scalar s, int rows = 1, int cols = 1) {
  return ValueType{s, static_cast<uint8_t>(rows), static_cast<uint8_t>(cols)};
}

inline std::string tname(ValueType t) { return value_type_name(t); }

// One insertion point; scopes that emit into the same block share it.
struct Cursor {
  explicit Cursor(ir::Block* block) : b(block) {}
  ir::Builder b;
};

struct GraphInst;

struct IfState {
  struct Yield {
    std::string name;
    Val value;
    const Node* node;
  };
  std::vector<Yield> yields[2];                      // per branch, last yield of a name wins
  std::unordered_map<std::string, size_t> index[2];  // per branch: name -> its entry in yields
};

struct WhileState {
  std::vector<std::pair<std::string, Val>> vars;     // Ref values
  std::vector<std::pair<std::string, Val>> current;  // loaded at the top of the body
};

// The nodes of one region, as lowered into one IR block.
struct Scope {
  Scope* parent = nullptr;
  GraphInst* graph = nullptr;
  const std::vector<Node>* nodes = nullptr;
  std::unordered_map<int, size_t> index;
  Cursor* cursor = nullptr;
  const Node* owner = nullptr;  // region node whose block this is
  int branch = -1;              // if: 0 then, 1 else
  Inst* loop = nullptr;         // range_for / struct_for
  int loop_dims = 0;
  IfState* if_state = nullptr;
  WhileState* while_state = nullptr;
  Outs region_values;  // i0.., i (unroll)
  std::unordered_map<int, Outs> done;
};

// One instance of a graph: the kernel, or a function inlined at a call node.
struct GraphInst {
  std::string name;
  bool is_function = false;
  const FunctionDecl* fn = nullptr;
  Outs inputs;
  Outs outputs;
  int stamp = -1;                            // call node id stamped on inlined code
  std::unordered_map<int, const Node*> all;  // every node, any region
};

inline const Literal* find_param(const Node& n, const std::string& name) {
  for (const auto& [k, v] : n.params)
    if (k == name) return &v;
  return nullptr;
}

inline void collect_ids(const std::vector<Node>& nodes, std::unordered_map<int, const Node*>& out) {
  for (const Node& n : nodes) {
    out.emplace(n.id, &n);
    for (const Region& r : n.regions) collect_ids(r.nodes, out);
  }
}

inline const Region* find_region(const Node& n, const std::string& name) {
  for (const Region& r : n.regions)
    if (r.name == name) return &r;
  return nullptr;
}

// Functions by name (the last of a name wins); validation builds one for all its lowerings.
using FunctionIndex = std::unordered_map<std::string, const FunctionDecl*>;

// Limits of function calls (docs/graph-format.md, Functions). Hand-made graphs nest a few
// calls and inline hundreds of nodes; the limits stop hostile documents before they exhaust
// the stack (each nested call is a few recursive frames) or the time of the lowering.
constexpr int kMaxCallDepth = 64;
// 65,536: far beyond a hand-made graph, and small enough that a document reaching it fails
// in a fraction of a second even under AddressSanitizer (a million took 50 s there, past the
// fuzzers' time limit).
constexpr int64_t kMaxInlinedNodes = int64_t{1} << 16;

// "a -> b -> ... (n more) -> y -> z": a call chain quoted in a message of bounded length.
std::string call_chain_text(const std::vector<std::string>& names);

// Lowers one kernel (and the functions it calls). One instance per lower_kernel() call.
class Lowerer {
 public:
  // `as_function`: `kernel` is a scratch kernel calling one function (validation), so its
  // errors are the function's.
  Lowerer(const Document& doc, const KernelDecl& kernel, const TemplateArgs& targs,
          bool as_function = false)
      : doc_(doc),
        decl_(kernel),
        targs_(targs),
        types_(doc.argpack_types),
        as_function_(as_function) {}

  std::unique_ptr<ir::Kernel> run();

  // Tolerant mode (infer.h): the nodes of `graph` (a function when `function`) record their
  // output types and their own problems in `out` instead of stopping at the first error; a
  // node that fails is skipped, nodes using it are skipped silently, and a missing required
  // input counts as a problem and reads as a literal 0 so the node still gets a type.
  // Look functions up in `index` (which outlives this) instead of indexing them again.
  void use_function_index(const FunctionIndex* index) { function_index_ = index; }

  void record_into(GraphTypes* out, const std::string& graph, bool function) {
    record_ = out;
    record_graph_ = graph;
    record_function_ = function;
  }

 private:
  friend class NodeTable;  // names the lowering members below, one entry per node type

  // ---- lower.cpp: errors, ABI, scopes, links, dispatch
  [[noreturn]] void fail(int node, const std::string& pin, const std::string& msg) const;
  [[noreturn]] void fail_here(const std::string& pin, const std::string& msg) const;
  void build_abi();
  // The slots of the kernel's `block_local` names, once lowering has given slots out.
  void block_local_slots();
  int argpack_type_index(const std::string& name) const;
  int add_slot(const std::string& key, const ResourceDesc& r);
  const KernelParam* kernel_param(const std::string& name) const;
  void init_scope(Scope& s, const std::vector<Node>& nodes);
  // The current scope's builder, stamping the current graph node.
  ir::Builder& B();
  // Lowers the effectful nodes of a region in order, then type-checks unused pure nodes.
  void lower_region(Scope& s);
  bool unused_resource_member(const Node& n) const;
  const NodeSpec* spec_of(const Node& n) const;
  const NodeType& type_of(const Node& n) const;
  // The input of `n` on `pin`, or null. A node with many inputs (an expr over a long list of
  // names) is indexed on its first lookup, so reading every input stays linear.
  const Input* find_input(const Node& n, const std::string& pin);
  // Lowers node `n`, which lives in scope `s`, into s's block (memoised in s).
  const Outs& lower_node(Scope& s, const Node& n);
  const Outs& lower_node_strict(Scope& s, const Node& n);
  // Tolerant mode: lower_node_strict, recording the outputs or the problem of `n`.
  const Outs& lower_node_recorded(Scope& s, const Node& n);
  bool recording_here() const;
  void note_problem(int node, const std::string& pin, const std::string& message);
  void note_output(int node, const std::string& pin, const Val& v);
  // Lowers the pure nodes `n` depends on, deepest first, without deep recursion.
  void lower_inputs_first(Scope& s, const Node& n);
  void check_node_shape(const Node& n);
  // The value a link from the current node to `id`.`pin` carries.
  Val resolve(int id, const std::string& pin, const std::string& my_pin);
  Outs one(Val v);
  // Lowers the current node through its type's entry in the node table.
  Outs dispatch(const Node& n);
  // Table adapters: a lowering giving the value of the one output "out", or all outputs.
  template <Val (Lowerer::*Lower)()>
  Outs out_of(const NodeType&) {
    return one((this->*Lower)());
  }
  template <Outs (Lowerer::*Lower)()>
  Outs outs_of(const NodeType&) {
    return (this->*Lower)();
  }
  Outs lower_reroute(const NodeType&);

  // ---- lower_values.cpp: literals, inputs, params, conversions, parameters and variables
  static Val value(ValueType t, std::vector<Inst*> c);
  static Val weak(ValueType t, std::vector<double> lit);
  static Val weak_int(ValueType t, std::vector<IntLit> lit);
  static Val negate_literal(const Val& v);
  Val literal(const Literal& l, const std::string& pin);
  std::optional<Val> opt_input(const std::string& pin);
  Val input(const std::string& pin);
  Val input_value(const std::string& pin);
  void expect_value(const Val& v, const std::string& pin);
  const Literal* param(const std::string& name) const;
  std::string param_string(const std::string& name);
  int64_t param_int(const std::string& name, int64_t fallback);
  ValueType param_type(const std::string& name);
  Inst* scalar_const(Scalar s, double v);
  // Component k of weak literal `v` as a constant of type `s`; a literal that does not fit
  // `s` (u8 + 300, 1e40 as f32, 1.5 as i32) is an error naming the node and `pin`.
  Inst* literal_const(const Val& v, size_t k, Scalar s, const std::string& pin);
  Inst* convert_scalar(Inst* x, Scalar to);
  // Components of v as scalar type `s`, splatted to `n` components.
  std::vector<Inst*> comps(const Val& v, Scalar s, int n = -1, const std::string& pin = "");
  static int rank(Scalar s);
  // Taichi's promotion of two operand types; `common` lets weak literals adapt.
  static Scalar promote(Scalar a, Scalar b);
  static Scalar common(const Val& a, const Val& b);
  static bool implicit_ok(const Val& v, Scalar to);
  // Implicit conversion to `to` (wider scalar, int -> float, scalar splat); else an error.
  Val convert(const Val& v, ValueType to, const std::string& pin);
  // A cast node: weak literals are first typed as themselves (i32 / f32), then converted
  // with the run-time semantics of `cast`.
  Val explicit_cast(const Val& v, ValueType to, const std::string& pin);
  // A literal given a type (const node with `type`, typed template constant): it must fit.
  Val typed_literal(const Val& v, ValueType to, const std::string& pin);
  Val materialize(const Val& v, const std::string& pin = "");
  // A range_for bound as i32: integers of at most 32 bits; u32 bounds above 2147483647
  // count as 2147483647 (loops index with i32).
  Inst* loop_bound(const Val& v, const std::string& pin);
  Val node_const();
  Val node_param();
  Val node_member();
  Val member_value(const std::string& pname, const std::string& path, const std::string& pin);
  Scope* enclosing_loop(Scope* s);
  Val node_index();
  Val node_function_input();
  Val node_var();
  Outs lower_var(const NodeType&);
  Outs lower_get(const NodeType&);
  Outs lower_set(const NodeType&);
  Outs lower_random(const NodeType&);
  // A type as the last argument of a value form (NodeType::type_arg).
  static Val type_value(ValueType t);

  // ---- lower_math.cpp: element-wise operations, vectors, matrices, formulas
  // Shape of an element-wise result; scalars splat.
  ValueType broadcast(const std::vector<Val>& args, const std::vector<std::string>& pins);
  Val elementwise(const std::vector<Val>& args, const std::vector<std::string>& pins,
                  Scalar operand, Scalar result,
                  const std::function<Inst*(const std::vector<Inst*>&)>& f);
  Scalar common_of(const std::vector<Val>& args);
  static Scalar numeric(Scalar s);
  static Scalar floating(Scalar s);
  using ElementOp = std::function<Inst*(const std::vector<Inst*>&)>;
  ElementOp binary_op(Op o);
  ElementOp unary_op(Op o);
  // A pure operation through its type's value form; nodes and formulas both come here.
  Val apply(const NodeType& t, std::vector<Val> a, const Pins& pins);
  void check_arity(const NodeType& t, size_t values, const Pins& pins);
  // Nodes of pure operations: their inputs in spec order, through apply; an absent optional
  // pin ends the arguments (vec4 given x and a 3-vector y), and a type_arg type param
  // comes last.
  Outs lower_operation(const NodeType& t);
  // The value forms, one per family of operations (the node table names them).
  Val op_arithmetic(const NodeType& t, const std::vector<Val>& a, const Pins& pins);
  Val op_compare(const NodeType& t, const std::vector<Val>& a, const Pins& pins);
  Val op_float_unary(const NodeType& t, const std::vector<Val>& a, const Pins& pins);
  Val op_float_binary(const NodeType& t, const std::vector<Val>& a, const Pins& pins);
  Val op_logic(const NodeType& t, const std::vector<Val>& a, const Pins& pins);
  Val op_shift(const NodeType& t, const std::vector<Val>& a, const Pins& pins);
  Val op_numeric_unary(const NodeType& t, const std::vector<Val>& a, const Pins& pins);
  Val op_not(const NodeType& t, const std::vector<Val>& a, const Pins& pins);
  Val op_fract(const NodeType& t, const std::vector<Val>& a, const Pins& pins);
  Val op_clamp(const NodeType& t, const std::vector<Val>& a, const Pins& pins);
  Val op_mix(const NodeType& t, const std::vector<Val>& a, const Pins& pins);
  Val op_fma(const NodeType& t, const std::vector<Val>& a, const Pins& pins);
  Val op_select(const NodeType& t, const std::vector<Val>& a, const Pins& pins);
  Val op_vector(const NodeType& t, const std::vector<Val>& a, const Pins& pins);
  Val op_dot(const NodeType& t, const std::vector<Val>& a, const Pins& pins);
  Val op_cross(const NodeType& t, const std::vector<Val>& a, const Pins& pins);
  Val op_matmul(const NodeType& t, const std::vector<Val>& a, const Pins& pins);
  Val op_length(const NodeType& t, const std::vector<Val>& a, const Pins& pins);
  Val op_normalize(const NodeType& t, const std::vector<Val>& a, const Pins& pins);
  Val op_transpose(const NodeType& t, const std::vector<Val>& a, const Pins& pins);
  Val op_determinant(const NodeType& t, const std::vector<Val>& a, const Pins& pins);
  Val op_inverse(const NodeType& t, const std::vector<Val>& a, const Pins& pins);
  Val op_outer(const NodeType& t, const std::vector<Val>& a, const Pins& pins);
  Val op_trace(const NodeType& t, const std::vector<Val>& a, const Pins& pins);
  Val op_floordiv(const NodeType& t, const std::vector<Val>& a, const Pins& pins);
  Val op_cast(const NodeType& t, const std::vector<Val>& a, const Pins& pins);
  Val op_matrix(const NodeType& t, const std::vector<Val>& a, const Pins& pins);
  // split: the vector or matrix itself; its outputs (lower_split) or a formula's `.y` / `.c1`
  // pick the parts.
  Val op_split(const NodeType& t, const std::vector<Val>& a, const Pins& pins);
  Outs lower_split(const NodeType& t);
  // Column `c` of a matrix (split's c0..c3, a formula's m.c1).
  Val column_of(const Val& m, int c, const std::string& pin);
  // vec2..vec4 from the components of scalars and vectors, in order.
  Val construct(const NodeType& t, const std::vector<Val>& a, const Pins& pins, Scalar s);
  Val dot(const Val& x, const Val& y, const std::vector<std::string>& pins);
  Val matmul(const Val& x, const Val& y, const std::vector<std::string>& pins);
  using Rows = std::vector<std::vector<Inst*>>;
  // The rows of a square matrix operand of determinant / inverse (message by its node type).
  Rows square_rows(const NodeType& t, const Val& m, Scalar element, const std::string& pin);
  static Rows minor(const Rows& m, int skip_row, int skip_col);
  Inst* det(const Rows& m);
  Val node_expr();
  Val eval(const Expr& e, const std::string& text);
  Val eval_one(const Expr& e, const NodeType* t, std::vector<Val> args, const std::string& shown);

  // ---- lower_memory.cpp: fields, ndarrays, textures and their resource slots
  int field_slot(const std::string& name, const std::string& pin);
  ValueType slot_type(int slot) const;
  // The resource a memory node works on: a link to `link_pin`, or the field / ndarray param.
  Val resource(const std::string& link_pin, bool texture);
  void resource_param(const std::string& name, const std::string& pin, Val& v, bool texture);
  std::vector<Inst*> indices(int ndim, const std::vector<std::string>& pins, Scalar s);
  // One lowering per memory node type: the node table picks it, so none of them looks at
  // the node's type name to decide what to emit.
  struct MemoryAccess {
    Val memory;                // the field or ndarray
    std::vector<Inst*> index;  // one i32 per dimension
  };
  // The memory (pin "array" or parameter) and the index pins i0..i3 of a memory node.
  MemoryAccess memory_access();
  void no_index_pins(const ResourceDesc& rd);  // refuses index pins on a 0-d field
  Val node_load();
  Outs node_store();
  Val node_atomic(ir::AtomicOp op);
  template <ir::AtomicOp kOp>
  Outs atomic_of(const NodeType&) {
    return one(node_atomic(kOp));
  }
  Val node_shape();
  struct TextureAccess {
    Val texture;   // pin "texture" or the parameter
    int dims = 0;  // 2 or 3
  };
  TextureAccess texture_access();
  // The integer texel pins x, y (and z for 3D textures) of tex_load and tex_store.
  std::vector<Inst*> texel_coordinates(int dims);
  Val node_tex_sample();
  Val node_tex_load();
  Outs node_tex_store();

  // ---- lower_arrays.cpp: local arrays (a var with a length), runtime component indexing
  Val node_array();
  // The i32 index on `pin` of an array or vector of `extent` elements: an integer scalar
  // (literals must be in range), checked in debug kernels (bounds_check, slot -1, `dim`).
  Inst* local_index(const Val& v, const std::string& pin, int extent, int dim);
  Val array_get(const Val& ref);
  void array_set(const Val& ref, const Val& value);
  Outs lower_element(const NodeType& t);
  Val op_element(const NodeType& t, const std::vector<Val>& a, const Pins& pins);

  // ---- lower_control.cpp: regions, loops, calls, returns
  void open_child(Scope& child, const std::vector<Node>& nodes, Cursor* cursor);
  // Lowers a region into block `block` of `inst`; pure values of enclosing scopes needed
  // meanwhile are placed before `inst`.
  template <typename Setup>
  void lower_into(Inst* inst, size_t block, const Region* region, Setup&& setup, int branch = -1);
  void lower_in(Scope& child);
  Outs node_if();
  Outs node_yield();
  Outs node_range_for();
  Outs node_struct_for();
  Outs node_unroll();
  // Nested unrolls multiply: more than kMaxUnrolledNodes node instances is an error.
  void check_unrolled_size(int64_t count, const Region* body);
  static bool has_break(const std::vector<Node>& nodes);
  Outs node_while();
  WhileState* enclosing_while();
  Val node_carried();
  Outs node_next();
  // Refuses a break whose innermost loop is parallel (top level of a kernel) or that would
  // leave an unroll body.
  void check_break_target();
  Outs node_break(bool is_break);
  Outs lower_break(const NodeType&);
  Outs lower_continue(const NodeType&);
  Outs lower_assert(const NodeType&);
  const FunctionDecl* find_function(const std::string& name);  // lower_calls.cpp
  Outs node_call();
  Outs node_output();
  Outs node_return();

  const Document& doc_;
  const KernelDecl& decl_;
  const TemplateArgs& targs_;
  std::vector<ArgpackType> types_;  // laid out copy of the document's types
  bool as_function_ = false;
  int64_t unroll_copies_ = 1;      // product of the counts of the unrolls being lowered
  int64_t local_array_bytes_ = 0;  // per thread, all local arrays of the kernel so far
  std::unique_ptr<ir::Kernel> kernel_;
  std::unordered_map<std::string, int> param_index_;  // kernel param -> ABI index
  std::unordered_map<std::string, int> slots_;        // "field:x", "param:1", "param:0@48"
  std::unordered_map<std::string, ValueType> field_types_;
  std::unordered_map<int, ValueType> member_types_;  // slot -> element type (argpack members)
  GraphInst* graph_ = nullptr;
  Scope* cur_ = nullptr;
  const Node* node_ = nullptr;
  std::vector<int> stack_;          // nodes being lowered, for cycle messages
  std::vector<std::string> calls_;  // functions being inlined, for recursion
  const FunctionIndex* function_index_ = nullptr;
  FunctionIndex own_function_index_;
  int64_t inlined_nodes_ = 0;  // nodes of functions inlined into this kernel so far
  const std::vector<Node> empty_;
  // Tolerant mode (record_into).
  GraphTypes* record_ = nullptr;
  std::string record_graph_;
  bool record_function_ = false;
  std::unordered_set<const Node*> poisoned_;  // failed nodes of the recorded graph
  mutable std::unordered_map<std::string_view, const KernelParam*> kernel_params_;  // by name
  std::unordered_map<std::string_view, const FieldDesc*> fields_;  // field_slot's, by name
  // find_input's index of the nodes with many inputs.
  std::unordered_map<const Node*, std::unordered_map<std::string_view, const Input*>> pins_;
};

// Thrown in tolerant mode when a node reads a node that failed: it fails silently too.
struct PoisonedInput {};

}  // namespace loom::graph::detail
