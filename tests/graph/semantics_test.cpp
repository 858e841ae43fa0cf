// Node semantics end to end (document -> lowering -> passes -> LLVM -> CPU) against C++
// reference values, for the nodes no sample graph uses: cross, fract, length, rsqrt,
// transpose, mat3, mat4, the integer and min atomics, assert in debug and release, floordiv
// and `//`, the bitwise formula operators, and matrices and casts in formulas.
// Each node also has a lowering check (the IR it lowers to).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
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

ProgramOptions options(bool debug = false) {
  ProgramOptions o;
  o.offline_cache = false;
  o.debug = debug;
  return o;
}

// A one-kernel document: `nodes` over value parameters `params`, returning `returns`.
graph::Document one_kernel(std::vector<graph::KernelParam> params, std::vector<std::string> returns,
                           std::initializer_list<N> nodes) {
  graph::Document doc;
  doc.path = "semantics.json";
  graph::KernelDecl k = kernel("k", std::move(params), nodes);
  k.returns = std::move(returns);
  doc.kernels.push_back(std::move(k));
  return doc;
}

KernelResult run(graph::Document doc, const Args& args, bool debug = false) {
  Program p(options(debug));
  p.load(std::move(doc));
  return p.launch("k", args);
}

int count_ops(const graph::Document& doc, ir::Op op) {
  auto k = graph::lower_kernel(doc, "k");
  int n = 0;
  ir::walk(*k->body, [&](ir::Inst& i) { n += i.op == op; });
  return n;
}

std::string lowered(const graph::Document& doc) {
  return ir::print_kernel(*graph::lower_kernel(doc, "k"));
}

}  // namespace

TEST(NodeSemantics, Cross) {
  auto doc =
      one_kernel({value_param("a", "f32x3"), value_param("b", "f32x3")}, {"f32x3"},
                 {N(1, "param").p("name", "a"), N(2, "param").p("name", "b"),
                  N(3, "cross").in("a", ln(1)).in("b", ln(2)), N(4, "return").in("r0", ln(3))});
  EXPECT_EQ(count_ops(doc, ir::Op::Mul), 6);
  EXPECT_EQ(count_ops(doc, ir::Op::Sub), 3);
  const double a[3] = {1.5, -2.0, 0.25}, b[3] = {-3.0, 0.5, 4.0};
  KernelResult r =
      run(doc, {{"a", std::vector<double>(a, a + 3)}, {"b", std::vector<double>(b, b + 3)}});
  ASSERT_EQ(r.values.size(), 3u);
  float ax = 1.5f, ay = -2.0f, az = 0.25f, bx = -3.0f, by = 0.5f, bz = 4.0f;
  EXPECT_FLOAT_EQ(r.value(0), ay * bz - az * by);
  EXPECT_FLOAT_EQ(r.value(1), az * bx - ax * bz);
  EXPECT_FLOAT_EQ(r.value(2), ax * by - ay * bx);
  // cross of anything but two 3-vectors is an error naming the node
  auto bad =
      one_kernel({value_param("a", "f32x2")}, {},
                 {N(1, "param").p("name", "a"), N(2, "cross").in("a", ln(1)).in("b", ln(1))});
  try {
    graph::lower_kernel(bad, "k");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.place().node, 2);
    EXPECT_NE(e.message().find("cross needs two 3-vectors"), std::string::npos) << e.what();
  }
}

TEST(NodeSemantics, FractLengthRsqrt) {
  auto doc = one_kernel(
      {value_param("x", "f32"), value_param("v", "f32x3")}, {"f32", "f32", "f32"},
      {N(1, "param").p("name", "x"), N(2, "param").p("name", "v"), N(3, "fract").in("a", ln(1)),
       N(4, "length").in("a", ln(2)), N(5, "rsqrt").in("a", ln(1)),
       N(6, "return").in("r0", ln(3)).in("r1", ln(4)).in("r2", ln(5))});
  EXPECT_EQ(lowered(one_kernel({value_param("x", "f32")}, {"f32"},
                               {N(1, "param").p("name", "x"), N(2, "fract").in("a", ln(1)),
                                N(3, "return").in("r0", ln(2))})),
            R"(kernel k
  param p0 x: value f32
  returns f32
  %0:f32 = arg p0+0
  %1:f32 = floor %0
  %2:f32 = sub %0, %1
  return %2
)");
  EXPECT_EQ(count_ops(doc, ir::Op::Sqrt), 1);
  EXPECT_EQ(count_ops(doc, ir::Op::Rsqrt), 1);
  for (float x : {2.75f, -1.25f, 4.0f, 0.0f, 1e-3f}) {
    const float v[3] = {x, 2.0f, -3.0f};
    KernelResult r =
        run(doc, {{"x", static_cast<double>(x)}, {"v", std::vector<double>{v[0], v[1], v[2]}}});
    EXPECT_FLOAT_EQ(r.value(0), x - std::floor(x)) << "fract(" << x << ")";
    EXPECT_FLOAT_EQ(r.value(1), std::sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2])) << "length";
    float want = 1.0f / std::sqrt(x);
    if (x == 0.0f)
      EXPECT_EQ(r.value(2), std::numeric_limits<double>::infinity())
          << "rsqrt(0) is +inf, also with fast math";
    else if (x < 0.0f)
      EXPECT_TRUE(std::isnan(r.value(2))) << "rsqrt(" << x << ")";
    else
      EXPECT_NEAR(r.value(2), want, 1e-6 * want) << "rsqrt(" << x << ")";
  }
}

