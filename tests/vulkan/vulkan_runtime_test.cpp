// The Vulkan runtime below the Program API: device choice, kernels compiled here and loaded
// from SPIR-V, launches through host launch frames, argpacks as persistent uniform buffers,
// batching and barriers. Validation layers are on: any message fails the test.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>

#include "compiler/codegen_spirv/spirv_codegen.h"
#include "compiler/graph/document_json.h"
#include "compiler/graph/lower.h"
#include "compiler/ir/inst.h"
#include "compiler/passes/pipeline.h"
#include "runtime/common/error.h"
#include "runtime/host/argpack.h"
#include "runtime/host/field.h"
#include "runtime/host/launch_frame.h"
#include "runtime/host/ndarray.h"
#include "runtime/vulkan/gpu_buffer.h"
#include "runtime/vulkan/memory_allocator.h"
#include "runtime/vulkan/vk_check.h"
#include "runtime/vulkan/vulkan_kernel.h"
#include "runtime/vulkan/vulkan_runtime.h"
#include "tests/support/vulkan_required.h"

namespace loom {
namespace {

vk::RuntimeOptions test_options() {
  vk::RuntimeOptions o;
  o.device.validation = true;
  return o;
}

codegen::CompiledSpirvKernel compile_for(vk::VulkanRuntime& rt, const graph::Document& doc,
                                         const std::string& kernel, uint32_t without_features = 0) {
  auto k = graph::lower_kernel(doc, kernel);
  k->index_bits = 32;
  passes::run_pipeline(*k, {});
  codegen::SpirvTarget target;
  target.features = rt.caps().features & ~without_features;
  target.max_push_constant_bytes = rt.caps().max_push_constants;
  target.device_name = "device '" + rt.caps().name + "'";
  return codegen::compile_kernel_to_spirv(*k, target);
}

std::shared_ptr<vk::VulkanKernel> compile(vk::VulkanRuntime& rt, const graph::Document& doc,
                                          const std::string& kernel,
                                          uint32_t without_features = 0) {
  codegen::CompiledSpirvKernel c = compile_for(rt, doc, kernel, without_features);
  return rt.load(c.abi, c.kernel);
}

const char* kSaxpy = R"({"format": "loom-graph", "version": 2,
  "kernels": [{"name": "saxpy", "params": [{"name": "a", "kind": "value", "type": "f32"},
     {"name": "x", "kind": "ndarray", "type": "f32", "ndim": 1}, {"name": "y", "kind": "ndarray", "type": "f32", "ndim": 1}],
   "nodes": [
     {"id": 1, "type": "shape", "params": {"ndarray": "y", "dim": 0}},
     {"id": 2, "type": "range_for", "inputs": {"end0": "1"}, "regions": {"body": [
       {"id": 3, "type": "param", "params": {"name": "a"}},
       {"id": 4, "type": "load", "inputs": {"i0": "2.i0"}, "params": {"ndarray": "x"}},
       {"id": 5, "type": "load", "inputs": {"i0": "2.i0"}, "params": {"ndarray": "y"}},
       {"id": 6, "type": "expr", "inputs": {"a": "3", "x": "4", "y": "5"}, "params": {"expr": "a * x + y"}},
       {"id": 7, "type": "store", "inputs": {"i0": "2.i0", "value": "6"}, "params": {"ndarray": "y"}}]}}]}]})";

TEST(VulkanRuntime, FindsADevice) {
  LOOM_REQUIRE_VULKAN_OR_SKIP();
  std::vector<vk::DeviceInfo> devices = vk::enumerate_devices();
  ASSERT_FALSE(devices.empty()) << "no Vulkan device: install mesa-vulkan-drivers (lavapipe)";
  vk::VulkanRuntime rt(test_options());
  EXPECT_FALSE(rt.caps().name.empty());
  EXPECT_GE(rt.caps().max_push_constants, 128u);
  EXPECT_NE(rt.caps().signature(), "");
}

