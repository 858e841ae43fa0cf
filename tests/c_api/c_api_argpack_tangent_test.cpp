// A tangent kernel along an argpack through loom.h, as an engine programmer writes it from the
// header alone: warp.dual of docs/argpack_tangent.loom.json (a module make_test_modules wrote
// with the argpack twin p.dual) launched with a pack p and a direction pack of p's type, both
// made and filled through the C API, on the CPU and on Vulkan. Its tangent is compared with
// central differences of warp launched at p +- h * direction; a launch without the twin, or
// with a pack of another type as the twin, is refused naming it and runs nothing.
#include <gtest/gtest.h>
#include <loom/loom.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "tests/c_api/loom_result_checks.h"
#include "tests/c_api/test_module.h"
#include "tests/support/vulkan_required.h"

using loom::test::open_module;
using loom::test::test_module_path;

namespace {

constexpr int64_t kN = 32;  // elements of x and y, each an f32x2
constexpr size_t kFloats = 2 * kN;
constexpr uint64_t kBytes = kFloats * 4;
constexpr float kS = 0.6f;  // warp's value parameter s

// The members of a pack of type Params: an int, floats, a struct Lens {k, m} and a nested
// pack Inner {drag} bound by reference.
struct Params {
  int32_t steps = 0;
  float gain = 0;
  float offset[2] = {0, 0};
  float k = 0;
  float m[4] = {0, 0, 0, 0};
  float drag = 0;
};

// p + t * d for every float member; an int member has no direction.
Params along(const Params& p, const Params& d, float t) {
  Params q = p;
  q.gain += t * d.gain;
  for (int i = 0; i < 2; ++i) q.offset[i] += t * d.offset[i];
  q.k += t * d.k;
  for (int i = 0; i < 4; ++i) q.m[i] += t * d.m[i];
  q.drag += t * d.drag;
  return q;
}

const Params kAt = {3, 0.7f, {0.4f, -0.3f}, 1.2f, {0.9f, -0.3f, 0.2f, 1.1f}, 0.25f};
// A direction along every float member; its int member (no tangent) must change nothing.
const Params kAlong = {7, 1.0f, {0.5f, -1.0f}, 0.3f, {0.0f, 0.25f, 0.5f, -0.5f}, 0.75f};

std::vector<float> wave(float a, float b) {
  std::vector<float> v(kFloats);
  for (size_t i = 0; i < kFloats; ++i) v[i] = a * std::sin(b * static_cast<float>(i) + 0.1f);
  return v;
}

class ArgpackTangent : public testing::TestWithParam<LoomArch> {
 protected:
  void SetUp() override {
    if (GetParam() == LOOM_ARCH_VULKAN) LOOM_REQUIRE_VULKAN_OR_SKIP();
    ASSERT_NO_FATAL_FAILURE(open_module(GetParam(), test_module_path(GetParam(), "argpack_tangent"),
                                        &runtime, &module));
    ASSERT_LOOM(loom_module_get_kernel(module, "warp", 0, nullptr, &warp));
    ASSERT_LOOM(loom_module_get_kernel(module, "warp.dual", 0, nullptr, &dual));
  }
  void TearDown() override {
    // Outer packs were made after the Inner packs they bind: destroyed first.
    for (auto p = packs.rbegin(); p != packs.rend(); ++p) EXPECT_LOOM(loom_argpack_destroy(*p));
    if (module) EXPECT_LOOM(loom_module_destroy(module));
    for (LoomArray a : made) EXPECT_LOOM(loom_ndarray_destroy(a));
    if (runtime) EXPECT_LOOM(loom_runtime_destroy(runtime));
  }

