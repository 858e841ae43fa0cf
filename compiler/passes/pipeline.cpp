#include "compiler/passes/pipeline.h"

#include <chrono>

#include "compiler/ir/inst.h"
#include "compiler/ir/verifier.h"
#include "compiler/passes/demote_atomics.h"
#include "compiler/passes/drop_asserts.h"
#include "compiler/passes/full_simplify.h"
#include "compiler/passes/licm.h"
#include "compiler/passes/lower_access.h"
#include "compiler/passes/offload.h"
#include "compiler/passes/type_check.h"

namespace loom::passes {

namespace {

struct Stage {
  const char* name;
  bool (*run)(ir::Kernel&);  // null: full_simplify, which verifies after each sub-pass
  ir::VerifyOptions verify;  // what must hold after it
};

// Why this order: debug-only checks leave first when not debugging; types next so every
// later pass sees well-typed IR; simplify before LICM so invariant values are already folded
// and shared; LICM before offloading so hoisted values can become uniform top-level values
// instead of per-iteration work; offload before access lowering so shape values land at the
// (uniform) top level once; atomics are demoted after offloading because only then is it
// known which code runs serially; a last simplify cleans up the address arithmetic and
// demoted atomics.
constexpr ir::VerifyOptions kPlain{};
constexpr ir::VerifyOptions kOffloaded{.offloaded = true};
constexpr ir::VerifyOptions kLowered{.offloaded = true, .lowered = true};
// Before type_check the IR may mix operand types (type_check inserts the conversions).
constexpr ir::VerifyOptions kUntyped{.types = false};

const Stage kStages[] = {
    {"drop_asserts", drop_asserts, kUntyped},
    {"type_check", type_check, kPlain},
    {"full_simplify", nullptr, kPlain},
    {"licm", licm, kPlain},
    {"full_simplify", nullptr, kPlain},
    {"offload", offload, kOffloaded},
    {"lower_access", lower_access, kLowered},
    {"demote_atomics", demote_atomics, kLowered},
    {"full_simplify", nullptr, kLowered},
};

}  // namespace

void run_pipeline(ir::Kernel& kernel, const PipelineOptions& options, const PassObserver& after_each,
                  std::vector<PassTiming>* timings) {
  kernel.debug = options.debug;
  if (options.verify) ir::verify_or_throw(kernel, "lowering (the pipeline's input)", kUntyped);
  int simplify_runs = 0;
  for (const Stage& stage : kStages) {
    auto start = std::chrono::steady_clock::now();
    if (stage.run) {
      stage.run(kernel);
    } else {
      SimplifyOptions so;
      so.name = ++simplify_runs == 1 ? "full_simplify" : "full_simplify#" + std::to_string(simplify_runs);
      so.verify = options.verify ? &stage.verify : nullptr;
      full_simplify(kernel, so);
    }
    auto end = std::chrono::steady_clock::now();
    if (timings)
      timings->push_back({stage.name, std::chrono::duration<double, std::milli>(end - start).count()});
    if (options.verify) ir::verify_or_throw(kernel, stage.name, stage.verify);
    if (after_each) after_each(stage.name, kernel);
  }
}

std::vector<std::string> pipeline_pass_names() {
  std::vector<std::string> names;
  for (const Stage& stage : kStages) names.emplace_back(stage.name);
  return names;
}

}  // namespace loom::passes
