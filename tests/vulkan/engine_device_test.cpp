// Loom on devices made the way engines make theirs (tests/support/engine_host.h), given only
// what each engine hands a plugin (instance, physical device, device, queue and family, the
// API version; never the VkDeviceCreateInfo). Each host has its own instance with the
// validation layer and a messenger: any message fails the test. Kernels compile for the SPIR-V the
// device takes (1.0 on Vulkan 1.0, 1.3 on 1.1), run on Loom's stream (fences, not timeline
// semaphores) and inside the host's command buffers.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "compiler/codegen_spirv/spirv_codegen.h"
#include "compiler/graph/document_json.h"
#include "compiler/graph/lower.h"
#include "compiler/ir/inst.h"
#include "compiler/passes/pipeline.h"
#include "runtime/common/error.h"
#include "runtime/host/field.h"
#include "runtime/host/launch_frame.h"
#include "runtime/host/ndarray.h"
#include "runtime/vulkan/command_stream.h"
#include "runtime/vulkan/host_frames.h"
#include "runtime/vulkan/vk_check.h"
#include "runtime/vulkan/vulkan_kernel.h"
#include "runtime/vulkan/vulkan_runtime.h"
#include "tests/support/engine_host.h"
#include "tests/support/vulkan_required.h"

namespace loom {
namespace {

constexpr uint64_t kTimeout = 10'000'000'000;  // ns

const char* kSaxpy = R"doc({"format": "loom-graph", "version": 2,
  "kernels": [{"name": "saxpy", "params": [{"name": "a", "kind": "value", "type": "f32"},
     {"name": "x", "kind": "ndarray", "type": "f32", "ndim": 1}, {"name": "y", "kind": "ndarray", "type": "f32", "ndim": 1}],
   "nodes": [
     {"id": 1, "type": "shape", "params": {"ndarray": "y", "dim": 0}},
     {"id": 2, "type": "range_for", "inputs": {"end0": "1"}, "regions": {"body": [
       {"id": 3, "type": "param", "params": {"name": "a"}},
       {"id": 4, "type": "load", "inputs": {"i0": "2.i0"}, "params": {"ndarray": "x"}},
       {"id": 5, "type": "load", "inputs": {"i0": "2.i0"}, "params": {"ndarray": "y"}},
       {"id": 6, "type": "expr", "inputs": {"a": "3", "x": "4", "y": "5"}, "params": {"expr": "a * x + y"}},
       {"id": 7, "type": "store", "inputs": {"i0": "2.i0", "value": "6"}, "params": {"ndarray": "y"}}]}}]}]})doc";

// A float atomic add into a field: native where the host enabled float atomics, by
// compare-and-swap otherwise (none of these hosts enable them).
const char* kHistogram = R"doc({"format": "loom-graph", "version": 2,
  "fields": [{"name": "bins", "type": "f32", "shape": [4]}],
  "kernels": [{"name": "count", "params": [],
   "nodes": [
     {"id": 1, "type": "range_for", "inputs": {"end0": 1000}, "regions": {"body": [
       {"id": 2, "type": "expr", "inputs": {"i": "1.i0"}, "params": {"expr": "i % 4"}},
       {"id": 3, "type": "atomic_add", "inputs": {"i0": "2", "value": 0.5}, "params": {"field": "bins"}}]}}]}]})doc";

using testing::Engine;
using testing::engine_name;
using testing::EngineHost;

// What the engine hands a plugin, and what it says it enabled.
vk::ImportedDevice handles(const EngineHost& host) {
  vk::ImportedDevice d;
  d.instance = host.instance();
  d.physical = host.physical();
  d.device = host.device();
  d.queue_family = host.family();
  d.queue = host.queue();
  d.api_version = host.api_version();
  d.timeline_semaphore = false;
  const VkPhysicalDeviceFeatures& f = host.enabled();
  if (f.shaderInt64) d.kernel_features |= kNeedInt64;
  if (f.shaderFloat64) d.kernel_features |= kNeedFloat64;
  if (f.shaderInt16) d.kernel_features |= kNeedInt16;
  if (host.storage16()) d.kernel_features |= kNeedStorage16;
  if (f.shaderStorageImageExtendedFormats) d.kernel_features |= kNeedStorageImageExtendedFormats;
  return d;
}

std::shared_ptr<vk::VulkanKernel> compile(vk::VulkanRuntime& rt, const char* text,
                                          const std::string& kernel, uint32_t spirv_version) {
  graph::Document doc = graph::load_document(text);
  auto k = graph::lower_kernel(doc, kernel);
  k->index_bits = 32;
  passes::run_pipeline(*k, {});
  codegen::SpirvTarget target;
  target.features = rt.caps().features;
  target.max_push_constant_bytes = rt.caps().max_push_constants;
  target.device_name = "device '" + rt.caps().name + "'";
  target.spirv_version = spirv_version;
  codegen::CompiledSpirvKernel c = codegen::compile_kernel_to_spirv(*k, target);
  return rt.load(c.abi, c.kernel);
}