TEST(VulkanRuntime, UnknownDeviceIsAClearError) {
  LOOM_REQUIRE_VULKAN_OR_SKIP();
  vk::RuntimeOptions o = test_options();
  o.device.select = "no such gpu";
  try {
    vk::VulkanRuntime rt(o);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no Vulkan device matches 'no such gpu'"),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("0: "), std::string::npos) << e.what();
  }
}

TEST(VulkanRuntime, SaxpyThroughALaunchFrame) {
  LOOM_REQUIRE_VULKAN_OR_SKIP();
  vk::VulkanRuntime rt(test_options());
  graph::Document doc = graph::load_document(kSaxpy);
  auto kernel = compile(rt, doc, "saxpy");
  const int n = 10007;  // not a multiple of the workgroup size
  host::Ndarray x(Scalar::F32, {n}), y(Scalar::F32, {n});
  for (int i = 0; i < n; ++i) {
    x.data_as<float>()[i] = static_cast<float>(i);
    y.data_as<float>()[i] = 1.0f;
  }
  rt.add_buffer("x", x.data(), x.bytes());
  rt.add_buffer("y", y.data(), y.bytes());
  host::LaunchFrame frame(kernel->abi());
  frame.set_value<float>(0, 2.0f);
  frame.set_ndarray(1, x);
  frame.set_ndarray(2, y);
  for (int launch = 0; launch < 3; ++launch) rt.launch(*kernel, frame.context());
  rt.read_back(y.data());
  for (int i = 0; i < n; ++i)
    ASSERT_EQ(y.data_as<float>()[i], 1.0f + 3 * 2.0f * static_cast<float>(i)) << i;
  // x and y went up once; the three launches stayed in one submission, ordered by barriers.
  EXPECT_EQ(rt.stats().total.resource_bytes, 2u * n * 4);
  EXPECT_EQ(rt.stats().total.dispatches, 3u);
  EXPECT_GE(rt.stats().barriers, 2u);
  EXPECT_EQ(rt.stats().descriptor_sets, 1u);  // one set, reused
}

const char* kPack = R"({"format": "loom-graph", "version": 2,
  "argpack_types": [{"name": "P", "kind": "pack", "members": [{"name": "scale", "type": "f32"}, {"name": "offset", "type": "f32x3"}]}],
  "fields": [{"name": "out", "type": "f32", "shape": [64]}],
  "kernels": [{"name": "fill", "params": [{"name": "p", "kind": "argpack", "type": "P"}],
   "nodes": [
     {"id": 1, "type": "member", "params": {"param": "p", "path": "scale"}},
     {"id": 2, "type": "member", "params": {"param": "p", "path": "offset"}},
     {"id": 3, "type": "range_for", "inputs": {"end0": 64}, "regions": {"body": [
       {"id": 4, "type": "expr", "inputs": {"i": "3.i0", "s": "1", "o": "2"}, "params": {"expr": "i * s + o.y"}},
       {"id": 5, "type": "store", "inputs": {"i0": "3.i0", "value": "4"}, "params": {"field": "out"}}]}}]}]})";

