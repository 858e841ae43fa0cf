// The program's declarations edited as the program panel does: each change one undo step,
// checked as it is made, renames carrying every reference, launches following parameters.
#include "editor/model/declarations.h"

#include <gtest/gtest.h>

#include "compiler/graph/document_json.h"
#include "compiler/graph/validate.h"
#include "editor/model/graph_access.h"
#include "editor/model/launch_params.h"
#include "runtime/common/error.h"
#include "tests/editor/test_docs.h"

using namespace loom;
using namespace loom::editor;

namespace {

EditorDocument heat() {
  return EditorDocument::from_file(std::string(LOOM_SOURCE_DIR) + "/assets/graphs/heat.loom.json");
}

std::string field_param(const graph::Document& doc, const std::string& kernel, int id) {
  const graph::Node* n = find_node(doc, GraphRef{kernel, false}, id);
  return n && n->param("field") ? n->param("field")->s : "";
}

graph::Literal number(double v) {
  graph::Literal l;
  l.kind = graph::Literal::Kind::Float;
  l.f = v;
  return l;
}

}  // namespace

TEST(Declarations, NamesAreIdentifiersUniqueInTheirNamespace) {
  EditorDocument d = heat();
  EXPECT_EQ(name_problem(d.doc(), DeclKind::Field, "u"), "");
  EXPECT_NE(name_problem(d.doc(), DeclKind::Field, "").find("needs a name"), std::string::npos);
  EXPECT_NE(name_problem(d.doc(), DeclKind::Field, "2u").find("not a name"), std::string::npos);
  EXPECT_NE(name_problem(d.doc(), DeclKind::Field, "a b").find("not a name"), std::string::npos);
  // Resources share one namespace (launch arguments name them), kernels and functions another.
  EXPECT_NE(
      name_problem(d.doc(), DeclKind::Ndarray, "scratch").find("there is a field named 'scratch'"),
      std::string::npos);
  EXPECT_NE(name_problem(d.doc(), DeclKind::Function, "init").find("kernel named 'init'"),
            std::string::npos);
  EXPECT_EQ(name_problem(d.doc(), DeclKind::Pipeline, "diffuse"), "");
  EXPECT_EQ(free_name(d.doc(), DeclKind::Kernel, "init"), "init2");
}

TEST(Declarations, AddEveryKindValidatesAndUndoesToTheSameBytes) {
  EditorDocument d = heat();
  std::string before = d.save_text();
  std::string made;
  for (DeclKind k : {DeclKind::Field, DeclKind::Ndarray, DeclKind::Texture, DeclKind::ArgpackType,
                     DeclKind::Argpack, DeclKind::Kernel, DeclKind::Function, DeclKind::Pipeline}) {
    EditResult r = add_declaration(d, k, "", &made);
    ASSERT_TRUE(r.ok) << decl_kind_name(k) << ": " << r.message;
    EXPECT_FALSE(made.empty());
  }
  EXPECT_TRUE(d.doc().field("field"));
  EXPECT_TRUE(d.doc().ndarray("array"));
  EXPECT_TRUE(d.doc().texture("texture"));
  EXPECT_GE(d.doc().argpack_type("Params"), 0);
  ASSERT_TRUE(d.doc().argpack("pack"));
  EXPECT_EQ(d.doc().argpack("pack")->type, "Params");
  EXPECT_TRUE(d.doc().kernel("kernel"));
  EXPECT_TRUE(d.doc().function("function"));
  EXPECT_TRUE(d.doc().pipeline("pipeline"));
  EXPECT_NO_THROW(graph::validate_document(d.doc()));
  // The saved text loads back the same.
  EXPECT_EQ(graph::save_document(graph::load_document(d.save_text())), d.save_text());
  for (int i = 0; i < 8; ++i) ASSERT_TRUE(d.undo());
  EXPECT_EQ(d.save_text(), before);
}

TEST(Declarations, AnArgpackNeedsATypeFirst) {
  EditorDocument d = heat();
  EditResult r = add_declaration(d, DeclKind::Argpack);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.message.find("declare an argpack type first"), std::string::npos);
  EXPECT_FALSE(d.can_undo());
}

