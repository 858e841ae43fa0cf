// Gradients through loom.h, as an engine programmer writes them from the header alone: a
// module compiled from docs/gradient_descent.loom.json (`loom compile --kernel
// distance.dual`) runs the document's gradient-descent pipeline and its adjoint and tangent
// kernels launched by name, on the CPU and on Vulkan. The pipeline's result is compared with
// the same document run by the compiler (`loom run --steps 5 --dump`, written at build time);
// the direct launches with gradients worked out here from the arrays read back.
#include <gtest/gtest.h>
#include <loom/loom.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tests/c_api/loom_result_checks.h"
#include "tests/c_api/test_module.h"
#include "tests/support/vulkan_required.h"

using loom::test::open_module;

namespace {

constexpr int kN = 64;  // elements of xs and ts
constexpr uint64_t kBytes = uint64_t{kN} * 4;
constexpr float kW = 0.5f;  // the weight the document's pipeline gives distance

std::string module_path(LoomArch arch) {
  return std::string(LOOM_AUTODIFF_MODULES) + (arch == LOOM_ARCH_CPU ? "/cpu" : "/vulkan") +
         ".loommod";
}

// The f32 data at the end of a .npy file `loom run --dump` wrote.
std::vector<float> npy_floats(const std::string& path, size_t count) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<float> v(count);
  if (bytes.size() < count * 4) return {};
  std::memcpy(v.data(), bytes.data() + bytes.size() - count * 4, count * 4);
  return v;
}

bool near(float got, float want) {
  return std::fabs(got - want) <= 1e-5f * (1.0f + std::fabs(want));
}

class Gradients : public testing::TestWithParam<LoomArch> {
 protected:
  void SetUp() override {
    if (GetParam() == LOOM_ARCH_VULKAN) LOOM_REQUIRE_VULKAN_OR_SKIP();
    ASSERT_NO_FATAL_FAILURE(open_module(GetParam(), module_path(GetParam()), &runtime, &module));
  }
  void TearDown() override {
    if (module) EXPECT_LOOM(loom_module_destroy(module));
    for (LoomArray a : made) EXPECT_LOOM(loom_ndarray_destroy(a));
    if (runtime) EXPECT_LOOM(loom_runtime_destroy(runtime));
  }

  LoomArray array(const char* name) {
    LoomArray a = nullptr;
    EXPECT_EQ(loom_module_get_array(module, name, &a), LOOM_SUCCESS) << loom_last_error_message();
    return a;
  }
  LoomKernel kernel(const char* name) {
    LoomKernel k = nullptr;
    EXPECT_EQ(loom_module_get_kernel(module, name, 0, nullptr, &k), LOOM_SUCCESS)
        << loom_last_error_message();
    return k;
  }
  LoomArray ndarray(int64_t n) {
    LoomArray a = nullptr;
    EXPECT_EQ(loom_ndarray_create(runtime, LOOM_DTYPE_F32, 1, 1, &n, &a), LOOM_SUCCESS)
        << loom_last_error_message();
    if (a) made.push_back(a);
    return a;
  }
  static std::vector<float> read(LoomArray a, size_t n = kN) {
    std::vector<float> v(n);
    EXPECT_EQ(loom_array_read(a, v.data(), n * 4), LOOM_SUCCESS) << loom_last_error_message();
    return v;
  }
  void run(const char* pipeline) {
    LoomPipeline p = nullptr;
    ASSERT_LOOM(loom_module_get_pipeline(module, pipeline, &p));
    ASSERT_LOOM(loom_pipeline_launch(p));
  }

  LoomRuntime runtime = nullptr;
  LoomModule module = nullptr;
  std::vector<LoomArray> made;
};

// The document's pipeline (seed, zero xs.grad, distance, distance.grad, descend) run five
// times from the module gives what the compiler's `loom run --steps 5` gives.
TEST_P(Gradients, GradientDescentPipelineMatchesTheCompiler) {
  run("init");
  for (int s = 0; s < 5; ++s) run("step");
  std::vector<float> xs = read(array("xs"));
  std::vector<float> want = npy_floats(std::string(LOOM_AUTODIFF_MODULES) + "/xs_5.npy", kN);
  ASSERT_EQ(want.size(), size_t{kN});
  for (int i = 0; i < kN; ++i) ASSERT_TRUE(near(xs[i], want[i])) << i << ": " << xs[i];
  std::vector<float> loss = read(array("loss"), 1);
  std::vector<float> want_loss = npy_floats(std::string(LOOM_AUTODIFF_MODULES) + "/loss_5.npy", 1);
  ASSERT_EQ(want_loss.size(), 1u);
  EXPECT_NEAR(loss[0], want_loss[0], 1e-4f * (1 + std::fabs(want_loss[0])));
  // The steps descended: the targets are 3 - i/8, the start i/4.
  EXPECT_GT(xs[0], 0.0f);
}

