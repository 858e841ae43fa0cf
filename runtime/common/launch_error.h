// What a kernel reported through its LaunchError record (debug bounds checks, assertions),
// as a message naming the resource, dimension and index: shared by every device.
#pragma once

#include <string>
#include <vector>

#include "runtime/common/kernel_abi.h"

namespace loom {

// "" when error.code is 0.
std::string describe_launch_error(const KernelABI& abi,
                                  const std::vector<std::string>& assert_messages,
                                  const LaunchError& error);
// Throws a loom::Error naming the kernel and node when error.code is not 0.
void throw_if_launch_failed(const KernelABI& abi, const std::vector<std::string>& assert_messages,
                            const LaunchError& error);

}  // namespace loom