  LoomArgpack pack(const char* type) {
    LoomArgpack p = nullptr;
    EXPECT_EQ(loom_argpack_create(module, type, &p), LOOM_SUCCESS) << loom_last_error_message();
    if (p) packs.push_back(p);
    return p;
  }
  void set(LoomArgpack p, const char* path, LoomArgument v) {
    EXPECT_EQ(loom_argpack_set(p, path, &v), LOOM_SUCCESS)
        << path << ": " << loom_last_error_message();
  }
  // A Params pack holding `v`, its Inner pack made for it and bound by reference.
  LoomArgpack params(const Params& v) {
    LoomArgpack inner = pack("Inner");
    set(inner, "drag", loom_arg_f32(v.drag));
    LoomArgpack p = pack("Params");
    set(p, "steps", loom_arg_i32(v.steps));
    set(p, "gain", loom_arg_f32(v.gain));
    set(p, "offset", loom_arg_f32_vector(2, v.offset));
    set(p, "lens.k", loom_arg_f32(v.k));
    set(p, "lens.m", loom_arg_f32_vector(4, v.m));
    set(p, "inner", loom_arg_argpack(inner));
    return p;
  }
  LoomArray ndarray(const std::vector<float>& data) {
    LoomArray a = nullptr;
    EXPECT_EQ(loom_ndarray_create(runtime, LOOM_DTYPE_F32, 2, 1, &kN, &a), LOOM_SUCCESS)
        << loom_last_error_message();
    if (!a) return a;
    made.push_back(a);
    EXPECT_EQ(loom_array_write(a, data.data(), kBytes), LOOM_SUCCESS) << loom_last_error_message();
    return a;
  }
  LoomArray module_array(const char* name) {
    LoomArray a = nullptr;
    EXPECT_EQ(loom_module_get_array(module, name, &a), LOOM_SUCCESS) << loom_last_error_message();
    return a;
  }
  static std::vector<float> read(LoomArray a) {
    std::vector<float> v(kFloats);
    EXPECT_EQ(loom_array_read(a, v.data(), kBytes), LOOM_SUCCESS) << loom_last_error_message();
    return v;
  }

  // y = warp(p, x, s).
  std::vector<float> warp_at(const Params& p, const std::vector<float>& x, float s) {
    LoomArray xa = ndarray(x), y = ndarray(std::vector<float>(kFloats, 0.0f));
    LoomArgument args[4] = {loom_arg_argpack(params(p)), loom_arg_ndarray(xa), loom_arg_ndarray(y),
                            loom_arg_f32(s)};
    EXPECT_EQ(loom_launch(warp, 4, args), LOOM_SUCCESS) << loom_last_error_message();
    return read(y);
  }

  // Every argument of warp.dual, found by the parameter names loom_kernel_get_param lists.
  struct DualArgs {
    LoomArgpack p, p_dual;
    LoomArray x, y, x_dual, y_dual;
    float s, s_dual;
  };
  std::vector<LoomArgument> dual_args(const DualArgs& a) {
    LoomKernelInfo info{sizeof(LoomKernelInfo)};
    EXPECT_EQ(loom_kernel_get_info(dual, &info), LOOM_SUCCESS) << loom_last_error_message();
    std::vector<LoomArgument> out;
    for (uint32_t i = 0; i < info.param_count; ++i) {
      LoomParamInfo param{sizeof(LoomParamInfo)};
      EXPECT_EQ(loom_kernel_get_param(dual, i, &param), LOOM_SUCCESS) << loom_last_error_message();
      std::string name = param.name;
      if (name == "p" || name == "p.dual")
        out.push_back(loom_arg_argpack(name == "p" ? a.p : a.p_dual));
      else if (name == "x" || name == "x.dual")
        out.push_back(loom_arg_ndarray(name == "x" ? a.x : a.x_dual));
      else if (name == "y" || name == "y.dual")
        out.push_back(loom_arg_ndarray(name == "y" ? a.y : a.y_dual));
      else if (name == "s" || name == "s.dual")
        out.push_back(loom_arg_f32(name == "s" ? a.s : a.s_dual));
      else
        ADD_FAILURE() << "warp.dual has an unexpected parameter '" << name << "'";
    }
    return out;
  }

