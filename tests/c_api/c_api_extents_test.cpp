// Extents a kernel indexes together, checked at launch through loom.h: `copy` (handles.loom.json)
// runs over p.a's extent and reads p.b with the same index, so a p.b shorter than p.a is
// refused before anything runs, naming both members and both extents, on the CPU and on
// Vulkan, without --debug.
#include <gtest/gtest.h>
#include <loom/loom.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tests/c_api/loom_result_checks.h"
#include "tests/support/vulkan_required.h"

namespace {

std::string module_path(LoomArch arch, const std::string& name) {
  return std::string(LOOM_TEST_MODULES) + (arch == LOOM_ARCH_CPU ? "/cpu/" : "/vulkan/") + name +
         ".loommod";
}

class LaunchExtents : public testing::TestWithParam<LoomArch> {
 protected:
  void SetUp() override {
    if (GetParam() == LOOM_ARCH_VULKAN) LOOM_REQUIRE_VULKAN_OR_SKIP();
    LoomRuntimeCreateInfo info{};
    info.struct_size = sizeof info;
    info.arch = GetParam();
    info.cpu_threads = 2;
    info.validation = GetParam() == LOOM_ARCH_VULKAN;
    ASSERT_LOOM(loom_runtime_create(&info, &runtime));
    // The release module: no bounds checks in the code.
    ASSERT_LOOM(loom_module_load(runtime, module_path(GetParam(), "handles").c_str(), &module));
    ASSERT_LOOM(loom_module_get_kernel(module, "copy", 0, nullptr, &copy));
    ASSERT_LOOM(loom_argpack_create(module, "Pair", &pair));
  }
  void TearDown() override {
    if (pair) EXPECT_LOOM(loom_argpack_destroy(pair));  // first: it holds its members
    for (LoomArray a : arrays) EXPECT_LOOM(loom_ndarray_destroy(a));
    if (module) EXPECT_LOOM(loom_module_destroy(module));
    if (runtime) EXPECT_LOOM(loom_runtime_destroy(runtime));
  }

  // An f32 ndarray of n elements, all `value`.
  LoomArray filled(int64_t n, float value) {
    LoomArray a = nullptr;
    EXPECT_LOOM(loom_ndarray_create(runtime, LOOM_DTYPE_F32, 1, 1, &n, &a));
    std::vector<float> v(static_cast<size_t>(n), value);
    EXPECT_LOOM(loom_array_write(a, v.data(), v.size() * sizeof(float)));
    arrays.push_back(a);
    return a;
  }
  std::vector<float> read(LoomArray a, int64_t n) {
    std::vector<float> v(static_cast<size_t>(n));
    EXPECT_LOOM(loom_array_read(a, v.data(), v.size() * sizeof(float)));
    return v;
  }
  LoomResult launch(LoomArray a, LoomArray b) {
    LoomArgument v = loom_arg_ndarray(a);
    if (LoomResult r = loom_argpack_set(pair, "a", &v)) return r;
    v = loom_arg_ndarray(b);
    if (LoomResult r = loom_argpack_set(pair, "b", &v)) return r;
    LoomArgument p = loom_arg_argpack(pair);
    return loom_launch(copy, 1, &p);
  }

  LoomRuntime runtime = nullptr;
  LoomModule module = nullptr;
  LoomKernel copy = nullptr;
  LoomArgpack pair = nullptr;
  std::vector<LoomArray> arrays;
};

TEST_P(LaunchExtents, AShorterPackMemberIsRefusedNamingBothAndNothingRuns) {
  LoomArray a = filled(64, 7.0f), b = filled(16, 1.0f);
  ASSERT_EQ(launch(a, b), LOOM_ERROR_INVALID_ARGUMENT) << loom_last_error_message();
  EXPECT_EQ(loom_last_error(), LOOM_ERROR_INVALID_ARGUMENT);
  std::string m = loom_last_error_message();
  for (const char* part :
       {"kernel 'copy'", "ndarray 'p.b' (argpack member) has extent 16", "indexes it up to 63",
        "the extent of ndarray 'p.a' (argpack member) along dimension 0 (64)"})
    EXPECT_NE(m.find(part), std::string::npos) << part << " in: " << m;
  ASSERT_LOOM(loom_runtime_wait(runtime));
  for (float x : read(a, 64)) ASSERT_EQ(x, 7.0f);  // the kernel did not run

  // Extents that fit run: equal, or p.b longer than the loop needs.
  LoomArray same = filled(64, 1.0f), longer = filled(100, 2.0f);
  ASSERT_LOOM(launch(a, same));
  ASSERT_LOOM(loom_runtime_wait(runtime));
  for (float x : read(a, 64)) ASSERT_EQ(x, 2.0f);
  ASSERT_LOOM(launch(a, longer));
  ASSERT_LOOM(loom_runtime_wait(runtime));
  for (float x : read(a, 64)) ASSERT_EQ(x, 3.0f);
  // A shorter p.a shortens the loop: fine.
  LoomArray small = filled(8, 0.0f);
  ASSERT_LOOM(launch(small, b));
  ASSERT_LOOM(loom_runtime_wait(runtime));
  for (float x : read(small, 8)) ASSERT_EQ(x, 2.0f);
}

INSTANTIATE_TEST_SUITE_P(Arch, LaunchExtents, testing::Values(LOOM_ARCH_CPU, LOOM_ARCH_VULKAN),
                         [](const testing::TestParamInfo<LoomArch>& i) {
                           return std::string(i.param == LOOM_ARCH_CPU ? "Cpu" : "Vulkan");
                         });

}  // namespace
