// Pipelines given arguments at launch (loom_pipeline_launch_with, _into_with): the host's
// ndarrays, textures, packs and values by parameter name, on the CPU, on Loom's Vulkan device
// and recorded into an engine's command buffers, each compared with the same pipeline run on
// the module's own data; the checks (unknown names, kinds, types, templates, runtimes) and
// what a pipeline takes (loom_pipeline_get_param).
#include <gtest/gtest.h>
#include <loom/loom.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "tests/c_api/loom_result_checks.h"
#include "tests/support/host_vulkan_device.h"
#include "tests/support/vulkan_required.h"

namespace {

constexpr int kN = 16;                         // elements of the document's ndarrays
constexpr size_t kTexels = size_t{8} * 4 * 4;  // floats of its 8 x 4 rgba32f texture
constexpr uint64_t kBytes = uint64_t{kN} * 4;

const char* arch_dir(LoomArch arch) { return arch == LOOM_ARCH_CPU ? "cpu" : "vulkan"; }

std::string module_path(LoomArch arch) {
  return std::string(LOOM_PIPELINE_ARGS_MODULES) + "/" + arch_dir(arch) + ".loommod";
}
std::string test_module_path(LoomArch arch, const std::string& name) {
  return std::string(LOOM_TEST_MODULES) + "/" + arch_dir(arch) + "/" + name + ".loommod";
}

LoomNamedArgument named(const char* name, LoomArgument value) { return {name, value}; }

// What a host owns in one test: its runtime and what it made, destroyed in an order that
// leaves nothing in use.
struct Host {
  LoomRuntime runtime = nullptr;
  std::vector<LoomModule> modules;
  std::vector<LoomArray> arrays;
  std::vector<LoomTexture> textures;

