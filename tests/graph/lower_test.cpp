// Golden IR for kernels built as graph documents in C++ (no JSON reader involved).
#include <gtest/gtest.h>

#include <map>
#include <optional>

#include "compiler/graph/graph_builder.h"
#include "compiler/graph/lower.h"
#include "compiler/graph/validate.h"
#include "compiler/ir/inst.h"
#include "compiler/ir/printer.h"
#include "compiler/ir/verifier.h"
#include "runtime/common/error.h"

using namespace loom;
using namespace loom::graph;
using namespace loom::graph::build;

namespace {

std::string lower_print(const Document& doc, const std::string& name,
                        const TemplateArgs& args = {}) {
  auto k = lower_kernel(doc, name, args);
  EXPECT_EQ(ir::verify(*k), "");
  ir::walk(*k->body,
           [](ir::Inst& i) { EXPECT_GE(i.node, 0) << ir::op_name(i.op) << " has no graph node"; });
  return ir::print_kernel(*k);
}

int count_ops(ir::Kernel& k, ir::Op op) {
  int n = 0;
  ir::walk(*k.body, [&](ir::Inst& i) { n += i.op == op; });
  return n;
}

Document doc_with(KernelDecl k) {
  Document doc;
  doc.path = "<memory>";
  doc.kernels.push_back(std::move(k));
  return doc;
}

FieldDesc field(std::string name, std::string type, std::vector<int64_t> shape) {
  FieldDesc f;
  f.name = std::move(name);
  f.elem = *parse_value_type(type);
  f.shape = std::move(shape);
  return f;
}

}  // namespace

TEST(Lower, Saxpy) {
  Document doc = doc_with(kernel(
      "saxpy",
      {value_param("a", "f32"), ndarray_param("x", "f32", 1), ndarray_param("y", "f32", 1)},
      {N(1, "param").p("name", "a"), N(2, "shape").p("ndarray", "y"),
       N(3, "range_for")
           .in("end0", ln(2))
           .region("body",
                   {
                       N(4, "load").p("ndarray", "x").in("i0", ln(3, "i0")),
                       N(5, "load").p("ndarray", "y").in("i0", ln(3, "i0")),
                       N(6, "expr").p("expr", "a*x+y").in("a", ln(1)).in("x", ln(4)).in("y", ln(5)),
                       N(7, "store").p("ndarray", "y").in("i0", ln(3, "i0")).in("value", ln(6)),
                   })}));
  EXPECT_EQ(lower_print(doc, "saxpy"), R"(kernel saxpy
  param p0 a: value f32
  param p1 x: ndarray f32 ndim 1
  param p2 y: ndarray f32 ndim 1
  slot $0: ndarray f32 shape [?] from p1
  slot $1: ndarray f32 shape [?] from p2
  %0:i32 = shape $1.0
  %1:i32 = const 0
  %2:f32 = arg p0+0
  range_for %1, %0 {
    %4:i32 = loop_index %3.0
    %5:f32 = global_ptr $0.c0 %4
    %6:f32 = global_load %5
    %7:f32 = global_ptr $1.c0 %4
    %8:f32 = global_load %7
    %9:f32 = mul %2, %6
    %10:f32 = add %9, %8
    %11:f32 = global_ptr $1.c0 %4
    global_store %11, %10
  }
)");
}

TEST(Lower, Vec3NormalizeOnField) {
  Document doc = doc_with(kernel(
      "norm", {},
      {N(1, "range_for")
           .in("end0", 16)
           .region("body",
                   {
                       N(2, "load").p("field", "pos").in("i0", ln(1, "i0")),
                       N(3, "normalize").in("a", ln(2)),
                       N(4, "store").p("field", "pos").in("i0", ln(1, "i0")).in("value", ln(3)),
                   })}));
  doc.fields.push_back(field("pos", "f32x3", {16}));
  EXPECT_EQ(lower_print(doc, "norm"), R"(kernel norm
  slot $0: field f32x3 shape [16] field pos
  %0:i32 = const 0
  %1:i32 = const 16
  range_for %0, %1 {
    %3:i32 = loop_index %2.0
    %4:f32 = global_ptr $0.c0 %3
    %5:f32 = global_load %4
    %6:f32 = global_ptr $0.c1 %3
    %7:f32 = global_load %6
    %8:f32 = global_ptr $0.c2 %3
    %9:f32 = global_load %8
    %10:f32 = mul %5, %5
    %11:f32 = mul %7, %7
    %12:f32 = add %10, %11
    %13:f32 = mul %9, %9
    %14:f32 = add %12, %13
    %15:f32 = sqrt %14
    %16:f32 = div %5, %15
    %17:f32 = div %7, %15
    %18:f32 = div %9, %15
    %19:f32 = global_ptr $0.c0 %3
    global_store %19, %16
    %21:f32 = global_ptr $0.c1 %3
    global_store %21, %17
    %23:f32 = global_ptr $0.c2 %3
    global_store %23, %18
  }
)");
}

TEST(Lower, MatrixInverseOfConstants) {
  KernelDecl k = kernel(
      "inv", {},
      {N(1, "const")
           .p("type", "f32x2x2")
           .p("value", list({list({lit(2.0), lit(1.0)}), list({lit(1.0), lit(1.0)})})),
       N(2, "inverse").in("a", ln(1)), N(3, "matmul").in("a", ln(1)).in("b", ln(2)),
       N(4, "determinant").in("a", ln(1)), N(5, "split").in("v", ln(3)),
       N(6, "split").in("v", ln(5, "c0")), N(7, "return").in("r0", ln(4)).in("r1", ln(6, "x"))});
  k.returns = {"f32", "f32"};
  EXPECT_EQ(lower_print(doc_with(k), "inv"), R"(kernel inv
  returns f32
  returns f32
  %0:f32 = const 2.0
  %1:f32 = const 1.0
  %2:f32 = const 1.0
  %3:f32 = const 1.0
  %4:f32 = mul %2, %1
  %5:f32 = mul %0, %3
  %6:f32 = sub %5, %4
  %7:f32 = mul %2, %1
  %8:f32 = mul %0, %3
  %9:f32 = sub %8, %7
  %10:f32 = const 1.0
  %11:f32 = div %10, %9
  %12:f32 = mul %3, %11
  %13:f32 = neg %2
  %14:f32 = mul %13, %11
  %15:f32 = neg %1
  %16:f32 = mul %15, %11
  %17:f32 = mul %0, %11
  %18:f32 = mul %0, %12
  %19:f32 = mul %2, %16
  %20:f32 = add %18, %19
  %21:f32 = mul %1, %12
  %22:f32 = mul %3, %16
  %23:f32 = add %21, %22
  %24:f32 = mul %0, %14
  %25:f32 = mul %2, %17
  %26:f32 = add %24, %25
  %27:f32 = mul %1, %14
  %28:f32 = mul %3, %17
  %29:f32 = add %27, %28
  return %6, %20
)");
}

