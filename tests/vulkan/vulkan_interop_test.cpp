// Loom inside a host engine's Vulkan frame: a runtime on an imported device (a separate
// VulkanDevice plays the engine), device-only and imported resources, launches recorded into
// the host's command buffers over frames in flight, submissions that signal the host's
// semaphores. Validation is on for the host's device: any message fails the test.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "compiler/codegen_spirv/spirv_codegen.h"
#include "compiler/graph/document_json.h"
#include "compiler/graph/lower.h"
#include "compiler/ir/inst.h"
#include "compiler/passes/pipeline.h"
#include "runtime/common/error.h"
#include "runtime/host/argpack.h"
#include "runtime/host/launch_frame.h"
#include "runtime/host/ndarray.h"
#include "runtime/vulkan/command_stream.h"
#include "runtime/vulkan/host_frames.h"
#include "runtime/vulkan/vk_check.h"
#include "runtime/vulkan/vulkan_kernel.h"
#include "runtime/vulkan/vulkan_runtime.h"
#include "tests/support/vulkan_required.h"

namespace loom {
namespace {

constexpr uint64_t kTimeout = 10'000'000'000;  // ns

// Keys of device-only resources: tokens, never host memory (touching one would crash).
const void* token(uintptr_t n) {
  return reinterpret_cast<const void*>(n << 12);  // NOLINT(performance-no-int-to-ptr)
}

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

// out[i] = a * i + p.offset.y * p.scale: a value argument and an argpack.
const char* kRamp = R"doc({"format": "loom-graph", "version": 2,
  "argpack_types": [{"name": "P", "kind": "pack", "members": [{"name": "scale", "type": "f32"}, {"name": "offset", "type": "f32x3"}]}],
  "kernels": [{"name": "ramp", "params": [{"name": "a", "kind": "value", "type": "f32"},
     {"name": "p", "kind": "argpack", "type": "P"}, {"name": "out", "kind": "ndarray", "type": "f32", "ndim": 1}],
   "nodes": [
     {"id": 1, "type": "shape", "params": {"ndarray": "out", "dim": 0}},
     {"id": 2, "type": "member", "params": {"param": "p", "path": "scale"}},
     {"id": 3, "type": "member", "params": {"param": "p", "path": "offset"}},
     {"id": 4, "type": "range_for", "inputs": {"end0": "1"}, "regions": {"body": [
       {"id": 5, "type": "param", "params": {"name": "a"}},
       {"id": 6, "type": "cast", "inputs": {"a": "4.i0"}, "params": {"type": "f32"}},
       {"id": 7, "type": "expr", "inputs": {"a": "5", "i": "6", "s": "2", "o": "3"}, "params": {"expr": "a * i + o.y * s"}},
       {"id": 8, "type": "store", "inputs": {"i0": "4.i0", "value": "7"}, "params": {"ndarray": "out"}}]}}]}]})doc";

const char* kPaint = R"doc({"format": "loom-graph", "version": 2,
  "kernels": [{"name": "paint", "params": [{"name": "t", "kind": "texture", "type": "r32f", "ndim": 2}],
    "nodes": [
      {"id": 1, "type": "range_for", "inputs": {"end0": 4, "end1": 3}, "regions": {"body": [
        {"id": 2, "type": "cast", "inputs": {"a": "1.i0"}, "params": {"type": "f32"}},
        {"id": 3, "type": "cast", "inputs": {"a": "1.i1"}, "params": {"type": "f32"}},
        {"id": 4, "type": "expr", "inputs": {"x": "2", "y": "3"}, "params": {"expr": "vec4(x + 10.0 * y, 0.0, 0.0, 1.0)"}},
        {"id": 5, "type": "tex_store", "inputs": {"x": "1.i0", "y": "1.i1", "value": "4"}, "params": {"texture": "t"}}]}}]}]})doc";

const char* kSeven = R"doc({"format": "loom-graph", "version": 2,
  "kernels": [{"name": "seven", "returns": ["f32"], "nodes": [{"id": 1, "type": "return", "inputs": {"r0": 7.0}}]}]})doc";

struct Compiled {
  graph::Document doc;
  std::shared_ptr<vk::VulkanKernel> kernel;
};

// `push_bytes`: 0 sends the arguments through a uniform ring slot instead of push constants.
Compiled compile(vk::VulkanRuntime& rt, const char* text, const std::string& name,
                 uint32_t push_bytes = 128) {
  Compiled c{graph::load_document(text), nullptr};
  layout_argpack_types(c.doc.argpack_types);
  auto k = graph::lower_kernel(c.doc, name);
  k->index_bits = 32;
  passes::run_pipeline(*k, {});
  codegen::SpirvTarget target;
  target.features = rt.caps().features;
  target.max_push_constant_bytes = push_bytes;
  codegen::CompiledSpirvKernel spirv = codegen::compile_kernel_to_spirv(*k, target);
  EXPECT_EQ(spirv.kernel.args_in_push_constants, push_bytes > 0);
  c.kernel = rt.load(spirv.abi, spirv.kernel);
  return c;
}