TEST(Declarations, BadShapesAndTypesAreRefusedWithTheReason) {
  EditorDocument d = heat();
  std::string before = d.save_text();
  FieldDesc f = *d.doc().field("temperature");
  f.shape = {256, 0};
  EditResult r = set_field(d, f);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.message.find("field 'temperature'"), std::string::npos) << r.message;
  f.shape = {1, 1, 1, 1, 1};
  EXPECT_NE(set_field(d, f).message.find("0 to 4 dimensions"), std::string::npos);
  f.shape = {2147483647, 2147483647, 2147483647};
  EXPECT_FALSE(set_field(d, f).ok);
  graph::TextureDecl t{"tex", {64}, TextureFormat::RGBA8};
  EXPECT_FALSE(set_texture(d, t).ok);  // no such texture
  ASSERT_TRUE(add_declaration(d, DeclKind::Texture, "tex").ok);
  EXPECT_NE(set_texture(d, t).message.find("2 or 3 extents"), std::string::npos);
  ASSERT_TRUE(d.undo());
  EXPECT_EQ(d.save_text(), before);

  std::vector<int64_t> shape;
  std::string why;
  EXPECT_TRUE(parse_shape("128x64", &shape, &why));
  EXPECT_EQ(shape, (std::vector<int64_t>{128, 64}));
  EXPECT_TRUE(parse_shape(" 8, 8 ,8", &shape, &why));
  EXPECT_EQ(shape_text(shape), "8x8x8");
  EXPECT_FALSE(parse_shape("12a", &shape, &why));
  EXPECT_NE(why.find("128x128"), std::string::npos);
  EXPECT_FALSE(parse_shape("99999999999999999999", &shape, &why));
  EXPECT_FALSE(parse_shape("x", &shape, &why));
  EXPECT_NE(why.find("() for one value"), std::string::npos) << why;
  // The empty shape, however it is typed: a 0-d field.
  for (const char* empty : {"", " ", "()", "[ ]"}) {
    shape = {3};
    EXPECT_TRUE(parse_shape(empty, &shape, &why)) << empty;
    EXPECT_TRUE(shape.empty()) << empty;
  }
  EXPECT_EQ(shape_text({}), "()");
}

// A field's shape emptied in the inspector makes it 0-d (one value), one undo step; an
// ndarray cannot be 0-d and says so.
TEST(Declarations, AFieldsShapeCanBeEmptiedAndBack) {
  EditorDocument d = heat();
  std::string before = d.save_text();
  ASSERT_TRUE(add_declaration(d, DeclKind::Field, "loss").ok);
  std::string with_field = d.save_text();
  FieldDesc f = *d.doc().field("loss");
  ASSERT_FALSE(f.shape.empty());
  std::vector<int64_t> shape;
  std::string why;
  ASSERT_TRUE(parse_shape("()", &shape, &why));
  f.shape = shape;
  EditResult r = set_field(d, f);
  ASSERT_TRUE(r.ok) << r.message;
  EXPECT_TRUE(d.doc().field("loss")->shape.empty());
  EXPECT_NE(d.save_text().find(R"({"name": "loss", "type": "f32", "shape": []})"),
            std::string::npos)
      << d.save_text();
  EXPECT_NO_THROW(graph::validate_document(d.doc()));
  EXPECT_EQ(graph::save_document(graph::load_document(d.save_text())), d.save_text());
  f.shape = {16};
  ASSERT_TRUE(set_field(d, f).ok);
  EXPECT_EQ(d.doc().field("loss")->shape, std::vector<int64_t>{16});
  ASSERT_TRUE(d.undo());
  EXPECT_TRUE(d.doc().field("loss")->shape.empty());
  ASSERT_TRUE(d.undo());
  EXPECT_EQ(d.save_text(), with_field);
  ASSERT_TRUE(d.undo());
  EXPECT_EQ(d.save_text(), before);

  ASSERT_TRUE(add_declaration(d, DeclKind::Ndarray, "n").ok);
  graph::NdarrayDecl n = *d.doc().ndarray("n");
  n.shape = {};
  r = set_ndarray(d, n);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.message.find("ndarray 'n' needs 1 to 4 dimensions"), std::string::npos) << r.message;
}

