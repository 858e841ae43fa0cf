#include "compiler/graph/node_library.h"

#include "compiler/graph/expression.h"
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

Literal bool_literal(bool v) {
  Literal l;
  l.kind = Literal::Kind::Bool;
  l.b = v;
  return l;
}

Literal int_literal(int64_t v) {
  Literal l;
  l.kind = Literal::Kind::Int;
  l.i = v;
  l.spelling = std::to_string(v);
  return l;
}

PinSpec req(std::string name) { return {std::move(name), true, {}}; }
PinSpec opt(std::string name) { return {std::move(name), false, {}}; }
PinSpec def(std::string name, Literal value) { return {std::move(name), false, std::move(value)}; }

// Small builder so the table below reads one line per node type.
struct Spec {
  NodeSpec s;
  Spec(std::string name, std::string category) {
    s.name = std::move(name);
    s.category = std::move(category);
  }
  // The type's current version; older nodes are upgraded on load (migrate.cpp).
  Spec& version(int v) {
    s.version = v;
    return *this;
  }
  Spec& in(std::vector<PinSpec> pins) {
    s.inputs.insert(s.inputs.end(), pins.begin(), pins.end());
    return *this;
  }
  Spec& out(std::initializer_list<std::string> pins) {
    s.outputs.insert(s.outputs.end(), pins);
    return *this;
  }
  Spec& param(std::string name, bool required = true) {
    s.params.push_back({std::move(name), required});
    return *this;
  }
  Spec& region(std::string name) {
    s.regions.push_back(std::move(name));
    return *this;
  }
  Spec& effect() {
    s.effectful = true;
    return *this;
  }
  Spec& any_in() {
    s.any_inputs = true;
    return *this;
  }
  Spec& any_out() {
    s.any_outputs = true;
    return *this;
  }
};

// Index pins of memory nodes; how many are needed depends on the resource.
std::vector<PinSpec> index_pins() { return {opt("i0"), opt("i1"), opt("i2"), opt("i3")}; }

