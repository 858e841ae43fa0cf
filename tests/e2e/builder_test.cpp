// Documents built in C++ with the builder API run like loaded ones, against plain C++ loops.
#include "tests/e2e/e2e_util.h"

#include <cmath>

#include "compiler/graph/document.h"
#include "compiler/graph/graph_builder.h"

using namespace loom;
using namespace loom::graph::build;
using loom::test::element;
using loom::test::no_cache;

namespace {

graph::Document saxpy_document() {
  graph::Document doc;
  doc.name = "saxpy";
  doc.kernels.push_back(kernel(
      "saxpy",
      {value_param("a", "f32"), ndarray_param("x", "f32", 1), ndarray_param("y", "f32", 1)},
      {N(1, "shape").p("ndarray", "x").p("dim", 0),
       N(2, "range_for")
           .in("end0", ln(1))
           .region(
               "body",
               {
                   N(3, "param").p("name", "a"),
                   N(4, "load").in("i0", ln(2, "i0")).p("ndarray", "x"),
                   N(5, "load").in("i0", ln(2, "i0")).p("ndarray", "y"),
                   N(6, "expr").in("a", ln(3)).in("x", ln(4)).in("y", ln(5)).p("expr", "a * x + y"),
                   N(7, "store").in("i0", ln(2, "i0")).in("value", ln(6)).p("ndarray", "y"),
               })}));
  return doc;
}

}  // namespace

TEST(Builder, SaxpyMatchesAPlainLoop) {
  Program p(no_cache());
  p.load(saxpy_document());
  const int n = 100003;  // not a multiple of any vector width or chunk
  std::vector<float> x(n), y(n), expect(n);
  for (int i = 0; i < n; ++i) {
    x[static_cast<size_t>(i)] = std::sin(static_cast<float>(i));
    y[static_cast<size_t>(i)] = static_cast<float>(i % 13);
    expect[static_cast<size_t>(i)] = 2.5f * x[static_cast<size_t>(i)] + y[static_cast<size_t>(i)];
  }
  p.wrap_ndarray("x", {Scalar::F32}, {n}, x.data());
  p.wrap_ndarray("y", {Scalar::F32}, {n}, y.data());
  p.launch("saxpy", {{"a", 2.5}, {"x", "x"}, {"y", "y"}});
  for (int i = 0; i < n; ++i)
    ASSERT_NEAR(y[static_cast<size_t>(i)], expect[static_cast<size_t>(i)], 1e-5) << i;
}

TEST(Builder, FieldsAndReturnValues) {
  graph::Document doc;
  doc.name = "reduce";
  doc.fields.push_back(FieldDesc{"v", {Scalar::F32, 3, 1}, {64}, Layout::SoA});
  // fill v[i] = (i, 2i, 3i); then sum every component with atomics into a field and return it
  doc.fields.push_back(FieldDesc{"total", {Scalar::F32}, {1}, Layout::AoS});
  doc.kernels.push_back(kernel(
      "fill", {},
      {N(1, "range_for")
           .in("end0", 64)
           .region("body",
                   {
                       N(2, "cast").in("a", ln(1, "i0")).p("type", "f32"),
                       N(3, "expr").in("i", ln(2)).p("expr", "vec3(i, 2 * i, 3 * i)"),
                       N(4, "store").in("i0", ln(1, "i0")).in("value", ln(3)).p("field", "v"),
                   })}));
  graph::KernelDecl sum = kernel(
      "sum", {},
      {
          N(1, "range_for")
              .in("end0", 64)
              .region("body",
                      {
                          N(2, "load").in("i0", ln(1, "i0")).p("field", "v"),
                          N(3, "split").in("v", ln(2)),
                          N(4, "expr")
                              .in("a", ln(3, "x"))
                              .in("b", ln(3, "y"))
                              .in("c", ln(3, "z"))
                              .p("expr", "a + b + c"),
                          N(5, "atomic_add").in("i0", 0).in("value", ln(4)).p("field", "total"),
                      }),
          N(6, "load").in("i0", 0).p("field", "total"),
          N(7, "return").in("r0", ln(6)),
      });
  sum.returns = {"f32"};
  doc.kernels.push_back(sum);
  Program p(no_cache());
  p.load(std::move(doc));
  p.launch("fill");
  KernelResult r = p.launch("sum");
  double expect = 0;
  for (int i = 0; i < 64; ++i) expect += 6.0 * i;
  EXPECT_DOUBLE_EQ(r.value(), expect);
  // SoA: component-major storage
  ArrayView v = p.array("v");
  EXPECT_EQ(v.layout, Layout::SoA);
  EXPECT_EQ(element<float>(v, 64 + 5), 10.0f);  // y of element 5
}