TEST(VulkanRuntime, ArgpacksUploadOnceWhenChangedAndNeverWhenNot) {
  LOOM_REQUIRE_VULKAN_OR_SKIP();
  vk::VulkanRuntime rt(test_options());
  graph::Document doc = graph::load_document(kPack);
  layout_argpack_types(doc.argpack_types);
  auto kernel = compile(rt, doc, "fill");
  host::Field out(doc.fields[0]);
  host::Argpack pack(doc.argpack_types, 0);
  pack.set<float>("scale", 2.0f);
  pack.set_components<float>("offset", {0.0f, 10.0f, 0.0f});
  rt.add_buffer("out", out.data(), out.bytes());
  rt.add_argpack("p", pack);
  host::LaunchFrame frame(kernel->abi());
  frame.set_argpack(0, pack);
  frame.bind_field("out", out);

  rt.launch(*kernel, frame.context());
  EXPECT_EQ(rt.stats().last_launch.argpack_uploads, 1u);
  EXPECT_EQ(rt.stats().last_launch.argpack_bytes, pack.size());
  rt.launch(*kernel, frame.context());
  EXPECT_EQ(rt.stats().last_launch.argpack_uploads, 0u);  // unchanged: bound, not copied
  EXPECT_EQ(rt.stats().last_launch.argpack_bytes, 0u);
  pack.set<float>("scale", 3.0f);
  pack.set_components<float>("offset", {0.0f, 1.0f, 0.0f});  // two writes, one upload
  rt.launch(*kernel, frame.context());
  EXPECT_EQ(rt.stats().last_launch.argpack_uploads, 1u);
  rt.read_back(out.data());
  for (int i = 0; i < 64; ++i)
    EXPECT_EQ(reinterpret_cast<float*>(out.data())[i], 3.0f * static_cast<float>(i) + 1.0f);
  EXPECT_LE(rt.stats().waits,
            1u);  // only the read back may wait (not if the work already finished)
}

const char* kFloatAtomics = R"({"format": "loom-graph", "version": 2,
  "fields": [{"name": "acc", "type": "f32", "shape": [5]}],
  "kernels": [{"name": "sum", "nodes": [
     {"id": 1, "type": "range_for", "inputs": {"end0": 4096}, "regions": {"body": [
       {"id": 2, "type": "expr", "inputs": {"i": "1.i0"}, "params": {"expr": "i % 4"}},
       {"id": 3, "type": "cast", "inputs": {"a": "1.i0"}, "params": {"type": "f32"}},
       {"id": 4, "type": "atomic_add", "inputs": {"i0": "2", "value": "3"}, "params": {"field": "acc"}},
       {"id": 5, "type": "atomic_max", "inputs": {"i0": 4, "value": "3"}, "params": {"field": "acc"}}]}}]}]})";

// Devices without float atomics get a compare-and-swap loop with the same results.
TEST(VulkanRuntime, FloatAtomicsByCompareAndSwapWhenTheDeviceLacksThem) {
  LOOM_REQUIRE_VULKAN_OR_SKIP();
  vk::VulkanRuntime rt(test_options());
  graph::Document doc = graph::load_document(kFloatAtomics);
  const uint32_t float_atomics = kNeedFloat32AtomicAdd | kNeedFloat32AtomicMinMax |
                                 kNeedFloat64AtomicAdd | kNeedFloat64AtomicMinMax;
  codegen::CompiledSpirvKernel native = compile_for(rt, doc, "sum");
  codegen::CompiledSpirvKernel cas = compile_for(rt, doc, "sum", float_atomics);
  EXPECT_EQ(cas.kernel.requirements & float_atomics, 0u);
  if (rt.caps().features & kNeedFloat32AtomicAdd) {
    EXPECT_NE(native.kernel.requirements & kNeedFloat32AtomicAdd, 0u);
  }
  for (const codegen::CompiledSpirvKernel* c : {&native, &cas}) {
    auto kernel = rt.load(c->abi, c->kernel);
    host::Field acc(doc.fields[0]);
    rt.add_buffer("acc", acc.data(), acc.bytes());
    host::LaunchFrame frame(kernel->abi());
    frame.bind_field("acc", acc);
    rt.launch(*kernel, frame.context());
    rt.read_back(acc.data());
    auto* v = reinterpret_cast<float*>(acc.data());
    for (int slot = 0; slot < 4; ++slot) {
      double expect = 0;
      for (int i = slot; i < 4096; i += 4) expect += i;  // integers below 2^24: exact in any order
      EXPECT_EQ(v[slot], expect) << slot;
    }
    EXPECT_EQ(v[4], 4095.0f);
    rt.remove(acc.data());
  }
}