  // warp.dual at (kAt, x, kS) along (dp, dx, ds), checked against central differences of
  // warp: y.dual is the derivative of y along the direction, y itself warp's result.
  void check_tangent(const Params& dp, const std::vector<float>& dx, float ds) {
    const std::vector<float> x = wave(0.8f, 0.37f);
    DualArgs a{params(kAt), params(dp),
               ndarray(x),  ndarray(std::vector<float>(kFloats, 0.0f)),
               ndarray(dx), ndarray(std::vector<float>(kFloats, 0.0f)),
               kS,          ds};
    std::vector<LoomArgument> args = dual_args(a);
    ASSERT_LOOM(loom_launch(dual, static_cast<uint32_t>(args.size()), args.data()));
    std::vector<float> tangent = read(a.y_dual), y = read(a.y);

    const float h = 1e-2f;
    auto x_at = [&](float t) {
      std::vector<float> v = x;
      for (size_t i = 0; i < kFloats; ++i) v[i] += t * dx[i];
      return v;
    };
    std::vector<float> plus = warp_at(along(kAt, dp, h), x_at(h), kS + h * ds);
    std::vector<float> minus = warp_at(along(kAt, dp, -h), x_at(-h), kS - h * ds);
    std::vector<float> primal = warp_at(kAt, x, kS);
    double largest = 0;
    for (size_t i = 0; i < kFloats; ++i) {
      double fd = (double{plus[i]} - double{minus[i]}) / (2.0 * h);
      EXPECT_NEAR(tangent[i], fd, 1e-3 * std::max(1.0, std::fabs(fd))) << "y.dual[" << i << "]";
      EXPECT_NEAR(y[i], primal[i], 1e-5 * (1.0 + std::fabs(primal[i]))) << "y[" << i << "]";
      largest = std::max(largest, std::fabs(fd));
    }
    EXPECT_GT(largest, 0.1);  // the check means something
  }