// Binds a device resource to the slot(s) of parameter `param`.
void bind(host::LaunchFrame& frame, int param, const void* key, std::vector<int64_t> shape) {
  for (size_t s = 0; s < frame.abi().resources.size(); ++s) {
    const ResourceDesc& r = frame.abi().resources[s];
    if (r.param != param || r.param_offset >= 0) continue;
    ResourceView v{};
    v.data = static_cast<uint8_t*>(const_cast<void*>(key));
    for (size_t d = 0; d < shape.size(); ++d) v.shape[d] = shape[d];
    frame.bind(static_cast<int>(s), v);
  }
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

uint32_t memory_type(vk::VulkanDevice& d, uint32_t bits, VkMemoryPropertyFlags flags) {
  const VkPhysicalDeviceMemoryProperties& m = d.memory_properties();
  for (uint32_t i = 0; i < m.memoryTypeCount; ++i)
    if ((bits & (1u << i)) && (m.memoryTypes[i].propertyFlags & flags) == flags) return i;
  throw Error("no memory type for the test");
}

// A buffer the host engine made with raw Vulkan, in host-visible coherent memory.
struct HostBuffer {
  HostBuffer(vk::VulkanDevice& d, VkDeviceSize size, VkBufferUsageFlags usage)
      : device(d.device()) {
    VkBufferCreateInfo ci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    ci.size = size;
    ci.usage = usage;
    vk::check(vkCreateBuffer(device, &ci, nullptr, &buffer), "test buffer");
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(device, buffer, &req);
    VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    ai.allocationSize = req.size;
    ai.memoryTypeIndex =
        memory_type(d, req.memoryTypeBits,
                    VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
    vk::check(vkAllocateMemory(device, &ai, nullptr, &memory), "test memory");
    vk::check(vkBindBufferMemory(device, buffer, memory, 0), "binding test memory");
    vk::check(vkMapMemory(device, memory, 0, VK_WHOLE_SIZE, 0, &mapped), "mapping test memory");
  }
  ~HostBuffer() {
    vkDestroyBuffer(device, buffer, nullptr);
    vkFreeMemory(device, memory, nullptr);
  }
  float* floats(VkDeviceSize offset = 0) const {
    return reinterpret_cast<float*>(static_cast<uint8_t*>(mapped) + offset);
  }

  VkDevice device;
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  void* mapped = nullptr;
};

// The host's command buffers, one fence each, on its queue.
struct HostCommands {
  HostCommands(vk::VulkanDevice& d, size_t count) : device(d.device()), queue(d.queue()) {
    VkCommandPoolCreateInfo pci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    pci.queueFamilyIndex = d.queue_family();
    vk::check(vkCreateCommandPool(device, &pci, nullptr, &pool), "test command pool");
    cbs.resize(count);
    VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    ai.commandPool = pool;
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = static_cast<uint32_t>(count);
    vk::check(vkAllocateCommandBuffers(device, &ai, cbs.data()), "test command buffers");
    fences.resize(count);
    for (VkFence& f : fences) {
      VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
      fci.flags = VK_FENCE_CREATE_SIGNALED_BIT;
      vk::check(vkCreateFence(device, &fci, nullptr, &f), "test fence");
    }
  }
  ~HostCommands() {
    vkWaitForFences(device, static_cast<uint32_t>(fences.size()), fences.data(), VK_TRUE, kTimeout);
    for (VkFence f : fences) vkDestroyFence(device, f, nullptr);
    vkDestroyCommandPool(device, pool, nullptr);
  }
  // Waits for the last submission of command buffer `i`, then begins it.
  VkCommandBuffer begin(size_t i) {
    wait(i);
    vk::check(vkResetFences(device, 1, &fences[i]), "resetting a test fence");
    vk::check(vkResetCommandBuffer(cbs[i], 0), "resetting a test command buffer");
    VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    vk::check(vkBeginCommandBuffer(cbs[i], &bi), "beginning a test command buffer");
    return cbs[i];
  }
  void end_and_submit(size_t i) {
    vk::check(vkEndCommandBuffer(cbs[i]), "ending a test command buffer");
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cbs[i];
    vk::check(vkQueueSubmit(queue, 1, &si, fences[i]), "submitting a test command buffer");
  }
  void wait(size_t i) {
    vk::check(vkWaitForFences(device, 1, &fences[i], VK_TRUE, kTimeout),
              "waiting for a test fence");
  }

  VkDevice device;
  VkQueue queue;
  VkCommandPool pool = VK_NULL_HANDLE;
  std::vector<VkCommandBuffer> cbs;
  std::vector<VkFence> fences;
};

VkSemaphore make_semaphore(VkDevice device, bool timeline) {
  VkSemaphoreTypeCreateInfo tci{VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
  tci.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
  VkSemaphoreCreateInfo sci{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
  if (timeline) sci.pNext = &tci;
  VkSemaphore s;
  vk::check(vkCreateSemaphore(device, &sci, nullptr, &s), "test semaphore");
  return s;
}

// The host engine: its own device (graphics queue, validation on) and its handles.
class Interop : public ::testing::Test {
 protected:
  void SetUp() override {
    LOOM_REQUIRE_VULKAN_OR_SKIP();
    vk::DeviceOptions o;
    o.validation = true;
    o.graphics = true;
    host_ = std::make_unique<vk::VulkanDevice>(o);
    rt_ = std::make_unique<vk::VulkanRuntime>(std::make_shared<vk::VulkanDevice>(handles()),
                                              vk::RuntimeOptions{});
  }
  void TearDown() override {
    rt_.reset();
    if (!host_) return;  // SetUp found no device
    for (const std::string& m : host_->take_messages()) ADD_FAILURE() << "Vulkan validation: " << m;
    host_.reset();
  }
  vk::ImportedDevice handles() const {
    vk::ImportedDevice d;
    d.instance = host_->instance();
    d.physical = host_->physical();
    d.device = host_->device();
    d.queue_family = host_->queue_family();
    d.queue = host_->queue();
    d.api_version = VK_API_VERSION_1_2;  // what VulkanDevice creates its instance with
    d.timeline_semaphore = true;
    d.kernel_features = host_->caps().features;  // it enabled every feature it reports
    return d;
  }
  vk::VulkanRuntime& rt() { return *rt_; }

  std::unique_ptr<vk::VulkanDevice> host_;
  std::unique_ptr<vk::VulkanRuntime> rt_;
};

TEST_F(Interop, ImportedDeviceRunsKernelsAndKeepsTheHostsHandles) {
  EXPECT_TRUE(rt().device().imported());
  EXPECT_EQ(rt().device().device(), host_->device());
  EXPECT_EQ(rt().device().queue(), host_->queue());
  EXPECT_EQ(rt().caps().name, host_->caps().name);
  EXPECT_EQ(rt().caps().features, host_->caps().features);
  Compiled saxpy = compile(rt(), kSaxpy, "saxpy");
  const int n = 1000;
  host::Ndarray x(Scalar::F32, {n}), y(Scalar::F32, {n});
  for (int i = 0; i < n; ++i) {
    x.data_as<float>()[i] = static_cast<float>(i);
    y.data_as<float>()[i] = 1.0f;
  }
  rt().add_buffer("x", x.data(), x.bytes());
  rt().add_buffer("y", y.data(), y.bytes());
  host::LaunchFrame frame(saxpy.kernel->abi());
  frame.set_value<float>(0, 2.0f);
  frame.set_ndarray(1, x);
  frame.set_ndarray(2, y);
  rt().launch(*saxpy.kernel, frame.context());
  rt().read_back(y.data());
  for (int i = 0; i < n; ++i)
    ASSERT_EQ(y.data_as<float>()[i], 1.0f + 2.0f * static_cast<float>(i)) << i;
  saxpy.kernel.reset();  // kernels go before their runtime
  // Destroying the runtime and its device leaves the host's device, queue and instance alive:
  // the host device still works afterwards (TearDown destroys it under validation).
  rt_.reset();
  EXPECT_EQ(vkDeviceWaitIdle(host_->device()), VK_SUCCESS);
}

TEST_F(Interop, ImportedDeviceUsesOnlyTheFeaturesTheHostEnabled) {
  vk::ImportedDevice d = handles();
  d.kernel_features = 0;
  vk::VulkanDevice none(d);
  EXPECT_EQ(none.caps().features, 0u);
  EXPECT_NE(none.caps().signature(), host_->caps().signature());  // compile caches keep them apart
  d.kernel_features = kAllSpirvRequirements;  // claims beyond what the device supports are dropped
  vk::VulkanDevice all(d);
  EXPECT_EQ(all.caps().features, host_->caps().features);
  d.kernel_features = kNeedInt64;
  EXPECT_EQ(vk::VulkanDevice(d).caps().features, kNeedInt64 & host_->caps().features);
}

// Subgroup arithmetic is a device property, nothing the host enables: an imported device
// offers it to kernels only where the host grants the bit, and a kernel whose reduction was
// compiled with subgroup operations is refused by a runtime without it, naming the kernel and
// the feature.
TEST_F(Interop, SubgroupReductionsOnlyWhereTheHostGrantsThem) {
  if (!(host_->caps().features & kNeedSubgroupArithmetic))
    GTEST_SKIP() << "the device has no subgroup arithmetic in compute shaders";
  vk::ImportedDevice d = handles();
  d.kernel_features = kNeedSubgroupArithmetic;
  EXPECT_EQ(vk::VulkanDevice(d).caps().features, uint32_t{kNeedSubgroupArithmetic});
  d.kernel_features = host_->caps().features & ~uint32_t{kNeedSubgroupArithmetic};
  vk::VulkanRuntime without(std::make_shared<vk::VulkanDevice>(d), vk::RuntimeOptions{});
  graph::Document doc = graph::load_document(R"({"format": "loom-graph", "version": 2,
    "fields": [{"name": "x", "type": "f32", "shape": [1000]}, {"name": "out", "type": "f32", "shape": [1]}],
    "kernels": [{"name": "total", "nodes": [
      {"id": 1, "type": "var", "params": {"type": "f32"}, "inputs": {"init": 0}},
      {"id": 2, "type": "range_for", "inputs": {"end0": 1000}, "regions": {"body": [
        {"id": 3, "type": "load", "params": {"field": "x"}, "inputs": {"i0": "2.i0"}},
        {"id": 4, "type": "get", "inputs": {"var": "1.ref"}},
        {"id": 5, "type": "add", "inputs": {"a": "4", "b": "3"}},
        {"id": 6, "type": "set", "inputs": {"var": "1.ref", "value": "5"}}]}},
      {"id": 7, "type": "get", "inputs": {"var": "1.ref"}},
      {"id": 8, "type": "store", "params": {"field": "out"}, "inputs": {"i0": 0, "value": "7"}}]}]})");
  auto k = graph::lower_kernel(doc, "total");
  k->index_bits = 32;
  passes::run_pipeline(*k, {});
  codegen::SpirvTarget target;
  target.features = rt().caps().features;
  codegen::CompiledSpirvKernel c = codegen::compile_kernel_to_spirv(*k, target);
  ASSERT_NE(c.kernel.requirements & kNeedSubgroupArithmetic, 0u);
  EXPECT_NE(rt().load(c.abi, c.kernel), nullptr);
  try {
    without.load(c.abi, c.kernel);
    ADD_FAILURE() << "loaded without subgroup arithmetic";
  } catch (const Error& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("kernel 'total'"), std::string::npos) << m;
    EXPECT_NE(m.find("subgroupArithmetic"), std::string::npos) << m;
  }
}

TEST_F(Interop, DeviceBufferWrittenByAKernelIsReadWithReadBuffer) {
  Compiled saxpy = compile(rt(), kSaxpy, "saxpy");
  const int n = 777;
  const void* kx = token(1);
  const void* ky = token(2);
  rt().add_device_buffer(kx, n * sizeof(float), "x");
  rt().add_device_buffer(ky, n * sizeof(float), "y");
  std::vector<float> x(n), y(n, 1.0f);
  for (int i = 0; i < n; ++i) x[static_cast<size_t>(i)] = static_cast<float>(i);
  rt().write_buffer(kx, 0, x.data(), x.size() * 4);
  rt().write_buffer(ky, 0, y.data(), y.size() * 4);
  host::LaunchFrame frame(saxpy.kernel->abi());
  frame.set_value<float>(0, 3.0f);
  bind(frame, 1, kx, {n});
  bind(frame, 2, ky, {n});
  rt().launch(*saxpy.kernel, frame.context());
  rt().launch(*saxpy.kernel, frame.context());
  // Host coherence never touches device-only resources (their keys are not memory).
  rt().host_wrote(ky);
  rt().read_back(ky);
  rt().read_back_all();
  std::vector<float> out(n);
  rt().read_buffer(ky, 0, out.size() * 4, out.data());
  for (int i = 0; i < n; ++i)
    ASSERT_EQ(out[static_cast<size_t>(i)], 1.0f + 6.0f * static_cast<float>(i)) << i;
  float part[2];
  rt().read_buffer(ky, 100 * sizeof(float), 8, part);
  EXPECT_EQ(part[0], 601.0f);
  EXPECT_EQ(part[1], 607.0f);
  // A partial write, in order with the launch after it.
  float ten = 10.0f;
  rt().write_buffer(kx, 4, &ten, 4);
  rt().launch(*saxpy.kernel, frame.context());
  rt().read_buffer(ky, 0, 8, part);
  EXPECT_EQ(part[0], 1.0f);
  EXPECT_EQ(part[1], 7.0f + 30.0f);
  vk::BufferExport e = rt().export_buffer(ky);
  EXPECT_NE(e.buffer, VK_NULL_HANDLE);
  EXPECT_EQ(e.offset, 0u);
  EXPECT_EQ(e.size, n * sizeof(float));
  rt().remove(kx);
  EXPECT_FALSE(rt().has(kx));
}

TEST_F(Interop, ImportedHostBufferIsReadAndWrittenByAKernel) {
  Compiled saxpy = compile(rt(), kSaxpy, "saxpy");
  const int n = 300;
  const VkDeviceSize y_at = 2048;  // x and y share one host buffer
  HostBuffer mem(*host_, 4096,
                 VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                     VK_BUFFER_USAGE_TRANSFER_DST_BIT);
  for (int i = 0; i < n; ++i) {
    mem.floats()[i] = static_cast<float>(i);
    mem.floats(y_at)[i] = 0.5f;
  }
  const void* kx = token(1);
  const void* ky = token(2);
  rt().import_buffer(kx, mem.buffer, 0, n * sizeof(float), "x");
  rt().import_buffer(ky, mem.buffer, y_at, n * sizeof(float), "y");
  host::LaunchFrame frame(saxpy.kernel->abi());
  frame.set_value<float>(0, -2.0f);
  bind(frame, 1, kx, {n});
  bind(frame, 2, ky, {n});
  rt().launch(*saxpy.kernel, frame.context());
  rt().synchronize();
  for (int i = 0; i < n; ++i)
    ASSERT_EQ(mem.floats(y_at)[i], 0.5f - 2.0f * static_cast<float>(i)) << i;
  for (int i = 0; i < n; ++i)
    ASSERT_EQ(mem.floats()[i], static_cast<float>(i)) << i;  // x untouched
  // read_buffer / write_buffer address the imported range, not the whole host buffer.
  float v = 0;
  rt().read_buffer(ky, 3 * sizeof(float), 4, &v);
  EXPECT_EQ(v, 0.5f - 6.0f);
  float w = 42.0f;
  rt().write_buffer(ky, 0, &w, 4);
  rt().synchronize();
  EXPECT_EQ(mem.floats(y_at)[0], 42.0f);
  vk::BufferExport e = rt().export_buffer(ky);
  EXPECT_EQ(e.buffer, mem.buffer);
  EXPECT_EQ(e.offset, y_at);
  EXPECT_EQ(e.size, n * sizeof(float));
  // Removing (and later destroying the runtime) leaves the host's buffer alone: it is
  // destroyed by the test, which validation would flag if Loom had destroyed it already.
  rt().remove(kx);
  rt().remove(ky);
}

TEST_F(Interop, ImportedAndDeviceImagesAreWrittenByAKernelAndExported) {
  Compiled paint = compile(rt(), kPaint, "paint");
  VkDevice dev = host_->device();
  // The host's image, moved to GENERAL by the host.
  VkImageCreateInfo ici{VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO};
  ici.imageType = VK_IMAGE_TYPE_2D;
  ici.format = VK_FORMAT_R32_SFLOAT;
  ici.extent = {4, 3, 1};
  ici.mipLevels = 1;
  ici.arrayLayers = 1;
  ici.samples = VK_SAMPLE_COUNT_1_BIT;
  ici.tiling = VK_IMAGE_TILING_OPTIMAL;
  ici.usage =
      VK_IMAGE_USAGE_STORAGE_BIT | VK_IMAGE_USAGE_SAMPLED_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT;
  VkImage image;
  vk::check(vkCreateImage(dev, &ici, nullptr, &image), "test image");
  VkMemoryRequirements req;
  vkGetImageMemoryRequirements(dev, image, &req);
  VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  ai.allocationSize = req.size;
  ai.memoryTypeIndex = memory_type(*host_, req.memoryTypeBits, 0);
  VkDeviceMemory memory;
  vk::check(vkAllocateMemory(dev, &ai, nullptr, &memory), "test image memory");
  vk::check(vkBindImageMemory(dev, image, memory, 0), "binding test image memory");
  VkImageViewCreateInfo vi{VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO};
  vi.image = image;
  vi.viewType = VK_IMAGE_VIEW_TYPE_2D;
  vi.format = ici.format;
  vi.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
  VkImageView view;
  vk::check(vkCreateImageView(dev, &vi, nullptr, &view), "test image view");
  HostCommands cmds(*host_, 1);
  VkCommandBuffer cb = cmds.begin(0);
  VkImageMemoryBarrier ib{VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER};
  ib.dstAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
  ib.oldLayout = VK_IMAGE_LAYOUT_UNDEFINED;
  ib.newLayout = VK_IMAGE_LAYOUT_GENERAL;
  ib.srcQueueFamilyIndex = ib.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
  ib.image = image;
  ib.subresourceRange = vi.subresourceRange;
  vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                       0, 0, nullptr, 0, nullptr, 1, &ib);
  cmds.end_and_submit(0);
  cmds.wait(0);

  const void* kimported = token(1);
  const void* kours = token(2);
  rt().import_image(kimported, image, view, VK_FORMAT_R32_SFLOAT, {4, 3, 1},
                    VK_IMAGE_LAYOUT_GENERAL, "canvas");
  rt().add_device_image(kours, TextureFormat::R32F, 4, 3, 1, 2, "ours");
  for (const void* key : {kimported, kours}) {
    host::LaunchFrame frame(paint.kernel->abi());
    bind(frame, 0, key, {4, 3});
    rt().launch(*paint.kernel, frame.context());
  }
  vk::ImageExport mine = rt().export_image(kimported);
  EXPECT_EQ(mine.image, image);
  EXPECT_EQ(mine.view, view);
  EXPECT_EQ(mine.format, VK_FORMAT_R32_SFLOAT);
  EXPECT_EQ(mine.layout, VK_IMAGE_LAYOUT_GENERAL);
  vk::ImageExport ours = rt().export_image(kours);
  EXPECT_NE(ours.image, VK_NULL_HANDLE);
  EXPECT_NE(ours.view, VK_NULL_HANDLE);
  EXPECT_EQ(ours.extent.width, 4u);
  EXPECT_EQ(ours.layout, VK_IMAGE_LAYOUT_GENERAL);
  rt().synchronize();

  // The host copies both images out through the exported handles.
  HostBuffer out(*host_, 24 * sizeof(float), VK_BUFFER_USAGE_TRANSFER_DST_BIT);
  cb = cmds.begin(0);
  VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
  mb.dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT;
  vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0,
                       1, &mb, 0, nullptr, 0, nullptr);
  VkDeviceSize at = 0;
  for (const vk::ImageExport& e : {mine, ours}) {
    VkBufferImageCopy region{};
    region.bufferOffset = at;
    region.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
    region.imageExtent = e.extent;
    vkCmdCopyImageToBuffer(cb, e.image, e.layout, out.buffer, 1, &region);
    at += 12 * sizeof(float);
  }
  mb.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
  mb.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
  vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0,
                       nullptr, 0, nullptr);
  cmds.end_and_submit(0);
  cmds.wait(0);
  for (int img = 0; img < 2; ++img)
    for (int yy = 0; yy < 3; ++yy)
      for (int xx = 0; xx < 4; ++xx)
        EXPECT_EQ(out.floats()[img * 12 + yy * 4 + xx], static_cast<float>(xx + 10 * yy))
            << img << " " << xx << "," << yy;

  // A host image kept read-only cannot be written by a kernel.
  rt().remove(kimported);
  rt().import_image(kimported, image, view, VK_FORMAT_R32_SFLOAT, {4, 3, 1},
                    VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL);
  host::LaunchFrame frame(paint.kernel->abi());
  bind(frame, 0, kimported, {4, 3});
  EXPECT_TRUE(has(error_of([&] { rt().launch(*paint.kernel, frame.context()); }),
                  "import it in VK_IMAGE_LAYOUT_GENERAL"));
  rt().remove(kimported);
  rt().remove(kours);
  vkDestroyImageView(dev, view, nullptr);
  vkDestroyImage(dev, image, nullptr);
  vkFreeMemory(dev, memory, nullptr);
}

