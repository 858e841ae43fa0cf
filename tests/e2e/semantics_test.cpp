// What a kernel means, independent of how the compiler splits it: returns, return values,
// argument ranges and formats.
#include "tests/e2e/e2e_util.h"

using namespace loom;
using namespace loom::test;

TEST(Semantics, AReturnSkipsTheRestOfTheKernelAcrossTasks) {
  Program p(no_cache());
  p.load_file(doc_path("early_return.loom.json"));
  KernelResult r = p.launch("tasks", {{"c", 5}});
  EXPECT_EQ(r.ints.at(0), 5);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(element<int32_t>(p.array("g"), i), 0) << i;
  EXPECT_EQ(element<int32_t>(p.array("h"), 0), 0);
  // no return: everything after the if runs
  r = p.launch("tasks", {{"c", 0}});
  for (int i = 0; i < 4; ++i) EXPECT_EQ(element<int32_t>(p.array("g"), i), 99) << i;
  EXPECT_EQ(element<int32_t>(p.array("h"), 0), 55);
}

TEST(Semantics, OffloadedAndSingleTaskKernelsAgree) {
  Program p(no_cache());
  p.load_file(doc_path("early_return.loom.json"));
  for (const char* kernel : {"tasks", "single"}) {
    p.launch(kernel, {{"c", 3}});
    EXPECT_EQ(element<int32_t>(p.array("h"), 0), 0) << kernel;
  }
}

TEST(Semantics, ALaunchReachingNoReturnGivesZeros) {
  Program p(no_cache());
  p.load_file(doc_path("early_return.loom.json"));
  for (const char* kernel : {"tasks", "single"}) {
    EXPECT_EQ(p.launch(kernel, {{"c", 7}}).ints.at(0), 7) << kernel;
    KernelResult r = p.launch(kernel, {{"c", -1}});  // not the previous launch's 7
    EXPECT_EQ(r.ints.at(0), 0) << kernel;
    EXPECT_EQ(r.values.at(0), 0.0) << kernel;
  }
}