TEST(Declarations, RetypingAFieldKeepsTheDocumentAndShowsOnNodes) {
  EditorDocument d = heat();
  FieldDesc f = *d.doc().field("scratch");
  f.elem = *parse_value_type("f32x2");
  f.shape = {256, 256};
  f.layout = Layout::SoA;
  EditResult r = set_field(d, f);
  ASSERT_TRUE(r.ok) << r.message;
  EXPECT_EQ(value_type_name(d.doc().field("scratch")->elem), "f32x2");
  EXPECT_EQ(d.doc().field("scratch")->layout, Layout::SoA);
  // The stores of a diffuse launch into scratch no longer type: validation says where.
  EXPECT_THROW(graph::validate_document(d.doc()), Error);
  ASSERT_TRUE(d.undo());
  EXPECT_NO_THROW(graph::validate_document(d.doc()));
}

// needs_grad / needs_dual: float fields and ndarrays only; undone like any edit.
TEST(Declarations, GradientsAreForFloatResources) {
  EditorDocument d = heat();
  FieldDesc f = *d.doc().field("scratch");
  f.needs_grad = true;
  EditResult r = set_field(d, f);
  ASSERT_TRUE(r.ok) << r.message;
  EXPECT_TRUE(d.doc().field("scratch")->needs_grad);
  EXPECT_NE(d.save_text().find("\"needs_grad\": true"), std::string::npos);
  f.elem = *parse_value_type("i32");
  r = set_field(d, f);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.message.find("only float resources have gradients"), std::string::npos) << r.message;
  EXPECT_EQ(value_type_name(d.doc().field("scratch")->elem), "f32");
  ASSERT_TRUE(d.undo());
  EXPECT_FALSE(d.doc().field("scratch")->needs_grad);
}

TEST(Declarations, RenamingAFieldRenamesNodesLaunchesAndTheView) {
  EditorDocument d = heat();
  ASSERT_TRUE(rename_declaration(d, DeclKind::Field, "temperature", "u").ok);
  const graph::Document& doc = d.doc();
  EXPECT_FALSE(doc.field("temperature"));
  EXPECT_TRUE(doc.field("u"));
  EXPECT_EQ(field_param(doc, "init", 3), "u");
  // A kernel's template parameter that happens to share a name is not the field.
  EXPECT_EQ(field_param(doc, "diffuse", 7), "src");
  EXPECT_EQ(doc.pipelines[1].launches[0].args[0].second.s, "u");
  EXPECT_EQ(doc.pipelines[1].launches[1].args[1].second.s, "u");
  EXPECT_EQ(doc.view.show, "u");
  EXPECT_NO_THROW(graph::validate_document(doc));
  EXPECT_FALSE(rename_declaration(d, DeclKind::Field, "u", "scratch").ok);
  EXPECT_FALSE(rename_declaration(d, DeclKind::Field, "u", "bad name").ok);
}

TEST(Declarations, RenamingAKernelRenamesLaunchesAndLayout) {
  EditorDocument d = heat();
  ASSERT_TRUE(rename_declaration(d, DeclKind::Kernel, "diffuse", "smooth").ok);
  EXPECT_EQ(d.doc().pipelines[1].launches[0].kernel, "smooth");
  EXPECT_TRUE(find_layout(d.doc(), "smooth") || !find_layout(d.doc(), "diffuse"));
  EXPECT_NO_THROW(graph::validate_document(d.doc()));
}

TEST(Declarations, DeletingSomethingUsedIsRefusedNamingTheUser) {
  EditorDocument d = heat();
  EditResult r = delete_declaration(d, DeclKind::Field, "scratch");
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.message.find("pipeline 'step'"), std::string::npos) << r.message;
  r = delete_declaration(d, DeclKind::Field, "temperature");
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.message.find("kernel 'init' node 3"), std::string::npos) << r.message;
  EXPECT_FALSE(d.can_undo());
  // An unused one goes; a kernel takes its launches along.
  ASSERT_TRUE(add_declaration(d, DeclKind::Ndarray, "spare").ok);
  ASSERT_TRUE(delete_declaration(d, DeclKind::Ndarray, "spare").ok);
  EXPECT_FALSE(d.doc().ndarray("spare"));
  r = delete_declaration(d, DeclKind::Kernel, "diffuse");
  ASSERT_TRUE(r.ok) << r.message;
  EXPECT_NE(r.message.find("2 launches"), std::string::npos) << r.message;
  EXPECT_TRUE(d.doc().pipeline("step")->launches.empty());
  EXPECT_NO_THROW(graph::validate_document(d.doc()));
}

