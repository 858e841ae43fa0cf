// Lowering of one kernel of a graph document to the scalar kernel IR: type inference
// through pins (Taichi's implicit conversions), vectors and matrices split into components,
// regions to IR regions, function calls inlined, template parameters bound.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "compiler/graph/document.h"

namespace loom::ir {
class Kernel;
}

namespace loom::graph {

// A compile-time binding: a template parameter's field or constant, or the element type and
// dimensions of an ndarray bound to a parameter that leaves them open ("type" omitted).
struct TemplateArg {
  enum class Kind { Field, Int, Float, Bool, Ndarray } kind = Kind::Int;
  std::string field;  // Field: the field's name; Ndarray: the element type ("f32x3")
  int64_t i = 0;      // Int: the value; Ndarray: the dimensions
  double f = 0;
  bool b = false;
};

struct TemplateArgs {
  std::vector<std::pair<std::string, TemplateArg>> values;
  // Every ndarray parameter is bound to an ndarray of its own (the JIT sees the launch's
  // arguments): the code may assume no two of them overlap (ir::Kernel::distinct_ndarrays).
  bool distinct_ndarrays = false;

  const TemplateArg* find(const std::string& name) const;
  void set(const std::string& name, TemplateArg arg);
  // Canonical text, sorted by name: "n=i:3,src=field:x" ("" for no arguments).
  std::string signature() const;
  // What tells instantiations apart: the signature and whether ndarrays are distinct.
  std::string key() const { return signature() + (distinct_ndarrays ? "|distinct" : ""); }
};

// One value a kernel returns, as the return node's pin names it. A struct return (an argpack
// type of kind "struct") is flattened into its value members in declaration order, nested
// structs included: returns ["f32", "S"] give "r0", "r1.a", "r1.inner.x"...
struct ReturnValue {
  std::string name;
  ValueType type;
};

// The flattened returns of `kernel`. Throws loom::Error naming the document and kernel for
// an unknown type, an argpack (kind "pack"), or a struct holding a pack or a resource.
std::vector<ReturnValue> kernel_returns(const Document& doc, const KernelDecl& kernel);

// A scratch kernel calling function `f` with its inputs as value parameters: how a function
// is lowered (and its types checked) on its own, called or not.
KernelDecl function_probe(const FunctionDecl& f);

// Lowers `kernel` of `doc`. Throws loom::Error naming the node and pin of the first problem
// (unknown node or pin, type mismatch, missing template argument, ...). The result passes
// ir::verify() and is not offloaded.
std::unique_ptr<ir::Kernel> lower_kernel(const Document& doc, const std::string& kernel,
                                         const TemplateArgs& args = {});
// The same for a kernel of `doc` the caller holds: no search by name, so lowering every kernel
// of a document of many kernels stays linear in its size.
std::unique_ptr<ir::Kernel> lower_kernel(const Document& doc, const KernelDecl& kernel,
                                         const TemplateArgs& args = {});

}  // namespace loom::graph