TEST(NodeSemantics, TransposeMat3AndMatmul) {
  // m = mat3(c0, c1, c2) (columns); returns transpose(m) and m * v.
  auto doc = one_kernel(
      {value_param("c0", "f32x3"), value_param("c1", "f32x3"), value_param("c2", "f32x3"),
       value_param("v", "f32x3")},
      {"f32x3x3", "f32x3"},
      {N(1, "param").p("name", "c0"), N(2, "param").p("name", "c1"), N(3, "param").p("name", "c2"),
       N(4, "param").p("name", "v"), N(5, "mat3").in("c0", ln(1)).in("c1", ln(2)).in("c2", ln(3)),
       N(6, "transpose").in("a", ln(5)), N(7, "matmul").in("a", ln(5)).in("b", ln(4)),
       N(8, "return").in("r0", ln(6)).in("r1", ln(7))});
  EXPECT_EQ(count_ops(doc, ir::Op::Mul), 9);  // transpose and mat3 only move components
  float m[3][3];                              // m[row][col]
  std::vector<double> cols[3];
  for (int c = 0; c < 3; ++c)
    for (int r = 0; r < 3; ++r) {
      m[r][c] = static_cast<float>(r * 3 + c) * 0.5f - 1.0f;
      cols[c].push_back(m[r][c]);
    }
  const float v[3] = {0.5f, -2.0f, 3.0f};
  KernelResult res = run(doc, {{"c0", cols[0]},
                               {"c1", cols[1]},
                               {"c2", cols[2]},
                               {"v", std::vector<double>{v[0], v[1], v[2]}}});
  ASSERT_EQ(res.values.size(), 12u);
  for (int c = 0; c < 3; ++c)
    for (int r = 0; r < 3; ++r)  // column-major: transpose(m)[r][c] = m[c][r]
      EXPECT_FLOAT_EQ(res.value(static_cast<size_t>(c * 3 + r)), m[c][r]) << r << "," << c;
  for (int r = 0; r < 3; ++r)
    EXPECT_FLOAT_EQ(res.value(static_cast<size_t>(9 + r)),
                    m[r][0] * v[0] + m[r][1] * v[1] + m[r][2] * v[2]);
  // a 2x3 matrix transposes to 3x2
  auto rect = one_kernel({value_param("m", "f32x2x3")}, {"f32x3x2"},
                         {N(1, "param").p("name", "m"), N(2, "transpose").in("a", ln(1)),
                          N(3, "return").in("r0", ln(2))});
  KernelResult t =
      run(rect, {{"m", std::vector<double>{1, 2, 3, 4, 5, 6}}});  // columns (1,2) (3,4) (5,6)
  EXPECT_EQ(t.values, (std::vector<double>{1, 3, 5, 2, 4, 6}));
}

