// Hostile SPIR-V inside an AOT module (issue 17): a blob that passes the archive's size,
// hash and magic checks but is malformed, invalid, or valid yet at odds with the pipeline
// Loom builds from the metadata, or beyond the device. Each is refused before the driver sees
// it, with an error naming the module file, the kernel and the task; Vulkan runs under the
// validation layer (tests/support/test_main.cpp), which must stay silent.
//
// The kernel attacked is heat's `diffuse` (kernel 1): bindings 0 and 1 are the storage
// buffers of fields 'temperature' and 'scratch', the arguments are 16 bytes of push
// constants, workgroups are 128x1x1. kShader is a small stand-in with exactly that interface
// (it loads and runs); each case changes one thing about it.
#include <gtest/gtest.h>
#include <spirv/unified1/spirv.hpp>

#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine_plugin/include/loom/aot_module.h"
#include "engine_plugin/include/loom/program.h"
#include "runtime/aot/loaded_module.h"
#include "runtime/aot/module_files.h"
#include "runtime/common/error.h"
#include "runtime/common/spirv_kernel.h"
#include "runtime/device/device.h"
#include "runtime/vulkan/vulkan_device.h"
#include "tests/support/spirv_text.h"
#include "tests/support/vulkan_required.h"

namespace loom {
namespace {

using test::assemble_spirv;
using test::replace_once;

const char* const kShader = R"(
               OpCapability Shader
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main "main" %gid
               OpExecutionMode %main LocalSize 128 1 1
               OpName %src "src"
               OpName %dst "dst"
               OpDecorate %gid BuiltIn GlobalInvocationId
               OpDecorate %args_words ArrayStride 4
               OpDecorate %args_t Block
               OpMemberDecorate %args_t 0 Offset 0
               OpDecorate %floats ArrayStride 4
               OpDecorate %buf_t Block
               OpMemberDecorate %buf_t 0 Offset 0
               OpDecorate %ubo_t Block
               OpMemberDecorate %ubo_t 0 Offset 0
               OpDecorate %src DescriptorSet 0
               OpDecorate %src Binding 0
               OpDecorate %dst DescriptorSet 0
               OpDecorate %dst Binding 1
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
       %uint = OpTypeInt 32 0
      %float = OpTypeFloat 32
     %v3uint = OpTypeVector %uint 3
    %v4float = OpTypeVector %float 4
     %uint_0 = OpConstant %uint 0
     %uint_2 = OpConstant %uint 2
     %uint_4 = OpConstant %uint 4
    %uint_64 = OpConstant %uint 64
%uint_1048576 = OpConstant %uint 1048576
 %args_words = OpTypeArray %uint %uint_4
     %args_t = OpTypeStruct %args_words
   %args_ptr = OpTypePointer PushConstant %args_t
       %args = OpVariable %args_ptr PushConstant
  %word_ptr = OpTypePointer PushConstant %uint
     %floats = OpTypeRuntimeArray %float
      %buf_t = OpTypeStruct %floats
    %buf_ptr = OpTypePointer StorageBuffer %buf_t
      %ubo_t = OpTypeStruct %v4float
    %ubo_ptr = OpTypePointer Uniform %ubo_t
        %src = OpVariable %buf_ptr StorageBuffer
        %dst = OpVariable %buf_ptr StorageBuffer
     %in_ptr = OpTypePointer Input %v3uint
        %gid = OpVariable %in_ptr Input
  %float_ptr = OpTypePointer StorageBuffer %float
       %main = OpFunction %void None %fn
      %entry = OpLabel
         %id = OpLoad %v3uint %gid
          %i = OpCompositeExtract %uint %id 0
      %k_ptr = OpAccessChain %word_ptr %args %uint_0 %uint_2
          %k = OpLoad %uint %k_ptr
         %kf = OpBitcast %float %k
         %at = OpAccessChain %float_ptr %src %uint_0 %i
          %v = OpLoad %float %at
          %w = OpFMul %float %v %kf
               OpStore %at %w
               OpReturn
               OpFunctionEnd
)";

const char* const kModule = "hostile.loommod";
const char* const kPlace = "hostile.loommod: kernel 'diffuse': task 0";

aot::Module heat_module() {
  static const aot::Module built = [] {
    ProgramOptions po;
    po.backend = Backend::Cpu;
    po.offline_cache = false;
    Program program(po);
    program.load_file(std::string(LOOM_SOURCE_DIR) + "/assets/graphs/heat.loom.json");
    AotOptions ao;
    ao.arch = Backend::Vulkan;
    AotModule m(program, ao);
    m.add_document();
    return m.module();
  }();
  return built;
}

// heat's module with the blob of diffuse's task replaced, written and read back as an archive
// (so the blob list and hashes are right: only the SPIR-V is hostile).
aot::Module with_diffuse_blob(const std::vector<uint32_t>& words) {
  aot::Module m = heat_module();
  const aot::KernelInfo& diffuse = m.meta.kernels.at(1);
  EXPECT_EQ(diffuse.name, "diffuse");
  m.blobs.at(diffuse.spirv_blobs.at(0)) = test::spirv_bytes(words);
  aot::finalize_module(m);
  return aot::read_module_bytes(aot::write_module_archive(m), kModule);
}

std::unique_ptr<Device> validated_device() {
  VulkanDeviceOptions o;
  o.validation = true;
  return make_vulkan_device(o);
}

struct Refusal {
  std::string message;
  ErrorKind kind = ErrorKind::General;
};

Refusal load_refused(Device& device, const std::vector<uint32_t>& words) {
  try {
    aot::LoadedModule loaded(with_diffuse_blob(words), device, kModule);
  } catch (const Error& e) {
    return {e.what(), e.kind()};
  }
  ADD_FAILURE() << "the module loaded";
  return {};
}

class HostileSpirv : public testing::Test {
 protected:
  void SetUp() override {
    LOOM_REQUIRE_VULKAN_OR_SKIP();
    device_ = validated_device();
  }

