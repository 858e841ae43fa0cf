#include "compiler/graph/document.h"

#include <climits>
#include <string_view>
#include <vector>

#include "compiler/ir/work_count.h"

namespace loom::graph {

namespace {
template <typename T>
const T* find_named(const std::vector<T>& items, const std::string& name) {
  ir::count_work(items.size());  // a scan: callers looking up many names index them instead
  for (const T& item : items)
    if (item.name == name) return &item;
  return nullptr;
}
}  // namespace

std::string shape_problem(const std::vector<int64_t>& shape, int64_t elem_bytes) {
  int64_t bytes = elem_bytes;
  std::string dims;
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t e = shape[d];
    dims += (d ? " x " : "") + std::to_string(e);
    if (e < 1)
      return "extent " + std::to_string(e) + " (dimension " + std::to_string(d) +
             ") is not positive";
    if (e > INT32_MAX)
      return "extent " + std::to_string(e) + " (dimension " + std::to_string(d) +
             ") is larger than 2147483647; kernels index with 32-bit integers";
  }
  for (int64_t e : shape)
    if (__builtin_mul_overflow(bytes, e, &bytes))
      return dims + " elements of " + std::to_string(elem_bytes) +
             " bytes do not fit in 2^63 bytes";
  return "";
}

const Literal* Node::param(const std::string& name) const {
  ir::count_work(params.size());
  for (const auto& [key, value] : params)
    if (key == name) return &value;
  return nullptr;
}

const Input* Node::input(const std::string& pin) const {
  ir::count_work(inputs.size());
  for (const Input& in : inputs)
    if (in.pin == pin) return &in;
  return nullptr;
}

const KernelDecl* Document::kernel(const std::string& name) const {
  return find_named(kernels, name);
}
const FunctionDecl* Document::function(const std::string& name) const {
  return find_named(functions, name);
}
const FieldDesc* Document::field(const std::string& name) const { return find_named(fields, name); }
const FieldDesc* Document::field_or_derivative(const std::string& name) const {
  if (const FieldDesc* f = field(name)) return f;
  for (const char* suffix : {".grad", ".dual"}) {
    std::string_view s = suffix;
    if (name.size() <= s.size() || std::string_view(name).substr(name.size() - s.size()) != s)
      continue;
    const FieldDesc* f = field(name.substr(0, name.size() - s.size()));
    if (f && (s == ".grad" ? f->needs_grad : f->needs_dual)) return f;
  }
  return nullptr;
}
const NdarrayDecl* Document::ndarray(const std::string& name) const {
  return find_named(ndarrays, name);
}
const TextureDecl* Document::texture(const std::string& name) const {
  return find_named(textures, name);
}
const ArgpackDecl* Document::argpack(const std::string& name) const {
  return find_named(argpacks, name);
}
const Pipeline* Document::pipeline(const std::string& name) const {
  return find_named(pipelines, name);
}

namespace {
bool contains_node(const std::vector<Node>& nodes, int id) {
  for (const Node& n : nodes) {
    ir::count_work();
    if (n.id == id) return true;
    for (const Region& r : n.regions)
      if (contains_node(r.nodes, id)) return true;
  }
  return false;
}
}  // namespace

namespace {
void collect_node_ids(const std::vector<Node>& nodes, std::unordered_set<int>& out) {
  std::vector<const std::vector<Node>*> todo{&nodes};  // regions nest at most JSON deep
  while (!todo.empty()) {
    const std::vector<Node>* list = todo.back();
    todo.pop_back();
    for (const Node& n : *list) {
      ir::count_work();
      out.insert(n.id);
      for (const Region& r : n.regions) todo.push_back(&r.nodes);
    }
  }
}
}  // namespace

GraphNodeIds graph_node_ids(const Document& doc) {
  GraphNodeIds ids;
  for (const KernelDecl& k : doc.kernels) collect_node_ids(k.nodes, ids[k.name]);
  for (const FunctionDecl& f : doc.functions) collect_node_ids(f.nodes, ids[f.name]);
  return ids;
}

bool Document::has_graph(const std::string& name) const { return kernel(name) || function(name); }

bool Document::graph_has_node(const std::string& graph, int node) const {
  for (const KernelDecl& k : kernels)
    if (k.name == graph && contains_node(k.nodes, node)) return true;
  for (const FunctionDecl& f : functions)
    if (f.name == graph && contains_node(f.nodes, node)) return true;
  return false;
}

int Document::argpack_type(const std::string& name) const {
  for (size_t i = 0; i < argpack_types.size(); ++i)
    if (argpack_types[i].name == name) return static_cast<int>(i);
  return -1;
}

}  // namespace loom::graph
