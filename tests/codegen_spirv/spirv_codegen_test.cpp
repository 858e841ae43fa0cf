// SPIR-V code generation: every kernel of every sample and test document compiles to
// modules that pass the SPIRV-Tools validator, in release and debug builds of the kernels.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "compiler/codegen_spirv/spirv_codegen.h"
#include "compiler/codegen_spirv/spirv_tools.h"
#include "compiler/graph/document_json.h"
#include "compiler/graph/lower.h"
#include "compiler/ir/inst.h"
#include "compiler/passes/pipeline.h"
#include "runtime/common/error.h"

namespace loom {
namespace {

// VK_MAKE_API_VERSION without the Vulkan header (the compiler never includes it).
constexpr uint32_t vulkan_api(uint32_t major, uint32_t minor) {
  return (major << 22) | (minor << 12);
}

std::unique_ptr<ir::Kernel> lowered(const graph::Document& doc, const std::string& kernel,
                                    bool debug) {
  auto k = graph::lower_kernel(doc, kernel);
  k->index_bits = 32;
  passes::PipelineOptions po;
  po.debug = debug;
  passes::run_pipeline(*k, po);
  return k;
}

bool has_open_parameters(const graph::KernelDecl& k) {
  for (const auto& p : k.params)
    if (p.kind == graph::ParamKind::Template ||
        (p.kind == graph::ParamKind::Ndarray && p.type.empty()))
      return true;
  return false;
}

// SPIR-V 1.5 for Vulkan 1.2 devices, 1.3 for Vulkan 1.1 ones (engines often create those).
class SpirvVersions : public ::testing::TestWithParam<uint32_t> {};

// Each kernel twice: with subgroup arithmetic (reductions of 32-bit values use subgroup
// operations) and without (the shared-memory tree only, no GroupNonUniform capability).
TEST_P(SpirvVersions, EveryDocumentKernelValidates) {
  codegen::SpirvTarget target;
  target.spirv_version = GetParam();
  int compiled = 0, with_subgroups = 0;
  for (bool subgroups : {true, false}) {
    target.features = subgroups ? kAllSpirvRequirements
                                : kAllSpirvRequirements & ~uint32_t{kNeedSubgroupArithmetic};
    for (const char* dir : {"assets/graphs", "tests/e2e/docs", "tests/codegen_spirv/docs"}) {
      for (const auto& entry :
           std::filesystem::directory_iterator(std::string(LOOM_SOURCE_DIR) + "/" + dir)) {
        if (entry.path().extension() != ".json") continue;
        graph::Document doc = graph::load_document_file(entry.path().string());
        for (const graph::KernelDecl& k : doc.kernels) {
          if (has_open_parameters(k)) continue;
          for (bool debug : {false, true}) {
            SCOPED_TRACE(entry.path().filename().string() + ": " + k.name +
                         (debug ? " (debug)" : ""));
            try {
              auto ir = lowered(doc, k.name, debug);
              codegen::CompiledSpirvKernel c = codegen::compile_kernel_to_spirv(*ir, target);
              for (const SpirvTask& t : c.kernel.tasks) {
                EXPECT_EQ(t.spirv.at(1), GetParam());
                EXPECT_EQ(codegen::validate_spirv(t.spirv), "");
                if (!subgroups) {
                  EXPECT_EQ(codegen::disassemble_spirv(t.spirv).find("GroupNonUniform"),
                            std::string::npos);
                }
              }
              if (c.kernel.requirements & kNeedSubgroupArithmetic) {
                EXPECT_TRUE(subgroups);
                ++with_subgroups;
              }
              ++compiled;
            } catch (const Error& e) {
              ADD_FAILURE() << e.what();
            }
          }
        }
      }
    }
  }
  EXPECT_GT(compiled, 40);
  EXPECT_GT(with_subgroups, 0);  // the documents hold i32 and f32 reductions
}

INSTANTIATE_TEST_SUITE_P(SpirvCodegen, SpirvVersions, ::testing::Values(kSpirv1_5, kSpirv1_3),
                         [](const ::testing::TestParamInfo<uint32_t>& info) {
                           return "Spirv" + std::to_string(info.param >> 16) + "_" +
                                  std::to_string((info.param >> 8) & 0xff);
                         });

TEST(SpirvCodegen, VersionsForVulkanVersions) {
  EXPECT_EQ(max_spirv_version(vulkan_api(0, 9)), 0u);
  EXPECT_EQ(max_spirv_version(vulkan_api(1, 0)), kSpirv1_0);
  EXPECT_EQ(max_spirv_version(vulkan_api(1, 1)), kSpirv1_3);
  EXPECT_EQ(max_spirv_version(vulkan_api(1, 2)), kSpirv1_5);
  EXPECT_EQ(max_spirv_version(vulkan_api(1, 3)), 0x00010600u);
  EXPECT_EQ(spirv_version_text(kSpirv1_3), "1.3");
  EXPECT_EQ(spirv_version_text(kSpirv1_0), "1.0");
  EXPECT_EQ(spirv_version_text(0x07230203), "?");
  EXPECT_EQ(vulkan_version_text(vulkan_api(1, 1)), "1.1");
}

// spirv-val, the command-line validator, when it is installed: a second opinion on the
// environment (the library picks it from the module's version).
std::string command_line_validation(const std::vector<uint32_t>& words, const char* env) {
  if (!std::filesystem::exists("/usr/bin/spirv-val")) return "";
  std::string path =
      ::testing::TempDir() + "/loom_spirv10_check_" + std::to_string(getpid()) + ".spv";
  {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(words.data()),
              static_cast<std::streamsize>(words.size() * 4));
  }
  std::string command = std::string("/usr/bin/spirv-val --target-env ") + env + " '" + path + "'";
  return std::system(command.c_str()) == 0
             ? ""
             : "spirv-val --target-env " + std::string(env) + " refused " + path;
}

// SPIR-V 1.0 for Vulkan 1.0 devices (Unity often creates those): every kernel of every
// document either validates for Vulkan 1.0, its storage buffers Uniform BufferBlocks (the
// StorageBuffer class needs SPIR-V 1.3 or an extension), or is refused naming the kernel and
// a feature SPIR-V 1.0 code does not use.
TEST(SpirvCodegen, Spirv1_0KernelsValidateForVulkan1_0OrAreRefusedByName) {
  codegen::SpirvTarget target;  // every feature: what SPIR-V 1.0 itself rules out is refused
  target.spirv_version = kSpirv1_0;
  int compiled = 0, refused = 0;
  bool checked_command_line = false;
  for (const char* dir : {"assets/graphs", "tests/e2e/docs", "tests/codegen_spirv/docs"}) {
    for (const auto& entry :
         std::filesystem::directory_iterator(std::string(LOOM_SOURCE_DIR) + "/" + dir)) {
      if (entry.path().extension() != ".json") continue;
      graph::Document doc = graph::load_document_file(entry.path().string());
      for (const graph::KernelDecl& k : doc.kernels) {
        if (has_open_parameters(k)) continue;
        for (bool debug : {false, true}) {
          SCOPED_TRACE(entry.path().filename().string() + ": " + k.name +
                       (debug ? " (debug)" : ""));
          try {
            auto ir = lowered(doc, k.name, debug);
            codegen::CompiledSpirvKernel c = codegen::compile_kernel_to_spirv(*ir, target);
            EXPECT_EQ(c.kernel.requirements & ~kSpirv1_0Requirements, 0u);
            for (const SpirvTask& t : c.kernel.tasks) {
              EXPECT_EQ(t.spirv.at(1), kSpirv1_0);
              EXPECT_EQ(codegen::validate_spirv(t.spirv), "");
              std::string text = codegen::disassemble_spirv(t.spirv);
              EXPECT_EQ(text.find("StorageBuffer"), std::string::npos);
              EXPECT_EQ(text.find("OpExtension"), std::string::npos);
              EXPECT_EQ(text.find("GroupNonUniform"), std::string::npos);  // Vulkan 1.1
              if (!checked_command_line && text.find("BufferBlock") != std::string::npos) {
                EXPECT_EQ(command_line_validation(t.spirv, "vulkan1.0"), "");
                checked_command_line = true;
              }
            }
            ++compiled;
          } catch (const Error& e) {
            std::string m = e.what();
            EXPECT_NE(m.find("kernel '" + k.name + "'"), std::string::npos) << m;
            EXPECT_NE(m.find("SPIR-V 1.0"), std::string::npos) << m;
            ++refused;
          }
        }
      }
    }
  }
  EXPECT_GT(compiled, 20);
  EXPECT_TRUE(checked_command_line);
  std::printf("SPIR-V 1.0: %d kernels compiled, %d refused\n", compiled, refused);
}

// What SPIR-V 1.0 cannot express without extensions: a u8 ndarray needs 8-bit storage. The
// error names the kernel, the node and the feature, and says SPIR-V 1.0 rules it out; the
// same kernel compiles for Vulkan 1.1 (SPIR-V 1.3).
TEST(SpirvCodegen, Spirv1_0RefusesWhatNeedsExtensionsByName) {
  const char* text = R"({"format": "loom-graph", "version": 2,
    "kernels": [{"name": "bytes", "params": [{"name": "b", "kind": "ndarray", "type": "u8", "ndim": 1}],
     "nodes": [
      {"id": 1, "type": "shape", "params": {"ndarray": "b", "dim": 0}},
      {"id": 2, "type": "range_for", "inputs": {"end0": "1"}, "regions": {"body": [
        {"id": 3, "type": "store", "inputs": {"i0": "2.i0", "value": 7}, "params": {"ndarray": "b"}}]}}]}]})";
  graph::Document doc = graph::load_document(text);
  codegen::SpirvTarget target;
  target.device_name = "device 'unity'";
  target.spirv_version = kSpirv1_0;
  try {
    codegen::compile_kernel_to_spirv(*lowered(doc, "bytes", false), target);
    ADD_FAILURE() << "a u8 ndarray compiled for SPIR-V 1.0";
  } catch (const Error& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("kernel 'bytes' needs "), std::string::npos) << m;
    EXPECT_NE(m.find("storageBuffer8BitAccess"), std::string::npos) << m;
    EXPECT_NE(m.find("device 'unity' lacks it (SPIR-V 1.0"), std::string::npos) << m;
  }
  target.spirv_version = kSpirv1_3;
  codegen::CompiledSpirvKernel c =
      codegen::compile_kernel_to_spirv(*lowered(doc, "bytes", false), target);
  EXPECT_NE(c.kernel.requirements & kNeedStorage8, 0u);
}