TEST_F(Interop, LaunchIntoAHostCommandBuffer) {
  Compiled saxpy = compile(rt(), kSaxpy, "saxpy");
  const int n = 513;
  const void* kx = token(1);
  const void* ky = token(2);
  rt().add_device_buffer(kx, n * sizeof(float));
  rt().add_device_buffer(ky, n * sizeof(float));
  std::vector<float> x(n), y(n, 2.0f);
  for (int i = 0; i < n; ++i) x[static_cast<size_t>(i)] = static_cast<float>(i);
  rt().write_buffer(kx, 0, x.data(), x.size() * 4);  // on Loom's stream: submitted by launch_into
  rt().write_buffer(ky, 0, y.data(), y.size() * 4);

  vk::HostFrames frames(rt(), 1);
  HostCommands cmds(*host_, 1);
  VkCommandBuffer cb = cmds.begin(0);
  frames.begin_frame();
  host::LaunchFrame frame(saxpy.kernel->abi());
  frame.set_value<float>(0, 0.5f);
  bind(frame, 1, kx, {n});
  bind(frame, 2, ky, {n});
  frames.launch_into(cb, *saxpy.kernel, frame.context());
  frames.launch_into(cb, *saxpy.kernel,
                     frame.context());  // a barrier between: y written, then read
  frames.barrier_for_graphics(cb);
  cmds.end_and_submit(0);
  cmds.wait(0);
  EXPECT_EQ(frames.stats().launches, 2u);
  EXPECT_EQ(frames.stats().barriers, 3u);  // on entry, on the hazard, for graphics

  std::vector<float> out(n);
  rt().read_buffer(ky, 0, out.size() * 4, out.data());  // ordered after the host's work
  for (int i = 0; i < n; ++i)
    ASSERT_EQ(out[static_cast<size_t>(i)], 2.0f + static_cast<float>(i)) << i;
}

