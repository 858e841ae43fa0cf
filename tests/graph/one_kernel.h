// Node tests in a few lines: a document of one kernel "k" built from nodes, launched once on
// a fresh program (the default backend: the CPU, or Vulkan in a BOTH_BACKENDS suite's
// `.vulkan` run), no offline cache.
#pragma once

#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "compiler/graph/document.h"
#include "compiler/graph/graph_builder.h"
#include "engine_plugin/include/loom/program.h"

namespace loom::test {

// Kernel "k": `nodes` over parameters `params`, returning `returns`; `path` names the
// document in error messages.
inline graph::Document one_kernel(std::string path, std::vector<graph::KernelParam> params,
                                  std::vector<std::string> returns,
                                  std::initializer_list<graph::build::N> nodes) {
  graph::Document doc;
  doc.path = std::move(path);
  graph::KernelDecl k = graph::build::kernel("k", std::move(params), nodes);
  k.returns = std::move(returns);
  doc.kernels.push_back(std::move(k));
  return doc;
}

// One launch of kernel "k"; `debug` compiles assertions and bounds checks in.
inline KernelResult run_one_kernel(graph::Document doc, const Args& args, bool debug = false) {
  ProgramOptions o;
  o.offline_cache = false;
  o.debug = debug;
  Program p(o);
  p.load(std::move(doc));
  return p.launch("k", args);
}

}  // namespace loom::test
