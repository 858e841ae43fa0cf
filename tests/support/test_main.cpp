// main() of every test binary: GoogleTest, plus the environment Loom's tests run in.
//   --loom-backend=B   sets $LOOM_BACKEND (the default device of every loom::Program); a run
//                      on Vulkan needs a device in every test (support/vulkan_required.h)
// Vulkan always runs under the validation layer here: any message fails the test.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "runtime/vulkan/vulkan_device.h"
#include "tests/support/vulkan_required.h"

namespace {

// Every test of a suite run on Vulkan skips (or, with LOOM_REQUIRE_VULKAN=1, fails) before
// it starts when there is no device: GoogleTest then runs SetUp and TearDown but not the body,
// so fixtures must not need a device in SetUp (support/vulkan_required.h).
class RequireVulkanInEveryTest : public testing::EmptyTestEventListener {
  void OnTestStart(const testing::TestInfo&) override { LOOM_REQUIRE_VULKAN_OR_SKIP(); }
};

}  // namespace

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  setenv("LOOM_VULKAN_VALIDATION", "1", 1);
  for (int i = 1; i < argc; ++i) {
    const char* prefix = "--loom-backend=";
    if (std::strncmp(argv[i], prefix, std::strlen(prefix)) == 0)
      setenv("LOOM_BACKEND", argv[i] + std::strlen(prefix), 1);
  }
  const char* backend = std::getenv("LOOM_BACKEND");
  if (backend && std::string(backend) == "vulkan")
    testing::UnitTest::GetInstance()->listeners().Append(new RequireVulkanInEveryTest);
  int result = RUN_ALL_TESTS();
  if (int late = loom::vk::validation_messages_at_shutdown()) {
    std::fprintf(stderr,
                 "%d Vulkan validation message(s) while devices were destroyed: failing the run\n",
                 late);
    return 1;
  }
  return result;
}