class EngineDevice : public ::testing::TestWithParam<Engine> {
 protected:
  void SetUp() override {
    LOOM_REQUIRE_VULKAN_OR_SKIP();
    host_ = std::make_unique<EngineHost>(GetParam());
    host_->create();
    rt_ = std::make_unique<vk::VulkanRuntime>(std::make_shared<vk::VulkanDevice>(handles(*host_)),
                                              vk::RuntimeOptions{});
  }
  void TearDown() override {
    rt_.reset();
    if (!host_) return;
    for (const std::string& m : host_->take_messages()) ADD_FAILURE() << "Vulkan validation: " << m;
    host_.reset();
  }
  uint32_t spirv_for_device() const {
    return std::min(kSpirv1_5, max_spirv_version(rt_->caps().api_version));
  }

  std::unique_ptr<EngineHost> host_;
  std::unique_ptr<vk::VulkanRuntime> rt_;
};

TEST_P(EngineDevice, RunsKernelsOnLoomsStreamWithFences) {
  EXPECT_EQ(rt_->caps().api_version, host_->api_version());
  EXPECT_FALSE(rt_->device().timeline_semaphores());
  auto saxpy = compile(*rt_, kSaxpy, "saxpy", spirv_for_device());
  const int n = 1000;
  host::Ndarray x(Scalar::F32, {n}), y(Scalar::F32, {n});
  for (int i = 0; i < n; ++i) {
    x.data_as<float>()[i] = static_cast<float>(i);
    y.data_as<float>()[i] = 1.0f;
  }
  rt_->add_buffer("x", x.data(), x.bytes());
  rt_->add_buffer("y", y.data(), y.bytes());
  host::LaunchFrame frame(saxpy->abi());
  frame.set_value<float>(0, 2.0f);
  frame.set_ndarray(1, x);
  frame.set_ndarray(2, y);
  for (int launch = 0; launch < 3; ++launch) {
    rt_->launch(*saxpy, frame.context());
    rt_->flush();  // three submissions, three fences
  }
  rt_->read_back(y.data());
  for (int i = 0; i < n; ++i)
    ASSERT_EQ(y.data_as<float>()[i], 1.0f + 3 * 2.0f * static_cast<float>(i)) << i;
  EXPECT_GE(rt_->stats().submits, 3u);

  // Float atomics the host did not enable: compare-and-swap, same sums.
  graph::Document histogram = graph::load_document(kHistogram);
  auto count = compile(*rt_, kHistogram, "count", spirv_for_device());
  host::Field bins(histogram.fields[0]);
  rt_->add_buffer("bins", bins.data(), bins.bytes());
  host::LaunchFrame bind(count->abi());
  bind.bind_field("bins", bins);
  rt_->launch(*count, bind.context());
  rt_->read_back(bins.data());
  for (int i = 0; i < 4; ++i) EXPECT_EQ(reinterpret_cast<float*>(bins.data())[i], 125.0f);
  saxpy.reset();
  count.reset();
}

TEST_P(EngineDevice, RecordsIntoTheEnginesCommandBuffers) {
  auto saxpy = compile(*rt_, kSaxpy, "saxpy", spirv_for_device());
  const int n = 257;
  host::Ndarray x(Scalar::F32, {n}), y(Scalar::F32, {n});
  for (int i = 0; i < n; ++i) {
    x.data_as<float>()[i] = static_cast<float>(i);
    y.data_as<float>()[i] = 2.0f;
  }
  rt_->add_buffer("x", x.data(), x.bytes());
  rt_->add_buffer("y", y.data(), y.bytes());
  host::LaunchFrame frame(saxpy->abi());
  frame.set_value<float>(0, 0.5f);
  frame.set_ndarray(1, x);
  frame.set_ndarray(2, y);
  {
    vk::HostFrames frames(*rt_, 2);
    for (int f = 0; f < 4; ++f) {
      frames.begin_frame();
      host_->frame([&](VkCommandBuffer cb) {
        frames.launch_into(cb, *saxpy, frame.context());
        frames.barrier_for_graphics(cb);
      });
    }
    EXPECT_EQ(frames.stats().launches, 4u);
  }
  rt_->read_back(y.data());
  for (int i = 0; i < n; ++i)
    ASSERT_EQ(y.data_as<float>()[i], 2.0f + 4 * 0.5f * static_cast<float>(i)) << i;
  saxpy.reset();
}