TEST(Declarations, KernelParametersKeepLaunchesInStep) {
  EditorDocument d = heat();
  // A new value parameter: every launch of the kernel passes a zero.
  ASSERT_TRUE(add_kernel_param(d, "diffuse",
                               graph::KernelParam{"gain", graph::ParamKind::Value, "f32x2", 0})
                  .ok);
  for (const graph::Launch& l : d.doc().pipeline("step")->launches) {
    ASSERT_EQ(l.args.size(), 4u);
    EXPECT_EQ(l.args[3].first, "gain");
    EXPECT_EQ(l.args[3].second.kind, graph::Literal::Kind::List);
  }
  EXPECT_NO_THROW(graph::validate_document(d.doc()));
  // Renamed: the param node and the launches follow.
  const graph::KernelDecl* k = d.doc().kernel("diffuse");
  ASSERT_TRUE(set_kernel_param(d, "diffuse", 2,
                               graph::KernelParam{"rate", graph::ParamKind::Value, "f32", 0})
                  .ok);
  k = d.doc().kernel("diffuse");
  EXPECT_EQ(k->params[2].name, "rate");
  EXPECT_EQ(find_node(d.doc(), GraphRef{"diffuse", false}, 1)->param("name")->s, "rate");
  EXPECT_EQ(d.doc().pipeline("step")->launches[0].args[2].first, "rate");
  EXPECT_EQ(d.doc().pipeline("step")->launches[0].args[2].second.as_double(), 0.2);
  // A template field parameter renamed: the loads and stores naming it follow.
  ASSERT_TRUE(set_kernel_param(d, "diffuse", 0,
                               graph::KernelParam{"from", graph::ParamKind::Template, "field", 0})
                  .ok);
  EXPECT_EQ(field_param(d.doc(), "diffuse", 7), "from");
  EXPECT_NO_THROW(graph::validate_document(d.doc()));
  // A used parameter cannot go; an unused one takes its arguments along.
  EditResult r = remove_kernel_param(d, "diffuse", 2);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.message.find("node 1"), std::string::npos) << r.message;
  ASSERT_TRUE(remove_kernel_param(d, "diffuse", 3).ok);
  EXPECT_EQ(d.doc().pipeline("step")->launches[0].args.size(), 3u);
  // Bad parameters are refused.
  EXPECT_FALSE(
      add_kernel_param(d, "diffuse", graph::KernelParam{"rate", graph::ParamKind::Value, "f32", 0})
          .ok);
  EXPECT_FALSE(
      add_kernel_param(d, "diffuse", graph::KernelParam{"q", graph::ParamKind::Value, "f33", 0})
          .ok);
  ASSERT_TRUE(move_kernel_param(d, "diffuse", 2, -2).ok);
  EXPECT_EQ(d.doc().kernel("diffuse")->params[0].name, "rate");
  EXPECT_NO_THROW(graph::validate_document(d.doc()));
  EXPECT_FALSE(set_kernel_workgroup(d, "diffuse", 4096).ok);
  ASSERT_TRUE(set_kernel_workgroup(d, "diffuse", 64).ok);
  EXPECT_EQ(d.doc().kernel("diffuse")->workgroup_size, 64);
  EXPECT_FALSE(set_kernel_returns(d, "diffuse", {"f31"}).ok);
}

TEST(Declarations, RetypingAParameterResetsArgumentsThatNoLongerFit) {
  EditorDocument d = heat();
  ASSERT_TRUE(add_declaration(d, DeclKind::Ndarray, "arr").ok);
  ASSERT_TRUE(set_kernel_param(d, "diffuse", 2,
                               graph::KernelParam{"k", graph::ParamKind::Ndarray, "f32", 1})
                  .ok);
  const graph::Literal& arg = d.doc().pipeline("step")->launches[0].args[2].second;
  EXPECT_EQ(arg.kind, graph::Literal::Kind::String);
  EXPECT_EQ(arg.s, "arr");
}

