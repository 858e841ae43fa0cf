// How parallel tasks cover their ranges on Vulkan (SpirvTask::direct, the runtime's
// dispatch_groups): a task whose range the host evaluates — constants, value parameters and
// extents, each plus a constant (`shape - 1`) — runs one invocation per element with no loop,
// on a grid that covers the range exactly: 1-d ranges wider than the device's workgroups
// along x fold into y, n-d rows go along y and z, and a row needing more workgroups than x
// allows is laid end to end. Every element must be visited exactly once, as on the CPU.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "compiler/graph/document.h"
#include "compiler/graph/graph_builder.h"
#include "engine_plugin/include/loom/program.h"
#include "runtime/common/error.h"
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

std::vector<int32_t> ints(Program& p, const std::string& name) {
  ArrayView v = p.array(name);
  std::vector<int32_t> out(v.bytes / 4);
  std::memcpy(out.data(), v.data, v.bytes);
  return out;
}

// hits[i] += 1 over [begin, end) of a 1-d ndarray: every element of the range once.
graph::Document count_1d(int begin_plus) {
  graph::Document doc;
  graph::KernelDecl k = kernel("count", {ndarray_param("hits", "i32", 1)}, {});
  k.nodes = {
      N(1, "shape").p("ndarray", "hits").p("dim", 0),
      N(2, "add").in("a", ln(1)).in("b", begin_plus),
      N(3, "range_for")
          .in("begin0", 0)
          .in("end0", ln(2))
          .region("body",
                  {N(4, "load").in("i0", ln(3, "i0")).p("ndarray", "hits"),
                   N(5, "add").in("a", ln(4)).in("b", 1),
                   N(6, "store").in("i0", ln(3, "i0")).in("value", ln(5)).p("ndarray", "hits")})};
  doc.kernels.push_back(k);
  return doc;
}

// A loop up to `shape(a) - 1` indexing `b`: the extent assumption the launch checks carries the
// minus one, on both backends, so a `b` of the loop's length is accepted and a shorter one
// refused with the bound spelled out.
TEST(DispatchForm, BoundsPlusAConstantAreCheckedAtLaunch) {
  graph::Document doc;
  graph::KernelDecl k =
      kernel("copy", {ndarray_param("a", "i32", 1), ndarray_param("b", "i32", 1)}, {});
  k.nodes = {
      N(1, "shape").p("ndarray", "a").p("dim", 0), N(2, "sub").in("a", ln(1)).in("b", 1),
      N(3, "range_for")
          .in("end0", ln(2))
          .region("body",
                  {N(4, "load").in("i0", ln(3, "i0")).p("ndarray", "a"),
                   N(5, "store").in("i0", ln(3, "i0")).in("value", ln(4)).p("ndarray", "b")})};
  doc.kernels.push_back(k);
  for (Backend backend : {Backend::Cpu, Backend::Vulkan}) {
    if (backend == Backend::Vulkan) LOOM_REQUIRE_VULKAN_OR_SKIP();
    Program p(on(backend));
    p.load(doc);
    p.create_ndarray("a", {Scalar::I32}, {10});
    p.create_ndarray("fits", {Scalar::I32}, {9});
    p.create_ndarray("short", {Scalar::I32}, {8});
    EXPECT_NO_THROW(p.launch("copy", {{"a", "a"}, {"b", "fits"}}));
    try {
      p.launch("copy", {{"a", "a"}, {"b", "short"}});
      ADD_FAILURE() << "a b shorter than the loop was launched";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("along dimension 0 minus 1 (9)"), std::string::npos)
          << e.what();
    }
  }
}

TEST(DispatchForm, OneDimensionalRangesWiderThanARowOfWorkgroupsFoldIntoY) {
  LOOM_REQUIRE_VULKAN_OR_SKIP();
  // 65,535 workgroups of 128 along x cover 8,388,480 elements; these need a second row.
  const int64_t n = 8388480 + 1000;
  for (int plus : {0, -1}) {
    Program p(on(Backend::Vulkan));
    p.load(count_1d(plus));
    p.create_ndarray("h", {Scalar::I32}, {n});
    p.launch("count", {{"hits", "h"}});
    std::vector<int32_t> hits = ints(p, "h");
    int64_t wrong = 0;
    for (int64_t i = 0; i < n; ++i) wrong += hits[static_cast<size_t>(i)] != (i < n + plus ? 1 : 0);
    EXPECT_EQ(wrong, 0) << "end = shape " << plus;
  }
}

// out[i, j] = i * 1000003 + j over a [rows, cols] ndarray from `begin` to the extents minus
// `trim`, each element written once (a counter beside it says how often).
graph::Document fill_2d(int begin, int trim) {
  graph::Document doc;
  graph::KernelDecl k =
      kernel("fill", {ndarray_param("out", "i32", 2), ndarray_param("hits", "i32", 2)}, {});
  k.nodes = {
      N(1, "shape").p("ndarray", "out").p("dim", 0), N(2, "shape").p("ndarray", "out").p("dim", 1),
      N(3, "sub").in("a", ln(1)).in("b", trim), N(4, "sub").in("a", ln(2)).in("b", trim),
      N(5, "range_for")
          .in("begin0", begin)
          .in("end0", ln(3))
          .in("begin1", begin)
          .in("end1", ln(4))
          .region(
              "body",
              {N(6, "expr").in("i", ln(5, "i0")).in("j", ln(5, "i1")).p("expr", "i * 1000003 + j"),
               N(7, "store")
                   .in("i0", ln(5, "i0"))
                   .in("i1", ln(5, "i1"))
                   .in("value", ln(6))
                   .p("ndarray", "out"),
               N(8, "load").in("i0", ln(5, "i0")).in("i1", ln(5, "i1")).p("ndarray", "hits"),
               N(9, "add").in("a", ln(8)).in("b", 1),
               N(10, "store")
                   .in("i0", ln(5, "i0"))
                   .in("i1", ln(5, "i1"))
                   .in("value", ln(9))
                   .p("ndarray", "hits")})};
  doc.kernels.push_back(k);
  return doc;
}