// A host that names a timeline value on a device without timelines is told so; binary
// semaphores work.
TEST_P(EngineDevice, SubmissionsTakeBinarySemaphoresOnly) {
  VkSemaphoreCreateInfo sci{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
  VkSemaphore binary = VK_NULL_HANDLE;
  vk::check(vkCreateSemaphore(host_->device(), &sci, nullptr, &binary), "a binary semaphore");
  try {
    rt_->submit({}, std::vector<vk::SemaphoreSignal>{{binary, 5}});
    ADD_FAILURE() << "a timeline value was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("timeline semaphores are not enabled"), std::string::npos)
        << e.what();
  }
  rt_->submit({}, std::vector<vk::SemaphoreSignal>{{binary, 0}});
  // The engine's next submission waits for Loom's signal.
  VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  VkFence fence = VK_NULL_HANDLE;
  vk::check(vkCreateFence(host_->device(), &fci, nullptr, &fence), "a fence");
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  VkPipelineStageFlags stage = VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT;
  si.waitSemaphoreCount = 1;
  si.pWaitSemaphores = &binary;
  si.pWaitDstStageMask = &stage;
  vk::check(vkQueueSubmit(rt_->device().queue(), 1, &si, fence), "waiting on the semaphore");
  vk::check(vkWaitForFences(host_->device(), 1, &fence, VK_TRUE, kTimeout), "the fence");
  vkDestroyFence(host_->device(), fence, nullptr);
  rt_->synchronize();
  vkDestroySemaphore(host_->device(), binary, nullptr);
}

// SPIR-V 1.5 (a module compiled with --vulkan-version 1.2) loads on a Vulkan 1.2 host; on a
// 1.1 or 1.0 host it is refused at load, naming the kernel and both versions (and SPIR-V 1.3 on
// a 1.0 host).
TEST_P(EngineDevice, SpirvNewerThanTheDeviceTakesIsRefusedByName) {
  if (rt_->caps().api_version >= VK_API_VERSION_1_2) {
    EXPECT_NE(compile(*rt_, kSaxpy, "saxpy", kSpirv1_5), nullptr);
    return;
  }
  std::string device = vulkan_version_text(rt_->caps().api_version);
  std::vector<uint32_t> newer = {kSpirv1_5};
  if (rt_->caps().api_version < VK_API_VERSION_1_1) newer.push_back(kSpirv1_3);
  for (uint32_t version : newer) {
    std::string spirv = spirv_version_text(version);
    try {
      compile(*rt_, kSaxpy, "saxpy", version);
      ADD_FAILURE() << "SPIR-V " << spirv << " loaded on a Vulkan " << device << " device";
    } catch (const Error& e) {
      std::string m = e.what();
      EXPECT_NE(m.find("kernel 'saxpy'"), std::string::npos) << m;
      EXPECT_NE(m.find("SPIR-V " + spirv + ", newer than Vulkan " + device), std::string::npos)
          << m;
    }
  }
}

// A Vulkan 1.0 host (Unity on an older driver): SPIR-V 1.0 with storage buffers as Uniform
// BufferBlocks, and a kernel needing what SPIR-V 1.0 does not use (8-bit storage) refused by
// name, naming the kernel and the feature.
class Vulkan1_0EngineDevice : public EngineDevice {};

TEST_P(Vulkan1_0EngineDevice, GetsSpirv1_0) {
  ASSERT_EQ(rt_->caps().api_version, static_cast<uint32_t>(VK_API_VERSION_1_0));
  EXPECT_EQ(spirv_for_device(), kSpirv1_0);
  EXPECT_EQ(rt_->caps().subgroup_size, 0u);  // no VkPhysicalDeviceSubgroupProperties on 1.0
  EXPECT_EQ(rt_->caps().features & ~kSpirv1_0Requirements, 0u);
  const char* bytes = R"doc({"format": "loom-graph", "version": 2,
    "kernels": [{"name": "bytes", "params": [{"name": "b", "kind": "ndarray", "type": "u8", "ndim": 1}],
     "nodes": [
      {"id": 1, "type": "shape", "params": {"ndarray": "b", "dim": 0}},
      {"id": 2, "type": "range_for", "inputs": {"end0": "1"}, "regions": {"body": [
        {"id": 3, "type": "store", "inputs": {"i0": "2.i0", "value": 7}, "params": {"ndarray": "b"}}]}}]}]})doc";
  try {
    compile(*rt_, bytes, "bytes", kSpirv1_0);
    ADD_FAILURE() << "a u8 ndarray kernel compiled for a Vulkan 1.0 device";
  } catch (const Error& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("kernel 'bytes' needs"), std::string::npos) << m;
    EXPECT_NE(m.find("storageBuffer8BitAccess"), std::string::npos) << m;
  }
}

INSTANTIATE_TEST_SUITE_P(Engines, EngineDevice,
                         ::testing::Values(Engine::Unity, Engine::Unreal, Engine::Godot,
                                           Engine::Unity10),
                         [](const ::testing::TestParamInfo<Engine>& info) {
                           return std::string(engine_name(info.param));
                         });

INSTANTIATE_TEST_SUITE_P(Engines, Vulkan1_0EngineDevice, ::testing::Values(Engine::Unity10),
                         [](const ::testing::TestParamInfo<Engine>& info) {
                           return std::string(engine_name(info.param));
                         });

}  // namespace
}  // namespace loom
