// Local arrays (a var node with a `length`) and the element node (issue 14 §2): Taichi's
// dynamic indexing of ti.Vector / ti.Matrix and Warp's local arrays, ported as users would.
// Results are checked against the same computation in C++; built with BOTH_BACKENDS, so every
// case runs on the CPU and on Vulkan (under the validation layer). Also: the IR they lower
// to, what the passes keep and remove, debug range checks naming the node, release clamping,
// and the errors lowering reports.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "compiler/graph/document.h"
#include "compiler/graph/graph_builder.h"
#include "compiler/graph/lower.h"
#include "compiler/ir/inst.h"
#include "compiler/ir/printer.h"
#include "engine_plugin/include/loom/program.h"
#include "runtime/common/error.h"

using namespace loom;
using namespace loom::graph::build;

namespace {

constexpr int kN = 48;  // threads of the parallel loops
constexpr int kLen = 8;

ProgramOptions options(bool debug = false) {
  ProgramOptions o;
  o.offline_cache = false;
  o.debug = debug;
  return o;
}

// A document with the field out[kN, kLen] (i32) and one kernel "k" of `nodes`.
graph::Document with_kernel(std::vector<graph::KernelParam> params,
                            std::vector<std::string> returns, std::initializer_list<N> nodes) {
  graph::Document doc;
  doc.path = "local_array.json";
  doc.fields.push_back(FieldDesc{"out", {Scalar::I32}, {kN, kLen}, Layout::AoS});
  doc.fields.push_back(FieldDesc{"vout", {Scalar::F32, 3}, {kN, 4}, Layout::AoS});
  graph::KernelDecl k = kernel("k", std::move(params), nodes);
  k.returns = std::move(returns);
  doc.kernels.push_back(std::move(k));
  return doc;
}

// A parallel loop over i < kN (node 1) whose body is `body`.
N per_thread(std::initializer_list<N> body) {
  N loop(1, "range_for");
  loop.in("end0", kN).region("body", body);
  return loop;
}

// out[i, j] after launching "k".
std::vector<int> run_out(const graph::Document& doc, bool debug = false) {
  Program p(options(debug));
  p.load(doc);
  p.launch("k");
  ArrayView out = p.array("out");
  std::vector<int> values;
  for (size_t i = 0; i < static_cast<size_t>(kN * kLen); ++i)
    values.push_back(static_cast<int>(out.scalar(i)));
  return values;
}

KernelResult run(const graph::Document& doc, const Args& args, bool debug = false) {
  Program p(options(debug));
  p.load(doc);
  return p.launch("k", args);
}

// The error lowering kernel "k" throws.
Error lowering_error(const graph::Document& doc) {
  try {
    graph::lower_kernel(doc, "k");
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "no error";
  return Error("none");
}

// The error launching "k" throws.
Error launch_error(const graph::Document& doc, const Args& args, bool debug) {
  try {
    run(doc, args, debug);
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "no error";
  return Error("none");
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

int fill_value(int i, int j) { return (i * 37 + j * 13) % 17 - 8; }

// for i (parallel): a = [0] * 8; for j in range(8): a[j] = fill_value(i, j); then `read`.
graph::Document filled_then(std::initializer_list<N> read) {
  std::vector<N> body = {
      N(2, "var").p("type", "i32").p("length", kLen),
      N(3, "range_for")
          .in("end0", kLen)
          .region(
              "body",
              {N(4, "expr")
                   .in("i", ln(1, "i0"))
                   .in("j", ln(3, "i0"))
                   .p("expr", "(i * 37 + j * 13) % 17 - 8"),
               N(5, "set").in("var", ln(2, "ref")).in("index", ln(3, "i0")).in("value", ln(4))})};
  body.insert(body.end(), read.begin(), read.end());
  N loop(1, "range_for");
  loop.in("end0", kN);
  graph::Region r;
  r.name = "body";
  for (const N& n : body) r.nodes.push_back(n.node);
  loop.node.regions.push_back(std::move(r));
  return with_kernel({}, {}, {loop});
}

}  // namespace

TEST(LocalArray, FilledInALoopThenReadBackInReverse) {
  // out[i, j] = a[7 - j]: a computed index into a per-thread array.
  graph::Document doc =
      filled_then({N(10, "range_for")
                       .in("end0", kLen)
                       .region("body", {N(11, "expr").in("j", ln(10, "i0")).p("expr", "7 - j"),
                                        N(12, "get").in("var", ln(2, "ref")).in("index", ln(11)),
                                        N(13, "store")
                                            .in("i0", ln(1, "i0"))
                                            .in("i1", ln(10, "i0"))
                                            .in("value", ln(12))
                                            .p("field", "out")})});
  std::vector<int> got = run_out(doc);
  for (int i = 0; i < kN; ++i)
    for (int j = 0; j < kLen; ++j)
      EXPECT_EQ(got[static_cast<size_t>(i * kLen + j)], fill_value(i, 7 - j)) << i << "," << j;
  // Each thread has its own array: the loop stays parallel.
  Program p(options());
  p.load(doc);
  std::string ir = p.ir_text("k");
  EXPECT_TRUE(contains(ir, "offload range_for")) << ir;
  EXPECT_TRUE(contains(ir, "i32 = local_array 8x1")) << ir;
}

TEST(LocalArray, BubbleSortOfEightValuesPerThread) {
  // for p in range(8): for q in range(7): x, y = a[q], a[q + 1]; if x > y: a[q], a[q + 1] = y, x
  graph::Document doc = filled_then(
      {N(10, "range_for")
           .in("end0", kLen)
           .region("body",
                   {N(11, "range_for")
                        .in("end0", kLen - 1)
                        .region("body",
                                {N(12, "expr").in("q", ln(11, "i0")).p("expr", "q + 1"),
                                 N(13, "get").in("var", ln(2, "ref")).in("index", ln(11, "i0")),
                                 N(14, "get").in("var", ln(2, "ref")).in("index", ln(12)),
                                 N(15, "gt").in("a", ln(13)).in("b", ln(14)),
                                 N(16, "if")
                                     .in("cond", ln(15))
                                     .region("then",
                                             {N(17, "set")
                                                  .in("var", ln(2, "ref"))
                                                  .in("index", ln(11, "i0"))
                                                  .in("value", ln(14)),
                                              N(18, "set")
                                                  .in("var", ln(2, "ref"))
                                                  .in("index", ln(12))
                                                  .in("value", ln(13))})})}),
       N(20, "range_for")
           .in("end0", kLen)
           .region("body", {N(21, "get").in("var", ln(2, "ref")).in("index", ln(20, "i0")),
                            N(22, "store")
                                .in("i0", ln(1, "i0"))
                                .in("i1", ln(20, "i0"))
                                .in("value", ln(21))
                                .p("field", "out")})});
  std::vector<int> got = run_out(doc);
  for (int i = 0; i < kN; ++i) {
    std::array<int, kLen> want;
    for (int j = 0; j < kLen; ++j) want[static_cast<size_t>(j)] = fill_value(i, j);
    std::sort(want.begin(), want.end());
    for (int j = 0; j < kLen; ++j)
      EXPECT_EQ(got[static_cast<size_t>(i * kLen + j)], want[static_cast<size_t>(j)])
          << i << "," << j;
  }
}

TEST(LocalArray, ArrayOfVectors) {
  // a = [vec3(0)] * 4; for j in range(4): a[j] = (i, j, i * j); vout[i, j] = a[3 - j]
  graph::Document doc = with_kernel(
      {}, {},
      {per_thread({N(2, "var").p("type", "f32x3").p("length", 4),
                   N(3, "range_for")
                       .in("end0", 4)
                       .region("body", {N(4, "expr")
                                            .in("i", ln(1, "i0"))
                                            .in("j", ln(3, "i0"))
                                            .p("expr", "vec3(i, j, i * j)"),
                                        N(5, "set")
                                            .in("var", ln(2, "ref"))
                                            .in("index", ln(3, "i0"))
                                            .in("value", ln(4))}),
                   N(6, "range_for")
                       .in("end0", 4)
                       .region("body", {N(7, "expr").in("j", ln(6, "i0")).p("expr", "3 - j"),
                                        N(8, "get").in("var", ln(2, "ref")).in("index", ln(7)),
                                        N(9, "store")
                                            .in("i0", ln(1, "i0"))
                                            .in("i1", ln(6, "i0"))
                                            .in("value", ln(8))
                                            .p("field", "vout")})})});
  Program p(options());
  p.load(doc);
  p.launch("k");
  ArrayView vout = p.array("vout");
  for (int i = 0; i < kN; ++i)
    for (int j = 0; j < 4; ++j) {
      size_t at = static_cast<size_t>((i * 4 + j) * 3);
      EXPECT_EQ(vout.scalar(at), i) << i << "," << j;
      EXPECT_EQ(vout.scalar(at + 1), 3 - j) << i << "," << j;
      EXPECT_EQ(vout.scalar(at + 2), i * (3 - j)) << i << "," << j;
    }
}

TEST(LocalArray, BoolAndDoubleElements) {
  // flags[j] = true; return flags[j], flags[1 - j] as 1/0; d[j] = x read back exactly.
  graph::Document doc =
      with_kernel({value_param("j", "i32"), value_param("x", "f64")}, {"i32", "i32", "f64"},
                  {N(1, "param").p("name", "j"), N(12, "param").p("name", "x"),
                   N(2, "var").p("type", "bool").p("length", 2),
                   N(3, "set").in("var", ln(2, "ref")).in("index", ln(1)).in("value", true),
                   N(4, "expr").in("j", ln(1)).p("expr", "1 - j"),
                   N(5, "get").in("var", ln(2, "ref")).in("index", ln(1)),
                   N(6, "select").in("cond", ln(5)).in("a", 1).in("b", 0),
                   N(13, "get").in("var", ln(2, "ref")).in("index", ln(4)),
                   N(14, "select").in("cond", ln(13)).in("a", 1).in("b", 0),
                   N(7, "var").p("type", "f64").p("length", 3),
                   N(9, "set").in("var", ln(7, "ref")).in("index", ln(1)).in("value", ln(12)),
                   N(10, "get").in("var", ln(7, "ref")).in("index", ln(1)),
                   N(11, "return").in("r0", ln(6)).in("r1", ln(14)).in("r2", ln(10))});
  for (int j = 0; j < 2; ++j) {
    KernelResult r = run(doc, {{"j", j}, {"x", 1.0 / 3}});
    EXPECT_EQ(r.ints[0], 1) << j;
    EXPECT_EQ(r.ints[1], 0) << j;
    EXPECT_EQ(r.value(2), 1.0 / 3) << j;
  }
}

TEST(LocalArray, ElementOfVectorsAndMatricesAsNodesAndInFormulas) {
  // v[i] and M[i, j] (row i, column j, as Taichi) with indices given at launch; out of range
  // they clamp like array indices.
  graph::Document doc = with_kernel(
      {value_param("v", "f32x4"), value_param("m", "i32x3x2"), value_param("i", "i32"),
       value_param("j", "i32")},
      {"f32", "i32", "f32", "i32"},
      {N(1, "param").p("name", "v"), N(2, "param").p("name", "m"), N(3, "param").p("name", "i"),
       N(4, "param").p("name", "j"), N(5, "element").in("v", ln(1)).in("i", ln(3)),
       N(6, "element").in("v", ln(2)).in("i", ln(3)).in("j", ln(4)),
       N(7, "expr").in("v", ln(1)).in("i", ln(3)).p("expr", "element(v, i) * 2"),
       N(8, "expr")
           .in("m", ln(2))
           .in("i", ln(3))
           .in("j", ln(4))
           .p("expr", "element(m, i, j) + element(m, 2 - i, 1)"),
       N(9, "return").in("r0", ln(5)).in("r1", ln(6)).in("r2", ln(7)).in("r3", ln(8))});
  const std::vector<double> v = {1.5, -2, 4.25, 8};
  // Columns (3 rows each): column 0 = (10, 11, 12), column 1 = (20, 21, 22).
  const std::vector<double> m = {10, 11, 12, 20, 21, 22};
  auto mat = [&](int row, int col) {
    row = std::clamp(row, 0, 2);
    col = std::clamp(col, 0, 1);
    return static_cast<int>(m[static_cast<size_t>(col * 3 + row)]);
  };
  Program p(options());
  p.load(doc);
  for (int i = -2; i <= 5; ++i)
    for (int j = -1; j <= 2; ++j) {
      KernelResult r = p.launch("k", {{"v", v}, {"m", m}, {"i", i}, {"j", j}});
      double vi = v[static_cast<size_t>(std::clamp(i, 0, 3))];
      EXPECT_EQ(r.value(0), vi) << i << "," << j;
      EXPECT_EQ(r.value(1), mat(i, j)) << i << "," << j;
      EXPECT_EQ(r.value(2), vi * 2) << i << "," << j;
      EXPECT_EQ(r.value(3), mat(i, j) + mat(2 - i, 1)) << i << "," << j;
    }
}

TEST(LocalArray, ReleaseBuildsClampIndicesIntoTheArray) {
  // a[j] = j + 1 for j < 8; then a[100] = 50 writes a[7]; a[-3] reads a[0], a[9] reads a[7].
  graph::Document doc = with_kernel(
      {value_param("hi", "i32"), value_param("lo", "i32"), value_param("past", "i32")},
      {"i32", "i32", "i32"},
      {N(1, "param").p("name", "hi"), N(2, "param").p("name", "lo"),
       N(3, "param").p("name", "past"), N(4, "var").p("type", "i32").p("length", kLen),
       N(5, "range_for")
           .in("end0", kLen)
           .region(
               "body",
               {N(6, "expr").in("j", ln(5, "i0")).p("expr", "j + 1"),
                N(7, "set").in("var", ln(4, "ref")).in("index", ln(5, "i0")).in("value", ln(6))}),
       N(8, "set").in("var", ln(4, "ref")).in("index", ln(1)).in("value", 50),
       N(9, "get").in("var", ln(4, "ref")).in("index", ln(2)),
       N(10, "get").in("var", ln(4, "ref")).in("index", ln(3)),
       N(11, "get").in("var", ln(4, "ref")).in("index", 6),
       N(12, "return").in("r0", ln(9)).in("r1", ln(10)).in("r2", ln(11))});
  KernelResult r = run(doc, {{"hi", 100}, {"lo", -3}, {"past", 9}});
  EXPECT_EQ(r.ints, (std::vector<int64_t>{1, 50, 7}));
}

TEST(LocalArray, DebugBuildsReportAnIndexOutOfRangeAtTheNode) {
  graph::Document doc = with_kernel(
      {value_param("at", "i32")}, {"i32"},
      {N(1, "param").p("name", "at"), N(2, "var").p("type", "i32").p("length", kLen),
       N(3, "set").in("var", ln(2, "ref")).in("index", 3).in("value", 5),
       N(4, "get").in("var", ln(2, "ref")).in("index", ln(1)), N(5, "return").in("r0", ln(4))});
  EXPECT_EQ(run(doc, {{"at", 3}}, true).ints, (std::vector<int64_t>{5}));
  Error e = launch_error(doc, {{"at", 8}}, true);
  EXPECT_EQ(e.place().node, 4) << e.what();
  EXPECT_TRUE(contains(e.what(), "index i = 8 not in [0, 8)")) << e.what();
  e = launch_error(doc, {{"at", -1}}, true);
  EXPECT_EQ(e.place().node, 4) << e.what();
  // The same index without debug checks is clamped: a[-1] is a[0].
  EXPECT_EQ(run(doc, {{"at", -1}}).ints, (std::vector<int64_t>{0}));

  // element: the row and the column are checked separately.
  graph::Document m = with_kernel(
      {value_param("m", "f32x2x3"), value_param("i", "i32"), value_param("j", "i32")}, {"f32"},
      {N(1, "param").p("name", "m"), N(2, "param").p("name", "i"), N(3, "param").p("name", "j"),
       N(4, "element").in("v", ln(1)).in("i", ln(2)).in("j", ln(3)),
       N(5, "return").in("r0", ln(4))});
  std::vector<double> mv = {1, 2, 3, 4, 5, 6};
  EXPECT_EQ(run(m, {{"m", mv}, {"i", 1}, {"j", 2}}, true).value(0), 6);
  e = launch_error(m, {{"m", mv}, {"i", 1}, {"j", 3}}, true);
  EXPECT_EQ(e.place().node, 4) << e.what();
  EXPECT_TRUE(contains(e.what(), "index j = 3 not in [0, 3)")) << e.what();
}

TEST(LocalArray, LoweringGivesOneArrayAndComponentAccesses) {
  graph::Document doc =
      with_kernel({value_param("at", "i32")}, {"f32"},
                  {N(1, "param").p("name", "at"), N(2, "var").p("type", "f32x2").p("length", 3),
                   N(3, "set").in("var", ln(2, "ref")).in("index", ln(1)).in("value", 1.5),
                   N(4, "get").in("var", ln(2, "ref")).in("index", 2), N(5, "split").in("v", ln(4)),
                   N(6, "return").in("r0", ln(5, "y"))});
  std::string ir = ir::print_kernel(*graph::lower_kernel(doc, "k"));
  EXPECT_TRUE(contains(ir, "f32 = local_array 3x2")) << ir;
  // A run-time index is checked (in debug kernels) once, before the element's components.
  EXPECT_TRUE(contains(ir, "bounds_check $-1.0")) << ir;
  EXPECT_TRUE(contains(ir, "array_store c0")) << ir;
  EXPECT_TRUE(contains(ir, "array_store c1")) << ir;
  EXPECT_TRUE(contains(ir, "f32 = array_load c1")) << ir;
  auto k = graph::lower_kernel(doc, "k");
  int checks = 0, arrays = 0;
  ir::walk(*k->body, [&](ir::Inst& i) {
    checks += i.op == ir::Op::BoundsCheck;
    arrays += i.op == ir::Op::LocalArray;
  });
  EXPECT_EQ(checks, 1);  // the constant index 2 is checked while lowering
  EXPECT_EQ(arrays, 1);
  EXPECT_EQ(run(doc, {{"at", 2}}).value(0), 1.5);
  EXPECT_EQ(run(doc, {{"at", 1}}).value(0), 0);
}

TEST(LocalArray, PassesKeepLoadsAfterStoresAndRemoveUnreadArrays) {
  // a[k] = 7; a[j] = 9; return a[k]: the second store may or may not hit a[k], so the load
  // stays (no forwarding of 7). b is only written: it goes, with its stores.
  graph::Document doc =
      with_kernel({value_param("k", "i32"), value_param("j", "i32")}, {"i32"},
                  {N(1, "param").p("name", "k"), N(2, "param").p("name", "j"),
                   N(3, "var").p("type", "i32").p("length", 4),
                   N(4, "set").in("var", ln(3, "ref")).in("index", ln(1)).in("value", 7),
                   N(5, "set").in("var", ln(3, "ref")).in("index", ln(2)).in("value", 9),
                   N(6, "get").in("var", ln(3, "ref")).in("index", ln(1)),
                   N(7, "var").p("type", "f32").p("length", 16),
                   N(8, "set").in("var", ln(7, "ref")).in("index", ln(2)).in("value", 2.5),
                   N(9, "return").in("r0", ln(6))});
  Program p(options());
  p.load(doc);
  std::string ir = p.ir_text("k");
  EXPECT_TRUE(contains(ir, "i32 = local_array 4x1")) << ir;
  EXPECT_FALSE(contains(ir, "f32 = local_array")) << ir;
  EXPECT_TRUE(contains(ir, "array_load")) << ir;
  EXPECT_FALSE(contains(ir, "bounds_check")) << ir;  // a release kernel
  EXPECT_EQ(p.launch("k", {{"k", 1}, {"j", 2}}).ints, (std::vector<int64_t>{7}));
  EXPECT_EQ(p.launch("k", {{"k", 1}, {"j", 1}}).ints, (std::vector<int64_t>{9}));
  // A debug kernel keeps its checks.
  Program d(options(true));
  d.load(doc);
  EXPECT_TRUE(contains(d.ir_text("k"), "bounds_check $-1.0")) << d.ir_text("k");
}

TEST(LocalArray, ALoopUsingAnArrayDeclaredOutsideItRunsInOrder) {
  // a = [0] * 4; for i in range(kN): a[i % 4] += i; out[0, j] = a[j]. Threads cannot share
  // one local array, so the loop keeps it by running in order: the sums are exact.
  graph::Document doc = with_kernel(
      {}, {},
      {N(2, "var").p("type", "i32").p("length", 4),
       per_thread({N(3, "expr").in("i", ln(1, "i0")).p("expr", "i % 4"),
                   N(4, "get").in("var", ln(2, "ref")).in("index", ln(3)),
                   N(5, "add").in("a", ln(4)).in("b", ln(1, "i0")),
                   N(6, "set").in("var", ln(2, "ref")).in("index", ln(3)).in("value", ln(5))}),
       N(7, "range_for")
           .in("end0", 4)
           .region("body", {N(8, "get").in("var", ln(2, "ref")).in("index", ln(7, "i0")),
                            N(9, "store")
                                .in("i0", 0)
                                .in("i1", ln(7, "i0"))
                                .in("value", ln(8))
                                .p("field", "out")})});
  std::vector<int> got = run_out(doc);
  for (int j = 0; j < 4; ++j) {
    int sum = 0;
    for (int i = j; i < kN; i += 4) sum += i;
    EXPECT_EQ(got[static_cast<size_t>(j)], sum) << j;
  }
  Program p(options());
  p.load(doc);
  std::string ir = p.ir_text("k");
  EXPECT_FALSE(contains(ir, "offload range_for")) << ir;
}

TEST(LocalArray, AnArrayUsedOnBothSidesOfAParallelLoopIsAnError) {
  // The parallel loop between the two uses splits the kernel into three tasks; a local
  // array lives in one.
  graph::Document doc = with_kernel(
      {}, {},
      {N(2, "var").p("type", "i32").p("length", 4),
       N(3, "set").in("var", ln(2, "ref")).in("index", 0).in("value", 5),
       per_thread(
           {N(4, "store").in("i0", ln(1, "i0")).in("i1", 0).in("value", 1).p("field", "out")}),
       N(5, "get").in("var", ln(2, "ref")).in("index", 0),
       N(6, "store").in("i0", 0).in("i1", 1).in("value", ln(5)).p("field", "out")});
  Program p(options());
  p.load(doc);
  try {
    p.launch("k");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.place().node, 2) << e.what();
    EXPECT_TRUE(contains(e.what(), "local array declared outside the loop or task that uses it"))
        << e.what();
  }
}

TEST(LocalArray, LoweringErrorsNameTheNodeAndPin) {
  auto check = [](std::initializer_list<N> nodes, int node, const std::string& pin,
                  const std::string& message) {
    graph::Document doc =
        with_kernel({value_param("x", "f32"), value_param("v", "f32x3")}, {}, nodes);
    Error e = lowering_error(doc);
    EXPECT_EQ(e.place().node, node) << e.what();
    EXPECT_EQ(e.place().pin, pin) << e.what();
    EXPECT_TRUE(contains(e.what(), message)) << e.what();
  };
  check({N(1, "var").p("type", "i32").p("length", 0)}, 1, "length", "length is 1 to 1024");
  check({N(1, "var").p("type", "i32").p("length", 2000)}, 1, "length", "not 2000");
  check({N(1, "var").p("length", 4)}, 1, "type", "needs a 'type'");
  check({N(1, "var").p("type", "i32").p("length", 4).in("init", 1)}, 1, "init", "starts zeroed");
  // 1024 f64x4 are 32 KiB; two arrays of 12 KiB each together exceed 16 KiB.
  check({N(1, "var").p("type", "f64x4").p("length", 1024)}, 1, "length", "16 KiB");
  check({N(1, "var").p("type", "f32x3").p("length", 1024),
         N(2, "var").p("type", "f32x3").p("length", 1024)},
        2, "length", "brings the kernel's to 24576 bytes");
  check({N(1, "var").p("type", "i32").p("length", 4), N(2, "param").p("name", "x"),
         N(3, "get").in("var", ln(1, "ref")).in("index", ln(2))},
        3, "index", "index 'index' is f32");
  check({N(1, "var").p("type", "i32").p("length", 4),
         N(3, "get").in("var", ln(1, "ref")).in("index", 4)},
        3, "index", "index 4 is outside [0, 4)");
  check({N(1, "var").p("type", "i32").p("length", 4), N(3, "get").in("var", ln(1, "ref"))}, 3,
        "index", "give 'index'");
  check({N(1, "var").p("type", "i32").p("length", 4),
         N(3, "set").in("var", ln(1, "ref")).in("value", 1)},
        3, "index", "give 'index'");
  check({N(1, "var").p("type", "i32"), N(3, "get").in("var", ln(1, "ref")).in("index", 0)}, 3,
        "index", "'index' is for arrays");
  check({N(2, "param").p("name", "x"), N(3, "element").in("v", ln(2)).in("i", 0),
         N(4, "var").in("init", ln(3))},
        3, "v", "element indexes a vector or a matrix, not f32");
  check({N(2, "param").p("name", "v"), N(3, "element").in("v", ln(2)).in("i", 0).in("j", 1),
         N(4, "var").in("init", ln(3))},
        3, "j", "a vector takes one index");
  check({N(2, "param").p("name", "v"), N(3, "element").in("v", ln(2)).in("i", 3),
         N(4, "var").in("init", ln(3))},
        3, "i", "index 3 is outside [0, 3)");
  check({N(2, "param").p("name", "v"), N(3, "expr").in("v", ln(2)).p("expr", "element(v)"),
         N(4, "var").in("init", ln(3))},
        3, "expr", "'element' takes 2 arguments");
}
