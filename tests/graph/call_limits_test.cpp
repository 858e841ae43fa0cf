// Function calls from hostile documents: chains too deep for the inliner, calls that multiply
// into millions of nodes, long recursive cycles. Each is an error naming its place, found
// without deep recursion, on a thread with a small stack too (editors and engines validate on
// their own threads).
#include <gtest/gtest.h>
#include <pthread.h>

#include <functional>
#include <string>

#include "compiler/graph/graph_builder.h"
#include "compiler/graph/infer.h"
#include "compiler/graph/lower.h"
#include "compiler/graph/validate.h"
#include "compiler/ir/inst.h"
#include "runtime/common/error.h"

using namespace loom;
using namespace loom::graph;
using namespace loom::graph::build;

namespace {

std::string fname(int i) { return "f" + std::to_string(i); }

// Functions f0 .. f(n-1) of one f32 in and out: each calls the next `fan` times in sequence
// (node 2, then 4, 6, ...), the last adds 1. `cycle` makes the last call f0 instead.
Document chain(int n, int fan = 1, bool cycle = false) {
  Document doc;
  doc.path = "chain.json";
  for (int i = 0; i < n; ++i) {
    FunctionDecl f;
    f.name = fname(i);
    f.inputs = {{"v", "f32"}};
    f.outputs = {{"r", "f32"}};
    f.nodes.push_back(N(1, "input").p("name", "v"));
    if (i + 1 < n || cycle) {
      Link prev = ln(1);
      for (int c = 0; c < fan; ++c) {
        int id = 2 + 2 * c;
        f.nodes.push_back(N(id, "call").p("function", fname((i + 1) % n)).in("v", prev));
        prev = ln(id, "r");
      }
      f.nodes.push_back(N(3, "output").in("r", prev));
    } else {
      f.nodes.push_back(N(2, "add").in("a", ln(1)).in("b", 1.0));
      f.nodes.push_back(N(3, "output").in("r", ln(2)));
    }
    doc.functions.push_back(f);
  }
  doc.kernels.push_back(
      kernel("k", {value_param("x", "f32")},
             {N(1, "param").p("name", "x"), N(2, "call").p("function", "f0").in("v", ln(1)),
              N(3, "return").in("r0", ln(2, "r"))}));
  doc.kernels.back().returns = {"f32"};
  return doc;
}

Error error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "no error";
  return Error("none");
}

// Runs `f` on a thread with a stack of `bytes`: a recursion that grows with the document
// overflows it and kills the test.
void on_small_stack(size_t bytes, std::function<void()> f) {
#if defined(__SANITIZE_ADDRESS__)
  bytes *= 4;  // AddressSanitizer's frames are several times larger
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  bytes *= 4;
#endif
#endif
  pthread_attr_t attr;
  ASSERT_EQ(pthread_attr_init(&attr), 0);
  ASSERT_EQ(pthread_attr_setstacksize(&attr, bytes), 0);
  pthread_t thread;
  auto run = [](void* arg) -> void* {
    (*static_cast<std::function<void()>*>(arg))();
    return nullptr;
  };
  ASSERT_EQ(pthread_create(&thread, &attr, run, &f), 0);
  pthread_join(thread, nullptr);
  pthread_attr_destroy(&attr);
}

constexpr size_t kSmallStack = 256 * 1024;

}  // namespace

TEST(CallLimits, SixtyFourNestedFunctionsValidateAndLower) {
  Document doc = chain(64);
  on_small_stack(kSmallStack, [&] {
    EXPECT_NO_THROW(validate_document(doc));
    std::unique_ptr<ir::Kernel> k;
    EXPECT_NO_THROW(k = lower_kernel(doc, "k", {}));
    EXPECT_NE(k, nullptr);
  });
}

TEST(CallLimits, ADeeperChainIsRefusedAtTheCallThatGoesTooDeep) {
  Document doc = chain(65);
  Error e = error_of([&] { validate_document(doc); });
  EXPECT_EQ(e.place().document, "chain.json");
  EXPECT_EQ(e.place().kernel, "f0");
  EXPECT_TRUE(e.place().function);
  EXPECT_EQ(e.place().node, 2);
  EXPECT_EQ(e.place().pin, "function");
  EXPECT_EQ(e.message(),
            "calls nest more than 64 functions deep from this call (f0 -> f1 -> f2 -> ... (59 "
            "more) -> f62 -> f63 -> f64); a kernel inlines every call, and deeper nesting is "
            "refused");
}

