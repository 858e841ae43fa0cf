// Formulas (`expr` nodes) of any length, bounded nesting, and limits that stay safe on the
// small thread stacks of editors and engine plugins; every pure node type callable from a
// formula, the bitwise and floor-division operators, and errors naming the column.
#include <gtest/gtest.h>

#include <pthread.h>

#include <functional>
#include <map>
#include <string>

#include "compiler/graph/document_json.h"
#include "compiler/graph/expression.h"
#include "compiler/graph/graph_builder.h"
#include "compiler/graph/lower.h"
#include "compiler/graph/lowerer.h"
#include "compiler/graph/node_library.h"
#include "compiler/graph/validate.h"
#include "compiler/ir/inst.h"
#include "compiler/ir/verifier.h"
#include "runtime/common/error.h"

using namespace loom;
using namespace loom::graph;
using namespace loom::graph::build;

namespace {

std::string repeat(const std::string& s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

// A kernel returning `formula` over input pin `a` (an f32 parameter).
Document formula_doc(const std::string& formula, const std::string& type = "f32") {
  Document doc;
  doc.path = "formula.json";
  KernelDecl k =
      kernel("k", {value_param("a", type)},
             {N(1, "param").p("name", "a"), N(2, "expr").p("expr", formula).in("a", ln(1)),
              N(3, "return").in("r0", ln(2))});
  k.returns = {type};
  doc.kernels.push_back(k);
  return doc;
}

int count_ops(ir::Kernel& k, ir::Op op) {
  int n = 0;
  ir::walk(*k.body, [&](ir::Inst& i) { n += i.op == op; });
  return n;
}

Error lowering_error(const Document& doc) {
  try {
    lower_kernel(doc, "k");
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "no error";
  return Error("none");
}

// Runs `body` on a thread with a `kib` KiB stack, like an editor or engine worker thread.
void on_small_stack(size_t kib, const std::function<void()>& body) {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, kib * 1024);
  struct Call {
    const std::function<void()>* body;
    std::string error;
  } call{&body, ""};
  pthread_t thread;
  auto run = [](void* p) -> void* {
    auto* c = static_cast<Call*>(p);
    try {
      (*c->body)();
    } catch (const std::exception& e) {
      c->error = e.what();
    }
    return nullptr;
  };
  ASSERT_EQ(pthread_create(&thread, &attr, run, &call), 0);
  pthread_join(thread, nullptr);
  pthread_attr_destroy(&attr);
  EXPECT_EQ(call.error, "");
}

}  // namespace

TEST(Formula, LongFlatChainsOfAnyLengthLower) {
  // 100000 terms: the parser loops over flat chains, and lowering walks the (deep) tree
  // with an explicit stack.
  auto k = lower_kernel(formula_doc("a" + repeat("+a", 99999)), "k");
  EXPECT_EQ(count_ops(*k, ir::Op::Add), 99999);
  k = lower_kernel(formula_doc("a" + repeat("*a-a", 20000)), "k");
  EXPECT_EQ(count_ops(*k, ir::Op::Sub), 20000);
}

TEST(Formula, LongUnaryAndPowerChainsLower) {
  auto k = lower_kernel(formula_doc(repeat("-", 5001) + "a"), "k");
  EXPECT_EQ(count_ops(*k, ir::Op::Neg), 5001);
  k = lower_kernel(formula_doc("a" + repeat("**a", 5000)), "k");
  EXPECT_EQ(count_ops(*k, ir::Op::Pow), 5000);
  k = lower_kernel(formula_doc(repeat("a > 1 ? a : ", 5000) + "a"), "k");
  EXPECT_EQ(count_ops(*k, ir::Op::Select), 5000);
  k = lower_kernel(formula_doc(repeat("!", 4001) + "(a > 0)", "f32"), "k");  // bool chain
  EXPECT_EQ(count_ops(*k, ir::Op::LogicNot), 4001);
}

TEST(Formula, ChainsKeepTheirMeaning) {
  EXPECT_NO_THROW(parse_expression("a" + repeat("**a", 3)));
  auto e = parse_expression("-a ** -b ** c");
  ASSERT_EQ(e->name, "neg");
  ASSERT_EQ(e->args[0]->name, "pow");
  EXPECT_EQ(e->args[0]->args[1]->name, "neg");
  EXPECT_EQ(e->args[0]->args[1]->args[0]->name, "pow");
  auto t = parse_expression("a ? b : c ? d : e");
  ASSERT_EQ(t->name, "select");
  EXPECT_EQ(t->args[2]->name, "select");
  EXPECT_EQ(t->args[2]->args[2]->name, "e");
}

TEST(Formula, DeepNestingIsAnErrorNamingNodeAndColumn) {
  Error e = lowering_error(formula_doc(repeat("(", 20000) + "a" + repeat(")", 20000)));
  EXPECT_EQ(e.place().kernel, "k");
  EXPECT_EQ(e.place().node, 2);
  EXPECT_EQ(e.place().pin, "expr");
  EXPECT_NE(e.message().find("column 65: the formula nests parentheses, calls or conditionals more "
                             "than 64 levels deep"),
            std::string::npos)
      << e.message();
  EXPECT_NE(e.message().find("... (40001 characters)"), std::string::npos)
      << "long formulas are shortened";
  e = lowering_error(formula_doc(repeat("sin(", 65) + "a" + repeat(")", 65)));
  EXPECT_NE(e.message().find("more than 64 levels deep"), std::string::npos) << e.message();
  e = lowering_error(formula_doc(repeat("a > 0 ? (", 65) + "a" + repeat(") : a", 65)));
  EXPECT_NE(e.message().find("more than 64 levels deep"), std::string::npos) << e.message();
}

TEST(Formula, TheNestingLimitIsSafeOnA256KiBStack) {
  std::string deepest = repeat("(a+", kMaxFormulaNesting) + "a" + repeat(")", kMaxFormulaNesting);
  std::string calls = repeat("sin(", kMaxFormulaNesting) + "a" + repeat(")", kMaxFormulaNesting);
  std::string flat = "a" + repeat("+a*a", 30000);
  on_small_stack(256, [&] {
    lower_kernel(formula_doc(deepest), "k");
    lower_kernel(formula_doc(calls), "k");
    lower_kernel(formula_doc(flat), "k");
    validate_document(formula_doc(flat));
  });
}

TEST(Formula, WholeNumbersUpToU64Max) {
  auto e = parse_expression("18446744073709551615");
  EXPECT_TRUE(e->above_int64);
  EXPECT_EQ(static_cast<uint64_t>(e->integer_value), UINT64_MAX);
  auto k = lower_kernel(formula_doc("xor(a, 18446744073709551615)", "u64"), "k");
  bool found = false;
  ir::walk(*k->body, [&](ir::Inst& i) {
    found |= i.is_const() && i.type == Scalar::U64 && i.bits == UINT64_MAX;
  });
  EXPECT_TRUE(found);
  try {
    parse_expression("18446744073709551616");
    ADD_FAILURE() << "no error";
  } catch (const Error& err) {
    EXPECT_EQ(err.message(),
              "column 1: the whole number 18446744073709551616 is too large (at most "
              "18446744073709551615)");
  }
}

TEST(Formula, NegativeLiteralsAreLiterals) {
  // -2147483648 is an i32 literal, not neg(2147483648); -9223372036854775808 an i64 one.
  EXPECT_NO_THROW(lower_kernel(formula_doc("a + -2147483648", "i32"), "k"));
  EXPECT_NO_THROW(lower_kernel(formula_doc("a + -9223372036854775808", "i64"), "k"));
  Error e = lowering_error(formula_doc("a + -129", "i8"));
  EXPECT_NE(e.message().find("the literal -129 does not fit i8"), std::string::npos) << e.message();
}

// AddressSanitizer's redzones make every frame several times larger. The claim is about
// Loom's own frames, so the sanitizer build (tools/bootstrap.sh test) gets a stack as many
// times larger for the same depth.
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LOOM_TEST_UNDER_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(LOOM_TEST_UNDER_ASAN)
constexpr int kSanitizerStackScale = 8;
#else
constexpr int kSanitizerStackScale = 1;
#endif

TEST(FrontEndStack, TheDeepestDocumentIsSafeOnA256KiBStack) {
  // The JSON reader's nesting limit allows regions about 80 levels deep; reading,
  // validating and lowering the deepest such document fits a small thread stack.
  std::string text =
      R"({"format": "loom-graph", "version": 2, "kernels": [{"name": "k", "nodes": [)"
      R"({"id": 1, "type": "var", "params": {"type": "f32"}}, )";
  int depth = 0;
  std::string tail;
  for (;; ++depth) {
    std::string deeper = text + R"({"id": )" + std::to_string(depth + 2) +
                         R"(, "type": "if", "inputs": {"cond": true}, "regions": {"then": [)";
    std::string attempt =
        deeper + R"({"id": 999, "type": "set", "inputs": {"var": "1.ref", "value": 2.0}})" + tail +
        "]}}" + "]}]}";
    try {
      load_document(attempt, "deep.json");
    } catch (const Error&) {
      break;  // one level too deep for the reader
    }
    text = deeper;
    tail += "]}}";
  }
  EXPECT_GT(depth, 60);
  std::string deepest = text +
                        R"({"id": 999, "type": "set", "inputs": {"var": "1.ref", "value": 2.0}})" +
                        tail + "]}]}";
  on_small_stack(256 * kSanitizerStackScale, [&] {
    Document doc = load_document(deepest, "deep.json");
    validate_document(doc);
    lower_kernel(doc, "k");
  });
}

namespace {

// A kernel whose one expr node (id 9) reads the parameters `params` (name, type) on pins of
// the same names; its value initialises a var, so it is lowered even when nothing reads it.
Document formula_over(const std::string& formula,
                      const std::vector<std::pair<std::string, std::string>>& params) {
  Document doc;
  doc.path = "formula.json";
  std::vector<KernelParam> ps;
  std::vector<Node> nodes;
  N expr = N(9, "expr").p("expr", formula);
  int id = 1;
  for (const auto& [name, type] : params) {
    ps.push_back(value_param(name, type));
    nodes.push_back(N(id, "param").p("name", name));
    expr.in(name, ln(id));
    ++id;
  }
  nodes.push_back(expr);
  nodes.push_back(N(10, "var").in("init", ln(9)));
  KernelDecl k = kernel("k", ps, {});
  k.nodes = nodes;
  doc.kernels.push_back(k);
  return doc;
}

std::string formula_error(const std::string& formula,
                          const std::vector<std::pair<std::string, std::string>>& params) {
  try {
    lower_kernel(formula_over(formula, params), "k");
  } catch (const Error& e) {
    EXPECT_EQ(e.place().node, 9) << formula;
    EXPECT_EQ(e.place().pin, "expr") << formula;
    return e.message();
  }
  return "no error";
}

// The IR type of the value a formula gives (the var's allocas).
std::string formula_type(const std::string& formula,
                         const std::vector<std::pair<std::string, std::string>>& params) {
  auto k = lower_kernel(formula_over(formula, params), "k");
  EXPECT_EQ(ir::verify(*k), "") << formula;
  int components = 0;
  Scalar s = Scalar::Void;
  ir::walk(*k->body, [&](ir::Inst& i) {
    if (i.op != ir::Op::Alloca) return;
    ++components;
    s = i.type;
  });
  return std::string(scalar_name(s)) + "*" + std::to_string(components);
}

}  // namespace

// docs/nodes.md: formulas call every pure node type with a value by its name. The test walks
// the node library, so a new node type without a formula form fails here unless it joins the
// exceptions below, each with its reason. Arguments are tried from a few kinds of values
// (first all of one kind, then every mix) until a call lowers.
TEST(Formula, CallsEveryPureNodeTypeOfTheLibrary) {
  const std::map<std::string, std::string> exceptions = {
      {"const", "formulas write literals themselves"},
      {"param", "kernel parameters reach a formula through its input pins"},
      {"member", "argpack members reach a formula through its input pins"},
      {"index", "loop indices reach a formula through its input pins"},
      {"input", "function inputs reach a formula through its input pins"},
      {"shape", "names its field or ndarray by parameter, and formulas name no memory"},
      {"carried", "a while's carried value, named by parameter; it reaches a formula by a pin"},
      {"expr", "the formula itself"},
      {"reroute", "a bend point for links; formulas read their pins directly"},
  };
  const std::vector<std::pair<std::string, std::string>> kinds = {
      {"x", "f32"}, {"i", "i32"}, {"b", "bool"}, {"u", "f32x3"}, {"v", "f32x4"}, {"m", "f32x4x4"}};
  // The first argument list (of `arity` kinds, plus a type when the node needs one) with which
  // `call(args)suffix` lowers; "" when none does.
  auto first_that_lowers = [&](const NodeSpec& s, const std::string& suffix) -> std::string {
    size_t arity = s.inputs.size();
    const ParamSpec* type = s.param("type");
    bool needs_type = detail::find_node_type(s.name)->type_arg && type && type->required;
    std::vector<std::vector<size_t>> tries;
    for (size_t k = 0; k < kinds.size(); ++k) tries.push_back(std::vector<size_t>(arity, k));
    size_t mixes = 1;
    for (size_t i = 0; i < arity; ++i) mixes *= kinds.size();
    for (size_t code = 0; code < mixes; ++code) {
      std::vector<size_t> pick;
      for (size_t i = 0, c = code; i < arity; ++i, c /= kinds.size())
        pick.push_back(c % kinds.size());
      tries.push_back(pick);
    }
    for (const auto& pick : tries) {
      std::string args;
      for (size_t k : pick) args += (args.empty() ? "" : ", ") + kinds[k].first;
      if (needs_type) args += ", i32";
      std::string text = s.name + "(" + args + ")" + suffix;
      try {
        lower_kernel(formula_over(text, kinds), "k");
        return text;
      } catch (const Error&) {
      }
    }
    return "";
  };
  int called = 0;
  for (const NodeSpec& s : node_library()) {
    bool pure_value = !s.effectful && s.regions.empty() && !s.outputs.empty() && !s.any_outputs;
    if (!pure_value) continue;
    if (exceptions.count(s.name)) {
      EXPECT_FALSE(s.formula_call) << s.name << " is callable: take it off the exceptions";
      continue;
    }
    EXPECT_TRUE(s.formula_call) << "formulas cannot call '" << s.name
                                << "': give it a value form, or list it as an exception with why";
    if (!s.formula_call) continue;
    if (s.outputs == std::vector<std::string>{"out"}) {
      EXPECT_NE(first_that_lowers(s, ""), "") << "no call of '" << s.name << "' lowers";
      ++called;
      continue;
    }
    // Several outputs (split): a formula picks each by its pin name.
    for (const std::string& out : s.outputs)
      EXPECT_NE(first_that_lowers(s, "." + out), "") << "no call " << s.name << "(...)." << out;
    ++called;
  }
  for (const auto& [name, why] : exceptions) {
    const NodeSpec* s = find_node_spec(name);
    ASSERT_NE(s, nullptr) << name << " is no node type: drop the exception";
    EXPECT_FALSE(s->effectful) << name << " is ordered: it needs no exception";
  }
  EXPECT_GE(called, 60);
}

TEST(Formula, BitwiseOperatorsAndFloorDivisionLowerThroughTheirNodes) {
  std::vector<std::pair<std::string, std::string>> ints = {{"a", "i32"}, {"b", "i32"}};
  auto k = lower_kernel(formula_over("a << 2 | b >> 1 ^ ~a & b", ints), "k");
  EXPECT_EQ(count_ops(*k, ir::Op::Shl), 1);
  EXPECT_EQ(count_ops(*k, ir::Op::Shr), 1);
  EXPECT_EQ(count_ops(*k, ir::Op::BitOr), 1);
  EXPECT_EQ(count_ops(*k, ir::Op::BitXor), 1);
  EXPECT_EQ(count_ops(*k, ir::Op::BitAnd), 1);
  EXPECT_EQ(count_ops(*k, ir::Op::BitNot), 1);
  // On bools the same operators are logic (the nodes' rules): & and | are and / or.
  k = lower_kernel(formula_over("(a < b) & (b < 3) | ~(a == 0)", ints), "k");
  EXPECT_EQ(count_ops(*k, ir::Op::LogicAnd), 1);
  EXPECT_EQ(count_ops(*k, ir::Op::LogicOr), 1);
  EXPECT_EQ(count_ops(*k, ir::Op::LogicNot), 1);
  EXPECT_EQ(formula_type("a & 1 == 0", ints), "bool*1");  // (a & 1) == 0
  EXPECT_EQ(formula_type("a // b", ints), "i32*1");
  EXPECT_EQ(formula_type("a // 2.0", ints), "f32*1");
  EXPECT_EQ(formula_type("a // b", {{"a", "f64"}, {"b", "f64"}}), "f64*1");
  k = lower_kernel(formula_over("a // b", {{"a", "f32"}, {"b", "f32"}}), "k");
  EXPECT_EQ(count_ops(*k, ir::Op::Floor), 1);  // floor(a / b)
  EXPECT_EQ(count_ops(*k, ir::Op::Div), 1);
  // Unsigned: truncation is the floor already.
  k = lower_kernel(formula_over("a // b", {{"a", "u32"}, {"b", "u32"}}), "k");
  EXPECT_EQ(count_ops(*k, ir::Op::Select), 0);
  EXPECT_EQ(formula_type("a // b", {{"a", "i32x3"}, {"b", "i32"}}), "i32*3");
  // The node rules hold: no bit operations on floats, no shifts of floats.
  EXPECT_NE(formula_error("a & b", {{"a", "f32"}, {"b", "f32"}}).find("needs bools or integers"),
            std::string::npos);
  EXPECT_NE(formula_error("a << 1", {{"a", "f32"}}).find("'shl' needs integers"),
            std::string::npos);
}

TEST(Formula, CastMatricesAndSplitAreCalls) {
  EXPECT_EQ(formula_type("cast(x, u8)", {{"x", "f32"}}), "u8*1");
  EXPECT_EQ(formula_type("cast(v, i32)", {{"v", "f32x3"}}), "i32*3");
  EXPECT_EQ(formula_type("cast(v, f64x3)", {{"v", "f32x3"}}), "f64*3");
  EXPECT_EQ(formula_type("cast(300, u8) + x", {{"x", "u8"}}), "u8*1");
  EXPECT_EQ(formula_type("mat2(a, b)", {{"a", "f32x2"}, {"b", "f32x2"}}), "f32*4");
  EXPECT_EQ(formula_type("mat3(a, a, b)", {{"a", "f32x3"}, {"b", "i32x3"}}), "f32*9");
  EXPECT_EQ(formula_type("mat4(a, a, a, a).c3", {{"a", "f32x4"}}), "f32*4");
  EXPECT_EQ(formula_type("m.c1.yz", {{"m", "f32x3x3"}}), "f32*2");
  EXPECT_EQ(formula_type("split(m).c0", {{"m", "f64x2x2"}}), "f64*2");
  EXPECT_EQ(formula_type("split(v).y", {{"v", "i32x4"}}), "i32*1");
  // The vec nodes' component type: the node's `type` param, a formula's last argument.
  EXPECT_EQ(formula_type("vec3(1, 2, 3, f64)", {}), "f64*3");
  EXPECT_EQ(formula_type("vec2(x, u8)", {{"x", "i32"}}), "u8*2");
}

TEST(Formula, VectorsJoinAsTheNodesDo) {
  std::vector<std::pair<std::string, std::string>> p = {
      {"s", "f32"}, {"v2", "f32x2"}, {"v3", "f32x3"}, {"m", "f32x2x2"}};
  EXPECT_EQ(formula_type("vec4(s, v3)", p), "f32*4");
  EXPECT_EQ(formula_type("vec4(v3, s)", p), "f32*4");
  EXPECT_EQ(formula_type("vec4(v2, v2)", p), "f32*4");
  EXPECT_EQ(formula_type("vec3(v2, 1)", p), "f32*3");
  EXPECT_EQ(formula_type("vec3(0.5)", p), "f32*3");  // one scalar fills every component
  EXPECT_EQ(formula_type("vec4(1, 2, 3, 4)", p), "i32*4");
  EXPECT_EQ(formula_error("vec4(v3, v2)", p),
            "formula 'vec4(v3, v2)', column 1: 'vec4': vec4 takes 4 components, but x is f32x3, "
            "y is f32x2: 5 so far");
  EXPECT_EQ(formula_error("vec3(v2)", p),
            "formula 'vec3(v2)', column 1: 'vec3': vec3 needs 3 components, but x is f32x2: 2 in "
            "all");
  EXPECT_NE(formula_error("vec4(m)", p).find("is the matrix f32x2x2"), std::string::npos);
}

// The vec nodes take the same forms: components of the inputs given, in pin order.
TEST(Formula, VectorNodesJoinComponents) {
  auto vec_node = [](const std::string& type, std::vector<std::pair<std::string, Link>> pins,
                     const std::string& component_type = "") {
    Document doc;
    doc.path = "vec.json";
    N vec = N(5, type);
    for (const auto& [pin, link] : pins) vec.in(pin, link);
    if (!component_type.empty()) vec.p("type", component_type);
    doc.kernels.push_back(kernel(
        "k", {value_param("s", "f32"), value_param("v2", "f32x2"), value_param("v3", "f32x3")},
        {N(1, "param").p("name", "s"), N(2, "param").p("name", "v2"), N(3, "param").p("name", "v3"),
         vec, N(6, "return").in("r0", ln(5))}));
    doc.kernels[0].returns = {type == "vec2" ? "f32x2" : type == "vec3" ? "f32x3" : "f32x4"};
    return doc;
  };
  EXPECT_NO_THROW(lower_kernel(vec_node("vec4", {{"x", ln(1)}, {"y", ln(3)}}), "k"));
  EXPECT_NO_THROW(lower_kernel(vec_node("vec4", {{"x", ln(3)}, {"y", ln(1)}}), "k"));
  EXPECT_NO_THROW(lower_kernel(vec_node("vec4", {{"x", ln(2)}, {"y", ln(2)}}), "k"));
  EXPECT_NO_THROW(lower_kernel(vec_node("vec3", {{"x", ln(1)}}), "k"));  // splat
  EXPECT_NO_THROW(lower_kernel(vec_node("vec3", {{"x", ln(2)}, {"y", ln(1)}}, "f32"), "k"));
  auto error = [](const Document& doc) {
    try {
      lower_kernel(doc, "k");
    } catch (const Error& e) {
      EXPECT_EQ(e.place().node, 5);
      return e.place().pin + ": " + e.message();
    }
    return std::string("no error");
  };
  EXPECT_EQ(error(vec_node("vec4", {{"x", ln(3)}, {"y", ln(2)}})),
            "y: vec4 takes 4 components, but x is f32x3, y is f32x2: 5 so far");
  EXPECT_EQ(error(vec_node("vec4", {{"x", ln(2)}, {"y", ln(1)}})),
            "z: vec4 needs 4 components, but x is f32x2, y is f32: 3 in all");
  EXPECT_EQ(error(vec_node("vec4", {{"x", ln(1)}, {"z", ln(3)}})),
            "y: input 'y' of this vec4 node needs a link or a value: 'z' has one, and the inputs "
            "fill x, y, z, w in order");
}

TEST(Formula, ErrorsNameTheColumnAndWhatWasExpected) {
  auto parse_error = [](const std::string& text) {
    try {
      parse_expression(text);
    } catch (const Error& e) {
      return e.message();
    }
    return std::string("no error");
  };
  EXPECT_EQ(parse_error("a >> b"), "no error");
  EXPECT_EQ(parse_error("a >>> b"),
            "column 5: unexpected '>': expected a value (a number, a name, a call or '(')");
  EXPECT_EQ(parse_error("a = b"),
            "column 3: unexpected '=': expected an operator or the end of the formula ('==' "
            "compares)");
  EXPECT_EQ(parse_error("max(a b)"),
            "column 7: expected ')' or ',' in the call of 'max' at column 1, found 'b'");
  EXPECT_EQ(parse_error("a ~ b"),
            "column 3: unexpected '~': expected an operator or the end of the formula");
  EXPECT_EQ(parse_error("a // "),
            "column 6: the formula ends early: expected a value (a number, a name, a call or '(')");
  EXPECT_EQ(parse_error("m.c4"),
            "column 3: expected components after '.', like .x, .xy or .rgb, or a matrix column "
            ".c0 to .c3");
  EXPECT_EQ(parse_error("a ? b : "),
            "column 9: the formula ends early: expected a value (a number, a name, a call or '(')");
  // Lowering errors name the column too, and what was expected there.
  std::vector<std::pair<std::string, std::string>> p = {
      {"x", "f32"}, {"v", "f32x3"}, {"m", "f32x3x3"}};
  EXPECT_EQ(formula_error("x + u8", p),
            "formula 'x + u8', column 5: 'u8' is a type, not a value: types are the last argument "
            "of cast(x, u8) or vec2..vec4");
  EXPECT_EQ(formula_error("sin(x, f32)", p),
            "formula 'sin(x, f32)', column 8: 'f32' is a type, not a value: types are the last "
            "argument of cast(x, f32) or vec2..vec4");
  EXPECT_EQ(formula_error("cast(x)", p),
            "formula 'cast(x)', column 1: 'cast': cast needs the type to convert to: cast(x, u8)");
  EXPECT_EQ(formula_error("split(v) + 1", p),
            "formula 'split(v) + 1', column 1: 'split' gives several values (x, y, z, w, c0, c1, "
            "c2, c3): pick one, like split(v).y or split(m).c1");
  EXPECT_EQ(formula_error("m.c3", p), "formula 'm.c3', column 2: f32x3x3 has no column c3");
  EXPECT_EQ(formula_error("v.c0", p),
            "formula 'v.c0', column 2: '.c0' picks a matrix column, and f32x3 is no matrix "
            "(components are .x .y .z .w)");
  EXPECT_EQ(formula_error("m.x", p),
            "formula 'm.x', column 2: '.x' needs a vector, not f32x3x3 (a matrix column is .c0 "
            "to .c3)");
  EXPECT_EQ(formula_error("x + nope(v)", p),
            "formula 'x + nope(v)', column 5: unknown function 'nope'");
  EXPECT_EQ(formula_error("x * y", p),
            "formula 'x * y', column 5: uses 'y' but the node has no input 'y'");
  EXPECT_EQ(formula_error("f32(x)", p),
            "formula 'f32(x)', column 1: unknown function 'f32' (a conversion is cast(x, f32))");
  // A call's error names the argument by the node's pin.
  EXPECT_EQ(formula_error("dot(v, m)", p),
            "formula 'dot(v, m)', column 1: 'dot': dot needs two vectors of one size, got f32x3 "
            "and f32x3x3");
  EXPECT_EQ(formula_error("v + vec2(x, x)", p),
            "formula 'v + vec2(x, x)', column 3: 'add': 'a' is f32x3 but 'b' is f32x2; sizes must "
            "match");
}

namespace {

std::string parse_error(const std::string& text) {
  try {
    parse_expression(text);
  } catch (const Error& e) {
    return e.message();
  }
  return "no error";
}

// The f32 constants of a lowered kernel.
std::vector<double> float_consts(ir::Kernel& k) {
  std::vector<double> out;
  ir::walk(*k.body, [&](ir::Inst& i) {
    if (i.is_const() && i.type == Scalar::F32) out.push_back(i.float_value());
  });
  return out;
}

}  // namespace

// Whole numbers are spelled as in Python and Taichi: hex, binary and '_' separators give
// integer literals with the decimal ones' rules; strtod's hex floats, inf and nan are not
// literals.
TEST(Formula, HexBinaryAndSeparatedWholeNumbers) {
  struct Case {
    const char* text;
    uint64_t value;
  };
  for (Case c : {Case{"0x10", 16}, Case{"0XfF", 255}, Case{"0b101", 5}, Case{"0B1_1", 3},
                 Case{"1_000", 1000}, Case{"0x_ff", 255}, Case{"0xffff_ffff_ffff_ffff", UINT64_MAX},
                 Case{"007", 7}}) {
    auto e = parse_expression(c.text);
    EXPECT_EQ(e->kind, Expr::Kind::Number) << c.text;
    EXPECT_TRUE(e->integer) << c.text;
    EXPECT_EQ(static_cast<uint64_t>(e->integer_value), c.value) << c.text;
    EXPECT_EQ(e->above_int64, c.value > uint64_t{INT64_MAX}) << c.text;
  }
  auto f = parse_expression("1_000.5e-1_0");
  EXPECT_FALSE(f->integer);
  EXPECT_DOUBLE_EQ(f->number, 1000.5e-10);
  EXPECT_DOUBLE_EQ(parse_expression(".5")->number, 0.5);
  EXPECT_DOUBLE_EQ(parse_expression("5.")->number, 5.0);

  // 0x10 meets a float as 16, not as a hex float; bitwise operators take hex masks.
  std::vector<std::pair<std::string, std::string>> p = {{"x", "f32"}, {"v", "i32"}, {"b", "u8"}};
  EXPECT_EQ(formula_type("0x10 + 0.0", p), "f32*1");
  EXPECT_EQ(formula_type("v & 0xff", p), "i32*1");
  EXPECT_EQ(formula_type("b | 0b1000_0000", p), "u8*1");  // weak: takes u8
  auto k = lower_kernel(formula_doc("a + 0x10"), "k");
  EXPECT_EQ(float_consts(*k), std::vector<double>{16.0});
  // Range-checked as decimal literals are.
  EXPECT_NE(formula_error("b + 0x100", p).find("the literal 256 does not fit u8"),
            std::string::npos)
      << formula_error("b + 0x100", p);

  EXPECT_EQ(parse_error("0x1p4"),
            "column 4: hex floats like 0x1p4 are not formula literals: write the value in decimal");
  EXPECT_EQ(parse_error("a + 0x1.8"),
            "column 8: hex floats like 0x1p4 are not formula literals: write the value in decimal");
  EXPECT_EQ(parse_error("0x"), "column 3: expected hex digits (0-9, a-f) after '0x'");
  EXPECT_EQ(parse_error("0b2"), "column 3: expected binary digits (0 or 1) after '0b'");
  EXPECT_EQ(parse_error("0b102"),
            "column 5: unexpected '2' in a number: binary digits are 0 and 1");
  EXPECT_EQ(parse_error("0xfg"), "column 4: unexpected 'g' in a number");
  EXPECT_EQ(parse_error("2.5f"),
            "column 4: unexpected 'f' in a number: floats take no suffix (2.5, not 2.5f)");
  EXPECT_EQ(parse_error("1__0"),
            "column 2: '_' separates digits: one '_' between two digits, "
            "like 1_000");
  EXPECT_EQ(parse_error("1_ + a"),
            "column 2: '_' separates digits: one '_' between two digits, "
            "like 1_000");
  EXPECT_EQ(parse_error("1._5"),
            "column 3: '_' separates digits: one '_' between two digits, "
            "like 1_000");
  EXPECT_EQ(parse_error("1e_5"),
            "column 3: '_' separates digits: one '_' between two digits, "
            "like 1_000");
  EXPECT_EQ(parse_error("a + ."), "column 5: expected a number: digits before or after '.'");
  EXPECT_EQ(parse_error("1e+"), "column 4: expected the digits of the exponent after 'e'");
  EXPECT_EQ(parse_error("a * 1e999"),
            "column 5: the number 1e999 is too large for a float (at most about 1.8e308)");
  EXPECT_EQ(parse_error("0x1_0000_0000_0000_0000"),
            "column 1: the whole number 0x1_0000_0000_0000_0000 is too large (at most "
            "18446744073709551615, 0xffffffffffffffff)");
  // inf and nan are names, never numbers; as names they get a hint.
  EXPECT_EQ(formula_error("x < inf", p),
            "formula 'x < inf', column 5: uses 'inf' but the node has no input 'inf' (formulas "
            "have no 'inf' literal: give it as an input)");
}

// What Python (and Taichi) writes, and formulas spell differently, gets a hint.
TEST(Formula, PythonWordsGetHints) {
  EXPECT_EQ(parse_error("a and b"),
            "column 3: unexpected 'and': expected an operator or the end of the formula (use && "
            "/ || / ! for and / or / not)");
  EXPECT_EQ(parse_error("a > 0 or b"),
            "column 7: unexpected 'or': expected an operator or the end of the formula (use && "
            "/ || / ! for and / or / not)");
  EXPECT_EQ(parse_error("not (a > 0)"),
            "column 1: unexpected 'not' (use && / || / ! for and / or / not)");
  EXPECT_EQ(parse_error("x if c else y"),
            "column 3: unexpected 'if': expected an operator or the end of the formula (use c ? "
            "x : y for x if c else y)");
  EXPECT_EQ(parse_error("max(a if c else b, 1)"),
            "column 7: expected ')' or ',' in the call of 'max' at column 1, found 'if' (use c ? "
            "x : y for x if c else y)");
  EXPECT_EQ(parse_error("math.sqrt(x)"),
            "column 6: '.sqrt' is no part of a value: functions are called by their node name: "
            "sqrt(x)");
  EXPECT_EQ(parse_error("ti.max(a, b)"),
            "column 4: '.max' is no part of a value: functions are called by their node name: "
            "max(x)");
  EXPECT_EQ(parse_error("a ** 2 ** b"), "no error");
  EXPECT_EQ(parse_error("not"), "no error");  // a pin may be named so
  std::vector<std::pair<std::string, std::string>> p = {{"x", "f32"}};
  EXPECT_EQ(formula_error("True && x > 0", p),
            "formula 'True && x > 0', column 1: uses 'True' but the node has no input 'True' "
            "(booleans are true / false)");
  // Parse errors after lowering read like every other formula error: "formula '...', column".
  EXPECT_EQ(formula_error("x and x", p),
            "formula 'x and x', column 3: unexpected 'and': expected an operator or the end of "
            "the formula (use && / || / ! for and / or / not)");
  EXPECT_EQ(formula_error("x +", p),
            "formula 'x +', column 4: the formula ends early: expected a value (a number, a "
            "name, a call or '(')");
}