TEST(NodeSemantics, Mat4DeterminantAndInverse) {
  auto doc =
      one_kernel({value_param("c0", "f32x4"), value_param("c1", "f32x4"),
                  value_param("c2", "f32x4"), value_param("c3", "f32x4")},
                 {"f32", "f32x4x4"},
                 {N(1, "param").p("name", "c0"), N(2, "param").p("name", "c1"),
                  N(3, "param").p("name", "c2"), N(4, "param").p("name", "c3"),
                  N(5, "mat4").in("c0", ln(1)).in("c1", ln(2)).in("c2", ln(3)).in("c3", ln(4)),
                  N(6, "determinant").in("a", ln(5)), N(7, "inverse").in("a", ln(5)),
                  N(8, "return").in("r0", ln(6)).in("r1", ln(7))});
  // A well-conditioned matrix with a known inverse: diagonal-dominant.
  double m[4][4] = {{4, 1, 0, 2}, {1, 5, 1, 0}, {0, 1, 6, 1}, {2, 0, 1, 7}};  // m[row][col]
  std::vector<double> cols[4];
  for (int c = 0; c < 4; ++c)
    for (int r = 0; r < 4; ++r) cols[c].push_back(m[r][c]);
  KernelResult res = run(doc, {{"c0", cols[0]}, {"c1", cols[1]}, {"c2", cols[2]}, {"c3", cols[3]}});
  // reference determinant by cofactor expansion in double
  auto det3 = [](double a[3][3]) {
    return a[0][0] * (a[1][1] * a[2][2] - a[1][2] * a[2][1]) -
           a[0][1] * (a[1][0] * a[2][2] - a[1][2] * a[2][0]) +
           a[0][2] * (a[1][0] * a[2][1] - a[1][1] * a[2][0]);
  };
  double det = 0;
  for (int c = 0; c < 4; ++c) {
    double minor[3][3];
    for (int r = 1; r < 4; ++r)
      for (int cc = 0, k = 0; cc < 4; ++cc)
        if (cc != c) minor[r - 1][k++] = m[r][cc];
    det += (c % 2 ? -1 : 1) * m[0][c] * det3(minor);
  }
  EXPECT_NEAR(res.value(0), det, 1e-3);
  // inverse * m == identity
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 4; ++c) {
      double sum = 0;
      for (int k = 0; k < 4; ++k) sum += res.value(static_cast<size_t>(1 + k * 4 + r)) * m[k][c];
      EXPECT_NEAR(sum, r == c ? 1.0 : 0.0, 1e-5) << r << "," << c;
    }
  // mat4 of columns of different sizes is an error naming the pin
  auto bad =
      one_kernel({value_param("a", "f32x4"), value_param("b", "f32x3")}, {},
                 {N(1, "param").p("name", "a"), N(2, "param").p("name", "b"),
                  N(3, "mat4").in("c0", ln(1)).in("c1", ln(1)).in("c2", ln(2)).in("c3", ln(1))});
  try {
    graph::lower_kernel(bad, "k");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.place().node, 3);
    EXPECT_EQ(e.place().pin, "c2");
  }
}

TEST(NodeSemantics, IntegerAndMinAtomics) {
  // 256 iterations update one element each with atomics; the results do not depend on order.
  graph::Document doc;
  doc.path = "atomics.json";
  doc.fields.push_back(FieldDesc{"acc", {Scalar::I32}, {5}, Layout::AoS});
  doc.fields.push_back(FieldDesc{"fmin", {Scalar::F32}, {1}, Layout::AoS});
  doc.kernels.push_back(kernel(
      "k", {},
      {N(1, "range_for")
           .in("end0", 256)
           .region("body",
                   {N(2, "expr").in("i", ln(1, "i0")).p("expr", "(i * 37) % 256"),
                    N(3, "atomic_sub").in("i0", 0).in("value", ln(2)).p("field", "acc"),
                    N(4, "atomic_min").in("i0", 1).in("value", ln(2)).p("field", "acc"),
                    N(5, "expr").in("i", ln(1, "i0")).p("expr", "shl(1, i % 31)"),
                    N(6, "atomic_or").in("i0", 2).in("value", ln(5)).p("field", "acc"),
                    N(7, "atomic_and").in("i0", 3).in("value", ln(2)).p("field", "acc"),
                    N(8, "atomic_xor").in("i0", 4).in("value", ln(2)).p("field", "acc"),
                    N(9, "cast").in("a", ln(2)).p("type", "f32"),
                    N(10, "atomic_min").in("i0", 0).in("value", ln(9)).p("field", "fmin")})}));
  doc.kernels.push_back(kernel("init", {},
                               {N(1, "store").in("i0", 1).in("value", 1000).p("field", "acc"),
                                N(2, "store").in("i0", 3).in("value", -1).p("field", "acc"),
                                N(3, "store").in("i0", 0).in("value", 1e9).p("field", "fmin")}));
  Program p(options());
  p.load(doc);
  p.launch("init");
  p.launch("k");
  ArrayView acc = p.array("acc");
  std::vector<int32_t> got(5);
  std::memcpy(got.data(), acc.data, sizeof(int32_t) * 5);
  int32_t sub = 0, mn = 1000, orv = 0, andv = -1, xorv = 0;
  for (int i = 0; i < 256; ++i) {
    int32_t v = (i * 37) % 256;
    sub -= v;
    mn = std::min(mn, v);
    orv |= int32_t{1} << (i % 31);
    andv &= v;
    xorv ^= v;
  }
  EXPECT_EQ(got, (std::vector<int32_t>{sub, mn, orv, andv, xorv}));
  float fmin;
  std::memcpy(&fmin, p.array("fmin").data, sizeof fmin);
  EXPECT_EQ(fmin, 0.0f);
  // the lowering makes one atomic per node, with the operation of its type
  auto k = graph::lower_kernel(doc, "k");
  std::vector<ir::AtomicOp> ops;
  ir::walk(*k->body, [&](ir::Inst& i) {
    if (i.op == ir::Op::AtomicRMW) ops.push_back(i.atomic_op());
  });
  EXPECT_EQ(ops,
            (std::vector<ir::AtomicOp>{ir::AtomicOp::Sub, ir::AtomicOp::Min, ir::AtomicOp::Or,
                                       ir::AtomicOp::And, ir::AtomicOp::Xor, ir::AtomicOp::Min}));
  // integer-only atomics on float memory are an error naming node and pin
  graph::Document bad = doc;
  bad.kernels[0].nodes[0].regions[0].nodes[4] =
      N(6, "atomic_or").in("i0", 0).in("value", 1).p("field", "fmin");
  try {
    graph::lower_kernel(bad, "k");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.place().node, 6);
    EXPECT_NE(e.message().find("atomic_or needs integer memory"), std::string::npos) << e.what();
  }
}

