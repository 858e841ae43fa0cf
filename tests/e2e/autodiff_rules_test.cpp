// The checks of reverse mode as a user meets them through loom::Program (docs/autodiff.md):
// the global data access rule (a proven violation fails the K.grad launch; an undecided one
// fails it in debug programs, at run time) and gradients that stop at ops without a derivative
// (a warning through ProgramOptions::warn and Program::warnings). The suite runs on the CPU and
// on Vulkan (e2e_test.vulkan).
#include <algorithm>
#include <functional>
#include <vector>

#include "tests/e2e/e2e_util.h"

using namespace loom;
using namespace loom::test;

namespace {

// autodiff_rules: gather (y[j] = x[i], then reads y[i]), quantize (y[i] = floor(x[i] * 4) *
// 0.25); autodiff_access_rule: accumulate (y[i] += x[i]^2, then reads y[i]).
std::string document() { return doc_path("autodiff_rules.loom.json"); }

ProgramOptions options(bool debug, std::vector<std::string>* warnings = nullptr) {
  ProgramOptions o = no_cache();
  o.debug = debug;
  if (warnings) o.warn = [warnings](const std::string& m) { warnings->push_back(m); };
  return o;
}

Place place_of(const std::function<void()>& body) {
  try {
    body();
  } catch (const Error& e) {
    return e.place();
  }
  return {};
}

}  // namespace

TEST(AutodiffRules, AReadAfterAWriteTheCompilerProvesFailsTheAdjointLaunch) {
  for (bool debug : {false, true}) {
    Program p(options(debug));
    p.load_file(doc_path("autodiff_access_rule.loom.json"));
    const Args args = {{"x", "xs"}, {"y", "ys"}};
    p.launch("accumulate", args);  // the kernel itself is fine
    std::string e = error_of([&] { p.launch("accumulate.grad", args); });
    EXPECT_NE(e.find("kernel 'accumulate': node 6: cannot differentiate kernel 'accumulate': "
                     "node 6 reads y[i0] after node 5 wrote to it"),
              std::string::npos)
        << e;
    EXPECT_NE(e.find("docs/autodiff.md"), std::string::npos) << e;
    EXPECT_EQ(place_of([&] { p.launch("accumulate.grad", args); }).node, 6);
    // The same in a pipeline, and from the checks `loom check` and the editor run.
    EXPECT_NE(error_of([&] {
                p.run_pipeline("step");
              }).find("node 6 reads y[i0] after node 5 wrote to it"),
              std::string::npos);
    EXPECT_NE(error_of([&] { p.warnings(); }).find("node 6 reads y[i0] after node 5 wrote to it"),
              std::string::npos);
  }
}

TEST(AutodiffRules, AnUndecidedReadAfterWriteIsCheckedWhenADebugAdjointRuns) {
  Program p(options(true));
  p.load_file(document());
  // j = 100 (in zs, of 128): no thread reads what it wrote.
  const Args far = {{"x", "xs"}, {"y", "zs"}, {"j", 100}};
  p.launch("gather", far);
  EXPECT_EQ(error_of([&] { p.launch("gather.grad", far); }), "");
  // j = 5: thread 5 writes y[5], then reads it.
  const Args near = {{"x", "xs"}, {"y", "ys"}, {"j", 5}};
  p.launch("gather", near);
  std::string e = error_of([&] { p.launch("gather.grad", near); });
  EXPECT_NE(e.find("kernel 'gather.grad': node 6: assertion failed: kernel 'gather': node 6 "
                   "reads y[i0] after node 5 wrote it"),
            std::string::npos)
      << e;
  EXPECT_EQ(place_of([&] { p.launch("gather.grad", near); }).node, 6);
  // The pipeline `step` launches it with j = 5 too.
  EXPECT_NE(error_of([&] { p.run_pipeline("step"); }).find("node 6 reads y[i0] after node 5"),
            std::string::npos);

  // A release program does not check.
  Program release(options(false));
  release.load_file(document());
  release.launch("gather", near);
  EXPECT_EQ(error_of([&] { release.launch("gather.grad", near); }), "");
}

