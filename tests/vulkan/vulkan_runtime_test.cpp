// The Vulkan runtime below the Program API: device choice, kernels compiled here and loaded
// from SPIR-V, launches through host launch frames, argpacks as persistent uniform buffers,
// batching and barriers. Validation layers are on: any message fails the test.
#include <gtest/gtest.h>

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
#include "runtime/vulkan/vulkan_kernel.h"
#include "runtime/vulkan/vulkan_runtime.h"

namespace loom {
namespace {

vk::RuntimeOptions test_options() {
  vk::RuntimeOptions o;
  o.device.validation = true;
  return o;
}

std::shared_ptr<vk::VulkanKernel> compile(vk::VulkanRuntime& rt, const graph::Document& doc, const std::string& kernel) {
  auto k = graph::lower_kernel(doc, kernel);
  k->index_bits = 32;
  passes::run_pipeline(*k, {});
  codegen::SpirvTarget target;
  target.features = rt.caps().features;
  target.max_push_constant_bytes = rt.caps().max_push_constants;
  target.device_name = rt.caps().name;
  codegen::CompiledSpirvKernel c = codegen::compile_kernel_to_spirv(*k, target);
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
  std::vector<vk::DeviceInfo> devices = vk::enumerate_devices();
  ASSERT_FALSE(devices.empty()) << "no Vulkan device: install mesa-vulkan-drivers (lavapipe)";
  vk::VulkanRuntime rt(test_options());
  EXPECT_FALSE(rt.caps().name.empty());
  EXPECT_GE(rt.caps().max_push_constants, 128u);
  EXPECT_NE(rt.caps().signature(), "");
}

TEST(VulkanRuntime, UnknownDeviceIsAClearError) {
  vk::RuntimeOptions o = test_options();
  o.device.select = "no such gpu";
  try {
    vk::VulkanRuntime rt(o);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no Vulkan device matches 'no such gpu'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("0: "), std::string::npos) << e.what();
  }
}

TEST(VulkanRuntime, SaxpyThroughALaunchFrame) {
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
  for (int i = 0; i < n; ++i) ASSERT_EQ(y.data_as<float>()[i], 1.0f + 3 * 2.0f * static_cast<float>(i)) << i;
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
  for (int i = 0; i < 64; ++i) EXPECT_EQ(reinterpret_cast<float*>(out.data())[i], 3.0f * static_cast<float>(i) + 1.0f);
  EXPECT_EQ(rt.stats().waits, 1u);  // only the read back waited
}

}  // namespace
}  // namespace loom
