// Gradients of the ndarrays an argpack holds through loom.h, as an engine programmer writes them
// from the header alone: energy.grad and advance.grad of
// tests/e2e/docs/argpack_ndarray_adjoint.loom.json (a module make_test_modules wrote), whose
// twins b.pos.grad, b.lens.c.grad and b.inner.w.grad follow K's parameters, on the CPU and on
// Vulkan. energy.grad given K's arguments only (the module pack `body`) writes pos.grad and
// weights.grad, the companions of what `body` holds, compared here with central differences of
// the loss; given every argument, the gradient lands where the twin says. A pack holding an
// ndarray the engine made, or a module ndarray without companion, and a twin of another shape
// are refused naming the twin, and nothing runs.
#include <gtest/gtest.h>
#include <loom/loom.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tests/c_api/loom_result_checks.h"
#include "tests/c_api/test_module.h"
#include "tests/support/vulkan_required.h"

using loom::test::open_module;
using loom::test::test_module_path;

namespace {

constexpr int64_t kN = 16;  // elements of pos (f32x2), weights and coef (f32)
constexpr float kSentinel = 7.0f;

std::vector<float> filled(size_t count, float v) { return std::vector<float>(count, v); }

class ArgpackGradient : public testing::TestWithParam<LoomArch> {
 protected:
  void SetUp() override {
    if (GetParam() == LOOM_ARCH_VULKAN) LOOM_REQUIRE_VULKAN_OR_SKIP();
    ASSERT_NO_FATAL_FAILURE(open_module(
        GetParam(), test_module_path(GetParam(), "argpack_gradient"), &runtime, &module));
    ASSERT_LOOM(loom_module_get_kernel(module, "reset", 0, nullptr, &reset));
    ASSERT_LOOM(loom_module_get_kernel(module, "energy", 0, nullptr, &energy));
    ASSERT_LOOM(loom_module_get_kernel(module, "energy.grad", 0, nullptr, &energy_grad));
    ASSERT_LOOM(loom_module_get_kernel(module, "advance.grad", 0, nullptr, &advance_grad));
    ASSERT_LOOM(loom_module_get_argpack(module, "body", &body));
  }
  void TearDown() override {
    // Body packs were made after the Inner packs they bind: destroyed first.
    for (auto p = packs.rbegin(); p != packs.rend(); ++p) EXPECT_LOOM(loom_argpack_destroy(*p));
    if (module) EXPECT_LOOM(loom_module_destroy(module));
    for (LoomArray a : made) EXPECT_LOOM(loom_ndarray_destroy(a));
    if (runtime) EXPECT_LOOM(loom_runtime_destroy(runtime));
  }