TEST(NodeSemantics, AssertOnlyInDebugBuilds) {
  auto doc = one_kernel({value_param("x", "i32")}, {"i32"},
                        {N(1, "param").p("name", "x"), N(2, "gt").in("a", ln(1)).in("b", 0),
                         N(3, "assert").in("cond", ln(2)).p("message", "x must be positive"),
                         N(4, "return").in("r0", ln(1))});
  EXPECT_EQ(count_ops(doc, ir::Op::Assert),
            1);  // lowered always; dropped by the pipeline unless debug
  // release: nothing is checked
  EXPECT_EQ(run(doc, {{"x", -5}}, /*debug=*/false).value(), -5);
  // debug: a failing assertion is an error with its message; a passing one is silent
  EXPECT_EQ(run(doc, {{"x", 5}}, /*debug=*/true).value(), 5);
  try {
    run(doc, {{"x", -5}}, /*debug=*/true);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("assertion failed: x must be positive"), std::string::npos)
        << e.what();
  }
}

namespace {

// Python's a // b for integers, as a reference independent of the lowering: the floor of the
// exact quotient (a double holds every i32 and i32 quotients floor correctly), 0 for b == 0
// and a wrapped MIN // -1, as integer div does.
int64_t floor_div_reference(int64_t a, int64_t b, int64_t min) {
  if (b == 0) return 0;
  if (a == min && b == -1) return min;
  return static_cast<int64_t>(std::floor(static_cast<double>(a) / static_cast<double>(b)));
}

// A kernel returning floordiv(a, b) from the node and `a // b` from a formula.
graph::Document floordiv_kernel(const std::string& type) {
  return one_kernel({value_param("a", type), value_param("b", type)}, {type, type},
                    {N(1, "param").p("name", "a"), N(2, "param").p("name", "b"),
                     N(3, "floordiv").in("a", ln(1)).in("b", ln(2)),
                     N(4, "expr").p("expr", "a // b").in("a", ln(1)).in("b", ln(2)),
                     N(5, "return").in("r0", ln(3)).in("r1", ln(4))});
}

}  // namespace

