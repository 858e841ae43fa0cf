// The `outer` and `trace` nodes (issue 14 §2): what they compute, as nodes and in formulas,
// against hand-computed values, and the errors they report. Built with BOTH_BACKENDS, so the
// same cases run on the CPU and on Vulkan (products of small numbers: exact on both).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "compiler/graph/document.h"
#include "compiler/graph/graph_builder.h"
#include "engine_plugin/include/loom/program.h"
#include "runtime/common/error.h"
#include "tests/graph/one_kernel.h"

using namespace loom;
using namespace loom::graph::build;

namespace {

graph::Document one_kernel(std::vector<graph::KernelParam> params, std::vector<std::string> returns,
                           std::initializer_list<N> nodes) {
  return test::one_kernel("outer_trace.json", std::move(params), std::move(returns), nodes);
}

// The message of the error running `doc` throws ("" when it runs).
std::string error_of(graph::Document doc) {
  try {
    test::run_one_kernel(std::move(doc), {});
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(OuterTrace, OuterOfAThreeAndATwoVectorIsAThreeByTwoMatrix) {
  auto doc =
      one_kernel({value_param("a", "f32x3"), value_param("b", "f32x2")}, {"f32x3x2"},
                 {N(1, "param").p("name", "a"), N(2, "param").p("name", "b"),
                  N(3, "outer").in("a", ln(1)).in("b", ln(2)), N(4, "return").in("r0", ln(3))});
  KernelResult r = test::run_one_kernel(
      doc, {{"a", std::vector<double>{1.5, -2, 4}}, {"b", std::vector<double>{3, -0.5}}});
  ASSERT_EQ(r.types.size(), 1u);
  EXPECT_EQ(value_type_name(r.types[0]), "f32x3x2");
  // Column-major: column 0 is b[0] * a = (4.5, -6, 12), column 1 is b[1] * a = (-0.75, 1, -2).
  EXPECT_EQ(r.values, (std::vector<double>{4.5, -6, 12, -0.75, 1, -2}));
}

TEST(OuterTrace, IntegerOuterAndTraceInAFormula) {
  // trace(outer(a, b)) is dot(a, b); outer of i32 vectors stays i32.
  auto doc =
      one_kernel({value_param("a", "i32x4"), value_param("b", "i32x4")}, {"i32x4x4", "i32", "i32"},
                 {N(1, "param").p("name", "a"), N(2, "param").p("name", "b"),
                  N(3, "expr").in("a", ln(1)).in("b", ln(2)).p("expr", "outer(a, b)"),
                  N(4, "expr").in("a", ln(1)).in("b", ln(2)).p("expr", "trace(outer(a, b))"),
                  N(5, "dot").in("a", ln(1)).in("b", ln(2)),
                  N(6, "return").in("r0", ln(3)).in("r1", ln(4)).in("r2", ln(5))});
  const int a[4] = {2, -3, 5, 7}, b[4] = {-1, 4, 6, -2};
  KernelResult r = test::run_one_kernel(
      doc, {{"a", std::vector<double>(a, a + 4)}, {"b", std::vector<double>(b, b + 4)}});
  EXPECT_EQ(value_type_name(r.types[0]), "i32x4x4");
  ASSERT_EQ(r.ints.size(), 18u);
  for (int col = 0; col < 4; ++col)
    for (int row = 0; row < 4; ++row)
      EXPECT_EQ(r.ints[static_cast<size_t>(col * 4 + row)], a[row] * b[col]) << row << "," << col;
  EXPECT_EQ(r.ints[16], 2 * -1 + -3 * 4 + 5 * 6 + 7 * -2);  // 2
  EXPECT_EQ(r.ints[17], r.ints[16]);
}

TEST(OuterTrace, TraceSumsTheDiagonal) {
  auto doc =
      one_kernel({value_param("m", "f32x3x3"), value_param("n", "i32x2x2")}, {"f32", "i32"},
                 {N(1, "param").p("name", "m"), N(2, "param").p("name", "n"),
                  N(3, "trace").in("a", ln(1)), N(4, "expr").in("n", ln(2)).p("expr", "trace(n)"),
                  N(5, "return").in("r0", ln(3)).in("r1", ln(4))});
  // Columns (1, 2, 3), (4, 5, 6), (7, 8, 9): the diagonal is 1, 5, 9.
  KernelResult r = test::run_one_kernel(doc, {{"m", std::vector<double>{1, 2, 3, 4, 5, 6, 7, 8, 9}},
                                              {"n", std::vector<double>{-4, 100, 100, 10}}});
  EXPECT_EQ(r.value(0), 15.0);
  EXPECT_EQ(r.ints[1], 6);
}

TEST(OuterTrace, ErrorsNameTheNodeAndWhatItNeeds) {
  std::string scalar = error_of(
      one_kernel({value_param("a", "f32"), value_param("b", "f32x2")}, {"f32x2"},
                 {N(1, "param").p("name", "a"), N(2, "param").p("name", "b"),
                  N(7, "outer").in("a", ln(1)).in("b", ln(2)), N(4, "return").in("r0", ln(2))}));
  EXPECT_NE(scalar.find("node 7"), std::string::npos) << scalar;
  EXPECT_NE(scalar.find("outer needs two vectors (2 to 4 components each), got f32 and f32x2"),
            std::string::npos)
      << scalar;
  std::string rect =
      error_of(one_kernel({value_param("m", "f32x2x3")}, {"f32"},
                          {N(1, "param").p("name", "m"), N(8, "trace").in("a", ln(1)),
                           N(2, "return").in("r0", ln(8))}));
  EXPECT_NE(rect.find("node 8"), std::string::npos) << rect;
  EXPECT_NE(rect.find("trace needs a square matrix (2x2 to 4x4), got f32x2x3"), std::string::npos)
      << rect;
  std::string vec = error_of(
      one_kernel({value_param("v", "f32x3")}, {"f32"},
                 {N(1, "param").p("name", "v"), N(9, "expr").in("v", ln(1)).p("expr", "trace(v)"),
                  N(2, "return").in("r0", ln(9))}));
  EXPECT_NE(vec.find("node 9"), std::string::npos) << vec;
  EXPECT_NE(vec.find("trace needs a square matrix"), std::string::npos) << vec;
}
