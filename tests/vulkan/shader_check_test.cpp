// The SPIR-V interface reader (runtime/vulkan/shader_interface.h) and the check of a task's
// shader against its kernel's layout and the device (shader_check.h), without a device: a
// kernel of every binding kind, a device described by its DeviceCaps, shaders written as
// assembly text and edited one thing at a time, and word streams no assembler would write.
// tests/aot/hostile_spirv_test.cpp loads such shaders in modules on lavapipe.
#include <gtest/gtest.h>
#include <spirv/unified1/spirv.hpp>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/common/error.h"
#include "runtime/common/kernel_abi.h"
#include "runtime/common/spirv_kernel.h"
#include "runtime/vulkan/shader_check.h"
#include "runtime/vulkan/shader_interface.h"
#include "runtime/vulkan/spirv_validator.h"
#include "runtime/vulkan/vulkan_device.h"
#include "tests/support/spirv_text.h"

namespace loom::vk {
namespace {

using test::assemble_spirv;
using test::replace_once;

// A shader with exactly the interface of kernel_abi() and kernel_code() below: push constants, a
// field's storage buffer, a 2-d rgba8 storage image, a 3-d sampled image, a sampler, an argpack's
// uniform block of 32 bytes and the temporaries, workgroups of 64. (The assembler numbers ids by
// first use: %main is %1, %x is %2.)
const char* const kShader = R"(
               OpCapability Shader
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main "main"
               OpExecutionMode %main LocalSize 64 1 1
               OpName %x "x"
               OpDecorate %words ArrayStride 4
               OpDecorate %push_t Block
               OpMemberDecorate %push_t 0 Offset 0
               OpDecorate %floats ArrayStride 4
               OpDecorate %buf_t Block
               OpMemberDecorate %buf_t 0 Offset 0
               OpDecorate %pack_t Block
               OpMemberDecorate %pack_t 0 Offset 0
               OpMemberDecorate %pack_t 1 Offset 16
               OpDecorate %x DescriptorSet 0
               OpDecorate %x Binding 0
               OpDecorate %img DescriptorSet 0
               OpDecorate %img Binding 1
               OpDecorate %tex DescriptorSet 0
               OpDecorate %tex Binding 2
               OpDecorate %smp DescriptorSet 0
               OpDecorate %smp Binding 3
               OpDecorate %pack DescriptorSet 0
               OpDecorate %pack Binding 4
               OpDecorate %temps DescriptorSet 0
               OpDecorate %temps Binding 5
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
       %uint = OpTypeInt 32 0
      %float = OpTypeFloat 32
     %v3uint = OpTypeVector %uint 3
    %v4float = OpTypeVector %float 4
     %uint_1 = OpConstant %uint 1
     %uint_4 = OpConstant %uint 4
    %uint_32 = OpConstant %uint 32
      %words = OpTypeArray %uint %uint_4
     %push_t = OpTypeStruct %words
   %push_ptr = OpTypePointer PushConstant %push_t
       %args = OpVariable %push_ptr PushConstant
     %floats = OpTypeRuntimeArray %float
      %buf_t = OpTypeStruct %floats
    %buf_ptr = OpTypePointer StorageBuffer %buf_t
          %x = OpVariable %buf_ptr StorageBuffer
      %temps = OpVariable %buf_ptr StorageBuffer
      %img_t = OpTypeImage %float 2D 0 0 0 2 Rgba8
    %img_ptr = OpTypePointer UniformConstant %img_t
        %img = OpVariable %img_ptr UniformConstant
      %tex_t = OpTypeImage %float 3D 0 0 0 1 Unknown
    %tex_ptr = OpTypePointer UniformConstant %tex_t
        %tex = OpVariable %tex_ptr UniformConstant
      %smp_t = OpTypeSampler
    %smp_ptr = OpTypePointer UniformConstant %smp_t
        %smp = OpVariable %smp_ptr UniformConstant
     %pack_t = OpTypeStruct %v4float %v4float
   %pack_ptr = OpTypePointer Uniform %pack_t
       %pack = OpVariable %pack_ptr Uniform
       %main = OpFunction %void None %fn
      %entry = OpLabel
               OpReturn
               OpFunctionEnd
)";

// Parameters k (f32) and pack (an argpack of 32 bytes); resource slots: field 'x', an rgba8
// 2-d texture, a 3-d texture.
KernelABI kernel_abi() {
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
  img.param = 0;
  ResourceDesc tex = img;
  tex.ndim = 3;
  tex.format = TextureFormat::RGBA32F;
  abi.resources = {x, img, tex};
  return abi;
}

SpirvKernel kernel_code(const std::vector<uint32_t>& words) {
  SpirvKernel code;
  code.bindings = {{0, BindingKind::Buffer, 0},       {1, BindingKind::StorageImage, 1},
                   {2, BindingKind::SampledImage, 2}, {3, BindingKind::Sampler, 0},
                   {4, BindingKind::Argpack, 1},      {5, BindingKind::Temps, -1}};
  SpirvTask task;
  task.kind = 1;
  task.spirv = words;
  task.workgroup_size = 64;
  task.access.assign(code.bindings.size(), kAccessRead);
  code.tasks = {task};
  return code;
}

DeviceCaps device_caps() {
  DeviceCaps caps;
  caps.name = "test device";
  caps.features = kAllSpirvRequirements;
  caps.max_workgroup_size_x = 1024;
  caps.max_workgroup_size_y = 1024;
  caps.max_workgroup_size_z = 64;
  caps.max_workgroup_invocations = 1024;
  caps.max_workgroup_memory = 32768;
  return caps;
}

// "" when the task's shader passes, else the error's message; `kind` gets its kind.
std::string check(const std::vector<uint32_t>& words, const DeviceCaps& caps = device_caps(),
                  ErrorKind* kind = nullptr, SpirvKernel code = {}) {
  if (code.tasks.empty()) code = kernel_code(words);
  try {
    check_task_shader(kernel_abi(), code, 0, caps);
  } catch (const Error& e) {
    if (kind) *kind = e.kind();
    EXPECT_EQ(e.place().kernel, "probe") << e.what();
    return e.what();
  }
  return "";
}
std::string check(const std::string& text, const DeviceCaps& caps = device_caps(),
                  ErrorKind* kind = nullptr) {
  return check(assemble_spirv(text), caps, kind);
}

std::string read_error(const std::vector<uint32_t>& words) {
  try {
    read_shader_interface(words);
  } catch (const Error& e) {
    EXPECT_EQ(static_cast<int>(e.kind()), static_cast<int>(ErrorKind::Corrupt)) << e.what();
    return e.what();
  }
  return "";
}

#define EXPECT_HAS(text, part) EXPECT_NE((text).find(part), std::string::npos) << (text)

TEST(ShaderInterface, ReadsWhatAPipelineMustProvide) {
  std::vector<uint32_t> words = assemble_spirv(kShader);
  EXPECT_EQ(validate_spirv(words), "");
  ShaderInterface s = read_shader_interface(words);
  EXPECT_EQ(s.version, kSpirv1_3);
  EXPECT_EQ(s.capabilities, std::vector<uint32_t>{spv::CapabilityShader});
  ASSERT_EQ(s.entry_points.size(), 1u);
  EXPECT_EQ(s.entry_points[0].name, "main");
  EXPECT_EQ(s.entry_points[0].model, uint32_t{spv::ExecutionModelGLCompute});
  EXPECT_EQ(s.entry_points[0].local_size[0], 64u);
  EXPECT_EQ(s.push_constant_blocks, std::vector<uint64_t>{16});
  ASSERT_EQ(s.resources.size(), 6u);
  EXPECT_EQ(s.resources[0].name, "x");
  EXPECT_EQ(s.resources[0].shape, DescriptorShape::StorageBuffer);
  EXPECT_EQ(s.resources[2].shape, DescriptorShape::StorageImage);
  EXPECT_EQ(s.resources[2].image_format, uint32_t{spv::ImageFormatRgba8});
  EXPECT_EQ(s.resources[3].shape, DescriptorShape::SampledImage);
  EXPECT_EQ(s.resources[3].image_dim, uint32_t{spv::Dim3D});
  EXPECT_EQ(s.resources[4].shape, DescriptorShape::Sampler);
  EXPECT_EQ(s.resources[5].shape, DescriptorShape::UniformBuffer);
  EXPECT_EQ(s.resources[5].block_bytes, 32u);
  EXPECT_EQ(check(words), "");
}

TEST(ShaderInterface, MalformedWordStreamsAreNamedByWord) {
  std::vector<uint32_t> good = assemble_spirv(kShader);
  EXPECT_HAS(read_error({0x07230203, kSpirv1_3, 0}),
             "a SPIR-V module begins with a header of 5 words; this one has 3 words");
  std::vector<uint32_t> magic = good;
  magic[0] = 0x03022307;  // the other byte order
  EXPECT_HAS(read_error(magic), "word 0: not the SPIR-V magic number");

  std::vector<uint32_t> zero = good;
  zero[5] &= 0xffff;
  EXPECT_EQ(read_error(zero), "word 5: OpCapability has a word count of 0");

  std::vector<uint32_t> past = good;
  size_t last = test::last_instruction(good);
  past[last] |= 0xffffu << 16;
  EXPECT_EQ(read_error(past), "word " + std::to_string(last) +
                                  ": opcode 56 claims 65535 words; the module has 1 left");

  size_t entry = test::find_instruction(good, spv::OpEntryPoint);
  std::vector<uint32_t> cut(good.begin(), good.begin() + static_cast<ptrdiff_t>(entry) + 2);
  EXPECT_EQ(read_error(cut), "word " + std::to_string(entry) +
                                 ": OpEntryPoint claims 5 words; the module has 2 left");

  // "main" and its terminating nul word: the nul replaced, the string runs off the end.
  std::vector<uint32_t> unterminated = good;
  unterminated[entry + 4] = 0x61616161;
  EXPECT_EQ(read_error(unterminated),
            "word " + std::to_string(entry) +
                ": OpEntryPoint has a string that does not end within the instruction");

  // OpTypeFloat given OpTypeInt's id.
  std::vector<uint32_t> twice = good;
  uint32_t int_id = good[test::find_instruction(good, spv::OpTypeInt) + 1];
  twice[test::find_instruction(good, spv::OpTypeFloat) + 1] = int_id;
  EXPECT_HAS(read_error(twice), "defines id %" + std::to_string(int_id) + " again");
}

TEST(ShaderInterface, DescriptorDecorationsAreTakenOnceAndOnlyDirectly) {
  EXPECT_HAS(
      read_error(assemble_spirv(replace_once(kShader, "OpDecorate %x Binding 0",
                                             "OpDecorate %x Binding 0\nOpDecorate %x Binding 3"))),
      "with Binding a second time");
  EXPECT_HAS(
      read_error(assemble_spirv(replace_once(
          kShader, "OpDecorate %x Binding 0",
          "OpDecorate %x Binding 0\n%group = OpDecorationGroup\nOpGroupDecorate %group %x"))),
      "(a decoration group): descriptors must be decorated directly");
}

// Every prefix of a module and every word of it replaced by a few values: the reader and the
// check throw loom::Error or pass, never crash, never throw anything else (the fuzz target
// spirv_interface does this at random).
TEST(ShaderInterface, EveryPrefixAndEveryWordEditIsAnErrorOrFine) {
  std::vector<uint32_t> good = assemble_spirv(kShader);
  std::vector<bool> boundary(good.size() + 1, false);
  for (size_t at = 5; at <= good.size(); at += good[at] >> 16) {
    boundary[at] = true;
    if (at == good.size()) break;
  }
  for (size_t n = 0; n < good.size(); ++n) {
    std::vector<uint32_t> prefix(good.begin(), good.begin() + static_cast<ptrdiff_t>(n));
    EXPECT_NO_THROW(check(prefix)) << n;
    if (n < 5 || !boundary[n]) {
      EXPECT_NE(read_error(prefix), "") << "cut to " << n << " words";
    }
  }
  for (size_t i = 0; i < good.size(); ++i)
    for (uint32_t value : {0u, 1u, 0xffffffffu, 0x00040000u | good[i], good[i] + 1}) {
      std::vector<uint32_t> edited = good;
      edited[i] = value;
      EXPECT_NO_THROW(check(edited)) << "word " << i << " = " << value;
    }
}

TEST(ShaderInterface, TypeSizesAreBoundedInDepthTimeAndMagnitude) {
  // 40 structs, each holding the one before.
  std::string deep = "%s0 = OpTypeStruct %float\n";
  for (int i = 1; i <= 40; ++i)
    deep += "%s" + std::to_string(i) + " = OpTypeStruct %s" + std::to_string(i - 1) + "\n";
  deep += "%deep_ptr = OpTypePointer Workgroup %s40\n%deep = OpVariable %deep_ptr Workgroup\n";
  EXPECT_HAS(read_error(assemble_spirv(
                 replace_once(kShader, "%main = OpFunction", deep + "%main = OpFunction"))),
             "type %");
  EXPECT_HAS(read_error(assemble_spirv(
                 replace_once(kShader, "%main = OpFunction", deep + "%main = OpFunction"))),
             "nests more than 32 levels deep");

  // 20 structs of 50 members, each the struct before: 50^20 paths through the types, and a
  // size far past 64 bits. Read in well under a second; the size saturates.
  std::string wide = "%w0 = OpTypeArray %float %uint_32\n";
  for (int i = 1; i <= 20; ++i) {
    wide += "%w" + std::to_string(i) + " = OpTypeStruct";
    for (int m = 0; m < 50; ++m) wide += " %w" + std::to_string(i - 1);
    wide += "\n";
  }
  wide += "%wide_ptr = OpTypePointer Workgroup %w20\n%wide = OpVariable %wide_ptr Workgroup\n";
  auto t0 = std::chrono::steady_clock::now();
  ErrorKind kind{};
  std::string msg = check(replace_once(kShader, "%main = OpFunction", wide + "%main = OpFunction"),
                          device_caps(), &kind);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(1));
  EXPECT_HAS(msg,
             "task 0: the shader uses 281474976710656 bytes of workgroup memory; device "
             "'test device' has 32768");
  EXPECT_EQ(static_cast<int>(kind), static_cast<int>(ErrorKind::Capability));
}

