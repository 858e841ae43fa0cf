// The same kernels on the CPU and on Vulkan (lavapipe in CI, under the validation layer),
// compared value by value. Integers, comparisons, casts, bit operations, random numbers and
// control flow must match exactly. Floats carry the tolerance written next to each case:
// both backends compile with fast math, and lavapipe's transcendental functions are not
// glibc's, so they agree to a few ulps; f64 transcendentals run at f32 precision on Vulkan.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>

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

double component(const ArrayView& v, size_t i) {
  const uint8_t* p = v.data + i * static_cast<size_t>(size_of(v.dtype));
  switch (v.dtype) {
    case Scalar::Bool:
    case Scalar::U8: return *p;
    case Scalar::I8: return static_cast<int8_t>(*p);
    case Scalar::I16: {
      int16_t x;
      std::memcpy(&x, p, 2);
      return x;
    }
    case Scalar::U16: {
      uint16_t x;
      std::memcpy(&x, p, 2);
      return x;
    }
    case Scalar::I32: {
      int32_t x;
      std::memcpy(&x, p, 4);
      return x;
    }
    case Scalar::U32: {
      uint32_t x;
      std::memcpy(&x, p, 4);
      return x;
    }
    case Scalar::I64: {
      int64_t x;
      std::memcpy(&x, p, 8);
      return static_cast<double>(x);
    }
    case Scalar::U64: {
      uint64_t x;
      std::memcpy(&x, p, 8);
      return static_cast<double>(x);
    }
    case Scalar::F32: {
      float x;
      std::memcpy(&x, p, 4);
      return x;
    }
    case Scalar::F64: {
      double x;
      std::memcpy(&x, p, 8);
      return x;
    }
    case Scalar::Void: break;
  }
  return 0;
}

// Every resource of `name` equal on both programs: bytes for integers, within
// |a-b| <= atol + rtol*|a| for floats (NaN matches NaN, infinities match exactly).
void expect_same(Program& cpu, Program& vk, const std::string& name, double rtol = 0,
                 double atol = 0, const std::vector<std::string>& column_names = {}) {
  ArrayView a = cpu.array(name), b = vk.array(name);
  ASSERT_EQ(a.bytes, b.bytes) << name;
  if (!is_float(a.dtype)) {
    for (size_t i = 0; i < a.bytes / static_cast<size_t>(size_of(a.dtype)); ++i)
      ASSERT_EQ(component(a, i), component(b, i))
          << name << "[" << i << "]"
          << (column_names.empty() ? "" : " (" + column_names[i % column_names.size()] + ")");
    return;
  }
  size_t n = a.bytes / static_cast<size_t>(size_of(a.dtype));
  for (size_t i = 0; i < n; ++i) {
    double x = component(a, i), y = component(b, i);
    std::string what =
        name + "[" + std::to_string(i) + "]" +
        (column_names.empty() ? "" : " (" + column_names[i % column_names.size()] + ")");
    if (std::isnan(x) || std::isnan(y)) {
      EXPECT_TRUE(std::isnan(x) && std::isnan(y)) << what << ": cpu " << x << " vulkan " << y;
      continue;
    }
    if (std::isinf(x) || std::isinf(y)) {
      EXPECT_EQ(x, y) << what;
      continue;
    }
    EXPECT_LE(std::fabs(x - y), atol + rtol * std::fabs(x))
        << what << ": cpu " << x << " vulkan " << y;
  }
}

// A kernel computing one formula of (a, b) per column: out[i, k] = expr_k(a[i], b[i]).
graph::Document formulas(const std::string& type, const std::string& out_type, int n,
                         const std::vector<std::string>& exprs) {
  graph::Document doc;
  ValueType t = *parse_value_type(type), ot = *parse_value_type(out_type);
  doc.fields.push_back(FieldDesc{"a", t, {n}, Layout::AoS});
  doc.fields.push_back(FieldDesc{"b", t, {n}, Layout::AoS});
  doc.fields.push_back(FieldDesc{"out", ot, {n, static_cast<int64_t>(exprs.size())}, Layout::AoS});
  graph::KernelDecl k = kernel("ops", {}, {});
  graph::Node loop = N(1, "range_for")
                         .in("end0", n)
                         .region("body", {
                                             N(2, "load").in("i0", ln(1, "i0")).p("field", "a"),
                                             N(3, "load").in("i0", ln(1, "i0")).p("field", "b"),
                                         });
  int id = 10;
  for (size_t c = 0; c < exprs.size(); ++c) {
    loop.regions[0].nodes.push_back(
        N(id, "expr").in("a", ln(2)).in("b", ln(3)).p("expr", exprs[c]));
    loop.regions[0].nodes.push_back(N(id + 1, "cast").in("a", ln(id)).p("type", out_type));
    loop.regions[0].nodes.push_back(N(id + 2, "store")
                                        .in("i0", ln(1, "i0"))
                                        .in("i1", static_cast<int>(c))
                                        .in("value", ln(id + 1))
                                        .p("field", "out"));
    id += 3;
  }
  k.nodes.push_back(loop);
  doc.kernels.push_back(k);
  return doc;
}

// An input pin linked to `l`, or holding a literal, for nodes assembled piece by piece.
graph::Input pin(const std::string& name, Link l) { return N(0, "").in(name, l).node.inputs[0]; }
template <typename T>
graph::Input pin(const std::string& name, T literal) {
  return N(0, "").in(name, literal).node.inputs[0];
}

TextureFormat format_of(const char* name) {
  TextureFormat f = TextureFormat::RGBA32F;
  parse_texture_format(name, &f);
  return f;
}