// Two frames in flight: both are recorded before either runs, each with its own value
// argument (through a uniform ring slot: arguments beyond push constants) and its own
// argpack contents (written inside its command buffer); every frame's output is checked.
TEST_F(Interop, FramesInFlightKeepTheirOwnArguments) {
  Compiled ramp = compile(rt(), kRamp, "ramp", /*push_bytes=*/0);
  host::Argpack pack(ramp.doc.argpack_types, 0);
  rt().add_argpack("p", pack);
  const int n = 64, frames_total = 6;
  std::vector<const void*> outs;
  for (int f = 0; f < frames_total; ++f) {
    outs.push_back(token(10 + static_cast<uintptr_t>(f)));
    rt().add_device_buffer(outs.back(), n * sizeof(float), "out" + std::to_string(f));
  }
  vk::HostFrames frames(rt(), 2);
  HostCommands cmds(*host_, 2);
  host::LaunchFrame frame(ramp.kernel->abi());
  frame.set_argpack(1, pack);
  for (int f = 0; f < frames_total; f += 2) {
    for (int g = f; g < f + 2; ++g) {
      size_t slot = static_cast<size_t>(g % 2);
      VkCommandBuffer cb = cmds.begin(slot);  // waits for the frame two frames ago
      frames.begin_frame();
      frame.set_value<float>(0, static_cast<float>(g + 1));
      pack.set<float>("scale", static_cast<float>(100 * (g + 1)));
      pack.set_components<float>("offset", {0.0f, 1.0f, 0.0f});
      bind(frame, 2, outs[static_cast<size_t>(g)], {n});
      frames.launch_into(cb, *ramp.kernel, frame.context());
      vk::check(vkEndCommandBuffer(cb), "ending a test command buffer");
    }
    for (int g = f; g < f + 2; ++g) {  // both recorded, now both submitted
      size_t slot = static_cast<size_t>(g % 2);
      VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
      si.commandBufferCount = 1;
      si.pCommandBuffers = &cmds.cbs[slot];
      vk::check(vkQueueSubmit(cmds.queue, 1, &si, cmds.fences[slot]), "submitting a test frame");
    }
  }
  cmds.wait(0);
  cmds.wait(1);
  for (int f = 0; f < frames_total; ++f) {
    std::vector<float> out(n);
    rt().read_buffer(outs[static_cast<size_t>(f)], 0, out.size() * 4, out.data());
    for (int i = 0; i < n; ++i)
      ASSERT_EQ(out[static_cast<size_t>(i)], static_cast<float>((f + 1) * i + 100 * (f + 1)))
          << "frame " << f << " i " << i;
  }
  EXPECT_EQ(frames.stats().launches, 6u);
  EXPECT_EQ(frames.stats().ring_chunks, 2u);  // one per frame in flight, reused after its fence
  EXPECT_EQ(rt().stats().total.argpack_uploads, 6u);
}

