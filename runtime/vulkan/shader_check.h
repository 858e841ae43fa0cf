// A kernel's SPIR-V held against the pipeline Loom builds for it, before any of it reaches the
// driver. A module can be valid SPIR-V and still disagree with the kernel's metadata, from
// which Loom builds the descriptor set layout, the push-constant range and the dispatch; a
// driver handed such a pipeline may crash the host process instead of failing. So every task's
// shader (read by shader_interface.h) must have:
// - one entry point, GLCompute "main", with a workgroup size within the device's limits and
//   equal to the task's (`SpirvTask::workgroup_size` x 1 x 1);
// - only capabilities Loom's kernels use and the device was set up with, only the extensions
//   they use, only the GLSL.std.450 instruction set;
// - every resource variable at set 0 on a binding of the kernel with the descriptor that
//   binding has (images of its texture's dimensions and format, uniform blocks no larger
//   than what is bound);
// - a push-constant block only when the kernel pushes its arguments, no larger than they are;
// - no more workgroup memory than the device has.
//
// Runs for every kernel a VulkanKernel loads (JIT, offline cache, AOT module): a few
// microseconds per task. It is not the SPIR-V validator (spirv_validator.h), which modules'
// blobs also pass.
#pragma once

#include <cstddef>

#include "runtime/common/kernel_abi.h"
#include "runtime/common/spirv_kernel.h"

namespace loom::vk {

struct DeviceCaps;

// Throws loom::Error with the kernel as its place and a message naming the task and what is
// wrong: ErrorKind::Capability where the shader needs what the device lacks (a capability or
// extension, a workgroup or workgroup memory beyond its limits), ErrorKind::Corrupt for the
// rest. `code` must have passed the kernel's ABI check (its binding indices are in range).
void check_task_shader(const KernelABI& abi, const SpirvKernel& code, size_t task,
                       const DeviceCaps& caps);

}  // namespace loom::vk