// Across loops (tests/e2e/docs/autodiff_access_across_loops.loom.json): one loop writes y at
// (5 i) mod 16, a later one reads y[j]; the compiler cannot compare the indices, so a debug
// K.grad checks them with the shadow field y.written and fails naming both nodes. Reading
// first and writing in a later loop is no violation (the tape recomputes from the state the
// launch found), and neither are writes to other elements (odd ones, read: even ones).
TEST(AutodiffRules, AReadInALaterLoopOfWhatAnEarlierLoopWroteIsCheckedWhenADebugAdjointRuns) {
  Program p(options(true));
  p.load_file(doc_path("autodiff_access_across_loops.loom.json"));
  p.launch("scatter_then_read");
  std::string e = error_of([&] { p.launch("scatter_then_read.grad"); });
  EXPECT_NE(e.find("kernel 'scatter_then_read.grad': node 8: assertion failed: kernel "
                   "'scatter_then_read': node 8 reads y[i0] after node 6 (in an earlier loop) "
                   "wrote it"),
            std::string::npos)
      << e;
  EXPECT_EQ(place_of([&] { p.launch("scatter_then_read.grad"); }).node, 8);
  // write_read_write: a loop writes odd elements, the next reads even ones, the last writes
  // every element: the last loop's marks come after the read, so it passes.
  for (const char* fine : {"read_then_scatter", "disjoint", "write_read_write"}) {
    p.launch(fine);
    EXPECT_EQ(error_of([&] { p.launch(std::string(fine) + ".grad"); }), "") << fine;
  }
  // disjoint marked the odd elements; disjoint_swapped writes even ones and reads odd ones:
  // it passes only because every launch clears the shadow first.
  p.launch("disjoint_swapped");
  EXPECT_EQ(error_of([&] { p.launch("disjoint_swapped.grad"); }), "");
  // A serial read between the loops (its check inserted at top level) leaves the loops
  // numbered alike: only the third loop (node 13) wrote the even elements the last one
  // reads; the message names every write the indices leave open.
  p.launch("serial_between", {{"k", 0}});
  e = error_of([&] { p.launch("serial_between.grad", {{"k", 0}}); });
  EXPECT_NE(e.find("node 16 reads y[...] after an earlier loop wrote it (node 5 or node 13)"),
            std::string::npos)
      << e;
  // The shadow field is the program's, not the document's.
  std::vector<std::string> names = p.resource_names();
  EXPECT_EQ(std::find(names.begin(), names.end(), "y.written"), names.end());

  // An ndarray parameter: its shadow is bound beside the ndarray the launch binds.
  p.launch("nd_scatter_then_read", {{"y", "ys"}});
  e = error_of([&] { p.launch("nd_scatter_then_read.grad", {{"y", "ys"}}); });
  EXPECT_NE(e.find("kernel 'nd_scatter_then_read.grad': node 8: assertion failed: kernel "
                   "'nd_scatter_then_read': node 8 reads y[...] after node 5 (in an earlier "
                   "loop) wrote it"),
            std::string::npos)
      << e;
  names = p.resource_names();
  EXPECT_EQ(std::find(names.begin(), names.end(), "ys.written"), names.end());
  // An ndarray an argpack holds: the shadow of the ndarray the pack holds there (ys: the same
  // shadow as through the parameter above).
  p.launch("pack_scatter_then_read", {{"p", "holder"}});
  e = error_of([&] { p.launch("pack_scatter_then_read.grad", {{"p", "holder"}}); });
  EXPECT_NE(e.find("kernel 'pack_scatter_then_read.grad': node 8: assertion failed: kernel "
                   "'pack_scatter_then_read': node 8 reads p.y[...] after node 5 (in an earlier "
                   "loop) wrote it"),
            std::string::npos)
      << e;

  // A release program does not check.
  Program release(options(false));
  release.load_file(doc_path("autodiff_access_across_loops.loom.json"));
  release.launch("scatter_then_read");
  EXPECT_EQ(error_of([&] { release.launch("scatter_then_read.grad"); }), "");
}

TEST(AutodiffRules, AGradientThatStopsAtAnOpWithoutADerivativeIsAWarning) {
  std::vector<std::string> warned;
  Program p(options(false, &warned));
  p.load_file(document());
  const Args args = {{"x", "xs"}, {"y", "ys"}};
  p.launch("quantize", args);
  p.launch("quantize.grad", args);
  p.launch("quantize.grad", args);  // one warning per instantiation, not per launch
  ASSERT_EQ(warned.size(), 1u);
  EXPECT_NE(warned[0].find("kernel 'quantize': node 5: the gradient of y with respect to x "
                           "stops at this floor"),
            std::string::npos)
      << warned[0];
  // gather's gradients all flow (its index j is no value dependency).
  p.launch("gather.grad", {{"x", "xs"}, {"y", "zs"}, {"j", 100}});
  EXPECT_EQ(warned.size(), 1u);

  // loom check and the editor: for every K.grad a pipeline launches.
  std::vector<Program::Warning> ws = p.warnings();
  int found = 0;
  for (const Program::Warning& w : ws) {
    if (w.message.find("the gradient of") == std::string::npos) continue;
    ++found;
    EXPECT_EQ(w.place.kernel, "quantize");
    EXPECT_EQ(w.place.node, 5);
  }
  EXPECT_EQ(found, 1);
}