template <typename T>
void fill(Program& p, const std::string& name, const std::vector<T>& values) {
  ArrayView v = p.array(name);
  ASSERT_EQ(v.bytes, values.size() * sizeof(T)) << name;
  std::memcpy(v.data, values.data(), v.bytes);
}

// Runs the formula kernel on both backends over every pair of `values`.
template <typename T>
void compare_formulas(const std::string& type, const std::string& out_type,
                      const std::vector<T>& values, const std::vector<std::string>& exprs,
                      double rtol = 0, double atol = 0) {
  std::vector<T> a, b;
  for (T x : values)
    for (T y : values) {
      a.push_back(x);
      b.push_back(y);
    }
  graph::Document doc = formulas(type, out_type, static_cast<int>(a.size()), exprs);
  Program cpu(on(Backend::Cpu)), vk(on(Backend::Vulkan));
  cpu.load(doc);
  vk.load(doc);
  for (Program* p : {&cpu, &vk}) {
    fill(*p, "a", a);
    fill(*p, "b", b);
    p->launch("ops");
  }
  expect_same(cpu, vk, "out", rtol, atol, exprs);
}

const std::vector<std::string> kIntFormulas = {
    "a + b",         "a - b",           "a * b",
    "a / b",         "a % b",           "min(a, b)",
    "max(a, b)",     "a < b",           "a <= b",
    "a == b",        "a != b",          "a > b",
    "abs(a)",        "sign(a)",         "-a",
    "and(a, b)",     "or(a, b)",        "xor(a, b)",
    "not(a)",        "shl(a, b)",       "shr(a, b)",
    "pow(a, b % 5)", "clamp(a, -5, 9)", "select(a < b, a * 2, b)",
    "fma(a, b, a)",  "a // b",          "a & b | ~a ^ b",
    "a << b",        "a >> b",          "a & 1 == 0"};

TEST(CrossBackend, Int32Arithmetic) {
  LOOM_REQUIRE_VULKAN_OR_SKIP();
  std::vector<int32_t> v = {0,
                            1,
                            -1,
                            2,
                            -3,
                            7,
                            -8,
                            31,
                            32,
                            33,
                            100000,
                            -65536,
                            std::numeric_limits<int32_t>::max(),
                            std::numeric_limits<int32_t>::min()};
  compare_formulas<int32_t>("i32", "i32", v, kIntFormulas);
}

TEST(CrossBackend, Uint32Arithmetic) {
  LOOM_REQUIRE_VULKAN_OR_SKIP();
  std::vector<uint32_t> v = {0, 1, 2, 3, 7, 31, 32, 33, 65535, 0x80000000u, 0xffffffffu};
  compare_formulas<uint32_t>("u32", "u32", v,
                             {"a + b", "a - b", "a * b", "a / b", "a % b", "min(a, b)", "max(a, b)",
                              "a < b", "a >= b", "and(a, b)", "or(a, b)", "xor(a, b)", "shl(a, b)",
                              "shr(a, b)", "pow(a, b % 3)", "sign(a)", "a // b", "~a >> b"});
}

TEST(CrossBackend, Int64Arithmetic) {
  LOOM_REQUIRE_VULKAN_OR_SKIP();
  std::vector<int64_t> v = {0,
                            1,
                            -1,
                            7,
                            -8,
                            63,
                            64,
                            65,
                            1ll << 40,
                            -(1ll << 33) - 5,
                            std::numeric_limits<int64_t>::max(),
                            std::numeric_limits<int64_t>::min()};
  compare_formulas<int64_t>("i64", "i64", v, kIntFormulas);
}

TEST(CrossBackend, NarrowIntegers) {
  LOOM_REQUIRE_VULKAN_OR_SKIP();
  std::vector<int8_t> v8 = {0, 1, -1, 7, -8, 100, 127, -128};
  compare_formulas<int8_t>(
      "i8", "i8", v8,
      {"a + b", "a * b", "a / b", "a % b", "shr(a, b)", "min(a, b)", "a < b", "a // b",
       "a << b"});  // i8 shift counts wrap at 8 bits (docs/nodes.md, shl)
  std::vector<uint16_t> v16 = {0, 1, 2, 255, 256, 40000, 65535};
  compare_formulas<uint16_t>("u16", "u16", v16,
                             {"a + b", "a - b", "a * b", "a / b", "shl(a, b)", "max(a, b)"});
}

TEST(CrossBackend, Float32Arithmetic) {
  LOOM_REQUIRE_VULKAN_OR_SKIP();
  std::vector<float> v = {0.0f, -0.0f, 0.5f,     -0.5f,   1.5f, -2.5f,
                          2.5f, 1e-3f, 3.14159f, -100.0f, 1e6f};
  // Exact operations: the same bits, or both NaN.
  compare_formulas<float>(
      "f32", "f32", v,
      {"a + b", "a - b", "a * b", "min(a, b)", "max(a, b)", "floor(a)", "ceil(a)", "round(a)",
       "abs(a)", "sign(a)", "-a", "a < b", "a == b", "clamp(a, -1, 1)", "select(a > b, a, b)"});
  // Division and its relatives may use a reciprocal under fast math: a few ulps.
  compare_formulas<float>(
      "f32", "f32", v, {"a / b", "a % b", "fract(a)", "mix(a, b, 0.25)", "fma(a, b, 1)", "a // b"},
      4e-7, 1e-6);
  // Library functions: lavapipe's against glibc's. Its atan (and atan2, asin, acos, built on
  // it) is a polynomial within 4e-6 relative; Vulkan itself promises far less (4096 ulp).
  compare_formulas<float>("f32", "f32", v,
                          {"sqrt(abs(a))", "rsqrt(abs(a) + 1)", "rsqrt(abs(a))", "sin(a)", "cos(a)",
                           "tan(a * 0.1)", "asin(a * 0.001)", "acos(a * 0.001)", "atan(a)",
                           "exp(a * 0.01)", "log(abs(a) + 1)", "atan2(a, b)"},
                          5e-6, 4e-6);
  // pow through exp2(y * log2(x)) loses bits as |y * log2(x)| grows: 1e6 ** 2.5 is off by 2e-6.
  compare_formulas<float>("f32", "f32", v, {"pow(a, b)", "pow(abs(a), 0.5)", "pow(a, 3)"}, 5e-6,
                          1e-6);
}

