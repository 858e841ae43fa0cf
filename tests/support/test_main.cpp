// main() of every test binary: GoogleTest, plus the environment Loom's tests run in.
//   --loom-backend=B   sets $LOOM_BACKEND (the default device of every loom::Program)
// Vulkan always runs under the validation layer here: any message fails the test.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  setenv("LOOM_VULKAN_VALIDATION", "1", 1);
  for (int i = 1; i < argc; ++i) {
    const char* prefix = "--loom-backend=";
    if (std::strncmp(argv[i], prefix, std::strlen(prefix)) == 0) setenv("LOOM_BACKEND", argv[i] + std::strlen(prefix), 1);
  }
  return RUN_ALL_TESTS();
}