// An ndarray reached through an argpack member has no adjoint: the adjoint of a kernel that
// stores into one a value that depends on a differentiated input (job.scale) says so, naming
// the member and the node, instead of leaving the gradient silently lost. The argpack's value
// members do get gradients (tape_test.cpp).
TEST(AutodiffRules, AnArgpacksNdarrayGetsNoGradientAndAWarningSaysSo) {
  std::vector<std::string> warned;
  Program p(options(false, &warned));
  p.load_file(doc_path("resources_in_packs.loom.json"));
  KernelResult r = p.launch("fill.grad", {{"job", "job"}});
  ASSERT_EQ(warned.size(), 1u);
  EXPECT_NE(warned[0].find("kernel 'fill': node 6: what this stores into the ndarray of argpack "
                           "member 'job.out' depends on differentiated inputs"),
            std::string::npos)
      << warned[0];
  // job.scale (a value member) and job.tint (a vector) are returned, tint's three components.
  EXPECT_EQ(r.names, (std::vector<std::string>{"job.scale", "job.tint"}));
}

// Reading an argpack's ndarray: a warning when what the kernel writes to a differentiated
// resource depends on the value read (`scaled`: out = t[i] * k), none when the ndarray only
// decides a condition (`lookup`: out = t[i] > 0 ? k : 0), as a lookup table does.
TEST(AutodiffRules, AnArgpacksNdarrayThatFeedsAGradientIsReportedALookupIsNot) {
  std::vector<std::string> warned;
  Program p(options(false, &warned));
  p.load_file(doc_path("argpack_ndarray_gradient.loom.json"));
  KernelResult r = p.launch("scaled.grad", {{"p", "tab"}});
  ASSERT_EQ(warned.size(), 1u);
  EXPECT_NE(warned[0].find("kernel 'scaled': node 3: the ndarray of argpack member 'p.t' gets no "
                           "gradient though what the kernel writes depends on it"),
            std::string::npos)
      << warned[0];
  EXPECT_EQ(r.names, std::vector<std::string>{"p.k"});
  p.launch("lookup.grad", {{"p", "tab"}});
  EXPECT_EQ(warned.size(), 1u) << warned.back();
}

// A return that skips code (tests/e2e/docs/autodiff_returns.loom.json: `early` returns before
// its loop when k > 0) cannot be reversed as written: K.grad is refused naming the return's
// node, instead of reversing the loop that did not run. Returns at the end (`late`, in both
// arms of a final `if`) are fine, and a debug adjoint of a kernel that returns at the end
// still checks the access rule across loops.
TEST(AutodiffRules, AnEarlyReturnIsRefusedAndOneAtTheEndIsFine) {
  Program p(options(true));
  p.load_file(doc_path("autodiff_returns.loom.json"));
  std::string e = error_of([&] { p.launch("early.grad", {{"k", 1}}); });
  EXPECT_NE(e.find("cannot differentiate kernel 'early': node 4 returns early, before code "
                   "that then does not run"),
            std::string::npos)
      << e;
  EXPECT_EQ(place_of([&] { p.launch("early.grad", {{"k", 1}}); }).node, 4);
  std::vector<float> one(1, 1.0f), ones(16, 1.0f);
  p.write_array("y.grad", ones.data(), ones.size() * sizeof(float));
  EXPECT_EQ(error_of([&] { p.launch("late.grad", {{"k", 1}}); }), "");
  for (int64_t i = 0; i < 16; ++i) EXPECT_EQ(element<float>(p.array("x.grad"), i), 2.0f) << i;
  p.launch("scatter_then_read_returning");
  e = error_of([&] { p.launch("scatter_then_read_returning.grad"); });
  EXPECT_NE(e.find("node 8 reads y[i0] after node 6 (in an earlier loop) wrote it"),
            std::string::npos)
      << e;
}