  LoomRuntime runtime = nullptr;
  LoomModule module = nullptr;
  LoomKernel warp = nullptr, dual = nullptr;
  std::vector<LoomArgpack> packs;
  std::vector<LoomArray> made;
};

// warp.dual takes warp's parameters, then the twins: p.dual an argpack of p's type.
TEST_P(ArgpackTangent, TheTwinIsAnArgpackOfItsParametersType) {
  LoomKernelInfo info{sizeof(LoomKernelInfo)};
  ASSERT_LOOM(loom_kernel_get_info(warp, &info));
  ASSERT_EQ(info.param_count, 4u);  // p, x, y, s
  ASSERT_LOOM(loom_kernel_get_info(dual, &info));
  ASSERT_EQ(info.param_count, 8u);  // and p.dual, x.dual, y.dual, s.dual in some order
  std::vector<std::string> names;
  for (uint32_t i = 0; i < info.param_count; ++i) {
    LoomParamInfo param{sizeof(LoomParamInfo)};
    ASSERT_LOOM(loom_kernel_get_param(dual, i, &param));
    names.emplace_back(param.name);
    if (i < 4) {
      LoomParamInfo own{sizeof(LoomParamInfo)};
      ASSERT_LOOM(loom_kernel_get_param(warp, i, &own));
      EXPECT_STREQ(param.name, own.name);  // K's parameters first, in K's order
    }
    if (names.back() != "p.dual") continue;
    EXPECT_GE(i, 4u);
    EXPECT_EQ(param.kind, LOOM_PARAM_ARGPACK);
    EXPECT_STREQ(param.argpack_type, "Params");
  }
  std::sort(names.begin() + 4, names.end());
  EXPECT_EQ(names,
            (std::vector<std::string>{"p", "x", "y", "s", "p.dual", "s.dual", "x.dual", "y.dual"}));
}

// Along the pack's float members only (x.dual and s.dual zero): the direction pack's members
// are the tangents of p's, its int member ignored.
TEST_P(ArgpackTangent, TangentAlongAnArgpackMatchesCentralDifferences) {
  check_tangent(kAlong, std::vector<float>(kFloats, 0.0f), 0.0f);
}

// Along the pack, the ndarray x and the value s at once.
TEST_P(ArgpackTangent, TangentAlongThePackTheArrayAndTheValueMatchesCentralDifferences) {
  check_tangent(kAlong, wave(0.5f, 0.91f), 0.4f);
}

// A direction pack made and left zero (and x.dual, s.dual zero): no tangent.
TEST_P(ArgpackTangent, AZeroDirectionPackGivesNoTangent) {
  LoomArgpack zero = pack("Params");
  DualArgs a{params(kAt),
             zero,
             ndarray(wave(0.8f, 0.37f)),
             ndarray(std::vector<float>(kFloats, 0.0f)),
             ndarray(std::vector<float>(kFloats, 0.0f)),
             ndarray(std::vector<float>(kFloats, 5.0f)),
             kS,
             0.0f};
  std::vector<LoomArgument> args = dual_args(a);
  ASSERT_LOOM(loom_launch(dual, static_cast<uint32_t>(args.size()), args.data()));
  for (float t : read(a.y_dual)) EXPECT_EQ(t, 0.0f);
}

// The twin has no default: warp.dual given warp's arguments only is refused naming p.dual,
// though its ndarray twins would have companions (xs.dual, ys.dual) and s.dual a default. A
// pack of another type, or no pack, as the twin is refused naming both. Nothing runs.
TEST_P(ArgpackTangent, AMissingOrMistypedTwinIsAClearErrorAndRunsNothing) {
  LoomArray xs = module_array("xs"), ys = module_array("ys"), ys_dual = module_array("ys.dual");
  ASSERT_LOOM(loom_array_write(xs, wave(0.8f, 0.37f).data(), kBytes));
  const std::vector<float> sentinel(kFloats, 9.0f);
  ASSERT_LOOM(loom_array_write(ys, sentinel.data(), kBytes));
  ASSERT_LOOM(loom_array_write(ys_dual, sentinel.data(), kBytes));
  LoomArgpack p = params(kAt);
  LoomArgument own[4] = {loom_arg_argpack(p), loom_arg_ndarray(xs), loom_arg_ndarray(ys),
                         loom_arg_f32(kS)};
  ASSERT_LOOM(loom_launch(warp, 4, own));  // warp's own arguments are fine for warp
  ASSERT_LOOM(loom_array_write(ys, sentinel.data(), kBytes));

  EXPECT_LOOM_ERROR(loom_launch(dual, 4, own), LOOM_ERROR_INVALID_ARGUMENT, "warp.dual", "p.dual",
                    "is an argpack", "the direction of 'p'", "no default",
                    "give all 8 arguments, 'p.dual' included");

  DualArgs a{p, pack("Inner"), xs, ys, module_array("xs.dual"), ys_dual, kS, 0.0f};
  std::vector<LoomArgument> wrong = dual_args(a);
  EXPECT_LOOM_ERROR(loom_launch(dual, static_cast<uint32_t>(wrong.size()), wrong.data()),
                    LOOM_ERROR_WRONG_TYPE, "warp.dual", "parameter 'p.dual'",
                    "takes an argpack of type 'Params'", "given one of type 'Inner'");

  for (LoomArgument& arg : wrong)
    if (arg.kind == LOOM_ARGUMENT_ARGPACK && arg.value.argpack != p) arg = loom_arg_ndarray(xs);
  EXPECT_LOOM_ERROR(loom_launch(dual, static_cast<uint32_t>(wrong.size()), wrong.data()),
                    LOOM_ERROR_WRONG_TYPE, "parameter 'p.dual'", "takes an argpack",
                    "given an ndarray");

  EXPECT_EQ(read(ys), sentinel);
  EXPECT_EQ(read(ys_dual), sentinel);
}

INSTANTIATE_TEST_SUITE_P(Archs, ArgpackTangent, testing::Values(LOOM_ARCH_CPU, LOOM_ARCH_VULKAN),
                         [](const testing::TestParamInfo<LoomArch>& i) {
                           return std::string(i.param == LOOM_ARCH_CPU ? "cpu" : "vulkan");
                         });

}  // namespace
