// The e2e suite runs twice (tests/CMakeLists.txt): this checks each run is on the device it
// claims, so a Vulkan run can never quietly fall back to the CPU.
#include <cstdlib>

#include "tests/e2e/e2e_util.h"

namespace loom::test {
namespace {

TEST(Backend, RunsOnTheDeviceAskedFor) {
  Program p(no_cache());
  const char* env = std::getenv("LOOM_BACKEND");
  Backend expected = env && std::string(env) == "vulkan" ? Backend::Vulkan : Backend::Cpu;
  EXPECT_EQ(p.backend(), expected);
  EXPECT_FALSE(p.device_name().empty());
  std::printf("running on %s: %s\n", backend_name(p.backend()), p.device_name().c_str());
  if (expected == Backend::Vulkan) {
    EXPECT_TRUE(p.options().validation) << "Vulkan tests run under the validation layer";
  }
}

}  // namespace
}  // namespace loom::test
