// The checks of reverse mode as `loom run` and `loom check` show them (docs/autodiff.md): a
// read after a write the compiler proves stops the run at the K.grad launch; an undecided one
// stops a --debug run when the adjoint runs; a gradient that stops at an op without a
// derivative is a warning naming kernel and node.
#include <gtest/gtest.h>

#include <string>

#include "tests/support/run_loom.h"
#include "tests/support/vulkan_required.h"

namespace {

using loom::test::CliRun;
using loom::test::run_loom;

std::string doc(const std::string& name = "autodiff_rules.loom.json") {
  return std::string(LOOM_SOURCE_DIR) + "/tests/e2e/docs/" + name;
}

const char* const kCut =
    "kernel 'quantize': node 5: the gradient of y with respect to x stops "
    "at this floor";

}  // namespace

TEST(CliAutodiffRules, AProvenReadAfterWriteStopsTheRunAndTheCheck) {
  std::string path = doc("autodiff_access_rule.loom.json");
  for (const char* command : {"run --no-cache", "check"}) {
    CliRun r = run_loom(std::string(command) + " " + path);
    EXPECT_NE(r.code, 0) << command << ": " << r.out;
    EXPECT_NE(r.out.find("kernel 'accumulate': node 6: cannot differentiate kernel 'accumulate': "
                         "node 6 reads y[i0] after node 5 wrote to it"),
              std::string::npos)
        << command << ": " << r.out;
  }
}

TEST(CliAutodiffRules, ADebugRunChecksWhatTheCompilerCouldNotDecide) {
  for (const char* backend : {"cpu", "vulkan"}) {
    if (std::string(backend) == "vulkan") LOOM_REQUIRE_VULKAN_OR_SKIP();
    std::string flags = std::string(" --no-cache --backend ") + backend +
                        (std::string(backend) == "vulkan" ? " --validate" : "");
    CliRun debug = run_loom("run " + doc() + flags + " --debug");
    EXPECT_NE(debug.code, 0) << backend << ": " << debug.out;
    EXPECT_NE(debug.out.find("kernel 'gather.grad': node 6: assertion failed: kernel 'gather': "
                             "node 6 reads y[i0] after node 5 wrote it"),
              std::string::npos)
        << backend << ": " << debug.out;
    // Without --debug it runs; quantize.grad warns where its gradient stops.
    CliRun release = run_loom("run " + doc() + flags);
    EXPECT_EQ(release.code, 0) << backend << ": " << release.out;
    EXPECT_NE(release.out.find(kCut), std::string::npos) << backend << ": " << release.out;
  }
}

TEST(CliAutodiffRules, CheckWarnsWhereAGradientStops) {
  CliRun r = run_loom("check " + doc());
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find(std::string("warning: ") + std::string(LOOM_SOURCE_DIR) +
                       "/tests/e2e/docs/autodiff_rules.loom.json: " + kCut),
            std::string::npos)
      << r.out;
}