  ~Host() {
    // Modules first: their packs may refer to the arrays and textures.
    for (LoomModule m : modules) EXPECT_LOOM(loom_module_destroy(m));
    for (LoomArray a : arrays) EXPECT_LOOM(loom_ndarray_destroy(a));
    for (LoomTexture t : textures) EXPECT_LOOM(loom_texture_destroy(t));
    if (runtime) EXPECT_LOOM(loom_runtime_destroy(runtime));
  }
  LoomModule load(const std::string& path) {
    LoomModule m = nullptr;
    EXPECT_EQ(loom_module_load(runtime, path.c_str(), &m), LOOM_SUCCESS)
        << path << ": " << loom_last_error_message();
    if (m) modules.push_back(m);
    return m;
  }
  LoomPipeline pipeline(LoomModule m, const char* name) {
    LoomPipeline p = nullptr;
    EXPECT_EQ(loom_module_get_pipeline(m, name, &p), LOOM_SUCCESS) << loom_last_error_message();
    return p;
  }
  LoomArray ndarray(LoomDataType dtype, uint32_t ndim = 1) {
    int64_t shape[2] = {kN, 2};
    LoomArray a = nullptr;
    EXPECT_EQ(loom_ndarray_create(runtime, dtype, 1, ndim, shape, &a), LOOM_SUCCESS)
        << loom_last_error_message();
    if (a) arrays.push_back(a);
    return a;
  }
  LoomTexture texture() {
    LoomTexture t = nullptr;
    EXPECT_EQ(loom_texture_create(runtime, LOOM_TEXTURE_RGBA32F, 8, 4, 0, &t), LOOM_SUCCESS)
        << loom_last_error_message();
    if (t) textures.push_back(t);
    return t;
  }
};

std::vector<float> read(LoomArray a) {
  std::vector<float> v(kN);
  EXPECT_EQ(loom_array_read(a, v.data(), kBytes), LOOM_SUCCESS) << loom_last_error_message();
  return v;
}
std::vector<float> module_array(LoomModule m, const char* name) {
  LoomArray a = nullptr;
  EXPECT_EQ(loom_module_get_array(m, name, &a), LOOM_SUCCESS) << loom_last_error_message();
  return a ? read(a) : std::vector<float>{};
}
std::vector<float> read(LoomTexture t) {
  std::vector<float> v(kTexels);
  EXPECT_EQ(loom_texture_read(t, v.data(), v.size() * 4), LOOM_SUCCESS)
      << loom_last_error_message();
  return v;
}
std::vector<float> module_texture(LoomModule m, const char* name) {
  LoomTexture t = nullptr;
  EXPECT_EQ(loom_module_get_texture(m, name, &t), LOOM_SUCCESS) << loom_last_error_message();
  return t ? read(t) : std::vector<float>{};
}

// fill(x, base): x[i] = base + i; then scale(x, y, k): y[i] = x[i] * k.
std::vector<float> filled(float base) {
  std::vector<float> v(kN);
  for (int i = 0; i < kN; ++i) v[i] = base + static_cast<float>(i);
  return v;
}
std::vector<float> times(std::vector<float> v, float k) {
  for (float& f : v) f *= k;
  return v;
}

// ---- per arch, on a runtime of Loom's own

class PipelineArgs : public testing::TestWithParam<LoomArch> {
 protected:
  void SetUp() override {
    if (GetParam() == LOOM_ARCH_VULKAN) LOOM_REQUIRE_VULKAN_OR_SKIP();
    LoomRuntimeCreateInfo info{};
    info.struct_size = sizeof info;
    info.arch = GetParam();
    info.cpu_threads = 2;
    info.validation = GetParam() == LOOM_ARCH_VULKAN;
    ASSERT_LOOM(loom_runtime_create(&info, &host.runtime));
  }
  Host host;
};

TEST_P(PipelineArgs, AnNdarrayByNameTakesThePlaceOfTheModulesInEveryLaunchThatNamesIt) {
  // `own` runs on the module's data; `given` runs on the host's ndarray.
  LoomModule own = host.load(module_path(GetParam()));
  LoomModule given = host.load(module_path(GetParam()));
  ASSERT_TRUE(own && given);
  ASSERT_LOOM(loom_pipeline_launch(host.pipeline(own, "step")));
  std::vector<float> own_a = module_array(own, "a"), own_b = module_array(own, "b");
  EXPECT_EQ(own_a, filled(1));
  EXPECT_EQ(own_b, times(filled(1), 2));

  LoomPipeline step = host.pipeline(given, "step");
  LoomArray x = host.ndarray(LOOM_DTYPE_F32);
  LoomNamedArgument args[] = {named("x", loom_arg_ndarray(x))};
  ASSERT_LOOM(loom_pipeline_launch_with(step, 1, args));
  // Both launches took it: fill wrote it, scale read it; the module's `a` was not touched.
  EXPECT_EQ(read(x), own_a);
  EXPECT_EQ(module_array(given, "b"), own_b);
  EXPECT_EQ(module_array(given, "a"), std::vector<float>(kN, 0.0f));

  // Values per run, beside the ndarray.
  LoomNamedArgument more[] = {named("base", loom_arg_f32(5)), named("x", loom_arg_ndarray(x)),
                              named("k", loom_arg_f32(-3))};
  ASSERT_LOOM(loom_pipeline_launch_with(step, 3, more));
  EXPECT_EQ(read(x), filled(5));
  EXPECT_EQ(module_array(given, "b"), times(filled(5), -3));

  // A run given nothing uses the module's arguments again.
  ASSERT_LOOM(loom_pipeline_launch(step));
  EXPECT_EQ(module_array(given, "a"), own_a);
  EXPECT_EQ(module_array(given, "b"), own_b);
  EXPECT_EQ(read(x), filled(5));

  // An output only one launch takes: fill and scale keep the module's `a`, scale writes `y`.
  LoomArray y = host.ndarray(LOOM_DTYPE_F32);
  LoomNamedArgument out[] = {named("y", loom_arg_ndarray(y)), named("base", loom_arg_f32(2))};
  ASSERT_LOOM(loom_pipeline_launch_with(step, 2, out));
  EXPECT_EQ(read(y), times(filled(2), 2));
  EXPECT_EQ(module_array(given, "a"), filled(2));
  EXPECT_EQ(module_array(given, "b"), own_b);
}

TEST_P(PipelineArgs, PacksAndTexturesByName) {
  LoomModule own = host.load(module_path(GetParam()));
  LoomModule given = host.load(module_path(GetParam()));
  ASSERT_TRUE(own && given);

  // The module's pack: scale 3 into `b`. The host's: scale 5 into its own ndarray.
  ASSERT_LOOM(loom_pipeline_launch(host.pipeline(own, "packed")));
  EXPECT_EQ(module_array(own, "b"), times(filled(0), 3));
  LoomArgpack job = nullptr;
  ASSERT_LOOM(loom_argpack_create(given, "Job", &job));
  LoomArray out = host.ndarray(LOOM_DTYPE_F32);
  LoomArgument scale = loom_arg_f32(5), target = loom_arg_ndarray(out);
  ASSERT_LOOM(loom_argpack_set(job, "scale", &scale));
  ASSERT_LOOM(loom_argpack_set(job, "out", &target));
  LoomNamedArgument pack[] = {named("job", loom_arg_argpack(job))};
  ASSERT_LOOM(loom_pipeline_launch_with(host.pipeline(given, "packed"), 1, pack));
  EXPECT_EQ(read(out), times(filled(0), 5));
  EXPECT_EQ(module_array(given, "b"), std::vector<float>(kN, 0.0f));

  // A texture the host made, and a value per frame; the same value on the module's texture
  // gives the same texels.
  LoomTexture img = host.texture();
  for (float v : {0.25f, 7.0f}) {
    LoomNamedArgument own_args[] = {named("v", loom_arg_f32(v))};
    ASSERT_LOOM(loom_pipeline_launch_with(host.pipeline(own, "paint"), 1, own_args));
    LoomNamedArgument args[] = {named("img", loom_arg_texture(img)), named("v", loom_arg_f32(v))};
    ASSERT_LOOM(loom_pipeline_launch_with(host.pipeline(given, "paint"), 2, args));
    std::vector<float> texels = read(img);
    EXPECT_EQ(texels, module_texture(own, "img")) << "v " << v;
    EXPECT_EQ(texels[size_t{4} * (8 * 2 + 3)], v + 3) << "texel (3, 2), red";
  }
  EXPECT_EQ(module_texture(given, "img"), std::vector<float>(kTexels, 0.0f));
}

TEST_P(PipelineArgs, WrongArgumentsAreRefusedBeforeAnythingRuns) {
  LoomModule m = host.load(module_path(GetParam()));
  ASSERT_NE(m, nullptr);
  LoomPipeline step = host.pipeline(m, "step");
  LoomArray x = host.ndarray(LOOM_DTYPE_F32);
  LoomArray ints = host.ndarray(LOOM_DTYPE_I32);
  LoomArray grid = host.ndarray(LOOM_DTYPE_F32, 2);

  LoomNamedArgument unknown[] = {named("x", loom_arg_ndarray(x)), named("z", loom_arg_f32(1))};
  EXPECT_LOOM_ERROR(loom_pipeline_launch_with(step, 2, unknown), LOOM_ERROR_NOT_FOUND,
                    "pipeline 'step' takes no argument 'z'", "its launches take: x, base, y, k");
  LoomNamedArgument dtype[] = {named("x", loom_arg_ndarray(ints))};
  EXPECT_LOOM_ERROR(loom_pipeline_launch_with(step, 1, dtype), LOOM_ERROR_WRONG_DTYPE,
                    "pipeline 'step', launch 0 (kernel 'fill'): parameter 'x'",
                    "takes an ndarray of f32, given one of i32");
  LoomNamedArgument ndim[] = {named("y", loom_arg_ndarray(grid))};
  EXPECT_LOOM_ERROR(loom_pipeline_launch_with(step, 1, ndim), LOOM_ERROR_WRONG_NDIM,
                    "pipeline 'step', launch 1 (kernel 'scale'): parameter 'y'",
                    "1 dimension(s), given one of 2");
  LoomNamedArgument kind[] = {named("base", loom_arg_ndarray(x))};
  EXPECT_LOOM_ERROR(loom_pipeline_launch_with(step, 1, kind), LOOM_ERROR_WRONG_TYPE,
                    "launch 0 (kernel 'fill'): parameter 'base'", "given an ndarray");
  LoomNamedArgument value[] = {named("k", loom_arg_f64(2))};
  EXPECT_LOOM_ERROR(loom_pipeline_launch_with(step, 1, value), LOOM_ERROR_WRONG_DTYPE,
                    "launch 1 (kernel 'scale'): parameter 'k' is f32, given f64");
  LoomNamedArgument twice[] = {named("k", loom_arg_f32(1)), named("k", loom_arg_f32(2))};
  EXPECT_LOOM_ERROR(loom_pipeline_launch_with(step, 2, twice), LOOM_ERROR_INVALID_ARGUMENT,
                    "args[1]: 'k' is given twice");
  LoomNamedArgument no_name[] = {named(nullptr, loom_arg_f32(1))};
  EXPECT_LOOM_ERROR(loom_pipeline_launch_with(step, 1, no_name), LOOM_ERROR_NULL_HANDLE,
                    "loom_pipeline_launch_with: args[0].name is null");
  EXPECT_LOOM_ERROR(loom_pipeline_launch_with(step, 1, nullptr), LOOM_ERROR_NULL_HANDLE,
                    "args is null");
  EXPECT_LOOM_ERROR(loom_pipeline_launch_with(nullptr, 0, nullptr), LOOM_ERROR_NULL_HANDLE,
                    "loom_pipeline_launch_with: pipeline is null");

  // A good argument beside a bad one: nothing ran, the host's ndarray is still zero.
  LoomNamedArgument mixed[] = {named("x", loom_arg_ndarray(x)), named("y", loom_arg_ndarray(grid))};
  EXPECT_EQ(loom_pipeline_launch_with(step, 2, mixed), LOOM_ERROR_WRONG_NDIM);
  EXPECT_EQ(read(x), std::vector<float>(kN, 0.0f));
  EXPECT_EQ(module_array(m, "b"), std::vector<float>(kN, 0.0f));

  // Textures of another format, packs of another type, packs with an unset ndarray member.
  LoomTexture rgba8 = nullptr;
  ASSERT_LOOM(loom_texture_create(host.runtime, LOOM_TEXTURE_RGBA8, 8, 4, 0, &rgba8));
  host.textures.push_back(rgba8);
  LoomNamedArgument format[] = {named("img", loom_arg_texture(rgba8))};
  EXPECT_LOOM_ERROR(loom_pipeline_launch_with(host.pipeline(m, "paint"), 1, format),
                    LOOM_ERROR_WRONG_DTYPE, "launch 0 (kernel 'paint'): parameter 'img'",
                    "format rgba32f, given rgba8");
  LoomArgpack unset = nullptr;
  ASSERT_LOOM(loom_argpack_create(m, "Job", &unset));
  LoomNamedArgument pack[] = {named("job", loom_arg_argpack(unset))};
  EXPECT_LOOM_ERROR(loom_pipeline_launch_with(host.pipeline(m, "packed"), 1, pack),
                    LOOM_ERROR_INVALID_ARGUMENT, "member 'out' (an ndarray) is not set");
}

// A C caller may put any int where loom.h declares an enum (issue 17): an argument's kind or
// dtype outside its enum is refused as invalid, naming the parameter, and nothing runs.
TEST_P(PipelineArgs, ArgumentsOfNoKnownKindOrDtypeAreInvalid) {
  LoomModule m = host.load(module_path(GetParam()));
  ASSERT_TRUE(m);
  LoomPipeline step = host.pipeline(m, "step");
  for (int32_t v : {-1, 999, INT32_MIN, INT32_MAX}) {
    LoomArgument base = loom_arg_f32(5);
    std::memcpy(&base.kind, &v, sizeof v);  // what `(LoomArgumentKind)v` makes in C
    LoomNamedArgument args[] = {named("base", base)};
    EXPECT_EQ(loom_pipeline_launch_with(step, 1, args), LOOM_ERROR_INVALID_ARGUMENT) << v;
    std::string m1 = loom_last_error_message();
    EXPECT_NE(m1.find("'base'"), std::string::npos) << m1;
    EXPECT_NE(m1.find("kind " + std::to_string(v) + " is not a LoomArgumentKind"),
              std::string::npos)
        << m1;
    base = loom_arg_f32(5);
    std::memcpy(&base.dtype, &v, sizeof v);
    args[0] = named("base", base);
    EXPECT_EQ(loom_pipeline_launch_with(step, 1, args), LOOM_ERROR_INVALID_ARGUMENT) << v;
    std::string m2 = loom_last_error_message();
    EXPECT_NE(m2.find(std::to_string(v) + " is not a LoomDataType"), std::string::npos) << m2;
  }
  ASSERT_LOOM(loom_pipeline_launch(step));  // nothing was left half-bound
}

TEST_P(PipelineArgs, InstantiationsAreTheModulesAndTemplateParametersAreCompiledIn) {
  // open: `init` launches iota for ndarrays of i32, then of f32 (an open ndarray parameter,
  // one instantiation per element type); an i32 ndarray suits the first only.
  LoomModule open = host.load(test_module_path(GetParam(), "open"));
  ASSERT_NE(open, nullptr);
  LoomArray ints = host.ndarray(LOOM_DTYPE_I32);
  LoomNamedArgument arr[] = {named("arr", loom_arg_ndarray(ints))};
  EXPECT_LOOM_ERROR(loom_pipeline_launch_with(host.pipeline(open, "init"), 1, arr),
                    LOOM_ERROR_WRONG_DTYPE, "launch 1 (kernel 'iota'): parameter 'arr'",
                    "given one of i32",
                    "the pipeline launches the instantiation for ndarrays of f32 with 1 "
                    "dimension(s) and cannot pick another at launch");
  std::vector<int32_t> zero(kN);
  EXPECT_EQ(loom_array_read(ints, zero.data(), kBytes), LOOM_SUCCESS);
  EXPECT_EQ(zero, std::vector<int32_t>(kN, 0));

  // heat: `step` launches diffuse with its fields as template arguments.
  LoomModule heat = host.load(test_module_path(GetParam(), "heat"));
  ASSERT_NE(heat, nullptr);
  LoomNamedArgument src[] = {named("src", loom_arg_ndarray(ints))};
  EXPECT_LOOM_ERROR(loom_pipeline_launch_with(host.pipeline(heat, "step"), 1, src),
                    LOOM_ERROR_NOT_SUPPORTED, "launch 0 (kernel 'diffuse'): 'src' is a template",
                    "src=field temperature", "a pipeline cannot change it at launch");
  // Its value parameter is not.
  LoomNamedArgument k[] = {named("k", loom_arg_f32(0.1f))};
  EXPECT_LOOM(loom_pipeline_launch_with(host.pipeline(heat, "step"), 1, k));
}

TEST_P(PipelineArgs, WhatAPipelineTakes) {
  LoomModule m = host.load(module_path(GetParam()));
  ASSERT_NE(m, nullptr);
  LoomPipeline step = host.pipeline(m, "step");
  uint32_t count = 0;
  ASSERT_LOOM(loom_pipeline_get_param_count(step, &count));
  ASSERT_EQ(count, 4u);
  struct Want {
    const char* name;
    LoomParamKind kind;
    uint32_t ndim, launch_count, first_launch, access;
  };
  // `fill` writes x; `scale` reads x and writes y: what a render graph declares.
  const uint32_t rw = LOOM_ACCESS_READ | LOOM_ACCESS_WRITE;
  const Want want[] = {{"x", LOOM_PARAM_NDARRAY, 1, 2, 0, rw},
                       {"base", LOOM_PARAM_VALUE, 0, 1, 0, 0},
                       {"y", LOOM_PARAM_NDARRAY, 1, 1, 1, LOOM_ACCESS_WRITE},
                       {"k", LOOM_PARAM_VALUE, 0, 1, 1, 0}};
  for (uint32_t i = 0; i < count; ++i) {
    LoomPipelineParamInfo info{};
    info.struct_size = sizeof info;
    ASSERT_LOOM(loom_pipeline_get_param(step, i, &info));
    EXPECT_STREQ(info.name, want[i].name);
    EXPECT_EQ(info.kind, want[i].kind) << info.name;
    EXPECT_EQ(info.dtype, LOOM_DTYPE_F32) << info.name;
    EXPECT_EQ(info.components, 1u) << info.name;
    EXPECT_EQ(info.ndim, want[i].ndim) << info.name;
    EXPECT_EQ(info.launch_count, want[i].launch_count) << info.name;
    EXPECT_EQ(info.first_launch, want[i].first_launch) << info.name;
    EXPECT_EQ(info.argpack_type, nullptr) << info.name;
    EXPECT_TRUE(info.access_known) << info.name;
    EXPECT_EQ(info.access, want[i].access) << info.name;
  }
  LoomPipelineParamInfo job{};
  job.struct_size = sizeof job;
  ASSERT_LOOM(loom_pipeline_get_param(host.pipeline(m, "packed"), 0, &job));
  EXPECT_STREQ(job.name, "job");
  EXPECT_EQ(job.kind, LOOM_PARAM_ARGPACK);
  ASSERT_NE(job.argpack_type, nullptr);
  EXPECT_STREQ(job.argpack_type, "Job");
  EXPECT_EQ(job.access, uint32_t{LOOM_ACCESS_WRITE}) << "pack_fill writes job.out";
  LoomPipelineParamInfo img{};
  img.struct_size = sizeof img;
  ASSERT_LOOM(loom_pipeline_get_param(host.pipeline(m, "paint"), 0, &img));
  EXPECT_EQ(img.kind, LOOM_PARAM_TEXTURE);
  EXPECT_EQ(img.access, uint32_t{LOOM_ACCESS_WRITE});
  EXPECT_EQ(img.ndim, 2u);

  LoomPipelineParamInfo past{};
  past.struct_size = sizeof past;
  EXPECT_LOOM_ERROR(loom_pipeline_get_param(step, 4, &past), LOOM_ERROR_NOT_FOUND,
                    "pipeline 'step': parameter 4 is past its 4");
  LoomPipelineParamInfo unsized{};
  EXPECT_LOOM_ERROR(loom_pipeline_get_param(step, 0, &unsized), LOOM_ERROR_INVALID_ARGUMENT,
                    "struct_size is 0");
  EXPECT_EQ(unsized.name, nullptr);  // nothing written on failure
  EXPECT_LOOM_ERROR(loom_pipeline_get_param_count(step, nullptr), LOOM_ERROR_NULL_HANDLE,
                    "count is null");
}

INSTANTIATE_TEST_SUITE_P(Arch, PipelineArgs, testing::Values(LOOM_ARCH_CPU, LOOM_ARCH_VULKAN),
                         [](const testing::TestParamInfo<LoomArch>& i) {
                           return i.param == LOOM_ARCH_CPU ? "cpu" : "vulkan";
                         });

// ---- runtimes together

TEST(PipelineArgsRuntimes, AnotherRuntimesHandlesAreWrongRuntime) {
  Host one, two;
  LoomRuntimeCreateInfo info{};
  info.struct_size = sizeof info;
  info.arch = LOOM_ARCH_CPU;
  ASSERT_LOOM(loom_runtime_create(&info, &one.runtime));
  ASSERT_LOOM(loom_runtime_create(&info, &two.runtime));
  LoomModule m = one.load(module_path(LOOM_ARCH_CPU));
  LoomModule other = two.load(module_path(LOOM_ARCH_CPU));
  ASSERT_TRUE(m && other);
  LoomPipeline step = one.pipeline(m, "step");
  LoomArray foreign = two.ndarray(LOOM_DTYPE_F32);
  LoomNamedArgument x[] = {named("x", loom_arg_ndarray(foreign))};
  EXPECT_LOOM_ERROR(loom_pipeline_launch_with(step, 1, x), LOOM_ERROR_WRONG_RUNTIME,
                    "launch 0 (kernel 'fill'): parameter 'x'", "belongs to another runtime");
  LoomTexture img = two.texture();
  LoomNamedArgument tex[] = {named("img", loom_arg_texture(img))};
  EXPECT_LOOM_ERROR(loom_pipeline_launch_with(one.pipeline(m, "paint"), 1, tex),
                    LOOM_ERROR_WRONG_RUNTIME, "belongs to another runtime");
  LoomArgpack pack = nullptr;
  ASSERT_LOOM(loom_argpack_create(other, "Job", &pack));
  LoomNamedArgument job[] = {named("job", loom_arg_argpack(pack))};
  EXPECT_LOOM_ERROR(loom_pipeline_launch_with(one.pipeline(m, "packed"), 1, job),
                    LOOM_ERROR_WRONG_RUNTIME, "belongs to another runtime");
  // Recording into a command buffer is for Vulkan runtimes.
  EXPECT_LOOM_ERROR(loom_pipeline_launch_into_with(step, VK_NULL_HANDLE, 0, nullptr),
                    LOOM_ERROR_WRONG_ARCH, "loom_pipeline_launch_into_with");
  // A pipeline handle of a destroyed module.
  LoomPipeline gone = two.pipeline(other, "step");
  ASSERT_LOOM(loom_module_destroy(other));
  two.modules.clear();
  EXPECT_EQ(loom_pipeline_launch_with(gone, 0, nullptr), LOOM_ERROR_INVALID_HANDLE);
  uint32_t count = 0;
  EXPECT_EQ(loom_pipeline_get_param_count(gone, &count), LOOM_ERROR_INVALID_HANDLE);
}

// ---- recorded into an engine's command buffers

TEST(PipelineArgsEngine, RecordedIntoTheEnginesCommandBuffers) {
  LOOM_REQUIRE_VULKAN_OR_SKIP();
  loom::testing::HostDevice device;
  if (!device.create()) GTEST_SKIP() << "no Vulkan 1.2 device with a graphics and compute queue";
  Host host;
  LoomVulkanDeviceImport info = device.import_info();
  info.queue_mode = LOOM_QUEUE_SHARED;  // reads below wait on the shared queue
  ASSERT_LOOM(loom_runtime_import_vulkan(&info, &host.runtime));
  LoomModule own = host.load(module_path(LOOM_ARCH_VULKAN));
  LoomModule given = host.load(module_path(LOOM_ARCH_VULKAN));
  ASSERT_TRUE(own && given);
  LoomPipeline own_step = host.pipeline(own, "step"), step = host.pipeline(given, "step");
  LoomArray x = host.ndarray(LOOM_DTYPE_F32);
  for (int frame = 0; frame < 3; ++frame) {  // frames in flight reuse what Loom recorded
    auto base = static_cast<float>(10 * frame);
    ASSERT_LOOM(loom_runtime_begin_frame(host.runtime));
    VkCommandBuffer cb = device.begin();
    LoomNamedArgument own_args[] = {named("base", loom_arg_f32(base))};
    ASSERT_LOOM(loom_pipeline_launch_into_with(own_step, cb, 1, own_args));
    LoomNamedArgument args[] = {named("x", loom_arg_ndarray(x)), named("base", loom_arg_f32(base))};
    ASSERT_LOOM(loom_pipeline_launch_into_with(step, cb, 2, args));
    device.submit_and_wait(cb);
    EXPECT_EQ(read(x), module_array(own, "a")) << "frame " << frame;
    EXPECT_EQ(read(x), filled(base)) << "frame " << frame;
    EXPECT_EQ(module_array(given, "b"), module_array(own, "b")) << "frame " << frame;
    EXPECT_EQ(module_array(given, "a"), std::vector<float>(kN, 0.0f)) << "frame " << frame;
  }
  VkCommandBuffer cb = device.begin();
  LoomNamedArgument bad[] = {named("q", loom_arg_f32(1))};
  EXPECT_LOOM_ERROR(loom_pipeline_launch_into_with(step, cb, 1, bad), LOOM_ERROR_NOT_FOUND,
                    "takes no argument 'q'");
  EXPECT_LOOM_ERROR(loom_pipeline_launch_into_with(step, VK_NULL_HANDLE, 0, nullptr),
                    LOOM_ERROR_NULL_HANDLE, "command_buffer is null");
  device.submit_and_wait(cb);
}

}  // namespace
