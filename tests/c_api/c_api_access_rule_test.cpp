// The global data access rule across loops through loom.h, as an engine programmer meets it
// from the header alone: a debug module (make_test_modules, from
// tests/e2e/docs/autodiff_access_across_loops.loom.json) whose adjoints check that no element
// written in one top-level loop is read in a later one, which would give wrong gradients. K
// scatters y[5i mod 16] in its first loop and reads y[2j] in its second, so K.grad fails with
// LOOM_ERROR_LAUNCH naming the read, the write and their nodes; `disjoint` writes odd elements
// and reads even ones, and its adjoint runs. The shadows the check marks (y.written,
// p.y.written) are the module's own: not listed by loom_kernel_get_param, never given to
// loom_launch, made for whatever ndarray the launch binds, on the CPU and on Vulkan.
#include <gtest/gtest.h>
#include <loom/loom.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tests/c_api/loom_result_checks.h"
#include "tests/c_api/test_module.h"
#include "tests/support/vulkan_required.h"

using loom::test::open_module;
using loom::test::test_module_path;

namespace {

constexpr int64_t kN = 16;  // elements of x, y and ys
const char* const kNdarrayViolation =
    "node 8 reads y[...] after node 5 (in an earlier loop) wrote it";
const char* const kMemberViolation =
    "node 8 reads p.y[...] after node 5 (in an earlier loop) wrote it";
const char* const kFieldViolation = "node 8 reads y[i0] after node 6 (in an earlier loop) wrote it";

class AccessRule : public testing::TestWithParam<LoomArch> {
 protected:
  void SetUp() override {
    if (GetParam() == LOOM_ARCH_VULKAN) LOOM_REQUIRE_VULKAN_OR_SKIP();
    ASSERT_NO_FATAL_FAILURE(open_module(
        GetParam(), test_module_path(GetParam(), "access_rule_debug"), &runtime, &module));
    std::vector<float> x(kN);
    for (int64_t i = 0; i < kN; ++i) x[static_cast<size_t>(i)] = 0.25f * static_cast<float>(i + 1);
    ASSERT_LOOM(loom_array_write(array("x"), x.data(), x.size() * 4));
  }
  void TearDown() override {
    // The module first: packs it made may hold the engine's ndarrays.
    if (module) EXPECT_LOOM(loom_module_destroy(module));
    for (LoomArray a : made) EXPECT_LOOM(loom_ndarray_destroy(a));
    if (runtime) EXPECT_LOOM(loom_runtime_destroy(runtime));
  }

