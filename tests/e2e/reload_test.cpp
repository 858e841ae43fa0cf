// Hot reload: a changed document replaces the running one at a launch boundary, keeping
// what it can (field contents, argpack values set from code, unchanged kernels) and saying
// what it could not; a document that does not compile leaves the running program alone.
#include "tests/e2e/e2e_util.h"

#include <algorithm>
#include <cstring>

#include "compiler/graph/document.h"
#include "compiler/graph/document_json.h"
#include "compiler/graph/graph_builder.h"

namespace loom::test {
namespace {

graph::Document heat() {
  return graph::load_document_file(source_path("assets/graphs/heat.loom.json"));
}

graph::KernelDecl& kernel_of(graph::Document& doc, const std::string& name) {
  for (graph::KernelDecl& k : doc.kernels)
    if (k.name == name) return k;
  throw Error("no kernel " + name);
}

graph::Node* find_node(std::vector<graph::Node>& nodes, int id) {
  for (graph::Node& n : nodes) {
    if (n.id == id) return &n;
    for (graph::Region& r : n.regions)
      if (graph::Node* inner = find_node(r.nodes, id)) return inner;
  }
  return nullptr;
}

std::vector<float> contents(Program& p, const std::string& name) {
  ArrayView v = p.array(name);
  std::vector<float> out(v.bytes / 4);
  std::memcpy(out.data(), v.data, v.bytes);
  return out;
}

bool has(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

TEST(Reload, AnEditKeepsFieldsAndRecompilesOnlyWhatChanged) {
  Program p(no_cache());
  p.load(heat());
  p.run_pipeline("init");
  for (int i = 0; i < 5; ++i) p.run_pipeline("step");
  std::vector<float> before = contents(p, "temperature");

  graph::Document edited = heat();
  graph::Node* formula = find_node(kernel_of(edited, "diffuse").nodes, 12);
  ASSERT_NE(formula, nullptr);
  formula->params[0].second.s = "c + k * (n + s + w + e - 4.0 * c) * 0.5";  // half the diffusion
  ReloadReport r = p.reload(edited);
  EXPECT_TRUE(has(r.kept, "temperature"));
  EXPECT_TRUE(has(r.kept, "scratch"));
  EXPECT_TRUE(r.reinitialized.empty());
  EXPECT_EQ(r.kernels_compiled, 2);               // diffuse, once per template binding
  EXPECT_EQ(r.kernels_reused, 1);                 // init did not change
  EXPECT_EQ(contents(p, "temperature"), before);  // the state carried over (on the device too)

  // The edited kernel runs: one step with half the rate against a plain C++ step.
  std::vector<float> t = before, s(t.size());
  auto step = [](const std::vector<float>& src, std::vector<float>& dst) {
    dst = src;
    for (int i = 1; i < 255; ++i)
      for (int j = 1; j < 255; ++j) {
        auto at = [&](int a, int b) { return src[static_cast<size_t>(a * 256 + b)]; };
        dst[static_cast<size_t>(i * 256 + j)] =
            at(i, j) +
            0.2f * (at(i - 1, j) + at(i + 1, j) + at(i, j - 1) + at(i, j + 1) - 4.0f * at(i, j)) *
                0.5f;
      }
  };
  step(t, s);
  step(s, t);
  p.run_pipeline("step");
  std::vector<float> after = contents(p, "temperature");
  for (size_t i = 0; i < t.size(); ++i) ASSERT_NEAR(after[i], t[i], 1e-5) << i;
}

TEST(Reload, ADocumentThatDoesNotCompileLeavesTheProgramRunning) {
  Program p(no_cache());
  p.load(heat());
  p.run_pipeline("init");
  p.run_pipeline("step");
  std::vector<float> before = contents(p, "temperature");
  graph::Document broken = heat();
  graph::Node* store = find_node(kernel_of(broken, "diffuse").nodes, 13);
  ASSERT_NE(store, nullptr);
  for (graph::Input& in : store->inputs)
    if (in.pin == "i0") {
      in.linked = false;
      in.literal = graph::build::lit(0.5);  // a float index: a type error on node 13
    }
  try {
    p.reload(broken);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.place().node, 13) << e.what();
    EXPECT_EQ(e.place().kernel, "diffuse") << e.what();
  }
  EXPECT_EQ(contents(p, "temperature"), before);  // untouched
  p.run_pipeline("step");                         // and still running the old kernels
  EXPECT_NE(contents(p, "temperature"), before);
}

TEST(Reload, ChangedDeclarationsStartAfreshAndSayWhy) {
  Program p(no_cache());
  p.load(heat());
  p.run_pipeline("init");
  graph::Document bigger = heat();
  bigger.fields[1].shape = {256, 300};  // scratch grows
  ReloadReport r = p.reload(bigger);
  EXPECT_TRUE(has(r.kept, "temperature"));
  EXPECT_TRUE(has(r.reinitialized, "scratch"));
  bool said = false;
  for (const std::string& n : r.notices)
    said |= n.find("'scratch' changed its declaration") != std::string::npos;
  EXPECT_TRUE(said);
  EXPECT_EQ(p.array("scratch").shape, (std::vector<int64_t>{256, 300}));
  std::vector<float> s = contents(p, "scratch");
  EXPECT_TRUE(std::all_of(s.begin(), s.end(), [](float x) { return x == 0.0f; }));
  graph::Document smaller = heat();
  smaller.fields.pop_back();  // scratch is gone (and diffuse no longer has its binding...)
  smaller.pipelines.pop_back();
  ReloadReport gone = p.reload(smaller);
  EXPECT_TRUE(has(gone.dropped, "scratch"));
}

// A 0-d field keeps its one value through a reload like any field, and the edited kernel
// adds to it.
TEST(Reload, AZeroDimensionalFieldKeepsItsValue) {
  Program p(no_cache());
  graph::Document doc = graph::load_document_file(doc_path("zero_d_fields.loom.json"));
  p.load(doc);
  p.run_pipeline("init");
  p.run_pipeline("step");
  EXPECT_EQ(contents(p, "total"), std::vector<float>{0.5f + 499500.0f});
  graph::Document edited = doc;
  graph::Node* add = find_node(kernel_of(edited, "step").nodes, 4);
  ASSERT_NE(add, nullptr);
  for (graph::Input& in : add->inputs)
    if (in.pin == "value") in.literal = graph::build::lit(3);  // count += 3 from now on
  ReloadReport r = p.reload(edited);
  EXPECT_TRUE(has(r.kept, "total"));
  EXPECT_TRUE(has(r.kept, "count"));
  EXPECT_TRUE(r.reinitialized.empty());
  EXPECT_EQ(contents(p, "total"), std::vector<float>{0.5f + 499500.0f});
  p.run_pipeline("step");
  EXPECT_EQ(contents(p, "total"), std::vector<float>{0.5f + 2 * 499500.0f});
  ArrayView count = p.array("count");
  ASSERT_EQ(count.bytes, 4u);
  int32_t c;
  std::memcpy(&c, count.data, 4);
  EXPECT_EQ(c, 1000 + 3000);
}

TEST(Reload, ArgpackValuesSetFromCodeSurviveUnlessTheDocumentChangesThem) {
  Program p(no_cache());
  p.load_file(doc_path("taichi_argpacks.loom.json"));
  graph::Document doc = graph::load_document_file(doc_path("taichi_argpacks.loom.json"));
  p.set_argpack("abc", "a", 5);
  p.set_argpack("abc", "c", 3.0);
  EXPECT_NEAR(p.launch("abc_select", {{"p", "abc"}}).value(), 15.0, 1e-6);
  p.reload(doc);  // same document: the values set from code stay
  EXPECT_NEAR(p.launch("abc_select", {{"p", "abc"}}).value(), 15.0, 1e-6);
  for (graph::ArgpackDecl& a : doc.argpacks)
    if (a.name == "abc")
      for (auto& [path, value] : a.values)
        if (path == "c") value = graph::build::lit(4.0);  // the document now says c = 4
  p.reload(doc);
  EXPECT_NEAR(p.launch("abc_select", {{"p", "abc"}}).value(), 20.0,
              1e-6);  // a stays 5, c follows the document
}

TEST(Reload, NdarraysMadeFromCodeStay) {
  Program p(no_cache());
  p.load_file(doc_path("taichi_args.loom.json"));
  p.create_ndarray("mine", {Scalar::I32}, {32});
  element<int32_t>(p.array("mine"), 0);
  int32_t seven = 7;
  std::memcpy(p.array("mine").data + 4, &seven, 4);
  p.reload(graph::load_document_file(doc_path("taichi_args.loom.json")));
  EXPECT_EQ(element<int32_t>(p.array("mine"), 1), 7);
  p.launch("run", {{"base", 0}, {"arr", "mine"}, {"v", std::vector<double>{1, 2, 3}}});
  EXPECT_EQ(element<int32_t>(p.array("mine"), 5), 6);
}

}  // namespace
}  // namespace loom::test