// Devices with only one kind of native float atomic: a field that needs compare-and-swap for
// one operation takes it for all (its buffer is declared as words), and the module validates.
TEST(SpirvCodegen, MixedNativeAndEmulatedFloatAtomicsValidate) {
  graph::Document doc = graph::load_document_file(
      std::string(LOOM_SOURCE_DIR) + "/tests/codegen_spirv/docs/mixed_float_atomics.loom.json");
  for (uint32_t without : {0u, uint32_t{kNeedFloat32AtomicAdd}, uint32_t{kNeedFloat32AtomicMinMax},
                           uint32_t{kNeedFloat32AtomicAdd | kNeedFloat32AtomicMinMax}}) {
    codegen::SpirvTarget target;
    target.features = kAllSpirvRequirements & ~without;
    auto k = lowered(doc, "k", false);
    codegen::CompiledSpirvKernel c =
        codegen::compile_kernel_to_spirv(*k, target);  // validates or throws
    std::string text = codegen::disassemble_spirv(c.kernel.tasks.at(0).spirv);
    bool native_add = !(without & kNeedFloat32AtomicAdd) && !(without & kNeedFloat32AtomicMinMax);
    EXPECT_EQ(text.find("OpAtomicFAddEXT") != std::string::npos, native_add)
        << "without " << without;
    EXPECT_EQ(c.kernel.requirements & without, 0u);
  }
}

