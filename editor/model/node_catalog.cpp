#include "editor/model/node_catalog.h"

#include <cctype>

#include "compiler/graph/node_library.h"
#include "editor/model/graph_access.h"

namespace loom::editor {

using graph::Literal;

namespace {

struct Atomic {
  const char* op;
  bool bitwise;
};
constexpr Atomic kAtomics[] = {{"add", false}, {"sub", false}, {"min", false}, {"max", false},
                               {"and", true},  {"or", true},   {"xor", true}};

}  // namespace

std::vector<CatalogEntry> node_catalog(const graph::Document& doc, const GraphRef& g) {
  std::vector<CatalogEntry> out;
  const graph::FunctionDecl* fn = g.function ? doc.function(g.name) : nullptr;
  for (const graph::NodeSpec& s : graph::node_library()) {
    // Kernel-only and function-only nodes where they cannot be used.
    if (s.scope == graph::NodeScope::KernelOnly && g.function) continue;
    if (s.scope == graph::NodeScope::FunctionOnly && !g.function) continue;
    out.push_back(CatalogEntry{s.name, s.name, s.category, s.summary, s.starting_params});
  }
  if (const graph::KernelDecl* k = g.function ? nullptr : doc.kernel(g.name))
    for (const graph::KernelParam& p : k->params)
      out.push_back(CatalogEntry{"param " + p.name,
                                 "param",
                                 "document",
                                 "Kernel parameter " + p.name + " (" + p.type + ")",
                                 {{"name", Literal::text(p.name)}}});
  if (fn)
    for (const graph::FunctionPort& p : fn->inputs)
      out.push_back(CatalogEntry{"input " + p.name,
                                 "input",
                                 "document",
                                 "Function input " + p.name + " (" + p.type + ")",
                                 {{"name", Literal::text(p.name)}}});
  for (const graph::FunctionDecl& f : doc.functions) {
    if (fn && f.name == fn->name) continue;  // no recursion
    out.push_back(CatalogEntry{"call " + f.name,
                               "call",
                               "document",
                               "Calls function " + f.name,
                               {{"function", Literal::text(f.name)}}});
  }
  for (const FieldDesc& f : doc.fields) {
    std::string t = value_type_name(f.elem);
    out.push_back(CatalogEntry{"load " + f.name,
                               "load",
                               "document",
                               "Reads field " + f.name + " (" + t + ")",
                               {{"field", Literal::text(f.name)}}});
    out.push_back(CatalogEntry{"store " + f.name,
                               "store",
                               "document",
                               "Writes field " + f.name + " (" + t + ")",
                               {{"field", Literal::text(f.name)}}});
    for (const auto& [op, bitwise] : kAtomics) {
      if (bitwise && !is_int(f.elem.scalar)) continue;  // integer memory only
      out.push_back(CatalogEntry{"atomic_" + std::string(op) + " " + f.name,
                                 "atomic_" + std::string(op),
                                 "document",
                                 "Atomic " + std::string(op) + " on field " + f.name + " (" + t +
                                     "), giving the old value",
                                 {{"field", Literal::text(f.name)}}});
    }
  }
  return out;
}

namespace {

graph::Input link_to(const std::string& pin, int node, const std::string& out) {
  graph::Input in;
  in.pin = pin;
  in.linked = true;
  in.from_node = node;
  in.from_pin = out;
  return in;
}

bool index_pin(const std::string& pin) {
  return pin.size() == 2 && pin[0] == 'i' && pin[1] >= '0' && pin[1] <= '3';
}

// Candidate pins of a new node, in order; any_inputs types get the names they are used with.
std::vector<std::string> candidate_pins(const graph::Document& doc, const GraphRef& g,
                                        const CatalogEntry& e) {
  graph::Node n;
  n.type = e.type;
  n.params = e.params;
  const graph::NodeSpec* spec = graph::find_node_spec(e.type);
  if (!spec) return {};
  if (!spec->any_inputs || e.type == "call") return graph::node_input_pins(doc, n);
  if (e.type == "expr") return {"a"};
  if (e.type == "return") return {"r0"};
  if (e.type == "output") {
    const graph::FunctionDecl* f = g.function ? doc.function(g.name) : nullptr;
    if (f && !f->outputs.empty()) return {f->outputs[0].name};
    return {};
  }
  return {"value"};  // yield, while: a name the user renames
}

}  // namespace

std::string compatible_input(const graph::Document& doc, const GraphRef& g,
                             const CatalogEntry& entry, const graph::PinValue& value) {
  std::vector<std::string> pins = candidate_pins(doc, g, entry);
  // Names are given by the user for these; what they take is decided where they are used.
  if (entry.type == "yield" || entry.type == "while" || entry.type == "output" ||
      entry.type == "return")
    return value.kind == graph::PinValue::Kind::Value && !pins.empty() ? pins[0] : "";
  // A scratch document: the resources and functions of `doc`, and a kernel holding a source
  // of `value` (node 1) and the new node (node 2).
  graph::Document probe;
  probe.path = "<palette>";
  probe.fields = doc.fields;
  probe.ndarrays = doc.ndarrays;
  probe.textures = doc.textures;
  probe.argpack_types = doc.argpack_types;
  probe.functions = doc.functions;
  graph::KernelDecl k;
  k.name = "probe";
  graph::Node src;
  src.id = 1;
  std::string out = "out";
  switch (value.kind) {
    case graph::PinValue::Kind::Value:
      if (value.literal) {
        src.type = "const";
        src.params.emplace_back(
            "value", is_float(value.type.scalar) ? Literal::real(0.5) : Literal::integer(0));
      } else {
        src.type = "param";
        src.params.emplace_back("name", Literal::text("src"));
        k.params.push_back({"src", graph::ParamKind::Value, value_type_name(value.type), 0});
      }
      break;
    case graph::PinValue::Kind::Ref:
      src.type = "var";
      src.params.emplace_back("type", Literal::text(value_type_name(value.type)));
      out = "ref";
      break;
    case graph::PinValue::Kind::Array:
      src.type = "param";
      src.params.emplace_back("name", Literal::text("src"));
      k.params.push_back({"src", graph::ParamKind::Ndarray, value_type_name(value.type), 1});
      break;
    case graph::PinValue::Kind::Texture:
      src.type = "param";
      src.params.emplace_back("name", Literal::text("src"));
      k.params.push_back({"src", graph::ParamKind::Texture, "rgba32f", 2});
      break;
  }
  k.nodes.push_back(src);
  const graph::NodeSpec* spec = graph::find_node_spec(entry.type);
  // Index values a memory node needs for its field (a probe without them fails for that
  // alone); a vector index gives several.
  int dims = 0;
  for (const auto& [name, v] : entry.params)
    if (name == "field" && v.kind == Literal::Kind::String)
      if (const FieldDesc* f = doc.field_or_derivative(v.s))
        dims = static_cast<int>(f->shape.size());
  graph::Input zero;
  zero.literal = Literal::integer(0);
  for (const std::string& pin : pins) {
    // The other required pins get the same value (operands of one shape: cross, dot, add),
    // then a literal 0 (a bool condition, a scalar factor); either way without a problem.
    for (bool same : {true, false}) {
      graph::Node n;
      n.id = 2;
      n.type = entry.type;
      if (spec) n.version = spec->version;
      n.params = entry.params;
      if (entry.type == "expr") n.params = {{"expr", Literal::text(pin)}};
      n.inputs.push_back(link_to(pin, 1, out));
      int indices = dims > 0 && index_pin(pin) ? value.type.components() : 0;
      if (spec)
        for (const graph::PinSpec& p : spec->inputs) {
          if (p.name == pin) continue;
          bool index = dims > 0 && index_pin(p.name);
          if (index && indices >= dims) continue;
          if (!p.required && !index) continue;
          graph::Input in = same && !index ? link_to(p.name, 1, out) : zero;
          in.pin = p.name;
          n.inputs.push_back(in);
          indices += index;
        }
      k.nodes.resize(1);
      k.nodes.push_back(n);
      probe.kernels = {k};
      graph::GraphTypes t = graph::infer_graph_types(probe, "probe", false);
      bool clean = true;
      for (const graph::NodeProblem& p : t.problems) clean &= p.node != 2;
      if (clean) return pin;
    }
  }
  return "";
}

std::optional<graph::PinValue> output_value(const graph::Document& doc, const GraphRef& g,
                                            const PinRef& from, const graph::GraphTypes& types) {
  if (const graph::PinValue* v = types.output(from.node, from.pin)) return *v;
  const graph::Node* src = find_node(doc, g, from.node);
  const graph::NodeSpec* spec = src ? graph::find_node_spec(src->type) : nullptr;
  if (!spec) return std::nullopt;
  // Lowering types an output where it is read: a reroute reads it beside its node, or inside
  // the node's first region (a loop index exists only there).
  std::vector<RegionRef> places{region_of(doc, g, from.node)};
  if (!spec->regions.empty()) places.push_back(RegionRef{from.node, spec->regions[0]});
  for (const RegionRef& place : places) {
    graph::Document copy = doc;
    std::vector<graph::Node>* list = region_nodes(copy, g, place, /*create=*/true);
    if (!list) continue;
    graph::Node reader;
    reader.id = next_node_id(copy, g);
    reader.type = "reroute";
    reader.inputs.push_back(link_to("in", from.node, from.pin));
    list->push_back(std::move(reader));
    graph::GraphTypes t = graph::infer_graph_types(copy, g.name, g.function);
    if (const graph::PinValue* v = t.output(from.node, from.pin)) return *v;
  }
  return std::nullopt;
}

std::string first_output(const graph::Document& doc, const CatalogEntry& entry) {
  graph::Node n;
  n.type = entry.type;
  n.params = entry.params;
  std::vector<std::string> outs = graph::node_output_pins(doc, n);
  return outs.empty() ? "" : outs[0];
}

int match_score(const std::string& query, const std::string& label) {
  auto lower = [](char c) {
    return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  };
  if (query.empty()) return 0;
  size_t at = 0;
  int gaps = 0;
  size_t first = std::string::npos;
  for (char q : query) {
    if (q == ' ' && at < label.size() && label[at] != ' ')
      continue;  // "ld temp" matches "load temperature"
    while (at < label.size() && lower(label[at]) != lower(q)) {
      ++at;
      ++gaps;
    }
    if (at == label.size()) return -1;
    if (first == std::string::npos) first = at;
    ++at;
  }
  bool word_start = first == 0 || label[first - 1] == ' ' || label[first - 1] == '_';
  int score = first == 0 ? 0 : word_start ? 1000 : 2000;
  return score + gaps * 10 + static_cast<int>(label.size());
}

}  // namespace loom::editor
