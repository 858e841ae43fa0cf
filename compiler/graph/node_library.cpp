#include "compiler/graph/node_library.h"

#include "compiler/graph/expression.h"
#include "compiler/graph/lowerer.h"
#include "runtime/common/error.h"

#include <initializer_list>
#include <unordered_map>

namespace loom::graph {

const PinSpec* NodeSpec::input(std::string_view pin) const {
  for (const PinSpec& p : inputs)
    if (p.name == pin) return &p;
  return nullptr;
}

bool NodeSpec::has_output(std::string_view pin) const {
  for (const std::string& p : outputs)
    if (p == pin) return true;
  return false;
}

const ParamSpec* NodeSpec::param(std::string_view name) const {
  for (const ParamSpec& p : params)
    if (p.name == name) return &p;
  return nullptr;
}

namespace {

const FunctionDecl* called_function(const Document& doc, const Node& node) {
  const Literal* name = node.param("function");
  if (!name || name->kind != Literal::Kind::String) return nullptr;
  return doc.function(name->s);
}

std::vector<std::string> port_names(const std::vector<FunctionPort>& ports) {
  std::vector<std::string> names;
  names.reserve(ports.size());
  for (const FunctionPort& port : ports) names.push_back(port.name);
  return names;
}

std::vector<std::string> input_names(const Node& node) {
  std::vector<std::string> names;
  for (const Input& in : node.inputs) names.push_back(in.pin);
  return names;
}

// call: the function's ports.
std::vector<std::string> call_inputs(const Document& doc, const Node& node) {
  const FunctionDecl* f = called_function(doc, node);
  return f ? port_names(f->inputs) : std::vector<std::string>{};
}

std::vector<std::string> call_outputs(const Document& doc, const Node& node) {
  const FunctionDecl* f = called_function(doc, node);
  return f ? port_names(f->outputs) : std::vector<std::string>{};
}

// expr: the formula's variables, in first-use order, before they have a value; then any
// other input the node has.
std::vector<std::string> formula_inputs(const Document&, const Node& node) {
  std::vector<std::string> pins;
  const Literal* text = node.param("expr");
  if (text && text->kind == Literal::Kind::String) {
    try {
      pins = expression_inputs(*parse_expression(text->s));
    } catch (const Error&) {
      // A formula being typed: its inputs so far are the pins.
    }
  }
  for (const Input& in : node.inputs) pins.push_back(in.pin);
  return pins;
}

// yield, while, output, return: the inputs the node has.
std::vector<std::string> own_inputs(const Document&, const Node& node) { return input_names(node); }

// if: the names its branches yield.
std::vector<std::string> yielded_names(const Document&, const Node& node) {
  std::vector<std::string> pins;
  for (const Region& r : node.regions)
    for (const Node& n : r.nodes)
      if (n.type == "yield")
        for (const Input& in : n.inputs) pins.push_back(in.pin);
  return pins;
}

}  // namespace

namespace detail {

namespace {

PinSpec req(std::string name) { return {std::move(name), true, {}}; }
PinSpec opt(std::string name) { return {std::move(name), false, {}}; }
PinSpec def(std::string name, Literal value) { return {std::move(name), false, std::move(value)}; }

// Index pins of memory nodes; how many are needed depends on the resource.
std::vector<PinSpec> index_pins() { return {opt("i0"), opt("i1"), opt("i2"), opt("i3")}; }

// One node type's entry: its spec and how it lowers.
struct Entry {
  NodeSpec spec;
  NodeType type;
};

// Small builder so the table below reads one entry per node type.
struct Spec {
  Entry e;
  Spec(std::string name, std::string category, std::string summary, LowerNode lower) {
    e.spec.name = std::move(name);
    e.spec.category = std::move(category);
    e.spec.summary = std::move(summary);
    e.type.lower = lower;
  }
  // The type's current version; older nodes are upgraded on load (migrate.cpp).
  Spec& version(int v) {
    e.spec.version = v;
    return *this;
  }
  Spec& in(std::vector<PinSpec> pins) {
    e.spec.inputs.insert(e.spec.inputs.end(), pins.begin(), pins.end());
    return *this;
  }
  Spec& out(std::initializer_list<std::string> pins) {
    e.spec.outputs.insert(e.spec.outputs.end(), pins);
    return *this;
  }
  Spec& param(std::string name, bool required = true) {
    e.spec.params.push_back({std::move(name), required});
    return *this;
  }
  Spec& region(std::string name) {
    e.spec.regions.push_back(std::move(name));
    return *this;
  }
  Spec& effect() {
    e.spec.effectful = true;
    return *this;
  }
  // Input pins named by the document; `pins` says which (node_input_pins).
  Spec& any_in(DocumentPins pins = own_inputs) {
    e.spec.any_inputs = true;
    e.spec.document_inputs = pins;
    return *this;
  }
  Spec& any_out(DocumentPins pins) {
    e.spec.any_outputs = true;
    e.spec.document_outputs = pins;
    return *this;
  }
  // A pure operation: its value form, which formulas may call by the type's name.
  Spec& value(ValueForm form, ir::Op op = {}) {
    e.type.value = form;
    e.type.op = op;
    return *this;
  }
  Spec& only_in(NodeScope scope) {
    e.spec.scope = scope;
    return *this;
  }
  Spec& starts_with(std::string param, Literal value) {
    e.spec.starting_params.emplace_back(std::move(param), std::move(value));
    return *this;
  }
  Spec& any_arity() {
    e.type.any_arity = true;
    return *this;
  }
  // The `type` param is the value form's last argument (a type name in formulas).
  Spec& type_arg() {
    e.type.type_arg = true;
    return *this;
  }
};

}  // namespace

// The node table: every node type once, in palette order. Lowering dispatches through it,
// formulas ask it which functions exist, and the tests check docs/nodes.md and
// docs/graph.schema.json against it (docs/how-to/add-a-node.md).
class NodeTable {
 public:
  static const NodeTable& get() {
    static const NodeTable table;
    return table;
  }
  std::vector<NodeSpec> specs;
  std::vector<NodeType> types;  // types[i].spec == &specs[i]
  std::unordered_map<std::string_view, const NodeType*> by_name;