// A workgroup's reduced value goes into the sum by the device's own atomic where it has one:
// a compare-and-swap loop retries once per workgroup that got in first, and thousands of
// workgroups adding floats into one sum took 25x the hand-written GLSL's time on an H200.
// Integer sums and maxima always have an atomic; a float sum only with the device's float
// atomic add (else compare-and-swap, still valid).
TEST(SpirvCodegen, ReductionsCombineByTheDevicesOwnAtomics) {
  graph::Document doc =
      graph::load_document_file(std::string(LOOM_SOURCE_DIR) + "/bench/graphs/reduction.loom.json");
  struct Case {
    const char* kernel;
    uint32_t without;
    const char* atomic;  // the instruction that must combine, or "" for compare-and-swap
  };
  for (const Case& c :
       {Case{"sum_f32", 0, "OpAtomicFAddEXT"}, Case{"sum_f32", kNeedFloat32AtomicAdd, ""},
        Case{"max_i32", 0, "OpAtomicSMax"},
        Case{"max_i32", kNeedFloat32AtomicAdd | kNeedFloat32AtomicMinMax, "OpAtomicSMax"}}) {
    for (bool subgroups : {true, false}) {
      SCOPED_TRACE(std::string(c.kernel) + " without " + std::to_string(c.without) +
                   (subgroups ? ", subgroups" : ""));
      codegen::SpirvTarget target;
      target.features = kAllSpirvRequirements & ~c.without;
      if (!subgroups) target.features &= ~uint32_t{kNeedSubgroupArithmetic};
      codegen::CompiledSpirvKernel k =
          codegen::compile_kernel_to_spirv(*lowered(doc, c.kernel, false), target);
      std::string text;
      for (const SpirvTask& t : k.kernel.tasks) text += codegen::disassemble_spirv(t.spirv);
      bool cas = text.find("OpAtomicCompareExchange") != std::string::npos;
      if (*c.atomic) {
        EXPECT_NE(text.find(c.atomic), std::string::npos);
        EXPECT_FALSE(cas);
      } else {
        EXPECT_TRUE(cas);
        EXPECT_EQ(k.kernel.requirements & kNeedFloat32AtomicAdd, 0u);
      }
    }
  }
}

