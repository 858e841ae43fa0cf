#include "compiler/graph/document.h"

namespace loom::graph {

namespace {
template <typename T>
const T* find_named(const std::vector<T>& items, const std::string& name) {
  for (const T& item : items)
    if (item.name == name) return &item;
  return nullptr;
}
}  // namespace

const Literal* Node::param(const std::string& name) const {
  for (const auto& [key, value] : params)
    if (key == name) return &value;
  return nullptr;
}

const Input* Node::input(const std::string& pin) const {
  for (const Input& in : inputs)
    if (in.pin == pin) return &in;
  return nullptr;
}

const KernelDecl* Document::kernel(const std::string& name) const { return find_named(kernels, name); }
const FunctionDecl* Document::function(const std::string& name) const { return find_named(functions, name); }
const FieldDesc* Document::field(const std::string& name) const { return find_named(fields, name); }
const NdarrayDecl* Document::ndarray(const std::string& name) const { return find_named(ndarrays, name); }
const TextureDecl* Document::texture(const std::string& name) const { return find_named(textures, name); }
const ArgpackDecl* Document::argpack(const std::string& name) const { return find_named(argpacks, name); }
const Pipeline* Document::pipeline(const std::string& name) const { return find_named(pipelines, name); }

int Document::argpack_type(const std::string& name) const {
  for (size_t i = 0; i < argpack_types.size(); ++i)
    if (argpack_types[i].name == name) return static_cast<int>(i);
  return -1;
}

}  // namespace loom::graph