  LoomArray array(const char* name) {
    LoomArray a = nullptr;
    EXPECT_EQ(loom_module_get_array(module, name, &a), LOOM_SUCCESS)
        << name << ": " << loom_last_error_message();
    return a;
  }
  // An ndarray the engine made: `count` elements of `components` f32, holding `data`.
  LoomArray ndarray(uint32_t components, int64_t count, const std::vector<float>& data) {
    LoomArray a = nullptr;
    EXPECT_EQ(loom_ndarray_create(runtime, LOOM_DTYPE_F32, components, 1, &count, &a), LOOM_SUCCESS)
        << loom_last_error_message();
    if (!a) return a;
    made.push_back(a);
    write(a, data);
    return a;
  }
  static std::vector<float> read(LoomArray a) {
    LoomArrayInfo info{sizeof(LoomArrayInfo)};
    EXPECT_EQ(loom_array_get_info(a, &info), LOOM_SUCCESS) << loom_last_error_message();
    std::vector<float> v(info.bytes / 4);
    EXPECT_EQ(loom_array_read(a, v.data(), info.bytes), LOOM_SUCCESS) << loom_last_error_message();
    return v;
  }
  static void write(LoomArray a, const std::vector<float>& v) {
    EXPECT_EQ(loom_array_write(a, v.data(), v.size() * 4), LOOM_SUCCESS)
        << loom_last_error_message();
  }
  void run(const char* pipeline) {
    LoomPipeline p = nullptr;
    ASSERT_LOOM(loom_module_get_pipeline(module, pipeline, &p));
    ASSERT_LOOM(loom_pipeline_launch(p));
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
  // A Body pack of the host's: `pos` and `w` held as given, lens.c the module's coef.
  LoomArgpack host_body(LoomArray pos, LoomArray w) {
    LoomArgpack inner = pack("Inner");
    set(inner, "w", loom_arg_ndarray(w));
    LoomArgpack b = pack("Body");
    set(b, "pos", loom_arg_ndarray(pos));
    set(b, "lens.c", loom_arg_ndarray(array("coef")));
    set(b, "inner", loom_arg_argpack(inner));
    set(b, "k", loom_arg_f32(0.7f));
    return b;
  }

  static std::vector<std::string> param_names(LoomKernel k) {
    LoomKernelInfo info{sizeof(LoomKernelInfo)};
    EXPECT_EQ(loom_kernel_get_info(k, &info), LOOM_SUCCESS) << loom_last_error_message();
    std::vector<std::string> names;
    for (uint32_t i = 0; i < info.param_count; ++i) {
      LoomParamInfo param{sizeof(LoomParamInfo)};
      EXPECT_EQ(loom_kernel_get_param(k, i, &param), LOOM_SUCCESS) << loom_last_error_message();
      names.emplace_back(param.name ? param.name : "");
    }
    return names;
  }
  // Every argument of `k`, in the order loom_kernel_get_param lists its parameters.
  static std::vector<LoomArgument> all_args(LoomKernel k,
                                            const std::map<std::string, LoomArgument>& by_name) {
    std::vector<LoomArgument> args;
    for (const std::string& name : param_names(k)) {
      auto found = by_name.find(name);
      if (found == by_name.end()) {
        ADD_FAILURE() << "no argument for parameter '" << name << "'";
        continue;
      }
      args.push_back(found->second);
    }
    return args;
  }

  // The loss (the `loss` pipeline: reset, energy of `body`).
  float loss() {
    run("loss");
    std::vector<float> v = read(array("loss"));
    return v.empty() ? NAN : v[0];
  }
  // d loss / d a[i] by central differences, a's element i moved by +-h and put back.
  double central_difference(LoomArray a, std::vector<float> values, size_t i) {
    const float h = 1e-2f, at = values[i];
    values[i] = at + h;
    write(a, values);
    const double plus = loss();
    values[i] = at - h;
    write(a, values);
    const double minus = loss();
    values[i] = at;
    write(a, values);
    return (plus - minus) / (2.0 * h);
  }
  // `got` against central differences of the loss in every element of `a`; the largest
  // derivative seen.
  double expect_central_differences(const char* name, LoomArray a, const std::vector<float>& got) {
    const std::vector<float> values = read(a);
    EXPECT_EQ(got.size(), values.size()) << name;
    double largest = 0;
    for (size_t i = 0; i < std::min(got.size(), values.size()); ++i) {
      const double fd = central_difference(a, values, i);
      EXPECT_NEAR(got[i], fd, 2e-2 * std::fabs(fd) + 5e-4) << name << "[" << i << "]";
      largest = std::max(largest, std::fabs(fd));
    }
    return largest;
  }

  // init, step twice, then the seed by hand: the .grad arrays zero, loss.grad 1.
  void prepare() {
    run("init");
    run("step");
    run("step");
    write(array("pos.grad"), filled(2 * kN, 0.0f));
    write(array("weights.grad"), filled(kN, 0.0f));
    write(array("coef.grad"), filled(kN, 0.0f));
    write(array("loss.grad"), {1.0f});
  }

  LoomRuntime runtime = nullptr;
  LoomModule module = nullptr;
  LoomKernel reset = nullptr, energy = nullptr, energy_grad = nullptr, advance_grad = nullptr;
  LoomArgpack body = nullptr;
  std::vector<LoomArgpack> packs;
  std::vector<LoomArray> made;
};

// K.grad lists K's parameters, then a twin per float ndarray member of b that K touches, named
// by member path: energy reads pos and inner.w, advance also lens.c.
TEST_P(ArgpackGradient, TwinsOfThePacksNdarraysFollowKsParameters) {
  EXPECT_EQ(param_names(energy), std::vector<std::string>{"b"});
  std::vector<std::string> names = param_names(energy_grad);
  ASSERT_EQ(names.size(), 3u);
  EXPECT_EQ(names[0], "b");
  std::sort(names.begin() + 1, names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"b", "b.inner.w.grad", "b.pos.grad"}));