TEST(Declarations, FunctionPortsRenameTheirNodesAndCalls) {
  EditorDocument d = EditorDocument::from_text(test::kSmallDoc);
  ASSERT_TRUE(set_function_port(d, "twice", false, 0, graph::FunctionPort{"value", "f32"}).ok);
  ASSERT_TRUE(set_function_port(d, "twice", true, 0, graph::FunctionPort{"doubled", "f32"}).ok);
  const graph::Document& doc = d.doc();
  EXPECT_EQ(find_node(doc, GraphRef{"twice", true}, 1)->param("name")->s, "value");
  EXPECT_TRUE(find_node(doc, GraphRef{"twice", true}, 3)->input("doubled"));
  EXPECT_TRUE(find_node(doc, GraphRef{"k", false}, 5)->input("value"));
  EXPECT_EQ(find_node(doc, GraphRef{"k", false}, 6)->input("value")->from_pin, "doubled");
  EXPECT_NO_THROW(graph::validate_document(doc));
  EXPECT_FALSE(add_function_port(d, "twice", false, graph::FunctionPort{"value", "f32"}).ok);
  ASSERT_TRUE(add_function_port(d, "twice", false, graph::FunctionPort{"scale", "f32"}).ok);
  EXPECT_EQ(d.doc().function("twice")->inputs.size(), 2u);
  ASSERT_TRUE(remove_function_port(d, "twice", false, 1).ok);
  EXPECT_NO_THROW(graph::validate_document(d.doc()));
}

TEST(Declarations, PipelinesLaunchWithDefaultsAndCheckArguments) {
  EditorDocument d = heat();
  ASSERT_TRUE(add_declaration(d, DeclKind::Pipeline, "extra").ok);
  ASSERT_TRUE(add_launch(d, "extra", "diffuse").ok);
  const graph::Launch& l = d.doc().pipeline("extra")->launches[0];
  ASSERT_EQ(l.args.size(), 3u);
  EXPECT_EQ(l.args[0].second.s, "temperature");  // the first field fits a field template
  EXPECT_NO_THROW(graph::validate_document(d.doc()));
  ASSERT_TRUE(set_launch_arg(d, "extra", 0, "k", number(0.3)).ok);
  EXPECT_DOUBLE_EQ(d.doc().pipeline("extra")->launches[0].args[2].second.f, 0.3);
  graph::Literal name;
  name.kind = graph::Literal::Kind::String;
  name.s = "nothing";
  EXPECT_FALSE(set_launch_arg(d, "extra", 0, "src", name).ok);
  EXPECT_FALSE(set_launch_arg(d, "extra", 0, "k", name).ok);
  EXPECT_FALSE(set_launch_arg(d, "extra", 0, "nope", number(1)).ok);
  ASSERT_TRUE(add_launch(d, "extra", "init").ok);
  ASSERT_TRUE(move_launch(d, "extra", 1, -1).ok);
  EXPECT_EQ(d.doc().pipeline("extra")->launches[0].kernel, "init");
  ASSERT_TRUE(remove_launch(d, "extra", 0).ok);
  EXPECT_EQ(d.doc().pipeline("extra")->launches.size(), 1u);
}

