// Compiled as part of loom_ir, which links only runtime/common: the Vulkan runtime's header
// must not be on its include path (test include_path_refuses_forbidden).
#include "runtime/vulkan/vulkan_device.h"