TEST(Lower, IfElseWithOutputs) {
  KernelDecl k = kernel(
      "pick", {value_param("x", "f32")},
      {N(1, "param").p("name", "x"), N(2, "gt").in("a", ln(1)).in("b", 0),
       N(3, "if")
           .in("cond", ln(2))
           .region("then", {N(4, "mul").in("a", ln(1)).in("b", 2), N(5, "yield").in("v", ln(4))})
           .region("else", {N(6, "yield").in("v", 0)}),
       N(7, "return").in("r0", ln(3, "v"))});
  k.returns = {"f32"};
  EXPECT_EQ(lower_print(doc_with(k), "pick"), R"(kernel pick
  param p0 x: value f32
  returns f32
  %0:f32 = arg p0+0
  %1:f32 = const 0.0
  %2:bool = gt %0, %1
  %3:f32 = alloca
  if %2 {
    %5:f32 = const 2.0
    %6:f32 = mul %0, %5
    local_store %3, %6
  } else {
    %8:f32 = const 0.0
    local_store %3, %8
  }
  %10:f32 = local_load %3
  return %10
)");
}

TEST(Lower, WhileWithBreakAndCarriedValues) {
  KernelDecl k = kernel("pow2", {value_param("n", "i32")},
                        {N(1, "while")
                             .in("i", 0)
                             .in("acc", 1.0)
                             .region("body",
                                     {
                                         N(2, "carried").p("name", "i"),
                                         N(3, "carried").p("name", "acc"),
                                         N(4, "param").p("name", "n"),
                                         N(5, "ge").in("a", ln(2)).in("b", ln(4)),
                                         N(6, "break").in("cond", ln(5)),
                                         N(7, "add").in("a", ln(2)).in("b", 1),
                                         N(8, "next").p("name", "i").in("value", ln(7)),
                                         N(9, "mul").in("a", ln(3)).in("b", 2),
                                         N(10, "next").p("name", "acc").in("value", ln(9)),
                                     }),
                         N(11, "return").in("r0", ln(1, "acc"))});
  k.returns = {"f32"};
  EXPECT_EQ(lower_print(doc_with(k), "pow2"), R"(kernel pow2
  param p0 n: value i32
  returns f32
  %0:i32 = const 0
  %1:i32 = alloca
  local_store %1, %0
  %3:f32 = const 1.0
  %4:f32 = alloca
  local_store %4, %3
  while {
    %7:i32 = local_load %1
    %8:f32 = local_load %4
    %9:i32 = arg p0+0
    %10:bool = ge %7, %9
    if %10 {
      break
    } else {
    }
    %13:i32 = const 1
    %14:i32 = add %7, %13
    local_store %1, %14
    %16:f32 = const 2.0
    %17:f32 = mul %8, %16
    local_store %4, %17
  }
  %19:i32 = local_load %1
  %20:f32 = local_load %4
  return %20
)");
}

namespace {

// Evaluates straight-line constant code (const, arithmetic, return) to check numbers.
std::vector<double> evaluate_returns(ir::Kernel& k) {
  std::map<const ir::Inst*, double> v;
  std::vector<double> out;
  for (auto& up : k.body->insts) {
    ir::Inst& i = *up;
    auto a = [&](size_t n) { return v.at(i.operand(n)); };
    switch (i.op) {
      case ir::Op::Const:
        v[&i] = is_float(i.type) ? i.float_value() : static_cast<double>(i.int_value());
        break;
      case ir::Op::Add: v[&i] = a(0) + a(1); break;
      case ir::Op::Sub: v[&i] = a(0) - a(1); break;
      case ir::Op::Mul: v[&i] = a(0) * a(1); break;
      case ir::Op::Div: v[&i] = a(0) / a(1); break;
      case ir::Op::Neg: v[&i] = -a(0); break;
      case ir::Op::Return:
        for (size_t n = 0; n < i.operands.size(); ++n) out.push_back(a(n));
        break;
      default: ADD_FAILURE() << "cannot evaluate " << ir::op_name(i.op);
    }
  }
  return out;
}

}  // namespace

TEST(Lower, InverseTimesMatrixIsIdentity) {
  // 3x3 and 4x4: M * inverse(M), every component returned.
  for (int n : {3, 4}) {
    std::vector<Literal> cols;
    for (int c = 0; c < n; ++c) {
      Literal col;
      col.kind = Literal::Kind::List;
      for (int r = 0; r < n; ++r) col.list.push_back(lit(r == c ? 4.0 + r : 1.0 / (1 + r + 2 * c)));
      cols.push_back(col);
    }
    Literal m;
    m.kind = Literal::Kind::List;
    m.list = cols;
    std::string type = "f32x" + std::to_string(n) + "x" + std::to_string(n);
    KernelDecl k =
        kernel("check", {},
               {N(1, "const").p("type", type).p("value", m), N(2, "inverse").in("a", ln(1)),
                N(3, "matmul").in("a", ln(1)).in("b", ln(2)), N(4, "split").in("v", ln(3))});
    N ret(5, "return");
    for (int c = 0; c < n; ++c) {
      int id = 10 + c;
      k.nodes.push_back(N(id, "split").in("v", ln(4, "c" + std::to_string(c))));
      for (int r = 0; r < n; ++r) {
        const char* xyzw[] = {"x", "y", "z", "w"};
        ret.in("r" + std::to_string(c * n + r), ln(id, xyzw[r]));
        k.returns.push_back("f32");
      }
    }
    k.nodes.push_back(ret);
    auto ker = lower_kernel(doc_with(k), "check");
    ASSERT_EQ(ir::verify(*ker), "");
    auto vals = evaluate_returns(*ker);
    ASSERT_EQ(vals.size(), static_cast<size_t>(n * n));
    for (int c = 0; c < n; ++c)
      for (int r = 0; r < n; ++r)
        EXPECT_NEAR(vals[static_cast<size_t>(c * n + r)], r == c ? 1.0 : 0.0, 1e-9);
  }
}

TEST(Lower, Unroll3x3Stencil) {
  // out[i, j] = sum over dx, dy in 0..2 of grid[i + dx - 1, j + dy - 1] / 9
  Document doc = doc_with(kernel(
      "blur", {},
      {N(1, "range_for")
           .in("begin0", 1)
           .in("end0", 7)
           .in("begin1", 1)
           .in("end1", 7)
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
                                                           .p("expr", "i + d - 1")
                                                           .in("i", ln(1, "i0"))
                                                           .in("d", ln(3, "i")),
                                                       N(6, "expr")
                                                           .p("expr", "j + d - 1")
                                                           .in("j", ln(1, "i1"))
                                                           .in("d", ln(4, "i")),
                                                       N(7, "load")
                                                           .p("field", "grid")
                                                           .in("i0", ln(5))
                                                           .in("i1", ln(6)),
                                                       N(8, "get").in("var", ln(2, "ref")),
                                                       N(9, "add").in("a", ln(8)).in("b", ln(7)),
                                                       N(10, "set")
                                                           .in("var", ln(2, "ref"))
                                                           .in("value", ln(9)),
                                                   }),
                                   }),
                       N(11, "get").in("var", ln(2, "ref")),
                       N(12, "div").in("a", ln(11)).in("b", 9),
                       N(13, "store")
                           .p("field", "out")
                           .in("i0", ln(1, "i0"))
                           .in("i1", ln(1, "i1"))
                           .in("value", ln(12)),
                   })}));
  doc.fields.push_back(field("grid", "f32", {8, 8}));
  doc.fields.push_back(field("out", "f32", {8, 8}));
  auto k = lower_kernel(doc, "blur");
  ASSERT_EQ(ir::verify(*k), "");
  EXPECT_EQ(count_ops(*k, ir::Op::GlobalLoad), 9);
  EXPECT_EQ(count_ops(*k, ir::Op::LocalStore), 10);
  EXPECT_EQ(count_ops(*k, ir::Op::RangeFor), 1);
  // the iteration numbers are constants: the last stencil tap adds 2 - 1 to both indices
  std::string text = ir::print_kernel(*k);
  EXPECT_NE(text.find("slot $0: field f32 shape [8, 8] field grid"), std::string::npos) << text;
  EXPECT_NE(text.find("const 2\n"), std::string::npos) << text;
}