const char* summary(const std::string& name) {
  static const std::pair<const char*, const char*> table[] = {
      {"const", "A constant number, bool or vector"},
      {"param", "A kernel parameter (value, ndarray, texture or template argument)"},
      {"member", "A member of an argpack parameter, by dotted path"},
      {"index", "Loop index of the enclosing range_for or struct_for"},
      {"input", "An input port of the function"},
      {"random", "A random number: floats in [0, 1), integers over the type"},
      {"shape", "Extent of a field or ndarray along one dimension"},
      {"var", "A local variable"},
      {"get", "Current value of a local variable"},
      {"set", "Assigns a local variable"},
      {"add", "a + b"},
      {"sub", "a - b"},
      {"mul", "a * b, per component"},
      {"div", "a / b (integers truncate)"},
      {"mod", "a % b (floored, like Python)"},
      {"pow", "a to the power b"},
      {"min", "Smaller of a and b"},
      {"max", "Larger of a and b"},
      {"atan2", "Angle of the point (b, a)"},
      {"eq", "a == b"},
      {"ne", "a != b"},
      {"lt", "a < b"},
      {"le", "a <= b"},
      {"gt", "a > b"},
      {"ge", "a >= b"},
      {"and", "Logical and (bools) or bitwise and (integers)"},
      {"or", "Logical or (bools) or bitwise or (integers)"},
      {"xor", "Logical or bitwise exclusive or"},
      {"shl", "a shifted left by b bits"},
      {"shr", "a shifted right by b bits"},
      {"neg", "-a"},
      {"not", "Logical not (bools) or bitwise not (integers)"},
      {"abs", "Absolute value"},
      {"sign", "-1, 0 or 1"},
      {"floor", "Round down"},
      {"ceil", "Round up"},
      {"round", "Round to nearest"},
      {"fract", "a - floor(a)"},
      {"sqrt", "Square root"},
      {"rsqrt", "1 / sqrt(a)"},
      {"sin", "Sine"},
      {"cos", "Cosine"},
      {"tan", "Tangent"},
      {"asin", "Arc sine"},
      {"acos", "Arc cosine"},
      {"atan", "Arc tangent"},
      {"exp", "e to the power a"},
      {"log", "Natural logarithm"},
      {"cast", "Converts to another type"},
      {"clamp", "x limited to [lo, hi]"},
      {"mix", "Linear blend a + (b - a) * t"},
      {"select", "cond ? a : b"},
      {"fma", "a * b + c"},
      {"expr", "A formula over the node's inputs, like a*sin(b)+1"},
      {"vec2", "A 2-vector from components"},
      {"vec3", "A 3-vector from components"},
      {"vec4", "A 4-vector from components"},
      {"mat2", "A 2x2 matrix from columns"},
      {"mat3", "A 3x3 matrix from columns"},
      {"mat4", "A 4x4 matrix from columns"},
      {"split", "Components of a vector, or columns of a matrix"},
      {"dot", "Dot product"},
      {"cross", "Cross product of 3-vectors"},
      {"matmul", "Matrix product (matrix or vector)"},
      {"length", "Euclidean length"},
      {"normalize", "Vector scaled to length 1"},
      {"transpose", "Matrix transpose"},
      {"determinant", "Matrix determinant"},
      {"inverse", "Matrix inverse"},
      {"load", "Reads an element of a field or ndarray"},
      {"store", "Writes an element of a field or ndarray"},
      {"atomic_add", "Atomic add; gives the old value"},
      {"atomic_sub", "Atomic subtract; gives the old value"},
      {"atomic_min", "Atomic minimum; gives the old value"},
      {"atomic_max", "Atomic maximum; gives the old value"},
      {"atomic_and", "Atomic bitwise and; gives the old value"},
      {"atomic_or", "Atomic bitwise or; gives the old value"},
      {"atomic_xor", "Atomic bitwise xor; gives the old value"},
      {"tex_load", "Reads a texel"},
      {"tex_sample", "Samples a texture at normalised coordinates"},
      {"tex_store", "Writes a texel"},
      {"if", "Runs then or else; yields values out"},
      {"yield", "Values leaving an if branch"},
      {"range_for", "Parallel loop over 1 to 3 ranges"},
      {"struct_for", "Parallel loop over the elements of a field"},
      {"unroll", "Repeats its body count times, with the iteration as a constant"},
      {"while", "Loop with carried values until a break"},
      {"carried", "A carried value of the enclosing while, this iteration"},
      {"next", "Sets a carried value for the next iteration"},
      {"break", "Leaves the while loop"},
      {"continue", "Goes to the next iteration"},
      {"call", "Calls a function"},
      {"output", "Sets the function's outputs"},
      {"return", "Returns values from the kernel"},
      {"assert", "Stops with a message when cond is false (debug builds)"},
      {"reroute", "Passes its input through unchanged (a bend point for long links)"}};
  for (const auto& [n, text] : table)
    if (name == n) return text;
  return "";
}