TEST(VulkanRuntime, MissingFeatureNamesKernelNodeAndFeature) {
  LOOM_REQUIRE_VULKAN_OR_SKIP();
  vk::VulkanRuntime rt(test_options());
  graph::Document doc = graph::load_document(R"({"format": "loom-graph", "version": 2,
    "fields": [{"name": "d", "type": "f64", "shape": [8]}],
    "kernels": [{"name": "wide", "nodes": [
      {"id": 1, "type": "range_for", "inputs": {"end0": 8}, "regions": {"body": [
        {"id": 7, "type": "cast", "inputs": {"a": "1.i0"}, "params": {"type": "f64"}},
        {"id": 8, "type": "store", "inputs": {"i0": "1.i0", "value": "7"}, "params": {"field": "d"}}]}}]}]})");
  try {
    compile_for(rt, doc, "wide", kNeedFloat64);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.place().kernel, "wide");
    EXPECT_EQ(e.place().node, 7);
    EXPECT_NE(std::string(e.what()).find("shaderFloat64"), std::string::npos) << e.what();
  }
  // A compiled kernel the device cannot run is refused at load, naming what is missing.
  codegen::CompiledSpirvKernel c = compile_for(rt, doc, "wide");
  c.kernel.requirements |= kNeedFloat64AtomicMinMax;
  if (!(rt.caps().features & kNeedFloat64AtomicMinMax)) {
    try {
      rt.load(c.abi, c.kernel);
      FAIL() << "expected an error";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("shaderBufferFloat64AtomicMinMax"), std::string::npos)
          << e.what();
    }
  }
}

TEST(VulkanRuntime, OversizedBuffersAreRefusedByName) {
  LOOM_REQUIRE_VULKAN_OR_SKIP();
  vk::VulkanRuntime rt(test_options());
  size_t too_big = static_cast<size_t>(rt.caps().max_storage_buffer_range) + 16;
  try {
    rt.add_buffer("huge", reinterpret_cast<uint8_t*>(16), too_big);  // never touched: refused first
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'huge'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("binds storage buffers of at most"), std::string::npos)
        << e.what();
  }
}

// Resources share a few large allocations instead of one vkAllocateMemory each.
TEST(VulkanRuntime, ResourcesAreSubAllocated) {
  LOOM_REQUIRE_VULKAN_OR_SKIP();
  vk::VulkanRuntime rt(test_options());
  std::vector<host::Ndarray> arrays;
  arrays.reserve(200);
  for (int i = 0; i < 200; ++i) {
    arrays.emplace_back(Scalar::F32, std::vector<int64_t>{1000 + i});
    rt.add_buffer("a" + std::to_string(i), arrays.back().data(), arrays.back().bytes());
  }
  EXPECT_TRUE(rt.has(arrays[7].data()));
  // 200 buffers of ~4 KiB: one or two blocks, not 200 allocations.
  vk::MemoryAllocator alloc(rt.device());
  std::vector<vk::GpuBuffer> buffers;
  for (int i = 0; i < 100; ++i)
    buffers.emplace_back(rt.device(), alloc, 4096 + 16 * i, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT,
                         vk::MemoryUse::DeviceLocal, "b");
  EXPECT_EQ(alloc.stats().allocations, 100u);
  EXPECT_LE(alloc.stats().blocks, 2u);
  buffers.erase(buffers.begin() + 10, buffers.begin() + 60);  // freed ranges merge and are reused
  for (int i = 0; i < 50; ++i)
    buffers.emplace_back(rt.device(), alloc, 4096, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT,
                         vk::MemoryUse::DeviceLocal, "c");
  EXPECT_LE(alloc.stats().blocks, 2u);
  EXPECT_EQ(alloc.stats().allocations, 100u);
}