// The workgroup size is a kernel option in the document; it wins over the program's.
TEST(SpirvCodegen, WorkgroupSizeIsAKernelOption) {
  const char* text =
      R"({"format": "loom-graph", "version": 2, "fields": [{"name": "f", "type": "i32", "shape": [1000]}],
    "kernels": [{"name": "k", "workgroup_size": 32, "nodes": [
      {"id": 1, "type": "range_for", "inputs": {"end0": 1000}, "regions": {"body": [
        {"id": 2, "type": "store", "inputs": {"i0": "1.i0", "value": "1.i0"}, "params": {"field": "f"}}]}}]},
      {"name": "plain", "nodes": [
      {"id": 1, "type": "range_for", "inputs": {"end0": 1000}, "regions": {"body": [
        {"id": 2, "type": "store", "inputs": {"i0": "1.i0", "value": 7}, "params": {"field": "f"}}]}}]}]})";
  graph::Document doc = graph::load_document(text);
  EXPECT_EQ(doc.kernels[0].workgroup_size, 32);
  EXPECT_NE(graph::save_document(doc).find("\"workgroup_size\": 32"), std::string::npos);
  codegen::SpirvTarget target;
  target.workgroup_size = 256;
  auto k = lowered(doc, "k", false);
  codegen::CompiledSpirvKernel c = codegen::compile_kernel_to_spirv(*k, target);
  EXPECT_EQ(c.kernel.tasks.at(0).workgroup_size, 32u);
  EXPECT_NE(codegen::disassemble_spirv(c.kernel.tasks[0].spirv).find("LocalSize 32 1 1"),
            std::string::npos);
  auto plain = lowered(doc, "plain", false);
  EXPECT_EQ(codegen::compile_kernel_to_spirv(*plain, target).kernel.tasks.at(0).workgroup_size,
            256u);
  // Out of range: an error naming the key path.
  std::string bad = text;
  bad.replace(bad.find("\"workgroup_size\": 32"), 20, "\"workgroup_size\": 4096");
  try {
    graph::load_document(bad);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("workgroup_size"), std::string::npos) << e.what();
  }
}

// A device that cuts loops short (llvmpipe, tests/vulkan/loop_limit_test.cpp runs there):
// every document kernel, its loops checked, still validates at each SPIR-V version (apart
// from what SPIR-V 1.0 rules out by name), in release and debug builds of the kernels.
TEST(SpirvCodegen, LoopChecksForADeviceWithALoopLimitValidate) {
  EXPECT_EQ(codegen::loop_iteration_limit(0x10005, "llvmpipe (LLVM 15.0.6, 256 bits)"), 65535u);
  EXPECT_EQ(codegen::loop_iteration_limit(0x10de, "NVIDIA GeForce RTX 4090"), 0u);
  int checked = 0;
  for (uint32_t version : {kSpirv1_5, kSpirv1_3, kSpirv1_0}) {
    codegen::SpirvTarget target;
    target.spirv_version = version;
    target.loop_iteration_limit = 65535;
    for (const char* dir : {"assets/graphs", "tests/e2e/docs", "tests/codegen_spirv/docs"}) {
      for (const auto& entry :
           std::filesystem::directory_iterator(std::string(LOOM_SOURCE_DIR) + "/" + dir)) {
        if (entry.path().extension() != ".json") continue;
        graph::Document doc = graph::load_document_file(entry.path().string());
        for (const graph::KernelDecl& k : doc.kernels) {
          if (has_open_parameters(k)) continue;
          for (bool debug : {false, true}) {
            SCOPED_TRACE(entry.path().filename().string() + ": " + k.name +
                         (debug ? " (debug)" : "") + ", SPIR-V " + spirv_version_text(version));
            try {
              auto ir = lowered(doc, k.name, debug);
              codegen::CompiledSpirvKernel c = codegen::compile_kernel_to_spirv(*ir, target);
              for (const SpirvTask& t : c.kernel.tasks) {
                EXPECT_EQ(codegen::validate_spirv(t.spirv), "");
                // The loop flag: an array of one word per invocation in Workgroup memory.
                checked += codegen::disassemble_spirv(t.spirv).find(
                               "OpVariable %_ptr_Workgroup__arr_uint") != std::string::npos;
              }
            } catch (const Error& e) {
              if (version != kSpirv1_0) ADD_FAILURE() << e.what();
            }
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 20);
}

}  // namespace
}  // namespace loom
