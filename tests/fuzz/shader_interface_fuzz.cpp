// SPIR-V words as an AOT module's blob or an offline-cache entry brings them: the interface
// reader (runtime/vulkan/shader_interface.h), then the check of a task's shader against a
// kernel layout of every binding kind on a device described by its DeviceCaps (shader_check.h;
// corpus/shader_interface/probe*.spv have exactly that layout, so mutations of them get past
// the first mismatch). Both must refuse with loom::Error, whatever the words.
#include <cstring>
#include <vector>

#include "runtime/common/error.h"
#include "runtime/common/kernel_abi.h"
#include "runtime/common/spirv_kernel.h"
#include "runtime/vulkan/shader_check.h"
#include "runtime/vulkan/shader_interface.h"
#include "runtime/vulkan/vulkan_device.h"
#include "tests/fuzz/fuzz_target.h"

namespace {

using namespace loom;

// Parameters k (f32) and pack (an argpack of 32 bytes); slots: field 'x', an rgba8 2-d
// texture, a 3-d texture; bindings 0-5: buffer, storage image, sampled image, sampler,
// argpack, temps; workgroups of 64 (tests/vulkan/shader_check_test.cpp's kernel).
KernelABI probe_abi() {
  KernelABI abi;
  abi.name = "probe";
  ParamDesc k;
  k.name = "k";
  k.size = 4;
  ParamDesc pack;
  pack.name = "pack";
  pack.kind = ParamKind::Argpack;
  pack.size = 32;
  abi.params = {k, pack};
  ResourceDesc x;
  x.field = "x";
  ResourceDesc img;
  img.kind = ResourceKind::Texture;
  img.ndim = 2;
  img.format = TextureFormat::RGBA8;
  ResourceDesc tex = img;
  tex.ndim = 3;
  tex.format = TextureFormat::RGBA32F;
  abi.resources = {x, img, tex};
  return abi;
}

SpirvKernel probe_code(std::vector<uint32_t> words) {
  SpirvKernel code;
  code.bindings = {{0, BindingKind::Buffer, 0},       {1, BindingKind::StorageImage, 1},
                   {2, BindingKind::SampledImage, 2}, {3, BindingKind::Sampler, 0},
                   {4, BindingKind::Argpack, 1},      {5, BindingKind::Temps, -1}};
  SpirvTask task;
  task.kind = 1;
  task.spirv = std::move(words);
  task.workgroup_size = 64;
  task.access.assign(code.bindings.size(), kAccessRead);
  code.tasks = {std::move(task)};
  return code;
}

vk::DeviceCaps probe_device() {
  vk::DeviceCaps caps;
  caps.name = "fuzz device";
  caps.features = kAllSpirvRequirements;
  caps.max_workgroup_size_x = 1024;
  caps.max_workgroup_size_y = 1024;
  caps.max_workgroup_size_z = 64;
  caps.max_workgroup_invocations = 1024;
  caps.max_workgroup_memory = 32768;
  return caps;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<uint32_t> words(size / 4);
  if (!words.empty()) std::memcpy(words.data(), data, words.size() * 4);
  try {
    vk::read_shader_interface(words);
  } catch (const Error&) {
    return 0;
  }
  try {
    vk::check_task_shader(probe_abi(), probe_code(std::move(words)), 0, probe_device());
  } catch (const Error&) {
  }
  return 0;
}