TEST(ShaderCheck, WorkgroupSizesFromLocalSizeIdAndTheBuiltIn) {
  std::string by_id = replace_once(kShader, "OpExecutionMode %main LocalSize 64 1 1",
                                   "OpExecutionModeId %main LocalSizeId %uint_64 %uint_1 %uint_1");
  by_id = replace_once(by_id, "%uint_32 = OpConstant %uint 32",
                       "%uint_32 = OpConstant %uint 32\n%uint_64 = OpSpecConstant %uint 64");
  EXPECT_EQ(read_shader_interface(assemble_spirv(by_id)).entry_points[0].local_size[0], 64u);
  EXPECT_EQ(check(by_id), "");
  // The built-in wins over LocalSize.
  std::string builtin = replace_once(kShader, "OpName %x \"x\"",
                                     "OpName %x \"x\"\nOpDecorate %wg BuiltIn WorkgroupSize");
  builtin = replace_once(builtin, "%uint_32 = OpConstant %uint 32",
                         "%uint_32 = OpConstant %uint 32\n"
                         "%wg = OpConstantComposite %v3uint %uint_32 %uint_1 %uint_1");
  EXPECT_HAS(check(builtin),
             "task 0: the shader's workgroups are 32x1x1 invocations; the "
             "kernel's metadata says 64x1x1");
  EXPECT_HAS(check(replace_once(kShader, "OpExecutionMode %main LocalSize 64 1 1", "")),
             "the shader's workgroup size is 0x0x0 (no LocalSize, or an empty one)");
}

