// The arguments a pipeline launch takes, as the inspector lists them and the launch edits
// check them: a kernel's parameters; for its adjoint "K.grad" or tangent kernel "K.dual"
// (docs/autodiff.md) K's parameters, then the twins, which a launch may leave out (the
// program binds each to the companion of what its parameter is given).
#pragma once

#include <string>
#include <vector>

#include "compiler/graph/document.h"

namespace loom::editor {

struct LaunchParam {
  graph::KernelParam param;  // its name, and what its argument must be (kind, type, dims)
  bool twin = false;         // optional: left out, the launch binds the default
};

// The kernel a launch of `kernel` runs: the kernel of that name, or K for "K.grad" and
// "K.dual" (*suffix: ".grad" / ".dual", else ""). Null when there is none.
const graph::KernelDecl* launched_kernel(const graph::Document& doc, const std::string& kernel,
                                         std::string* suffix = nullptr);

// Whether a launch of `launch` runs kernel `kernel` or one of its derivatives.
bool launches_kernel(const std::string& launch, const std::string& kernel);

// K's parameters, then for "K.grad" / "K.dual" the twins: PARAM.grad / .dual of each ndarray
// parameter, PARAM.PATH.grad / .dual of each float ndarray an argpack parameter holds, and for
// ".dual" the direction of each float value parameter and argpack parameter (PARAM.dual).
// Empty when `kernel` names no kernel.
std::vector<LaunchParam> launch_params(const graph::Document& doc, const std::string& kernel);

// The launches the inspector offers for `kernel`: "K", "K.grad", "K.dual".
std::vector<std::string> launch_choices(const graph::KernelDecl& kernel);

}  // namespace loom::editor