// fmod is exact on both, also for divisors far below the dividend and for subnormals
// (GLSL's x - y*trunc(x/y) is not); -0 keeps its sign through pow.
TEST(CrossBackend, ExactFmodAndSignedZeros) {
  LOOM_REQUIRE_VULKAN_OR_SKIP();
  std::vector<float> v = {1.0f, 3.5f, -7.25f, 1e30f, 1e-38f, 1e-44f, 1e-45f, -0.0f};
  compare_formulas<float>("f32", "f32", v, {"a % b"});
  // (pow near the ends of the range is lavapipe's exp2/log2 at their worst: not compared.)
  compare_formulas<float>("f32", "f32", {1.0f, 3.5f, -7.25f, -0.0f, 0.0f},
                          {"pow(a, 3)", "pow(a, -1)", "pow(a, 2)"}, 5e-6, 0);
  std::vector<double> d = {1.0, -7.25, 1e300, 1e-310, 5e-324};
  compare_formulas<double>("f64", "f64", d, {"a % b"});
}

TEST(CrossBackend, Float64Arithmetic) {
  LOOM_REQUIRE_VULKAN_OR_SKIP();
  std::vector<double> v = {0.0, -0.5, 1.5, -2.5, 3.141592653589793, 1e-9, -1e12};
  compare_formulas<double>("f64", "f64", v,
                           {"a + b", "a - b", "a * b", "min(a, b)", "floor(a)", "round(a)",
                            "abs(a)", "sqrt(abs(a))", "a < b"});
  compare_formulas<double>("f64", "f64", v, {"a / b", "a % b"}, 1e-15, 1e-15);
  // Vulkan's GLSL.std.450 has no f64 transcendentals: they run at f32 precision (a note says so).
  compare_formulas<double>("f64", "f64", v, {"sin(a / (1 + abs(a)))", "exp(a * 1e-13)"}, 2e-7,
                           2e-7);
  compare_formulas<double>("f64", "f64", v, {"atan2(a, b)"}, 5e-6, 4e-6);
  compare_formulas<double>("f64", "f64", v, {"pow(abs(a) + 1, 0.5)"}, 5e-6, 0);
}

TEST(CrossBackend, Casts) {
  LOOM_REQUIRE_VULKAN_OR_SKIP();
  std::vector<float> v = {0.0f, 0.75f, -0.75f, 1.5f, -2.5f, 255.0f, 300.5f, -129.0f, 65536.0f};
  compare_formulas<float>("f32", "i32", v, {"a", "a + b", "a * 1000"});
  compare_formulas<float>("f32", "u8", v, {"abs(a) * 0 + 200", "a > b"});
  std::vector<int32_t> iv = {0, 1, -1, 255, 256, -129, 65537, std::numeric_limits<int32_t>::min()};
  compare_formulas<int32_t>("i32", "u8", iv, {"a", "a + b"});
  compare_formulas<int32_t>("i32", "f32", iv, {"a", "a * 0.5", "a / 3"}, 0, 0);
  compare_formulas<int32_t>("i32", "i64", iv, {"a", "a * b"});
  compare_formulas<int32_t>("i32", "bool", iv, {"a", "and(a, 1)"});
}