TEST(ShaderCheck, WorkgroupsBeyondTheDevice) {
  DeviceCaps small = device_caps();
  small.max_workgroup_size_x = 32;
  ErrorKind kind{};
  EXPECT_HAS(check(kShader, small, &kind),
             "task 0: the shader's workgroups of 64x1x1 invocations are beyond device 'test "
             "device' (at most 32x1024x64, 1024 invocations)");
  EXPECT_EQ(static_cast<int>(kind), static_cast<int>(ErrorKind::Capability));
  DeviceCaps few = device_caps();
  few.max_workgroup_invocations = 48;
  EXPECT_HAS(check(kShader, few), "48 invocations)");
}

TEST(ShaderCheck, CapabilitiesNeedTheDevicesFeatures) {
  std::string f64 =
      replace_once(kShader, "OpCapability Shader", "OpCapability Shader\nOpCapability Float64");
  EXPECT_EQ(check(f64), "");
  DeviceCaps without = device_caps();
  without.features &= ~uint32_t{kNeedFloat64};
  ErrorKind kind{};
  EXPECT_EQ(check(f64, without, &kind),
            "kernel 'probe': task 0: the shader declares capability Float64, which needs "
            "shaderFloat64; device 'test device' does not have it enabled");
  EXPECT_EQ(static_cast<int>(kind), static_cast<int>(ErrorKind::Capability));

  std::string subgroup = replace_once(
      kShader, "OpCapability Shader",
      "OpCapability Shader\nOpCapability GroupNonUniform\nOpCapability GroupNonUniformArithmetic");
  EXPECT_EQ(check(subgroup), "");
  without.features &= ~uint32_t{kNeedSubgroupArithmetic};
  EXPECT_HAS(check(subgroup, without), "capability GroupNonUniform, which needs");

  std::string storage8 =
      replace_once(kShader, "OpCapability Shader",
                   "OpCapability Shader\nOpCapability StorageBuffer8BitAccess\nOpExtension "
                   "\"SPV_KHR_8bit_storage\"");
  EXPECT_EQ(check(storage8), "");
  without.features &= ~uint32_t{kNeedStorage8};
  EXPECT_HAS(check(storage8, without), "capability StorageBuffer8BitAccess, which needs");

  EXPECT_HAS(check(replace_once(kShader, "OpCapability Shader",
                                "OpCapability Shader\nOpCapability Float16"),
                   device_caps(), &kind),
             "task 0: the shader declares capability 9, which Loom's kernels never use");
  EXPECT_EQ(static_cast<int>(kind), static_cast<int>(ErrorKind::Capability));
  EXPECT_HAS(check(replace_once(kShader, "OpCapability Shader",
                                "OpCapability Shader\nOpExtension \"SPV_KHR_ray_query\"")),
             "the shader declares extension 'SPV_KHR_ray_query'");
  EXPECT_HAS(check(replace_once(kShader, "OpMemoryModel",
                                "%cl = OpExtInstImport \"OpenCL.std\"\nOpMemoryModel")),
             "the shader imports instruction set 'OpenCL.std'; Loom's kernels import only "
             "GLSL.std.450");
}

