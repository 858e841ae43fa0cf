#include "compiler/passes/pipeline.h"

#include <chrono>

#include "compiler/ir/inst.h"
#include "compiler/ir/verifier.h"
#include "compiler/passes/access_rule.h"
#include "compiler/passes/demote_atomics.h"
#include "compiler/passes/drop_asserts.h"
#include "compiler/passes/extent_assumptions.h"
#include "compiler/passes/full_simplify.h"
#include "compiler/passes/licm.h"
#include "compiler/passes/lower_access.h"
#include "compiler/passes/offload.h"
#include "compiler/passes/privatize_scatter.h"
#include "compiler/passes/resource_access.h"
#include "compiler/passes/twin_slots.h"
#include "compiler/passes/type_check.h"

namespace loom::passes {

namespace {

struct Stage {
  const char* name;
  // Both null: full_simplify, which verifies after each sub-pass.
  bool (*run)(ir::Kernel&);
  bool (*run_with_options)(ir::Kernel&, const PipelineOptions&);
  ir::VerifyOptions verify;  // what must hold after it
};

// Moves parameters [first, first + count) of `k` to the end, keeping their order and the
// order of the others (resource slots and argument loads follow).
void move_params_last(ir::Kernel& k, size_t first, size_t count) {
  const size_t n = k.abi.params.size();
  if (count == 0 || first + count >= n) return;
  std::vector<int> to(n);
  for (size_t i = 0; i < n; ++i)
    to[i] = static_cast<int>(i < first           ? i
                             : i < first + count ? n - count + (i - first)
                                                 : i - count);
  std::vector<ParamDesc> params(n);
  for (size_t i = 0; i < n; ++i) params[static_cast<size_t>(to[i])] = std::move(k.abi.params[i]);
  k.abi.params = std::move(params);
  for (ResourceDesc& r : k.abi.resources)
    if (r.param >= 0) r.param = to.at(static_cast<size_t>(r.param));
  ir::walk(*k.body, [&](ir::Inst& in) {
    if (in.op == ir::Op::ArgLoad) in.set_param_index(to.at(static_cast<size_t>(in.param_index())));
  });
}

// The kernel becomes its adjoint or its tangent kernel when the options ask for it.
bool autodiff(ir::Kernel& kernel, const PipelineOptions& options) {
  std::unique_ptr<ir::Kernel> derived;
  if (options.adjoint) {
    // The global data access rule (access_rule.h): proven violations throw; debug kernels
    // get the rest checked at run time.
    AdjointOptions adjoint = *options.adjoint;
    adjoint.stack_size = options.ad_stack_size;
    if (adjoint.slot_has_adjoint.empty())  // the default, decided before shadow slots join
      adjoint.slot_has_adjoint = default_twin_slots(kernel.abi);
    const size_t own = kernel.abi.params.size();
    AccessRuleChecks checks = check_access_rule(kernel, options.access_shadows);
    const size_t shadows = kernel.abi.params.size() - own;
    derived = make_adjoint(kernel, adjoint);
    add_access_rule_asserts(*derived);
    add_access_rule_shadows(*derived, kernel, checks);
    // K's parameters, its twins, then the shadows: a launcher binds K's and may bind the
    // twins; the shadows are always the runtime's own (access_rule.h).
    move_params_last(*derived, own, shadows);
  } else if (options.tangent)
    derived = make_tangent(kernel, *options.tangent);
  else
    return false;
  kernel.abi = std::move(derived->abi);
  kernel.body = std::move(derived->body);
  kernel.var_origins.clear();  // they name the primal's variables
  return true;
}

// The pass order; this list is the one place it is written down (READMEs and
// docs/ARCHITECTURE.md point here). Why this order: debug-only checks leave first when not
// debugging (their conditions then die with everything else unused); types next, so every
// later pass sees well-typed IR. Simplifying before LICM folds and shares values so fewer
// (and bigger) invariants move, and the second simplify cleans up what hoisting exposed. LICM
// runs before offloading so that values hoisted out of top-level loops become uniform
// top-level values every task can use, instead of per-iteration work. Offloading comes before
// access lowering so the resource shapes and strides it creates land once at the (uniform)
// top level. Atomics are demoted after offloading, because only then is it known which code
// runs serially. The last simplify folds and shares the address arithmetic that lowering
// leaves and forwards the demoted atomics. Scatters are privatized last, on the final
// addresses (CPU targets only; it marks element_ptrs and changes nothing else). Autodiff
// (when asked for) works on typed, simplified IR with the kernel's loops still in place, and
// everything after it optimises the adjoint as it would any kernel.
constexpr ir::VerifyOptions kPlain{};
constexpr ir::VerifyOptions kOffloaded{.offloaded = true};
constexpr ir::VerifyOptions kLowered{.offloaded = true, .lowered = true};
// Before type_check the IR may mix operand types (type_check inserts the conversions).
constexpr ir::VerifyOptions kUntyped{.types = false};

const Stage kStages[] = {
    {"drop_asserts", drop_asserts, nullptr, kUntyped},
    {"type_check", type_check, nullptr, kPlain},
    {"full_simplify", nullptr, nullptr, kPlain},
    {"autodiff", nullptr, autodiff, kPlain},
    {"licm", licm, nullptr, kPlain},
    {"full_simplify", nullptr, nullptr, kPlain},
    {"offload", offload, nullptr, kOffloaded},
    {"lower_access", lower_access, nullptr, kLowered},
    {"demote_atomics", demote_atomics, nullptr, kLowered},
    {"full_simplify", nullptr, nullptr, kLowered},
    {"privatize_scatter", privatize_scatter, nullptr, kLowered},
};

// Runs one stage (full_simplify verifies its sub-passes); `simplify_runs` counts
// full_simplify's runs.
void run_stage(ir::Kernel& kernel, const Stage& stage, const PipelineOptions& options,
               int& simplify_runs) {
  if (stage.run) {
    stage.run(kernel);
  } else if (stage.run_with_options) {
    stage.run_with_options(kernel, options);
  } else {
    SimplifyOptions so;
    so.name =
        ++simplify_runs == 1 ? "full_simplify" : "full_simplify#" + std::to_string(simplify_runs);
    so.verify = options.verify ? &stage.verify : nullptr;
    full_simplify(kernel, so);
  }
}

// The checks after each stage.
void verify_stage(ir::Kernel& kernel, const Stage& stage, const PipelineOptions& options) {
  if (options.verify) ir::verify_or_throw(kernel, stage.name, stage.verify);
  kernel.free_erased();  // after the check, which reports uses of them
}

}  // namespace

void run_pipeline(ir::Kernel& kernel, const PipelineOptions& options,
                  const PassObserver& after_each, std::vector<PassTiming>* timings) {
  kernel.debug = options.debug;
  if (options.verify) ir::verify_or_throw(kernel, "lowering (the pipeline's input)", kUntyped);
  int simplify_runs = 0;
  for (const Stage& stage : kStages) {
    auto start = std::chrono::steady_clock::now();
    run_stage(kernel, stage, options, simplify_runs);
    auto end = std::chrono::steady_clock::now();
    if (timings)
      timings->push_back(
          {stage.name, std::chrono::duration<double, std::milli>(end - start).count()});
    verify_stage(kernel, stage, options);
    if (after_each) after_each(stage.name, kernel);
  }
  // From the final IR, so only the accesses the generated code makes count. Extents first:
  // it reads the argpack member names lowering left in the resource access list.
  record_extent_assumptions(kernel);
  record_resource_access(kernel);
}

std::vector<std::string> pipeline_pass_names() {
  std::vector<std::string> names;
  for (const Stage& stage : kStages) names.emplace_back(stage.name);
  return names;
}

std::vector<GradientWarning> gradient_warnings(ir::Kernel& kernel, const PipelineOptions& options) {
  if (!options.adjoint) return {};
  kernel.debug = options.debug;
  if (options.verify) ir::verify_or_throw(kernel, "lowering (the pipeline's input)", kUntyped);
  int simplify_runs = 0;
  for (const Stage& stage : kStages) {
    if (stage.run_with_options == autodiff) break;
    run_stage(kernel, stage, options, simplify_runs);
    verify_stage(kernel, stage, options);
  }
  std::vector<GradientWarning> warnings = gradient_reach(kernel, options.adjoint->slot_has_adjoint);
  check_access_rule(kernel);  // as the autodiff stage would
  return warnings;
}

}  // namespace loom::passes