// A gradient step authored in a pipeline: K.grad and K.dual launch with K's arguments; their
// twins (of ndarray parameters and of the ndarrays an argpack holds, and for K.dual the
// directions) are optional, set and cleared back to their defaults, each an undo step, and
// follow renames of the kernel, its parameters and the resources they name.
TEST(Declarations, DerivedLaunchesTakeOptionalTwins) {
  EditorDocument d = EditorDocument::from_file(std::string(LOOM_SOURCE_DIR) +
                                               "/tests/e2e/docs/argpack_ndarray_adjoint.loom.json");
  auto names = [&](const std::string& kernel) {
    std::vector<std::string> out;
    for (const LaunchParam& p : launch_params(d.doc(), kernel))
      out.push_back(p.param.name + (p.twin ? "?" : ""));
    return out;
  };
  EXPECT_EQ(names("energy.grad"),
            (std::vector<std::string>{"b", "b.pos.grad?", "b.lens.c.grad?", "b.inner.w.grad?"}));
  EXPECT_EQ(names("advance.dual"),
            (std::vector<std::string>{"b", "dt", "b.dual?", "b.pos.dual?", "b.lens.c.dual?",
                                      "b.inner.w.dual?", "dt.dual?"}));
  EXPECT_TRUE(names("energy.hess").empty());
  ASSERT_TRUE(add_declaration(d, DeclKind::Pipeline, "train").ok);
  ASSERT_TRUE(add_launch(d, "train", "energy.grad").ok);
  EXPECT_FALSE(add_launch(d, "train", "nothing.grad").ok);
  auto launch = [&] { return d.doc().pipeline("train")->launches.at(0); };
  ASSERT_EQ(launch().args.size(), 1u);  // K's argument; the twins bind their defaults
  EXPECT_EQ(launch().args[0].second.s, "body");
  EXPECT_NO_THROW(graph::validate_document(d.doc()));
  auto text = [](const std::string& s) { return graph::Literal::text(s); };
  ASSERT_TRUE(set_launch_arg(d, "train", 0, "b.pos.grad", text("pos.grad")).ok);
  EXPECT_NO_THROW(graph::validate_document(d.doc()));
  EXPECT_FALSE(set_launch_arg(d, "train", 0, "b.pos.grad", text("nothing")).ok);
  EXPECT_FALSE(set_launch_arg(d, "train", 0, "b.k.grad", text("pos.grad")).ok);
  EXPECT_FALSE(clear_launch_arg(d, "train", 0, "b").ok);  // needs an argument
  ASSERT_TRUE(clear_launch_arg(d, "train", 0, "b.pos.grad").ok);
  EXPECT_EQ(launch().args.size(), 1u);
  d.undo();
  ASSERT_EQ(launch().args.size(), 2u);
  EXPECT_EQ(launch().args[1].first, "b.pos.grad");
  // Renames follow: the ndarray (its companion with it), the kernel, the parameter.
  ASSERT_TRUE(rename_declaration(d, DeclKind::Ndarray, "pos", "position").ok);
  EXPECT_EQ(launch().args[1].second.s, "position.grad");
  ASSERT_TRUE(rename_declaration(d, DeclKind::Kernel, "energy", "potential").ok);
  EXPECT_EQ(launch().kernel, "potential.grad");
  graph::KernelParam b = d.doc().kernel("potential")->params[0];
  b.name = "bodies";
  ASSERT_TRUE(set_kernel_param(d, "potential", 0, b).ok);
  EXPECT_EQ(launch().args[0].first, "bodies");
  EXPECT_EQ(launch().args[1].first, "bodies.pos.grad");
  EXPECT_NO_THROW(graph::validate_document(d.doc()));
  // The ndarray cannot go while the launch gives its companion; the kernel takes the launch.
  EXPECT_FALSE(delete_declaration(d, DeclKind::Ndarray, "position").ok);
  ASSERT_TRUE(delete_declaration(d, DeclKind::Kernel, "potential").ok);
  EXPECT_TRUE(d.doc().pipeline("train")->launches.empty());
  EXPECT_NO_THROW(graph::validate_document(d.doc()));
}

TEST(Declarations, ArgpackTypesRenameAndReorderKeepTheirReferences) {
  EditorDocument d = heat();
  ASSERT_TRUE(add_declaration(d, DeclKind::ArgpackType, "Inner").ok);
  ASSERT_TRUE(add_declaration(d, DeclKind::ArgpackType, "Outer").ok);
  ArgpackType outer = d.doc().argpack_types[1];
  ArgpackMember nested;
  nested.name = "inner";
  nested.kind = MemberKind::Pack;
  nested.nested = 0;
  outer.members.push_back(nested);
  ASSERT_TRUE(set_argpack_type(d, outer).ok);
  ASSERT_TRUE(add_declaration(d, DeclKind::Argpack, "p").ok);
  graph::ArgpackDecl p = *d.doc().argpack("p");
  p.type = "Outer";
  p.values.emplace_back("inner.value", number(2.5));
  ASSERT_TRUE(set_argpack(d, p).ok);
  // Moving a type keeps members pointing at the same types.
  ASSERT_TRUE(move_declaration(d, DeclKind::ArgpackType, "Outer", -1).ok);
  EXPECT_EQ(d.doc().argpack_types[0].name, "Outer");
  EXPECT_EQ(d.doc().argpack_types[0].members[1].nested, 1);
  ASSERT_TRUE(rename_declaration(d, DeclKind::ArgpackType, "Outer", "Settings").ok);
  EXPECT_EQ(d.doc().argpack("p")->type, "Settings");
  EXPECT_FALSE(delete_declaration(d, DeclKind::ArgpackType, "Inner").ok);  // a member of Settings
  EXPECT_FALSE(delete_declaration(d, DeclKind::ArgpackType, "Settings").ok);  // p is one
  // A value that does not fit its member is refused as a load refuses it.
  p = *d.doc().argpack("p");
  p.values[0].second.kind = graph::Literal::Kind::String;
  p.values[0].second.s = "x";
  EXPECT_FALSE(set_argpack(d, p).ok);
  EXPECT_NO_THROW(graph::validate_document(d.doc()));
}

