// Program::run_pipeline with arguments by name: the program's ndarrays and values in place of
// the document's, for every launch whose kernel has a parameter of that name (the C ABI's
// loom_pipeline_launch_with has tests of its own in tests/c_api).
#include "tests/e2e/e2e_util.h"

#include "runtime/common/error.h"

using namespace loom;
using namespace loom::test;

namespace {

constexpr int kN = 16;

std::vector<float> floats(Program& p, const std::string& name) {
  ArrayView v = p.array(name);
  std::vector<float> out;
  for (int64_t i = 0; i < static_cast<int64_t>(v.elements()); ++i)
    out.push_back(element<float>(v, i));
  return out;
}

// fill(x, base): x[i] = base + i; scale(x, y, k): y[i] = x[i] * k.
std::vector<float> filled(float base, float k = 1) {
  std::vector<float> v(kN);
  for (int i = 0; i < kN; ++i) v[static_cast<size_t>(i)] = (base + static_cast<float>(i)) * k;
  return v;
}

}  // namespace

TEST(PipelineArgs, AProgramsNdarrayByNameTakesThePlaceOfTheDocumentsInEveryLaunch) {
  Program p(no_cache());
  p.load_file(source_path("tests/c_api/docs/pipeline_args.loom.json"));
  p.create_ndarray("mine", {Scalar::F32}, {kN});
  p.run_pipeline("step", {{"x", "mine"}});
  EXPECT_EQ(floats(p, "mine"), filled(1));  // fill wrote it
  EXPECT_EQ(floats(p, "b"), filled(1, 2));  // scale read it
  EXPECT_EQ(floats(p, "a"), filled(0, 0));  // the document's `a` was not touched
  p.run_pipeline("step", {{"base", 5}, {"x", "mine"}, {"k", -3}});
  EXPECT_EQ(floats(p, "mine"), filled(5));
  EXPECT_EQ(floats(p, "b"), filled(5, -3));
  // Given nothing, the document's arguments again.
  p.run_pipeline("step");
  EXPECT_EQ(floats(p, "a"), filled(1));
  EXPECT_EQ(floats(p, "b"), filled(1, 2));
  EXPECT_EQ(floats(p, "mine"), filled(5));
}

TEST(PipelineArgs, WrongArgumentsAreErrorsBeforeAnythingRuns) {
  Program p(no_cache());
  p.load_file(source_path("tests/c_api/docs/pipeline_args.loom.json"));
  p.create_ndarray("mine", {Scalar::F32}, {kN});
  std::string unknown = error_of([&] { p.run_pipeline("step", {{"x", "mine"}, {"z", 1}}); });
  EXPECT_NE(unknown.find("pipeline 'step' takes no argument 'z'; its launches take: x, base, y, k"),
            std::string::npos)
      << unknown;
  std::string twice = error_of([&] { p.run_pipeline("step", {{"k", 1}, {"k", 2}}); });
  EXPECT_NE(twice.find("argument 'k' is given twice"), std::string::npos) << twice;
  // `y` is scale's (the second launch) only: the error comes before fill runs.
  std::string wrong = error_of([&] { p.run_pipeline("step", {{"x", "mine"}, {"y", "img"}}); });
  EXPECT_NE(wrong.find("'y'"), std::string::npos) << wrong;
  EXPECT_EQ(floats(p, "mine"), filled(0, 0));
}

TEST(PipelineArgs, TemplateParametersCompileWhatTheyNeed) {
  // open_ndarray's `init` launches iota on i32 and f32 ndarrays (an open ndarray parameter):
  // one i32 ndarray for both compiles no new instantiation for the first and reuses it.
  Program p(no_cache());
  p.load_file(doc_path("open_ndarray.loom.json"));
  p.run_pipeline("init", {{"arr", "more_ints"}});
  ArrayView more = p.array("more_ints");
  for (int i = 0; i < 30; ++i) EXPECT_EQ(element<int32_t>(more, i), i) << i;
  EXPECT_EQ(element<int32_t>(p.array("ints"), 9), 0);  // the document's were not touched
  EXPECT_EQ(element<float>(p.array("floats"), 9), 0.0f);
}
