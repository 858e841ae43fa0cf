// LoomArgument checked against what it is given to (a kernel parameter or an argpack
// member) and written: the one place that turns the C ABI's tagged values into launches.
#pragma once

#include <loom/loom.h>

#include <string>

#include "engine_plugin/c_api/handles.h"

namespace loom::capi {

// Checks and binds `args` (one per parameter) into the kernel's launch frame. Throws
// ApiError with the code of the first mismatch, naming the kernel and parameter.
void bind_arguments(KernelObject& kernel, uint32_t count, const LoomArgument* args);
// Checks `a` against parameter `param` of `abi` (a kernel of `module`) as bind_arguments
// does, and returns it as a pipeline run takes it (loom_pipeline_launch_with). Throws ApiError
// with the code of the mismatch, naming `where` and `what`.
aot::PipelineArgument pipeline_argument(ModuleObject& module, const KernelABI& abi, int param,
                                        const LoomArgument& a, const Place& where,
                                        const std::string& what);
// Writes `value` into member `path` of `pack` (of `module`) and records what the member
// refers to (MemberRef), releasing what it referred to before.
void set_member(ArgpackObject& pack, const std::string& path, const LoomArgument& value);
// Reads value member `path`.
LoomArgument get_member(const ArgpackObject& pack, const std::string& path);

}  // namespace loom::capi