// Control flow: a while with carried values and a break, ifs with yielded values, a
// continue in a range loop, an unrolled stencil, struct_for over a 2-d field.
graph::Document control_flow() {
  graph::Document doc;
  doc.fields.push_back(FieldDesc{"out", {Scalar::I32}, {64, 3}, Layout::AoS});
  doc.fields.push_back(FieldDesc{"grid", {Scalar::F32}, {16, 12}, Layout::SoA});
  doc.kernels.push_back(kernel(
      "loops", {},
      {N(1, "range_for")
           .in("end0", 64)
           .region(
               "body",
               {
                   // collatz steps of i+1, at most 200
                   N(2, "add").in("a", ln(1, "i0")).in("b", 1),
                   N(3, "while")
                       .in("x", ln(2))
                       .in("n", 0)
                       .region("body",
                               {
                                   N(4, "carried").p("name", "x"),
                                   N(5, "carried").p("name", "n"),
                                   N(6, "expr")
                                       .in("x", ln(4))
                                       .in("n", ln(5))
                                       .p("expr", "x <= 1 || n >= 200"),
                                   N(7, "break").in("cond", ln(6)),
                                   N(8, "expr")
                                       .in("x", ln(4))
                                       .p("expr", "x % 2 == 0 ? x / 2 : 3 * x + 1"),
                                   N(9, "next").in("value", ln(8)).p("name", "x"),
                                   N(10, "add").in("a", ln(5)).in("b", 1),
                                   N(11, "next").in("value", ln(10)).p("name", "n"),
                               }),
                   N(12, "store")
                       .in("i0", ln(1, "i0"))
                       .in("i1", 0)
                       .in("value", ln(3, "n"))
                       .p("field", "out"),
                   // sum of k in [0, i) skipping multiples of 3, through a variable and a continue
                   N(13, "var").in("init", 0),
                   N(14, "range_for")
                       .in("end0", ln(1, "i0"))
                       .region("body",
                               {
                                   N(15, "expr").in("k", ln(14, "i0")).p("expr", "k % 3 == 0"),
                                   N(16, "continue").in("cond", ln(15)),
                                   N(17, "get").in("var", ln(13, "ref")),
                                   N(18, "add").in("a", ln(17)).in("b", ln(14, "i0")),
                                   N(19, "set").in("var", ln(13, "ref")).in("value", ln(18)),
                               }),
                   N(20, "get").in("var", ln(13, "ref")),
                   N(21, "store")
                       .in("i0", ln(1, "i0"))
                       .in("i1", 1)
                       .in("value", ln(20))
                       .p("field", "out"),
                   // an if with values out of both branches
                   N(22, "expr").in("i", ln(1, "i0")).p("expr", "i % 4 < 2"),
                   N(23, "if")
                       .in("cond", ln(22))
                       .region("then",
                               {
                                   N(24, "mul").in("a", ln(1, "i0")).in("b", 3),
                                   N(25, "yield").in("v", ln(24)),
                               })
                       .region("else",
                               {
                                   N(26, "yield").in("v", -7),
                               }),
                   N(27, "store")
                       .in("i0", ln(1, "i0"))
                       .in("i1", 2)
                       .in("value", ln(23, "v"))
                       .p("field", "out"),
               })}));
  doc.kernels.push_back(kernel("fill_grid", {},
                               {N(1, "struct_for")
                                    .p("field", "grid")
                                    .region("body", {
                                                        N(2, "expr")
                                                            .in("i", ln(1, "i0"))
                                                            .in("j", ln(1, "i1"))
                                                            .p("expr", "sin(i * 0.3) * j"),
                                                        N(3, "store")
                                                            .in("i0", ln(1, "i0"))
                                                            .in("i1", ln(1, "i1"))
                                                            .in("value", ln(2))
                                                            .p("field", "grid"),
                                                    })}));
  // 3x3 box blur written into the same field's transpose-free copy: unrolled loops
  doc.fields.push_back(FieldDesc{"blur", {Scalar::F32}, {16, 12}, Layout::AoS});
  doc.kernels.push_back(kernel(
      "blur", {},
      {N(1, "range_for")
           .in("begin0", 1)
           .in("end0", 15)
           .in("begin1", 1)
           .in("end1", 11)
           .region("body",
                   {
                       N(2, "var").p("type", "f32").in("init", 0.0),
                       N(3, "unroll")
                           .p("count", 3)
                           .region("body",
                                   {
                                       N(4, "unroll")
                                           .p("count", 3)
                                           .region("body",
                                                   {
                                                       N(5, "expr")
                                                           .in("i", ln(1, "i0"))
                                                           .in("d", ln(3, "i"))
                                                           .p("expr", "i + d - 1"),
                                                       N(6, "expr")
                                                           .in("j", ln(1, "i1"))
                                                           .in("d", ln(4, "i"))
                                                           .p("expr", "j + d - 1"),
                                                       N(7, "load")
                                                           .in("i0", ln(5))
                                                           .in("i1", ln(6))
                                                           .p("field", "grid"),
                                                       N(8, "get").in("var", ln(2, "ref")),
                                                       N(9, "add").in("a", ln(8)).in("b", ln(7)),
                                                       N(10, "set")
                                                           .in("var", ln(2, "ref"))
                                                           .in("value", ln(9)),
                                                   }),
                                   }),
                       N(11, "get").in("var", ln(2, "ref")),
                       N(12, "div").in("a", ln(11)).in("b", 9.0),
                       N(13, "store")
                           .in("i0", ln(1, "i0"))
                           .in("i1", ln(1, "i1"))
                           .in("value", ln(12))
                           .p("field", "blur"),
                   })}));
  return doc;
}

TEST(CrossBackend, ControlFlow) {
  LOOM_REQUIRE_VULKAN_OR_SKIP();
  graph::Document doc = control_flow();
  Program cpu(on(Backend::Cpu)), vk(on(Backend::Vulkan));
  for (Program* p : {&cpu, &vk}) {
    p->load(doc);
    p->launch("loops");
    p->launch("fill_grid");
    p->launch("blur");
  }
  expect_same(cpu, vk, "out");
  expect_same(cpu, vk, "grid", 2e-6, 2e-6);
  expect_same(cpu, vk, "blur", 2e-6, 2e-6);
  // A spot check against plain C++: collatz steps of 27 are 111.
  EXPECT_EQ(component(vk.array("out"), 26 * 3), 111);
}

