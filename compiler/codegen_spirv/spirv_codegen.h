// Offloaded, lowered kernel IR -> one SPIR-V compute shader per task (runtime/common/
// spirv_kernel.h says what the runtime may rely on). Every module is checked by the
// SPIRV-Tools validator before it is returned.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/common/spirv_kernel.h"

namespace loom::ir {
class Kernel;
}

namespace loom::codegen {

// What the code may use: the device's features and limits.
struct SpirvTarget {
  // SpirvRequirement bits the device supports; with kNeedSubgroupArithmetic (and SPIR-V 1.3+)
  // parallel reductions of 32-bit values combine through subgroup operations.
  uint32_t features = kAllSpirvRequirements;
  uint32_t max_push_constant_bytes = 128;
  uint32_t workgroup_size = 128;           // local size of range and struct tasks
  std::string device_name = "the device";  // for error messages
  bool optimize = false;                   // SPIRV-Tools' performance passes (spirv-opt -O)
  // With `optimize`: these spirv-opt passes (their flags, "--ccp") in this order instead of
  // the whole performance set, to measure them one by one (loom_vulkan_bench --spirv-passes).
  std::vector<std::string> optimizer_passes;
  // The SPIR-V version to write: kSpirv1_5 for Vulkan 1.2 devices, kSpirv1_3 for Vulkan 1.1,
  // kSpirv1_0 for Vulkan 1.0 (max_spirv_version of the device's API version; an engine's device
  // may be any). SPIR-V 1.0 declares storage buffers as Uniform BufferBlocks (no extension) and
  // uses only kSpirv1_0Requirements of `features`.
  uint32_t spirv_version = kSpirv1_5;
  // The device's limit on the loop iterations of one invocation, all its loops together, past
  // which the driver leaves loops without a word (loop_iteration_limit() below); 0: none.
  // With a limit, every loop that could reach it checks how it was left: one the driver cut
  // short ends the launch with an error naming the loop's node (LaunchError code
  // kLaunchLoopCut), never a different number. Without one the loops are emitted plain.
  uint32_t loop_iteration_limit = 0;
};

// The loop limit of a Vulkan device by its vendor id and name: 65535 on llvmpipe (lavapipe,
// Mesa's LP_MAX_TGSI_LOOP_ITERATIONS); 0 (none) on every other device.
uint32_t loop_iteration_limit(uint32_t vendor_id, const std::string& device_name);

struct SpirvTimings {
  double emit_ms = 0;      // IR -> SPIR-V words
  double validate_ms = 0;  // SPIRV-Tools validator
  double optimize_ms = 0;  // spirv-opt, when asked for
};

struct CompiledSpirvKernel {
  KernelABI abi;  // with `tasks` filled (kinds and dims; symbol "main")
  SpirvKernel kernel;
  std::vector<std::string> notes;  // precision notes ("f64 sin is computed at f32 precision")
};

// `kernel` must pass ir::verify(kernel, {.offloaded = true, .lowered = true}) and should be
// lowered with index_bits = 32. Throws loom::Error naming the kernel (and node) when it
// needs a feature the target lacks, or uses what the backend cannot express.
CompiledSpirvKernel compile_kernel_to_spirv(const ir::Kernel& kernel,
                                            const SpirvTarget& target = {},
                                            SpirvTimings* timings = nullptr);

}  // namespace loom::codegen
