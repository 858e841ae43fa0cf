#include "editor/model/diagnostics.h"

#include "runtime/common/error.h"

namespace loom::editor {

Diagnostic diagnostic_from(const Error& e, Diagnostic::Severity severity) {
  Diagnostic d;
  d.graph = GraphRef{e.place().kernel, e.place().function};
  d.node = e.place().node;
  d.pin = e.place().pin;
  d.message = e.message();
  d.severity = severity;
  return d;
}

std::vector<const Diagnostic*> diagnostics_of(const std::vector<Diagnostic>& all, const GraphRef& g,
                                              int node) {
  std::vector<const Diagnostic*> out;
  for (const Diagnostic& d : all)
    if (d.graph == g && d.node == node) out.push_back(&d);
  return out;
}

}  // namespace loom::editor