 private:
  using L = Lowerer;
  using Op = ir::Op;

  NodeTable() {
    std::vector<Entry> entries = build();
    specs.reserve(entries.size());
    types.reserve(entries.size());
    for (Entry& e : entries) {
      e.spec.formula_call = e.type.value != nullptr;
      specs.push_back(std::move(e.spec));
      types.push_back(e.type);
    }
    for (size_t i = 0; i < specs.size(); ++i) {
      types[i].spec = &specs[i];
      by_name.emplace(specs[i].name, &types[i]);
    }
  }

  // A pure operation node: inputs in spec order, through its value form.
  static Spec operation(const char* name, const char* category, const char* summary, ValueForm form,
                        Op op = {}) {
    return Spec(name, category, summary, &L::lower_operation).value(form, op).out({"out"});
  }
  static Spec binary(const char* name, const char* summary, ValueForm form, Op op = {}) {
    return operation(name, "math", summary, form, op).in({req("a"), req("b")});
  }
  static Spec unary(const char* name, const char* summary, ValueForm form, Op op = {}) {
    return operation(name, "math", summary, form, op).in({req("a")});
  }
  static Spec memory(const char* name, const char* summary, LowerNode lower) {
    return Spec(name, "memory", summary, lower)
        .in({opt("array")})
        .in(index_pins())
        .param("field", false)
        .param("ndarray", false)
        .effect();
  }

