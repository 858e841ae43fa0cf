// Tolerant type inference (infer.h): every node's output types and every node's own problem.
#include <gtest/gtest.h>

#include <filesystem>

#include "compiler/graph/document_json.h"
#include "compiler/graph/graph_builder.h"
#include "compiler/graph/infer.h"
#include "compiler/graph/validate.h"
#include "runtime/common/error.h"

using namespace loom;
using namespace loom::graph;
using namespace loom::graph::build;

namespace {

Document doc_with(KernelDecl k) {
  Document doc;
  doc.kernels.push_back(std::move(k));
  return doc;
}

std::string out_text(const GraphTypes& t, int node, const std::string& pin = "out") {
  const PinValue* v = t.output(node, pin);
  return v ? pin_value_text(*v) : "none";
}

}  // namespace

TEST(Infer, TypesEveryKindOfOutput) {
  Document doc = doc_with(kernel(
      "k", {value_param("v", "f32x3"), ndarray_param("x", "f32", 1)},
      {N(1, "param").p("name", "v"), N(2, "param").p("name", "x"), N(3, "var").p("type", "i16"),
       N(4, "range_for")
           .in("end0", 4)
           .region("body",
                   {N(5, "add").in("a", ln(1)).in("b", ln(4, "i0")),
                    N(6, "store").in("array", ln(2)).in("i0", ln(4, "i0")).in("value", 1.5)}),
       N(7, "const").p("value", 2), N(8, "length").in("a", ln(1)),
       N(9, "reroute").in("in", ln(3, "ref"))}));
  GraphTypes t = infer_graph_types(doc, "k", false);
  EXPECT_TRUE(t.problems.empty()) << t.problems[0].message;
  EXPECT_EQ(out_text(t, 1), "f32x3");
  EXPECT_EQ(out_text(t, 2), "array of f32");
  EXPECT_EQ(out_text(t, 3, "ref"), "ref i16");
  EXPECT_EQ(out_text(t, 4, "i0"), "i32");  // a loop index, read inside the body
  EXPECT_EQ(out_text(t, 5), "f32x3");
  EXPECT_EQ(out_text(t, 7), "i32 literal");
  EXPECT_EQ(out_text(t, 8), "f32");
  EXPECT_EQ(out_text(t, 9), "ref i16");
}

TEST(Infer, EveryFailingNodeIsReportedOnceAndItsUsersAreQuiet) {
  Document doc =
      doc_with(kernel("k", {value_param("v", "f32x3"), value_param("w", "f32x2")},
                      {N(1, "param").p("name", "v"), N(2, "param").p("name", "w"),
                       N(3, "add").in("a", ln(1)).in("b", ln(2)),  // f32x3 + f32x2: a problem
                       N(4, "mul").in("a", ln(3)).in("b", 2),      // uses 3: quiet
                       N(5, "add").in("a", ln(1)),  // b missing: a problem, still typed
                       N(6, "cross").in("a", ln(5)).in("b", ln(1)),  // fine
                       N(7, "sqrt").in("a", ln(99))}));              // dangling link
  GraphTypes t = infer_graph_types(doc, "k", false);
  ASSERT_EQ(t.problems.size(), 3u);
  EXPECT_EQ(t.problems[0].node, 3);
  EXPECT_EQ(t.problems[1].node, 5);
  EXPECT_EQ(t.problems[1].pin, "b");
  EXPECT_EQ(t.problems[1].message, "input 'b' of this add node needs a link or a value");
  EXPECT_EQ(t.problems[2].node, 7);
  EXPECT_EQ(t.problems[2].message, "link to node 99, which does not exist");
  EXPECT_EQ(t.problem_of(4), nullptr);
  EXPECT_EQ(out_text(t, 4), "none");
  EXPECT_EQ(out_text(t, 5), "f32x3");
  EXPECT_EQ(out_text(t, 6), "f32x3");
  // validate_document stops at one of them (structural checks come before types).
  try {
    validate_document(doc);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    bool found = false;
    for (const NodeProblem& p : t.problems)
      found |= p.node == e.place().node && p.message == e.message();
    EXPECT_TRUE(found) << e.what();
  }
}