// Atomics from many invocations onto few elements; the final values do not depend on order
// (except float sums: rounding).
TEST(CrossBackend, AtomicsAgree) {
  LOOM_REQUIRE_VULKAN_OR_SKIP();
  graph::Document doc;
  doc.fields.push_back(FieldDesc{"i", {Scalar::I32}, {7, 7}, Layout::AoS});
  doc.fields.push_back(FieldDesc{"u", {Scalar::U32}, {7, 4}, Layout::AoS});
  doc.fields.push_back(FieldDesc{"f", {Scalar::F32}, {7, 4}, Layout::AoS});
  doc.fields.push_back(FieldDesc{"l", {Scalar::I64}, {7}, Layout::AoS});
  doc.fields.push_back(FieldDesc{"olds", {Scalar::I32}, {1}, Layout::AoS});
  const char* int_ops[] = {"atomic_add", "atomic_sub", "atomic_min", "atomic_max",
                           "atomic_and", "atomic_or",  "atomic_xor"};
  graph::Node loop =
      N(1, "range_for")
          .in("end0", 5000)
          .region("body",
                  {
                      N(2, "expr").in("i", ln(1, "i0")).p("expr", "i % 7"),
                      N(3, "expr")
                          .in("i", ln(1, "i0"))
                          .p("expr", "(i * -1640531535) % 1000 - 300"),  // 2654435761 as an i32
                      N(4, "cast").in("a", ln(3)).p("type", "u32"),
                      N(5, "expr").in("x", ln(3)).p("expr", "x * 0.25"),
                      N(6, "cast").in("a", ln(3)).p("type", "i64"),
                  });
  int id = 10;
  for (int c = 0; c < 7; ++c)
    loop.regions[0].nodes.push_back(
        N(id++, int_ops[c]).in("i0", ln(2)).in("i1", c).in("value", ln(3)).p("field", "i"));
  const char* u_ops[] = {"atomic_add", "atomic_max", "atomic_or", "atomic_min"};
  for (int c = 0; c < 4; ++c)
    loop.regions[0].nodes.push_back(
        N(id++, u_ops[c]).in("i0", ln(2)).in("i1", c).in("value", ln(4)).p("field", "u"));
  const char* f_ops[] = {"atomic_add", "atomic_sub", "atomic_min", "atomic_max"};
  for (int c = 0; c < 4; ++c)
    loop.regions[0].nodes.push_back(
        N(id++, f_ops[c]).in("i0", ln(2)).in("i1", c).in("value", ln(5)).p("field", "f"));
  loop.regions[0].nodes.push_back(
      N(id++, "atomic_add").in("i0", ln(2)).in("value", ln(6)).p("field", "l"));
  // The old values returned by atomic_add, summed: the same total in any order.
  loop.regions[0].nodes.push_back(
      N(id, "atomic_add").in("i0", 0).in("value", 1).p("field", "olds"));
  loop.regions[0].nodes.push_back(
      N(id + 1, "atomic_add").in("i0", 0).in("i1", 0).in("value", 0).p("field", "i"));
  graph::KernelDecl k = kernel("hammer", {}, {});
  k.nodes.push_back(loop);
  doc.kernels.push_back(k);
  Program cpu(on(Backend::Cpu)), vk(on(Backend::Vulkan));
  for (Program* p : {&cpu, &vk}) {
    p->load(doc);
    p->launch("hammer");
  }
  expect_same(cpu, vk, "i");
  expect_same(cpu, vk, "u");
  expect_same(cpu, vk, "f", 1e-6, 1e-3);
  expect_same(cpu, vk, "l");
  EXPECT_EQ(component(vk.array("olds"), 0), 5000);
}

TEST(CrossBackend, RandomNumbersAreTheSameStream) {
  LOOM_REQUIRE_VULKAN_OR_SKIP();
  graph::Document doc;
  doc.fields.push_back(FieldDesc{"rf", {Scalar::F32}, {300}, Layout::AoS});
  doc.fields.push_back(FieldDesc{"rd", {Scalar::F64}, {300}, Layout::AoS});
  doc.fields.push_back(FieldDesc{"ri", {Scalar::U32}, {300, 2}, Layout::AoS});
  doc.kernels.push_back(kernel(
      "draw", {},
      {N(1, "range_for")
           .in("end0", 300)
           .region("body",
                   {
                       N(2, "random").p("type", "f32"),
                       N(3, "store").in("i0", ln(1, "i0")).in("value", ln(2)).p("field", "rf"),
                       N(4, "random").p("type", "f64"),
                       N(5, "store").in("i0", ln(1, "i0")).in("value", ln(4)).p("field", "rd"),
                       N(6, "random").p("type", "u32"),
                       N(7, "store")
                           .in("i0", ln(1, "i0"))
                           .in("i1", 0)
                           .in("value", ln(6))
                           .p("field", "ri"),
                       N(8, "random").p("type", "u32"),
                       N(9, "store")
                           .in("i0", ln(1, "i0"))
                           .in("i1", 1)
                           .in("value", ln(8))
                           .p("field", "ri"),
                   })}));
  Program cpu(on(Backend::Cpu)), vk(on(Backend::Vulkan));
  for (Program* p : {&cpu, &vk}) {
    p->load(doc);
    p->launch("draw");
    p->launch("draw");  // a second launch draws a fresh stream on both
  }
  expect_same(cpu, vk, "rf");
  expect_same(cpu, vk, "rd");
  expect_same(cpu, vk, "ri");
}

TEST(CrossBackend, ReturnValuesOfEveryWidth) {
  LOOM_REQUIRE_VULKAN_OR_SKIP();
  graph::Document doc;
  graph::KernelDecl k = kernel("many", {value_param("x", "i32")},
                               {
                                   N(1, "param").p("name", "x"),
                                   N(2, "expr").in("x", ln(1)).p("expr", "x > 3"),
                                   N(3, "cast").in("a", ln(1)).p("type", "i8"),
                                   N(4, "expr").in("x", ln(1)).p("expr", "x * 1000"),
                                   N(5, "cast").in("a", ln(4)).p("type", "u16"),
                                   N(6, "cast").in("a", ln(1)).p("type", "i64"),
                                   N(7, "expr").in("x", ln(6)).p("expr", "x * 4000000000"),
                                   N(8, "expr").in("x", ln(1)).p("expr", "x / 3.0"),
                                   N(9, "cast").in("a", ln(8)).p("type", "f64"),
                                   N(10, "expr").in("x", ln(8)).p("expr", "vec3(x, -x, x * x)"),
                                   N(11, "return")
                                       .in("r0", ln(2))
                                       .in("r1", ln(3))
                                       .in("r2", ln(5))
                                       .in("r3", ln(7))
                                       .in("r4", ln(9))
                                       .in("r5", ln(10)),
                               });
  k.returns = {"bool", "i8", "u16", "i64", "f64", "f32x3"};
  doc.kernels.push_back(k);
  Program cpu(on(Backend::Cpu)), vk(on(Backend::Vulkan));
  cpu.load(doc);
  vk.load(doc);
  for (int x : {-200, 5, 70}) {
    KernelResult a = cpu.launch("many", {{"x", x}}), b = vk.launch("many", {{"x", x}});
    ASSERT_EQ(a.ints.size(), 8u);
    EXPECT_EQ(a.ints, b.ints) << "x = " << x;
    for (size_t c = 0; c < a.values.size(); ++c)
      EXPECT_NEAR(a.values[c], b.values[c], 1e-6 * std::fabs(a.values[c])) << c;
  }
}