TEST(ShaderCheck, OneGLComputeEntryPointCalledMain) {
  EXPECT_HAS(check(replace_once(kShader, "OpEntryPoint GLCompute %main \"main\"",
                                "OpEntryPoint GLCompute %main \"main\"\n"
                                "OpEntryPoint GLCompute %main \"other\"")),
             "task 0: the shader has 2 entry points; a task has one, GLCompute 'main'");
  EXPECT_HAS(check(replace_once(kShader, "OpEntryPoint GLCompute", "OpEntryPoint Vertex")),
             "the shader's entry point 'main' is of execution model 0; a task's is GLCompute (5)");
}

TEST(ShaderCheck, DescriptorsMustBeTheLayoutsBindings) {
  EXPECT_EQ(check(replace_once(kShader, "OpDecorate %x Binding 0", "")),
            "kernel 'probe': task 0: the shader's resource variable 'x' (%2) lacks a "
            "DescriptorSet or Binding decoration");
  EXPECT_EQ(check(replace_once(kShader, "%x Binding 0", "%x Binding 9")),
            "kernel 'probe': task 0: the shader binds 'x' (%2) at set 0, binding 9, which is not "
            "in the kernel's layout (set 0, bindings 0, 1, 2, 3, 4, 5)");
  EXPECT_HAS(check(replace_once(kShader, "%x DescriptorSet 0", "%x DescriptorSet 2")),
             "at set 2, binding 0, which is not in the kernel's layout");
  // The storage buffer and the sampled image swap places.
  std::string swapped = replace_once(kShader, "%x Binding 0", "%x Binding 2");
  swapped = replace_once(swapped, "%tex Binding 2", "%tex Binding 0");
  EXPECT_HAS(check(swapped),
             "task 0: the shader declares set 0, binding 2 'x' (%2) as a storage "
             "buffer; the kernel's layout has a sampled image there (texture slot "
             "2)");
}