TEST(Lower, CallInlinesFunction) {
  Document doc;
  doc.path = "<memory>";
  FunctionDecl f;
  f.name = "lerp";
  f.inputs = {{"a", "f32"}, {"b", "f32"}, {"t", "f32"}};
  f.outputs = {{"r", "f32"}};
  f.nodes = {N(1, "input").p("name", "a"), N(2, "input").p("name", "b"),
             N(3, "input").p("name", "t"), N(4, "mix").in("a", ln(1)).in("b", ln(2)).in("t", ln(3)),
             N(5, "output").in("r", ln(4))};
  doc.functions.push_back(f);
  KernelDecl k = kernel("main", {value_param("x", "f32")},
                        {N(1, "param").p("name", "x"),
                         N(2, "call").p("function", "lerp").in("a", 1).in("b", 3.0).in("t", ln(1)),
                         N(3, "return").in("r0", ln(2, "r"))});
  k.returns = {"f32"};
  doc.kernels.push_back(k);
  EXPECT_EQ(lower_print(doc, "main"), R"(kernel main
  param p0 x: value f32
  returns f32
  %0:f32 = arg p0+0
  %1:f32 = const 1.0
  %2:f32 = const 3.0
  %3:f32 = sub %2, %1
  %4:f32 = mul %3, %0
  %5:f32 = add %1, %4
  return %5
)");
}

TEST(Lower, ExprFormula) {
  KernelDecl k = kernel("f", {value_param("a", "f32"), value_param("b", "i32")},
                        {N(1, "param").p("name", "a"), N(2, "param").p("name", "b"),
                         N(3, "expr")
                             .p("expr", "b > 2 && a != 0 ? -a ** 2 : max(a, b) % 3")
                             .in("a", ln(1))
                             .in("b", ln(2)),
                         N(4, "return").in("r0", ln(3))});
  k.returns = {"f32"};
  EXPECT_EQ(lower_print(doc_with(k), "f"), R"(kernel f
  param p0 a: value f32
  param p1 b: value i32
  returns f32
  %0:f32 = arg p0+0
  %1:i32 = arg p1+0
  %2:i32 = const 2
  %3:bool = gt %1, %2
  %4:f32 = const 0.0
  %5:bool = ne %0, %4
  %6:bool = and %3, %5
  %7:f32 = const 2.0
  %8:f32 = pow %0, %7
  %9:f32 = neg %8
  %10:f32 = cast %1
  %11:f32 = max %0, %10
  %12:f32 = const 3.0
  %13:f32 = mod %11, %12
  %14:f32 = select %6, %9, %13
  return %14
)");
}

TEST(Lower, ArgpackMembers) {
  Document doc;
  doc.path = "<memory>";
  ArgpackType s{"S",
                false,
                {{"a", MemberKind::Value, {Scalar::F32}, 0, -1, 0},
                 {"b", MemberKind::Value, {Scalar::I32}, 0, -1, 0}},
                0,
                16};
  ArgpackType inner{
      "Inner", true, {{"v", MemberKind::Value, {Scalar::F32, 3, 1}, 0, -1, 0}}, 0, 16};
  ArgpackType outer{"P",
                    true,
                    {{"scale", MemberKind::Value, {Scalar::F32}, 0, -1, 0},
                     {"s", MemberKind::Struct, {}, 0, 0, 0},
                     {"inner", MemberKind::Pack, {}, 0, 1, 0},
                     {"arr", MemberKind::Ndarray, {Scalar::F32}, 1, -1, 0},
                     {"flag", MemberKind::Value, {Scalar::Bool}, 0, -1, 0}},
                    0,
                    16};
  doc.argpack_types = {s, inner, outer};
  KernelDecl k = kernel(
      "k", {{"p", graph::ParamKind::Argpack, "P", 0}},
      {N(1, "member").p("param", "p").p("path", "scale"),
       N(2, "member").p("param", "p").p("path", "s.b"),
       N(3, "member").p("param", "p").p("path", "inner.v"),
       N(4, "member").p("param", "p").p("path", "arr"),
       N(5, "member").p("param", "p").p("path", "flag"),
       N(6, "load").in("array", ln(4)).in("i0", ln(2)), N(7, "dot").in("a", ln(3)).in("b", ln(3)),
       N(8, "expr")
           .p("expr", "f ? x * s + d : 0.0")
           .in("f", ln(5))
           .in("x", ln(6))
           .in("s", ln(1))
           .in("d", ln(7)),
       N(9, "store").p("ndarray", "p.arr").in("i0", 0).in("value", ln(8))});
  doc.kernels.push_back(k);
  EXPECT_EQ(lower_print(doc, "k"), R"(kernel k
  param p0 p: argpack type 2
  slot $0: ndarray f32 shape [?] from p0+48
  %0:i32 = arg p0+20
  %1:f32 = global_ptr $0.c0 %0
  %2:f32 = global_load %1
  %3:i32 = arg p0+80
  %4:i32 = const 0
  %5:bool = ne %3, %4
  %6:f32 = arg p0+0
  %7:f32 = arg p0+32
  %8:f32 = arg p0+36
  %9:f32 = arg p0+40
  %10:f32 = mul %7, %7
  %11:f32 = mul %8, %8
  %12:f32 = add %10, %11
  %13:f32 = mul %9, %9
  %14:f32 = add %12, %13
  %15:f32 = mul %2, %6
  %16:f32 = add %15, %14
  %17:f32 = const 0.0
  %18:f32 = select %5, %16, %17
  %19:i32 = const 0
  %20:f32 = global_ptr $0.c0 %19
  global_store %20, %18
)");
}

TEST(Lower, TemplateFieldAndConstant) {
  Document doc;
  doc.path = "<memory>";
  doc.fields.push_back(field("a", "f32", {4}));
  doc.fields.push_back(field("b", "f32", {4}));
  KernelDecl k = kernel(
      "scale",
      {{"src", graph::ParamKind::Template, "", 0}, {"k", graph::ParamKind::Template, "", 0}},
      {N(1, "struct_for")
           .p("field", "src")
           .region("body",
                   {
                       N(2, "load").p("field", "src").in("i0", ln(1, "i0")),
                       N(3, "param").p("name", "k"),
                       N(4, "mul").in("a", ln(2)).in("b", ln(3)),
                       N(5, "store").p("field", "src").in("i0", ln(1, "i0")).in("value", ln(4)),
                   })});
  doc.kernels.push_back(k);
  TemplateArgs args;
  args.set("src", {TemplateArg::Kind::Field, "b"});
  args.set("k", {TemplateArg::Kind::Int, "", 3});
  EXPECT_EQ(args.signature(), "k=i:3,src=field:b");
  EXPECT_EQ(lower_print(doc, "scale", args), R"(kernel scale
  slot $0: field f32 shape [4] field b
  struct_for $0 dims 1 {
    %1:i32 = loop_index %0.0
    %2:f32 = global_ptr $0.c0 %1
    %3:f32 = global_load %2
    %4:f32 = const 3.0
    %5:f32 = mul %3, %4
    %6:f32 = global_ptr $0.c0 %1
    global_store %6, %5
  }
)");
  args.set("k", {TemplateArg::Kind::Int, "", 4});
  EXPECT_NE(lower_print(doc, "scale", args).find("const 4.0"), std::string::npos);
}