TEST(CallLimits, LoweringWithoutValidationStopsAtTheDepthLimit) {
  // lower_kernel is public and runs on documents nobody validated.
  Document doc = chain(100);
  Error e = error_of([&] { lower_kernel(doc, "k", {}); });
  EXPECT_EQ(e.place().kernel, "f63");  // the 64th function, calling the 65th
  EXPECT_TRUE(e.place().function);
  EXPECT_EQ(e.place().node, 2);
  EXPECT_EQ(e.place().pin, "function");
  EXPECT_EQ(e.message(),
            "kernel 'k': calls nest more than 64 functions deep (f0 -> f1 -> f2 -> ... (59 more) "
            "-> f62 -> f63 -> f64)");
}

TEST(CallLimits, FiveThousandNestedCallsFailCleanlyOnASmallStack) {
  // Used to overflow the stack in function inlining (and take minutes below that).
  Document doc = chain(5000);
  on_small_stack(kSmallStack, [&] {
    Error e = error_of([&] { validate_document(doc); });
    EXPECT_EQ(e.place().kernel, "f4935");
    EXPECT_NE(e.message().find("calls nest more than 64 functions deep"), std::string::npos);
    Error e2 = error_of([&] { lower_kernel(doc, "k", {}); });
    EXPECT_EQ(e2.place().kernel, "f63");
    GraphTypes types = infer_graph_types(doc, "k", false);
    ASSERT_FALSE(types.problems.empty());
    EXPECT_NE(types.problems[0].message.find("calls nest more than 64"), std::string::npos);
  });
}

TEST(CallLimits, ALongRecursiveCycleIsNamedBriefly) {
  Document doc = chain(500, 1, /*cycle=*/true);
  on_small_stack(kSmallStack, [&] {
    Error e = error_of([&] { validate_document(doc); });
    EXPECT_EQ(e.place().kernel, "f499");
    EXPECT_EQ(e.place().node, 2);
    EXPECT_EQ(e.message(),
              "function 'f0' calls itself (f0 -> f1 -> f2 -> ... (495 more) -> f498 -> f499 -> "
              "f0); recursion is not supported");
  });
}

TEST(CallLimits, CallsThatMultiplyAreStoppedByTheInliningBudget) {
  // Each function calls the next twice: 2^40 copies of the last one. Validation checks each
  // function once; lowering the kernel stops at the budget of inlined nodes.
  Document doc = chain(40, /*fan=*/2);
  Error e = error_of([&] { validate_document(doc); });
  EXPECT_TRUE(e.place().function);
  EXPECT_EQ(e.place().pin, "function");
  EXPECT_NE(e.message().find("kernel 'k': its calls inline more than 65536 nodes of functions"),
            std::string::npos)
      << e.what();
  // Below the budget the same shape lowers.
  EXPECT_NO_THROW(lower_kernel(chain(8, 2), "k", {}));
}

TEST(CallLimits, ACalleesErrorIsFoundThoughItsCallersAreCheckedAgainstItsPorts) {
  // Each function is checked once, its calls against the callees' declared ports; an error
  // inside a callee is still found, at its own node.
  Document doc = chain(3);
  doc.functions[2].nodes[1] =
      N(2, "add").in("a", ln(1)).in("b", list({lit(1.0), lit(2.0), lit(3.0)}));
  Error e = error_of([&] { validate_document(doc); });
  EXPECT_EQ(e.place().kernel, "f2");
  EXPECT_EQ(e.place().node, 3);
  EXPECT_NE(e.message().find("f32x3"), std::string::npos) << e.what();
  // And a call using a callee's output as the wrong type is the caller's error.
  Document doc2 = chain(3);
  doc2.functions[1].outputs = {{"r", "i32"}};
  doc2.functions[0].nodes[2] = N(3, "output").in("r", ln(2, "r"));
  doc2.functions[0].outputs = {{"r", "bool"}};
  Error e2 = error_of([&] { validate_document(doc2); });
  EXPECT_EQ(e2.place().kernel, "f0");
  EXPECT_EQ(e2.place().node, 3);
}