void check_fill(int64_t rows, int64_t cols, int begin, int trim) {
  Program p(on(Backend::Vulkan));
  p.load(fill_2d(begin, trim));
  p.create_ndarray("o", {Scalar::I32}, {rows, cols});
  p.create_ndarray("c", {Scalar::I32}, {rows, cols});
  p.launch("fill", {{"out", "o"}, {"hits", "c"}});
  std::vector<int32_t> out = ints(p, "o"), hits = ints(p, "c");
  int64_t wrong = 0, first = -1;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) {
      bool inside = i >= begin && i < rows - trim && j >= begin && j < cols - trim;
      size_t at = static_cast<size_t>(i * cols + j);
      bool ok = hits[at] == (inside ? 1 : 0) &&
                out[at] == (inside ? static_cast<int32_t>(i * 1000003 + j) : 0);
      if (!ok && first < 0) first = i * cols + j;
      wrong += !ok;
    }
  EXPECT_EQ(wrong, 0) << rows << " x " << cols << " from " << begin << " to extent - " << trim
                      << ": first wrong element " << first;
}

TEST(DispatchForm, TwoDimensionalRangesVisitEveryElementOnce) {
  LOOM_REQUIRE_VULKAN_OR_SKIP();
  check_fill(37, 300, 0, 0);
  check_fill(37, 300, 1, 1);   // a stencil's interior: begin 1, end shape - 1
  check_fill(70000, 3, 0, 0);  // more rows than a grid's y (65,535): rows go along z too
}

TEST(DispatchForm, RowsWiderThanTheWorkgroupsAlongXAreLaidEndToEnd) {
  LOOM_REQUIRE_VULKAN_OR_SKIP();
  // 65,535 workgroups of 128 are 8,388,480 columns: a row of 8,389,000 needs 65,540.
  check_fill(2, 8389000, 0, 0);
  check_fill(3, 8389000, 1, 1);
}

// A continue in the body of a parallel loop ends the invocation's element (the direct form has
// no loop to continue), and a 3-d range splits its rows into two indices.
TEST(DispatchForm, ContinueAndThreeDimensionsAgreeWithTheCpu) {
  LOOM_REQUIRE_VULKAN_OR_SKIP();
  graph::Document doc;
  doc.fields.push_back(FieldDesc{"out", {Scalar::I32}, {5, 7, 300}, Layout::AoS});
  doc.kernels.push_back(kernel("fill", {},
                               {N(1, "range_for")
                                    .in("end0", 5)
                                    .in("end1", 7)
                                    .in("begin2", 2)
                                    .in("end2", 299)
                                    .region("body", {N(2, "expr")
                                                         .in("i", ln(1, "i0"))
                                                         .in("j", ln(1, "i1"))
                                                         .in("k", ln(1, "i2"))
                                                         .p("expr", "(i + j + k) % 3 == 0"),
                                                     N(3, "continue").in("cond", ln(2)),
                                                     N(4, "expr")
                                                         .in("i", ln(1, "i0"))
                                                         .in("j", ln(1, "i1"))
                                                         .in("k", ln(1, "i2"))
                                                         .p("expr", "i * 10000 + j * 1000 + k"),
                                                     N(5, "store")
                                                         .in("i0", ln(1, "i0"))
                                                         .in("i1", ln(1, "i1"))
                                                         .in("i2", ln(1, "i2"))
                                                         .in("value", ln(4))
                                                         .p("field", "out")})}));
  Program cpu(on(Backend::Cpu)), vk(on(Backend::Vulkan));
  cpu.load(doc);
  vk.load(doc);
  cpu.launch("fill");
  vk.launch("fill");
  EXPECT_EQ(ints(cpu, "out"), ints(vk, "out"));
  // The task is in the direct form: no loop construct at all.
  EXPECT_EQ(vk.spirv_text("fill").find("OpLoopMerge"), std::string::npos);
}

TEST(DispatchForm, EmptyAndNegativeRangesRunNothingAndTheRestAsOnTheCpu) {
  LOOM_REQUIRE_VULKAN_OR_SKIP();
  for (int trim : {0, 5, 6, 40}) {  // a 10 x 10 array from 5 to 10 - trim: empty from trim 5
    Program vk(on(Backend::Vulkan)), cpu(on(Backend::Cpu));
    for (Program* p : {&vk, &cpu}) {
      p->load(fill_2d(5, trim));
      p->create_ndarray("o", {Scalar::I32}, {10, 10});
      p->create_ndarray("c", {Scalar::I32}, {10, 10});
      p->launch("fill", {{"out", "o"}, {"hits", "c"}});
    }
    EXPECT_EQ(ints(cpu, "o"), ints(vk, "o")) << trim;
    EXPECT_EQ(ints(cpu, "c"), ints(vk, "c")) << trim;
  }
}

}  // namespace
}  // namespace loom