TEST(Lower, AtomicsTexturesRandomAndVectors) {
  Document doc;
  doc.path = "<memory>";
  doc.fields.push_back(field("count", "i32", {1}));
  doc.fields.push_back(field("vel", "f32x2", {8}));
  KernelDecl k = kernel(
      "misc", {{"img", graph::ParamKind::Texture, "", 2}},
      {N(1, "range_for")
           .in("end0", 8)
           .region(
               "body",
               {
                   N(2, "atomic_add").p("field", "count").in("i0", 0).in("value", 1),
                   N(3, "random").p("type", "f32x2"),
                   N(4, "vec2").in("x", ln(2)).in("y", 0.5),
                   N(5, "add").in("a", ln(3)).in("b", ln(4)),
                   N(6, "atomic_max").p("field", "vel").in("i0", ln(1, "i0")).in("value", ln(5)),
                   N(7, "tex_sample")
                       .p("texture", "img")
                       .p("filter", "linear")
                       .in("u", 0.5)
                       .in("v", 0.25),
                   N(8, "tex_store")
                       .p("texture", "img")
                       .in("x", ln(1, "i0"))
                       .in("y", 0)
                       .in("value", ln(7)),
               })});
  doc.kernels.push_back(k);
  auto ker = lower_kernel(doc, "misc");
  ASSERT_EQ(ir::verify(*ker), "");
  EXPECT_EQ(count_ops(*ker, ir::Op::AtomicRMW), 3);
  EXPECT_EQ(count_ops(*ker, ir::Op::Rand), 2);
  EXPECT_EQ(count_ops(*ker, ir::Op::TexSample), 4);
  EXPECT_EQ(count_ops(*ker, ir::Op::TexStore), 1);
  ASSERT_EQ(ker->abi.resources.size(), 3u);
  EXPECT_EQ(ker->abi.resources[0].kind, ResourceKind::Texture);
  EXPECT_EQ(ker->abi.resources[1].field, "count");
  EXPECT_EQ(ker->abi.resources[2].components, 2);
}

TEST(Lower, EachMemoryNodeTypeLowersThroughItsOwnEntry) {
  // Every memory and texture node type has its own lowering in the node table: each emits
  // its own IR op (an atomic, its own operation) and none of its siblings' ops.
  struct Case {
    std::vector<Node> nodes;
    ir::Op op;
    std::vector<ir::Op> absent;
    std::optional<ir::AtomicOp> atomic;
  };
  auto mem = [](const char* type) { return N(1, type).p("field", "f").in("i0", 0); };
  auto atomic = [&](const char* type, ir::AtomicOp a) {
    return Case{{mem(type).in("value", 1)},
                ir::Op::AtomicRMW,
                {ir::Op::GlobalLoad, ir::Op::GlobalStore},
                a};
  };
  auto tex = [](int id, const char* type) { return N(id, type).p("texture", "img"); };
  std::vector<std::pair<std::string, Case>> cases = {
      {"load", {{mem("load")}, ir::Op::GlobalLoad, {ir::Op::GlobalStore, ir::Op::AtomicRMW}, {}}},
      {"store",
       {{mem("store").in("value", 1)},
        ir::Op::GlobalStore,
        {ir::Op::GlobalLoad, ir::Op::AtomicRMW},
        {}}},
      {"atomic_add", atomic("atomic_add", ir::AtomicOp::Add)},
      {"atomic_sub", atomic("atomic_sub", ir::AtomicOp::Sub)},
      {"atomic_min", atomic("atomic_min", ir::AtomicOp::Min)},
      {"atomic_max", atomic("atomic_max", ir::AtomicOp::Max)},
      {"atomic_and", atomic("atomic_and", ir::AtomicOp::And)},
      {"atomic_or", atomic("atomic_or", ir::AtomicOp::Or)},
      {"atomic_xor", atomic("atomic_xor", ir::AtomicOp::Xor)},
      {"tex_load",
       {{tex(1, "tex_load").in("x", 0).in("y", 0)},
        ir::Op::TexLoad,
        {ir::Op::TexSample, ir::Op::TexStore},
        {}}},
      {"tex_sample",
       {{tex(1, "tex_sample").in("u", 0.5).in("v", 0.5)},
        ir::Op::TexSample,
        {ir::Op::TexLoad, ir::Op::TexStore},
        {}}},
      {"tex_store",  // its value comes from a tex_sample
       {{tex(1, "tex_sample").in("u", 0.5).in("v", 0.5),
         tex(2, "tex_store").in("x", 0).in("y", 0).in("value", ln(1))},
        ir::Op::TexStore,
        {ir::Op::TexLoad},
        {}}},
  };
  // Named, not a structured binding: clang before 16 cannot capture a binding in a lambda.
  for (const auto& type_case : cases) {
    const auto& type = type_case.first;
    const auto& c = type_case.second;
    SCOPED_TRACE(type);
    Document doc;
    doc.path = "<memory>";
    doc.fields.push_back(field("f", "i32", {4}));
    doc.kernels.push_back(kernel("k", {{"img", graph::ParamKind::Texture, "", 2}}, {}));
    doc.kernels[0].nodes = c.nodes;
    auto k = lower_kernel(doc, "k");
    ASSERT_EQ(ir::verify(*k), "");
    EXPECT_GT(count_ops(*k, c.op), 0);
    for (ir::Op other : c.absent) EXPECT_EQ(count_ops(*k, other), 0) << ir::op_name(other);
    if (!c.atomic) continue;
    ir::walk(*k->body, [&](ir::Inst& i) {
      if (i.op == ir::Op::AtomicRMW) {
        EXPECT_EQ(i.atomic_op(), *c.atomic);
      }
    });
  }
}

TEST(Lower, VectorParamsNdarrayLinksAndLoopIndices) {
  Document doc;
  doc.path = "<memory>";
  doc.fields.push_back(field("mask", "i32", {4, 2}));
  KernelDecl k =
      kernel("k", {value_param("g", "f32x3"), ndarray_param("v", "f32x3", 2)},
             {N(1, "param").p("name", "g"), N(2, "param").p("name", "v"),
              N(3, "struct_for")
                  .p("field", "mask")
                  .region("body",
                          {
                              N(4, "index").p("dim", 1),
                              N(5, "load").p("field", "mask").in("i0", ln(3, "i0")).in("i1", ln(4)),
                              N(6, "continue").in("cond", ln(7)),
                              N(7, "eq").in("a", ln(5)).in("b", 0),
                              N(8, "load").in("array", ln(2)).in("i0", list({lit(1), lit(2)})),
                              N(9, "lt").in("a", ln(8)).in("b", 0),
                              N(10, "select").in("cond", ln(9)).in("a", ln(1)).in("b", ln(8)),
                              N(11, "store")
                                  .in("array", ln(2))
                                  .in("i0", ln(3, "i0"))
                                  .in("i1", ln(4))
                                  .in("value", ln(10)),
                          })});
  doc.kernels.push_back(k);
  EXPECT_EQ(lower_print(doc, "k"), R"(kernel k
  param p0 g: value f32x3
  param p1 v: ndarray f32x3 ndim 2
  slot $0: ndarray f32x3 shape [?, ?] from p1
  slot $1: field i32 shape [4, 2] field mask
  %0:f32 = arg p0+0
  %1:f32 = arg p0+4
  %2:f32 = arg p0+8
  struct_for $1 dims 2 {
    %4:i32 = loop_index %3.1
    %5:i32 = loop_index %3.0
    %6:i32 = global_ptr $1.c0 %5, %4
    %7:i32 = global_load %6
    %8:i32 = const 0
    %9:bool = eq %7, %8
    if %9 {
      continue
    } else {
    }
    %12:i32 = const 1
    %13:i32 = const 2
    %14:f32 = global_ptr $0.c0 %12, %13
    %15:f32 = global_load %14
    %16:f32 = global_ptr $0.c1 %12, %13
    %17:f32 = global_load %16
    %18:f32 = global_ptr $0.c2 %12, %13
    %19:f32 = global_load %18
    %20:f32 = const 0.0
    %21:f32 = const 0.0
    %22:f32 = const 0.0
    %23:bool = lt %15, %20
    %24:bool = lt %17, %21
    %25:bool = lt %19, %22
    %26:f32 = select %23, %0, %15
    %27:f32 = select %24, %1, %17
    %28:f32 = select %25, %2, %19
    %29:f32 = global_ptr $0.c0 %5, %4
    global_store %29, %26
    %31:f32 = global_ptr $0.c1 %5, %4
    global_store %31, %27
    %33:f32 = global_ptr $0.c2 %5, %4
    global_store %33, %28
  }
)");
}

