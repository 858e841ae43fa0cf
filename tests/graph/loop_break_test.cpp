// `break` and `continue` in serial for loops inside a task (issue 14 §2), as Taichi code is
// ported: `for i in range(n): for j in range(m): if cond: break`. A break leaves the innermost
// loop around it: a while, or a range_for / struct_for that runs serially (every loop but the
// parallel ones at a kernel's top level), all dimensions of a multi-dimensional one. Results
// are checked against the same loops in C++; built with BOTH_BACKENDS, so every case runs on
// the CPU and on Vulkan (under the validation layer, which checks the structured control flow).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "compiler/graph/document.h"
#include "compiler/graph/graph_builder.h"
#include "compiler/graph/lower.h"
#include "compiler/graph/validate.h"
#include "compiler/ir/inst.h"
#include "engine_plugin/include/loom/program.h"
#include "runtime/common/error.h"

using namespace loom;
using namespace loom::graph::build;

namespace {

constexpr int kN = 64;

ProgramOptions options() {
  ProgramOptions o;
  o.offline_cache = false;
  return o;
}

int lim_of(int i) { return (i * 7) % 13 + 2; }

// The fields every kernel below uses; `init` fills lim[i] = lim_of(i).
graph::Document base() {
  graph::Document doc;
  doc.path = "loop_break.json";
  doc.fields.push_back(FieldDesc{"lim", {Scalar::I32}, {kN}, Layout::AoS});
  doc.fields.push_back(FieldDesc{"out", {Scalar::I32}, {kN, 2}, Layout::AoS});
  doc.kernels.push_back(kernel(
      "init", {},
      {N(1, "range_for")
           .in("end0", kN)
           .region("body",
                   {
                       N(2, "expr").in("i", ln(1, "i0")).p("expr", "(i * 7) % 13 + 2"),
                       N(3, "store").in("i0", ln(1, "i0")).in("value", ln(2)).p("field", "lim"),
                   })}));
  return doc;
}

// out[i, column] = the value of node `value` after the loop nodes, per i of a parallel loop
// (node 1) whose body is `body` (node ids from 2; 90..99 are taken here).
graph::KernelDecl per_element(const std::string& name, std::vector<graph::KernelParam> params,
                              std::initializer_list<N> body, int value, int column = 0) {
  N loop(1, "range_for");
  loop.in("end0", kN).region("body", body);
  graph::Region& r = loop.node.regions.back();
  r.nodes.push_back(N(90, "get").in("var", ln(value, "ref")));
  r.nodes.push_back(
      N(91, "store").in("i0", ln(1, "i0")).in("i1", column).in("value", ln(90)).p("field", "out"));
  return kernel(name, std::move(params), {loop});
}

// Runs `init` then `kernel` (with `args`) and gives column `column` of out.
std::vector<int> run_column(graph::Document doc, const std::string& kernel_name,
                            const Args& args = {}, int column = 0) {
  Program p(options());
  p.load(std::move(doc));
  p.launch("init");
  p.launch(kernel_name, args);
  ArrayView out = p.array("out");
  std::vector<int> values;
  for (int i = 0; i < kN; ++i)
    values.push_back(static_cast<int>(out.scalar(static_cast<size_t>(i * 2 + column))));
  return values;
}

// The error lowering `kernel_name` of `doc` throws.
Error lowering_error(const graph::Document& doc, const std::string& kernel_name) {
  try {
    graph::lower_kernel(doc, kernel_name);
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "no error";
  return Error("none");
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST(LoopBreak, StaticBoundsBreakFromAnIfBranch) {
  // for i (parallel): found = -1; for j in range(50): if (i*j + 3) % 11 == 0 and j > 0:
  //   found = j; break
  graph::Document doc = base();
  doc.kernels.push_back(per_element(
      "search", {},
      {N(2, "var").in("init", -1),
       N(3, "range_for")
           .in("end0", 50)
           .region(
               "body",
               {N(4, "expr")
                    .in("i", ln(1, "i0"))
                    .in("j", ln(3, "i0"))
                    .p("expr", "(i * j + 3) % 11 == 0 && j > 0"),
                N(5, "if")
                    .in("cond", ln(4))
                    .region("then", {N(6, "set").in("var", ln(2, "ref")).in("value", ln(3, "i0")),
                                     N(7, "break")})
                    .region("else", {})})},
      2));
  std::vector<int> got = run_column(doc, "search");
  for (int i = 0; i < kN; ++i) {
    int found = -1;
    for (int j = 0; j < 50; ++j)
      if ((i * j + 3) % 11 == 0 && j > 0) {
        found = j;
        break;
      }
    EXPECT_EQ(got[static_cast<size_t>(i)], found) << "i = " << i;
  }
  // The outer loop stays a parallel task; the break is in its serial inner loop.
  Program p(options());
  p.load(doc);
  std::string ir = p.ir_text("search");
  EXPECT_TRUE(contains(ir, "offload range_for")) << ir;
  EXPECT_TRUE(contains(ir, "break")) << ir;
}

TEST(LoopBreak, ParameterBoundWithContinueAndBreak) {
  // for i (parallel): s = 0; for j in range(m): if j % 3 == 0: continue; s += j; if s > i: break
  graph::Document doc = base();
  doc.kernels.push_back(per_element(
      "partial", {value_param("m", "i32")},
      {N(2, "var").in("init", 0), N(20, "param").p("name", "m"),
       N(3, "range_for")
           .in("end0", ln(20))
           .region("body", {N(4, "expr").in("j", ln(3, "i0")).p("expr", "j % 3 == 0"),
                            N(5, "continue").in("cond", ln(4)), N(6, "get").in("var", ln(2, "ref")),
                            N(7, "add").in("a", ln(6)).in("b", ln(3, "i0")),
                            N(8, "set").in("var", ln(2, "ref")).in("value", ln(7)),
                            N(9, "expr").in("s", ln(7)).in("i", ln(1, "i0")).p("expr", "s > i"),
                            N(10, "break").in("cond", ln(9))})},
      2));
  for (int m : {0, 7, 40}) {
    std::vector<int> got = run_column(doc, "partial", {{"m", m}});
    for (int i = 0; i < kN; ++i) {
      int s = 0;
      for (int j = 0; j < m; ++j) {
        if (j % 3 == 0) continue;
        s += j;
        if (s > i) break;
      }
      EXPECT_EQ(got[static_cast<size_t>(i)], s) << "m = " << m << ", i = " << i;
    }
  }
}

TEST(LoopBreak, FieldValueBoundAndNestedLoopsBreakOnlyTheInnermost) {
  // Column 0: for j in range(lim[i]): if j*j > i: break; n += 1  ->  n * 100 + last j.
  // Column 1: for a in range(8): for b in range(8): if a + b > i % 10: break; c += 1.
  graph::Document doc = base();
  doc.kernels.push_back(per_element(
      "bounded", {},
      {N(2, "var").in("init", 0), N(3, "var").in("init", -1),
       N(4, "load").in("i0", ln(1, "i0")).p("field", "lim"),
       N(5, "range_for")
           .in("end0", ln(4))
           .region("body",
                   {N(6, "expr").in("j", ln(5, "i0")).in("i", ln(1, "i0")).p("expr", "j * j > i"),
                    N(7, "break").in("cond", ln(6)), N(8, "get").in("var", ln(2, "ref")),
                    N(9, "add").in("a", ln(8)).in("b", 1),
                    N(10, "set").in("var", ln(2, "ref")).in("value", ln(9)),
                    N(11, "set").in("var", ln(3, "ref")).in("value", ln(5, "i0"))}),
       N(12, "get").in("var", ln(2, "ref")), N(13, "get").in("var", ln(3, "ref")),
       N(14, "expr").in("n", ln(12)).in("last", ln(13)).p("expr", "n * 100 + last"),
       N(15, "var").in("init", ln(14))},
      15, 0));
  doc.kernels.push_back(per_element(
      "nested", {},
      {N(2, "var").in("init", 0),
       N(3, "range_for")
           .in("end0", 8)
           .region(
               "body",
               {N(4, "range_for")
                    .in("end0", 8)
                    .region("body",
                            {N(5, "expr")
                                 .in("a", ln(3, "i0"))
                                 .in("b", ln(4, "i0"))
                                 .in("i", ln(1, "i0"))
                                 .p("expr", "a + b > i % 10"),
                             N(6, "break").in("cond", ln(5)), N(7, "get").in("var", ln(2, "ref")),
                             N(8, "add").in("a", ln(7)).in("b", 1),
                             N(9, "set").in("var", ln(2, "ref")).in("value", ln(8))})})},
      2, 1));
  std::vector<int> bounded = run_column(doc, "bounded", {}, 0);
  std::vector<int> nested = run_column(doc, "nested", {}, 1);
  for (int i = 0; i < kN; ++i) {
    int n = 0, last = -1;
    for (int j = 0; j < lim_of(i); ++j) {
      if (j * j > i) break;
      ++n;
      last = j;
    }
    EXPECT_EQ(bounded[static_cast<size_t>(i)], n * 100 + last) << "i = " << i;
    int c = 0;
    for (int a = 0; a < 8; ++a)
      for (int b = 0; b < 8; ++b) {
        if (a + b > i % 10) break;
        ++c;
      }
    EXPECT_EQ(nested[static_cast<size_t>(i)], c) << "i = " << i;
  }
}

TEST(LoopBreak, ABreakLeavesEveryDimensionOfItsRangeFor) {
  // for (a, b) in range(6) x range(5) (one 2-d node): c += 1; last = a*5 + b;
  // if last >= i % 35: break   -> column 0: c * 100 + last.
  graph::Document doc = base();
  doc.kernels.push_back(per_element(
      "nest2d", {},
      {N(2, "var").in("init", 0), N(3, "var").in("init", -1),
       N(4, "range_for")
           .in("end0", 6)
           .in("end1", 5)
           .region("body",
                   {N(5, "get").in("var", ln(2, "ref")), N(6, "add").in("a", ln(5)).in("b", 1),
                    N(7, "set").in("var", ln(2, "ref")).in("value", ln(6)),
                    N(8, "expr").in("a", ln(4, "i0")).in("b", ln(4, "i1")).p("expr", "a * 5 + b"),
                    N(9, "set").in("var", ln(3, "ref")).in("value", ln(8)),
                    N(10, "expr").in("v", ln(8)).in("i", ln(1, "i0")).p("expr", "v >= i % 35"),
                    N(11, "break").in("cond", ln(10))}),
       N(12, "get").in("var", ln(2, "ref")), N(13, "get").in("var", ln(3, "ref")),
       N(14, "expr").in("c", ln(12)).in("last", ln(13)).p("expr", "c * 100 + last"),
       N(15, "var").in("init", ln(14))},
      15));
  std::vector<int> got = run_column(doc, "nest2d");
  for (int i = 0; i < kN; ++i) {
    int c = 0, last = -1;
    bool done = false;
    for (int a = 0; a < 6 && !done; ++a)
      for (int b = 0; b < 5; ++b) {
        ++c;
        last = a * 5 + b;
        if (last >= i % 35) {
          done = true;
          break;
        }
      }
    EXPECT_EQ(got[static_cast<size_t>(i)], c * 100 + last) << "i = " << i;
  }
  // Three dimensions, a continue, and the break in an `if` branch: the flag that leaves the
  // nest goes through two inner dimensions on Vulkan.
  doc.kernels.push_back(per_element(
      "nest3d", {},
      {N(2, "var").in("init", 0), N(3, "var").in("init", -1),
       N(4, "range_for")
           .in("end0", 3)
           .in("end1", 4)
           .in("end2", 5)
           .region("body",
                   {N(5, "eq").in("a", ln(4, "i2")).in("b", 1), N(6, "continue").in("cond", ln(5)),
                    N(7, "get").in("var", ln(2, "ref")), N(8, "add").in("a", ln(7)).in("b", 1),
                    N(9, "set").in("var", ln(2, "ref")).in("value", ln(8)),
                    N(10, "expr")
                        .in("a", ln(4, "i0"))
                        .in("b", ln(4, "i1"))
                        .in("c", ln(4, "i2"))
                        .p("expr", "a * 20 + b * 5 + c"),
                    N(11, "set").in("var", ln(3, "ref")).in("value", ln(10)),
                    N(12, "expr").in("v", ln(10)).in("i", ln(1, "i0")).p("expr", "v >= i % 70"),
                    N(13, "if")
                        .in("cond", ln(12))
                        .region("then", {N(14, "break")})
                        .region("else", {})}),
       N(15, "get").in("var", ln(2, "ref")), N(16, "get").in("var", ln(3, "ref")),
       N(17, "expr").in("c", ln(15)).in("last", ln(16)).p("expr", "c * 100 + last"),
       N(18, "var").in("init", ln(17))},
      18, 1));
  std::vector<int> got3 = run_column(doc, "nest3d", {}, 1);
  for (int i = 0; i < kN; ++i) {
    int n = 0, last = -1;
    bool done = false;
    for (int a = 0; a < 3 && !done; ++a)
      for (int b = 0; b < 4 && !done; ++b)
        for (int c = 0; c < 5; ++c) {
          if (c == 1) continue;
          ++n;
          last = a * 20 + b * 5 + c;
          if (last >= i % 70) {
            done = true;
            break;
          }
        }
    EXPECT_EQ(got3[static_cast<size_t>(i)], n * 100 + last) << "i = " << i;
  }
  // A serial struct_for over a 2-d field is one loop as well.
  doc.fields.push_back(FieldDesc{"cells", {Scalar::I32}, {5, 7}, Layout::AoS});
  doc.kernels.push_back(per_element(
      "cells2d", {},
      {N(2, "var").in("init", 0),
       N(3, "struct_for")
           .p("field", "cells")
           .region("body",
                   {N(4, "get").in("var", ln(2, "ref")), N(5, "add").in("a", ln(4)).in("b", 1),
                    N(6, "set").in("var", ln(2, "ref")).in("value", ln(5)),
                    N(7, "expr")
                        .in("a", ln(3, "i0"))
                        .in("b", ln(3, "i1"))
                        .in("i", ln(1, "i0"))
                        .p("expr", "a * 7 + b >= i % 40"),
                    N(8, "break").in("cond", ln(7))})},
      2));
  std::vector<int> cells = run_column(doc, "cells2d");
  for (int i = 0; i < kN; ++i)
    EXPECT_EQ(cells[static_cast<size_t>(i)], std::min(i % 40 + 1, 35)) << "i = " << i;
}

TEST(LoopBreak, RangeForInsideAWhileAndAStructForBreakOnTheirOwn) {
  // Column 0: acc = 0; n = 0; while: if n >= i % 7: break; for j in range(10): if j >= n:
  //   break; acc += j;  n += 1.   Column 1: the first k with lim[k] == i % 13 + 2, by a
  //   serial struct_for over lim.
  graph::Document doc = base();
  doc.kernels.push_back(per_element(
      "rounds", {},
      {N(2, "var").in("init", 0),
       N(3, "while")
           .in("n", 0)
           .region("body",
                   {N(4, "carried").p("name", "n"),
                    N(5, "expr").in("n", ln(4)).in("i", ln(1, "i0")).p("expr", "n >= i % 7"),
                    N(6, "break").in("cond", ln(5)),
                    N(7, "range_for")
                        .in("end0", 10)
                        .region("body", {N(8, "ge").in("a", ln(7, "i0")).in("b", ln(4)),
                                         N(9, "break").in("cond", ln(8)),
                                         N(10, "get").in("var", ln(2, "ref")),
                                         N(11, "add").in("a", ln(10)).in("b", ln(7, "i0")),
                                         N(12, "set").in("var", ln(2, "ref")).in("value", ln(11))}),
                    N(13, "add").in("a", ln(4)).in("b", 1),
                    N(14, "next").p("name", "n").in("value", ln(13))})},
      2, 0));
  doc.kernels.push_back(per_element(
      "find", {},
      {N(2, "var").in("init", -1),
       N(3, "struct_for")
           .p("field", "lim")
           .region(
               "body",
               {N(4, "load").in("i0", ln(3, "i0")).p("field", "lim"),
                N(5, "expr").in("v", ln(4)).in("i", ln(1, "i0")).p("expr", "v == i % 13 + 2"),
                N(6, "if")
                    .in("cond", ln(5))
                    .region("then", {N(7, "set").in("var", ln(2, "ref")).in("value", ln(3, "i0")),
                                     N(8, "break")})
                    .region("else", {})})},
      2, 1));
  std::vector<int> rounds = run_column(doc, "rounds", {}, 0);
  std::vector<int> find = run_column(doc, "find", {}, 1);
  for (int i = 0; i < kN; ++i) {
    int acc = 0;
    for (int n = 0; n < i % 7; ++n)
      for (int j = 0; j < 10; ++j) {
        if (j >= n) break;
        acc += j;
      }
    EXPECT_EQ(rounds[static_cast<size_t>(i)], acc) << "i = " << i;
    int k = -1;
    for (int q = 0; q < kN; ++q)
      if (lim_of(q) == i % 13 + 2) {
        k = q;
        break;
      }
    EXPECT_EQ(find[static_cast<size_t>(i)], k) << "i = " << i;
  }
}

TEST(LoopBreak, SerialPartOfAKernelBreaksAndReturns) {
  // if true: for j in range(64): if lim[j] == t: found = j; break   — return found. Once the
  // `if` on a constant is simplified away the loop stands at the top level: it must stay a
  // serial task (a parallel one could not stop at the first hit).
  graph::Document doc = base();
  graph::KernelDecl k = kernel(
      "first", {value_param("t", "i32")},
      {N(1, "param").p("name", "t"), N(2, "var").in("init", -1),
       N(3, "if")
           .in("cond", true)
           .region(
               "then",
               {N(4, "range_for")
                    .in("end0", kN)
                    .region(
                        "body",
                        {N(5, "load").in("i0", ln(4, "i0")).p("field", "lim"),
                         N(6, "eq").in("a", ln(5)).in("b", ln(1)),
                         N(7, "if")
                             .in("cond", ln(6))
                             .region("then",
                                     {N(8, "set").in("var", ln(2, "ref")).in("value", ln(4, "i0")),
                                      N(9, "break")})
                             .region("else", {})})})
           .region("else", {}),
       N(10, "get").in("var", ln(2, "ref")), N(11, "return").in("r0", ln(10))});
  k.returns = {"i32"};
  doc.kernels.push_back(k);
  Program p(options());
  p.load(doc);
  p.launch("init");
  for (int t : {2, 9, 14, 15}) {
    int expect = -1;
    for (int j = 0; j < kN; ++j)
      if (lim_of(j) == t) {
        expect = j;
        break;
      }
    KernelResult r = p.launch("first", {{"t", t}});
    ASSERT_EQ(r.values.size(), 1u);
    EXPECT_EQ(r.values[0], expect) << "t = " << t;
  }
  std::string ir = p.ir_text("first");
  EXPECT_TRUE(contains(ir, "offload serial")) << ir;
  EXPECT_FALSE(contains(ir, "offload range_for")) << ir;
}

TEST(LoopBreak, ABreakThatWouldLeaveAParallelLoopIsAnError) {
  graph::Document doc = base();
  doc.kernels.push_back(kernel(
      "top", {},
      {N(1, "range_for")
           .in("end0", 4)
           .region("body",
                   {N(2, "if").in("cond", ln(3)).region("then", {N(4, "break")}).region("else", {}),
                    N(3, "eq").in("a", ln(1, "i0")).in("b", 2)})}));
  Error e = lowering_error(doc, "top");
  EXPECT_EQ(e.place().node, 4);
  EXPECT_TRUE(contains(e.what(),
                       "a parallel loop cannot break; the range_for (node 1) at the top "
                       "level of the kernel runs its iterations in parallel"))
      << e.what();
  doc.kernels.push_back(kernel(
      "cells", {},
      {N(1, "struct_for").p("field", "lim").region("body", {N(2, "break").in("cond", true)})}));
  Error s = lowering_error(doc, "cells");
  EXPECT_EQ(s.place().node, 2);
  EXPECT_TRUE(contains(s.what(), "a parallel loop cannot break; the struct_for (node 1)"))
      << s.what();
  // `continue` in a parallel loop skips that element, as before.
  graph::Document ok = base();
  ok.kernels.push_back(
      kernel("skip", {},
             {N(1, "range_for")
                  .in("end0", kN)
                  .region("body", {N(2, "expr").in("i", ln(1, "i0")).p("expr", "i % 2 == 1"),
                                   N(3, "continue").in("cond", ln(2)),
                                   N(4, "store")
                                       .in("i0", ln(1, "i0"))
                                       .in("i1", 0)
                                       .in("value", 7)
                                       .p("field", "out")})}));
  std::vector<int> got = run_column(ok, "skip");
  for (int i = 0; i < kN; ++i) EXPECT_EQ(got[static_cast<size_t>(i)], i % 2 ? 0 : 7) << i;
}

TEST(LoopBreak, BreakPlacesLoweringRefuses) {
  graph::Document doc = base();
  // Outside every loop.
  doc.kernels.push_back(kernel("nowhere", {}, {N(1, "break")}));
  Error e1 = lowering_error(doc, "nowhere");
  EXPECT_EQ(e1.place().node, 1);
  EXPECT_TRUE(contains(e1.what(), "a break node must be inside the body of a loop")) << e1.what();
  // In an unroll body: the copies are not a loop, so it is refused rather than guessed at.
  doc.kernels.push_back(kernel(
      "copies", {},
      {N(1, "range_for")
           .in("end0", 4)
           .region(
               "body",
               {N(2, "range_for")
                    .in("end0", 4)
                    .region("body", {N(3, "unroll")
                                         .p("count", 3)
                                         .region("body", {N(4, "break").in("cond", true)})})})}));
  Error e2 = lowering_error(doc, "copies");
  EXPECT_EQ(e2.place().node, 4);
  EXPECT_TRUE(contains(e2.what(), "a break cannot be inside an unroll body: the unroll (node 3)"))
      << e2.what();
  // A while whose only break belongs to a loop nested in it never ends.
  doc.kernels.push_back(kernel(
      "forever", {},
      {N(1, "range_for")
           .in("end0", 4)
           .region(
               "body",
               {N(2, "while")
                    .region("body", {N(3, "range_for")
                                         .in("end0", 4)
                                         .region("body", {N(4, "break").in("cond", true)})})})}));
  Error e3 = lowering_error(doc, "forever");
  EXPECT_EQ(e3.place().node, 2);
  EXPECT_TRUE(contains(e3.what(), "this while loop has no break node and would never end"))
      << e3.what();
}

TEST(LoopBreak, FunctionLoopsBreakWhereTheCallRunsSerially) {
  // f(n): for j in range(n): if j * j >= n: break; r = j  — called inside a parallel loop its
  // loop is serial; called at a kernel's top level its loop would be the parallel one.
  graph::Document doc = base();
  graph::FunctionDecl f;
  f.name = "isqrt_below";
  f.inputs = {{"n", "i32"}};
  f.outputs = {{"r", "i32"}};
  f.nodes = {N(1, "input").p("name", "n"), N(2, "var").in("init", 0),
             N(3, "range_for")
                 .in("end0", ln(1))
                 .region("body",
                         {N(4, "mul").in("a", ln(3, "i0")).in("b", ln(3, "i0")),
                          N(5, "ge").in("a", ln(4)).in("b", ln(1)), N(6, "break").in("cond", ln(5)),
                          N(7, "set").in("var", ln(2, "ref")).in("value", ln(3, "i0"))}),
             N(8, "get").in("var", ln(2, "ref")), N(9, "output").in("r", ln(8))};
  doc.functions.push_back(f);
  doc.kernels.push_back(per_element("roots", {},
                                    {N(2, "call").p("function", "isqrt_below").in("n", ln(1, "i0")),
                                     N(3, "var").in("init", ln(2, "r"))},
                                    3));
  EXPECT_NO_THROW(graph::validate_document(doc));
  std::vector<int> got = run_column(doc, "roots");
  for (int i = 0; i < kN; ++i) {
    int r = 0;
    for (int j = 0; j < i; ++j) {
      if (j * j >= i) break;
      r = j;
    }
    EXPECT_EQ(got[static_cast<size_t>(i)], r) << "i = " << i;
  }
  doc.kernels.push_back(
      kernel("direct", {},
             {N(1, "call").p("function", "isqrt_below").in("n", 9),
              N(2, "store").in("i0", 0).in("i1", 0).in("value", ln(1, "r")).p("field", "out")}));
  Error e = lowering_error(doc, "direct");
  EXPECT_TRUE(contains(e.what(), "a parallel loop cannot break; the range_for (node 3)"))
      << e.what();
  EXPECT_EQ(e.place().kernel, "isqrt_below");
  EXPECT_TRUE(e.place().function);
}
