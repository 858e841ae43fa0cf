// loom::Program on Vulkan: argpacks as persistent uniform buffers (uploads counted), batched
// launches with barriers only between dependent ones, coherence of host views, the offline
// and pipeline caches, and the Auto backend's fallback.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "compiler/graph/document_json.h"
#include "engine_plugin/include/loom/program.h"
#include "runtime/common/error.h"
#include "tests/support/vulkan_required.h"

namespace loom {
namespace {

ProgramOptions vulkan(std::vector<std::string>* warnings = nullptr) {
  ProgramOptions o;
  o.backend = Backend::Vulkan;
  o.offline_cache = false;
  o.validation = true;
  if (warnings) o.warn = [warnings](const std::string& m) { warnings->push_back(m); };
  return o;
}

const char* kDoc = R"({"format": "loom-graph", "version": 2,
  "fields": [{"name": "a", "type": "f32", "shape": [256]}, {"name": "b", "type": "f32", "shape": [256]},
             {"name": "c", "type": "f32", "shape": [256]}],
  "argpack_types": [{"name": "Params", "kind": "pack", "members": [
      {"name": "gain", "type": "f32"}, {"name": "bias", "type": "f32x4"}, {"name": "steps", "type": "i32"}]}],
  "argpacks": [{"name": "params", "type": "Params", "values": {"gain": 2.0, "bias": [1, 2, 3, 4], "steps": 3}}],
  "kernels": [
    {"name": "scale", "params": [{"name": "p", "kind": "argpack", "type": "Params"}], "nodes": [
      {"id": 1, "type": "member", "params": {"param": "p", "path": "gain"}},
      {"id": 2, "type": "member", "params": {"param": "p", "path": "bias"}},
      {"id": 3, "type": "range_for", "inputs": {"end0": 256}, "regions": {"body": [
        {"id": 4, "type": "expr", "inputs": {"i": "3.i0", "g": "1", "b": "2"}, "params": {"expr": "i * g + b.w"}},
        {"id": 5, "type": "store", "inputs": {"i0": "3.i0", "value": "4"}, "params": {"field": "a"}}]}}]},
    {"name": "same", "params": [{"name": "gain", "kind": "value", "type": "f32"}, {"name": "bias", "kind": "value", "type": "f32x4"}],
     "nodes": [
      {"id": 1, "type": "param", "params": {"name": "gain"}},
      {"id": 2, "type": "param", "params": {"name": "bias"}},
      {"id": 3, "type": "range_for", "inputs": {"end0": 256}, "regions": {"body": [
        {"id": 4, "type": "expr", "inputs": {"i": "3.i0", "g": "1", "b": "2"}, "params": {"expr": "i * g + b.w"}},
        {"id": 5, "type": "store", "inputs": {"i0": "3.i0", "value": "4"}, "params": {"field": "a"}}]}}]},
    {"name": "fill_b", "nodes": [
      {"id": 1, "type": "range_for", "inputs": {"end0": 256}, "regions": {"body": [
        {"id": 2, "type": "store", "inputs": {"i0": "1.i0", "value": 1.0}, "params": {"field": "b"}}]}}]},
    {"name": "fill_c", "nodes": [
      {"id": 1, "type": "range_for", "inputs": {"end0": 256}, "regions": {"body": [
        {"id": 2, "type": "store", "inputs": {"i0": "1.i0", "value": 2.0}, "params": {"field": "c"}}]}}]},
    {"name": "add_bc", "nodes": [
      {"id": 1, "type": "range_for", "inputs": {"end0": 256}, "regions": {"body": [
        {"id": 2, "type": "load", "inputs": {"i0": "1.i0"}, "params": {"field": "b"}},
        {"id": 3, "type": "load", "inputs": {"i0": "1.i0"}, "params": {"field": "c"}},
        {"id": 4, "type": "add", "inputs": {"a": "2", "b": "3"}},
        {"id": 5, "type": "store", "inputs": {"i0": "1.i0", "value": "4"}, "params": {"field": "b"}}]}}]}
  ],
  "pipelines": [{"name": "step", "launches": [{"kernel": "fill_b"}, {"kernel": "fill_c"}, {"kernel": "add_bc"}]}]})";