TEST(Infer, UnfinishedLoopStillTypesItsBody) {
  Document doc =
      doc_with(kernel("k", {},
                      {N(1, "range_for")
                           .region("body", {N(2, "const").p("value", 1.5),
                                            N(3, "cast").in("a", ln(2)).p("type", "i32")})}));
  GraphTypes t = infer_graph_types(doc, "k", false);
  ASSERT_EQ(t.problems.size(), 1u);
  EXPECT_EQ(t.problems[0].pin, "end0");
  EXPECT_EQ(out_text(t, 3), "i32");
}

TEST(Infer, FunctionsAndCallsIntoBrokenFunctions) {
  Document doc;
  FunctionDecl f;
  f.name = "spring";
  f.inputs = {{"x", "f32x3"}};
  f.outputs = {{"force", "f32x3"}};
  f.nodes = {N(1, "input").p("name", "x"), N(2, "mul").in("a", ln(1)).in("b", -4.0),
             N(3, "output").in("force", ln(2))};
  doc.functions.push_back(f);
  doc.kernels.push_back(
      kernel("k", {value_param("p", "f32x3")},
             {N(1, "param").p("name", "p"), N(2, "call").p("function", "spring").in("x", ln(1))}));
  GraphTypes ft = infer_graph_types(doc, "spring", true);
  EXPECT_TRUE(ft.problems.empty());
  EXPECT_EQ(out_text(ft, 2), "f32x3");
  GraphTypes kt = infer_graph_types(doc, "k", false);
  EXPECT_TRUE(kt.problems.empty());
  EXPECT_EQ(out_text(kt, 2, "force"), "f32x3");

  // Broken inside: the function names its node; a kernel calling it blames the call node.
  doc.functions[0].nodes[1] = N(2, "cross").in("a", ln(1)).in("b", 2.0);
  doc.functions[0].nodes.push_back(N(4, "sqrt").in("a", true));
  ft = infer_graph_types(doc, "spring", true);
  ASSERT_FALSE(ft.problems.empty());
  EXPECT_EQ(ft.problems[0].node, 2);
  kt = infer_graph_types(doc, "k", false);
  ASSERT_EQ(kt.problems.size(), 1u);
  EXPECT_EQ(kt.problems[0].node, 2);
  EXPECT_NE(kt.problems[0].message.find("in function 'spring', node 2: "), std::string::npos)
      << kt.problems[0].message;

  EXPECT_EQ(infer_graph_types(doc, "nope", true).problems[0].message,
            "the document has no function 'nope'");
}

TEST(Infer, CyclesAreProblemsNotHangs) {
  Document doc = doc_with(kernel("k", {},
                                 {N(1, "add").in("a", ln(2)).in("b", 1),
                                  N(2, "mul").in("a", ln(1)).in("b", 2), N(3, "neg").in("a", 1)}));
  GraphTypes t = infer_graph_types(doc, "k", false);
  ASSERT_EQ(t.problems.size(), 1u);
  EXPECT_NE(t.problems[0].message.find("cycle"), std::string::npos);
  EXPECT_EQ(out_text(t, 3), "i32 literal");
}

TEST(Infer, SampleGraphsHaveNoProblems) {
  int kernels = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(LOOM_SOURCE_DIR) + "/assets/graphs")) {
    Document doc = load_document_file(entry.path().string());
    for (const KernelDecl& k : doc.kernels) {
      GraphTypes t = infer_graph_types(doc, k.name, false);
      EXPECT_TRUE(t.problems.empty())
          << entry.path() << " " << k.name << ": " << t.problems[0].message;
      EXPECT_FALSE(t.outputs.empty());
      ++kernels;
    }
    for (const FunctionDecl& f : doc.functions)
      EXPECT_TRUE(infer_graph_types(doc, f.name, true).problems.empty()) << f.name;
  }
  EXPECT_GT(kernels, 5);
}

TEST(Infer, UnknownNodeTypesAreProblemsOfTheirOwn) {
  Document doc = doc_with(kernel(
      "k", {}, {N(1, "sine").in("a", 1.0), N(2, "abs").in("a", ln(1)), N(3, "neg").in("a", 2)}));
  GraphTypes t = infer_graph_types(doc, "k", false);
  ASSERT_EQ(t.problems.size(), 1u);  // 2 reads 1: quiet
  EXPECT_EQ(t.problems[0].node, 1);
  EXPECT_EQ(t.problems[0].message, "unknown node type 'sine'");
  EXPECT_EQ(out_text(t, 3), "i32 literal");
}
