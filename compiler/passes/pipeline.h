// The pass pipeline: the one place the pass order lives (see README.md).
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace loom::ir {
class Kernel;
}

namespace loom::passes {

struct PipelineOptions {
  bool debug = false;   // bounds checks in lowered accesses (sets Kernel::debug)
  bool verify = true;   // ir::verify_or_throw after every pass
};

using PassObserver = std::function<void(std::string_view pass, ir::Kernel&)>;

struct PassTiming {
  std::string pass;
  double ms;
};

// Runs every pass in order on `kernel`, calling `after_each` after each one (for
// `loom ir --after PASS`) and appending one timing per pass to `timings` when given.
void run_pipeline(ir::Kernel& kernel, const PipelineOptions& options,
                  const PassObserver& after_each = {}, std::vector<PassTiming>* timings = nullptr);

// The pass names run_pipeline reports, in order (repeated passes appear each time).
std::vector<std::string> pipeline_pass_names();

}  // namespace loom::passes