  names = param_names(advance_grad);
  ASSERT_EQ(names.size(), 5u);
  EXPECT_EQ(names[0], "b");
  EXPECT_EQ(names[1], "dt");
  std::sort(names.begin() + 2, names.end());
  EXPECT_EQ(names,
            (std::vector<std::string>{"b", "dt", "b.inner.w.grad", "b.lens.c.grad", "b.pos.grad"}));

  // Each twin an ndarray of its member's element type and dimensions.
  for (LoomKernel k : {energy_grad, advance_grad}) {
    std::vector<std::string> listed = param_names(k);
    for (uint32_t i = 0; i < listed.size(); ++i) {
      SCOPED_TRACE(listed[i]);
      LoomParamInfo param{sizeof(LoomParamInfo)};
      ASSERT_LOOM(loom_kernel_get_param(k, i, &param));
      if (listed[i] == "b") {
        EXPECT_EQ(param.kind, LOOM_PARAM_ARGPACK);
        EXPECT_STREQ(param.argpack_type, "Body");
        continue;
      }
      if (listed[i] == "dt") continue;
      EXPECT_EQ(param.kind, LOOM_PARAM_NDARRAY);
      EXPECT_EQ(param.dtype, LOOM_DTYPE_F32);
      EXPECT_EQ(param.components, listed[i] == "b.pos.grad" ? 2u : 1u);
      EXPECT_EQ(param.ndim, 1u);
    }
  }
}

// energy.grad given `body` only: its twins are the companions of what `body` holds, pos.grad
// and weights.grad (loss = sum w_i |pos_i|^2). coef, which energy does not read, gets none.
TEST_P(ArgpackGradient, KsArgumentsOnlyWriteTheCompanionsAndMatchCentralDifferences) {
  prepare();
  LoomArgument b = loom_arg_argpack(body);
  ASSERT_LOOM(loom_launch(reset, 0, nullptr));
  ASSERT_LOOM(loom_launch(energy, 1, &b));
  ASSERT_LOOM(loom_launch(energy_grad, 1, &b));
  const std::vector<float> dpos = read(array("pos.grad")), dw = read(array("weights.grad"));
  EXPECT_EQ(read(array("coef.grad")), filled(kN, 0.0f));

  const double largest = std::max(expect_central_differences("pos.grad", array("pos"), dpos),
                                  expect_central_differences("weights.grad", array("weights"), dw));
  EXPECT_GT(largest, 0.1);  // the check means something
}