TEST(ShaderCheck, DescriptorsLoomNeverBindsAreNamed) {
  EXPECT_HAS(check(replace_once(kShader, "%img_t = OpTypeImage %float 2D 0 0 0 2 Rgba8",
                                "%img_t = OpTypeImage %float Buffer 0 0 0 2 Rgba8")),
             "as a texel buffer; the kernel's layout has a storage image there (texture slot 1)");
  EXPECT_HAS(check(replace_once(kShader, "%img_t = OpTypeImage %float 2D 0 0 0 2 Rgba8",
                                "%img_t = OpTypeImage %float 2D 0 1 0 2 Rgba8")),
             "as an arrayed image");
  EXPECT_HAS(check(replace_once(kShader, "%tex_ptr = OpTypePointer UniformConstant %tex_t",
                                "%combined = OpTypeSampledImage %tex_t\n"
                                "%tex_ptr = OpTypePointer UniformConstant %combined")),
             "as a combined image sampler");
  EXPECT_HAS(check(replace_once(kShader, "%smp_ptr = OpTypePointer UniformConstant %smp_t",
                                "%smps = OpTypeArray %smp_t %uint_4\n"
                                "%smp_ptr = OpTypePointer UniformConstant %smps")),
             "as an array of descriptors (Loom binds one per binding)");
}