  LoomKernel kernel(const char* name) {
    LoomKernel k = nullptr;
    EXPECT_EQ(loom_module_get_kernel(module, name, 0, nullptr, &k), LOOM_SUCCESS)
        << name << ": " << loom_last_error_message();
    return k;
  }
  LoomArray array(const char* name) {
    LoomArray a = nullptr;
    EXPECT_EQ(loom_module_get_array(module, name, &a), LOOM_SUCCESS)
        << name << ": " << loom_last_error_message();
    return a;
  }
  // An f32 ndarray of `count` elements the engine made (zeroed).
  LoomArray ndarray(int64_t count) {
    LoomArray a = nullptr;
    EXPECT_EQ(loom_ndarray_create(runtime, LOOM_DTYPE_F32, 1, 1, &count, &a), LOOM_SUCCESS)
        << loom_last_error_message();
    if (a) made.push_back(a);
    return a;
  }
  LoomPipeline pipeline(const char* name) {
    LoomPipeline p = nullptr;
    EXPECT_EQ(loom_module_get_pipeline(module, name, &p), LOOM_SUCCESS)
        << name << ": " << loom_last_error_message();
    return p;
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
  static std::vector<std::string> pipeline_param_names(LoomPipeline p) {
    uint32_t count = 0;
    EXPECT_EQ(loom_pipeline_get_param_count(p, &count), LOOM_SUCCESS) << loom_last_error_message();
    std::vector<std::string> names;
    for (uint32_t i = 0; i < count; ++i) {
      LoomPipelineParamInfo param{sizeof(LoomPipelineParamInfo)};
      EXPECT_EQ(loom_pipeline_get_param(p, i, &param), LOOM_SUCCESS) << loom_last_error_message();
      names.emplace_back(param.name ? param.name : "");
    }
    return names;
  }

  LoomRuntime runtime = nullptr;
  LoomModule module = nullptr;
  std::vector<LoomArray> made;
};

// An adjoint lists K's parameters and its twins, as in a release module: the shadows after
// them are not the host's to see or give.
TEST_P(AccessRule, ShadowsAreNoParametersOfTheHost) {
  LoomKernel nd = kernel("nd_scatter_then_read.grad");
  EXPECT_EQ(param_names(nd), (std::vector<std::string>{"y", "y.grad"}));
  LoomParamInfo param{sizeof(LoomParamInfo)};
  EXPECT_LOOM_ERROR(loom_kernel_get_param(nd, 2, &param), LOOM_ERROR_NOT_FOUND,
                    "parameter 2 is past the kernel's 2");
  ASSERT_LOOM(loom_kernel_get_param(nd, 1, &param));
  EXPECT_EQ(param.kind, LOOM_PARAM_NDARRAY);
  EXPECT_EQ(param.dtype, LOOM_DTYPE_F32);
  EXPECT_EQ(param.ndim, 1u);

  LoomKernel pack = kernel("pack_scatter_then_read.grad");
  EXPECT_EQ(param_names(pack), (std::vector<std::string>{"p", "p.y.grad"}));
  EXPECT_LOOM_ERROR(loom_kernel_get_param(pack, 2, &param), LOOM_ERROR_NOT_FOUND,
                    "parameter 2 is past the kernel's 2");

  // The field y's shadow is no parameter either.
  LoomKernel field = kernel("scatter_then_read.grad");
  EXPECT_EQ(param_names(field), std::vector<std::string>{});
  EXPECT_LOOM_ERROR(loom_kernel_get_param(field, 0, &param), LOOM_ERROR_NOT_FOUND,
                    "parameter 0 is past the kernel's 0");

  // A host that gives a third argument where the shadow would go is refused.
  LoomArgument three[3] = {loom_arg_ndarray(array("ys")), loom_arg_ndarray(array("ys.grad")),
                           loom_arg_ndarray(ndarray(kN))};
  EXPECT_LOOM_ERROR(loom_launch(nd, 3, three), LOOM_ERROR_INVALID_ARGUMENT,
                    "nd_scatter_then_read.grad", "the kernel takes 2 argument(s) (y, y.grad)");

  // Nor do they show among what the kernel touches: every access names a parameter the host
  // gives, or a field (the field shadows are the module's own fields).
  for (LoomKernel k : {nd, pack}) {
    uint32_t count = 0;
    ASSERT_LOOM(loom_kernel_get_resource_access(k, &count, nullptr));
    std::vector<LoomResourceAccess> list(count, LoomResourceAccess{sizeof(LoomResourceAccess)});
    ASSERT_LOOM(loom_kernel_get_resource_access(k, &count, list.data()));
    for (const LoomResourceAccess& a : list) {
      EXPECT_EQ(std::string(a.name).find(".written"), std::string::npos) << a.name;
      if (a.source != LOOM_RESOURCE_FIELD) EXPECT_LT(a.param, 2u) << a.name;
    }
  }

  // Nor does a pipeline take them by name.
  EXPECT_EQ(pipeline_param_names(pipeline("ndarray_check")),
            (std::vector<std::string>{"y", "y.grad"}));
  EXPECT_EQ(pipeline_param_names(pipeline("member_check")),
            (std::vector<std::string>{"p", "p.y.grad"}));
}

// The module ndarray ys for y: K runs, K.grad fails the check given K's arguments only (y.grad
// is ys.grad) and given every argument.
TEST_P(AccessRule, AnNdarrayWrittenThenReadAcrossLoopsFailsTheAdjoint) {
  LoomKernel k = kernel("nd_scatter_then_read"), grad = kernel("nd_scatter_then_read.grad");
  LoomArgument y = loom_arg_ndarray(array("ys"));
  ASSERT_LOOM(loom_launch(k, 1, &y));
  EXPECT_LOOM_ERROR(loom_launch(grad, 1, &y), LOOM_ERROR_LAUNCH,
                    "kernel 'nd_scatter_then_read.grad'", kNdarrayViolation);
  LoomArgument all[2] = {y, loom_arg_ndarray(array("ys.grad"))};
  EXPECT_LOOM_ERROR(loom_launch(grad, 2, all), LOOM_ERROR_LAUNCH,
                    "kernel 'nd_scatter_then_read.grad'", kNdarrayViolation);
}

// The same through the module pack `holder`, which holds ys: the shadow is the member's.
TEST_P(AccessRule, APackMemberWrittenThenReadAcrossLoopsFailsTheAdjoint) {
  LoomKernel k = kernel("pack_scatter_then_read"), grad = kernel("pack_scatter_then_read.grad");
  LoomArgpack holder = nullptr;
  ASSERT_LOOM(loom_module_get_argpack(module, "holder", &holder));
  LoomArgument p = loom_arg_argpack(holder);
  ASSERT_LOOM(loom_launch(k, 1, &p));
  EXPECT_LOOM_ERROR(loom_launch(grad, 1, &p), LOOM_ERROR_LAUNCH,
                    "kernel 'pack_scatter_then_read.grad'", kMemberViolation);
  LoomArgument all[2] = {p, loom_arg_ndarray(array("ys.grad"))};
  EXPECT_LOOM_ERROR(loom_launch(grad, 2, all), LOOM_ERROR_LAUNCH,
                    "kernel 'pack_scatter_then_read.grad'", kMemberViolation);
}

// A field's shadow is the module's too: scatter_then_read.grad takes no argument at all.
TEST_P(AccessRule, AFieldWrittenThenReadAcrossLoopsFailsTheAdjoint) {
  ASSERT_LOOM(loom_launch(kernel("scatter_then_read"), 0, nullptr));
  EXPECT_LOOM_ERROR(loom_launch(kernel("scatter_then_read.grad"), 0, nullptr), LOOM_ERROR_LAUNCH,
                    "kernel 'scatter_then_read.grad'", kFieldViolation);
}

// Pipelines bind the shadows as loom_launch does. A failed check leaves the runtime working:
// `fine` runs after it as before.
TEST_P(AccessRule, PipelinesCheckTheRuleToo) {
  ASSERT_LOOM(loom_pipeline_launch(pipeline("fine")));
  EXPECT_LOOM_ERROR(loom_pipeline_launch(pipeline("field_check")), LOOM_ERROR_LAUNCH,
                    "scatter_then_read.grad", kFieldViolation);
  EXPECT_LOOM_ERROR(loom_pipeline_launch(pipeline("ndarray_check")), LOOM_ERROR_LAUNCH,
                    "nd_scatter_then_read.grad", kNdarrayViolation);
  EXPECT_LOOM_ERROR(loom_pipeline_launch(pipeline("member_check")), LOOM_ERROR_LAUNCH,
                    "pack_scatter_then_read.grad", kMemberViolation);
  EXPECT_LOOM(loom_pipeline_launch(pipeline("fine")));
}

// Ndarrays the engine made, of ys's length and twice it, as y and as the member a pack of the
// engine's holds (every argument given: they have no companion): the module makes a shadow of
// each one's shape, and the check fails the same way (K only writes and reads y[0..15]).
TEST_P(AccessRule, TheEnginesNdarraysOfAnyLengthAreChecked) {
  LoomKernel k = kernel("nd_scatter_then_read"), grad = kernel("nd_scatter_then_read.grad");
  LoomKernel pk = kernel("pack_scatter_then_read");
  LoomKernel pgrad = kernel("pack_scatter_then_read.grad");
  for (int64_t n : {kN, 2 * kN, kN}) {
    SCOPED_TRACE(n);
    LoomArgument y = loom_arg_ndarray(ndarray(n)), dy = loom_arg_ndarray(ndarray(n));
    ASSERT_LOOM(loom_launch(k, 1, &y));
    LoomArgument all[2] = {y, dy};
    EXPECT_LOOM_ERROR(loom_launch(grad, 2, all), LOOM_ERROR_LAUNCH,
                      "kernel 'nd_scatter_then_read.grad'", kNdarrayViolation);

    LoomArgpack holder = nullptr;
    ASSERT_LOOM(loom_argpack_create(module, "Holder", &holder));
    ASSERT_LOOM(loom_argpack_set(holder, "y", &y));
    LoomArgument p = loom_arg_argpack(holder);
    ASSERT_LOOM(loom_launch(pk, 1, &p));
    LoomArgument pall[2] = {p, dy};
    EXPECT_LOOM_ERROR(loom_launch(pgrad, 2, pall), LOOM_ERROR_LAUNCH,
                      "kernel 'pack_scatter_then_read.grad'", kMemberViolation);
  }
  // The module's ys again after the others: its own shadow still fits it.
  LoomArgument ys = loom_arg_ndarray(array("ys"));
  EXPECT_LOOM_ERROR(loom_launch(grad, 1, &ys), LOOM_ERROR_LAUNCH,
                    "kernel 'nd_scatter_then_read.grad'", kNdarrayViolation);
}

INSTANTIATE_TEST_SUITE_P(Archs, AccessRule, testing::Values(LOOM_ARCH_CPU, LOOM_ARCH_VULKAN),
                         [](const testing::TestParamInfo<LoomArch>& i) {
                           return std::string(i.param == LOOM_ARCH_CPU ? "cpu" : "vulkan");
                         });

}  // namespace
