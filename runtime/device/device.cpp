#include "runtime/device/device.h"

#include "runtime/common/abi_serialize.h"
#include "runtime/common/error.h"
#include "runtime/common/spirv_kernel.h"

namespace loom {

std::shared_ptr<DeviceKernel> Device::load(const KernelRecord& record) {
  switch (kind()) {
    case DeviceKind::Cpu: return load_object(record.abi, record.code);
    case DeviceKind::Vulkan:
      return load_spirv(record.abi,
                        deserialize_spirv_kernel(record.code, "kernel '" + record.abi.name + "'"));
  }
  throw Error(Place{"", record.abi.name}, "kernel '" + record.abi.name + "': unknown device kind");
}

}  // namespace loom