TEST(Lower, NestedRegionsShareOuterValues) {
  // A pure node of the kernel's top level used only inside a nested if is computed before
  // the loop, once; values from inside the loop never leak out.
  Document doc;
  doc.path = "<memory>";
  doc.fields.push_back(field("x", "f32", {8}));
  KernelDecl k = kernel(
      "k", {value_param("s", "f32")},
      {N(1, "param").p("name", "s"), N(2, "mul").in("a", ln(1)).in("b", ln(1)),
       N(3, "range_for")
           .in("end0", 8)
           .region("body", {
                               N(4, "gt").in("a", ln(3, "i0")).in("b", 3),
                               N(5, "if")
                                   .in("cond", ln(4))
                                   .region("then",
                                           {
                                               N(6, "cast").p("type", "f32").in("a", ln(3, "i0")),
                                               N(7, "fma").in("a", ln(6)).in("b", ln(2)).in("c", 1),
                                               N(8, "store")
                                                   .p("field", "x")
                                                   .in("i0", ln(3, "i0"))
                                                   .in("value", ln(7)),
                                           }),
                           })});
  doc.kernels.push_back(k);
  EXPECT_EQ(lower_print(doc, "k"), R"(kernel k
  param p0 s: value f32
  slot $0: field f32 shape [8] field x
  %0:i32 = const 0
  %1:i32 = const 8
  %2:f32 = arg p0+0
  %3:f32 = mul %2, %2
  range_for %0, %1 {
    %5:i32 = loop_index %4.0
    %6:i32 = const 3
    %7:bool = gt %5, %6
    if %7 {
      %9:f32 = cast %5
      %10:f32 = const 1.0
      %11:f32 = fma %9, %3, %10
      %12:f32 = global_ptr $0.c0 %5
      global_store %12, %11
    } else {
    }
  }
)");
}

TEST(Lower, FunctionCalledTwiceInsideLoopWithBranches) {
  Document doc;
  doc.path = "<memory>";
  doc.fields.push_back(field("x", "f32x2", {8}));
  FunctionDecl f;
  f.name = "relu";
  f.inputs = {{"v", "f32"}};
  f.outputs = {{"r", "f32"}};
  f.nodes = {N(1, "input").p("name", "v"), N(2, "lt").in("a", ln(1)).in("b", 0),
             N(3, "if")
                 .in("cond", ln(2))
                 .region("then", {N(4, "yield").in("y", 0)})
                 .region("else", {N(5, "yield").in("y", ln(1))}),
             N(6, "output").in("r", ln(3, "y"))};
  doc.functions.push_back(f);
  doc.kernels.push_back(kernel(
      "k", {},
      {N(1, "range_for")
           .in("end0", 8)
           .region("body",
                   {
                       N(2, "load").p("field", "x").in("i0", ln(1, "i0")),
                       N(3, "split").in("v", ln(2)),
                       N(4, "call").p("function", "relu").in("v", ln(3, "x")),
                       N(5, "call").p("function", "relu").in("v", ln(3, "y")),
                       N(6, "vec2").in("x", ln(4, "r")).in("y", ln(5, "r")),
                       N(7, "store").p("field", "x").in("i0", ln(1, "i0")).in("value", ln(6)),
                   })}));
  auto k = lower_kernel(doc, "k");
  ASSERT_EQ(ir::verify(*k), "");
  EXPECT_EQ(count_ops(*k, ir::Op::If), 2);
  EXPECT_EQ(count_ops(*k, ir::Op::Alloca), 2);
  // inlined code is stamped with the call node
  int stamped = 0;
  ir::walk(*k->body,
           [&](ir::Inst& i) { stamped += i.op == ir::Op::If && (i.node == 4 || i.node == 5); });
  EXPECT_EQ(stamped, 2);
}

TEST(Lower, MatrixTimesVectorAndTypedTemplateConstant) {
  KernelDecl k = kernel(
      "k",
      {value_param("m", "f32x2x2"),
       value_param("v", "f32x2"),
       {"gain", graph::ParamKind::Template, "f64", 0}},
      {N(1, "param").p("name", "m"), N(2, "param").p("name", "v"), N(3, "param").p("name", "gain"),
       N(4, "expr").p("expr", "matmul(m, v) * g").in("m", ln(1)).in("v", ln(2)).in("g", ln(3)),
       N(5, "return").in("r0", ln(4))});
  k.returns = {"f64x2"};
  TemplateArgs args;
  args.set("gain", {TemplateArg::Kind::Int, "", 2});
  EXPECT_EQ(lower_print(doc_with(k), "k", args), R"(kernel k
  param p0 m: value f32x2x2
  param p1 v: value f32x2
  returns f64x2
  %0:f32 = arg p0+0
  %1:f32 = arg p0+4
  %2:f32 = arg p0+8
  %3:f32 = arg p0+12
  %4:f32 = arg p1+0
  %5:f32 = arg p1+4
  %6:f64 = const 2.0
  %7:f32 = mul %0, %4
  %8:f32 = mul %2, %5
  %9:f32 = add %7, %8
  %10:f32 = mul %1, %4
  %11:f32 = mul %3, %5
  %12:f32 = add %10, %11
  %13:f64 = cast %9
  %14:f64 = cast %12
  %15:f64 = mul %13, %6
  %16:f64 = mul %14, %6
  return %15, %16
)");
}