std::vector<NodeSpec> build_library() {
  std::vector<Spec> t;
  // ---- values
  t.push_back(Spec("const", "value").out({"out"}).param("value").param("type", false));
  t.push_back(Spec("param", "value").out({"out"}).param("name"));
  t.push_back(Spec("member", "value").out({"out"}).param("param").param("path"));
  t.push_back(Spec("index", "value").out({"out"}).param("dim", false));
  t.push_back(Spec("input", "value").out({"out"}).param("name"));
  t.push_back(Spec("random", "value").out({"out"}).param("type", false).effect());
  t.push_back(Spec("shape", "value")
                  .in({opt("array")})
                  .out({"out"})
                  .param("field", false)
                  .param("ndarray", false)
                  .param("dim", false));
  // ---- local variables
  t.push_back(Spec("var", "variable").in({opt("init")}).out({"ref"}).param("type", false).effect());
  t.push_back(Spec("get", "variable").in({req("var")}).out({"out"}).effect());
  t.push_back(Spec("set", "variable").in({req("var"), req("value")}).effect());
  // ---- arithmetic, comparison, logic and bits
  for (const char* op : {"add", "sub", "mul", "div", "mod", "pow", "min", "max", "atan2", "eq",
                         "ne",  "lt",  "le",  "gt",  "ge",  "and", "or",  "xor", "shl",   "shr"})
    t.push_back(Spec(op, "math").in({req("a"), req("b")}).out({"out"}));
  for (const char* op : {"neg", "not", "abs", "sign", "floor", "ceil", "round", "fract", "sqrt",
                         "rsqrt", "sin", "cos", "tan", "asin", "acos", "atan", "exp", "log"})
    t.push_back(Spec(op, "math").in({req("a")}).out({"out"}));
  t.push_back(Spec("cast", "math").in({req("a")}).out({"out"}).param("type"));
  t.push_back(Spec("clamp", "math").version(2).in({req("x"), req("lo"), req("hi")}).out({"out"}));
  t.push_back(Spec("mix", "math").in({req("a"), req("b"), req("t")}).out({"out"}));
  t.push_back(Spec("select", "math").in({req("cond"), req("a"), req("b")}).out({"out"}));
  t.push_back(Spec("fma", "math").in({req("a"), req("b"), req("c")}).out({"out"}));
  t.push_back(Spec("expr", "math").any_in().out({"out"}).param("expr"));
  // ---- vectors and matrices
  t.push_back(Spec("vec2", "vector").in({req("x"), req("y")}).out({"out"}).param("type", false));
  t.push_back(
      Spec("vec3", "vector").in({req("x"), req("y"), req("z")}).out({"out"}).param("type", false));
  t.push_back(Spec("vec4", "vector")
                  .in({req("x"), req("y"), req("z"), req("w")})
                  .out({"out"})
                  .param("type", false));
  t.push_back(Spec("mat2", "vector").in({req("c0"), req("c1")}).out({"out"}));
  t.push_back(Spec("mat3", "vector").in({req("c0"), req("c1"), req("c2")}).out({"out"}));
  t.push_back(Spec("mat4", "vector").in({req("c0"), req("c1"), req("c2"), req("c3")}).out({"out"}));
  t.push_back(
      Spec("split", "vector").in({req("v")}).out({"x", "y", "z", "w", "c0", "c1", "c2", "c3"}));
  for (const char* op : {"dot", "cross", "matmul"})
    t.push_back(Spec(op, "vector").in({req("a"), req("b")}).out({"out"}));
  for (const char* op : {"length", "normalize", "transpose", "determinant", "inverse"})
    t.push_back(Spec(op, "vector").in({req("a")}).out({"out"}));
  // ---- memory: fields, ndarrays (params or argpack members), textures
  t.push_back(Spec("load", "memory")
                  .in({opt("array")})
                  .in(index_pins())
                  .out({"out"})
                  .param("field", false)
                  .param("ndarray", false)
                  .effect());
  t.push_back(Spec("store", "memory")
                  .in({opt("array")})
                  .in(index_pins())
                  .in({req("value")})
                  .param("field", false)
                  .param("ndarray", false)
                  .effect());
  for (const char* op : {"atomic_add", "atomic_sub", "atomic_min", "atomic_max", "atomic_and",
                         "atomic_or", "atomic_xor"})
    t.push_back(Spec(op, "memory")
                    .in({opt("array")})
                    .in(index_pins())
                    .in({req("value")})
                    .out({"out"})
                    .param("field", false)
                    .param("ndarray", false)
                    .effect());
  t.push_back(Spec("tex_load", "texture")
                  .in({opt("texture"), req("x"), req("y"), opt("z")})
                  .out({"out"})
                  .param("texture", false)
                  .effect());
  t.push_back(Spec("tex_sample", "texture")
                  .in({opt("texture"), req("u"), req("v"), opt("w")})
                  .out({"out"})
                  .param("texture", false)
                  .param("filter", false)
                  .param("wrap", false)
                  .effect());
  t.push_back(Spec("tex_store", "texture")
                  .in({opt("texture"), req("x"), req("y"), opt("z"), req("value")})
                  .param("texture", false)
                  .effect());
  // ---- control flow
  t.push_back(
      Spec("if", "control").in({req("cond")}).any_out().region("then").region("else").effect());
  t.push_back(Spec("yield", "control").any_in().effect());
  t.push_back(Spec("range_for", "control")
                  .in({def("begin0", int_literal(0)), req("end0"), def("begin1", int_literal(0)),
                       opt("end1"), def("begin2", int_literal(0)), opt("end2")})
                  .out({"i0", "i1", "i2"})
                  .region("body")
                  .effect());
  t.push_back(Spec("struct_for", "control")
                  .out({"i0", "i1", "i2", "i3"})
                  .param("field")
                  .region("body")
                  .effect());
  t.push_back(Spec("unroll", "control").out({"i"}).param("count").region("body").effect());
  t.push_back(Spec("while", "control").any_in().any_out().region("body").effect());
  t.push_back(Spec("carried", "control").out({"out"}).param("name"));
  t.push_back(Spec("next", "control").in({req("value")}).param("name").effect());
  t.push_back(Spec("break", "control").in({def("cond", bool_literal(true))}).effect());
  t.push_back(Spec("continue", "control").in({def("cond", bool_literal(true))}).effect());
  t.push_back(Spec("call", "control").any_in().any_out().param("function").effect());
  t.push_back(Spec("output", "control").any_in().effect());
  Spec ret("return", "control");
  for (int i = 0; i < 16; ++i) ret.in({opt("r" + std::to_string(i))});
  t.push_back(ret.any_in().effect());  // struct returns take member pins "r0.a"; lowering checks names
  t.push_back(Spec("assert", "control").in({req("cond")}).param("message", false).effect());
  // ---- layout helpers
  // Any value, variable reference, array or texture passes through: lowering is the identity.
  t.push_back(Spec("reroute", "layout").in({req("in")}).out({"out"}));

  std::vector<NodeSpec> out;
  out.reserve(t.size());
  for (Spec& s : t) {
    s.s.summary = summary(s.s.name);
    out.push_back(std::move(s.s));
  }
  return out;
}

}  // namespace