  static std::vector<Entry> build() {
    std::vector<Spec> t;
    // ---- values
    t.push_back(
        Spec("const", "value", "A constant number, bool or vector", &L::out_of<&L::node_const>)
            .out({"out"})
            .param("value")
            .param("type", false)
            .starts_with("value", Literal::real(0.0)));
    t.push_back(Spec("param", "value",
                     "A kernel parameter (value, ndarray, texture or template argument)",
                     &L::out_of<&L::node_param>)
                    .out({"out"})
                    .param("name")
                    .only_in(NodeScope::KernelOnly));
    t.push_back(Spec("member", "value", "A member of an argpack parameter, by dotted path",
                     &L::out_of<&L::node_member>)
                    .out({"out"})
                    .param("param")
                    .param("path")
                    .only_in(NodeScope::KernelOnly));
    t.push_back(Spec("index", "value", "Loop index of the enclosing range_for or struct_for",
                     &L::out_of<&L::node_index>)
                    .out({"out"})
                    .param("dim", false));
    t.push_back(
        Spec("input", "value", "An input port of the function", &L::out_of<&L::node_function_input>)
            .out({"out"})
            .param("name")
            .only_in(NodeScope::FunctionOnly));
    t.push_back(Spec("random", "value", "A random number: floats in [0, 1), integers over the type",
                     &L::lower_random)
                    .out({"out"})
                    .param("type", false)
                    .effect());
    t.push_back(Spec("shape", "value", "Extent of a field or ndarray along one dimension",
                     &L::out_of<&L::node_shape>)
                    .in({opt("array")})
                    .out({"out"})
                    .param("field", false)
                    .param("ndarray", false)
                    .param("dim", false));
    // ---- local variables
    t.push_back(
        Spec("var", "variable", "A local variable; with a length, a local array", &L::lower_var)
            .in({opt("init")})
            .out({"ref"})
            .param("type", false)
            .param("length", false)
            .effect());
    t.push_back(
        Spec("get", "variable", "Current value of a local variable or array element", &L::lower_get)
            .in({req("var"), opt("index")})
            .out({"out"})
            .effect());
    t.push_back(Spec("set", "variable", "Assigns a local variable or array element", &L::lower_set)
                    .in({req("var"), req("value"), opt("index")})
                    .effect());
    // ---- arithmetic, comparison, logic and bits
    t.push_back(binary("add", "a + b", &L::op_arithmetic, Op::Add));
    t.push_back(binary("sub", "a - b", &L::op_arithmetic, Op::Sub));
    t.push_back(binary("mul", "a * b, per component", &L::op_arithmetic, Op::Mul));
    t.push_back(binary("div", "a / b (integers truncate)", &L::op_arithmetic, Op::Div));
    t.push_back(binary("floordiv", "a // b: floor of the quotient, like Python", &L::op_floordiv));
    t.push_back(binary("mod", "a % b (floored, like Python)", &L::op_arithmetic, Op::Mod));
    t.push_back(binary("pow", "a to the power b", &L::op_arithmetic, Op::Pow));
    t.push_back(binary("min", "Smaller of a and b", &L::op_arithmetic, Op::Min));
    t.push_back(binary("max", "Larger of a and b", &L::op_arithmetic, Op::Max));
    t.push_back(binary("atan2", "Angle of the point (b, a)", &L::op_float_binary, Op::Atan2));
    t.push_back(binary("eq", "a == b", &L::op_compare, Op::Eq));
    t.push_back(binary("ne", "a != b", &L::op_compare, Op::Ne));
    t.push_back(binary("lt", "a < b", &L::op_compare, Op::Lt));
    t.push_back(binary("le", "a <= b", &L::op_compare, Op::Le));
    t.push_back(binary("gt", "a > b", &L::op_compare, Op::Gt));
    t.push_back(binary("ge", "a >= b", &L::op_compare, Op::Ge));
    t.push_back(
        binary("and", "Logical and (bools) or bitwise and (integers)", &L::op_logic, Op::BitAnd));
    t.push_back(
        binary("or", "Logical or (bools) or bitwise or (integers)", &L::op_logic, Op::BitOr));
    t.push_back(binary("xor", "Logical or bitwise exclusive or", &L::op_logic, Op::BitXor));
    t.push_back(binary("shl", "a shifted left by b bits", &L::op_shift, Op::Shl));
    t.push_back(binary("shr", "a shifted right by b bits", &L::op_shift, Op::Shr));
    t.push_back(unary("neg", "-a", &L::op_numeric_unary, Op::Neg));
    t.push_back(unary("not", "Logical not (bools) or bitwise not (integers)", &L::op_not));
    t.push_back(unary("abs", "Absolute value", &L::op_numeric_unary, Op::Abs));
    t.push_back(unary("sign", "-1, 0 or 1", &L::op_numeric_unary, Op::Sign));
    t.push_back(unary("floor", "Round down", &L::op_float_unary, Op::Floor));
    t.push_back(unary("ceil", "Round up", &L::op_float_unary, Op::Ceil));
    t.push_back(unary("round", "Round to nearest", &L::op_float_unary, Op::Round));
    t.push_back(unary("fract", "a - floor(a)", &L::op_fract));
    t.push_back(unary("sqrt", "Square root", &L::op_float_unary, Op::Sqrt));
    t.push_back(unary("rsqrt", "1 / sqrt(a)", &L::op_float_unary, Op::Rsqrt));
    t.push_back(unary("sin", "Sine", &L::op_float_unary, Op::Sin));
    t.push_back(unary("cos", "Cosine", &L::op_float_unary, Op::Cos));
    t.push_back(unary("tan", "Tangent", &L::op_float_unary, Op::Tan));
    t.push_back(unary("asin", "Arc sine", &L::op_float_unary, Op::Asin));
    t.push_back(unary("acos", "Arc cosine", &L::op_float_unary, Op::Acos));
    t.push_back(unary("atan", "Arc tangent", &L::op_float_unary, Op::Atan));
    t.push_back(unary("exp", "e to the power a", &L::op_float_unary, Op::Exp));
    t.push_back(unary("log", "Natural logarithm", &L::op_float_unary, Op::Log));
    t.push_back(operation("cast", "math", "Converts to another type", &L::op_cast)
                    .type_arg()
                    .in({req("a")})
                    .param("type")
                    .starts_with("type", Literal::text("f32")));
    t.push_back(operation("clamp", "math", "x limited to [lo, hi]", &L::op_clamp)
                    .version(2)
                    .in({req("x"), req("lo"), req("hi")}));
    t.push_back(operation("mix", "math", "Linear blend a + (b - a) * t", &L::op_mix)
                    .in({req("a"), req("b"), req("t")}));
    t.push_back(operation("select", "math", "cond ? a : b", &L::op_select)
                    .in({req("cond"), req("a"), req("b")}));
    t.push_back(
        operation("fma", "math", "a * b + c", &L::op_fma).in({req("a"), req("b"), req("c")}));
    t.push_back(Spec("expr", "math", "A formula over the node's inputs, like a*sin(b)+1",
                     &L::out_of<&L::node_expr>)
                    .any_in(formula_inputs)
                    .out({"out"})
                    .param("expr")
                    .starts_with("expr", Literal::text("a")));
    // ---- vectors and matrices
    // Components fill x, y, z, w in order, so the later pins are optional: vec4(x, v3) joins.
    t.push_back(operation("vec2", "vector", "A 2-vector from components", &L::op_vector)
                    .any_arity()
                    .type_arg()
                    .in({req("x"), opt("y")})
                    .param("type", false));
    t.push_back(operation("vec3", "vector", "A 3-vector from components", &L::op_vector)
                    .any_arity()
                    .type_arg()
                    .in({req("x"), opt("y"), opt("z")})
                    .param("type", false));
    t.push_back(operation("vec4", "vector", "A 4-vector from components", &L::op_vector)
                    .any_arity()
                    .type_arg()
                    .in({req("x"), opt("y"), opt("z"), opt("w")})
                    .param("type", false));
    t.push_back(operation("mat2", "vector", "A 2x2 matrix from columns", &L::op_matrix)
                    .in({req("c0"), req("c1")}));
    t.push_back(operation("mat3", "vector", "A 3x3 matrix from columns", &L::op_matrix)
                    .in({req("c0"), req("c1"), req("c2")}));
    t.push_back(operation("mat4", "vector", "A 4x4 matrix from columns", &L::op_matrix)
                    .in({req("c0"), req("c1"), req("c2"), req("c3")}));
    t.push_back(
        Spec("split", "vector", "Components of a vector, or columns of a matrix", &L::lower_split)
            .value(&L::op_split)
            .in({req("v")})
            .out({"x", "y", "z", "w", "c0", "c1", "c2", "c3"}));
    t.push_back(Spec("element", "vector",
                     "Component i of a vector, or M[i, j] (row i, column j) of a matrix, with "
                     "indices computed at run time",
                     &L::lower_element)
                    .value(&L::op_element)
                    .any_arity()
                    .in({req("v"), req("i"), opt("j")})
                    .out({"out"}));
    t.push_back(operation("dot", "vector", "Dot product", &L::op_dot).in({req("a"), req("b")}));
    t.push_back(operation("cross", "vector", "Cross product of 3-vectors", &L::op_cross)
                    .in({req("a"), req("b")}));
    t.push_back(operation("matmul", "vector", "Matrix product (matrix or vector)", &L::op_matmul)
                    .in({req("a"), req("b")}));
    t.push_back(operation("length", "vector", "Euclidean length", &L::op_length).in({req("a")}));
    t.push_back(operation("normalize", "vector", "Vector scaled to length 1", &L::op_normalize)
                    .in({req("a")}));
    t.push_back(
        operation("transpose", "vector", "Matrix transpose", &L::op_transpose).in({req("a")}));
    t.push_back(operation("determinant", "vector", "Matrix determinant", &L::op_determinant)
                    .in({req("a")}));
    t.push_back(operation("inverse", "vector", "Matrix inverse", &L::op_inverse).in({req("a")}));
    t.push_back(operation("outer", "vector", "Outer product: column j is b[j] * a", &L::op_outer)
                    .in({req("a"), req("b")}));
    t.push_back(operation("trace", "vector", "Sum of a square matrix's diagonal", &L::op_trace)
                    .in({req("a")}));
    // ---- memory: fields, ndarrays (params or argpack members), textures
    t.push_back(memory("load", "Reads an element of a field or ndarray", &L::out_of<&L::node_load>)
                    .out({"out"}));
    t.push_back(
        memory("store", "Writes an element of a field or ndarray", &L::outs_of<&L::node_store>)
            .in({req("value")}));
    t.push_back(
        memory("atomic_add", "Atomic add; gives the old value", &L::atomic_of<ir::AtomicOp::Add>)
            .in({req("value")})
            .out({"out"}));
    t.push_back(memory("atomic_sub", "Atomic subtract; gives the old value",
                       &L::atomic_of<ir::AtomicOp::Sub>)
                    .in({req("value")})
                    .out({"out"}));
    t.push_back(memory("atomic_min", "Atomic minimum; gives the old value",
                       &L::atomic_of<ir::AtomicOp::Min>)
                    .in({req("value")})
                    .out({"out"}));
    t.push_back(memory("atomic_max", "Atomic maximum; gives the old value",
                       &L::atomic_of<ir::AtomicOp::Max>)
                    .in({req("value")})
                    .out({"out"}));
    t.push_back(memory("atomic_and", "Atomic bitwise and; gives the old value",
                       &L::atomic_of<ir::AtomicOp::And>)
                    .in({req("value")})
                    .out({"out"}));
    t.push_back(memory("atomic_or", "Atomic bitwise or; gives the old value",
                       &L::atomic_of<ir::AtomicOp::Or>)
                    .in({req("value")})
                    .out({"out"}));
    t.push_back(memory("atomic_xor", "Atomic bitwise xor; gives the old value",
                       &L::atomic_of<ir::AtomicOp::Xor>)
                    .in({req("value")})
                    .out({"out"}));
    t.push_back(Spec("tex_load", "texture", "Reads a texel", &L::out_of<&L::node_tex_load>)
                    .in({opt("texture"), req("x"), req("y"), opt("z")})
                    .out({"out"})
                    .param("texture", false)
                    .effect());
    t.push_back(Spec("tex_sample", "texture", "Samples a texture at normalised coordinates",
                     &L::out_of<&L::node_tex_sample>)
                    .in({opt("texture"), req("u"), req("v"), opt("w")})
                    .out({"out"})
                    .param("texture", false)
                    .param("filter", false)
                    .param("wrap", false)
                    .effect());
    t.push_back(Spec("tex_store", "texture", "Writes a texel", &L::outs_of<&L::node_tex_store>)
                    .in({opt("texture"), req("x"), req("y"), opt("z"), req("value")})
                    .param("texture", false)
                    .effect());
    // ---- control flow
    t.push_back(
        Spec("if", "control", "Runs then or else; yields values out", &L::outs_of<&L::node_if>)
            .in({req("cond")})
            .any_out(yielded_names)
            .region("then")
            .region("else")
            .effect());
    t.push_back(Spec("yield", "control", "Values leaving an if branch", &L::outs_of<&L::node_yield>)
                    .any_in()
                    .effect());
    t.push_back(Spec("range_for", "control", "Parallel loop over 1 to 3 ranges",
                     &L::outs_of<&L::node_range_for>)
                    .in({def("begin0", Literal::integer(0)), req("end0"),
                         def("begin1", Literal::integer(0)), opt("end1"),
                         def("begin2", Literal::integer(0)), opt("end2")})
                    .out({"i0", "i1", "i2"})
                    .region("body")
                    .effect());
    t.push_back(Spec("struct_for", "control", "Parallel loop over the elements of a field",
                     &L::outs_of<&L::node_struct_for>)
                    .out({"i0", "i1", "i2", "i3"})
                    .param("field")
                    .region("body")
                    .effect());
    t.push_back(Spec("unroll", "control",
                     "Repeats its body count times, with the iteration as a constant",
                     &L::outs_of<&L::node_unroll>)
                    .out({"i"})
                    .param("count")
                    .region("body")
                    .effect()
                    .starts_with("count", Literal::integer(2)));
    t.push_back(Spec("while", "control", "Loop with carried values until a break",
                     &L::outs_of<&L::node_while>)
                    .any_in()
                    .any_out(own_inputs)
                    .region("body")
                    .effect());
    t.push_back(Spec("carried", "control", "A carried value of the enclosing while, this iteration",
                     &L::out_of<&L::node_carried>)
                    .out({"out"})
                    .param("name"));
    t.push_back(Spec("next", "control", "Sets a carried value for the next iteration",
                     &L::outs_of<&L::node_next>)
                    .in({req("value")})
                    .param("name")
                    .effect());
    t.push_back(Spec("break", "control", "Leaves the innermost serial loop", &L::lower_break)
                    .in({def("cond", Literal::boolean(true))})
                    .effect());
    t.push_back(Spec("continue", "control", "Goes to the next iteration", &L::lower_continue)
                    .in({def("cond", Literal::boolean(true))})
                    .effect());
    t.push_back(Spec("call", "control", "Calls a function", &L::outs_of<&L::node_call>)
                    .any_in(call_inputs)
                    .any_out(call_outputs)
                    .param("function")
                    .effect());
    t.push_back(
        Spec("output", "control", "Sets the function's outputs", &L::outs_of<&L::node_output>)
            .any_in()
            .effect()
            .only_in(NodeScope::FunctionOnly));
    Spec ret("return", "control", "Returns values from the kernel", &L::outs_of<&L::node_return>);
    for (int i = 0; i < 16; ++i) ret.in({opt("r" + std::to_string(i))});
    t.push_back(ret.any_in().effect().only_in(
        NodeScope::KernelOnly));  // struct returns take member pins "r0.a"; lowering checks names
    t.push_back(Spec("assert", "control", "Stops with a message when cond is false (debug builds)",
                     &L::lower_assert)
                    .in({req("cond")})
                    .param("message", false)
                    .effect());
    // ---- layout helpers
    // Any value, variable reference, array or texture passes through: lowering is the identity.
    t.push_back(Spec("reroute", "layout",
                     "Passes its input through unchanged (a bend point for long links)",
                     &L::lower_reroute)
                    .in({req("in")})
                    .out({"out"}));

    std::vector<Entry> out;
    out.reserve(t.size());
    for (Spec& s : t) out.push_back(std::move(s.e));
    return out;
  }
};

const NodeType* find_node_type(std::string_view name) {
  const auto& by_name = NodeTable::get().by_name;
  auto it = by_name.find(name);
  return it == by_name.end() ? nullptr : it->second;
}

}  // namespace detail

const std::vector<NodeSpec>& node_library() { return detail::NodeTable::get().specs; }

const NodeSpec* find_node_spec(std::string_view type) {
  const detail::NodeType* t = detail::find_node_type(type);
  return t ? t->spec : nullptr;
}

namespace {

void add_unique(std::vector<std::string>& pins, const std::string& pin) {
  for (const std::string& p : pins)
    if (p == pin) return;
  pins.push_back(pin);
}

}  // namespace

std::vector<std::string> node_input_pins(const Document& doc, const Node& node) {
  std::vector<std::string> pins;
  const NodeSpec* spec = find_node_spec(node.type);
  if (!spec) return pins;
  for (const PinSpec& p : spec->inputs) pins.push_back(p.name);
  if (!spec->any_inputs) return pins;
  for (const std::string& pin : spec->document_inputs(doc, node)) add_unique(pins, pin);
  return pins;
}

std::vector<std::string> node_output_pins(const Document& doc, const Node& node) {
  const NodeSpec* spec = find_node_spec(node.type);
  if (!spec) return {};
  if (!spec->any_outputs) return spec->outputs;
  std::vector<std::string> pins;
  for (const std::string& pin : spec->document_outputs(doc, node)) add_unique(pins, pin);
  return pins;
}

}  // namespace loom::graph