TEST(NodeSemantics, FloorDivisionOfIntegersRoundsDown) {
  Program p(options());
  p.load(floordiv_kernel("i32"));
  const int64_t min32 = std::numeric_limits<int32_t>::min(),
                max32 = std::numeric_limits<int32_t>::max();
  for (int64_t a : {int64_t{-7}, int64_t{7}, int64_t{-8}, int64_t{8}, int64_t{0}, int64_t{-1},
                    int64_t{1}, min32, max32, min32 + 1})
    for (int64_t b : {2, -2, 3, -3, 1, -1, 0, 7, -7}) {
      KernelResult r = p.launch("k", {{"a", a}, {"b", b}});
      int64_t want = floor_div_reference(a, b, min32);
      EXPECT_EQ(r.ints.at(0), want) << a << " // " << b << " (node)";
      EXPECT_EQ(r.ints.at(1), want) << a << " // " << b << " (formula)";
    }
  EXPECT_EQ(p.launch("k", {{"a", -7}, {"b", 2}}).ints.at(0), -4);  // Python's -7 // 2
  EXPECT_EQ(p.launch("k", {{"a", 7}, {"b", -2}}).ints.at(0), -4);
  EXPECT_EQ(p.launch("k", {{"a", -6}, {"b", 2}}).ints.at(0), -3);

  // i64: values a double cannot hold exactly, so the references are written out.
  Program p64(options());
  p64.load(floordiv_kernel("i64"));
  const int64_t big = (int64_t{1} << 62) + 1;  // odd
  struct Case {
    int64_t a, b, want;
  } cases64[] = {{-7, 2, -4},
                 {7, -2, -4},
                 {-big, 2, -(int64_t{1} << 61) - 1},
                 {big, -2, -(int64_t{1} << 61) - 1},
                 {big, 2, int64_t{1} << 61},
                 {std::numeric_limits<int64_t>::min(), 3, -3074457345618258603},
                 {std::numeric_limits<int64_t>::min(), -1, std::numeric_limits<int64_t>::min()},
                 {-5, 0, 0}};
  for (const Case& c : cases64) {
    KernelResult r = p64.launch("k", {{"a", c.a}, {"b", c.b}});
    EXPECT_EQ(r.ints.at(0), c.want) << c.a << " // " << c.b;
    EXPECT_EQ(r.ints.at(1), c.want) << c.a << " // " << c.b;
  }

  // u32: truncation is the floor; large values stay unsigned.
  Program pu(options());
  pu.load(floordiv_kernel("u32"));
  KernelResult r = pu.launch("k", {{"a", uint32_t{0xffffffffu}}, {"b", uint32_t{2}}});
  EXPECT_EQ(r.ints.at(0), 0x7fffffff);
  EXPECT_EQ(pu.launch("k", {{"a", uint32_t{7}}, {"b", uint32_t{0}}}).ints.at(1), 0);

  // Narrow types floor in their own width: i8 -128 // -1 wraps like div, -128 // 3 is -43.
  Program p8(options());
  p8.load(floordiv_kernel("i8"));
  for (int64_t a = -128; a <= 127; a += 5)
    for (int64_t b : {3, -3, 2, -1, 0, 127, -128}) {
      r = p8.launch("k", {{"a", a}, {"b", b}});
      int64_t want = floor_div_reference(a, b, -128);
      EXPECT_EQ(r.ints.at(0), want) << "i8 " << a << " // " << b;
      EXPECT_EQ(r.ints.at(1), want) << "i8 " << a << " // " << b;
    }
  EXPECT_EQ(p8.launch("k", {{"a", -128}, {"b", -1}}).ints.at(0), -128);
}

TEST(NodeSemantics, FloorDivisionOfFloatsAndVectors) {
  Program p(options());
  p.load(floordiv_kernel("f32"));
  for (float a : {-7.5f, 7.5f, -6.0f, 0.25f, -0.25f, 1e6f})
    for (float b : {2.0f, -2.0f, 0.5f, 3.0f}) {
      KernelResult r = p.launch("k", {{"a", a}, {"b", b}});
      EXPECT_EQ(r.value(0), std::floor(a / b)) << a << " // " << b;
      EXPECT_EQ(r.value(1), std::floor(a / b)) << a << " // " << b;
    }
  EXPECT_EQ(p.launch("k", {{"a", 1.0f}, {"b", 0.0f}}).value(0),
            std::numeric_limits<double>::infinity());
  // Per component, with a scalar splatted; a float literal makes the division a float one.
  auto vec = one_kernel(
      {value_param("v", "i32x3"), value_param("f", "f32x2")}, {"i32x3", "i32x3", "f32x2", "f32"},
      {N(1, "param").p("name", "v"), N(2, "param").p("name", "f"),
       N(3, "floordiv").in("a", ln(1)).in("b", 2), N(4, "expr").p("expr", "-9 // v").in("v", ln(1)),
       N(5, "expr").p("expr", "f // -0.5").in("f", ln(2)), N(6, "expr").p("expr", "7 // 2.0"),
       N(7, "return").in("r0", ln(3)).in("r1", ln(4)).in("r2", ln(5)).in("r3", ln(6))});
  KernelResult r =
      run(vec, {{"v", std::vector<double>{-7, 7, -8}}, {"f", std::vector<double>{1.25, -1.25}}});
  EXPECT_EQ(r.ints, (std::vector<int64_t>{-4, 3, -4, 1, -2, 1, -3, 2, 3}));
  EXPECT_EQ(r.value(6), -3.0);  // floor(1.25 / -0.5) = floor(-2.5)
  EXPECT_EQ(r.value(7), 2.0);
  EXPECT_EQ(r.value(8), 3.0);
}