float at(Program& p, const std::string& field, int i) {
  float v;
  std::memcpy(&v, p.array(field).data + 4 * i, 4);
  return v;
}

TEST(VulkanProgram, UnchangedArgpacksUploadNothingAndChangedOnesUploadOnce) {
  LOOM_REQUIRE_VULKAN_OR_SKIP();
  Program p(vulkan());
  p.load(graph::load_document(kDoc));
  p.launch("scale", {{"p", "params"}});
  DeviceCounters c = p.device_counters();
  EXPECT_EQ(c.last_launch_argpack_uploads, 1u);  // first use: the pack goes up once
  uint64_t pack_bytes = c.last_launch_argpack_bytes;
  EXPECT_GE(pack_bytes, 32u);
  for (int i = 0; i < 5; ++i) {
    p.launch("scale", {{"p", "params"}});
    EXPECT_EQ(p.device_counters().last_launch_argpack_uploads, 0u);
    EXPECT_EQ(p.device_counters().last_launch_argpack_bytes, 0u);
  }
  p.set_argpack("params", "gain", 3.0);
  p.set_argpack("params", "bias", std::vector<double>{0, 0, 0, 10});
  p.launch("scale", {{"p", "params"}});
  EXPECT_EQ(p.device_counters().last_launch_argpack_uploads, 1u);  // two member writes, one upload
  EXPECT_EQ(p.device_counters().last_launch_argpack_bytes, pack_bytes);
  EXPECT_EQ(at(p, "a", 7), 7 * 3.0f + 10.0f);
  EXPECT_EQ(p.device_counters().argpack_uploads, 2u);
  // The same values passed as plain arguments travel with every launch instead.
  p.launch("same", {{"gain", 3.0}, {"bias", std::vector<double>{0, 0, 0, 10}}});
  EXPECT_GT(p.device_counters().last_launch_argument_bytes, 0u);
  EXPECT_EQ(p.device_counters().last_launch_argpack_uploads, 0u);
  EXPECT_EQ(at(p, "a", 7), 7 * 3.0f + 10.0f);
}

// A nested pack is bound by reference: changing it re-copies it into the outer pack once,
// and the outer's uniform buffer goes up once before the next launch.
TEST(VulkanProgram, AChangedNestedPackIsUploadedOncePerChange) {
  LOOM_REQUIRE_VULKAN_OR_SKIP();
  Program p(vulkan());
  p.load_file(std::string(LOOM_SOURCE_DIR) + "/tests/e2e/docs/taichi_argpacks.loom.json");
  p.launch("nested_sum", {{"x", "outer2"}});
  p.set_argpack("inner", "a", 100);
  p.set_argpack("inner", "b", 5);  // two writes, one upload
  EXPECT_EQ(p.launch("nested_sum", {{"x", "outer2"}}).ints[0], 105);
  EXPECT_EQ(p.device_counters().last_launch_argpack_uploads, 1u);
  p.launch("nested_sum", {{"x", "outer2"}});  // unchanged: bound with no upload
  EXPECT_EQ(p.device_counters().last_launch_argpack_uploads, 0u);
}

TEST(VulkanProgram, LaunchesBatchWithBarriersOnlyBetweenDependentOnes) {
  LOOM_REQUIRE_VULKAN_OR_SKIP();
  Program p(vulkan());
  p.load(graph::load_document(kDoc));
  p.run_pipeline("step");  // compiles: pipelines are built before the counting starts
  p.synchronize();
  DeviceCounters before = p.device_counters();
  for (int i = 0; i < 10; ++i) p.run_pipeline("step");
  p.synchronize();
  DeviceCounters after = p.device_counters();
  EXPECT_EQ(after.dispatches - before.dispatches, 30u);
  // fill_b and fill_c write different fields: no barrier between them; add_bc reads both
  // (one barrier); the next fill_b rewrites what add_bc read and wrote (one barrier), also
  // after synchronize(): a host wait does not make writes visible to later commands.
  EXPECT_EQ(after.barriers - before.barriers, 20u);
  EXPECT_LE(after.waits - before.waits,
            1u);  // only synchronize() may wait (not if the work already finished)
  EXPECT_LE(after.submits - before.submits, 10u);
  EXPECT_EQ(at(p, "b", 100), 3.0f);
}