TEST_F(Interop, SubmitSignalsTheHostsTimelineAndBinarySemaphores) {
  Compiled saxpy = compile(rt(), kSaxpy, "saxpy");
  VkDevice dev = host_->device();
  const int n = 256;
  HostBuffer y(*host_, n * sizeof(float), VK_BUFFER_USAGE_STORAGE_BUFFER_BIT);
  for (int i = 0; i < n; ++i) y.floats()[i] = 1.0f;
  const void* kx = token(1);
  const void* ky = token(2);
  rt().add_device_buffer(kx, n * sizeof(float));
  rt().import_buffer(ky, y.buffer, 0, n * sizeof(float));
  std::vector<float> x(n);
  for (int i = 0; i < n; ++i) x[static_cast<size_t>(i)] = static_cast<float>(i);
  rt().write_buffer(kx, 0, x.data(), x.size() * 4);
  host::LaunchFrame frame(saxpy.kernel->abi());
  frame.set_value<float>(0, 4.0f);
  bind(frame, 1, kx, {n});
  bind(frame, 2, ky, {n});
  rt().launch(*saxpy.kernel, frame.context());

  VkSemaphore start = make_semaphore(dev, true), done = make_semaphore(dev, true),
              binary = make_semaphore(dev, false);
  vk::SemaphoreWait wait{start, 1,
                         VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT};
  rt().submit({wait}, {{done, 7}, {binary, 0}});
  uint64_t value = 0;
  vkGetSemaphoreCounterValue(dev, done, &value);
  EXPECT_EQ(value, 0u);  // the work waits for the host's go
  VkSemaphoreSignalInfo go{VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO};
  go.semaphore = start;
  go.value = 1;
  vk::check(vkSignalSemaphore(dev, &go), "signalling the start semaphore");
  VkSemaphoreWaitInfo wi{VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO};
  wi.semaphoreCount = 1;
  wi.pSemaphores = &done;
  uint64_t seven = 7;
  wi.pValues = &seven;
  ASSERT_EQ(vkWaitSemaphores(dev, &wi, kTimeout), VK_SUCCESS);
  for (int i = 0; i < n; ++i) ASSERT_EQ(y.floats()[i], 1.0f + 4.0f * static_cast<float>(i)) << i;

  // The binary semaphore: the host's next submission waits for it.
  HostCommands cmds(*host_, 1);
  cmds.wait(0);
  vk::check(vkResetFences(dev, 1, &cmds.fences[0]), "resetting a test fence");
  VkPipelineStageFlags stage = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.waitSemaphoreCount = 1;
  si.pWaitSemaphores = &binary;
  si.pWaitDstStageMask = &stage;
  vk::check(vkQueueSubmit(host_->queue(), 1, &si, cmds.fences[0]),
            "waiting for the binary semaphore");
  cmds.wait(0);

  // With nothing recorded, a submission still signals.
  rt().submit({}, {{done, 8}});
  uint64_t eight = 8;
  wi.pValues = &eight;
  ASSERT_EQ(vkWaitSemaphores(dev, &wi, kTimeout), VK_SUCCESS);
  rt().synchronize();
  for (VkSemaphore s : {start, done, binary}) vkDestroySemaphore(dev, s, nullptr);
}

