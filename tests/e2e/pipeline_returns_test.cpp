// Program::last_returns: what the returning launches of a pipeline's last run returned (`loom
// run` prints it). The suite runs on the CPU and on Vulkan (e2e_test.vulkan).
#include "tests/e2e/e2e_util.h"

#include "compiler/graph/document_json.h"

using namespace loom;
using namespace loom::test;

namespace {

// pipeline_returns: `init` bumps count; `step` bumps it, then total(k) = count * k, guard(n)
// (asserts n < 10 in debug builds, returns nothing), spread(v, s) = (v * 2, {s, count}).
std::string document() { return doc_path("pipeline_returns.loom.json"); }

}  // namespace

TEST(PipelineReturns, EachReturningLaunchOfTheLastRunInOrder) {
  Program p(no_cache());
  p.load_file(document());
  EXPECT_TRUE(p.last_returns("step").empty());  // not run yet
  p.run_pipeline("init");
  EXPECT_TRUE(p.last_returns("init").empty());  // bump returns nothing

  p.run_pipeline("step");
  const std::vector<LaunchReturns>& r = p.last_returns("step");
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].launch, 1u);  // positions in the pipeline: bump (0) and guard (2) return nothing
  EXPECT_EQ(r[0].kernel, "total");
  EXPECT_EQ(r[0].result.names, std::vector<std::string>{"r0"});
  EXPECT_EQ(r[0].result.ints, std::vector<int64_t>{6});  // count 2, k 3
  EXPECT_EQ(r[1].launch, 3u);
  EXPECT_EQ(r[1].kernel, "spread");
  EXPECT_EQ(r[1].result.names, (std::vector<std::string>{"r0", "r1.first", "r1.n"}));
  EXPECT_EQ(r[1].result.values, (std::vector<double>{2, 4, 7, 0.5, 2}));
  EXPECT_EQ(r[1].result.value("r1.n"), 2);

  // The next run replaces the record; the document's `init` keeps its own.
  p.run_pipeline("step");
  ASSERT_EQ(p.last_returns("step").size(), 2u);
  EXPECT_EQ(p.last_returns("step")[0].result.value(), 9);  // count 3
  EXPECT_EQ(p.last_returns("step")[1].result.value("r1.n"), 3);
  EXPECT_TRUE(p.last_returns("init").empty());
}

TEST(PipelineReturns, ArgumentsGivenToTheRunShowInWhatItReturns) {
  Program p(no_cache());
  p.load_file(document());
  p.run_pipeline("step", {{"k", -4}, {"v", std::vector<double>{0.25, -1, 8}}});
  const std::vector<LaunchReturns>& r = p.last_returns("step");
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].result.value(), -4);  // count 1
  EXPECT_EQ(r[1].result.values, (std::vector<double>{0.5, -2, 16, 0.5, 1}));
  // Arguments refused before anything runs leave the record as it was.
  std::string refused = error_of([&] { p.run_pipeline("step", {{"kk", 1}}); });
  EXPECT_NE(refused.find("takes no argument 'kk'"), std::string::npos) << refused;
  ASSERT_EQ(p.last_returns("step").size(), 2u);
  EXPECT_EQ(p.last_returns("step")[0].result.value(), -4);
}

TEST(PipelineReturns, AFailingLaunchKeepsWhatTheLaunchesBeforeItReturned) {
  ProgramOptions debug = no_cache();
  debug.debug = true;  // guard's assertion is checked
  Program p(debug);
  p.load_file(document());
  p.run_pipeline("step");
  ASSERT_EQ(p.last_returns("step").size(), 2u);
  std::string failed = error_of([&] { p.run_pipeline("step", {{"n", 20}, {"k", 5}}); });
  EXPECT_NE(failed.find("n must be below 10"), std::string::npos) << failed;
  const std::vector<LaunchReturns>& r = p.last_returns("step");
  ASSERT_EQ(r.size(), 1u);  // total ran (count 2, k 5); spread, after guard, did not
  EXPECT_EQ(r[0].kernel, "total");
  EXPECT_EQ(r[0].result.value(), 10);
}

TEST(PipelineReturns, ALoadOrReloadStartsAfreshAndAnUnknownPipelineIsAnError) {
  Program p(no_cache());
  p.load_file(document());
  p.run_pipeline("step");
  ASSERT_FALSE(p.last_returns("step").empty());
  p.load_file(document());
  EXPECT_TRUE(p.last_returns("step").empty());
  p.run_pipeline("step");
  ASSERT_FALSE(p.last_returns("step").empty());
  p.reload(graph::load_document_file(document()));  // the state stays; the record does not
  EXPECT_TRUE(p.last_returns("step").empty());
  std::string unknown = error_of([&] { (void)p.last_returns("stpe"); });
  EXPECT_NE(unknown.find("the document has no pipeline 'stpe'"), std::string::npos) << unknown;
}
