#include "runtime/common/launch_error.h"

#include "runtime/common/error.h"

namespace loom {

std::string describe_launch_error(const KernelABI& abi,
                                  const std::vector<std::string>& assert_messages,
                                  const LaunchError& e) {
  if (e.code == 0) return "";
  if (e.code == 2) {
    if (e.index >= 0 && static_cast<size_t>(e.index) < assert_messages.size() &&
        !assert_messages[static_cast<size_t>(e.index)].empty())
      return "assertion failed: " + assert_messages[static_cast<size_t>(e.index)];
    return "assertion failed";
  }
  if (e.code == kLaunchLoopCut)
    return "the device ended this loop early: it runs at most " + std::to_string(e.index) +
           " loop iterations per invocation, all loops of a task together (llvmpipe's "
           "limit), so the result would be wrong; run the kernel on the CPU or on another "
           "Vulkan device, or split the loop across launches";
  std::string what = "index out of bounds";
  if (e.code != 1) what = "launch error " + std::to_string(e.code);
  // Slot -1: the index of a local array (dim 0) or of an element node (dim 0: i, 1: j).
  if (e.slot == -1)
    return what + ": local array or vector index " + (e.dim == 1 ? "j" : "i") + " = " +
           std::to_string(e.index) + " not in [0, " + std::to_string(e.extent) + ")";
  std::string slot = "slot " + std::to_string(e.slot);
  if (e.slot >= 0 && static_cast<size_t>(e.slot) < abi.resources.size()) {
    const ResourceDesc& r = abi.resources[static_cast<size_t>(e.slot)];
    if (r.kind == ResourceKind::Field && !r.field.empty())
      slot += " (field '" + r.field + "')";
    else if (r.param >= 0 && static_cast<size_t>(r.param) < abi.params.size())
      slot += " (parameter '" + abi.params[static_cast<size_t>(r.param)].name + "')";
  }
  return what + ": " + slot + ", dim " + std::to_string(e.dim) + ", index " +
         std::to_string(e.index) + " not in [0, " + std::to_string(e.extent) + ")";
}

void throw_if_launch_failed(const KernelABI& abi, const std::vector<std::string>& assert_messages,
                            const LaunchError& error) {
  if (error.code == 0) return;
  Place place;
  place.kernel = abi.name;
  place.node = error.node;
  throw Error(place, describe_launch_error(abi, assert_messages, error));
}

}  // namespace loom