TEST(ShaderCheck, ImagesMatchTheirTextures) {
  EXPECT_HAS(check(replace_once(kShader, "OpTypeImage %float 2D 0 0 0 2 Rgba8",
                                "OpTypeImage %float 3D 0 0 0 2 Rgba8")),
             "task 0: the shader declares set 0, binding 1 (%");
  EXPECT_HAS(check(replace_once(kShader, "OpTypeImage %float 2D 0 0 0 2 Rgba8",
                                "OpTypeImage %float 3D 0 0 0 2 Rgba8")),
             "as a 3-d image; the kernel binds a 2-d view there (texture slot 1)");
  EXPECT_HAS(check(replace_once(kShader, "OpTypeImage %float 2D 0 0 0 2 Rgba8",
                                "OpTypeImage %float 2D 0 0 0 2 Rgba32f")),
             "with image format 1; the kernel binds texture slot 1 there, of format rgba8 "
             "(SPIR-V image format 4)");
}

TEST(ShaderCheck, BlocksNoLargerThanWhatIsBound) {
  EXPECT_HAS(check(replace_once(kShader, "%pack_t = OpTypeStruct %v4float %v4float",
                                "%pack_t = OpTypeStruct %v4float %v4float %v4float")),
             "task 0: the shader reads a uniform block of 48 bytes at set 0, binding 4 (%");
  EXPECT_HAS(check(replace_once(kShader, "%pack_t = OpTypeStruct %v4float %v4float",
                                "%pack_t = OpTypeStruct %v4float %v4float %v4float")),
             "; the kernel binds 32 bytes there (argpack parameter 'pack')");
  // Push constants: the arguments (seed, k, the textures' extents) in a multiple of 16 bytes.
  uint32_t pushed = args_layout(kernel_abi()).size;
  ASSERT_LT(pushed, 128u);
  EXPECT_HAS(check(replace_once(kShader, "%words = OpTypeArray %uint %uint_4",
                                "%words = OpTypeArray %uint %uint_32")),
             "task 0: the shader's push-constant block is 128 bytes; the kernel's pipeline "
             "pushes " +
                 std::to_string(pushed));
  EXPECT_HAS(check(replace_once(kShader, "%args = OpVariable %push_ptr PushConstant",
                                "%args = OpVariable %push_ptr PushConstant\n"
                                "%more = OpVariable %push_ptr PushConstant")),
             "the shader has 2 push-constant blocks; a task has at most one");
  SpirvKernel in_uniform = kernel_code(assemble_spirv(kShader));
  in_uniform.args_in_push_constants = false;
  EXPECT_HAS(check({}, device_caps(), nullptr, in_uniform),
             "the shader has a push-constant block; the kernel passes its arguments in a uniform "
             "buffer");
}

// The check does not rely on the kernel's ABI check having run: a binding naming no parameter
// or slot is an error, not an out-of-range read.
TEST(ShaderCheck, BindingsNamingNothingAreErrors) {
  SpirvKernel code = kernel_code(assemble_spirv(kShader));
  code.bindings[1].index = 99;
  code.bindings[4].index = -5;
  std::string msg = check({}, device_caps(), nullptr, code);
  EXPECT_HAS(msg, "binding 1 names no texture");
}

}  // namespace
}  // namespace loom::vk
