// Fluent helpers to build graph documents from C++: the builder API. Every kernel built
// this way is an ordinary Document, so it saves as text and runs like any loaded graph.
#pragma once

#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "compiler/graph/document.h"
#include "compiler/graph/node_library.h"

namespace loom::graph::build {

// Short names for the Literal factories (literal.h), so builder code reads like JSON.
inline Literal lit(int64_t v) { return Literal::integer(v); }
inline Literal lit(int v) { return Literal::integer(v); }
inline Literal lit(double v) { return Literal::real(v); }
inline Literal lit(bool v) { return Literal::boolean(v); }
inline Literal lit(const char* v) { return Literal::text(v); }
inline Literal lit(std::string v) { return Literal::text(std::move(v)); }
inline Literal list(std::initializer_list<Literal> items) { return Literal::list_of(items); }

// A link "node.pin" to another node's output.
struct Link {
  int node;
  std::string pin = "out";
};
inline Link ln(int node, std::string pin = "out") { return Link{node, std::move(pin)}; }

// N(3, "add").in("a", ln(1)).in("b", 2.5).p("type", "f32")
struct N {
  Node node;
  N(int id, std::string type) {
    node.id = id;
    node.type = std::move(type);
    if (const NodeSpec* spec = find_node_spec(node.type)) node.version = spec->version;  // current
  }
  N& in(const std::string& pin, Link l) {
    Input i;
    i.pin = pin;
    i.linked = true;
    i.from_node = l.node;
    i.from_pin = l.pin;
    node.inputs.push_back(i);
    return *this;
  }
  template <typename T>
  N& in(const std::string& pin, T value) {
    Input i;
    i.pin = pin;
    i.literal = lit(value);
    node.inputs.push_back(i);
    return *this;
  }
  N& in(const std::string& pin, Literal value) {
    Input i;
    i.pin = pin;
    i.literal = std::move(value);
    node.inputs.push_back(i);
    return *this;
  }
  template <typename T>
  N& p(const std::string& name, T value) {
    node.params.emplace_back(name, lit(value));
    return *this;
  }
  N& p(const std::string& name, Literal value) {
    node.params.emplace_back(name, std::move(value));
    return *this;
  }
  N& region(const std::string& name, std::initializer_list<N> nodes) {
    Region r;
    r.name = name;
    for (const N& n : nodes) r.nodes.push_back(n.node);
    node.regions.push_back(std::move(r));
    return *this;
  }
  operator Node() const { return node; }
};

inline KernelParam value_param(std::string name, std::string type) {
  return KernelParam{std::move(name), ParamKind::Value, std::move(type), 0};
}
inline KernelParam ndarray_param(std::string name, std::string type, int ndim) {
  return KernelParam{std::move(name), ParamKind::Ndarray, std::move(type), ndim};
}

inline KernelDecl kernel(std::string name, std::vector<KernelParam> params,
                         std::initializer_list<N> nodes) {
  KernelDecl k;
  k.name = std::move(name);
  k.params = std::move(params);
  for (const N& n : nodes) k.nodes.push_back(n.node);
  return k;
}

}  // namespace loom::graph::build
