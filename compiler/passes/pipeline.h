// The pass pipeline: the one place the pass order lives (see README.md).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/passes/autodiff.h"
#include "compiler/passes/forward_mode.h"
#include "compiler/passes/gradient_reach.h"

namespace loom::ir {
class Kernel;
}

namespace loom::passes {

struct PipelineOptions {
  bool debug = false;  // bounds checks and assertions compiled in (sets Kernel::debug)
  // Set: the pipeline turns the kernel into its adjoint (the `autodiff` stage, make_adjoint)
  // after the first simplification, and optimises that.
  std::optional<AdjointOptions> adjoint;
  // Set (and `adjoint` not): the `autodiff` stage turns the kernel into its tangent kernel
  // (make_tangent, forward mode) instead.
  std::optional<TangentOptions> tangent;
  // With `adjoint`: entries of each per-thread autodiff stack (AdjointOptions::stack_size).
  int ad_stack_size = 256;
  // With `adjoint` in a debug kernel: the program binds shadows (the field NAME.written, of
  // NAME's type and shape; for an ndarray parameter P, P.written to a shadow of P's ndarray)
  // to the slots check_access_rule adds, so reads in a later loop of what an earlier loop
  // wrote are checked at run time too (access_rule.h).
  bool access_shadows = false;
  // ir::verify_or_throw on the input (structure only: types are type_check's job), after
  // every pass, and inside full_simplify after every sub-pass; failures name the (sub-)pass.
  bool verify = true;
};

using PassObserver = std::function<void(std::string_view pass, ir::Kernel&)>;

struct PassTiming {
  std::string pass;
  double ms;
};

// Runs every pass in order on `kernel` (setting Kernel::debug from the options first),
// calling `after_each` after each one (for
// `loom ir --after PASS`) and appending one timing per pass to `timings` when given. Then
// records what the final code reads and writes (record_resource_access, resource_access.h)
// and the extents it assumes (record_extent_assumptions, extent_assumptions.h).
void run_pipeline(ir::Kernel& kernel, const PipelineOptions& options,
                  const PassObserver& after_each = {}, std::vector<PassTiming>* timings = nullptr);

// Where the adjoint that `options.adjoint` asks for gets no gradient through ops without a
// derivative (gradient_reach.h): runs the passes before `autodiff` on `kernel` (lowered), then
// the analysis; then throws, as the `autodiff` stage would, for a proven violation of the
// global data access rule (check_access_rule, access_rule.h), so `loom check` finds those
// too. Empty without `options.adjoint`.
std::vector<GradientWarning> gradient_warnings(ir::Kernel& kernel, const PipelineOptions& options);

// The pass names run_pipeline reports, in order (repeated passes appear each time).
std::vector<std::string> pipeline_pass_names();

}  // namespace loom::passes