TEST(CrossBackend, TexturesLoadSampleStore) {
  LOOM_REQUIRE_VULKAN_OR_SKIP();
  for (const char* format : {"rgba32f", "rgba8", "r32f", "rg32f"}) {
    for (int dims : {2, 3}) {
      SCOPED_TRACE(std::string(format) + " " + std::to_string(dims) + "-d");
      graph::Document doc;
      graph::TextureDecl src, dst;
      src.name = "src";
      src.format = format_of(format);
      src.size = dims == 3 ? std::vector<int64_t>{9, 7, 5} : std::vector<int64_t>{9, 7};
      dst = src;
      dst.name = "dst";
      dst.format = TextureFormat::RGBA32F;
      doc.textures = {src, dst};
      std::string tex_type = format;
      graph::KernelParam ps{"s", graph::ParamKind::Texture, tex_type, dims};
      graph::KernelParam pd{"d", graph::ParamKind::Texture, "rgba32f", dims};
      graph::Node loop = N(1, "range_for").in("end0", 9).in("end1", 7).region("body", {});
      if (dims == 3) loop.inputs.push_back(pin("end2", 5));
      auto& body = loop.regions[0].nodes;
      body.push_back(N(2, "param").p("name", "s"));
      body.push_back(N(3, "param").p("name", "d"));
      std::string z = dims == 3 ? ", i2" : "";
      // write a pattern, then read it back through every sampler mode
      graph::Node pattern = N(4, "expr")
                                .in("i0", ln(1, "i0"))
                                .in("i1", ln(1, "i1"))
                                .p("expr", "vec4(i0 * 0.11, i1 * 0.13, 0.5, 0.75)");
      if (dims == 3)
        pattern = N(4, "expr")
                      .in("i0", ln(1, "i0"))
                      .in("i1", ln(1, "i1"))
                      .in("i2", ln(1, "i2"))
                      .p("expr", "vec4(i0 * 0.11, i1 * 0.13, i2 * 0.2, 0.75)");
      body.push_back(pattern);
      graph::Node store = N(5, "tex_store")
                              .in("texture", ln(2))
                              .in("x", ln(1, "i0"))
                              .in("y", ln(1, "i1"))
                              .in("value", ln(4));
      if (dims == 3) store.inputs.push_back(pin("z", ln(1, "i2")));
      body.push_back(store);
      graph::KernelDecl write = kernel("write", {ps, pd}, {});
      write.nodes.push_back(loop);
      doc.kernels.push_back(write);

      graph::Node rloop = N(1, "range_for").in("end0", 9).in("end1", 7).region("body", {});
      if (dims == 3) rloop.inputs.push_back(pin("end2", 5));
      auto& rb = rloop.regions[0].nodes;
      rb.push_back(N(2, "param").p("name", "s"));
      rb.push_back(N(3, "param").p("name", "d"));
      // odd coordinates: between texels and outside [0, 1]
      rb.push_back(N(4, "expr").in("i", ln(1, "i0")).p("expr", "(i - 1.3) / 6.0"));
      rb.push_back(N(5, "expr").in("j", ln(1, "i1")).p("expr", "(j + 0.4) / 5.0"));
      rb.push_back(
          N(6, "expr").in("k", dims == 3 ? ln(1, "i2") : ln(1, "i1")).p("expr", "k * 0.3 - 0.2"));
      int id = 10;
      graph::Node sum = N(99, "expr").p("expr", "s0 + s1 + s2 + s3 + l");
      const char* filters[] = {"nearest", "linear"};
      const char* wraps[] = {"clamp", "repeat"};
      int s = 0;
      for (const char* f : filters)
        for (const char* w : wraps) {
          graph::Node sample = N(id, "tex_sample")
                                   .in("texture", ln(2))
                                   .in("u", ln(4))
                                   .in("v", ln(5))
                                   .p("filter", f)
                                   .p("wrap", w);
          if (dims == 3) sample.inputs.push_back(pin("w", ln(6)));
          rb.push_back(sample);
          sum.inputs.push_back(pin("s" + std::to_string(s++), ln(id)));
          ++id;
        }
      graph::Node load =
          N(id, "tex_load").in("texture", ln(2)).in("x", ln(1, "i1")).in("y", ln(1, "i0"));
      if (dims == 3) load.inputs.push_back(pin("z", ln(1, "i2")));
      rb.push_back(load);
      sum.inputs.push_back(pin("l", ln(id)));
      rb.push_back(sum);
      graph::Node out = N(100, "tex_store")
                            .in("texture", ln(3))
                            .in("x", ln(1, "i0"))
                            .in("y", ln(1, "i1"))
                            .in("value", ln(99));
      if (dims == 3) out.inputs.push_back(pin("z", ln(1, "i2")));
      rb.push_back(out);
      graph::KernelDecl read = kernel("read", {ps, pd}, {});
      read.nodes.push_back(rloop);
      doc.kernels.push_back(read);

      Program cpu(on(Backend::Cpu)), vk(on(Backend::Vulkan));
      for (Program* p : {&cpu, &vk}) {
        p->load(doc);
        p->launch("write", {{"s", "src"}, {"d", "dst"}});
        p->launch("read", {{"s", "src"}, {"d", "dst"}});
      }
      for (const char* t : {"src", "dst"}) {
        TextureView a = cpu.texture(t), b = vk.texture(t);
        ASSERT_EQ(a.bytes, b.bytes);
        size_t n = a.format == TextureFormat::RGBA8 ? a.bytes : a.bytes / 4;
        for (size_t i = 0; i < n; ++i) {
          double x = a.format == TextureFormat::RGBA8 ? a.data[i]
                                                      : reinterpret_cast<const float*>(a.data)[i];
          double y = b.format == TextureFormat::RGBA8 ? b.data[i]
                                                      : reinterpret_cast<const float*>(b.data)[i];
          // Stores and texel loads are exact. Linear sampling: lavapipe filters float texels in
          // f32 like the CPU (1e-5), but rgba8 texels with 8-bit weights (subTexelPrecisionBits
          // = 8, as most GPUs): each of the 4 linear samples summed into dst may be off by up to
          // 1/256 of its texel step (4e-3 in all). rgba8 bytes of src must match exactly.
          double tol = std::string(t) == "src" ? (a.format == TextureFormat::RGBA8 ? 0.0 : 1e-6)
                                               : (std::string(format) == "rgba8" ? 4e-3 : 1e-5);
          ASSERT_NEAR(x, y, tol) << t << "[" << i << "]";
        }
      }
    }
  }
}

