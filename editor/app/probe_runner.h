// Runs probes (editor/model/probe.h) for the editor: the value of one output pin for every
// thread of its kernel, computed on the live program's current data. The probe's program is
// compiled once per (program, kernel, pin) on the CPU; each run copies the live fields and
// ndarrays into it (host copies of a Vulkan program), launches the probe kernel and reads the
// probe field back. The live program is only read.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "compiler/graph/document.h"
#include "editor/model/graph_ref.h"
#include "engine_plugin/include/loom/program.h"

namespace loom::editor {

struct ProbeValues {
  std::string kernel;
  PinRef pin;
  ValueType type;
  std::vector<int64_t> shape;  // the probed loop's extents ([1] outside any loop)
  std::vector<double> values;  // C order, components innermost
  std::string error;           // why there are none ("" when there are)
};

class ProbeRunner {
 public:
  // The pin's values now. Never throws: a failure is in the result's `error`.
  const ProbeValues& run(const graph::Document& doc, Program& live, const std::string& kernel,
                         const PinRef& pin);
  const ProbeValues& last() const { return result_; }

 private:
  std::string key_;  // what program_ was made for
  std::unique_ptr<Program> program_;
  ProbeValues result_;
};

}  // namespace loom::editor