TEST(Declarations, TheViewIsCheckedAndFollowsItsResource) {
  EditorDocument d = heat();
  graph::ViewSettings v;
  v.show = "temperature";
  v.as = "points";
  EXPECT_FALSE(set_view(d, v).ok);  // a scalar field is no point set
  v.as = "image";
  ASSERT_TRUE(set_view(d, v).ok);
  uint64_t logic = d.logic_revision();
  EXPECT_EQ(d.doc().view.show, "temperature");
  ASSERT_TRUE(rename_declaration(d, DeclKind::Field, "temperature", "heat").ok);
  EXPECT_EQ(d.doc().view.show, "heat");
  EXPECT_GT(d.logic_revision(), logic);
  // A change that leaves the view unshowable resets it (with a note), rather than refusing.
  FieldDesc f = *d.doc().field("heat");
  f.shape = {65536};
  EditResult r = set_field(d, f);
  ASSERT_TRUE(r.ok) << r.message;
  EXPECT_NE(r.message.find("view was reset"), std::string::npos);
  EXPECT_TRUE(d.doc().view.empty());
}

// A kernel's block_local list: set as one undo step, refused with the reason (and nothing
// changed) when a name is neither a field nor an ndarray parameter, and kept true when the
// fields and parameters it names are renamed or deleted.
TEST(Declarations, BlockLocalIsCheckedUndoableAndFollowsRenamesAndDeletes) {
  EditorDocument d = heat();
  auto list = [&] { return d.doc().kernel("diffuse")->block_local; };
  using Names = std::vector<std::string>;
  std::string before = d.save_text();
  ASSERT_TRUE(set_kernel_block_local(d, "diffuse", {"temperature"}).ok);
  EXPECT_EQ(list(), Names{"temperature"});
  EXPECT_NE(d.save_text().find("\"block_local\": [\"temperature\"],"), std::string::npos);
  EXPECT_NO_THROW(graph::validate_document(d.doc()));
  std::string with = d.save_text();
  ASSERT_TRUE(d.undo());
  EXPECT_EQ(d.save_text(), before);
  ASSERT_TRUE(d.redo());
  EXPECT_EQ(d.save_text(), with);

  // A name that is neither, or one given twice: refused, the document as it was.
  EditResult r = set_kernel_block_local(d, "diffuse", {"temperature", "tmp"});
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.message,
            "kernel 'diffuse': block_local names 'tmp', which is neither a field nor an ndarray "
            "parameter of the kernel");
  EXPECT_NE(set_kernel_block_local(d, "diffuse", {"temperature", "temperature"})
                .message.find("names 'temperature' twice"),
            std::string::npos);
  EXPECT_NE(set_kernel_block_local(d, "diffuse", {"k"}).message.find("names 'k', which"),
            std::string::npos);  // a value parameter
  EXPECT_FALSE(set_kernel_block_local(d, "nope", {"temperature"}).ok);
  EXPECT_EQ(d.save_text(), with);

  // A field renamed: the entry follows, in the same undo step.
  ASSERT_TRUE(rename_declaration(d, DeclKind::Field, "temperature", "t").ok);
  EXPECT_EQ(list(), Names{"t"});
  EXPECT_NO_THROW(graph::validate_document(d.doc()));
  ASSERT_TRUE(d.undo());
  EXPECT_EQ(d.save_text(), with);
  ASSERT_TRUE(d.redo());

  // A field deleted: its entry goes with it; undo brings both back.
  ASSERT_TRUE(add_declaration(d, DeclKind::Field, "halo").ok);
  ASSERT_TRUE(set_kernel_block_local(d, "diffuse", {"t", "halo"}).ok);
  std::string with_halo = d.save_text();
  ASSERT_TRUE(delete_declaration(d, DeclKind::Field, "halo").ok);
  EXPECT_EQ(list(), Names{"t"});
  EXPECT_NO_THROW(graph::validate_document(d.doc()));
  ASSERT_TRUE(d.undo());
  EXPECT_EQ(d.save_text(), with_halo);

  // An ndarray parameter: renamed, the entry follows; made a value, or removed, it goes.
  ASSERT_TRUE(add_declaration(d, DeclKind::Ndarray, "arr").ok);
  ASSERT_TRUE(
      add_kernel_param(d, "diffuse", graph::KernelParam{"a", graph::ParamKind::Ndarray, "f32", 1})
          .ok);
  ASSERT_TRUE(set_kernel_block_local(d, "diffuse", {"t", "a", "halo"}).ok);
  ASSERT_TRUE(set_kernel_param(d, "diffuse", 3,
                               graph::KernelParam{"b", graph::ParamKind::Ndarray, "f32", 1})
                  .ok);
  EXPECT_EQ(list(), (Names{"t", "b", "halo"}));
  EXPECT_NO_THROW(graph::validate_document(d.doc()));
  ASSERT_TRUE(
      set_kernel_param(d, "diffuse", 3, graph::KernelParam{"b", graph::ParamKind::Value, "f32", 0})
          .ok);
  EXPECT_EQ(list(), (Names{"t", "halo"}));
  ASSERT_TRUE(d.undo());
  EXPECT_EQ(list(), (Names{"t", "b", "halo"}));
  ASSERT_TRUE(remove_kernel_param(d, "diffuse", 3).ok);
  EXPECT_EQ(list(), (Names{"t", "halo"}));
  EXPECT_NO_THROW(graph::validate_document(d.doc()));
  ASSERT_TRUE(d.undo());
  EXPECT_EQ(list(), (Names{"t", "b", "halo"}));
  // Cleared: the key is gone from the text.
  ASSERT_TRUE(set_kernel_block_local(d, "diffuse", {}).ok);
  EXPECT_EQ(d.save_text().find("block_local"), std::string::npos);
}