// A small runtime (an engine's device running a module of a few kilobytes) reserves little:
// blocks and staging chunks start small and grow with use.
TEST(VulkanRuntime, SmallRuntimesReserveLittleDeviceMemory) {
  LOOM_REQUIRE_VULKAN_OR_SKIP();
  vk::VulkanRuntime rt(test_options());
  graph::Document doc = graph::load_document(kSaxpy);
  auto kernel = compile(rt, doc, "saxpy");
  const int n = 512;
  host::Ndarray x(Scalar::F32, {n}), y(Scalar::F32, {n});
  std::fill_n(x.data_as<float>(), n, 1.0f);
  std::fill_n(y.data_as<float>(), n, 2.0f);
  rt.add_buffer("x", x.data(), x.bytes());
  rt.add_buffer("y", y.data(), y.bytes());
  host::LaunchFrame frame(kernel->abi());
  frame.set_value<float>(0, 3.0f);
  frame.set_ndarray(1, x);
  frame.set_ndarray(2, y);
  rt.launch(*kernel, frame.context());
  rt.read_back(y.data());
  EXPECT_EQ(y.data_as<float>()[n - 1], 5.0f);
  VkDeviceSize reserved = 0, used = 0;
  bool device_local = false;
  for (const vk::MemoryAllocator::TypeUsage& u : rt.memory_usage()) {
    EXPECT_GT(u.blocks, 0u);
    EXPECT_LE(u.used, u.reserved) << "memory type " << u.type;
    reserved += u.reserved;
    used += u.used;
    device_local |= (u.flags & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) != 0;
  }
  EXPECT_TRUE(device_local);
  EXPECT_GE(used, 2u * n * 4);  // x and y at least
  EXPECT_LE(reserved, 4u << 20) << "reserved " << reserved << " bytes for " << used << " in use";
}

TEST(VulkanRuntime, MemoryBlocksGrowWithUse) {
  LOOM_REQUIRE_VULKAN_OR_SKIP();
  vk::VulkanRuntime rt(test_options());
  vk::MemoryAllocator alloc(rt.device(), 1 << 20, 16 << 20);
  std::vector<vk::GpuBuffer> buffers;
  // 60 buffers of 512 KiB (30 MiB): blocks of 1, 2, 4, 8, 16, 16 MiB, not 30 of 1 MiB.
  for (int i = 0; i < 60; ++i)
    buffers.emplace_back(rt.device(), alloc, 512 << 10, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT,
                         vk::MemoryUse::DeviceLocal, "b");
  EXPECT_EQ(alloc.stats().allocations, 60u);
  EXPECT_LE(alloc.stats().blocks, 6u);
  EXPECT_LE(alloc.stats().reserved, 2 * alloc.stats().used + (1u << 20));
  // A buffer over half the largest block gets a block of its own, freed with it.
  size_t blocks = alloc.stats().blocks;
  buffers.emplace_back(rt.device(), alloc, 9 << 20, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT,
                       vk::MemoryUse::DeviceLocal, "big");
  EXPECT_EQ(alloc.stats().blocks, blocks + 1);
  buffers.pop_back();
  EXPECT_EQ(alloc.stats().blocks, blocks);
}

TEST(VulkanRuntime, VulkanFailuresAreExplained) {
  LOOM_REQUIRE_VULKAN_OR_SKIP();
  auto message = [](VkResult r) {
    try {
      vk::check(r, "allocating 'grid'");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(message(VK_SUCCESS), "");
  EXPECT_NE(message(VK_ERROR_OUT_OF_DEVICE_MEMORY)
                .find("allocating 'grid': VK_ERROR_OUT_OF_DEVICE_MEMORY (out of device memory)"),
            std::string::npos);
  EXPECT_NE(message(VK_ERROR_DEVICE_LOST).find("the device was lost"), std::string::npos);
  // No memory type can hold it: a clear error, not a crash.
  vk::VulkanRuntime rt(test_options());
  vk::MemoryAllocator alloc(rt.device());
  VkMemoryRequirements impossible{4096, 16, 0};
  try {
    alloc.allocate(impossible, vk::MemoryUse::DeviceLocal, true, "field 'grid'");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("field 'grid'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace loom