// A pipeline's twin is one of its parameters like any other: given "x.grad" at launch, the
// adjoint accumulates into the engine's ndarray, and the descent (reading xs.grad, zeroed by
// the step) leaves xs as it was.
TEST_P(Gradients, APipelineTakesATwinByName) {
  run("init");
  LoomArray xs = array("xs"), ts = array("ts");
  std::vector<float> before = read(xs), t = read(ts);
  LoomArray mine = ndarray(kN);
  LoomPipeline step = nullptr;
  ASSERT_LOOM(loom_module_get_pipeline(module, "step", &step));
  LoomNamedArgument twin = {"x.grad", loom_arg_ndarray(mine)};
  ASSERT_LOOM(loom_pipeline_launch_with(step, 1, &twin));
  std::vector<float> g = read(mine);
  for (int i = 0; i < kN; ++i) EXPECT_TRUE(near(g[i], 2 * kW * (before[i] - t[i]))) << i;
  EXPECT_EQ(read(xs), before);
}

// distance.grad launched by name with distance's own arguments: x.grad is bound to xs.grad,
// and the gradient of the value parameter w comes back as the return value "w".
TEST_P(Gradients, AdjointLaunchedByNameBindsTheCompanionAndReturnsValueGradients) {
  run("init");
  LoomKernel seed = kernel("seed"), distance = kernel("distance"), grad = kernel("distance.grad");
  ASSERT_NE(grad, nullptr);
  LoomKernelInfo info{sizeof(LoomKernelInfo)};
  ASSERT_LOOM(loom_kernel_get_info(grad, &info));
  EXPECT_EQ(info.param_count, 4u);  // x, t, w, then the twin x.grad
  EXPECT_EQ(info.return_count, 1u);
  LoomParamInfo twin{sizeof(LoomParamInfo)};
  ASSERT_LOOM(loom_kernel_get_param(grad, 3, &twin));
  EXPECT_STREQ(twin.name, "x.grad");
  EXPECT_EQ(twin.kind, LOOM_PARAM_NDARRAY);

  LoomArray xs = array("xs"), ts = array("ts"), xs_grad = array("xs.grad");
  LoomArgument args[3] = {loom_arg_ndarray(xs), loom_arg_ndarray(ts), loom_arg_f32(kW)};
  ASSERT_LOOM(loom_launch(seed, 0, nullptr));
  ASSERT_LOOM(loom_launch(distance, 3, args));
  ASSERT_LOOM(loom_launch(grad, 3, args));
  std::vector<float> x = read(xs), t = read(ts), g = read(xs_grad);
  double dw = 0;
  for (int i = 0; i < kN; ++i) {
    EXPECT_TRUE(near(g[i], 2 * kW * (x[i] - t[i]))) << i << ": " << g[i];
    dw += (x[i] - t[i]) * (x[i] - t[i]);
  }
  float got_dw = 0;
  ASSERT_LOOM(loom_kernel_get_return_named(grad, "w", LOOM_DTYPE_F32, 1, &got_dw));
  EXPECT_NEAR(got_dw, dw, 1e-4 * dw);
  float by_index = 0;
  ASSERT_LOOM(loom_kernel_get_return(grad, 0, LOOM_DTYPE_F32, &by_index));
  EXPECT_EQ(by_index, got_dw);

  // Every argument given: the twin is the engine's ndarray, which gets the gradient.
  LoomArray mine = ndarray(kN);
  LoomArgument all[4] = {args[0], args[1], args[2], loom_arg_ndarray(mine)};
  ASSERT_LOOM(loom_launch(grad, 4, all));
  std::vector<float> m = read(mine);
  for (int i = 0; i < kN; ++i) EXPECT_TRUE(near(m[i], 2 * kW * (x[i] - t[i]))) << i;
  EXPECT_EQ(read(xs_grad), g);  // the companion was left alone
}

