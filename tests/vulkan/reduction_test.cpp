// Parallel reductions (`total = total OP x[i]` into a variable declared before a top-level
// loop) on the CPU and on Vulkan, against C++ references: sums, differences, products,
// min/max of i32, i64, f32, f64 and & | ^ of the integers, over 1-d, 2-d and 3-d ranges and a
// struct_for, each returned by the kernel. Integers must match exactly (wrapping, like the
// kernels). Floats are summed in another order than the reference's, so they carry a
// relative tolerance: 1e-3 for f32 (100000 terms of about 0.5; the CPU's and the GPU's
// partial sums each round differently), 1e-9 for f64; min and max are exact.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "compiler/graph/document.h"
#include "compiler/graph/graph_builder.h"
#include "engine_plugin/include/loom/aot_module.h"
#include "engine_plugin/include/loom/program.h"
#include "runtime/aot/loaded_module.h"
#include "runtime/common/error.h"
#include "runtime/common/spirv_kernel.h"
#include "runtime/device/device.h"
#include "runtime/host/field.h"
#include "tests/support/vulkan_required.h"

namespace loom {
namespace {

using namespace graph::build;

ProgramOptions on(Backend b) {
  ProgramOptions o;
  o.backend = b;
  o.offline_cache = false;
  o.validation = true;
  return o;
}

// Iteration spaces: 1-d, 2-d, 3-d range_for and a struct_for over a 2-d field, each large
// enough for several CPU chunks and many Vulkan workgroups.
struct Space {
  const char* name;
  std::vector<int64_t> shape;
  bool struct_for;
};
const Space kSpaces[] = {{"1-d range", {100000}, false},
                         {"2-d range", {300, 257}, false},
                         {"3-d range", {40, 33, 41}, false},
                         {"struct_for", {256, 250}, true}};

struct Op {
  const char* node;  // node type of the update
  const char* name;  // for messages
};
const Op kAdd{"add", "+"}, kSub{"sub", "-"}, kMul{"mul", "*"}, kMin{"min", "min"},
    kMax{"max", "max"}, kAnd{"and", "&"}, kOr{"or", "|"}, kXor{"xor", "^"};

// A deterministic stream (no dependence on the library's random numbers).
struct Lcg {
  uint64_t s;
  uint64_t next() {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    return s >> 11;
  }
  double unit() { return static_cast<double>(next() >> 11) / 9007199254740992.0; }  // [0, 1)
};

// The input values of case (type, op) and the reduced reference, as doubles and as exact
// integer bits (ints wrap at their width as the kernels' arithmetic does).
struct Data {
  std::vector<uint8_t> bytes;  // the field's contents
  double init = 0;             // the variable's start value (not the identity)
  double want = 0;             // floats
  int64_t want_int = 0;        // integers
};

template <typename T>
Data make_data(const Op& op, size_t n, uint64_t seed) {
  Lcg r{seed};
  std::vector<T> v(n);
  std::string o = op.node;
  for (T& x : v) {
    if constexpr (std::is_floating_point_v<T>) {
      if (o == "mul")
        x = static_cast<T>(1.0 + (r.unit() - 0.5) * 2e-4);  // the product stays near 1
      else if (o == "min" || o == "max")
        x = static_cast<T>((r.unit() - 0.5) * 2e6);
      else
        x = static_cast<T>(r.unit());
    } else {
      using U = std::make_unsigned_t<T>;
      constexpr uint64_t bits = sizeof(T) * 8;
      uint64_t u = r.next();
      U m = 0;
      if (o == "mul")
        m = static_cast<U>(static_cast<int64_t>(u % 9) * 2 - 7);  // odd: never 0 mod 2^n
      else if (o == "and")  // mostly all ones, now and then one bit clear
        m = u % 50 ? static_cast<U>(~U{0}) : static_cast<U>(~(U{1} << (u / 50 % bits)));
      else if (o == "or")  // mostly 0, now and then one bit set
        m = u % 500 ? U{0} : static_cast<U>(U{1} << (u / 500 % bits));
      else if (o == "min" || o == "max")
        m = static_cast<U>(static_cast<int64_t>(u % 2000001) - 1000000);
      else if (o == "xor")
        m = static_cast<U>(u);
      else
        m = static_cast<U>(static_cast<int64_t>(u % 2001) - 1000);
      x = static_cast<T>(m);
    }
  }
  Data d;
  d.bytes.resize(n * sizeof(T));
  std::memcpy(d.bytes.data(), v.data(), d.bytes.size());
  d.init = o == "mul" ? 3 : o == "min" ? 123456 : o == "max" ? -123456 : o == "and" ? -1 : 5;
  if constexpr (std::is_floating_point_v<T>) {
    double acc = d.init;
    for (T x : v) {
      if (o == "add") acc += x;
      if (o == "sub") acc -= x;
      if (o == "mul") acc *= x;
      if (o == "min") acc = std::min(acc, static_cast<double>(x));
      if (o == "max") acc = std::max(acc, static_cast<double>(x));
    }
    d.want = acc;
  } else {
    using U = std::make_unsigned_t<T>;
    U acc = static_cast<U>(static_cast<T>(d.init));
    for (T x : v) {
      U u = static_cast<U>(x);
      if (o == "add") acc = static_cast<U>(acc + u);
      if (o == "sub") acc = static_cast<U>(acc - u);
      if (o == "mul") acc = static_cast<U>(acc * u);
      if (o == "min") acc = static_cast<U>(std::min(static_cast<T>(acc), x));
      if (o == "max") acc = static_cast<U>(std::max(static_cast<T>(acc), x));
      if (o == "and") acc &= u;
      if (o == "or") acc |= u;
      if (o == "xor") acc ^= u;
    }
    d.want_int = static_cast<int64_t>(static_cast<T>(acc));
  }
  return d;
}

Data make_data(const std::string& type, const Op& op, size_t n, uint64_t seed) {
  if (type == "i32") return make_data<int32_t>(op, n, seed);
  if (type == "i64") return make_data<int64_t>(op, n, seed);
  if (type == "f32") return make_data<float>(op, n, seed);
  return make_data<double>(op, n, seed);
}

// reduce() -> T: total = init; for i in x: total = total OP x[i]; return total.
graph::Document reduction_doc(const std::string& type, const Op& op, const Space& space,
                              double init) {
  graph::Document doc;
  doc.fields.push_back(FieldDesc{"x", *parse_value_type(type), space.shape, Layout::AoS});
  graph::KernelDecl k = kernel("reduce", {}, {});
  k.returns = {type};
  bool is_float_type = type[0] == 'f';
  N var = N(1, "var").p("type", type);
  if (is_float_type)
    var.in("init", init);
  else
    var.in("init", static_cast<int64_t>(init));
  k.nodes.push_back(var);
  N loop = space.struct_for ? N(2, "struct_for").p("field", "x") : N(2, "range_for");
  N load = N(3, "load").p("field", "x");
  for (size_t d = 0; d < space.shape.size(); ++d) {
    std::string i = "i" + std::to_string(d);
    if (!space.struct_for) loop.in("end" + std::to_string(d), static_cast<int>(space.shape[d]));
    load.in(i, ln(2, i));
  }
  loop.region("body", {load, N(4, "get").in("var", ln(1, "ref")),
                       N(5, op.node).in("a", ln(4)).in("b", ln(3)),
                       N(6, "set").in("var", ln(1, "ref")).in("value", ln(5))});
  k.nodes.push_back(loop);
  k.nodes.push_back(N(7, "get").in("var", ln(1, "ref")));
  k.nodes.push_back(N(8, "return").in("r0", ln(7)));
  doc.kernels.push_back(k);
  doc.pipelines.push_back(graph::Pipeline{"step", {graph::Launch{"reduce", {}}}});
  return doc;
}

bool has_line(const std::vector<std::string>& lines, const std::string& text) {
  for (const std::string& l : lines)
    if (l.find(text) != std::string::npos) return true;
  return false;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string s;
  for (const std::string& l : lines) s += l + "\n";
  return s;
}

// Runs every case on `backend`; returns the cases the device could not run and why.
std::vector<std::string> run_cases(Backend backend, const std::string& type,
                                   const std::vector<Op>& ops, const std::vector<Space>& spaces) {
  std::vector<std::string> skipped;
  uint64_t seed = 1;
  for (const Space& space : spaces) {
    size_t n = 1;
    for (int64_t e : space.shape) n *= static_cast<size_t>(e);
    for (const Op& op : ops) {
      std::string what = type + " " + op.name + " over a " + space.name;
      Data data = make_data(type, op, n, ++seed);
      graph::Document doc = reduction_doc(type, op, space, data.init);
      Program p(on(backend));
      p.load(doc);
      std::vector<std::string> notes = p.prepare_pipelines(false);
      EXPECT_TRUE(has_line(notes, std::string("parallel; reduction: the variable of node 1 (") +
                                      (std::string(op.node) == "sub" ? "+" : op.name) + ", " +
                                      type + ")"))
          << what << "\n"
          << joined(notes);
      ArrayView x = p.array("x");
      if (x.bytes != data.bytes.size()) {
        ADD_FAILURE() << what << ": x holds " << x.bytes << " bytes";
        continue;
      }
      std::memcpy(x.data, data.bytes.data(), x.bytes);
      KernelResult r;
      try {
        r = p.launch("reduce");
      } catch (const Error& e) {
        std::string m = e.what();
        if (backend == Backend::Vulkan && m.find("lacks it") != std::string::npos) {
          skipped.push_back(what + ": " + m);
          continue;
        }
        ADD_FAILURE() << what << ": " << m;
        continue;
      }
      if (type[0] == 'f') {
        double tol = (type == "f32" ? 1e-3 : 1e-9) * std::max(1.0, std::fabs(data.want));
        if (std::string(op.node) == "min" || std::string(op.node) == "max") tol = 0;
        EXPECT_NEAR(r.value(), data.want, tol) << what;
      } else {
        EXPECT_EQ(r.ints.at(0), data.want_int) << what;
      }
    }
  }
  return skipped;
}

const std::vector<Op> kIntOps = {kAdd, kSub, kMul, kMin, kMax, kAnd, kOr, kXor};
const std::vector<Op> kFloatOps = {kAdd, kSub, kMul, kMin, kMax};

void run_all(Backend backend) {
  std::vector<std::string> skipped;
  std::vector<Space> first = {kSpaces[0]};
  std::vector<Space> others = {kSpaces[1], kSpaces[2], kSpaces[3]};
  for (const std::string type : {"i32", "i64", "f32", "f64"}) {
    const std::vector<Op>& ops = type[0] == 'f' ? kFloatOps : kIntOps;
    // Every operation over the 1-d range; +, * and max over the others.
    for (const auto& [spaces, subset] :
         {std::pair{first, ops}, std::pair{others, std::vector<Op>{kAdd, kMul, kMax}}}) {
      std::vector<std::string> s = run_cases(backend, type, subset, spaces);
      skipped.insert(skipped.end(), s.begin(), s.end());
    }
  }
  // A device without a feature (lavapipe has no 64-bit float atomics, say) says which; the
  // cases it can run must still pass, and i32/f32 need nothing beyond core Vulkan.
  for (const std::string& s : skipped) {
    std::printf("[  SKIPPED ] %s\n", s.c_str());
    EXPECT_TRUE(s.rfind("i64", 0) == 0 || s.rfind("f64", 0) == 0) << s;
  }
}

TEST(Reduction, EveryOperationAndTypeOnTheCpu) { run_all(Backend::Cpu); }

TEST(Reduction, EveryOperationAndTypeOnVulkan) {
  LOOM_REQUIRE_VULKAN_OR_SKIP();
  run_all(Backend::Vulkan);
}

// Two reductions in one loop (a sum and a max of the same values), both returned, and a
// write after the loop that reads them.
graph::Document two_reductions_doc(int n) {
  graph::Document doc;
  doc.fields.push_back(FieldDesc{"x", *parse_value_type("f32"), {n}, Layout::AoS});
  doc.fields.push_back(FieldDesc{"out", *parse_value_type("f32"), {2}, Layout::AoS});
  graph::KernelDecl k = kernel(
      "stats", {},
      {N(1, "var").p("type", "f32").in("init", 0.0),
       N(2, "var").p("type", "f32").in("init", -1000.0),
       N(3, "range_for")
           .in("end0", n)
           .region("body",
                   {N(4, "load").p("field", "x").in("i0", ln(3, "i0")),
                    N(5, "get").in("var", ln(1, "ref")), N(6, "add").in("a", ln(5)).in("b", ln(4)),
                    N(7, "set").in("var", ln(1, "ref")).in("value", ln(6)),
                    N(8, "get").in("var", ln(2, "ref")), N(9, "max").in("a", ln(4)).in("b", ln(8)),
                    N(10, "set").in("var", ln(2, "ref")).in("value", ln(9))}),
       N(11, "get").in("var", ln(1, "ref")), N(12, "get").in("var", ln(2, "ref")),
       N(13, "store").p("field", "out").in("i0", 0).in("value", ln(11)),
       N(14, "store").p("field", "out").in("i0", 1).in("value", ln(12)),
       N(15, "return").in("r0", ln(11)).in("r1", ln(12))});
  k.returns = {"f32", "f32"};
  doc.kernels.push_back(k);
  doc.pipelines.push_back(graph::Pipeline{"step", {graph::Launch{"stats", {}}}});
  return doc;
}

void check_two_reductions(Backend backend) {
  const int n = 50000;
  Program p(on(backend));
  p.load(two_reductions_doc(n));
  std::vector<std::string> notes = p.prepare_pipelines(false);
  EXPECT_TRUE(has_line(notes,
                       "parallel; reduction: the variable of node 1 (+, f32); reduction: the "
                       "variable of node 2 (max, f32)"))
      << joined(notes);
  std::vector<float> x(n);
  double sum = 0, top = -1000;
  for (int i = 0; i < n; ++i) {
    x[static_cast<size_t>(i)] = static_cast<float>((i * 37) % 1001) / 1000.0f;
    sum += x[static_cast<size_t>(i)];
    top = std::max(top, static_cast<double>(x[static_cast<size_t>(i)]));
  }
  std::memcpy(p.array("x").data, x.data(), x.size() * sizeof(float));
  KernelResult r = p.launch("stats");
  EXPECT_NEAR(r.value(0), sum, 1e-3 * sum);
  EXPECT_EQ(r.value(1), top);
  ArrayView out = p.array("out");
  float stored[2];
  std::memcpy(stored, out.data, sizeof stored);
  EXPECT_EQ(static_cast<double>(stored[0]), r.value(0));
  EXPECT_EQ(static_cast<double>(stored[1]), r.value(1));
}

TEST(Reduction, TwoInOneLoopOnTheCpu) { check_two_reductions(Backend::Cpu); }
TEST(Reduction, TwoInOneLoopOnVulkan) {
  LOOM_REQUIRE_VULKAN_OR_SKIP();
  check_two_reductions(Backend::Vulkan);
}

// `c = c * 2 + 1` in a loop is no reduction: the loop stays serial, says why, and still gives
// the sequential answer.
TEST(Reduction, AnAccumulationThatIsNoReductionStaysSerialAndSaysWhy) {
  graph::Document doc;
  graph::KernelDecl k =
      kernel("count", {},
             {N(1, "var").p("type", "i32").in("init", 0),
              N(3, "range_for")
                  .in("end0", 20)
                  .region("body", {N(5, "get").in("var", ln(1, "ref")),
                                   N(6, "expr").p("expr", "c * 2 + 1").in("c", ln(5)),
                                   N(7, "set").in("var", ln(1, "ref")).in("value", ln(6))}),
              N(8, "get").in("var", ln(1, "ref")), N(9, "return").in("r0", ln(8))});
  k.returns = {"i32"};
  doc.kernels.push_back(k);
  doc.pipelines.push_back(graph::Pipeline{"step", {graph::Launch{"count", {}}}});
  Program p(on(Backend::Cpu));
  p.load(doc);
  std::vector<std::string> notes = p.prepare_pipelines(false);
  EXPECT_TRUE(has_line(notes, "count: ok, 1 task")) << joined(notes);
  EXPECT_TRUE(has_line(notes,
                       "task 0 (node 3): serial: node 7 writes the variable of node 1, declared "
                       "outside the loop, with a value that is not `v = v OP e`"))
      << joined(notes);
  // The same facts, structured for the editor.
  std::vector<Program::TaskNote> tasks = p.task_notes();
  ASSERT_EQ(tasks.size(), 1u);
  EXPECT_EQ(tasks[0].place.kernel, "count");
  EXPECT_EQ(tasks[0].place.node, 3);  // the loop that runs in order, not the var before it
  EXPECT_EQ(tasks[0].instantiation, "count");
  EXPECT_EQ(tasks[0].task, 0);
  EXPECT_FALSE(tasks[0].parallel);
  EXPECT_EQ(tasks[0].text.rfind("serial: node 7 writes", 0), 0u) << tasks[0].text;
  EXPECT_EQ(p.launch("count").ints.at(0), (1 << 20) - 1);
}

// Program::task_notes places each task of each instantiation at its loop node; `total +=
// x[i] + 1` (a chain whose one leaf is the running value) is a parallel reduction.
TEST(Reduction, TaskNotesPlaceEveryTaskAndAChainIsAReduction) {
  const int n = 1000;
  graph::Document doc;
  doc.fields.push_back(FieldDesc{"x", *parse_value_type("i32"), {n}, Layout::AoS});
  graph::KernelDecl k = kernel(
      "plus_one", {},
      {N(1, "var").p("type", "i32").in("init", 5),
       N(3, "range_for")
           .in("end0", n)
           .region("body", {N(4, "load").p("field", "x").in("i0", ln(3, "i0")),
                            N(5, "get").in("var", ln(1, "ref")),
                            N(6, "expr").p("expr", "t + x + 1").in("t", ln(5)).in("x", ln(4)),
                            N(7, "set").in("var", ln(1, "ref")).in("value", ln(6))}),
       N(8, "get").in("var", ln(1, "ref")), N(9, "return").in("r0", ln(8))});
  k.returns = {"i32"};
  doc.kernels.push_back(k);
  doc.pipelines.push_back(graph::Pipeline{"step", {graph::Launch{"plus_one", {}}}});
  Program p(on(Backend::Cpu));
  p.load(doc);
  std::vector<Program::TaskNote> tasks = p.task_notes();
  ASSERT_EQ(tasks.size(), 3u);
  for (size_t t = 0; t < tasks.size(); ++t) {
    EXPECT_EQ(tasks[t].place.kernel, "plus_one");
    EXPECT_EQ(tasks[t].task, static_cast<int>(t));
    EXPECT_EQ(tasks[t].parallel, t == 1) << tasks[t].text;
  }
  EXPECT_EQ(tasks[1].place.node, 3);
  EXPECT_EQ(tasks[1].text,
            "range_for over 1 dim, parallel; reduction: the variable of node 1 (+, i32)");
  // prepare_pipelines prints the same notes.
  std::vector<std::string> lines = p.prepare_pipelines(false);
  EXPECT_TRUE(has_line(lines, "  task 1 (node 3): " + tasks[1].text)) << joined(lines);
  std::vector<int32_t> x(n);
  int64_t want = 5;
  for (int i = 0; i < n; ++i) want += (x[static_cast<size_t>(i)] = i % 7 - 3) + 1;
  std::memcpy(p.array("x").data, x.data(), x.size() * sizeof(int32_t));
  EXPECT_EQ(p.launch("plus_one").ints.at(0), want);
  LOOM_REQUIRE_VULKAN_OR_SKIP();  // the CPU checks above ran either way
  Program gpu(on(Backend::Vulkan));
  gpu.load(doc);
  std::memcpy(gpu.array("x").data, x.data(), x.size() * sizeof(int32_t));
  EXPECT_EQ(gpu.launch("plus_one").ints.at(0), want);
}

// A reduction inside a function: inlined code carries the call node, the note names the
// function and its own var node as well.
TEST(Reduction, AReductionInAFunctionNamesItsVarNode) {
  const int n = 100;
  graph::Document doc;
  doc.fields.push_back(FieldDesc{"x", *parse_value_type("f32"), {n}, Layout::AoS});
  graph::FunctionDecl f;
  f.name = "total";
  f.outputs = {{"r", "f32"}};
  f.nodes = {N(5, "var").p("type", "f32").in("init", 0.0),
             N(6, "range_for")
                 .in("end0", n)
                 .region("body", {N(7, "load").p("field", "x").in("i0", ln(6, "i0")),
                                  N(8, "get").in("var", ln(5, "ref")),
                                  N(9, "add").in("a", ln(8)).in("b", ln(7)),
                                  N(10, "set").in("var", ln(5, "ref")).in("value", ln(9))}),
             N(11, "get").in("var", ln(5, "ref")), N(12, "output").in("r", ln(11))};
  doc.functions.push_back(f);
  graph::KernelDecl k =
      kernel("k", {}, {N(1, "call").p("function", "total"), N(2, "return").in("r0", ln(1, "r"))});
  k.returns = {"f32"};
  doc.kernels.push_back(k);
  doc.pipelines.push_back(graph::Pipeline{"step", {graph::Launch{"k", {}}}});
  Program p(on(Backend::Cpu));
  p.load(doc);
  std::vector<Program::TaskNote> tasks = p.task_notes();
  bool found = false;
  for (const Program::TaskNote& t : tasks)
    found |= t.parallel && t.text ==
                               "range_for over 1 dim, parallel; reduction: the variable "
                               "of node 5 in function 'total' (called by node 1) (+, f32)";
  std::string all;
  for (const Program::TaskNote& t : tasks) all += t.text + "\n";
  EXPECT_TRUE(found) << all;
  std::vector<float> x(n);
  double want = 0;
  for (int i = 0; i < n; ++i) want += (x[static_cast<size_t>(i)] = static_cast<float>(i) * 0.5f);
  std::memcpy(p.array("x").data, x.data(), x.size() * sizeof(float));
  EXPECT_NEAR(p.launch("k").value(), want, 1e-3 * want);
}

// A module for Vulkan 1.0 (SPIR-V 1.0: no 64-bit atomics) runs a 64-bit reduction on one
// workgroup, whose invocation 0 is the only writer of the result; it equals the CPU's.
TEST(Reduction, AVulkan1_0ModuleRuns64BitReductionsOnOneWorkgroup) {
  LOOM_REQUIRE_VULKAN_OR_SKIP();
  std::string doc = std::string(LOOM_SOURCE_DIR) + "/tests/codegen_spirv/docs/reductions.loom.json";
  Program cpu(on(Backend::Cpu));
  cpu.load_file(doc);
  AotOptions ao;
  ao.arch = Backend::Vulkan;
  ao.vulkan_version = 1u << 22;  // 1.0
  AotModule builder(cpu, ao);
  builder.add_document();
  VulkanDeviceOptions vo;
  vo.validation = true;
  std::unique_ptr<Device> device = make_vulkan_device(vo);
  aot::Module module = builder.module();
  EXPECT_EQ(module.meta.needs.vulkan_features & kNeedInt64Atomics, 0u);
  aot::LoadedModule m(std::move(module), *device, "reductions");
  cpu.run_pipeline("init");
  m.run_pipeline("init");
  cpu.run_pipeline("step");
  m.run_pipeline("step");
  double want[2], got[2];
  std::memcpy(want, cpu.array("out").data, sizeof want);
  host::Field* out = m.field("out");
  ASSERT_NE(out, nullptr);
  ASSERT_EQ(out->bytes(), sizeof got);
  m.device().read_back(out->data());
  std::memcpy(got, out->data(), sizeof got);
  // 5 + sum of i * 0.5 for i < 100000 (exact in f64), and max(5, 3 * 99999 - 7).
  EXPECT_EQ(got[0], want[0]);
  EXPECT_EQ(got[1], want[1]);
}

// The number of OpGroupNonUniform{IAdd..BitwiseXor} (the subgroup reductions) in a module.
int subgroup_reductions(const std::vector<uint8_t>& bytes) {
  std::vector<uint32_t> words(bytes.size() / 4);
  std::memcpy(words.data(), bytes.data(), words.size() * 4);
  int count = 0;
  for (size_t at = 5; at < words.size();) {
    uint32_t opcode = words[at] & 0xffff, length = words[at] >> 16;
    if (opcode >= 349 && opcode <= 361) ++count;  // spv::OpGroupNonUniformIAdd..BitwiseXor
    if (length == 0) break;
    at += length;
  }
  return count;
}

// The same i32 and f32 reductions compiled ahead of time with subgroup arithmetic (what a
// device that has it gets) and without (the shared-memory tree every device runs) both load
// on the device and give the C++ reference; only the first uses subgroup operations.
TEST(Reduction, SubgroupAndSharedMemoryCombinesAgree) {
  LOOM_REQUIRE_VULKAN_OR_SKIP();
  VulkanDeviceOptions vo;
  vo.validation = true;
  std::unique_ptr<Device> device = make_vulkan_device(vo);
  uint64_t seed = 100;
  for (const std::string type : {"i32", "f32"}) {
    const std::vector<Op>& ops = type[0] == 'f' ? kFloatOps : kIntOps;
    for (const Space& space : {kSpaces[0], kSpaces[3]}) {
      size_t n = 1;
      for (int64_t e : space.shape) n *= static_cast<size_t>(e);
      for (const Op& op : ops) {
        Data data = make_data(type, op, n, ++seed);
        graph::Document doc = reduction_doc(type, op, space, data.init);
        // The result goes to a field too: a module's launches return nothing to the host.
        doc.fields.push_back(FieldDesc{"out", *parse_value_type(type), {1}, Layout::AoS});
        std::vector<graph::Node>& nodes = doc.kernels[0].nodes;
        nodes.insert(nodes.end() - 1,
                     N(9, "store").p("field", "out").in("i0", 0).in("value", ln(7)));
        for (bool subgroups : {true, false}) {
          std::string what = type + " " + op.name + " over a " + space.name +
                             (subgroups ? " with subgroups" : " through shared memory");
          Program cpu(on(Backend::Cpu));
          cpu.load(doc);
          AotOptions ao;
          ao.arch = Backend::Vulkan;
          ao.vulkan_version = (1u << 22) | (2u << 12);  // 1.2
          if (subgroups) ao.vulkan_features |= kVulkanSubgroupArithmetic;
          AotModule builder(cpu, ao);
          builder.add_document();
          aot::Module module = builder.module();
          EXPECT_EQ((module.meta.needs.vulkan_features & kNeedSubgroupArithmetic) != 0, subgroups)
              << what;
          int found = 0;
          for (const auto& [name, bytes] : module.blobs)
            if (name.size() > 4 && name.compare(name.size() - 4, 4, ".spv") == 0)
              found += subgroup_reductions(bytes);
          // Each invocation's partial, then the first subgroup's total.
          EXPECT_EQ(found, subgroups ? 2 : 0) << what;
          aot::LoadedModule m(std::move(module), *device, "reduce");
          host::Field* x = m.field("x");
          ASSERT_NE(x, nullptr);
          ASSERT_EQ(x->bytes(), data.bytes.size()) << what;
          std::memcpy(x->data(), data.bytes.data(), data.bytes.size());
          m.device().host_wrote(x->data());
          m.run_pipeline("step");
          host::Field* out = m.field("out");
          ASSERT_NE(out, nullptr);
          m.device().read_back(out->data());
          if (type == "f32") {
            float got;
            std::memcpy(&got, out->data(), sizeof got);
            bool exact = std::string(op.node) == "min" || std::string(op.node) == "max";
            double tol = exact ? 0 : 1e-3 * std::max(1.0, std::fabs(data.want));
            EXPECT_NEAR(got, data.want, tol) << what;
          } else {
            int32_t got;
            std::memcpy(&got, out->data(), sizeof got);
            EXPECT_EQ(got, data.want_int) << what;
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace loom