TEST(CrossBackend, DebugBoundsChecksReportTheSamePlace) {
  LOOM_REQUIRE_VULKAN_OR_SKIP();
  graph::Document doc;
  doc.ndarrays.push_back(graph::NdarrayDecl{"arr", {Scalar::F32}, {10, 4}});
  doc.kernels.push_back(
      kernel("oob", {ndarray_param("a", "f32", 2)},
             {N(1, "range_for")
                  .in("end0", 10)
                  .region("body", {
                                      N(2, "expr").in("i", ln(1, "i0")).p("expr", "i == 7 ? 5 : 1"),
                                      N(3, "store")
                                          .in("i0", ln(1, "i0"))
                                          .in("i1", ln(2))
                                          .in("value", 1.0)
                                          .p("ndarray", "a"),
                                  })}));
  std::string messages[2];
  int i = 0;
  for (Backend b : {Backend::Cpu, Backend::Vulkan}) {
    ProgramOptions o = on(b);
    o.debug = true;
    Program p(o);
    p.load(doc);
    try {
      p.launch("oob", {{"a", "arr"}});
    } catch (const Error& e) {
      messages[i] = e.what();
    }
    ++i;
  }
  EXPECT_NE(messages[0].find("dim 1, index 5 not in [0, 4)"), std::string::npos) << messages[0];
  EXPECT_EQ(messages[0], messages[1]);
}

// 0-d fields (Taichi's shape=()): one value that serial code and parallel loops read, write
// and accumulate into with atomics, and that kernels return.
TEST(CrossBackend, ZeroDimensionalFields) {
  LOOM_REQUIRE_VULKAN_OR_SKIP();
  graph::Document doc;
  doc.fields.push_back(FieldDesc{"time", {Scalar::F32}, {}, Layout::AoS});
  doc.fields.push_back(FieldDesc{"total", {Scalar::I64}, {}, Layout::AoS});
  doc.fields.push_back(FieldDesc{"count", {Scalar::I32}, {}, Layout::AoS});
  doc.fields.push_back(FieldDesc{"top", {Scalar::I32}, {}, Layout::AoS});
  doc.fields.push_back(FieldDesc{"loss", {Scalar::F32}, {}, Layout::AoS});
  doc.fields.push_back(FieldDesc{"wind", *parse_value_type("f32x3"), {}, Layout::SoA});
  doc.fields.push_back(FieldDesc{"seen", {Scalar::F32}, {300}, Layout::AoS});
  // Serial code first (time += 0.25, wind set), then a parallel loop reading both and
  // accumulating into the 0-d counters.
  graph::KernelDecl k = kernel(
      "step", {},
      {
          N(1, "load").p("field", "time"),
          N(2, "expr").in("t", ln(1)).p("expr", "t + 0.25"),
          N(3, "store").in("value", ln(2)).p("field", "time"),
          N(4, "expr").in("t", ln(2)).p("expr", "vec3(t, 2.0 * t, -1.0)"),
          N(5, "store").in("value", ln(4)).p("field", "wind"),
          N(6, "range_for")
              .in("end0", 300)
              .region(
                  "body",
                  {
                      N(7, "load").p("field", "time"),
                      N(8, "load").p("field", "wind"),
                      N(9, "expr")
                          .in("i", ln(6, "i0"))
                          .in("t", ln(7))
                          .in("w", ln(8))
                          .p("expr", "t * i + w.y"),
                      N(10, "store").in("i0", ln(6, "i0")).in("value", ln(9)).p("field", "seen"),
                      N(11, "cast").in("a", ln(6, "i0")).p("type", "i64"),
                      N(12, "atomic_add").in("value", ln(11)).p("field", "total"),
                      N(13, "atomic_add").in("value", 1).p("field", "count"),
                      N(14, "expr").in("i", ln(6, "i0")).p("expr", "(i * 37) % 300"),
                      N(15, "atomic_max").in("value", ln(14)).p("field", "top"),
                      N(16, "expr").in("i", ln(6, "i0")).p("expr", "i * 0.5"),
                      N(17, "atomic_add").in("value", ln(16)).p("field", "loss"),
                  }),
          N(18, "load").p("field", "count"),
          N(19, "return").in("r0", ln(18)),
      });
  k.returns = {"i32"};
  doc.kernels.push_back(k);
  Program cpu(on(Backend::Cpu)), vk(on(Backend::Vulkan));
  for (Program* p : {&cpu, &vk}) {
    p->load(doc);
    EXPECT_EQ(p->array("time").shape, std::vector<int64_t>{});
    EXPECT_EQ(p->array("time").elements(), 1u);
    p->launch("step");
    // The second launch sees the first one's values: count returns 600 after it.
    EXPECT_EQ(p->launch("step").ints.at(0), 600);
  }
  for (Program* p : {&cpu, &vk}) {
    EXPECT_EQ(component(p->array("time"), 0), 0.5);
    EXPECT_EQ(component(p->array("total"), 0), 2 * (299 * 300 / 2));
    EXPECT_EQ(component(p->array("count"), 0), 600);
    EXPECT_EQ(component(p->array("top"), 0), 299);
    EXPECT_EQ(component(p->array("loss"), 0), 2 * 0.5 * (299 * 300 / 2));
    ArrayView w = p->array("wind");
    EXPECT_EQ(w.component(0, 0), 0.5);
    EXPECT_EQ(w.component(0, 1), 1.0);
    EXPECT_EQ(w.component(0, 2), -1.0);
  }
  expect_same(cpu, vk, "seen", 1e-6, 1e-6);
  EXPECT_EQ(component(cpu.array("seen"), 10), 0.5 * 10 + 1.0);
}