TEST(VulkanProgram, HostViewsAreCurrentAndWritesGoBackUp) {
  LOOM_REQUIRE_VULKAN_OR_SKIP();
  Program p(vulkan());
  p.load(graph::load_document(kDoc));
  p.run_pipeline("step");
  ArrayView c = p.array("c");  // reads back what the device wrote
  EXPECT_EQ(at(p, "c", 3), 2.0f);
  float seven = 7.0f;
  std::memcpy(c.data + 4 * 3, &seven, 4);  // a host write through the view...
  p.launch("add_bc");                      // ...is uploaded before the next launch
  EXPECT_EQ(at(p, "b", 3), 3.0f + 7.0f);
  EXPECT_EQ(at(p, "b", 4), 3.0f + 2.0f);
}

TEST(VulkanProgram, WrappedCallerMemoryIsSynchronisedAtEveryLaunch) {
  LOOM_REQUIRE_VULKAN_OR_SKIP();
  const char* doc = R"({"format": "loom-graph", "version": 2,
    "kernels": [{"name": "twice", "params": [{"name": "x", "kind": "ndarray", "type": "i32", "ndim": 1}], "nodes": [
      {"id": 1, "type": "shape", "params": {"ndarray": "x", "dim": 0}},
      {"id": 2, "type": "range_for", "inputs": {"end0": "1"}, "regions": {"body": [
        {"id": 3, "type": "load", "inputs": {"i0": "2.i0"}, "params": {"ndarray": "x"}},
        {"id": 4, "type": "mul", "inputs": {"a": "3", "b": 2}},
        {"id": 5, "type": "store", "inputs": {"i0": "2.i0", "value": "4"}, "params": {"ndarray": "x"}}]}}]}]})";
  Program p(vulkan());
  p.load(graph::load_document(doc));
  std::vector<int32_t> mine(1000);
  for (int i = 0; i < 1000; ++i) mine[static_cast<size_t>(i)] = i;
  p.wrap_ndarray("mine", {Scalar::I32}, {1000}, mine.data());
  p.launch("twice", {{"x", "mine"}});
  EXPECT_EQ(mine[999], 1998);  // back in the caller's memory when the launch returns
  mine[0] = 5;                 // the caller changes it behind Loom's back
  p.launch("twice", {{"x", "mine"}});
  EXPECT_EQ(mine[0], 10);
  EXPECT_EQ(mine[999], 3996);
}

TEST(VulkanProgram, WarmStartsLoadSpirvAndPipelinesFromDisk) {
  LOOM_REQUIRE_VULKAN_OR_SKIP();
  std::string dir = (std::filesystem::temp_directory_path() / "loom_vulkan_cache_test").string();
  std::filesystem::remove_all(dir);
  std::vector<std::string> warnings;
  ProgramOptions o = vulkan(&warnings);
  o.offline_cache = true;
  o.cache_dir = dir;
  {
    Program cold(o);
    cold.load(graph::load_document(kDoc));
    cold.run_pipeline("step");
    EXPECT_EQ(cold.stats().misses, 3);
  }
  bool pipeline_file = false;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    pipeline_file |= e.path().filename().string().rfind("vulkan-pipelines-", 0) == 0 &&
                     std::filesystem::file_size(e.path()) >= 32;
  // Saved beside the kernels: at least the header (lavapipe keeps no pipelines in it).
  EXPECT_TRUE(pipeline_file);
  {
    Program warm(o);
    warm.load(graph::load_document(kDoc));
    warm.run_pipeline("step");
    EXPECT_EQ(warm.stats().misses, 0);
    EXPECT_EQ(warm.stats().disk_hits, 3);
    EXPECT_EQ(warm.stats().ms_codegen, 0.0);  // no SPIR-V emitted: it came from disk
    EXPECT_EQ(at(warm, "b", 9), 3.0f);
  }
  // A damaged pipeline cache is reported and replaced, never trusted.
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().filename().string().rfind("vulkan-pipelines-", 0) == 0) {
      std::ofstream out(e.path(), std::ios::binary | std::ios::trunc);
      out << "garbage that is not a pipeline cache at all, long enough to have a header";
    }
  {
    Program again(o);
    again.load(graph::load_document(kDoc));
    again.run_pipeline("step");
    EXPECT_EQ(at(again, "b", 9), 3.0f);
  }
  // A directory where the pipeline cache file belongs: a warning, and the program runs.
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().filename().string().rfind("vulkan-pipelines-", 0) == 0) {
      std::filesystem::remove(e.path());
      std::filesystem::create_directory(e.path());
    }
  {
    Program blocked(o);
    blocked.load(graph::load_document(kDoc));
    blocked.run_pipeline("step");
    EXPECT_EQ(at(blocked, "b", 9), 3.0f);
  }
  bool not_a_file = false;
  for (const std::string& w : warnings) not_a_file |= w.find("is not a file") != std::string::npos;
  EXPECT_TRUE(not_a_file);
  bool reported = false;
  std::string all;
  for (const std::string& w : warnings) {
    reported |= w.find("ignoring the Vulkan pipeline cache") != std::string::npos;
    all += w + "\n";
  }
  EXPECT_TRUE(reported) << all;
  std::filesystem::remove_all(dir);
}