// An ndarray dropped on a kernel binds it in the kernel's K.grad launches too, and a twin
// whose parameter no longer has one (an ndarray parameter made i32) goes with it.
TEST(Declarations, DerivedLaunchesFollowDroppedAndRetypedParameters) {
  EditorDocument d = EditorDocument::from_text(R"({
  "format": "loom-graph", "version": 2, "name": "drop",
  "ndarrays": [
    {"name": "a", "type": "f32", "shape": [16], "needs_grad": true},
    {"name": "b", "type": "f32", "shape": [16], "needs_grad": true}
  ],
  "kernels": [{"name": "k", "nodes": [
    {"id": 1, "type": "range_for", "inputs": {"end0": 16}, "regions": {"body": []}}]}],
  "pipelines": [
    {"name": "step", "launches": [{"kernel": "k"}]},
    {"name": "backward", "launches": [{"kernel": "k.grad"}]}
  ]})",
                                               "drop.loom.json");
  ASSERT_TRUE(add_declaration_node(d, GraphRef{"k", false}, RegionRef{1, "body"}, Vec2{0, 0},
                                   DeclKind::Ndarray, "b", "load")
                  .ok);
  for (const char* pipeline : {"step", "backward"}) {
    const graph::Launch& l = d.doc().pipeline(pipeline)->launches.at(0);
    ASSERT_EQ(l.args.size(), 1u) << pipeline;
    EXPECT_EQ(l.args[0].second.s, "b") << pipeline;
  }
  ASSERT_TRUE(set_launch_arg(d, "backward", 0, "b.grad", graph::Literal::text("a.grad")).ok);
  graph::KernelParam p = d.doc().kernel("k")->params.at(0);
  p.type = "i32";
  ASSERT_TRUE(set_kernel_param(d, "k", 0, p).ok);
  const graph::Launch& l = d.doc().pipeline("backward")->launches.at(0);
  EXPECT_TRUE(std::none_of(l.args.begin(), l.args.end(),
                           [](const auto& a) { return a.first == "b.grad"; }));
}