TEST(Lower, TextureMemberOfArgpackFeedsTextureNodes) {
  Document doc;
  doc.path = "<memory>";
  doc.argpack_types = {ArgpackType{"Maps",
                                   true,
                                   {{"scale", MemberKind::Value, {Scalar::F32}, 0, -1, 0},
                                    {"albedo", MemberKind::Texture, {}, 2, -1, 0}},
                                   0,
                                   16}};
  doc.kernels.push_back(
      kernel("k", {{"maps", graph::ParamKind::Argpack, "Maps", 0}},
             {N(1, "member").p("param", "maps").p("path", "albedo"),
              N(2, "tex_load").in("texture", ln(1)).in("x", 1).in("y", 2),
              N(3, "member").p("param", "maps").p("path", "scale"),
              N(4, "mul").in("a", ln(2)).in("b", ln(3)),
              N(5, "tex_store").in("texture", ln(1)).in("x", 0).in("y", 0).in("value", ln(4))}));
  auto k = lower_kernel(doc, "k");
  ASSERT_EQ(ir::verify(*k), "");
  ASSERT_EQ(k->abi.resources.size(), 1u);
  EXPECT_EQ(k->abi.resources[0].kind, ResourceKind::Texture);
  EXPECT_EQ(k->abi.resources[0].param, 0);
  EXPECT_EQ(k->abi.resources[0].param_offset, 16);
  EXPECT_EQ(k->abi.params[0].size, 48u);
  EXPECT_EQ(count_ops(*k, ir::Op::TexLoad), 4);
}

TEST(Lower, LongChainsNeedNoDeepRecursion) {
  // 20000 pure nodes in one chain: validation and lowering walk it without recursing per node.
  KernelDecl k = kernel("k", {value_param("a", "f32")}, {N(0, "param").p("name", "a")});
  const int n = 20000;
  for (int i = 1; i < n; ++i) k.nodes.push_back(N(i, "add").in("a", ln(i - 1)).in("b", 1.0));
  k.nodes.push_back(N(n, "return").in("r0", ln(n - 1)));
  k.returns = {"f32"};
  Document doc = doc_with(k);
  EXPECT_NO_THROW(validate_document(doc));
  auto ker = lower_kernel(doc, "k");
  EXPECT_EQ(ir::verify(*ker), "");
  EXPECT_EQ(count_ops(*ker, ir::Op::Add), n - 1);
}

TEST(Lower, FormulaComponents) {
  KernelDecl k = kernel("k", {value_param("c", "f32x4")},
                        {N(1, "param").p("name", "c"),
                         N(2, "expr").p("expr", "c.rgb * c.a + vec3(c.x, c.yy).zyx").in("c", ln(1)),
                         N(3, "return").in("r0", ln(2))});
  k.returns = {"f32x3"};
  auto ker = lower_kernel(doc_with(k), "k");
  ASSERT_EQ(ir::verify(*ker), "");
  EXPECT_EQ(count_ops(*ker, ir::Op::Mul), 3);
  EXPECT_EQ(count_ops(*ker, ir::Op::Add), 3);
  try {
    KernelDecl bad =
        kernel("k", {value_param("c", "f32x2")},
               {N(1, "param").p("name", "c"), N(2, "expr").p("expr", "c.z").in("c", ln(1))});
    lower_kernel(doc_with(bad), "k");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.message(), "formula 'c.z', column 2: f32x2 has no component 'z'");
  }
}

namespace {

// A tiny interpreter for serial scalar IR (enough for while/if/locals/returns); arguments are
// given per (param, byte offset).
struct MiniInterpreter {
  std::map<std::pair<int, int>, double> args;
  std::map<const ir::Inst*, double> v;
  std::vector<double> returned;
  enum class Flow { Next, Break, Return };

  Flow run(const ir::Block& block) {
    for (const auto& up : block.insts) {
      const ir::Inst& i = *up;
      auto a = [&](size_t n) { return v.at(i.operand(n)); };
      auto integral = [&](double x) {
        return is_float(i.type) ? x : static_cast<double>(static_cast<int64_t>(x));
      };
      switch (i.op) {
        case ir::Op::Const:
          v[&i] = is_float(i.type) ? i.float_value() : static_cast<double>(i.int_value());
          break;
        case ir::Op::ArgLoad: v[&i] = args.at({i.param_index(), i.byte_offset()}); break;
        case ir::Op::Add: v[&i] = a(0) + a(1); break;
        case ir::Op::Sub: v[&i] = a(0) - a(1); break;
        case ir::Op::Mul: v[&i] = a(0) * a(1); break;
        case ir::Op::Div: v[&i] = integral(a(0) / a(1)); break;
        case ir::Op::Neg: v[&i] = -a(0); break;
        case ir::Op::Cast: v[&i] = integral(a(0)); break;
        case ir::Op::Lt: v[&i] = a(0) < a(1); break;
        case ir::Op::Ge: v[&i] = a(0) >= a(1); break;
        case ir::Op::Eq: v[&i] = a(0) == a(1); break;
        case ir::Op::Gt: v[&i] = a(0) > a(1); break;
        case ir::Op::Ne: v[&i] = a(0) != a(1); break;
        case ir::Op::Select: v[&i] = a(0) ? a(1) : a(2); break;
        case ir::Op::Alloca: v[&i] = 0; break;
        case ir::Op::LocalLoad: v[&i] = v.at(i.operand(0)); break;
        case ir::Op::LocalStore: v[i.operand(0)] = a(1); break;
        case ir::Op::If: {
          Flow f = run(*i.region(a(0) != 0 ? 0 : 1));
          if (f != Flow::Next) return f;
          break;
        }
        case ir::Op::While:
          for (;;) {
            Flow f = run(*i.region(0));
            if (f == Flow::Break) break;
            if (f == Flow::Return) return f;
          }
          break;
        case ir::Op::Break: return Flow::Break;
        case ir::Op::Return:
          for (size_t n = 0; n < i.operands.size(); ++n) returned.push_back(a(n));
          return Flow::Return;
        default: ADD_FAILURE() << "cannot interpret " << ir::op_name(i.op); return Flow::Return;
      }
    }
    return Flow::Next;
  }
};

}  // namespace

TEST(Lower, WhileComputesWhatItSays) {
  // Collatz steps of n: while n != 1 { n = n % 2 == 0 ? n / 2 : 3n + 1; steps += 1 }
  KernelDecl k = kernel(
      "collatz", {value_param("n", "i32")},
      {N(1, "param").p("name", "n"),
       N(2, "while")
           .in("n", ln(1))
           .in("steps", 0)
           .region(
               "body",
               {
                   N(3, "carried").p("name", "n"),
                   N(4, "carried").p("name", "steps"),
                   N(5, "break").in("cond", ln(6)),
                   N(6, "eq").in("a", ln(3)).in("b", 1),
                   N(7, "expr").p("expr", "n - n / 2 * 2 == 0 ? n / 2 : 3 * n + 1").in("n", ln(3)),
                   N(8, "next").p("name", "n").in("value", ln(7)),
                   N(9, "next").p("name", "steps").in("value", ln(10)),
                   N(10, "add").in("a", ln(4)).in("b", 1),
               }),
       N(11, "return").in("r0", ln(2, "steps")).in("r1", ln(2, "n"))});
  k.returns = {"i32", "i32"};
  auto ker = lower_kernel(doc_with(k), "collatz");
  ASSERT_EQ(ir::verify(*ker), "");
  for (auto [n, steps] : {std::pair{1, 0}, {6, 8}, {27, 111}}) {
    MiniInterpreter run;
    run.args[{0, 0}] = n;
    run.run(*ker->body);
    ASSERT_EQ(run.returned.size(), 2u);
    EXPECT_EQ(run.returned[0], steps) << "n = " << n;
    EXPECT_EQ(run.returned[1], 1);
  }
}

