// Cancelling a launch that never ends (the editor's Stop): kernels compiled `cancellable`
// poll at loop back-edges, Program::cancel() from another thread ends the launch with an
// error naming the kernel and the loop's node, and the program runs again after
// clear_cancel(). Without the option the generated code has no poll.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <future>
#include <string>
#include <thread>

#include "compiler/graph/document.h"
#include "compiler/graph/document_json.h"
#include "engine_plugin/include/loom/program.h"
#include "runtime/common/error.h"

using namespace loom;

namespace {

// `privatize` false: one version of each task (with per-thread copies for `nest`'s atomic
// add, the backend emits its body twice: through the copies and with the atomics).
ProgramOptions options(bool cancellable, bool privatize = true) {
  ProgramOptions o;
  o.backend = Backend::Cpu;
  o.offline_cache = false;
  o.threads = 2;
  o.cancellable = cancellable;
  o.privatize_scatter = privatize;
  return o;
}

// Kernel `grow`: x[i] += k per trip of a `while` (node 4) that breaks when `cond` holds, and
// kernel `nest`: in a parallel loop, a serial for (node 2) holding another (node 3).
std::string document(const std::string& cond) {
  return R"doc({"format": "loom-graph", "version": 2, "name": "loop",
  "fields": [{"name": "x", "type": "f32", "shape": [64]}, {"name": "s", "type": "f32", "shape": [1]}],
  "kernels": [
    {"name": "grow", "params": [{"name": "k", "kind": "value", "type": "f32"}],
     "nodes": [
      {"id": 1, "type": "param", "params": {"name": "k"}},
      {"id": 2, "type": "range_for", "inputs": {"end0": 64}, "regions": {"body": [
        {"id": 3, "type": "load", "inputs": {"i0": "2.i0"}, "params": {"field": "x"}},
        {"id": 4, "type": "while", "inputs": {"v": "3", "n": 0}, "regions": {"body": [
          {"id": 5, "type": "carried", "params": {"name": "v"}},
          {"id": 6, "type": "carried", "params": {"name": "n"}},
          {"id": 7, "type": "expr", "inputs": {"n": "6", "k": "1"}, "params": {"expr": ")doc" +
         cond + R"doc("}},
          {"id": 8, "type": "break", "inputs": {"cond": "7"}},
          {"id": 9, "type": "expr", "inputs": {"v": "5", "k": "1"}, "params": {"expr": "v + k"}},
          {"id": 10, "type": "add", "inputs": {"a": "6", "b": 1}},
          {"id": 11, "type": "next", "inputs": {"value": "9"}, "params": {"name": "v"}},
          {"id": 12, "type": "next", "inputs": {"value": "10"}, "params": {"name": "n"}}
        ]}},
        {"id": 13, "type": "store", "inputs": {"i0": "2.i0", "value": "4.v"}, "params": {"field": "x"}}
      ]}}]},
    {"name": "nest",
     "nodes": [
      {"id": 1, "type": "range_for", "inputs": {"end0": 2}, "regions": {"body": [
        {"id": 2, "type": "range_for", "inputs": {"end0": 8}, "regions": {"body": [
          {"id": 3, "type": "range_for", "inputs": {"end0": 8}, "regions": {"body": [
            {"id": 4, "type": "atomic_add", "inputs": {"i0": 0, "value": 1.0}, "params": {"field": "s"}}
          ]}}
        ]}}
      ]}}]}],
  "pipelines": [{"name": "step", "launches": [{"kernel": "grow", "args": {"k": 1.0}}]}]})doc";
}

constexpr const char* kEnds = "n >= 3";
constexpr const char* kNeverEnds = "n < 0 || k > 100.0";

float x0(Program& p) {
  float v;
  std::memcpy(&v, p.array("x").data, 4);
  return v;
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(Cancel, ALaunchThatNeverEndsStopsAtItsLoopAndTheProgramRunsAgain) {
  Program p(options(true));
  p.load(graph::load_document(document(kNeverEnds), "<memory>"));
  p.prepare_pipelines(true);
  auto launch = std::async(std::launch::async, [&] { p.run_pipeline("step"); });
  // Running: it does not end on its own.
  EXPECT_EQ(launch.wait_for(std::chrono::milliseconds(300)), std::future_status::timeout);
  EXPECT_EQ(p.running_kernel(), "grow");
  p.cancel();
  ASSERT_EQ(launch.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  try {
    launch.get();
    FAIL() << "a cancelled launch returned normally";
  } catch (const Error& e) {
    EXPECT_TRUE(has(e.message(), "cancelled")) << e.message();
    EXPECT_EQ(e.place().kernel, "grow");
    EXPECT_EQ(e.place().node, 4);  // the while loop that saw the cancel
  }
  EXPECT_EQ(p.running_kernel(), "");
  // Refused until cleared.
  EXPECT_THROW(p.run_pipeline("step"), Error);
  p.clear_cancel();
  p.reload(graph::load_document(document(kEnds), "<memory>"));
  std::memset(p.array("x").data, 0, 64 * 4);
  p.run_pipeline("step");
  EXPECT_EQ(x0(p), 3.0f);
  EXPECT_TRUE(p.synchronize(0.0));  // the CPU is always finished
}

TEST(Cancel, CodeCompiledWithoutTheOptionHasNoPoll) {
  Program off(options(false));
  off.load(graph::load_document(document(kEnds), "<memory>"));
  std::string plain = off.llvm_ir_text("grow", {}, false);
  EXPECT_FALSE(has(plain, "cancel_check")) << plain;
  EXPECT_FALSE(has(off.llvm_ir_text("grow"), "load volatile"));
  EXPECT_FALSE(has(off.llvm_ir_text("nest", {}, false), "cancel_check"));

  Program on(options(true, /*privatize=*/false));
  on.load(graph::load_document(document(kEnds), "<memory>"));
  std::string polled = on.llvm_ir_text("grow", {}, false);
  EXPECT_TRUE(has(polled, "cancel_check")) << polled;
  EXPECT_TRUE(has(on.llvm_ir_text("grow"), "load volatile"));  // survives optimisation
  // A serial for polls at its back-edge when a loop runs inside it; the innermost does not.
  std::string nest = on.llvm_ir_text("nest", {}, false);
  const std::string poll = "%cancel_code = load volatile";
  size_t first = nest.find(poll);
  ASSERT_NE(first, std::string::npos) << nest;
  EXPECT_EQ(nest.find("load volatile", first + poll.size()), std::string::npos) << nest;

  // The option is part of the cache key: the same kernel still runs either way.
  for (Program* p : {&off, &on}) {
    p->run_pipeline("step");
    EXPECT_EQ(x0(*p), 3.0f);
  }
}

}  // namespace
