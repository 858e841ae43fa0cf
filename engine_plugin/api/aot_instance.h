// One instantiation lowered for an AOT module: what Program::lower_for_module hands to the
// module builder (aot_module.cpp), which compiles it for the module's target.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "compiler/ir/inst.h"
#include "engine_plugin/include/loom/program.h"
#include "runtime/aot/module.h"

namespace loom {

struct AotInstance {
  std::unique_ptr<ir::Kernel> ir;                    // offloaded, lowered, optimised
  std::vector<aot::TemplateArgument> template_args;  // sorted by parameter
  std::vector<std::string> return_names;
  // K.grad / K.dual: which derivative of kernel `primal`, and the arguments with each twin
  // bound (PARAM.grad to the companion of the ndarray bound to PARAM, as Program::launch binds).
  aot::Derivation::Mode derived = aot::Derivation::Mode::None;
  std::string primal;
  Args args;
};

}  // namespace loom