// break and continue in serial loops inside a parallel one: a loop whose bound is computed per
// element, and a 2-d range_for that a break leaves whole (on Vulkan, through a flag between its
// two loop constructs). The CPU and Vulkan agree with each other and with C++.
TEST(CrossBackend, BreakAndContinueInSerialLoops) {
  LOOM_REQUIRE_VULKAN_OR_SKIP();
  graph::Document doc;
  doc.fields.push_back(FieldDesc{"stops", {Scalar::I32}, {64, 2}, Layout::AoS});
  doc.kernels.push_back(kernel(
      "breaks", {},
      {N(1, "range_for")
           .in("end0", 64)
           .region("body",
                   {
                       N(2, "var").in("init", 0),
                       N(3, "expr").in("i", ln(1, "i0")).p("expr", "i % 17 + 3"),
                       N(4, "range_for")
                           .in("end0", ln(3))
                           .region("body",
                                   {
                                       N(5, "expr").in("j", ln(4, "i0")).p("expr", "j % 4 == 3"),
                                       N(6, "continue").in("cond", ln(5)),
                                       N(7, "get").in("var", ln(2, "ref")),
                                       N(8, "expr")
                                           .in("s", ln(7))
                                           .in("j", ln(4, "i0"))
                                           .p("expr", "s + j * j"),
                                       N(9, "set").in("var", ln(2, "ref")).in("value", ln(8)),
                                       N(10, "expr")
                                           .in("s", ln(8))
                                           .in("i", ln(1, "i0"))
                                           .p("expr", "s > 50 + i"),
                                       N(11, "break").in("cond", ln(10)),
                                   }),
                       N(12, "get").in("var", ln(2, "ref")),
                       N(13, "store")
                           .in("i0", ln(1, "i0"))
                           .in("i1", 0)
                           .in("value", ln(12))
                           .p("field", "stops"),
                       N(14, "var").in("init", 0),
                       N(15, "range_for")
                           .in("end0", 4)
                           .in("end1", 6)
                           .region("body",
                                   {
                                       N(16, "get").in("var", ln(14, "ref")),
                                       N(17, "add").in("a", ln(16)).in("b", 1),
                                       N(18, "set").in("var", ln(14, "ref")).in("value", ln(17)),
                                       N(19, "expr")
                                           .in("a", ln(15, "i0"))
                                           .in("b", ln(15, "i1"))
                                           .in("i", ln(1, "i0"))
                                           .p("expr", "a * b + a + b > i % 20"),
                                       N(20, "break").in("cond", ln(19)),
                                   }),
                       N(21, "get").in("var", ln(14, "ref")),
                       N(22, "store")
                           .in("i0", ln(1, "i0"))
                           .in("i1", 1)
                           .in("value", ln(21))
                           .p("field", "stops"),
                   })}));
  Program cpu(on(Backend::Cpu)), vk(on(Backend::Vulkan));
  for (Program* p : {&cpu, &vk}) {
    p->load(doc);
    p->launch("breaks");
  }
  expect_same(cpu, vk, "stops");
  for (int i = 0; i < 64; ++i) {
    int s = 0;
    for (int j = 0; j < i % 17 + 3; ++j) {
      if (j % 4 == 3) continue;
      s += j * j;
      if (s > 50 + i) break;
    }
    int count = 0;
    bool done = false;
    for (int a = 0; a < 4 && !done; ++a)
      for (int b = 0; b < 6; ++b) {
        ++count;
        if (a * b + a + b > i % 20) {
          done = true;
          break;
        }
      }
    EXPECT_EQ(component(vk.array("stops"), static_cast<size_t>(i) * 2), s) << i;
    EXPECT_EQ(component(vk.array("stops"), static_cast<size_t>(i) * 2 + 1), count) << i;
  }
}

}  // namespace
}  // namespace loom
