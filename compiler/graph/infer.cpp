#include "compiler/graph/infer.h"

#include "compiler/graph/lower.h"
#include "compiler/graph/lowerer.h"
#include "runtime/common/error.h"

namespace loom::graph {

std::string pin_value_text(const PinValue& v) {
  switch (v.kind) {
    case PinValue::Kind::Ref: return "ref " + value_type_name(v.type);
    case PinValue::Kind::Array: return "array of " + value_type_name(v.type);
    case PinValue::Kind::Texture: return "texture";
    case PinValue::Kind::Value: break;
  }
  return value_type_name(v.type) + (v.literal ? " literal" : "");
}

const PinValue* GraphTypes::output(int node, const std::string& pin) const {
  auto it = outputs.find(node);
  if (it == outputs.end()) return nullptr;
  for (const auto& [name, v] : it->second)
    if (name == pin) return &v;
  return nullptr;
}

const NodeProblem* GraphTypes::problem_of(int node) const {
  for (const NodeProblem& p : problems)
    if (p.node == node) return &p;
  return nullptr;
}

namespace {

// Template arguments of the first launch of `k` (resource names become fields or open
// ndarrays, numbers constants), as validate_document binds them.
TemplateArgs first_launch_args(const Document& doc, const KernelDecl& k) {
  TemplateArgs targs;
  for (const Pipeline& pipe : doc.pipelines)
    for (const Launch& launch : pipe.launches) {
      if (launch.kernel != k.name) continue;
      for (const KernelParam& p : k.params) {
        const Literal* arg = nullptr;
        for (const auto& [name, a] : launch.args)
          if (name == p.name) arg = &a;
        if (!arg) continue;
        TemplateArg a;
        if (p.kind == ParamKind::Ndarray && p.type.empty()) {
          const NdarrayDecl* nd =
              arg->kind == Literal::Kind::String ? doc.ndarray(arg->s) : nullptr;
          if (!nd) continue;
          a.kind = TemplateArg::Kind::Ndarray;
          a.field = value_type_name(nd->elem);
          a.i = static_cast<int64_t>(nd->shape.size());
        } else if (p.kind != ParamKind::Template) {
          continue;
        } else if (arg->kind == Literal::Kind::String) {
          a.kind = TemplateArg::Kind::Field;
          a.field = arg->s;
        } else if (arg->kind == Literal::Kind::Int) {
          a.i = arg->i;
        } else if (arg->kind == Literal::Kind::Float) {
          a.kind = TemplateArg::Kind::Float;
          a.f = arg->f;
        } else if (arg->kind == Literal::Kind::Bool) {
          a.kind = TemplateArg::Kind::Bool;
          a.b = arg->b;
        } else {
          continue;
        }
        targs.set(p.name, a);
      }
      return targs;
    }
  return targs;
}

}  // namespace

GraphTypes infer_graph_types(const Document& doc, const std::string& graph, bool function) {
  GraphTypes out;
  KernelDecl probe;
  const KernelDecl* kernel = nullptr;
  TemplateArgs targs;
  if (function) {
    const FunctionDecl* f = doc.function(graph);
    if (!f) {
      out.problems.push_back({-1, "", "the document has no function '" + graph + "'"});
      return out;
    }
    probe = function_probe(*f);
    kernel = &probe;
  } else {
    kernel = doc.kernel(graph);
    if (!kernel) {
      out.problems.push_back({-1, "", "the document has no kernel '" + graph + "'"});
      return out;
    }
    targs = first_launch_args(doc, *kernel);
  }
  try {
    detail::Lowerer lowerer(doc, *kernel, targs, function);
    lowerer.record_into(&out, graph, function);
    lowerer.run();
  } catch (const Error& e) {
    // Not about one node of the graph (parameters, a function's unset output...). When
    // nodes failed already, this is most likely their consequence.
    if (out.problems.empty()) {
      bool here = e.place().kernel == graph && e.place().function == function;
      out.problems.push_back({here ? e.place().node : -1, e.place().pin, e.message()});
    }
  } catch (const detail::PoisonedInput&) {
  }
  return out;
}

}  // namespace loom::graph