// Every argument given: the twins are the arrays given (one the engine made, one another
// module array), and the companions stay as they were.
TEST_P(ArgpackGradient, EveryArgumentGivenPutsTheGradientInTheGivenTwins) {
  prepare();
  write(array("pos.grad"), filled(2 * kN, kSentinel));
  write(array("weights.grad"), filled(kN, kSentinel));
  LoomArray dpos = ndarray(2, kN, filled(2 * kN, 0.0f)), dw = array("weights.dual");
  write(dw, filled(kN, 0.0f));
  std::vector<LoomArgument> args =
      all_args(energy_grad, {{"b", loom_arg_argpack(body)},
                             {"b.pos.grad", loom_arg_ndarray(dpos)},
                             {"b.inner.w.grad", loom_arg_ndarray(dw)}});
  ASSERT_LOOM(loom_launch(energy_grad, static_cast<uint32_t>(args.size()), args.data()));

  const std::vector<float> pos = read(array("pos")), w = read(array("weights"));
  const std::vector<float> got_pos = read(dpos), got_w = read(dw);
  ASSERT_EQ(got_pos.size(), pos.size());
  ASSERT_EQ(got_w.size(), w.size());
  for (size_t i = 0; i < static_cast<size_t>(kN); ++i) {
    const float x = pos[2 * i], y = pos[2 * i + 1];
    EXPECT_NEAR(got_w[i], x * x + y * y, 1e-5f * (1.0f + x * x + y * y)) << "w " << i;
    for (size_t c = 0; c < 2; ++c) {
      const float want = 2.0f * w[i] * pos[2 * i + c];
      EXPECT_NEAR(got_pos[2 * i + c], want, 1e-5f * (1.0f + std::fabs(want))) << "pos " << i;
    }
  }
  EXPECT_EQ(read(array("pos.grad")), filled(2 * kN, kSentinel));
  EXPECT_EQ(read(array("weights.grad")), filled(kN, kSentinel));
}

// An ndarray the engine made has no companion: with K's arguments only, a pack holding one is
// refused naming the member's twin (pos directly, inner.w through the nested pack), and
// nothing runs. Given every argument, the same pack is fine.
TEST_P(ArgpackGradient, APackHoldingAnEngineNdarrayNeedsEveryArgument) {
  prepare();
  LoomArray pos_grad = array("pos.grad"), w_grad = array("weights.grad");
  write(pos_grad, filled(2 * kN, kSentinel));
  write(w_grad, filled(kN, kSentinel));
  LoomArray engine_pos = ndarray(2, kN, read(array("pos")));
  LoomArray engine_w = ndarray(1, kN, read(array("weights")));

  LoomArgument b = loom_arg_argpack(host_body(engine_pos, array("weights")));
  EXPECT_LOOM_ERROR(loom_launch(energy_grad, 1, &b), LOOM_ERROR_INVALID_ARGUMENT, "energy.grad",
                    "b.pos.grad", "give all");
  LoomArgument nested = loom_arg_argpack(host_body(array("pos"), engine_w));
  EXPECT_LOOM_ERROR(loom_launch(energy_grad, 1, &nested), LOOM_ERROR_INVALID_ARGUMENT,
                    "energy.grad", "b.inner.w.grad", "give all");
  EXPECT_EQ(read(pos_grad), filled(2 * kN, kSentinel));
  EXPECT_EQ(read(w_grad), filled(kN, kSentinel));

  LoomArray dpos = ndarray(2, kN, filled(2 * kN, 0.0f));
  std::vector<LoomArgument> args =
      all_args(energy_grad, {{"b", b},
                             {"b.pos.grad", loom_arg_ndarray(dpos)},
                             {"b.inner.w.grad", loom_arg_ndarray(w_grad)}});
  ASSERT_LOOM(loom_launch(energy_grad, static_cast<uint32_t>(args.size()), args.data()));
  const std::vector<float> pos = read(engine_pos), w = read(array("weights"));
  const std::vector<float> got = read(dpos);
  ASSERT_EQ(got.size(), pos.size());
  for (size_t i = 0; i < got.size(); ++i) {
    const float want = 2.0f * w[i / 2] * pos[i];
    EXPECT_NEAR(got[i], want, 1e-5f * (1.0f + std::fabs(want))) << i;
  }
  // This launch did run: weights.grad, its twin here, accumulated onto the sentinel.
  const std::vector<float> dw = read(w_grad);
  for (size_t i = 0; i < static_cast<size_t>(kN); ++i) {
    const float x = pos[2 * i], y = pos[2 * i + 1];
    EXPECT_NEAR(dw[i], kSentinel + x * x + y * y, 1e-5f * (1.0f + kSentinel)) << "w " << i;
  }
  EXPECT_EQ(read(pos_grad), filled(2 * kN, kSentinel));
}

