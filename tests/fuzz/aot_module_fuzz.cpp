// AOT module archives (.loommod), what an engine loads: read from bytes (framing, hashes,
// metadata). A module that reads must write back to the same metadata, and its Vulkan tasks'
// SPIR-V goes through the check against the kernel's layout (runtime/vulkan/shader_check.h).
#include <cstring>
#include <string>
#include <vector>

#include "runtime/aot/module.h"
#include "runtime/aot/module_files.h"
#include "runtime/common/error.h"
#include "runtime/common/spirv_kernel.h"
#include "runtime/vulkan/shader_check.h"
#include "runtime/vulkan/vulkan_device.h"
#include "tests/fuzz/fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace loom;
  std::vector<uint8_t> bytes(data, data + size);
  aot::Module module;
  try {
    module = aot::read_module_bytes(bytes, "fuzz.loommod");
  } catch (const Error&) {
    return 0;
  }
  std::string json = aot::metadata_to_json(module.meta);
  fuzz::require(aot::metadata_to_json(aot::metadata_from_json(json, "<written>")) == json,
                "a module's metadata does not read back as written");
  // What loading holds each Vulkan task's shader to, short of a device (and of SPIRV-Tools'
  // validator, which is not ours to fuzz).
  vk::DeviceCaps caps;
  caps.name = "fuzz device";
  caps.features = kAllSpirvRequirements;
  for (const aot::KernelInfo& k : module.meta.kernels) {
    SpirvKernel code = k.spirv;
    for (size_t t = 0; t < code.tasks.size() && t < k.spirv_blobs.size(); ++t) {
      auto blob = module.blobs.find(k.spirv_blobs[t]);
      if (blob == module.blobs.end()) continue;
      code.tasks[t].spirv.resize(blob->second.size() / 4);
      if (!code.tasks[t].spirv.empty())
        std::memcpy(code.tasks[t].spirv.data(), blob->second.data(),
                    code.tasks[t].spirv.size() * 4);
      try {
        vk::check_task_shader(k.abi, code, t, caps);
      } catch (const Error&) {
      }
    }
  }
  return 0;
}
