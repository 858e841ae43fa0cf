// One test per kind of document error: the message and the node/pin in the Place.
#include <gtest/gtest.h>

#include "compiler/graph/graph_builder.h"
#include "compiler/graph/lower.h"
#include "compiler/graph/validate.h"
#include "compiler/ir/inst.h"
#include "compiler/ir/verifier.h"
#include "runtime/common/error.h"

using namespace loom;
using namespace loom::graph;
using namespace loom::graph::build;

namespace {

Document doc_with(KernelDecl k) {
  Document doc;
  doc.path = "cloth.json";
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

// Runs validate_document and returns the error (fails the test if none).
Error validation_error(const Document& doc) {
  try {
    validate_document(doc);
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "no error";
  return Error("none");
}

#define EXPECT_PLACE(err, kernel_name, node_id, pin_name) \
  do {                                                    \
    EXPECT_EQ((err).place().document, "cloth.json");      \
    EXPECT_EQ((err).place().kernel, kernel_name);         \
    EXPECT_EQ((err).place().node, node_id);               \
    EXPECT_EQ((err).place().pin, pin_name);               \
  } while (0)

#define EXPECT_MESSAGE(err, text) \
  EXPECT_NE((err).message().find(text), std::string::npos) << (err).what()

}  // namespace

TEST(Validate, AcceptsGoodDocument) {
  Document doc = doc_with(kernel("k", {value_param("a", "f32")},
                                 {N(1, "param").p("name", "a"),
                                  N(2, "store").p("field", "x").in("i0", 0).in("value", ln(1))}));
  doc.fields.push_back(field("x", "f32", {4}));
  Pipeline p;
  p.name = "step";
  p.launches.push_back({"k", {{"a", lit(1.5)}}});
  doc.pipelines.push_back(p);
  EXPECT_NO_THROW(validate_document(doc));
}

TEST(Validate, UnknownNodeType) {
  Error e = validation_error(
      doc_with(kernel("k", {}, {N(1, "const").p("value", 1), N(2, "sine").in("a", ln(1))})));
  EXPECT_PLACE(e, "k", 2, "");
  EXPECT_MESSAGE(e, "unknown node type 'sine'");
}

TEST(Validate, UnknownPin) {
  Error e = validation_error(doc_with(kernel("k", {}, {N(1, "sin").in("a", 1.0).in("b", 2.0)})));
  EXPECT_PLACE(e, "k", 1, "b");
  EXPECT_MESSAGE(e, "has no input 'b'");
}

TEST(Validate, MissingPin) {
  Error e = validation_error(doc_with(kernel("k", {}, {N(1, "add").in("a", 1.0)})));
  EXPECT_PLACE(e, "k", 1, "b");
  EXPECT_MESSAGE(e, "input 'b' of this add node needs a link or a value");
}

TEST(Validate, DanglingLink) {
  Error e = validation_error(doc_with(kernel("k", {}, {N(1, "neg").in("a", ln(7))})));
  EXPECT_PLACE(e, "k", 1, "a");
  EXPECT_MESSAGE(e, "link to node 7, which does not exist");
}

TEST(Validate, LinkIntoAnotherRegion) {
  Error e = validation_error(
      doc_with(kernel("k", {},
                      {N(1, "range_for").in("end0", 4).region("body", {N(2, "index")}),
                       N(3, "neg").in("a", ln(2))})));
  EXPECT_PLACE(e, "k", 3, "a");
  EXPECT_MESSAGE(e, "node 2 is inside another region and cannot be used here");
}

TEST(Validate, EffectfulNodeUsedBeforeItRuns) {
  Document doc = doc_with(kernel("k", {},
                                 {N(1, "store").p("field", "x").in("i0", 0).in("value", ln(2)),
                                  N(2, "load").p("field", "x").in("i0", 1)}));
  doc.fields.push_back(field("x", "f32", {4}));
  Error e = validation_error(doc);
  EXPECT_PLACE(e, "k", 1, "value");
  EXPECT_MESSAGE(e, "node 2 (load) runs after this node");
}

TEST(Validate, DuplicateNodeId) {
  Error e = validation_error(
      doc_with(kernel("k", {},
                      {N(1, "const").p("value", 1),
                       N(2, "range_for").in("end0", 4).region("body", {N(1, "index")})})));
  EXPECT_PLACE(e, "k", 1, "");
  EXPECT_MESSAGE(e, "node id 1 is used by two nodes");
}

TEST(Validate, CycleNamesTheNodes) {
  Error e = validation_error(
      doc_with(kernel("k", {},
                      {N(1, "add").in("a", ln(3)).in("b", 1), N(2, "mul").in("a", ln(1)).in("b", 2),
                       N(3, "neg").in("a", ln(2))})));
  EXPECT_EQ(e.place().kernel, "k");
  EXPECT_MESSAGE(e, "the links form a cycle: 1 -> 3 -> 2 -> 1");
}

TEST(Validate, CycleFoundByLoweringToo) {
  try {
    lower_kernel(doc_with(kernel(
                     "k", {}, {N(1, "add").in("a", ln(2)).in("b", 1), N(2, "neg").in("a", ln(1))})),
                 "k");
    FAIL();
  } catch (const Error& e) {
    EXPECT_MESSAGE(e, "cycle: 1 -> 2 -> 1");
  }
}

TEST(Validate, UnknownParameter) {
  Error e =
      validation_error(doc_with(kernel("k", {}, {N(1, "const").p("value", 1).p("colour", "red")})));
  EXPECT_PLACE(e, "k", 1, "colour");
  EXPECT_MESSAGE(e, "has no parameter 'colour'");
}

TEST(Validate, MissingParameter) {
  Error e = validation_error(doc_with(kernel("k", {}, {N(1, "cast").in("a", 1)})));
  EXPECT_PLACE(e, "k", 1, "type");
  EXPECT_MESSAGE(e, "needs the parameter 'type'");
}

TEST(Validate, TypeMismatchFloatIntoIntField) {
  Document doc = doc_with(kernel("k", {value_param("a", "f32")},
                                 {N(1, "param").p("name", "a"),
                                  N(2, "store").p("field", "n").in("i0", 0).in("value", ln(1))}));
  doc.fields.push_back(field("n", "i32", {4}));
  Error e = validation_error(doc);
  EXPECT_PLACE(e, "k", 2, "value");
  EXPECT_MESSAGE(e, "input 'value' is f32 but i32 is needed; add a cast node");
}

TEST(Validate, VectorSizeMismatch) {
  Error e = validation_error(
      doc_with(kernel("k", {},
                      {N(1, "const").p("value", list({lit(1.0), lit(2.0), lit(3.0)})),
                       N(2, "const").p("value", list({lit(1.0), lit(2.0)})),
                       N(3, "add").in("a", ln(1)).in("b", ln(2))})));
  EXPECT_PLACE(e, "k", 3, "b");
  EXPECT_MESSAGE(e, "'a' is f32x3 but 'b' is f32x2; sizes must match");
}

TEST(Validate, FloatIndex) {
  Document doc = doc_with(kernel("k", {},
                                 {N(1, "load").p("field", "x").in("i0", ln(2)),
                                  N(2, "const").p("value", 1.0).p("type", "f32")}));
  doc.fields.push_back(field("x", "f32", {4}));
  Error e = validation_error(doc);
  EXPECT_PLACE(e, "k", 1, "i0");
  EXPECT_MESSAGE(e, "indices are i32, u32 or narrower integers");
}

TEST(Validate, WrongIndexCount) {
  Document doc = doc_with(kernel("k", {}, {N(1, "load").p("field", "x").in("i0", 1)}));
  doc.fields.push_back(field("x", "f32", {4, 4}));
  Error e = validation_error(doc);
  EXPECT_PLACE(e, "k", 1, "i0");
  EXPECT_MESSAGE(e, "has 2 dimension(s) but 1 index value(s) were given");
}

// A 0-d field (shape []) is one value: loads, stores and atomics take no index, and nothing
// that needs a dimension (shape, struct_for) accepts it.
TEST(Validate, ZeroDimensionalFieldsTakeNoIndex) {
  Document ok = doc_with(
      kernel("k", {},
             {N(1, "load").p("field", "g"), N(2, "atomic_add").p("field", "g").in("value", ln(1)),
              N(3, "store").p("field", "g").in("value", 2.0)}));
  ok.fields.push_back(field("g", "f32", {}));
  EXPECT_NO_THROW(validate_document(ok));

  Document doc = doc_with(kernel("k", {}, {N(1, "load").p("field", "g").in("i1", 0)}));
  doc.fields.push_back(field("g", "f32", {}));
  Error e = validation_error(doc);
  EXPECT_PLACE(e, "k", 1, "i1");
  EXPECT_MESSAGE(e, "field 'g' is 0-d (shape []): it holds one value and takes no index");

  doc.kernels[0] = kernel("k", {}, {N(4, "atomic_add").p("field", "g").in("i0", 0).in("value", 1)});
  e = validation_error(doc);
  EXPECT_PLACE(e, "k", 4, "i0");

  doc.kernels[0] = kernel("k", {}, {N(5, "shape").p("field", "g")});
  e = validation_error(doc);
  EXPECT_PLACE(e, "k", 5, "field");
  EXPECT_MESSAGE(e, "field 'g' is 0-d (shape []): it has no dimension");

  doc.kernels[0] = kernel("k", {}, {N(6, "struct_for").p("field", "g").region("body", {})});
  e = validation_error(doc);
  EXPECT_PLACE(e, "k", 6, "field");
  EXPECT_MESSAGE(e, "struct_for needs a field with dimensions; 'g' is 0-d");

  doc.kernels.clear();
  doc.fields[0].shape = {1, 1, 1, 1, 1};
  e = validation_error(doc);
  EXPECT_MESSAGE(e, "field 'g' has more than 4 dimensions");
}

TEST(Validate, UnknownField) {
  Error e =
      validation_error(doc_with(kernel("k", {}, {N(1, "load").p("field", "vel").in("i0", 0)})));
  EXPECT_PLACE(e, "k", 1, "field");
  EXPECT_MESSAGE(e, "unknown field 'vel'");
}

namespace {

Document argpack_doc(std::vector<Node> nodes, std::vector<std::string> returns = {}) {
  Document doc;
  doc.path = "cloth.json";
  doc.argpack_types = {ArgpackType{
      "Params", true, {{"gravity", MemberKind::Value, {Scalar::F32}, 0, -1, 0}}, 0, 16}};
  KernelDecl k;
  k.name = "k";
  k.params = {{"p", graph::ParamKind::Argpack, "Params", 0}};
  k.nodes = std::move(nodes);
  k.returns = std::move(returns);
  doc.kernels.push_back(k);
  return doc;
}

}  // namespace

TEST(Validate, ArgpackMemberIsReadOnly) {
  Error e = validation_error(argpack_doc({N(1, "member").p("param", "p").p("path", "gravity"),
                                          N(2, "store").in("array", ln(1)).in("value", 1.0)}));
  EXPECT_PLACE(e, "k", 2, "array");
  EXPECT_MESSAGE(e, "argpack members are read-only inside kernels");
  Error e2 =
      validation_error(argpack_doc({N(1, "store").p("ndarray", "p.gravity").in("value", 1.0)}));
  EXPECT_PLACE(e2, "k", 1, "ndarray");
  EXPECT_MESSAGE(e2, "argpack members are read-only inside kernels");
}

TEST(Validate, UnknownArgpackMember) {
  Error e = validation_error(
      argpack_doc({N(1, "member").p("param", "p").p("path", "wind"), N(2, "neg").in("a", ln(1))}));
  EXPECT_PLACE(e, "k", 1, "path");
  EXPECT_MESSAGE(e, "argpack type 'Params' has no member 'wind'");
}

TEST(Validate, ArgpackReturnType) {
  Error e = validation_error(argpack_doc({}, {"Params"}));
  EXPECT_PLACE(e, "k", -1, "");
  EXPECT_MESSAGE(e, "an argpack ('Params') cannot be returned from a kernel");
}

TEST(Validate, RecursionInFunctions) {
  Document doc;
  doc.path = "cloth.json";
  FunctionDecl f;
  f.name = "f";
  f.nodes = {N(1, "call").p("function", "g")};
  FunctionDecl g;
  g.name = "g";
  g.nodes = {N(4, "call").p("function", "f")};
  doc.functions = {f, g};
  Error e = validation_error(doc);
  EXPECT_PLACE(e, "g", 4, "function");
  EXPECT_MESSAGE(e, "function 'f' calls itself (f -> g -> f); recursion is not supported");
}

TEST(Validate, UnknownKernelInPipeline) {
  Document doc = doc_with(kernel("k", {}, {}));
  Pipeline p;
  p.name = "step";
  p.launches.push_back({"simulate", {}});
  doc.pipelines.push_back(p);
  Error e = validation_error(doc);
  EXPECT_PLACE(e, "simulate", -1, "");
  EXPECT_MESSAGE(e, "pipeline 'step' launches unknown kernel 'simulate'");
}

TEST(Validate, MissingPipelineBinding) {
  Document doc = doc_with(kernel("k", {value_param("dt", "f32")}, {}));
  Pipeline p;
  p.name = "step";
  p.launches.push_back({"k", {}});
  doc.pipelines.push_back(p);
  Error e = validation_error(doc);
  EXPECT_PLACE(e, "k", -1, "dt");
  EXPECT_MESSAGE(e, "launches kernel 'k' without argument 'dt'");
}

TEST(Validate, WrongArgumentType) {
  Document doc =
      doc_with(kernel("k", {value_param("dt", "f32"), ndarray_param("x", "f32", 1)}, {}));
  NdarrayDecl nd;
  nd.name = "pos";
  nd.elem = {Scalar::F32, 3, 1};
  nd.shape = {16};
  doc.ndarrays.push_back(nd);
  Pipeline p;
  p.name = "step";
  p.launches.push_back({"k", {{"dt", lit("fast")}, {"x", lit("pos")}}});
  doc.pipelines.push_back(p);
  Error e = validation_error(doc);
  EXPECT_PLACE(e, "k", -1, "dt");
  EXPECT_MESSAGE(e, "argument 'dt' of kernel 'k' must be a number (f32), got the name 'fast'");
  doc.pipelines[0].launches[0].args[0].second = lit(0.5);
  Error e2 = validation_error(doc);
  EXPECT_PLACE(e2, "k", -1, "x");
  EXPECT_MESSAGE(e2,
                 "ndarray 'pos' holds f32x3 in 1 dimension(s) but parameter 'x' wants f32 in 1");
}

TEST(Validate, TemplateKernelCheckedPerLaunch) {
  Document doc;
  doc.path = "cloth.json";
  doc.fields.push_back(field("a", "f32", {4}));
  doc.fields.push_back(field("n", "i32", {4}));
  doc.kernels.push_back(kernel("fill", {{"dst", graph::ParamKind::Template, "", 0}},
                               {N(1, "store").p("field", "dst").in("i0", 0).in("value", 0.5)}));
  Pipeline p;
  p.name = "init";
  p.launches.push_back({"fill", {{"dst", lit("a")}}});
  doc.pipelines.push_back(p);
  EXPECT_NO_THROW(validate_document(doc));
  doc.pipelines[0].launches.push_back({"fill", {{"dst", lit("n")}}});
  Error e = validation_error(doc);
  EXPECT_PLACE(e, "fill", 1, "value");
  EXPECT_MESSAGE(e, "is a f32 literal but i32 is needed");
}

TEST(Validate, MissingTemplateArgument) {
  Document doc = doc_with(kernel("fill", {{"dst", graph::ParamKind::Template, "", 0}}, {}));
  try {
    lower_kernel(doc, "fill");
    FAIL();
  } catch (const Error& e) {
    EXPECT_PLACE(e, "fill", -1, "dst");
    EXPECT_MESSAGE(e, "template parameter 'dst' needs an argument");
  }
}

TEST(Validate, WhileWithoutBreak) {
  Error e =
      validation_error(doc_with(kernel("k", {}, {N(1, "while").in("x", 0).region("body", {})})));
  EXPECT_PLACE(e, "k", 1, "");
  EXPECT_MESSAGE(e, "has no break node");
}

TEST(Validate, IfBranchMissingYield) {
  KernelDecl k = kernel(
      "k", {},
      {N(1, "if").in("cond", true).region("then", {N(2, "yield").in("v", 1.0)}).region("else", {}),
       N(3, "neg").in("a", ln(1, "v"))});
  Error e = validation_error(doc_with(k));
  EXPECT_PLACE(e, "k", 1, "v");
  EXPECT_MESSAGE(e, "the 'else' branch of this if does not yield 'v'");
}

TEST(Validate, ExprErrors) {
  Error e = validation_error(
      doc_with(kernel("k", {}, {N(1, "expr").p("expr", "a * (b + 1").in("a", 1.0).in("b", 2.0)})));
  EXPECT_PLACE(e, "k", 1, "expr");
  EXPECT_MESSAGE(e, "column 11: expected ')'");
  Error e2 = validation_error(
      doc_with(kernel("k", {}, {N(1, "expr").p("expr", "wobble(a)").in("a", 1.0)})));
  EXPECT_MESSAGE(e2, "unknown function 'wobble'");
  Error e3 =
      validation_error(doc_with(kernel("k", {}, {N(1, "expr").p("expr", "a + c").in("a", 1.0)})));
  EXPECT_MESSAGE(e3, "uses 'c' but the node has no input 'c'");
}

TEST(Validate, NothingIsModified) {
  Document doc = doc_with(kernel("k", {value_param("a", "f32")}, {N(1, "param").p("name", "a")}));
  doc.argpack_types = {
      ArgpackType{"P", true, {{"x", MemberKind::Value, {Scalar::F32}, 0, -1, 0}}, 0, 16}};
  validate_document(doc);
  EXPECT_EQ(doc.argpack_types[0].size, 0u);  // layout is done on a copy
}

namespace {

Error lowering_error(const Document& doc, const std::string& kernel_name,
                     const TemplateArgs& args = {}) {
  try {
    lower_kernel(doc, kernel_name, args);
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "no error";
  return Error("none");
}

}  // namespace

TEST(Validate, RegionNodesInTheWrongPlace) {
  Error e = lowering_error(
      doc_with(kernel("k", {}, {N(1, "range_for").in("end0", 4).region("body", {N(2, "break")})})),
      "k");
  EXPECT_PLACE(e, "k", 2, "");
  EXPECT_MESSAGE(e,
                 "a parallel loop cannot break; the range_for (node 1) at the top level of the "
                 "kernel runs its iterations in parallel. Use continue to skip an iteration, or "
                 "nest the loop that should stop inside another loop (e.g. a range_for with end0 "
                 "1), where it runs serially");
  Error e2 = lowering_error(doc_with(kernel("k", {}, {N(1, "yield").in("v", 1)})), "k");
  EXPECT_MESSAGE(e2, "a yield node must be directly inside the then or else region of an if");
  Error e3 = lowering_error(
      doc_with(kernel("k", {}, {N(1, "carried").p("name", "x"), N(2, "neg").in("a", ln(1))})), "k");
  EXPECT_PLACE(e3, "k", 1, "name");
  EXPECT_MESSAGE(e3, "a carried node must be inside the body of a while");
  Error e4 =
      lowering_error(doc_with(kernel("k", {}, {N(1, "index"), N(2, "neg").in("a", ln(1))})), "k");
  EXPECT_MESSAGE(e4, "an index node must be inside the body of a range_for or struct_for");
  KernelDecl k = kernel(
      "k", {}, {N(1, "range_for").in("end0", 4).region("body", {N(2, "return").in("r0", 1)})});
  k.returns = {"i32"};
  Error e5 = lowering_error(doc_with(k), "k");
  EXPECT_PLACE(e5, "k", 2, "");
  EXPECT_MESSAGE(e5, "a return node cannot be inside a loop");
}

TEST(Validate, ValueLinkedWhereMemoryIsNeeded) {
  Error e = lowering_error(
      doc_with(kernel("k", {value_param("a", "f32")},
                      {N(1, "param").p("name", "a"), N(2, "load").in("array", ln(1)).in("i0", 0)})),
      "k");
  EXPECT_PLACE(e, "k", 2, "array");
  EXPECT_MESSAGE(e, "pin 'array' must be linked to a field or ndarray");
}

TEST(Validate, CallPortsAreChecked) {
  Document doc =
      doc_with(kernel("k", {}, {N(1, "call").p("function", "f").in("x", 1.0).in("speed", 2.0)}));
  FunctionDecl f;
  f.name = "f";
  f.inputs = {{"x", "f32"}};
  f.outputs = {{"y", "f32"}};
  doc.functions.push_back(f);
  Error e = lowering_error(doc, "k");
  EXPECT_PLACE(e, "k", 1, "speed");
  EXPECT_MESSAGE(e, "function 'f' has no input 'speed'");
  doc.kernels[0].nodes[0].inputs.pop_back();
  Error e2 = lowering_error(doc, "k");
  EXPECT_PLACE(e2, "k", 1, "y");
  EXPECT_MESSAGE(e2, "function 'f' never sets its output 'y'");
}

TEST(Validate, TemplateArgumentOfTheWrongKind) {
  Document doc = doc_with(kernel("k",
                                 {{"n", graph::ParamKind::Template, "i32", 0},
                                  {"src", graph::ParamKind::Template, "field", 0}},
                                 {}));
  doc.fields.push_back(field("a", "f32", {4}));
  TemplateArgs args;
  args.set("n", {TemplateArg::Kind::Field, "a"});
  args.set("src", {TemplateArg::Kind::Field, "a"});
  Error e = lowering_error(doc, "k", args);
  EXPECT_PLACE(e, "k", -1, "n");
  EXPECT_MESSAGE(e, "template parameter 'n' needs a i32 constant, not field 'a'");
  args.set("n", {TemplateArg::Kind::Int, "", 2});
  args.set("src", {TemplateArg::Kind::Int, "", 2});
  Error e2 = lowering_error(doc, "k", args);
  EXPECT_MESSAGE(e2, "template parameter 'src' needs a field name as its argument");
}

TEST(Validate, NodeVersionFromTheFuture) {
  KernelDecl k = kernel("k", {}, {N(1, "const").p("value", 1)});
  k.nodes[0].version = 9;
  Error e = validation_error(doc_with(k));
  EXPECT_PLACE(e, "k", 1, "");
  EXPECT_MESSAGE(e, "node type 'const' version 9 is newer than this Loom knows (1)");
}

TEST(Validate, UncalledFunctionsAreTypeChecked) {
  Document doc;
  doc.path = "cloth.json";
  FunctionDecl f;
  f.name = "spring";
  f.inputs = {{"x", "f32x3"}, {"k", "i32"}};
  f.outputs = {{"force", "i32"}};
  f.nodes = {N(1, "input").p("name", "x"), N(2, "input").p("name", "k"),
             N(3, "mul").in("a", ln(1)).in("b", ln(2)), N(4, "output").in("force", ln(3))};
  doc.functions.push_back(f);
  Error e = validation_error(doc);
  EXPECT_PLACE(e, "spring", 4, "force");
  EXPECT_MESSAGE(e, "input 'force' is f32x3 but i32 is needed");
  doc.functions[0].outputs[0].type = "f32x3";
  EXPECT_NO_THROW(validate_document(doc));
  doc.functions[0].inputs[1].type = "int";
  Error e2 = validation_error(doc);
  EXPECT_PLACE(e2, "spring", -1, "k");
  EXPECT_MESSAGE(e2, "parameter 'k' has unknown type 'int'");
}

TEST(Validate, FunctionsSeeOnlyTheirInputs) {
  Document doc =
      doc_with(kernel("k", {value_param("dt", "f32")}, {N(1, "call").p("function", "f")}));
  FunctionDecl f;
  f.name = "f";
  f.nodes = {N(1, "param").p("name", "dt"), N(2, "neg").in("a", ln(1))};
  doc.functions.push_back(f);
  Error e = validation_error(doc);
  EXPECT_PLACE(e, "f", 1, "name");
  EXPECT_MESSAGE(e, "functions see only their own inputs: use an input node");
}

// ---- literals that do not fit the type they meet

namespace {

Document typed_param_doc(const std::string& type, std::initializer_list<N> nodes) {
  return doc_with(kernel("k", {value_param("x", type)}, nodes));
}

}  // namespace

TEST(Validate, IntegerLiteralTooBigForItsPartner) {
  Error e = validation_error(typed_param_doc(
      "u8", {N(1, "param").p("name", "x"), N(2, "add").in("a", ln(1)).in("b", 300)}));
  EXPECT_PLACE(e, "k", 2, "b");
  EXPECT_MESSAGE(e, "the literal 300 does not fit u8, the type it meets here (u8 holds 0 to 255)");
  e = validation_error(typed_param_doc(
      "i8", {N(1, "param").p("name", "x"), N(2, "add").in("a", ln(1)).in("b", -1000)}));
  EXPECT_PLACE(e, "k", 2, "b");
  EXPECT_MESSAGE(e, "the literal -1000 does not fit i8");
  e = validation_error(typed_param_doc(
      "u32", {N(1, "param").p("name", "x"), N(2, "mul").in("a", -1).in("b", ln(1))}));
  EXPECT_PLACE(e, "k", 2, "a");
  EXPECT_MESSAGE(e, "the literal -1 does not fit u32");
  // vector literals are checked per component
  e = validation_error(typed_param_doc(
      "u8", {N(1, "param").p("name", "x"), N(2, "vec2").in("x", ln(1)).in("y", ln(1)),
             N(3, "add").in("a", ln(2)).in("b", list({lit(1), lit(256)}))}));
  EXPECT_PLACE(e, "k", 3, "b");
  EXPECT_MESSAGE(e, "the literal 256 does not fit u8");
  // a literal alone is an i32, where it is given a type (here: the var's)
  e = validation_error(doc_with(kernel(
      "k", {}, {N(1, "const").p("value", int64_t{3000000000}), N(2, "var").in("init", ln(1))})));
  EXPECT_PLACE(e, "k", 2, "init");
  EXPECT_MESSAGE(e, "the literal 3000000000 does not fit i32");
}

TEST(Validate, LiteralsThatFitAreFine) {
  for (const auto& [type, value] : std::vector<std::pair<std::string, int64_t>>{
           {"u8", 255}, {"i8", -128}, {"u16", 65535}, {"i64", INT64_MIN}, {"u32", 4294967295}}) {
    Document doc = typed_param_doc(
        type, {N(1, "param").p("name", "x"), N(2, "add").in("a", ln(1)).in("b", value),
               N(3, "var").in("init", ln(2))});
    EXPECT_NO_THROW(validate_document(doc)) << type << " " << value;
  }
}

TEST(Validate, TypedConstantMustBeExact) {
  Error e = validation_error(doc_with(kernel(
      "k", {}, {N(1, "const").p("value", 1.5).p("type", "i32"), N(2, "var").in("init", ln(1))})));
  EXPECT_PLACE(e, "k", 1, "value");
  EXPECT_MESSAGE(e,
                 "the literal 1.5 does not fit i32, the type it meets here (not a whole number)");
  e = validation_error(doc_with(kernel(
      "k", {}, {N(1, "const").p("value", 1e40).p("type", "f32"), N(2, "var").in("init", ln(1))})));
  EXPECT_PLACE(e, "k", 1, "value");
  EXPECT_MESSAGE(e, "the literal 1e+40 does not fit f32");
  e = validation_error(doc_with(kernel(
      "k", {}, {N(1, "const").p("value", 256).p("type", "u8"), N(2, "var").in("init", ln(1))})));
  EXPECT_MESSAGE(e, "the literal 256 does not fit u8");
  // exact values are fine: 2.0 as an i32, 1e40 as an f64, 0.1 rounds to the nearest f32
  for (auto [value, type] :
       std::vector<std::pair<double, const char*>>{{2.0, "i32"}, {1e40, "f64"}, {0.1, "f32"}})
    EXPECT_NO_THROW(validate_document(doc_with(
        kernel("k", {},
               {N(1, "const").p("value", value).p("type", type), N(2, "var").in("init", ln(1))}))))
        << value << " " << type;
}

TEST(Validate, FloatLiteralOverflowingF32) {
  Error e = validation_error(typed_param_doc(
      "f32", {N(1, "param").p("name", "x"), N(2, "mul").in("a", ln(1)).in("b", 1e39)}));
  EXPECT_PLACE(e, "k", 2, "b");
  EXPECT_MESSAGE(e, "the literal 1e+39 does not fit f32");
  EXPECT_NO_THROW(validate_document(typed_param_doc(
      "f64", {N(1, "param").p("name", "x"), N(2, "mul").in("a", ln(1)).in("b", 1e39),
              N(3, "var").in("init", ln(2))})));
}

TEST(Validate, CastNodeOfALiteralUsesCastSemantics) {
  // An explicit cast converts at run-time semantics: 300 (an i32) cast to u8 is 44.
  Document doc = doc_with(
      kernel("k", {}, {N(1, "cast").in("a", 300).p("type", "u8"), N(2, "var").in("init", ln(1))}));
  auto k = lower_kernel(doc, "k");
  EXPECT_EQ(ir::verify(*k), "");
}

// ---- u32 indices and loop bounds

TEST(Validate, U32IndicesAndLoopBoundsAreAccepted) {
  Document doc = doc_with(kernel(
      "k", {value_param("n", "u32"), value_param("j", "u8")},
      {N(1, "param").p("name", "n"), N(5, "param").p("name", "j"),
       N(2, "range_for")
           .in("end0", ln(1))
           .region("body", {N(3, "cast").in("a", ln(2, "i0")).p("type", "u32"),
                            N(4, "store").p("field", "x").in("i0", ln(3)).in("value", 1.0),
                            N(6, "store").p("field", "x").in("i0", ln(5)).in("value", 2.0)})}));
  doc.fields.push_back(field("x", "f32", {8}));
  EXPECT_NO_THROW(validate_document(doc));
  auto k = lower_kernel(doc, "k");
  EXPECT_EQ(ir::verify(*k), "");
  int u32_to_i32 = 0;
  ir::walk(*k->body, [&](ir::Inst& i) {
    u32_to_i32 +=
        i.op == ir::Op::Cast && i.type == Scalar::I32 && i.operand(0)->type == Scalar::U32;
  });
  EXPECT_EQ(u32_to_i32, 2);  // the loop bound (clamped) and the index
}

TEST(Validate, WideIndicesNeedACast) {
  Document doc = doc_with(kernel("k", {value_param("n", "i64")},
                                 {N(1, "param").p("name", "n"),
                                  N(2, "store").p("field", "x").in("i0", ln(1)).in("value", 1.0)}));
  doc.fields.push_back(field("x", "f32", {8}));
  Error e = validation_error(doc);
  EXPECT_PLACE(e, "k", 2, "i0");
  EXPECT_MESSAGE(e,
                 "index 'i0' is i64; indices are i32, u32 or narrower integers (add a cast node)");
  doc = doc_with(kernel("k", {value_param("n", "u64")},
                        {N(1, "param").p("name", "n"), N(2, "range_for").in("end0", ln(1))}));
  e = validation_error(doc);
  EXPECT_PLACE(e, "k", 2, "end0");
  EXPECT_MESSAGE(e, "loop bound 'end0' must be an i32, u32 or narrower integer, not u64");
}

// ---- shapes

TEST(Validate, FieldExtentsAboveInt32MaxAreRejected) {
  Document doc = doc_with(kernel("k", {}, {}));
  doc.fields.push_back(field("huge", "f32", {3000000000}));
  Error e = validation_error(doc);
  EXPECT_EQ(e.place().pin, "huge");
  EXPECT_MESSAGE(e, "field 'huge': extent 3000000000 (dimension 0) is larger than 2147483647");
  doc.fields[0] = field("huge", "f32x4x4", {2147483647, 2147483647, 2147483647});
  e = validation_error(doc);
  EXPECT_MESSAGE(e,
                 "field 'huge': 2147483647 x 2147483647 x 2147483647 elements of 64 bytes do not "
                 "fit in 2^63 bytes");
}

// ---- smaller errors

TEST(Validate, NestedUnrollsAreCappedNamingTheNode) {
  Document doc = doc_with(kernel(
      "k", {},
      {N(1, "var").p("type", "f32"),
       N(2, "unroll")
           .p("count", 1024)
           .region("body",
                   {N(3, "unroll")
                        .p("count", 1024)
                        .region("body", {N(4, "unroll")
                                             .p("count", 1024)
                                             .region("body", {N(5, "get").in("var", ln(1, "ref")),
                                                              N(6, "set")
                                                                  .in("var", ln(1, "ref"))
                                                                  .in("value", ln(5))})})})}));
  Error e = validation_error(doc);
  EXPECT_PLACE(e, "k", 3, "count");
  EXPECT_MESSAGE(
      e,
      "unrolling would instantiate 3145728 nodes (1048576 copies of a body of 3 nodes, counting "
      "enclosing unrolls), more than the limit of 1048576");
  // 3x3 stencils and the like are far below the limit
  doc.kernels[0].nodes[1].params[0].second = build::lit(3);
  doc.kernels[0].nodes[1].regions[0].nodes[0].params[0].second = build::lit(3);
  doc.kernels[0].nodes[1].regions[0].nodes[0].regions[0].nodes[0].params[0].second = build::lit(3);
  EXPECT_NO_THROW(validate_document(doc));
}

TEST(Validate, ErrorsInsideFunctionsNameTheFunction) {
  Document doc;
  doc.path = "cloth.json";
  FunctionDecl f;
  f.name = "spring";
  f.inputs = {{"x", "f32"}};
  f.outputs = {{"y", "f32"}};
  f.nodes = {N(1, "input").p("name", "x"), N(2, "sinn").in("a", ln(1)),
             N(3, "output").in("y", ln(2))};
  doc.functions.push_back(f);
  Error e = validation_error(doc);
  EXPECT_EQ(e.place().kernel, "spring");
  EXPECT_TRUE(e.place().function);
  EXPECT_NE(
      std::string(e.what()).find("cloth.json: function 'spring': node 2: unknown node type 'sinn'"),
      std::string::npos)
      << e.what();
  // a type error found while lowering the function
  doc.functions[0].nodes = {N(1, "input").p("name", "x"), N(2, "shl").in("a", ln(1)).in("b", 1),
                            N(3, "output").in("y", ln(2))};
  e = validation_error(doc);
  EXPECT_NE(std::string(e.what()).find("cloth.json: function 'spring': node 2"), std::string::npos)
      << e.what();
  // and through a call from a kernel: the node is the function's
  doc.kernels.push_back(kernel("k", {}, {N(1, "call").p("function", "spring").in("x", 1.0)}));
  try {
    lower_kernel(doc, "k");
    ADD_FAILURE() << "no error";
  } catch (const Error& err) {
    EXPECT_NE(std::string(err.what()).find("function 'spring': node 2"), std::string::npos)
        << err.what();
  }
}

TEST(Validate, LayoutMustMatchTheGraphs) {
  Document doc = doc_with(kernel("k", {}, {N(1, "const").p("value", 1)}));
  doc.layout.push_back({"k", {{1, 10, 20}}});
  EXPECT_NO_THROW(validate_document(doc));
  doc.layout[0].positions.push_back({9, 0, 0});
  Error e = validation_error(doc);
  EXPECT_PLACE(e, "k", 9, "");
  EXPECT_MESSAGE(e, "layout: position of node 9, but 'k' has no node 9");
  doc.layout[0].positions.pop_back();
  doc.layout.push_back({"gone", {}});
  e = validation_error(doc);
  EXPECT_MESSAGE(e, "layout of 'gone', but no kernel or function has that name");
  doc.layout.back().graph = "k";
  e = validation_error(doc);
  EXPECT_MESSAGE(e, "a second layout entry for 'k'");
}

TEST(Validate, BlockLocalNamesFieldsOrNdarrayParameters) {
  KernelDecl k = kernel("heat", {ndarray_param("w", "f32", 1), value_param("s", "f32")}, {});
  k.block_local = {"temperature", "w", "tmp"};
  Document doc = doc_with(k);
  doc.fields.push_back(field("temperature", "f32", {16, 16}));
  Error e = validation_error(doc);
  EXPECT_PLACE(e, "heat", -1, "");
  EXPECT_MESSAGE(e,
                 "block_local names 'tmp', which is neither a field nor an ndarray parameter of "
                 "the kernel");
  EXPECT_NE(std::string(e.what()).find("cloth.json: kernel 'heat': block_local names 'tmp'"),
            std::string::npos)
      << e.what();
  // A value parameter is no memory to stage.
  doc.kernels[0].block_local = {"s"};
  EXPECT_MESSAGE(validation_error(doc), "block_local names 's', which is neither");
  doc.kernels[0].block_local = {"w", "temperature", "w"};
  EXPECT_MESSAGE(validation_error(doc), "block_local names 'w' twice");
  doc.kernels[0].block_local = {"temperature", "w"};
  EXPECT_NO_THROW(validate_document(doc));
  EXPECT_EQ(block_local_problem(doc, doc.kernels[0]), "");
}
