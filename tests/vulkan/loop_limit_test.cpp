// Long loops on Vulkan (issue 17): llvmpipe (lavapipe) leaves a shader's loops without a word
// once an invocation has made 65535 loop iterations, all its loops together. Loom must give
// the CPU's answer or an error naming the kernel and the loop's node, never another number.
// Each kernel runs with counts around the limit and far past it: a while, serial range_for
// loops with a dynamic and a constant bound, nested loops (a range_for in a while, a 2-d
// range_for left by a break) and the grid-stride loop of a parallel reduction whose
// invocations each cover many elements. On llvmpipe a count well under the limit must give
// the right answer and one well past it the error; near the limit either is right, as long
// as it is one of the two. Other devices have no limit: always the right answer, and
// kernels compiled there carry no check.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "compiler/graph/document_json.h"
#include "engine_plugin/include/loom/program.h"
#include "runtime/common/error.h"
#include "runtime/common/spirv_kernel.h"
#include "tests/support/vulkan_required.h"

namespace loom {
namespace {

constexpr int64_t kLimit = 65535;

ProgramOptions vulkan() {
  ProgramOptions o;
  o.backend = Backend::Vulkan;
  o.offline_cache = false;
  o.validation = true;
  return o;
}

// A kernel `name` whose body is a parallel loop of one iteration (node 90) holding `inner`,
// which counts in the var of node 2; out[0] = the count.
std::string counting_kernel(const std::string& name, const std::string& params,
                            const std::string& inner) {
  return R"({"name": ")" + name + R"(", "params": [)" + params + R"(], "nodes": [
      {"id": 90, "type": "range_for", "inputs": {"end0": 1}, "regions": {"body": [
        {"id": 2, "type": "var", "inputs": {"init": 0}},
        )" +
         inner +
         R"(,
        {"id": 91, "type": "get", "inputs": {"var": "2.ref"}},
        {"id": 92, "type": "store", "inputs": {"i0": 0, "value": "91"}, "params": {"field": "out"}}
      ]}}]})";
}

// c += 1, as the body of a loop (nodes 10..12).
const char* kIncrement = R"(
          {"id": 10, "type": "get", "inputs": {"var": "2.ref"}},
          {"id": 11, "type": "add", "inputs": {"a": "10", "b": 1}},
          {"id": 12, "type": "set", "inputs": {"var": "2.ref", "value": "11"}})";

