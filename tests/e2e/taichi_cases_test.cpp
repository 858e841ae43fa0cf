// Cases from Taichi's own test suite; expected values are Taichi's.
#include "tests/e2e/e2e_util.h"

#include "compiler/graph/document.h"
#include "compiler/graph/document_json.h"
#include "runtime/common/error.h"

using namespace loom;
using namespace loom::test;

TEST(TaichiCases, NdarrayScalarAndVectorArguments) {
  // run(base: i32, arr: ndarray i32[32], v: vec3i): arr[i] = base + i + v[0]
  Program p(no_cache());
  p.load_file(doc_path("taichi_args.loom.json"));
  p.launch("run", {{"base", 0}, {"arr", "arr"}, {"v", std::vector<double>{1, 2, 3}}});
  ArrayView arr = p.array("arr");
  ASSERT_EQ(arr.shape, std::vector<int64_t>{32});
  for (int i = 0; i < 32; ++i) EXPECT_EQ(element<int32_t>(arr, i), i + 1) << i;
}

TEST(TaichiCases, ArgpackSelectsBetweenSumAndProduct) {
  Program p(no_cache());
  p.load_file(doc_path("taichi_argpacks.loom.json"));
  // (a=1, b=false, c=2.1) -> a * c
  EXPECT_NEAR(p.launch("abc_select", {{"p", "abc"}}).value(), 2.1, 1e-6);
  p.set_argpack("abc", "a", 2);
  p.set_argpack("abc", "b", true);
  // (a=2, b=true, c=2.1) -> a + c
  EXPECT_NEAR(p.launch("abc_select", {{"p", "abc"}}).value(), 4.1, 1e-6);
  EXPECT_EQ(p.get_argpack("abc", "a"), 2.0);
}

TEST(TaichiCases, ArgpackWithStructMember) {
  Program p(no_cache());
  p.load_file(doc_path("taichi_argpacks.loom.json"));
  EXPECT_NEAR(p.launch("struct_sum", {{"pack", "ws"}}).value(), 6.2, 1e-5);
}

TEST(TaichiCases, NestedArgpacks) {
  Program p(no_cache());
  p.load_file(doc_path("taichi_argpacks.loom.json"));
  KernelResult sum = p.launch("nested_sum", {{"x", "outer"}});
  ASSERT_EQ(sum.ints.size(), 1u);
  EXPECT_EQ(sum.ints[0], 579);
  EXPECT_EQ(p.launch("outer_b", {{"x", "outer"}}).ints[0], 233);
  // values persist between launches; a changed member is seen by the next launch
  p.set_argpack("outer", "c.b", 1000);
  EXPECT_EQ(p.launch("nested_sum", {{"x", "outer"}}).ints[0], 1123);
}

TEST(TaichiCases, NestedArgpacksAreBoundByReference) {
  Program p(no_cache());
  p.load_file(doc_path("taichi_argpacks.loom.json"));  // outer2.c is the pack `inner` (1, 2)
  EXPECT_EQ(p.launch("nested_sum", {{"x", "outer2"}}).ints[0], 3);
  p.set_argpack("inner", "a", 100);  // a later write to the inner pack...
  EXPECT_EQ(p.launch("nested_sum", {{"x", "outer2"}}).ints[0],
            102);  // ...is seen by the outer's launches
  EXPECT_EQ(p.get_argpack("outer2", "c.a"), 100.0);
  p.set_argpack("outer2", "c.b", 7);  // writing through the outer writes the bound pack
  EXPECT_EQ(p.get_argpack("inner", "b"), 7.0);
  EXPECT_EQ(p.launch("nested_sum", {{"x", "outer2"}}).ints[0], 107);
  std::string e = error_of([&] { p.set_argpack("outer2", "c", "outer"); });  // another type
  EXPECT_NE(e.find("outer2.c"), std::string::npos) << e;
  EXPECT_NE(e.find("'Inner'"), std::string::npos) << e;
  EXPECT_EQ(p.launch("nested_sum", {{"x", "outer2"}}).ints[0], 107);
}