TEST(Lower, IfOutputsComputeWhatTheySay) {
  KernelDecl k = kernel(
      "sign", {value_param("x", "f32")},
      {N(1, "param").p("name", "x"), N(2, "lt").in("a", ln(1)).in("b", 0),
       N(3, "if")
           .in("cond", ln(2))
           .region("then", {N(4, "yield").in("s", -1).in("mag", ln(5)), N(5, "neg").in("a", ln(1))})
           .region("else", {N(6, "yield").in("s", 1).in("mag", ln(1))}),
       N(7, "mul").in("a", ln(3, "s")).in("b", ln(3, "mag")),
       N(8, "return").in("r0", ln(7)).in("r1", ln(3, "s"))});
  k.returns = {"f32", "i32"};
  auto ker = lower_kernel(doc_with(k), "sign");
  ASSERT_EQ(ir::verify(*ker), "");
  for (double x : {-2.5, 0.0, 4.0}) {
    MiniInterpreter run;
    run.args[{0, 0}] = x;
    run.run(*ker->body);
    ASSERT_EQ(run.returned.size(), 2u);
    EXPECT_EQ(run.returned[0], x) << x;
    EXPECT_EQ(run.returned[1], x < 0 ? -1 : 1) << x;
  }
}

TEST(Lower, ImplicitConversionRules) {
  // A value of type `from` stored to a field of type `to`: allowed or an error naming the pin.
  struct Case {
    const char* from;
    const char* to;
    bool ok;
  };
  const Case cases[] = {
      {"i32", "f32", true},     {"f32", "i32", false},      {"u8", "i32", true},
      {"i32", "u32", false},    {"u16", "u32", true},       {"i64", "f32", true},
      {"f64", "f32", false},    {"f32", "f64", true},       {"bool", "i32", true},
      {"i32", "bool", false},   {"f32", "f32x3", true},     {"f32x3", "f32x2", false},
      {"i32x3", "f32x3", true}, {"f32x2x2", "f32x4", false}};
  for (const Case& c : cases) {
    Document doc =
        doc_with(kernel("k", {value_param("v", c.from)},
                        {N(1, "param").p("name", "v"),
                         N(2, "store").p("field", "dst").in("i0", 0).in("value", ln(1))}));
    doc.fields.push_back(field("dst", c.to, {4}));
    try {
      auto k = lower_kernel(doc, "k");
      EXPECT_TRUE(c.ok) << c.from << " -> " << c.to << " should be an error";
      EXPECT_EQ(ir::verify(*k), "");
    } catch (const Error& e) {
      EXPECT_FALSE(c.ok) << c.from << " -> " << c.to << ": " << e.what();
      EXPECT_EQ(e.place().node, 2);
      EXPECT_EQ(e.place().pin, "value");
    }
  }
}

TEST(Lower, BinaryPromotionAndWeakLiterals) {
  // (operand types) -> result type of add
  struct Case {
    const char* a;
    const char* b;  // "" for an integer literal 2, "." for a float literal 2.5
    const char* result;
  };
  const Case cases[] = {{"i32", "f32", "f32"},  {"i32", "i64", "i64"},     {"f64", "", "f64"},
                        {"i32", ".", "f32"},    {"u8", "", "u8"},          {"i32", "u32", "u32"},
                        {"f32x3", "", "f32x3"}, {"i32x2", "f32", "f32x2"}, {"bool", "", "i32"}};
  for (const Case& c : cases) {
    std::vector<KernelParam> params = {value_param("a", c.a)};
    N add(3, "add");
    add.in("a", ln(1));
    if (std::string(c.b).empty())
      add.in("b", 2);
    else if (std::string(c.b) == ".")
      add.in("b", 2.5);
    else {
      params.push_back(value_param("b", c.b));
      add.in("b", ln(2));
    }
    KernelDecl k = kernel("k", params,
                          {N(1, "param").p("name", "a"), N(2, "param").p("name", "b"), add,
                           N(4, "return").in("r0", ln(3))});
    if (params.size() == 1) k.nodes.erase(k.nodes.begin() + 1);
    k.returns = {c.result};
    auto ker = lower_kernel(doc_with(k), "k");  // the return takes exactly the result type
    ASSERT_EQ(ir::verify(*ker), "") << c.a << " + " << c.b;
    ir::Inst* ret = ker->body->insts.back().get();
    ASSERT_EQ(ret->op, ir::Op::Return);
    EXPECT_EQ(ret->operand(0)->op, ir::Op::Add) << c.a << " + " << c.b << " needed a conversion";
    EXPECT_EQ(scalar_name(ret->operand(0)->type), scalar_name(parse_value_type(c.result)->scalar));
  }
}

TEST(Lower, WholeNumberLiteralsStayExact) {
  // 2^62 + 1 does not survive a trip through double.
  KernelDecl k = kernel("k", {value_param("h", "i64")},
                        {N(1, "param").p("name", "h"),
                         N(2, "xor").in("a", ln(1)).in("b", lit(int64_t{4611686018427387905})),
                         N(3, "expr").p("expr", "h + 4611686018427387905").in("h", ln(2)),
                         N(4, "return").in("r0", ln(3))});
  k.returns = {"i64"};
  std::string text = lower_print(doc_with(k), "k");
  size_t first = text.find("const 4611686018427387905");
  ASSERT_NE(first, std::string::npos) << text;
  EXPECT_NE(text.find("const 4611686018427387905", first + 1), std::string::npos) << text;
}

// A reroute is the identity: values, variable references and arrays pass through, and the
// IR is the one without it.
TEST(Lower, RerouteIsTheIdentity) {
  Document direct = doc_with(kernel(
      "k", {ndarray_param("x", "f32", 1)},
      {N(1, "param").p("name", "x"), N(2, "var").p("type", "f32"), N(3, "const").p("value", 2.5),
       N(4, "load").in("array", ln(1)).in("i0", 0), N(5, "add").in("a", ln(4)).in("b", ln(3)),
       N(6, "set").in("var", ln(2, "ref")).in("value", ln(5)),
       N(7, "store").in("array", ln(1)).in("i0", 1).in("value", ln(5))}));
  Document rerouted = doc_with(kernel(
      "k", {ndarray_param("x", "f32", 1)},
      {N(1, "param").p("name", "x"), N(2, "var").p("type", "f32"), N(3, "const").p("value", 2.5),
       N(10, "reroute").in("in", ln(1)), N(11, "reroute").in("in", ln(2, "ref")),
       N(12, "reroute").in("in", ln(3)), N(13, "reroute").in("in", ln(12)),
       N(4, "load").in("array", ln(10)).in("i0", 0), N(5, "add").in("a", ln(4)).in("b", ln(13)),
       N(6, "set").in("var", ln(11)).in("value", ln(5)),
       N(7, "store").in("array", ln(10)).in("i0", 1).in("value", ln(5))}));
  EXPECT_NO_THROW(validate_document(rerouted));
  EXPECT_EQ(lower_print(rerouted, "k"), lower_print(direct, "k"));

  // A reroute of a literal stays a weak literal: 300 does not fit the u8 it meets.
  Document weak = doc_with(kernel("k", {value_param("v", "u8")},
                                  {N(1, "param").p("name", "v"), N(2, "reroute").in("in", 300),
                                   N(3, "add").in("a", ln(1)).in("b", ln(2))}));
  try {
    lower_kernel(weak, "k");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.place().node, 3);
  }
  Document missing = doc_with(kernel("k", {}, {N(1, "reroute")}));
  try {
    validate_document(missing);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.message(), "input 'in' of this reroute node needs a link or a value");
    EXPECT_EQ(e.place().node, 1);
  }
}