// The bitwise operators compute what the nodes do, with Python's precedence.
TEST(NodeSemantics, BitwiseFormulas) {
  auto doc = one_kernel(
      {value_param("a", "i32"), value_param("b", "i32"), value_param("u", "u32")},
      {"i32", "i32", "i32", "bool", "u32", "i32", "i32"},
      {N(1, "param").p("name", "a"), N(2, "param").p("name", "b"), N(3, "param").p("name", "u"),
       N(4, "expr").p("expr", "a & 12 | b ^ 5 << 1").in("a", ln(1)).in("b", ln(2)),
       N(5, "expr").p("expr", "~a").in("a", ln(1)), N(6, "expr").p("expr", "a >> 2").in("a", ln(1)),
       N(7, "expr").p("expr", "a & 1 == 0").in("a", ln(1)),
       N(8, "expr").p("expr", "u >> 4 | u << 28").in("u", ln(3)),
       N(9, "expr").p("expr", "a // 4 * 4 + a % 4").in("a", ln(1)),
       N(10, "expr").p("expr", "cast(a, u8) + cast(300, u8)").in("a", ln(1)),
       N(11, "return")
           .in("r0", ln(4))
           .in("r1", ln(5))
           .in("r2", ln(6))
           .in("r3", ln(7))
           .in("r4", ln(8))
           .in("r5", ln(9))
           .in("r6", ln(10))});
  for (int32_t a : {-16, 45, -1, 0, 1234567})
    for (int32_t b : {3, -9}) {
      uint32_t u = 0x80000001u ^ static_cast<uint32_t>(a);
      KernelResult r = run(doc, {{"a", a}, {"b", b}, {"u", u}});
      EXPECT_EQ(r.ints.at(0), (a & 12) | (b ^ (5 << 1))) << a << ", " << b;
      EXPECT_EQ(r.ints.at(1), ~a);
      EXPECT_EQ(r.ints.at(2), a >> 2) << "arithmetic shift of a signed value";
      EXPECT_EQ(r.ints.at(3), (a & 1) == 0);
      EXPECT_EQ(r.ints.at(4), static_cast<int64_t>((u >> 4) | (u << 28)));
      EXPECT_EQ(r.ints.at(5), a) << "a // 4 * 4 + a % 4 is a, with floor division and modulo";
      // cast(a, u8) wraps a (cast semantics); cast(300, u8) is 44; u8 + u8 stays u8 but the
      // kernel returns i32.
      EXPECT_EQ(r.ints.at(6), static_cast<uint8_t>(static_cast<uint8_t>(a) + uint8_t{44}));
    }
}

// Matrices built in a formula from columns, and their columns read back.
TEST(NodeSemantics, MatrixFormulas) {
  auto doc = one_kernel({value_param("p", "f32x2"), value_param("q", "f32x2")},
                        {"f32x2x2", "f32x2", "f32"},
                        {N(1, "param").p("name", "p"), N(2, "param").p("name", "q"),
                         N(3, "expr").p("expr", "mat2(p, q)").in("p", ln(1)).in("q", ln(2)),
                         N(4, "expr").p("expr", "matmul(m, vec2(1, 10)) + m.c1").in("m", ln(3)),
                         N(5, "expr").p("expr", "determinant(m) + split(m).c0.y").in("m", ln(3)),
                         N(6, "return").in("r0", ln(3)).in("r1", ln(4)).in("r2", ln(5))});
  KernelResult r = run(doc, {{"p", std::vector<double>{1, 2}}, {"q", std::vector<double>{3, 4}}});
  // m = [[1, 3], [2, 4]] (columns p, q); m * (1, 10) = (31, 42); + column 1 (3, 4).
  EXPECT_EQ(r.values, (std::vector<double>{1, 2, 3, 4, 34, 46, 1 * 4 - 3 * 2 + 2}));
}