TEST_F(Interop, ImportRefusesNullHandlesAndMissingPromises) {
  auto import_error = [&](auto change) {
    vk::ImportedDevice d = handles();
    change(d);
    return error_of([&] { vk::VulkanDevice device(d); });
  };
  EXPECT_TRUE(has(import_error([](vk::ImportedDevice& d) { d.instance = VK_NULL_HANDLE; }),
                  "ImportedDevice::instance is VK_NULL_HANDLE"));
  EXPECT_TRUE(has(import_error([](vk::ImportedDevice& d) { d.physical = VK_NULL_HANDLE; }),
                  "ImportedDevice::physical is VK_NULL_HANDLE"));
  EXPECT_TRUE(has(import_error([](vk::ImportedDevice& d) { d.device = VK_NULL_HANDLE; }),
                  "ImportedDevice::device is VK_NULL_HANDLE"));
  EXPECT_TRUE(has(import_error([](vk::ImportedDevice& d) { d.queue = VK_NULL_HANDLE; }),
                  "ImportedDevice::queue is VK_NULL_HANDLE"));
  std::string family = import_error([](vk::ImportedDevice& d) { d.queue_family = 99; });
  EXPECT_TRUE(has(family, "queue family 99 does not exist")) << family;
  std::string version = import_error([](vk::ImportedDevice& d) { d.api_version = 0; });
  EXPECT_TRUE(has(version, "Loom needs Vulkan 1.0 or later")) << version;
  version =
      import_error([](vk::ImportedDevice& d) { d.api_version = VK_MAKE_API_VERSION(0, 0, 9, 0); });
  EXPECT_TRUE(has(version, "says 0.9.0")) << version;
}