  // The case's refusal: the message begins with module, kernel and task and holds `reason`.
  void expect_refused(const std::vector<uint32_t>& words, const std::string& reason,
                      ErrorKind kind) {
    Refusal r = load_refused(*device_, words);
    EXPECT_EQ(r.message.rfind(kPlace, 0), 0u) << r.message;
    EXPECT_NE(r.message.find(reason), std::string::npos) << r.message;
    EXPECT_EQ(static_cast<int>(r.kind), static_cast<int>(kind)) << r.message;
  }
  void expect_refused(const std::string& text, const std::string& reason, ErrorKind kind) {
    expect_refused(assemble_spirv(text), reason, kind);
  }

  std::unique_ptr<Device> device_;
};

// The stand-in itself loads and runs: every refusal below is for what its case changed.
TEST_F(HostileSpirv, TheStandInShaderLoadsAndRuns) {
  aot::LoadedModule loaded(with_diffuse_blob(assemble_spirv(kShader)), *device_, kModule);
  loaded.run_pipeline("init");
  loaded.run_pipeline("step");
  device_->synchronize();
}

TEST_F(HostileSpirv, MalformedWordStreamsAreRefused) {
  std::vector<uint32_t> good = assemble_spirv(kShader);
  std::vector<uint32_t> truncated(
      good.begin(), good.begin() + test::find_instruction(good, spv::OpEntryPoint) + 2);
  expect_refused(truncated, "is not valid SPIR-V", ErrorKind::Corrupt);

  std::vector<uint32_t> zero = good;
  zero[test::find_instruction(good, spv::OpMemoryModel)] &= 0xffff;  // word count 0
  expect_refused(zero, "is not valid SPIR-V", ErrorKind::Corrupt);

  std::vector<uint32_t> past_the_end = good;
  past_the_end[test::last_instruction(good)] |= 0xffffu << 16;
  expect_refused(past_the_end, "is not valid SPIR-V", ErrorKind::Corrupt);

  std::vector<uint32_t> header_only(good.begin(), good.begin() + 5);
  header_only.push_back(0xdeadbeef);
  expect_refused(header_only, "is not valid SPIR-V", ErrorKind::Corrupt);
}

TEST_F(HostileSpirv, InvalidSpirvThatPassesTheMagicCheckIsRefused) {
  // A result type that does not match what the instruction yields.
  expect_refused(
      replace_once(kShader, "%i = OpCompositeExtract %uint", "%i = OpCompositeExtract %float"),
      "(blob '1.diffuse.task0.spv') is not valid SPIR-V: Result type (OpTypeFloat)",
      ErrorKind::Corrupt);
}

TEST_F(HostileSpirv, DescriptorsOutsideTheLayoutAreRefused) {
  expect_refused(replace_once(kShader, "%dst Binding 1", "%dst Binding 7"),
                 "the shader binds 'dst' (%", ErrorKind::Corrupt);
  expect_refused(replace_once(kShader, "%dst Binding 1", "%dst Binding 7"),
                 "at set 0, binding 7, which is not in the kernel's layout (set 0, bindings 0, 1)",
                 ErrorKind::Corrupt);
  expect_refused(replace_once(kShader, "%dst DescriptorSet 0", "%dst DescriptorSet 1"),
                 "at set 1, binding 1, which is not in the kernel's layout", ErrorKind::Corrupt);
}

TEST_F(HostileSpirv, AWrongDescriptorTypeIsRefused) {
  expect_refused(replace_once(kShader, "%dst = OpVariable %buf_ptr StorageBuffer",
                              "%dst = OpVariable %ubo_ptr Uniform"),
                 "declares set 0, binding 1 'dst' (%", ErrorKind::Corrupt);
  expect_refused(
      replace_once(kShader, "%dst = OpVariable %buf_ptr StorageBuffer",
                   "%dst = OpVariable %ubo_ptr Uniform"),
      "as a uniform buffer; the kernel's layout has a storage buffer there (field 'scratch')",
      ErrorKind::Corrupt);
}

TEST_F(HostileSpirv, WorkgroupsBeyondTheDeviceOrTheMetadataAreRefused) {
  expect_refused(replace_once(kShader, "LocalSize 128 1 1", "LocalSize 128 1 4096"),
                 "the shader's workgroups of 128x1x4096 invocations are beyond device '",
                 ErrorKind::Capability);
  expect_refused(replace_once(kShader, "LocalSize 128 1 1", "LocalSize 64 1 1"),
                 "the shader's workgroups are 64x1x1 invocations; the kernel's metadata says "
                 "128x1x1",
                 ErrorKind::Corrupt);
  // 4 MiB of workgroup memory.
  expect_refused(replace_once(kShader, "%main = OpFunction",
                              "%shared_t = OpTypeArray %float %uint_1048576\n"
                              "%shared_ptr = OpTypePointer Workgroup %shared_t\n"
                              "%shared = OpVariable %shared_ptr Workgroup\n"
                              "%main = OpFunction"),
                 "the shader uses 4194304 bytes of workgroup memory; device '",
                 ErrorKind::Capability);
}

TEST_F(HostileSpirv, PushConstantsBeyondTheLayoutAreRefused) {
  expect_refused(replace_once(kShader, "OpTypeArray %uint %uint_4", "OpTypeArray %uint %uint_64"),
                 "the shader's push-constant block is 256 bytes; the kernel's pipeline pushes 16",
                 ErrorKind::Corrupt);
}

TEST_F(HostileSpirv, AnEntryPointOtherThanMainIsRefused) {
  expect_refused(replace_once(kShader, R"(%main "main")", R"(%main "other")"),
                 "the shader's entry point is 'other'; a task's is 'main'", ErrorKind::Corrupt);
}

TEST_F(HostileSpirv, CapabilitiesAndExtensionsLoomNeverEnablesAreRefused) {
  // A Vulkan capability some devices have; Loom never enables its feature.
  expect_refused(replace_once(kShader, "OpCapability Shader",
                              "OpCapability Shader\nOpCapability StorageImageWriteWithoutFormat"),
                 "the shader declares capability 56, which Loom's kernels never use",
                 ErrorKind::Capability);
  expect_refused(replace_once(kShader, "OpCapability Shader",
                              "OpCapability Shader\nOpExtension \"SPV_KHR_variable_pointers\""),
                 "the shader declares extension 'SPV_KHR_variable_pointers'",
                 ErrorKind::Capability);
}

// The metadata claims nothing; the shader declares Float64; the device (an engine's, imported
// with every feature of the physical device but shaderFloat64) was not set up with it.
TEST_F(HostileSpirv, ACapabilityTheDeviceLacksIsRefused) {
  vk::DeviceOptions o;
  o.validation = true;
  vk::VulkanDevice host(o);
  if (!(host.caps().features & kNeedFloat64)) GTEST_SKIP() << "the device has no shaderFloat64";
  vk::ImportedDevice d;
  d.instance = host.instance();
  d.physical = host.physical();
  d.device = host.device();
  d.queue_family = host.queue_family();
  d.queue = host.queue();
  d.api_version = VK_API_VERSION_1_2;
  d.kernel_features = host.caps().features & ~uint32_t{kNeedFloat64};
  {
    auto device = make_vulkan_device({}, std::make_shared<vk::VulkanDevice>(d));
    std::string text =
        replace_once(kShader, "OpCapability Shader", "OpCapability Shader\nOpCapability Float64");
    Refusal r = load_refused(*device, assemble_spirv(text));
    EXPECT_EQ(r.message.rfind(kPlace, 0), 0u) << r.message;
    EXPECT_NE(r.message.find("the shader declares capability Float64, which needs shaderFloat64; "
                             "device '" +
                             host.caps().name + "' does not have it enabled"),
              std::string::npos)
        << r.message;
    EXPECT_EQ(static_cast<int>(r.kind), static_cast<int>(ErrorKind::Capability)) << r.message;
    // The same module loads where the device has it.
    aot::LoadedModule fine(with_diffuse_blob(assemble_spirv(text)), *device_, kModule);
  }
  for (const std::string& m : host.take_messages()) ADD_FAILURE() << "Vulkan validation: " << m;
}

// After every refusal the device is unharmed: the real module still loads and runs on it.
TEST_F(HostileSpirv, TheDeviceStillRunsModulesAfterRefusals) {
  std::vector<uint32_t> good = assemble_spirv(kShader);
  std::vector<uint32_t> cut(good.begin(), good.begin() + static_cast<ptrdiff_t>(good.size() / 2));
  load_refused(*device_, cut);
  load_refused(*device_, assemble_spirv(replace_once(kShader, "%dst Binding 1", "%dst Binding 9")));
  aot::LoadedModule loaded(heat_module(), *device_, "heat.loommod");
  loaded.run_pipeline("init");
  loaded.run_pipeline("step");
  device_->synchronize();
}

}  // namespace
}  // namespace loom