// More argument bytes than push constants hold: the args block goes into a ring of uniform
// buffer slots with dynamic offsets instead, and the numbers are the same.
TEST(VulkanProgram, ArgumentsBeyondPushConstantsTravelInAUniformRing) {
  LOOM_REQUIRE_VULKAN_OR_SKIP();
  std::string params, sum;
  for (int i = 0; i < 12; ++i) {
    params += std::string(i ? ", " : "") + R"({"name": "m)" + std::to_string(i) +
              R"(", "kind": "value", "type": "f32x4"})";
  }
  std::string nodes;
  for (int i = 0; i < 12; ++i)
    nodes += R"({"id": )" + std::to_string(10 + i) + R"(, "type": "param", "params": {"name": "m)" +
             std::to_string(i) + R"("}},)";
  std::string expr, inputs;
  for (int i = 0; i < 12; ++i) {
    expr += std::string(i ? " + " : "") + "m" + std::to_string(i) + ".w * " + std::to_string(i + 1);
    inputs += std::string(i ? ", " : "") + R"("m)" + std::to_string(i) + R"(": ")" +
              std::to_string(10 + i) + R"(")";
  }
  std::string doc =
      R"({"format": "loom-graph", "version": 2, "fields": [{"name": "out", "type": "f32", "shape": [8]}],
    "kernels": [{"name": "wide", "params": [)" +
      params + R"(], "nodes": [)" + nodes + R"(
      {"id": 1, "type": "range_for", "inputs": {"end0": 8}, "regions": {"body": [
        {"id": 2, "type": "expr", "inputs": {)" +
      inputs + R"(, "i": "1.i0"}, "params": {"expr": ")" + expr + R"( + i"}},
        {"id": 3, "type": "store", "inputs": {"i0": "1.i0", "value": "2"}, "params": {"field": "out"}}]}}]}]})";
  Program p(vulkan());
  p.load(graph::load_document(doc));
  EXPECT_NE(p.spirv_text("wide").find("Uniform"), std::string::npos);  // not PushConstant
  for (int launch = 0; launch < 3; ++launch) {
    Args args;
    double expect = 0;
    for (int i = 0; i < 12; ++i) {
      double w = launch * 100 + i;
      args.emplace_back("m" + std::to_string(i), std::vector<double>{0, 0, 0, w});
      expect += w * (i + 1);
    }
    p.launch("wide", args);
    EXPECT_EQ(at(p, "out", 5), static_cast<float>(expect + 5)) << "launch " << launch;
  }
  EXPECT_GT(p.device_counters().last_launch_argument_bytes, 128u);
}