std::string document(const std::vector<int64_t>& static_counts) {
  const std::string n = R"({"name": "n", "kind": "value", "type": "i32"})";
  const std::string a = R"({"name": "a", "kind": "value", "type": "i32"})";
  const std::string b = R"({"name": "b", "kind": "value", "type": "i32"})";
  const std::string stop = R"({"name": "stop", "kind": "value", "type": "i32"})";
  std::vector<std::string> kernels;
  // A while (node 4) counting to n; returns the count.
  kernels.push_back(R"({"name": "count_while", "params": [)" + n + R"(], "returns": ["i32"],
    "nodes": [
      {"id": 1, "type": "param", "params": {"name": "n"}},
      {"id": 4, "type": "while", "inputs": {"i": 0}, "regions": {"body": [
        {"id": 5, "type": "carried", "params": {"name": "i"}},
        {"id": 6, "type": "expr", "params": {"expr": "i >= n"}, "inputs": {"i": "5", "n": "1"}},
        {"id": 7, "type": "break", "inputs": {"cond": "6"}},
        {"id": 8, "type": "add", "inputs": {"a": "5", "b": 1}},
        {"id": 9, "type": "next", "params": {"name": "i"}, "inputs": {"value": "8"}}]}},
      {"id": 20, "type": "return", "inputs": {"r0": "4.i"}}]})");
  // A serial range_for (node 4) to the parameter n.
  kernels.push_back(counting_kernel("count_for", n,
                                    R"({"id": 1, "type": "param", "params": {"name": "n"}},
        {"id": 4, "type": "range_for", "inputs": {"end0": "1"}, "regions": {"body": [)" +
                                        std::string(kIncrement) + "]}}"));
  // The same with a constant bound.
  for (int64_t count : static_counts)
    kernels.push_back(counting_kernel("count_for_" + std::to_string(count), "",
                                      R"({"id": 4, "type": "range_for", "inputs": {"end0": )" +
                                          std::to_string(count) + R"(}, "regions": {"body": [)" +
                                          kIncrement + "]}}"));
  // A range_for of b (node 4) in a while of a (node 3).
  kernels.push_back(counting_kernel("nested", a + ", " + b,
                                    R"({"id": 1, "type": "param", "params": {"name": "a"}},
        {"id": 13, "type": "param", "params": {"name": "b"}},
        {"id": 3, "type": "while", "inputs": {"o": 0}, "regions": {"body": [
          {"id": 14, "type": "carried", "params": {"name": "o"}},
          {"id": 15, "type": "expr", "params": {"expr": "o >= a"}, "inputs": {"o": "14", "a": "1"}},
          {"id": 16, "type": "break", "inputs": {"cond": "15"}},
          {"id": 4, "type": "range_for", "inputs": {"end0": "13"}, "regions": {"body": [)" +
                                        std::string(kIncrement) + R"(]}},
          {"id": 17, "type": "add", "inputs": {"a": "14", "b": 1}},
          {"id": 18, "type": "next", "params": {"name": "o"}, "inputs": {"value": "17"}}]}})"));
  // A 2-d range_for (node 4, a by b) left by a break once the count reaches `stop`.
  kernels.push_back(counting_kernel("grid_break", a + ", " + b + ", " + stop,
                                    R"({"id": 1, "type": "param", "params": {"name": "a"}},
        {"id": 13, "type": "param", "params": {"name": "b"}},
        {"id": 14, "type": "param", "params": {"name": "stop"}},
        {"id": 4, "type": "range_for", "inputs": {"end0": "1", "end1": "13"}, "regions": {"body": [)" +
                                        std::string(kIncrement) + R"(,
          {"id": 15, "type": "expr", "params": {"expr": "c >= stop"}, "inputs": {"c": "11", "stop": "14"}},
          {"id": 16, "type": "break", "inputs": {"cond": "15"}}]}})"));
  // A parallel reduction over n elements (node 3): the runtime gives it a fixed grid, so each
  // invocation's grid-stride loop covers about n / 8192 elements on llvmpipe.
  kernels.push_back(R"({"name": "sum_range", "params": [)" + n + R"(], "returns": ["i64"],
    "nodes": [
      {"id": 1, "type": "param", "params": {"name": "n"}},
      {"id": 2, "type": "var", "params": {"type": "i64"}, "inputs": {"init": 0}},
      {"id": 3, "type": "range_for", "inputs": {"end0": "1"}, "regions": {"body": [
        {"id": 4, "type": "get", "inputs": {"var": "2.ref"}},
        {"id": 5, "type": "add", "inputs": {"a": "4", "b": 1}},
        {"id": 6, "type": "set", "inputs": {"var": "2.ref", "value": "5"}}]}},
      {"id": 7, "type": "get", "inputs": {"var": "2.ref"}},
      {"id": 8, "type": "return", "inputs": {"r0": "7"}}]})");
  // A plain parallel loop the host sizes exactly: nothing to check on any device.
  kernels.push_back(R"({"name": "fill", "nodes": [
      {"id": 1, "type": "range_for", "inputs": {"end0": 4}, "regions": {"body": [
        {"id": 2, "type": "store", "inputs": {"i0": "1.i0", "value": 7}, "params": {"field": "out"}}]}}]})");
  std::string doc = R"({"format": "loom-graph", "version": 2, "name": "loop_limit",
    "fields": [{"name": "out", "type": "i32", "shape": [4]}], "kernels": [)";
  for (size_t i = 0; i < kernels.size(); ++i) doc += (i ? ",\n" : "") + kernels[i];
  return doc + "]}";
}

bool on_llvmpipe(Program& p) { return p.device_name().find("llvmpipe") != std::string::npos; }

// Runs kernel `name`, whose loops make about `iterations` loop iterations in one invocation,
// and checks what it gives: `want` (returned when `returns`, else out[0]), or, only where
// the device has a loop limit and not well under it, an error naming the kernel and one of
// `loop_nodes` (the loop the device cut: an inner loop, or, when the inner loops end right
// at the limit, the one around them). Well past the limit, llvmpipe must give the error.
void expect_right_or_named(Program& p, const std::string& name, const Args& args, int64_t want,
                           std::vector<int> loop_nodes, int64_t iterations, bool returns = false) {
  SCOPED_TRACE(name + " with about " + std::to_string(iterations) + " iterations");
  bool limited = on_llvmpipe(p);
  try {
    KernelResult r = p.launch(name, args);
    int64_t got = returns ? r.ints.at(0) : static_cast<int64_t>(p.array("out").scalar(0));
    EXPECT_EQ(got, want);
    if (limited) {
      EXPECT_LT(iterations, kLimit + 16) << "llvmpipe ran past its loop limit";
    }
  } catch (const Error& e) {
    EXPECT_TRUE(limited) << "an error on a device without a loop limit: " << e.what();
    EXPECT_GT(iterations, kLimit - 16) << "an error well under the limit: " << e.what();
    EXPECT_EQ(e.place().kernel, name) << e.what();
    EXPECT_NE(std::find(loop_nodes.begin(), loop_nodes.end(), e.place().node), loop_nodes.end())
        << e.what();
    EXPECT_NE(std::string(e.what()).find("ended this loop early"), std::string::npos) << e.what();
  }
}

class LoopLimit : public ::testing::Test {
 protected:
  void SetUp() override { LOOM_REQUIRE_VULKAN_OR_SKIP(); }
};

const std::vector<int64_t> kCounts = {1000, 65534, 65535, 65536, 100000, 200000};

TEST_F(LoopLimit, WhileLoop) {
  Program p(vulkan());
  p.load(graph::load_document(document({}), "loop_limit.json"));
  for (int64_t n : kCounts)
    expect_right_or_named(p, "count_while", {{"n", static_cast<int32_t>(n)}}, n, {4}, n, true);
}

TEST_F(LoopLimit, SerialRangeForDynamicAndStaticBounds) {
  Program p(vulkan());
  p.load(graph::load_document(document(kCounts), "loop_limit.json"));
  for (int64_t n : kCounts) {
    // The parallel loop of one iteration around it adds one.
    expect_right_or_named(p, "count_for", {{"n", static_cast<int32_t>(n)}}, n, {4, 90}, n + 1);
    expect_right_or_named(p, "count_for_" + std::to_string(n), {}, n, {4, 90}, n + 1);
  }
}

TEST_F(LoopLimit, NestedLoops) {
  Program p(vulkan());
  p.load(graph::load_document(document({}), "loop_limit.json"));
  // The limit counts every loop of the invocation: 40 x 2000 is past it though each loop is
  // short, so restructuring one long loop into nested short ones could not help.
  for (auto [a, b] : std::vector<std::pair<int32_t, int32_t>>{
           {10, 100}, {30, 2000}, {40, 2000}, {2, 100000}, {400, 500}}) {
    int64_t count = int64_t{a} * b;
    int64_t iterations = count + a + 1;
    expect_right_or_named(p, "nested", {{"a", a}, {"b", b}}, count, {3, 4, 90}, iterations);
  }
  for (auto [a, b, stop] : std::vector<std::array<int32_t, 3>>{
           {100, 100, 5000}, {1000, 100, 50000}, {1000, 100, 90000}, {1000, 200, 1000000}}) {
    int64_t count = std::min<int64_t>(int64_t{a} * b, stop);
    expect_right_or_named(p, "grid_break", {{"a", a}, {"b", b}, {"stop", stop}}, count, {4, 90},
                          count + count / b + 1);
  }
}

TEST_F(LoopLimit, GridStrideLoopOfAParallelReduction) {
  Program p(vulkan());
  p.load(graph::load_document(document({}), "loop_limit.json"));
  bool limited = on_llvmpipe(p);
  // 8192 invocations (64 workgroups of 128) on llvmpipe: 1M elements are 123 each. 600M
  // would be 73k, past kMaxGridStrideTrips: the runtime dispatches one workgroup per 128
  // elements (capped at 65535) instead, about 72 each, so the unguarded loop is never cut.
  for (int32_t n : {1000000, 600000000}) {
    int64_t each = int64_t{n} / 8192;
    if (each > kMaxGridStrideTrips) each = int64_t{n} / (65535 * 128) + 1;
    expect_right_or_named(p, "sum_range", {{"n", n}}, n, {3}, limited ? each : 0, true);
  }
}

TEST_F(LoopLimit, ChecksOnlyWhereTheDeviceHasALimit) {
  Program p(vulkan());
  p.load(graph::load_document(document({}), "loop_limit.json"));
  // The check keeps its flag in Workgroup memory; a serial task has no other use for it.
  bool checked = p.spirv_text("count_while").find("_ptr_Workgroup") != std::string::npos;
  EXPECT_EQ(checked, on_llvmpipe(p));
  EXPECT_EQ(p.spirv_text("fill").find("_ptr_Workgroup"), std::string::npos);
}

}  // namespace
}  // namespace loom