// floordiv on integers: the truncating quotient, one lower when the division is inexact and
// the signs differ; on unsigned integers the quotient alone; on floats floor(a / b).
TEST(Lower, FloorDivision) {
  auto doc = [](const std::string& type) {
    KernelDecl k =
        kernel("k", {value_param("a", type), value_param("b", type)},
               {N(1, "param").p("name", "a"), N(2, "param").p("name", "b"),
                N(3, "floordiv").in("a", ln(1)).in("b", ln(2)), N(4, "return").in("r0", ln(3))});
    k.returns = {type};
    return doc_with(k);
  };
  EXPECT_EQ(lower_print(doc("i32"), "k"), R"(kernel k
  param p0 a: value i32
  param p1 b: value i32
  returns i32
  %0:i32 = arg p0+0
  %1:i32 = arg p1+0
  %2:i32 = div %0, %1
  %3:i32 = const 0
  %4:i32 = mod %0, %1
  %5:bool = ne %4, %3
  %6:bool = lt %0, %3
  %7:bool = lt %1, %3
  %8:bool = ne %6, %7
  %9:bool = and %5, %8
  %10:i32 = const 1
  %11:i32 = sub %2, %10
  %12:i32 = select %9, %11, %2
  return %12
)");
  auto u = lower_kernel(doc("u16"), "k");
  EXPECT_EQ(count_ops(*u, ir::Op::Div), 1);
  EXPECT_EQ(count_ops(*u, ir::Op::Select), 0);
  auto f = lower_kernel(doc("f64"), "k");
  EXPECT_EQ(count_ops(*f, ir::Op::Floor), 1);
  EXPECT_EQ(count_ops(*f, ir::Op::Mod), 0);
  // The operands follow the arithmetic rules (no bools-to-bit tricks, no floats as ints).
  try {
    KernelDecl bad = kernel("k", {value_param("v", "f32x3"), value_param("w", "f32x2")},
                            {N(1, "param").p("name", "v"), N(2, "param").p("name", "w"),
                             N(3, "floordiv").in("a", ln(1)).in("b", ln(2))});
    lower_kernel(doc_with(bad), "k");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.place().node, 3);
    EXPECT_EQ(e.place().pin, "b");
    EXPECT_EQ(e.message(), "'a' is f32x3 but 'b' is f32x2; sizes must match");
  }
}

TEST(Lower, OuterAndTrace) {
  // outer as a node, over an i32 vector converted to f32: a 2x3 matrix, column j = b[j] * a.
  // trace in a formula: the diagonal of a 3x3 matrix summed from the top left.
  KernelDecl k = kernel(
      "k", {value_param("a", "f32x2"), value_param("b", "i32x3"), value_param("m", "f32x3x3")},
      {N(1, "param").p("name", "a"), N(2, "param").p("name", "b"), N(3, "param").p("name", "m"),
       N(4, "outer").in("a", ln(1)).in("b", ln(2)),
       N(5, "expr").p("expr", "trace(m)").in("m", ln(3)),
       N(6, "return").in("r0", ln(4)).in("r1", ln(5))});
  k.returns = {"f32x2x3", "f32"};
  EXPECT_EQ(lower_print(doc_with(k), "k"), R"(kernel k
  param p0 a: value f32x2
  param p1 b: value i32x3
  param p2 m: value f32x3x3
  returns f32x2x3
  returns f32
  %0:f32 = arg p0+0
  %1:f32 = arg p0+4
  %2:i32 = arg p1+0
  %3:i32 = arg p1+4
  %4:i32 = arg p1+8
  %5:f32 = cast %2
  %6:f32 = cast %3
  %7:f32 = cast %4
  %8:f32 = mul %0, %5
  %9:f32 = mul %1, %5
  %10:f32 = mul %0, %6
  %11:f32 = mul %1, %6
  %12:f32 = mul %0, %7
  %13:f32 = mul %1, %7
  %14:f32 = arg p2+0
  %15:f32 = arg p2+4
  %16:f32 = arg p2+8
  %17:f32 = arg p2+12
  %18:f32 = arg p2+16
  %19:f32 = arg p2+20
  %20:f32 = arg p2+24
  %21:f32 = arg p2+28
  %22:f32 = arg p2+32
  %23:f32 = add %14, %18
  %24:f32 = add %23, %22
  return %8, %9, %10, %11, %12, %13, %24
)");
  // A trace of a non-square matrix is an error at the node, naming the pin.
  KernelDecl bad = kernel("k", {value_param("m", "f32x2x3")},
                          {N(1, "param").p("name", "m"), N(2, "trace").in("a", ln(1))});
  try {
    lower_kernel(doc_with(bad), "k");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.place().node, 2);
    EXPECT_EQ(e.place().pin, "a");
  }
}

// block_local names become the IR kernel's resource slots, in the list's order: a field's
// slot once a node uses it (one the kernel never touches adds nothing), an ndarray
// parameter's slot. The printer shows them in the kernel's header.
TEST(Lower, BlockLocalNamesBecomeResourceSlots) {
  KernelDecl k = kernel(
      "blur", {ndarray_param("w", "f32", 2)},
      {N(1, "range_for")
           .in("begin0", 1)
           .in("end0", 63)
           .in("begin1", 1)
           .in("end1", 63)
           .region("body",
                   {
                       N(2, "add").in("a", ln(1, "i0")).in("b", 1),
                       N(3, "load").p("field", "src").in("i0", ln(2)).in("i1", ln(1, "i1")),
                       N(4, "load").p("ndarray", "w").in("i0", ln(1, "i0")).in("i1", ln(1, "i1")),
                       N(5, "mul").in("a", ln(3)).in("b", ln(4)),
                       N(6, "store")
                           .p("field", "dst")
                           .in("i0", ln(1, "i0"))
                           .in("i1", ln(1, "i1"))
                           .in("value", ln(5)),
                   })});
  k.block_local = {"src", "untouched", "w"};
  Document doc = doc_with(k);
  doc.fields = {field("src", "f32", {64, 64}), field("dst", "f32", {64, 64}),
                field("untouched", "f32", {64, 64})};
  EXPECT_NO_THROW(validate_document(doc));
  auto ir = lower_kernel(doc, "blur");
  EXPECT_EQ(ir::verify(*ir), "");
  int src = -1, w = -1;
  for (size_t i = 0; i < ir->abi.resources.size(); ++i) {
    const ResourceDesc& r = ir->abi.resources[i];
    EXPECT_NE(r.field, "untouched");
    if (r.field == "src") src = static_cast<int>(i);
    if (r.kind == ResourceKind::Ndarray && r.param == 0) w = static_cast<int>(i);
  }
  ASSERT_GE(src, 0);
  ASSERT_GE(w, 0);
  EXPECT_EQ(ir->block_local_slots, (std::vector<int32_t>{src, w}));
  std::string text = ir::print_kernel(*ir);
  std::string header = "  block_local $" + std::to_string(src) + " $" + std::to_string(w) + "\n";
  EXPECT_NE(text.find(header), std::string::npos) << text;
  // Without a list: no slots, and the header says nothing.
  doc.kernels[0].block_local.clear();
  auto plain = lower_kernel(doc, "blur");
  EXPECT_TRUE(plain->block_local_slots.empty());
  EXPECT_EQ(ir::print_kernel(*plain).find("block_local"), std::string::npos);
  // A slot out of range is the verifier's error.
  ir->block_local_slots.push_back(99);
  EXPECT_NE(ir::verify(*ir).find("block_local slot $99 out of range"), std::string::npos);
}