// What a host enabled, read from the create info of its device: nothing more.
TEST(InteropFeatures, ReadFromTheHostsDeviceCreateInfo) {
  LOOM_REQUIRE_VULKAN_OR_SKIP();
  VkPhysicalDeviceShaderAtomicFloatFeaturesEXT af{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_FEATURES_EXT};
  af.shaderBufferFloat32AtomicAdd = VK_TRUE;
  VkPhysicalDeviceVulkan12Features v12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  v12.pNext = &af;
  v12.timelineSemaphore = VK_TRUE;
  v12.shaderInt8 = VK_TRUE;
  VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  f2.pNext = &v12;
  f2.features.shaderInt64 = VK_TRUE;
  f2.features.robustBufferAccess = VK_TRUE;  // not a kernel feature
  VkDeviceCreateInfo info{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  info.pNext = &f2;
  vk::ImportedDevice d;
  vk::set_enabled_features(d, info);
  EXPECT_TRUE(d.timeline_semaphore);
  EXPECT_EQ(d.kernel_features,
            kNeedInt64 | kNeedInt8);  // the atomic-float extension is not enabled
  const char* extensions[] = {VK_KHR_SWAPCHAIN_EXTENSION_NAME,
                              VK_EXT_SHADER_ATOMIC_FLOAT_EXTENSION_NAME};
  info.enabledExtensionCount = 2;
  info.ppEnabledExtensionNames = extensions;
  vk::set_enabled_features(d, info);
  EXPECT_EQ(d.kernel_features, kNeedInt64 | kNeedInt8 | kNeedFloat32AtomicAdd);

  // Vulkan 1.0 features and per-feature structs.
  VkPhysicalDeviceFeatures core{};
  core.shaderFloat64 = VK_TRUE;
  VkPhysicalDeviceTimelineSemaphoreFeatures timeline{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES};
  VkPhysicalDevice16BitStorageFeatures storage16{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES};
  storage16.pNext = &timeline;
  storage16.storageBuffer16BitAccess = VK_TRUE;
  VkDeviceCreateInfo old{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  old.pEnabledFeatures = &core;
  old.pNext = &storage16;
  vk::set_enabled_features(d, old);
  EXPECT_FALSE(d.timeline_semaphore);
  EXPECT_EQ(d.kernel_features, kNeedFloat64 | kNeedStorage16);
  timeline.timelineSemaphore = VK_TRUE;
  vk::set_enabled_features(d, old);
  EXPECT_TRUE(d.timeline_semaphore);
}

// lavapipe's one queue family computes: the check is run on families as a driver reports them.
TEST_F(Interop, ImportRefusesAQueueFamilyWithoutCompute) {
  std::vector<VkQueueFamilyProperties> families(2);
  families[0].queueFlags = VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT | VK_QUEUE_TRANSFER_BIT;
  families[1].queueFlags = VK_QUEUE_TRANSFER_BIT;
  EXPECT_EQ(error_of([&] { vk::check_compute_queue_family(families, 0, "gpu"); }), "(no error)");
  std::string e = error_of([&] { vk::check_compute_queue_family(families, 1, "gpu"); });
  EXPECT_TRUE(has(e, "queue family 1 of 'gpu' does not support compute")) << e;
  e = error_of([&] { vk::check_compute_queue_family(families, 2, "gpu"); });
  EXPECT_TRUE(has(e, "queue family 2 does not exist on 'gpu', which has 2")) << e;
}

TEST_F(Interop, UnknownKeysNullHandlesAndMisuseAreClearErrors) {
  const void* unknown = token(77);
  float v = 0;
  std::string e = error_of([&] { rt().read_buffer(unknown, 0, 4, &v); });
  EXPECT_TRUE(has(e, "read_buffer: no device resource has key")) << e;
  EXPECT_TRUE(has(error_of([&] { rt().write_buffer(unknown, 0, &v, 4); }),
                  "write_buffer: no device resource has key"));
  EXPECT_TRUE(has(error_of([&] { rt().export_buffer(unknown); }),
                  "export_buffer: no device resource has key"));
  EXPECT_TRUE(has(error_of([&] { rt().export_image(unknown); }),
                  "export_image: no device resource has key"));
  EXPECT_TRUE(has(error_of([&] { rt().add_device_buffer(nullptr, 16); }), "has a null key"));
  EXPECT_TRUE(has(error_of([&] { rt().import_buffer(token(1), VK_NULL_HANDLE, 0, 16); }),
                  "the VkBuffer is VK_NULL_HANDLE"));
  EXPECT_TRUE(has(error_of([&] {
                    rt().import_image(token(1), VK_NULL_HANDLE, VK_NULL_HANDLE,
                                      VK_FORMAT_R32_SFLOAT, {1, 1, 1}, VK_IMAGE_LAYOUT_GENERAL);
                  }),
                  "the VkImage is VK_NULL_HANDLE"));
  rt().add_device_buffer(token(1), 64, "a");
  e = error_of([&] { rt().add_device_buffer(token(1), 64, "b"); });
  EXPECT_TRUE(has(e, "already names buffer 'a'")) << e;
  e = error_of([&] { rt().read_buffer(token(1), 60, 8, &v); });
  EXPECT_TRUE(has(e, "bytes [60, 68) of 'a', which has 64")) << e;
  EXPECT_TRUE(
      has(error_of([&] { rt().export_image(token(1)); }), "names buffer 'a', not an image"));
  HostBuffer mem(*host_, 256, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT);
  if (rt().caps().min_storage_offset_alignment > 1) {
    e = error_of([&] { rt().import_buffer(token(2), mem.buffer, 1, 16); });
    EXPECT_TRUE(has(e, "is not a multiple of minStorageBufferOffsetAlignment")) << e;
  }

  // A kernel bound to a key nothing was added with.
  Compiled saxpy = compile(rt(), kSaxpy, "saxpy");
  host::LaunchFrame frame(saxpy.kernel->abi());
  bind(frame, 1, token(1), {16});
  bind(frame, 2, unknown, {16});
  e = error_of([&] { rt().launch(*saxpy.kernel, frame.context()); });
  EXPECT_TRUE(
      has(e, "kernel 'saxpy' is bound to an ndarray that has no device copy or device resource"))
      << e;

  // launch_into: null command buffer, no frame begun, kernels that need a wait.
  vk::HostFrames frames(rt(), 2);
  bind(frame, 2, token(1), {16});
  HostCommands cmds(*host_, 1);
  VkCommandBuffer cb = cmds.begin(0);
  EXPECT_TRUE(has(error_of([&] { frames.launch_into(cb, *saxpy.kernel, frame.context()); }),
                  "before the first begin_frame()"));
  frames.begin_frame();
  EXPECT_TRUE(
      has(error_of([&] { frames.launch_into(VK_NULL_HANDLE, *saxpy.kernel, frame.context()); }),
          "the command buffer is VK_NULL_HANDLE"));
  Compiled seven = compile(rt(), kSeven, "seven");
  host::LaunchFrame seven_frame(seven.kernel->abi());
  e = error_of([&] { frames.launch_into(cb, *seven.kernel, seven_frame.context()); });
  EXPECT_TRUE(has(e, "kernel 'seven' returns values")) << e;
  rt().launch(*seven.kernel, seven_frame.context());  // on Loom's stream it waits and returns
  EXPECT_EQ(seven_frame.returned<float>(0), 7.0f);
  EXPECT_TRUE(has(error_of([&] { vk::HostFrames second(rt(), 2); }), "has one already"));
  cmds.end_and_submit(0);
}

}  // namespace
}  // namespace loom