const std::vector<NodeSpec>& node_library() {
  static const std::vector<NodeSpec> library = build_library();
  return library;
}

const NodeSpec* find_node_spec(std::string_view type) {
  static const std::unordered_map<std::string_view, const NodeSpec*> by_name = [] {
    std::unordered_map<std::string_view, const NodeSpec*> m;
    for (const NodeSpec& s : node_library()) m.emplace(s.name, &s);
    return m;
  }();
  auto it = by_name.find(type);
  return it == by_name.end() ? nullptr : it->second;
}

namespace {

const FunctionDecl* called_function(const Document& doc, const Node& node) {
  for (const auto& [name, value] : node.params)
    if (name == "function" && value.kind == Literal::Kind::String)
      for (const FunctionDecl& f : doc.functions)
        if (f.name == value.s) return &f;
  return nullptr;
}

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
  if (node.type == "call") {
    if (const FunctionDecl* f = called_function(doc, node))
      for (const FunctionPort& port : f->inputs) add_unique(pins, port.name);
    return pins;
  }
  if (node.type == "expr") {
    // The formula's variables are its pins, in first-use order, before they have a value.
    const Literal* text = node.param("expr");
    if (text && text->kind == Literal::Kind::String) {
      try {
        for (const std::string& v : expression_inputs(*parse_expression(text->s))) add_unique(pins, v);
      } catch (const Error&) {
        // A formula being typed: its inputs so far are the pins.
      }
    }
  }
  for (const Input& in : node.inputs) add_unique(pins, in.pin);
  return pins;
}

std::vector<std::string> node_output_pins(const Document& doc, const Node& node) {
  const NodeSpec* spec = find_node_spec(node.type);
  if (!spec) return {};
  if (!spec->any_outputs) return spec->outputs;
  std::vector<std::string> pins;
  if (node.type == "call") {
    if (const FunctionDecl* f = called_function(doc, node))
      for (const FunctionPort& port : f->outputs) add_unique(pins, port.name);
  } else if (node.type == "while") {
    for (const Input& in : node.inputs) add_unique(pins, in.pin);
  } else if (node.type == "if") {
    for (const Region& r : node.regions)
      for (const Node& n : r.nodes)
        if (n.type == "yield")
          for (const Input& in : n.inputs) add_unique(pins, in.pin);
  }
  return pins;
}

}  // namespace loom::graph
