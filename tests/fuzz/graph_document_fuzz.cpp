// Graph documents (.loom.json), the editor's and the CLI's input: parse, check the canonical
// text round-trips, type every graph the way the editor does, validate (which lowers every
// kernel), then run the pass pipeline on each kernel that needs no template arguments.
#include <string>
#include <string_view>

#include "compiler/graph/document_json.h"
#include "compiler/graph/infer.h"
#include "compiler/graph/lower.h"
#include "compiler/graph/validate.h"
#include "compiler/ir/inst.h"
#include "compiler/passes/pipeline.h"
#include "runtime/common/error.h"
#include "tests/fuzz/fuzz_target.h"

namespace {

using namespace loom;

// Saving is canonical: a saved document loads back to the same text.
void check_round_trip(const graph::Document& doc) {
  std::string saved = graph::save_document(doc);
  graph::Document again = graph::load_document(saved, "<saved>");
  fuzz::require(graph::save_document(again) == saved, "load(save(doc)) saves differently");
}

// The editor types graphs that fail validation: infer_graph_types never throws.
void infer_every_graph(const graph::Document& doc) {
  for (const graph::KernelDecl& k : doc.kernels) graph::infer_graph_types(doc, k.name, false);
  for (const graph::FunctionDecl& f : doc.functions) graph::infer_graph_types(doc, f.name, true);
}

void compile_kernels(const graph::Document& doc) {
  for (const graph::KernelDecl& k : doc.kernels) {
    try {
      auto kernel = graph::lower_kernel(doc, k.name);
      passes::run_pipeline(*kernel, passes::PipelineOptions{});
    } catch (const Error&) {
      // A template kernel without arguments; code the pipeline refuses with a message.
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  graph::Document doc;
  try {
    doc = graph::load_document(text, "fuzz.loom.json");
  } catch (const Error&) {
    return 0;
  }
  check_round_trip(doc);
  infer_every_graph(doc);
  try {
    graph::validate_document(doc);
  } catch (const Error&) {
    return 0;
  }
  compile_kernels(doc);
  return 0;
}
