// Formulas (`expr` nodes) of any length, bounded nesting, and limits that stay safe on the
// small thread stacks of editors and engine plugins.
#include <gtest/gtest.h>

#include <pthread.h>

#include <functional>
#include <string>

#include "compiler/graph/document_json.h"
#include "compiler/graph/expression.h"
#include "compiler/graph/graph_builder.h"
#include "compiler/graph/lower.h"
#include "compiler/graph/validate.h"
#include "compiler/ir/inst.h"
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