// distance.dual (compiled by --kernel): with xs.dual = 1 and ts.dual = 0 (zeroed at load),
// loss.dual is the derivative of the loss along xs, sum 2 w (x - t); given w.dual = 1 and no
// direction in xs, the derivative along w.
TEST_P(Gradients, TangentKernelLaunchedByName) {
  run("init");
  LoomKernel seed = kernel("seed"), dual = kernel("distance.dual");
  ASSERT_NE(dual, nullptr);
  LoomArray xs = array("xs"), ts = array("ts"), xs_dual = array("xs.dual"),
            loss_dual = array("loss.dual");
  std::vector<float> ones(kN, 1.0f);
  ASSERT_LOOM(loom_array_write(xs_dual, ones.data(), kBytes));
  ASSERT_LOOM(loom_launch(seed, 0, nullptr));
  LoomArgument args[3] = {loom_arg_ndarray(xs), loom_arg_ndarray(ts), loom_arg_f32(kW)};
  ASSERT_LOOM(loom_launch(dual, 3, args));  // twins: xs.dual, ts.dual, w.dual = 0
  std::vector<float> x = read(xs), t = read(ts);
  double along_x = 0, along_w = 0;
  for (int i = 0; i < kN; ++i) {
    along_x += 2 * kW * (x[i] - t[i]);
    along_w += (x[i] - t[i]) * (x[i] - t[i]);
  }
  EXPECT_NEAR(read(loss_dual, 1)[0], along_x, 1e-4 * std::fabs(along_x));

  float zero = 0;
  std::vector<float> zeros(kN, 0.0f);
  ASSERT_LOOM(loom_array_write(loss_dual, &zero, 4));
  ASSERT_LOOM(loom_array_write(xs_dual, zeros.data(), kBytes));
  LoomKernelInfo info{sizeof(LoomKernelInfo)};
  ASSERT_LOOM(loom_kernel_get_info(dual, &info));
  ASSERT_EQ(info.param_count, 6u);
  std::vector<LoomArgument> all(info.param_count);
  for (uint32_t p = 0; p < info.param_count; ++p) {
    LoomParamInfo param{sizeof(LoomParamInfo)};
    ASSERT_LOOM(loom_kernel_get_param(dual, p, &param));
    std::string name = param.name;
    all[p] = name == "x"        ? loom_arg_ndarray(xs)
             : name == "t"      ? loom_arg_ndarray(ts)
             : name == "w"      ? loom_arg_f32(kW)
             : name == "w.dual" ? loom_arg_f32(1.0f)
             : name == "x.dual" ? loom_arg_ndarray(xs_dual)
                                : loom_arg_ndarray(array("ts.dual"));
  }
  ASSERT_LOOM(loom_launch(dual, info.param_count, all.data()));
  EXPECT_NEAR(read(loss_dual, 1)[0], along_w, 1e-4 * along_w);
}

// What an engine gets wrong is said: an ndarray of its own has no companion, a twin of
// another shape, a count that is neither, a return value the kernel lacks.
TEST_P(Gradients, MistakesAreClearErrors) {
  LoomKernel grad = kernel("distance.grad");
  LoomArray xs = array("xs"), ts = array("ts");
  LoomArray mine = ndarray(kN), short_one = ndarray(8);
  LoomArgument own[3] = {loom_arg_ndarray(mine), loom_arg_ndarray(ts), loom_arg_f32(kW)};
  EXPECT_LOOM_ERROR(loom_launch(grad, 3, own), LOOM_ERROR_INVALID_ARGUMENT, "distance.grad",
                    "x.grad", "ndarray the engine made", "give all 4 arguments");
  LoomArgument shorter[4] = {loom_arg_ndarray(xs), loom_arg_ndarray(ts), loom_arg_f32(kW),
                             loom_arg_ndarray(short_one)};
  EXPECT_LOOM_ERROR(loom_launch(grad, 4, shorter), LOOM_ERROR_INVALID_ARGUMENT, "distance.grad",
                    "'x.grad' has extent 8", "at least 64 long");
  EXPECT_LOOM_ERROR(loom_launch(grad, 2, own), LOOM_ERROR_INVALID_ARGUMENT,
                    "takes 4 argument(s) (x, t, w, x.grad), or the first 3");
  float v = 0;
  EXPECT_LOOM_ERROR(loom_kernel_get_return_named(grad, "x", LOOM_DTYPE_F32, 1, &v),
                    LOOM_ERROR_NOT_FOUND, "returns no value 'x'; it returns 'w'");
  EXPECT_LOOM_ERROR(loom_kernel_get_return_named(grad, "w", LOOM_DTYPE_F32, 2, &v),
                    LOOM_ERROR_WRONG_DTYPE, "'w' is a f32 of 1 component(s)");
  // A kernel the module does not hold: no adjoint of zero was compiled.
  LoomKernel none = nullptr;
  EXPECT_LOOM_ERROR(loom_module_get_kernel(module, "zero.grad", 0, nullptr, &none),
                    LOOM_ERROR_NOT_FOUND, "zero.grad");
}

INSTANTIATE_TEST_SUITE_P(Archs, Gradients, testing::Values(LOOM_ARCH_CPU, LOOM_ARCH_VULKAN),
                         [](const testing::TestParamInfo<LoomArch>& i) {
                           return std::string(i.param == LOOM_ARCH_CPU ? "cpu" : "vulkan");
                         });

}  // namespace