// A module ndarray whose companion the module lacks (pos.dual has no pos.dual.grad) gives the
// twin no default either: LOOM_ERROR_NOT_FOUND naming it, and nothing runs.
TEST_P(ArgpackGradient, APackHoldingAModuleNdarrayWithoutCompanionNeedsEveryArgument) {
  prepare();
  LoomArray pos_grad = array("pos.grad"), w_grad = array("weights.grad");
  write(pos_grad, filled(2 * kN, kSentinel));
  write(w_grad, filled(kN, kSentinel));
  LoomArray pos_dual = array("pos.dual");
  write(pos_dual, read(array("pos")));

  LoomArgument b = loom_arg_argpack(host_body(pos_dual, array("weights")));
  EXPECT_LOOM_ERROR(loom_launch(energy_grad, 1, &b), LOOM_ERROR_NOT_FOUND, "energy.grad",
                    "b.pos.grad", "'pos.dual.grad'", "give all");
  EXPECT_EQ(read(pos_grad), filled(2 * kN, kSentinel));
  EXPECT_EQ(read(w_grad), filled(kN, kSentinel));
}

// A twin must have the shape of the ndarray its member holds: 8 elements for 16 falls short of
// what energy indexes, 32 is not the member's shape; each refused naming the twin, and nothing
// runs.
TEST_P(ArgpackGradient, ATwinOfAnotherShapeIsRefusedAndRunsNothing) {
  prepare();
  LoomArray pos_grad = array("pos.grad"), w_grad = array("weights.grad");
  write(pos_grad, filled(2 * kN, kSentinel));
  write(w_grad, filled(kN, kSentinel));
  auto launch_with = [&](LoomArray dpos, LoomArray dw) {
    std::vector<LoomArgument> args =
        all_args(energy_grad, {{"b", loom_arg_argpack(body)},
                               {"b.pos.grad", loom_arg_ndarray(dpos)},
                               {"b.inner.w.grad", loom_arg_ndarray(dw)}});
    return loom_launch(energy_grad, static_cast<uint32_t>(args.size()), args.data());
  };
  for (int64_t n : {kN / 2, 2 * kN}) {
    SCOPED_TRACE(n);
    LoomArray dpos = ndarray(2, n, filled(2 * n, kSentinel)),
              dw = ndarray(1, n, filled(n, kSentinel));
    EXPECT_LOOM_ERROR(launch_with(dpos, w_grad), LOOM_ERROR_INVALID_ARGUMENT, "energy.grad",
                      "'b.pos.grad'");
    EXPECT_LOOM_ERROR(launch_with(pos_grad, dw), LOOM_ERROR_INVALID_ARGUMENT, "energy.grad",
                      "'b.inner.w.grad'");
    EXPECT_EQ(read(dpos), filled(2 * n, kSentinel));
    EXPECT_EQ(read(dw), filled(n, kSentinel));
  }
  // Longer than energy indexes: the twin's own shape check, which names both shapes.
  LoomArray longer = ndarray(2, 2 * kN, filled(4 * kN, kSentinel));
  EXPECT_LOOM_ERROR(launch_with(longer, w_grad), LOOM_ERROR_INVALID_ARGUMENT,
                    "the ndarray given for 'b.pos.grad' has the shape [32]", "'b.pos' [16]");

  EXPECT_EQ(read(pos_grad), filled(2 * kN, kSentinel));
  EXPECT_EQ(read(w_grad), filled(kN, kSentinel));
}

INSTANTIATE_TEST_SUITE_P(Archs, ArgpackGradient, testing::Values(LOOM_ARCH_CPU, LOOM_ARCH_VULKAN),
                         [](const testing::TestParamInfo<LoomArch>& i) {
                           return std::string(i.param == LOOM_ARCH_CPU ? "cpu" : "vulkan");
                         });

}  // namespace