TEST(TaichiCases, TemplatesInstantiateByFieldAndConstant) {
  Program p(no_cache());
  p.load_file(doc_path("taichi_templates.loom.json"));
  EXPECT_EQ(p.stats().instantiations, 0);  // registering compiles nothing
  p.launch("inc", {{"a", "x"}, {"b", 1}});
  p.launch("inc", {{"a", "y"}, {"b", 2}});
  p.launch("inc2", {{"z", 10}, {"a", "x"}, {"b", 1}});
  EXPECT_EQ(element<int32_t>(p.array("x"), 0), 12);
  EXPECT_EQ(element<int32_t>(p.array("y"), 0), 2);
  EXPECT_EQ(p.stats().instantiations, 3);
  // same field and constant: the compiled code is reused
  p.launch("inc", {{"a", "x"}, {"b", 1}});
  EXPECT_EQ(p.stats().instantiations, 3);
  EXPECT_EQ(element<int32_t>(p.array("x"), 0), 13);
  // a different compile-time constant is a new instantiation
  p.launch("inc", {{"a", "x"}, {"b", 5}});
  EXPECT_EQ(p.stats().instantiations, 4);
  EXPECT_EQ(element<int32_t>(p.array("x"), 0), 18);
  // inc2's b is a plain argument: a new value reuses the instantiation
  p.launch("inc2", {{"z", 1}, {"a", "x"}, {"b", 1}});
  EXPECT_EQ(p.stats().instantiations, 4);
  EXPECT_EQ(element<int32_t>(p.array("x"), 0), 20);
}

TEST(TaichiCases, PipelineAccumulatesThreeLaunches) {
  // arr[i] += base + i with bases 10, 20, 30 -> arr[i] == 3 i + 60
  Program p(no_cache());
  p.load_file(doc_path("taichi_pipeline.loom.json"));
  p.run_pipeline("step");
  ArrayView arr = p.array("arr");
  for (int i = 0; i < 100; ++i) EXPECT_EQ(element<int32_t>(arr, i), 3 * i + 60) << i;
  EXPECT_EQ(p.stats().instantiations, 1);
  EXPECT_EQ(p.stats().launches, 3);
}

TEST(Resources, NdarrayAndValuesInsideAnArgpack) {
  Program p(no_cache());
  p.load_file(doc_path("resources_in_packs.loom.json"));
  p.launch("fill", {{"job", "job"}});
  ArrayView data = p.array("data");
  for (int i = 0; i < 64; ++i)
    EXPECT_FLOAT_EQ(element<float>(data, i), 0.5f * static_cast<float>(i)) << i;
  p.set_argpack("job", "scale", 2.0);  // persists; the next launch sees it
  p.launch("fill", {{"job", "job"}});
  EXPECT_FLOAT_EQ(element<float>(p.array("data"), 10), 20.0f);
}

TEST(Resources, TexturesStoreAndSampleThroughPrograms) {
  Program p(no_cache());
  p.load_file(doc_path("resources_in_packs.loom.json"));
  p.launch("paint", {{"job", "job"}, {"img", "img"}});
  TextureView img = p.texture("img");
  ASSERT_EQ(img.format, TextureFormat::RGBA8);
  // texel (15, 3): tint * 1 -> (255, 128, 64, 255)
  const uint8_t* t = img.data + (3 * 16 + 15) * 4;
  EXPECT_EQ(t[0], 255);
  EXPECT_NEAR(t[1], 128, 1);
  EXPECT_NEAR(t[2], 64, 1);
  EXPECT_EQ(t[3], 255);
  // linear sampling halfway between texel centres 7 and 8 of a left-to-right ramp
  KernelResult r = p.launch("probe", {{"img", "img"}, {"u", 0.5}});
  ASSERT_EQ(r.values.size(), 4u);
  EXPECT_NEAR(r.values[0], 0.5, 0.02);
  EXPECT_NEAR(r.values[3], 1.0, 1e-6);
}

TEST(Resources, TextureOfTheWrongFormatIsRefused) {
  Program p(no_cache());
  graph::Document doc = graph::load_document_file(doc_path("resources_in_packs.loom.json"));
  doc.textures[0].format = TextureFormat::R32F;  // the kernels are written for rgba8
  p.load(std::move(doc));
  std::string e = error_of([&] { p.launch("paint", {{"job", "job"}, {"img", "img"}}); });
  EXPECT_NE(e.find("kernel 'paint'"), std::string::npos) << e;
  EXPECT_NE(e.find("rgba8 expected"), std::string::npos) << e;
}
