// What a kernel reported through its LaunchError record (debug bounds checks, assertions),
// as a message naming the resource, dimension and index: shared by every device.
#pragma once

#include <string>
#include <vector>

#include "runtime/common/kernel_abi.h"

namespace loom {

// LaunchError::code of a loop the device ended early (1: out of bounds, 2: assertion, 3: a
// cancelled launch on the CPU). `index` holds the device's limit on loop iterations.
constexpr int32_t kLaunchLoopCut = 4;

// "" when error.code is 0.
std::string describe_launch_error(const KernelABI& abi,
                                  const std::vector<std::string>& assert_messages,
                                  const LaunchError& error);
// Throws a loom::Error naming the kernel and node when error.code is not 0.
void throw_if_launch_failed(const KernelABI& abi, const std::vector<std::string>& assert_messages,
                            const LaunchError& error);

}  // namespace loom