// The same ndarray bound to two parameters: a write through one is seen through the other,
// as on the CPU (the buffers are declared Aliased).
TEST(VulkanProgram, OneNdarrayBoundToTwoParameters) {
  LOOM_REQUIRE_VULKAN_OR_SKIP();
  const char* doc =
      R"({"format": "loom-graph", "version": 2, "ndarrays": [{"name": "v", "type": "i32", "shape": [1]}],
    "kernels": [{"name": "bump", "params": [{"name": "a", "kind": "ndarray", "type": "i32", "ndim": 1},
                                            {"name": "b", "kind": "ndarray", "type": "i32", "ndim": 1}],
      "returns": ["i32"], "nodes": [
      {"id": 1, "type": "store", "inputs": {"i0": 0, "value": 5}, "params": {"ndarray": "a"}},
      {"id": 2, "type": "load", "inputs": {"i0": 0}, "params": {"ndarray": "b"}},
      {"id": 3, "type": "store", "inputs": {"i0": 0, "value": 9}, "params": {"ndarray": "b"}},
      {"id": 4, "type": "load", "inputs": {"i0": 0}, "params": {"ndarray": "a"}},
      {"id": 5, "type": "expr", "inputs": {"x": "2", "y": "4"}, "params": {"expr": "x * 100 + y"}},
      {"id": 6, "type": "return", "inputs": {"r0": "5"}}]}]})";
  for (Backend b : {Backend::Cpu, Backend::Vulkan}) {
    ProgramOptions o = vulkan();
    o.backend = b;
    Program p(o);
    p.load(graph::load_document(doc));
    EXPECT_EQ(p.launch("bump", {{"a", "v"}, {"b", "v"}}).ints.at(0), 509) << backend_name(b);
  }
}

// One memory, two device copies would overwrite each other: refused by name. The same memory
// wrapped twice with the same size shares one copy. A refused ndarray leaves no trace.
TEST(VulkanProgram, WrappedMemoryIsNotSplitIntoTwoDeviceCopies) {
  LOOM_REQUIRE_VULKAN_OR_SKIP();
  Program p(vulkan());
  p.load(graph::load_document(kDoc));
  std::vector<float> mem(64, 1.0f);
  p.wrap_ndarray("wa", {Scalar::F32}, {64}, mem.data());
  std::string e;
  try {
    p.wrap_ndarray("wb", {Scalar::F32}, {4}, mem.data());
  } catch (const Error& err) {
    e = err.what();
  }
  EXPECT_NE(e.find("'wb' uses the memory of 'wa'"), std::string::npos) << e;
  p.wrap_ndarray("wb", {Scalar::F32}, {4}, mem.data() + 8);  // the name is still free
  p.wrap_ndarray("wtwin", {Scalar::F32}, {64}, mem.data());  // same memory, same size: shared
  p.remove_ndarray("wtwin");
  EXPECT_EQ(p.array("wa").bytes, 256u);  // a's device copy survived the twin's removal
  // Too large for the device: refused before the name is taken.
  int64_t too_many = 128ll * 1024 * 1024 / 4 + 1;  // past lavapipe's 128 MiB storage buffers
  if (p.device_name().find("llvmpipe") != std::string::npos) {
    e.clear();
    try {
      p.create_ndarray("huge", {Scalar::F32}, {too_many});
    } catch (const Error& err) {
      e = err.what();
    }
    EXPECT_NE(e.find("binds storage buffers of at most"), std::string::npos) << e;
    p.create_ndarray("huge", {Scalar::F32}, {16});
  }
}

TEST(VulkanProgram, AHugeDeviceIndexIsAnErrorNotACrash) {
  LOOM_REQUIRE_VULKAN_OR_SKIP();
  ProgramOptions o = vulkan();
  o.device = "99999999999999999999";
  try {
    Program p(o);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no Vulkan device 99999999999999999999"),
              std::string::npos)
        << e.what();
  }
  o.backend = Backend::Auto;  // and Auto falls back instead of failing
  EXPECT_EQ(Program(o).backend(), Backend::Cpu);
}

TEST(VulkanProgram, AutoFallsBackToTheCpuWithANotice) {
  LOOM_REQUIRE_VULKAN_OR_SKIP();
  std::vector<std::string> warnings;
  ProgramOptions o = vulkan(&warnings);
  o.backend = Backend::Auto;
  o.device = "a device this machine does not have";
  Program p(o);
  EXPECT_EQ(p.backend(), Backend::Cpu);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("running on the CPU"), std::string::npos) << warnings[0];
  p.load(graph::load_document(kDoc));
  p.run_pipeline("step");
  EXPECT_EQ(at(p, "b", 0), 3.0f);
  // Auto with a device: Vulkan.
  ProgramOptions a = vulkan();
  a.backend = Backend::Auto;
  EXPECT_EQ(Program(a).backend(), Backend::Vulkan);
}

}  // namespace
}  // namespace loom
