// The engine plugin's C ABI, used only through loom.h as a host engine would: every call,
// its results on both archs, and its error paths (code and message).
#include <gtest/gtest.h>
#include <loom/loom.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "tests/c_api/loom_result_checks.h"
#include "tests/support/vulkan_required.h"

namespace fs = std::filesystem;

namespace {

std::string modules_dir(LoomArch arch) {
  return std::string(LOOM_TEST_MODULES) + (arch == LOOM_ARCH_CPU ? "/cpu" : "/vulkan");
}
std::string module_path(LoomArch arch, const std::string& name) {
  return modules_dir(arch) + "/" + name + ".loommod";
}

std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)),
                              std::istreambuf_iterator<char>());
}
void write_bytes(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
}

LoomRuntime make_runtime(LoomArch arch) {
  LoomRuntimeCreateInfo info{};
  info.struct_size = sizeof info;
  info.arch = arch;
  info.cpu_threads = 2;
  info.validation = arch == LOOM_ARCH_VULKAN;
  LoomRuntime r = nullptr;
  EXPECT_EQ(loom_runtime_create(&info, &r), LOOM_SUCCESS) << loom_last_error_message();
  return r;
}

// ---- per arch: everything a host does with a runtime of its own

class CApi : public testing::TestWithParam<LoomArch> {
 protected:
  void SetUp() override {
    if (GetParam() == LOOM_ARCH_VULKAN) LOOM_REQUIRE_VULKAN_OR_SKIP();
    runtime = make_runtime(GetParam());
    ASSERT_NE(runtime, nullptr);
  }
  void TearDown() override {
    // Modules first: the packs they made may refer to the arrays and textures
    // (LOOM_ERROR_IN_USE otherwise).
    for (LoomModule m : modules) EXPECT_LOOM(loom_module_destroy(m));
    for (LoomArray a : arrays) EXPECT_LOOM(loom_ndarray_destroy(a));
    for (LoomTexture t : textures) EXPECT_LOOM(loom_texture_destroy(t));
    if (runtime) EXPECT_LOOM(loom_runtime_destroy(runtime));
  }
  LoomModule load(const std::string& name) {
    LoomModule m = nullptr;
    EXPECT_EQ(loom_module_load(runtime, module_path(GetParam(), name).c_str(), &m), LOOM_SUCCESS)
        << loom_last_error_message();
    if (m) modules.push_back(m);
    return m;
  }
  LoomArray ndarray(LoomDataType dtype, uint32_t components, std::vector<int64_t> shape) {
    LoomArray a = nullptr;
    EXPECT_EQ(loom_ndarray_create(runtime, dtype, components, static_cast<uint32_t>(shape.size()),
                                  shape.data(), &a),
              LOOM_SUCCESS)
        << loom_last_error_message();
    if (a) arrays.push_back(a);
    return a;
  }
  LoomKernel kernel(LoomModule m, const char* name) {
    LoomKernel k = nullptr;
    EXPECT_EQ(loom_module_get_kernel(m, name, 0, nullptr, &k), LOOM_SUCCESS)
        << loom_last_error_message();
    return k;
  }
  template <typename T>
  std::vector<T> read(LoomArray a) {
    LoomArrayInfo info{sizeof(LoomArrayInfo)};
    EXPECT_LOOM(loom_array_get_info(a, &info));
    std::vector<T> out(info.bytes / sizeof(T));
    EXPECT_LOOM(loom_array_read(a, out.data(), info.bytes));
    return out;
  }

  LoomRuntime runtime = nullptr;
  std::vector<LoomModule> modules;
  std::vector<LoomArray> arrays;
  std::vector<LoomTexture> textures;
};

TEST_P(CApi, RuntimeInfoNamesTheDevice) {
  LoomRuntimeInfo info{sizeof(LoomRuntimeInfo)};
  ASSERT_LOOM(loom_runtime_get_info(runtime, &info));
  EXPECT_EQ(info.arch, GetParam());
  EXPECT_GT(std::strlen(info.device_name), 0u);
  EXPECT_EQ(info.frames_in_flight, 2u);
}

// Results are written as far as the caller's struct_size says: a program built against a
// later loom.h (a larger struct) keeps its extra fields, one that set no size is refused.
TEST_P(CApi, ResultStructsAreWrittenWithinTheirStructSize) {
  LoomRuntimeInfo unset{};
  EXPECT_EQ(loom_runtime_get_info(runtime, &unset), LOOM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(
      std::string(loom_last_error_message()).find("loom_runtime_get_info: out: struct_size is 0"),
      std::string::npos)
      << loom_last_error_message();
  EXPECT_EQ(unset.arch, 0) << "a refused call wrote its result";
  struct Later {
    LoomModuleInfo info;
    uint8_t added[24];  // fields a later loom.h appended
  } later;
  std::memset(&later, 0xab, sizeof later);
  later.info.struct_size = sizeof later;
  LoomModule m = load("args");
  ASSERT_LOOM(loom_module_get_info(m, &later.info));
  EXPECT_EQ(later.info.struct_size, sizeof later);
  EXPECT_EQ(later.info.kernel_count, 1u);
  for (uint8_t b : later.added) ASSERT_EQ(b, 0xab) << "Loom wrote past the struct it knows";
  LoomKernel k = nullptr;
  ASSERT_LOOM(loom_module_get_kernel(m, "run", 0, nullptr, &k));
  LoomParamInfo small{};
  small.struct_size = sizeof small - 4;
  EXPECT_EQ(loom_kernel_get_param(k, 0, &small), LOOM_ERROR_INVALID_ARGUMENT);
}

TEST_P(CApi, ModulesLoadFromAPathOrFromMemoryAndListWhatTheyHold) {
  LoomModule m = load("args");
  ASSERT_NE(m, nullptr);
  LoomModuleInfo info{sizeof(LoomModuleInfo)};
  ASSERT_LOOM(loom_module_get_info(m, &info));
  EXPECT_EQ(info.arch, GetParam());
  // The lowest version holding the module: its Vulkan tasks are in the direct form (2).
  EXPECT_EQ(info.format_version, GetParam() == LOOM_ARCH_CPU ? 1u : 2u);
  EXPECT_EQ(info.kernel_count, 1u);
  EXPECT_EQ(info.ndarray_count, 1u);
  EXPECT_EQ(info.pipeline_count, 1u);
  EXPECT_STREQ(info.name, "args");
  // The CPU level running: the test modules are compiled with the default, x86-64-v2.
  EXPECT_STREQ(info.cpu_level, GetParam() == LOOM_ARCH_CPU ? "x86-64-v2" : "");
  const char* name = nullptr;
  ASSERT_LOOM(loom_module_get_item_name(m, LOOM_ITEM_KERNEL, 0, &name));
  EXPECT_STREQ(name, "run");
  ASSERT_LOOM(loom_module_get_item_name(m, LOOM_ITEM_NDARRAY, 0, &name));
  EXPECT_STREQ(name, "arr");
  EXPECT_LOOM_ERROR(loom_module_get_item_name(m, LOOM_ITEM_KERNEL, 1, &name), LOOM_ERROR_NOT_FOUND,
                    "past the module's 1");
  EXPECT_LOOM_ERROR(loom_module_get_item_name(m, (LoomModuleItem)99, 0, &name),
                    LOOM_ERROR_INVALID_ARGUMENT, "not a LoomModuleItem");

  std::vector<uint8_t> bytes = read_bytes(module_path(GetParam(), "args"));
  LoomModule from_memory = nullptr;
  ASSERT_LOOM(
      loom_module_load_memory(runtime, bytes.data(), bytes.size(), "args in memory", &from_memory));
  modules.push_back(from_memory);
  LoomReloadStatus status = LOOM_RELOAD_SWAPPED;
  ASSERT_LOOM(loom_module_reload_if_changed(from_memory, &status));
  EXPECT_EQ(status, LOOM_RELOAD_UNCHANGED);  // nothing to watch
}

TEST_P(CApi, ValueAndNdarrayArgumentsLaunchAndReadBack) {
  LoomModule m = load("args");
  LoomKernel run = kernel(m, "run");
  LoomKernelInfo ki{sizeof(LoomKernelInfo)};
  ASSERT_LOOM(loom_kernel_get_info(run, &ki));
  EXPECT_STREQ(ki.name, "run");
  ASSERT_EQ(ki.param_count, 3u);
  LoomParamInfo p{sizeof(LoomParamInfo)};
  ASSERT_LOOM(loom_kernel_get_param(run, 1, &p));
  EXPECT_STREQ(p.name, "arr");
  EXPECT_EQ(p.kind, LOOM_PARAM_NDARRAY);
  EXPECT_EQ(p.dtype, LOOM_DTYPE_I32);
  EXPECT_EQ(p.ndim, 1u);
  ASSERT_LOOM(loom_kernel_get_param(run, 2, &p));
  EXPECT_EQ(p.kind, LOOM_PARAM_VALUE);
  EXPECT_EQ(p.components, 3u);
  EXPECT_LOOM_ERROR(loom_kernel_get_param(run, 3, &p), LOOM_ERROR_NOT_FOUND, "parameter 3");

  LoomArray arr = ndarray(LOOM_DTYPE_I32, 1, {32});
  LoomArgument v{LOOM_ARGUMENT_VALUE, LOOM_DTYPE_I32, 3, {{0}}};
  v.value.i32[0] = 1, v.value.i32[1] = 2, v.value.i32[2] = 3;
  LoomArgument args[3] = {loom_arg_i32(100), loom_arg_ndarray(arr), v};
  ASSERT_LOOM(loom_launch(run, 3, args));
  std::vector<int32_t> got = read<int32_t>(arr);
  ASSERT_EQ(got.size(), 32u);

  // The same launch through the module's own ndarray and pipeline gives what the kernel
  // computes with base 0; the host's with base 100 differs exactly by 100 where it writes.
  LoomPipeline init = nullptr;
  ASSERT_LOOM(loom_module_get_pipeline(m, "init", &init));
  ASSERT_LOOM(loom_pipeline_launch(init));
  LoomArray module_arr = nullptr;
  ASSERT_LOOM(loom_module_get_array(m, "arr", &module_arr));
  std::vector<int32_t> base0 = read<int32_t>(module_arr);
  int changed = 0;
  for (int i = 0; i < 32; ++i)
    if (base0[i] != 0) {
      EXPECT_EQ(got[i], base0[i] + 100) << i;
      ++changed;
    }
  EXPECT_GT(changed, 0);

  // Writes reach the kernel: an array written by the host and read back unchanged.
  std::vector<int32_t> mine(32);
  for (int i = 0; i < 32; ++i) mine[i] = 7 * i;
  ASSERT_LOOM(loom_array_write(arr, mine.data(), mine.size() * 4));
  EXPECT_EQ(read<int32_t>(arr), mine);
  EXPECT_LOOM_ERROR(loom_array_write(arr, mine.data(), 12), LOOM_ERROR_INVALID_ARGUMENT,
                    "holds 128 bytes");
}

TEST_P(CApi, WrongArgumentsAreRefusedWithTheirCodeAndPlace) {
  LoomModule m = load("args");
  LoomKernel run = kernel(m, "run");
  LoomArray ints = ndarray(LOOM_DTYPE_I32, 1, {32});
  LoomArray floats = ndarray(LOOM_DTYPE_F32, 1, {32});
  LoomArray grid = ndarray(LOOM_DTYPE_I32, 1, {4, 8});
  LoomArray vec = ndarray(LOOM_DTYPE_I32, 2, {32});
  LoomArgument v{LOOM_ARGUMENT_VALUE, LOOM_DTYPE_I32, 3, {{0}}};
  auto launch = [&](LoomArgument a0, LoomArgument a1, LoomArgument a2) {
    LoomArgument args[3] = {a0, a1, a2};
    return loom_launch(run, 3, args);
  };
  EXPECT_LOOM_ERROR(loom_launch(run, 2, nullptr), LOOM_ERROR_INVALID_ARGUMENT,
                    "takes 3 argument(s) (base, arr, v), given 2");
  EXPECT_LOOM_ERROR(loom_launch(run, 3, nullptr), LOOM_ERROR_NULL_HANDLE, "args is null");
  EXPECT_LOOM_ERROR(launch(loom_arg_f32(1), loom_arg_ndarray(ints), v), LOOM_ERROR_WRONG_DTYPE,
                    "kernel 'run': pin 'base': parameter 'base' (argument 0) is i32, given f32");
  EXPECT_LOOM_ERROR(launch(loom_arg_ndarray(ints), loom_arg_ndarray(ints), v),
                    LOOM_ERROR_WRONG_TYPE, "takes a i32 value, given an ndarray");
  EXPECT_LOOM_ERROR(launch(loom_arg_i32(0), loom_arg_i32(0), v), LOOM_ERROR_WRONG_TYPE,
                    "takes an ndarray, given a value");
  EXPECT_LOOM_ERROR(launch(loom_arg_i32(0), loom_arg_ndarray(floats), v), LOOM_ERROR_WRONG_DTYPE,
                    "takes an ndarray of i32, given one of f32");
  EXPECT_LOOM_ERROR(launch(loom_arg_i32(0), loom_arg_ndarray(vec), v), LOOM_ERROR_WRONG_DTYPE,
                    "given one of i32 x 2");
  EXPECT_LOOM_ERROR(launch(loom_arg_i32(0), loom_arg_ndarray(grid), v), LOOM_ERROR_WRONG_NDIM,
                    "takes an ndarray of 1 dimension(s), given one of 2");
  EXPECT_LOOM_ERROR(launch(loom_arg_i32(0), loom_arg_ndarray(nullptr), v), LOOM_ERROR_NULL_HANDLE,
                    "the ndarray is null");
  LoomArgument short_v = v;
  short_v.count = 2;
  EXPECT_LOOM_ERROR(launch(loom_arg_i32(0), loom_arg_ndarray(ints), short_v),
                    LOOM_ERROR_WRONG_DTYPE, "is a i32x3 of 3 component(s), given 2");
  LoomArgument bad_dtype = v;
  bad_dtype.dtype = (LoomDataType)77;
  EXPECT_LOOM_ERROR(launch(loom_arg_i32(0), loom_arg_ndarray(ints), bad_dtype),
                    LOOM_ERROR_INVALID_ARGUMENT, "77 is not a LoomDataType");
  EXPECT_LOOM_ERROR(launch(loom_arg_i32(0), loom_arg_texture(nullptr), v), LOOM_ERROR_WRONG_TYPE,
                    "takes an ndarray, given a texture");

  // An array of another runtime.
  LoomRuntime other = make_runtime(LOOM_ARCH_CPU);
  int64_t n = 32;
  LoomArray foreign = nullptr;
  ASSERT_LOOM(loom_ndarray_create(other, LOOM_DTYPE_I32, 1, 1, &n, &foreign));
  EXPECT_LOOM_ERROR(launch(loom_arg_i32(0), loom_arg_ndarray(foreign), v), LOOM_ERROR_WRONG_RUNTIME,
                    "another runtime");
  EXPECT_LOOM_ERROR(loom_runtime_destroy(other), LOOM_ERROR_INVALID_ARGUMENT, "1 ndarray(s)");
  EXPECT_LOOM(loom_ndarray_destroy(foreign));
  EXPECT_LOOM(loom_runtime_destroy(other));
  // Nothing ran: the right arguments still work.
  ASSERT_LOOM(launch(loom_arg_i32(0), loom_arg_ndarray(ints), v));
}

TEST_P(CApi, KernelsAndTemplateInstantiationsAreFoundByName) {
  LoomModule m = load("templates");
  LoomKernel k = nullptr;
  EXPECT_LOOM_ERROR(loom_module_get_kernel(m, "nope", 0, nullptr, &k), LOOM_ERROR_NOT_FOUND,
                    "no kernel 'nope'");
  LoomTemplateArgument xy[2] = {};
  xy[0].name = "a", xy[0].kind = LOOM_TEMPLATE_FIELD, xy[0].field = "x";
  xy[1].name = "b", xy[1].kind = LOOM_TEMPLATE_INT, xy[1].i = 1;
  LoomKernel inc_x = nullptr, inc_y = nullptr, again = nullptr;
  ASSERT_LOOM(loom_module_get_kernel(m, "inc", 2, xy, &inc_x));
  ASSERT_LOOM(loom_module_get_kernel(m, "inc", 2, xy, &again));
  EXPECT_EQ(inc_x, again);  // one handle per instantiation
  LoomTemplateArgument yx[2] = {xy[1], xy[0]};
  yx[0].i = 2, yx[1].field = "y";
  ASSERT_LOOM(loom_module_get_kernel(m, "inc", 2, yx, &inc_y));
  EXPECT_NE(inc_x, inc_y);
  xy[1].i = 3;
  EXPECT_LOOM_ERROR(loom_module_get_kernel(m, "inc", 2, xy, &k), LOOM_ERROR_NOT_FOUND,
                    "no instantiation of kernel 'inc' for (a=field x, b=3); it has (a=field x, "
                    "b=1), (a=field y, b=2)");
  xy[1].kind = (LoomTemplateKind)42;
  EXPECT_LOOM_ERROR(loom_module_get_kernel(m, "inc", 2, xy, &k), LOOM_ERROR_INVALID_ARGUMENT,
                    "not a LoomTemplateKind");
  EXPECT_LOOM_ERROR(loom_module_get_kernel(m, "inc", 2, nullptr, &k), LOOM_ERROR_NULL_HANDLE,
                    "template_args is null");

  for (int i = 0; i < 3; ++i) {
    ASSERT_LOOM(loom_launch(inc_x, 0, nullptr));
    ASSERT_LOOM(loom_launch(inc_y, 0, nullptr));
  }
  LoomArray x = nullptr, y = nullptr;
  ASSERT_LOOM(loom_module_get_array(m, "x", &x));
  ASSERT_LOOM(loom_module_get_array(m, "y", &y));
  LoomArrayInfo info{sizeof(LoomArrayInfo)};
  ASSERT_LOOM(loom_array_get_info(x, &info));
  EXPECT_TRUE(info.is_field);
  EXPECT_TRUE(info.host_copy);
  std::vector<uint8_t> xb(info.bytes), yb(info.bytes);
  ASSERT_LOOM(loom_array_read(x, xb.data(), xb.size()));
  ASSERT_LOOM(loom_array_read(y, yb.data(), yb.size()));
  EXPECT_NE(xb, yb);  // b = 1 three times against b = 2 three times
  EXPECT_LOOM_ERROR(loom_ndarray_destroy(x), LOOM_ERROR_INVALID_ARGUMENT, "goes with it");

  // Ndarray template arguments: the instantiation for the element type and dimensions.
  LoomModule open = load("open");
  LoomTemplateArgument t{};
  t.name = "arr", t.kind = LOOM_TEMPLATE_NDARRAY, t.dtype = LOOM_DTYPE_F32, t.components = 1,
  t.ndim = 1;
  LoomKernel iota_f = nullptr;
  ASSERT_LOOM(loom_module_get_kernel(open, "iota", 1, &t, &iota_f));
  LoomArray floats = ndarray(LOOM_DTYPE_F32, 1, {9});
  LoomArgument a = loom_arg_ndarray(floats);
  ASSERT_LOOM(loom_launch(iota_f, 1, &a));
  std::vector<float> f = read<float>(floats);
  for (int i = 0; i < 9; ++i) EXPECT_EQ(f[i], static_cast<float>(i));
  t.ndim = 3;
  EXPECT_LOOM_ERROR(loom_module_get_kernel(open, "iota", 1, &t, &k), LOOM_ERROR_NOT_FOUND,
                    "no instantiation of kernel 'iota'");
}

TEST_P(CApi, ArgpacksAreCreatedSetBoundAndReturnValues) {
  LoomModule m = load("argpacks");
  LoomKernel select = kernel(m, "abc_select");
  LoomArgpack abc = nullptr;
  ASSERT_LOOM(loom_module_get_argpack(m, "abc", &abc));  // declared: a = 1, b = false, c = 2.1
  LoomArgument a = loom_arg_argpack(abc);
  ASSERT_LOOM(loom_launch(select, 1, &a));
  float r = 0;
  ASSERT_LOOM(loom_kernel_get_return(select, 0, LOOM_DTYPE_F32, &r));
  EXPECT_FLOAT_EQ(r, 1 * 2.1f);  // b ? a + c : a * c

  LoomArgpack mine = nullptr;
  ASSERT_LOOM(loom_argpack_create(m, "ABC", &mine));
  LoomArgument five = loom_arg_i32(5), yes = loom_arg_bool(1), c = loom_arg_f32(0.25f);
  ASSERT_LOOM(loom_argpack_set(mine, "a", &five));
  ASSERT_LOOM(loom_argpack_set(mine, "b", &yes));
  ASSERT_LOOM(loom_argpack_set(mine, "c", &c));
  LoomArgument got{};
  ASSERT_LOOM(loom_argpack_get(mine, "a", &got));
  EXPECT_EQ(got.dtype, LOOM_DTYPE_I32);
  EXPECT_EQ(got.value.i32[0], 5);
  a = loom_arg_argpack(mine);
  ASSERT_LOOM(loom_launch(select, 1, &a));
  ASSERT_LOOM(loom_kernel_get_return(select, 0, LOOM_DTYPE_F32, &r));
  EXPECT_FLOAT_EQ(r, 5.25f);
  ASSERT_LOOM(loom_argpack_set(mine, "b", &(got = loom_arg_bool(0))));
  ASSERT_LOOM(loom_launch(select, 1, &a));  // a changed pack is uploaded again
  ASSERT_LOOM(loom_kernel_get_return(select, 0, LOOM_DTYPE_F32, &r));
  EXPECT_FLOAT_EQ(r, 1.25f);

  EXPECT_LOOM_ERROR(loom_argpack_set(mine, "a", &c), LOOM_ERROR_WRONG_DTYPE, "ABC.a");
  EXPECT_LOOM_ERROR(loom_argpack_set(mine, "zz", &c), LOOM_ERROR_NOT_FOUND,
                    "argpack type 'ABC' has no member 'zz'");
  EXPECT_LOOM_ERROR(loom_kernel_get_return(select, 0, LOOM_DTYPE_I32, &r), LOOM_ERROR_WRONG_DTYPE,
                    "is f32, asked for i32");
  EXPECT_LOOM_ERROR(loom_kernel_get_return(select, 1, LOOM_DTYPE_F32, &r), LOOM_ERROR_NOT_FOUND,
                    "past the kernel's 1");
  EXPECT_LOOM_ERROR(loom_argpack_create(m, "Nope", &mine), LOOM_ERROR_NOT_FOUND,
                    "no argpack type 'Nope'");

  // Another pack type for the parameter; struct members; nested packs bound by reference.
  LoomArgpack inner = nullptr, outer = nullptr, ws = nullptr;
  ASSERT_LOOM(loom_argpack_create(m, "Inner", &inner));
  ASSERT_LOOM(loom_argpack_create(m, "Outer", &outer));
  a = loom_arg_argpack(inner);
  EXPECT_LOOM_ERROR(loom_launch(select, 1, &a), LOOM_ERROR_WRONG_TYPE,
                    "argpack of type 'ABC', given one of type 'Inner'");
  LoomArgument v = loom_arg_argpack(inner);
  ASSERT_LOOM(loom_argpack_set(outer, "c", &v));
  ASSERT_LOOM(loom_argpack_set(inner, "a", &(got = loom_arg_i32(40))));
  ASSERT_LOOM(loom_argpack_set(inner, "b", &(got = loom_arg_i32(2))));
  LoomKernel nested = kernel(m, "nested_sum");
  a = loom_arg_argpack(outer);
  ASSERT_LOOM(loom_launch(nested, 1, &a));
  int32_t sum = 0;
  ASSERT_LOOM(loom_kernel_get_return(nested, 0, LOOM_DTYPE_I32, &sum));
  EXPECT_EQ(sum, 42);
  ASSERT_LOOM(loom_argpack_set(outer, "c.b", &(got = loom_arg_i32(3))));  // through the binding
  ASSERT_LOOM(loom_launch(nested, 1, &a));
  ASSERT_LOOM(loom_kernel_get_return(nested, 0, LOOM_DTYPE_I32, &sum));
  EXPECT_EQ(sum, 43);
  ASSERT_LOOM(loom_module_get_argpack(m, "ws", &ws));
  ASSERT_LOOM(loom_argpack_set(ws, "element.a", &(got = loom_arg_i32(10))));
  LoomKernel struct_sum = kernel(m, "struct_sum");
  a = loom_arg_argpack(ws);
  ASSERT_LOOM(loom_launch(struct_sum, 1, &a));
  ASSERT_LOOM(loom_kernel_get_return(struct_sum, 0, LOOM_DTYPE_F32, &r));
  EXPECT_NEAR(r, 10 + 2.1f + 2.1f, 1e-5);
  // Outer refers to inner: inner goes after it.
  EXPECT_LOOM_ERROR(loom_argpack_destroy(inner), LOOM_ERROR_IN_USE,
                    "argpack 'Inner' is member 'c' of argpack 'Outer'");
  EXPECT_LOOM(loom_argpack_destroy(outer));
  EXPECT_LOOM(loom_argpack_destroy(inner));
  EXPECT_LOOM_ERROR(loom_argpack_destroy(ws), LOOM_ERROR_INVALID_ARGUMENT, "goes with it");
}

TEST_P(CApi, TexturesAndResourcesInsidePacks) {
  LoomModule m = load("packs");
  LoomTexture img = nullptr;
  ASSERT_LOOM(loom_texture_create(runtime, LOOM_TEXTURE_RGBA8, 16, 8, 0, &img));
  textures.push_back(img);
  LoomTextureInfo ti{sizeof(LoomTextureInfo)};
  ASSERT_LOOM(loom_texture_get_info(img, &ti));
  EXPECT_EQ(ti.ndim, 2u);
  EXPECT_EQ(ti.width, 16u);
  EXPECT_TRUE(ti.host_copy);
  LoomArray data = ndarray(LOOM_DTYPE_F32, 1, {64});
  LoomArgpack job = nullptr;
  ASSERT_LOOM(loom_argpack_create(m, "Job", &job));
  LoomArgument v = loom_arg_f32(2.0f);
  ASSERT_LOOM(loom_argpack_set(job, "scale", &v));
  float tint[3] = {1, 0.5f, 0.25f};
  v = loom_arg_f32_vector(3, tint);
  ASSERT_LOOM(loom_argpack_set(job, "tint", &v));
  v = loom_arg_ndarray(data);
  ASSERT_LOOM(loom_argpack_set(job, "out", &v));
  v = loom_arg_texture(img);
  EXPECT_LOOM_ERROR(loom_argpack_set(job, "out", &v), LOOM_ERROR_WRONG_TYPE,
                    "takes an ndarray, given a texture");

  LoomArgument fill_args[1] = {loom_arg_argpack(job)};
  ASSERT_LOOM(loom_launch(kernel(m, "fill"), 1, fill_args));
  std::vector<float> filled(64);
  ASSERT_LOOM(loom_array_read(data, filled.data(), 256));
  float total = 0;
  for (float f : filled) total += std::fabs(f);
  EXPECT_GT(total, 0);

  LoomArgument paint_args[2] = {loom_arg_argpack(job), loom_arg_texture(img)};
  ASSERT_LOOM(loom_launch(kernel(m, "paint"), 2, paint_args));
  std::vector<uint8_t> texels(16 * 8 * 4);
  ASSERT_LOOM(loom_texture_read(img, texels.data(), texels.size()));
  int lit = 0;
  for (uint8_t t : texels) lit += t != 0;
  EXPECT_GT(lit, 0);
  LoomKernel probe = kernel(m, "probe");
  LoomArgument probe_args[2] = {loom_arg_texture(img), loom_arg_f32(0.5f)};
  ASSERT_LOOM(loom_launch(probe, 2, probe_args));
  float rgba[4];
  for (uint32_t i = 0; i < 4; ++i)
    ASSERT_LOOM(loom_kernel_get_return(probe, i, LOOM_DTYPE_F32, &rgba[i]));
  EXPECT_GE(rgba[3], 0.0f);

  LoomTexture wrong = nullptr;
  ASSERT_LOOM(loom_texture_create(runtime, LOOM_TEXTURE_R32F, 16, 8, 0, &wrong));
  textures.push_back(wrong);
  probe_args[0] = loom_arg_texture(wrong);
  EXPECT_LOOM_ERROR(loom_launch(probe, 2, probe_args), LOOM_ERROR_WRONG_DTYPE,
                    "texture of format rgba8, given r32f");
  LoomTexture cube = nullptr;
  ASSERT_LOOM(loom_texture_create(runtime, LOOM_TEXTURE_RGBA8, 4, 4, 4, &cube));
  textures.push_back(cube);
  probe_args[0] = loom_arg_texture(cube);
  EXPECT_LOOM_ERROR(loom_launch(probe, 2, probe_args), LOOM_ERROR_WRONG_NDIM,
                    "takes a 2-d texture, given a 3-d one");
  EXPECT_LOOM_ERROR(loom_texture_create(runtime, (LoomTextureFormat)9, 4, 4, 0, &cube),
                    LOOM_ERROR_INVALID_ARGUMENT, "not a LoomTextureFormat");
  EXPECT_LOOM_ERROR(loom_texture_read(img, texels.data(), 3), LOOM_ERROR_INVALID_ARGUMENT,
                    "holds 512 bytes");
  ASSERT_LOOM(loom_texture_write(img, texels.data(), texels.size()));
  LoomTexture module_img = nullptr;
  ASSERT_LOOM(loom_module_get_texture(m, "img", &module_img));
  EXPECT_LOOM_ERROR(loom_module_get_texture(m, "data", &module_img), LOOM_ERROR_WRONG_TYPE,
                    "another kind of resource");
  LoomArray arr = nullptr;
  EXPECT_LOOM_ERROR(loom_module_get_array(m, "img", &arr), LOOM_ERROR_WRONG_TYPE,
                    "(it is a texture)");
  EXPECT_LOOM_ERROR(loom_module_get_array(m, "zzz", &arr), LOOM_ERROR_NOT_FOUND,
                    "no field or ndarray 'zzz'");
}

TEST_P(CApi, FailedBoundsChecksOfDebugModulesAreLaunchErrors) {
  LoomModule m = load("bounds");
  LoomKernel shift = kernel(m, "shift");
  LoomArray arr = ndarray(LOOM_DTYPE_F32, 1, {16});
  LoomArgument a = loom_arg_ndarray(arr);
  EXPECT_LOOM_ERROR(loom_launch(shift, 1, &a), LOOM_ERROR_LAUNCH, "kernel 'shift'");
  EXPECT_NE(std::string(loom_last_error_message()).find("bounds.loommod"), std::string::npos)
      << loom_last_error_message();
}

// The layout of argpack and struct types, member by member, as engines need it to fill packs
// themselves or declare them to a render graph.
TEST_P(CApi, ArgpackTypesDescribeTheirMembers) {
  LoomModule m = load("argpacks");
  uint32_t size = 0, count = 0;
  ASSERT_LOOM(loom_module_get_argpack_type(m, "WithStruct", &size, &count));
  EXPECT_EQ(count, 2u);
  EXPECT_EQ(size % 16, 0u);
  LoomArgpackMemberInfo element{sizeof(LoomArgpackMemberInfo)}, d{sizeof(LoomArgpackMemberInfo)};
  ASSERT_LOOM(loom_module_get_argpack_member(m, "WithStruct", 0, &element));
  ASSERT_LOOM(loom_module_get_argpack_member(m, "WithStruct", 1, &d));
  EXPECT_STREQ(element.name, "element");
  EXPECT_EQ(element.kind, LOOM_MEMBER_STRUCT);
  EXPECT_STREQ(element.nested_type, "Element");
  EXPECT_STREQ(d.name, "d");
  EXPECT_EQ(d.kind, LOOM_MEMBER_VALUE);
  EXPECT_EQ(d.dtype, LOOM_DTYPE_F32);
  EXPECT_EQ(d.rows * d.cols, 1u);
  EXPECT_GT(d.offset, element.offset);
  LoomArgpackMemberInfo c{sizeof(LoomArgpackMemberInfo)};
  ASSERT_LOOM(loom_module_get_argpack_member(m, "Outer", 1, &c));
  EXPECT_EQ(c.kind, LOOM_MEMBER_PACK);
  EXPECT_STREQ(c.nested_type, "Inner");
  EXPECT_LOOM_ERROR(loom_module_get_argpack_type(m, "Nope", &size, &count), LOOM_ERROR_NOT_FOUND,
                    "no argpack or struct type 'Nope'; it has ABC, Element");
  EXPECT_LOOM_ERROR(loom_module_get_argpack_member(m, "Outer", 2, &c), LOOM_ERROR_NOT_FOUND,
                    "index 2 is past type 'Outer''s 2 member(s)");

  LoomModule h = load("handles");
  ASSERT_LOOM(loom_module_get_argpack_type(h, "Pair", &size, &count));
  ASSERT_EQ(count, 3u);
  LoomArgpackMemberInfo a{sizeof(LoomArgpackMemberInfo)}, img{sizeof(LoomArgpackMemberInfo)};
  ASSERT_LOOM(loom_module_get_argpack_member(h, "Pair", 0, &a));
  ASSERT_LOOM(loom_module_get_argpack_member(h, "Pair", 2, &img));
  EXPECT_EQ(a.kind, LOOM_MEMBER_NDARRAY);
  EXPECT_EQ(a.dtype, LOOM_DTYPE_F32);
  EXPECT_EQ(a.ndim, 1u);
  EXPECT_EQ(img.kind, LOOM_MEMBER_TEXTURE);
  EXPECT_EQ(img.ndim, 2u);
  EXPECT_EQ(img.format, LOOM_TEXTURE_RGBA8);
}

TEST_P(CApi, PipelinesRunTheModuleAsTheJitDoes) {
  LoomModule m = load("heat");
  LoomPipeline init = nullptr, step = nullptr, nope = nullptr;
  ASSERT_LOOM(loom_module_get_pipeline(m, "init", &init));
  ASSERT_LOOM(loom_module_get_pipeline(m, "step", &step));
  EXPECT_LOOM_ERROR(loom_module_get_pipeline(m, "nope", &nope), LOOM_ERROR_NOT_FOUND,
                    "no pipeline 'nope'; it has init, step");
  ASSERT_LOOM(loom_pipeline_launch(init));
  for (int i = 0; i < 5; ++i) ASSERT_LOOM(loom_pipeline_launch(step));
  LoomArray t = nullptr;
  ASSERT_LOOM(loom_module_get_array(m, "temperature", &t));
  std::vector<float> temp = read<float>(t);
  // The reference: the JIT's `loom run --steps 5 --dump` of the same document on the CPU,
  // written at build time (float32 .npy, the data at its end).
  std::vector<uint8_t> npy = read_bytes(std::string(LOOM_TEST_MODULES) + "/heat_temperature_5.npy");
  ASSERT_GT(npy.size(), temp.size() * 4);
  std::vector<float> want(temp.size());
  std::memcpy(want.data(), npy.data() + npy.size() - temp.size() * 4, temp.size() * 4);
  for (size_t i = 0; i < temp.size(); ++i)
    ASSERT_NEAR(temp[i], want[i], 1e-5f * (1 + std::fabs(want[i]))) << i;
}

// A 0-d field (shape []) is an array of ndim 0 and one element, read and written with the
// array calls like any other.
TEST_P(CApi, ZeroDimensionalFieldsHaveNdimZero) {
  LoomModule m = load("zero_d");
  ASSERT_NE(m, nullptr);
  LoomArray total = nullptr, count = nullptr;
  ASSERT_LOOM(loom_module_get_array(m, "total", &total));
  ASSERT_LOOM(loom_module_get_array(m, "count", &count));
  LoomArrayInfo info{sizeof(LoomArrayInfo)};
  ASSERT_LOOM(loom_array_get_info(total, &info));
  EXPECT_TRUE(info.is_field);
  EXPECT_EQ(info.dtype, LOOM_DTYPE_F32);
  EXPECT_EQ(info.components, 1u);
  EXPECT_EQ(info.ndim, 0u);
  EXPECT_EQ(info.bytes, 4u);
  for (int64_t e : info.shape) EXPECT_EQ(e, 0);  // no extents
  LoomPipeline init = nullptr, step = nullptr;
  ASSERT_LOOM(loom_module_get_pipeline(m, "init", &init));
  ASSERT_LOOM(loom_module_get_pipeline(m, "step", &step));
  ASSERT_LOOM(loom_pipeline_launch(init));
  EXPECT_EQ(read<float>(total), std::vector<float>{0.5f});
  float start = 100.25f;
  ASSERT_LOOM(loom_array_write(total, &start, sizeof start));
  ASSERT_LOOM(loom_pipeline_launch(step));
  ASSERT_LOOM(loom_pipeline_launch(step));
  EXPECT_EQ(read<float>(total), std::vector<float>{100.25f + 2 * 499500.0f});
  EXPECT_EQ(read<int32_t>(count), std::vector<int32_t>{2000});
  float wrong[2] = {0, 0};
  EXPECT_LOOM_ERROR(loom_array_write(total, wrong, sizeof wrong), LOOM_ERROR_INVALID_ARGUMENT,
                    "holds 4 bytes; the call gives 8");
  // Ndarrays are not 0-d: the refusal says where one value lives.
  LoomArray a = nullptr;
  EXPECT_LOOM_ERROR(loom_ndarray_create(runtime, LOOM_DTYPE_F32, 1, 0, nullptr, &a),
                    LOOM_ERROR_WRONG_NDIM, "one value is a 0-d field");
}

INSTANTIATE_TEST_SUITE_P(Arch, CApi, testing::Values(LOOM_ARCH_CPU, LOOM_ARCH_VULKAN),
                         [](const testing::TestParamInfo<LoomArch>& i) {
                           return i.param == LOOM_ARCH_CPU ? "cpu" : "vulkan";
                         });

// ---- calls that need no module

TEST(CApiBasics, VersionQuery) {
  EXPECT_EQ(LOOM_VERSION_MAJOR(loom_version()), 3u);
  EXPECT_GE(loom_version(), LOOM_HEADER_VERSION);
  EXPECT_NE(std::string(loom_version_string()).find("abi 3.1.0, module format 3"),
            std::string::npos)
      << loom_version_string();
  EXPECT_STREQ(loom_result_name(LOOM_ERROR_WRONG_NDIM), "LOOM_ERROR_WRONG_NDIM");
  EXPECT_STREQ(loom_result_name((LoomResult)-999), "LOOM_ERROR_UNKNOWN");
}

TEST(CApiBasics, EveryCallRefusesNullHandles) {
  LoomRuntime r = nullptr;
  LoomModule m = nullptr;
  LoomKernel k = nullptr;
  LoomArray a = nullptr;
  LoomTexture t = nullptr;
  LoomArgpack p = nullptr;
  LoomPipeline pl = nullptr;
  LoomReloadStatus s;
  LoomArgument arg = loom_arg_i32(0);
  char buf[16];
  int64_t shape = 4;
  LoomVulkanBuffer vb{};
  LoomVulkanImage vi{};
  LoomRuntimeInfo ri{sizeof(LoomRuntimeInfo)};
  LoomModuleInfo mi{sizeof(LoomModuleInfo)};
  LoomKernelInfo ki{sizeof(LoomKernelInfo)};
  LoomParamInfo pi{sizeof(LoomParamInfo)};
  LoomArrayInfo ai{sizeof(LoomArrayInfo)};
  LoomTextureInfo tinfo{sizeof(LoomTextureInfo)};
  const char* name;
  LoomReadback rb = nullptr;
  uint64_t u64 = 0;
  std::vector<std::pair<const char*, std::function<LoomResult()>>> calls = {
      {"loom_runtime_create", [&] { return loom_runtime_create(nullptr, &r); }},
      {"loom_runtime_import_vulkan", [&] { return loom_runtime_import_vulkan(nullptr, &r); }},
      {"loom_runtime_get_info", [&] { return loom_runtime_get_info(nullptr, &ri); }},
      {"loom_runtime_begin_frame", [&] { return loom_runtime_begin_frame(nullptr); }},
      {"loom_runtime_barrier_for_graphics",
       [&] { return loom_runtime_barrier_for_graphics(nullptr, VK_NULL_HANDLE); }},
      {"loom_runtime_submit", [&] { return loom_runtime_submit(nullptr, 0, nullptr, 0, nullptr); }},
      {"loom_runtime_wait", [&] { return loom_runtime_wait(nullptr); }},
      {"loom_runtime_record", [&] { return loom_runtime_record(nullptr, VK_NULL_HANDLE); }},
      {"loom_runtime_begin_frame_number",
       [&] { return loom_runtime_begin_frame_number(nullptr, 2, 1); }},
      {"loom_runtime_barrier",
       [&] {
         return loom_runtime_barrier(nullptr, VK_NULL_HANDLE, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                                     VK_ACCESS_SHADER_READ_BIT);
       }},
      {"loom_runtime_get_heap_budget",
       [&] { return loom_runtime_get_heap_budget(nullptr, 0, &u64, &u64); }},
      {"loom_module_load", [&] { return loom_module_load(nullptr, "x", &m); }},
      {"loom_module_load_memory",
       [&] { return loom_module_load_memory(nullptr, buf, 16, "x", &m); }},
      {"loom_module_get_info", [&] { return loom_module_get_info(nullptr, &mi); }},
      {"loom_module_get_item_name",
       [&] { return loom_module_get_item_name(nullptr, LOOM_ITEM_KERNEL, 0, &name); }},
      {"loom_module_reload_if_changed", [&] { return loom_module_reload_if_changed(nullptr, &s); }},
      {"loom_module_reload", [&] { return loom_module_reload(nullptr, &s); }},
      {"loom_module_get_kernel",
       [&] { return loom_module_get_kernel(nullptr, "k", 0, nullptr, &k); }},
      {"loom_module_get_pipeline", [&] { return loom_module_get_pipeline(nullptr, "p", &pl); }},
      {"loom_kernel_get_info", [&] { return loom_kernel_get_info(nullptr, &ki); }},
      {"loom_kernel_get_param", [&] { return loom_kernel_get_param(nullptr, 0, &pi); }},
      {"loom_launch", [&] { return loom_launch(nullptr, 0, nullptr); }},
      {"loom_launch_into", [&] { return loom_launch_into(nullptr, VK_NULL_HANDLE, 0, nullptr); }},
      {"loom_kernel_get_return",
       [&] { return loom_kernel_get_return(nullptr, 0, LOOM_DTYPE_F32, buf); }},
      {"loom_pipeline_launch", [&] { return loom_pipeline_launch(nullptr); }},
      {"loom_pipeline_launch_into",
       [&] { return loom_pipeline_launch_into(nullptr, VK_NULL_HANDLE); }},
      {"loom_module_get_array", [&] { return loom_module_get_array(nullptr, "a", &a); }},
      {"loom_ndarray_create",
       [&] { return loom_ndarray_create(nullptr, LOOM_DTYPE_F32, 1, 1, &shape, &a); }},
      {"loom_ndarray_import_vulkan",
       [&] { return loom_ndarray_import_vulkan(nullptr, &vb, LOOM_DTYPE_F32, 1, 1, &shape, &a); }},
      {"loom_array_get_info", [&] { return loom_array_get_info(nullptr, &ai); }},
      {"loom_array_read", [&] { return loom_array_read(nullptr, buf, 16); }},
      {"loom_array_write", [&] { return loom_array_write(nullptr, buf, 16); }},
      {"loom_array_export_vulkan", [&] { return loom_array_export_vulkan(nullptr, &vb); }},
      {"loom_ndarray_rebind_vulkan", [&] { return loom_ndarray_rebind_vulkan(nullptr, &vb); }},
      {"loom_array_read_into",
       [&] { return loom_array_read_into(nullptr, VK_NULL_HANDLE, nullptr, nullptr, &rb); }},
      {"loom_texture_read_into",
       [&] { return loom_texture_read_into(nullptr, VK_NULL_HANDLE, nullptr, nullptr, &rb); }},
      {"loom_readback_get", [&] { return loom_readback_get(nullptr, buf, 16); }},
      {"loom_module_get_texture", [&] { return loom_module_get_texture(nullptr, "t", &t); }},
      {"loom_texture_create",
       [&] { return loom_texture_create(nullptr, LOOM_TEXTURE_R32F, 4, 4, 0, &t); }},
      {"loom_texture_import_vulkan", [&] { return loom_texture_import_vulkan(nullptr, &vi, &t); }},
      {"loom_texture_get_info", [&] { return loom_texture_get_info(nullptr, &tinfo); }},
      {"loom_texture_read", [&] { return loom_texture_read(nullptr, buf, 16); }},
      {"loom_texture_write", [&] { return loom_texture_write(nullptr, buf, 16); }},
      {"loom_texture_export_vulkan", [&] { return loom_texture_export_vulkan(nullptr, &vi); }},
      {"loom_module_get_argpack", [&] { return loom_module_get_argpack(nullptr, "p", &p); }},
      {"loom_argpack_create", [&] { return loom_argpack_create(nullptr, "T", &p); }},
      {"loom_argpack_set", [&] { return loom_argpack_set(nullptr, "a", &arg); }},
      {"loom_argpack_get", [&] { return loom_argpack_get(nullptr, "a", &arg); }},
  };
  for (auto& [call, fn] : calls) {
    loom_clear_last_error();
    EXPECT_EQ(fn(), LOOM_ERROR_NULL_HANDLE) << call;
    EXPECT_EQ(loom_last_error(), LOOM_ERROR_NULL_HANDLE) << call;
    EXPECT_NE(std::string(loom_last_error_message()).find("null"), std::string::npos)
        << call << ": " << loom_last_error_message();
  }
  // Destroying null is a no-op, as free(NULL).
  EXPECT_EQ(loom_runtime_destroy(nullptr), LOOM_SUCCESS);
  EXPECT_EQ(loom_module_destroy(nullptr), LOOM_SUCCESS);
  EXPECT_EQ(loom_ndarray_destroy(nullptr), LOOM_SUCCESS);
  EXPECT_EQ(loom_texture_destroy(nullptr), LOOM_SUCCESS);
  EXPECT_EQ(loom_argpack_destroy(nullptr), LOOM_SUCCESS);
}

TEST(CApiBasics, TheLastErrorIsPerThread) {
  EXPECT_EQ(loom_runtime_wait(nullptr), LOOM_ERROR_NULL_HANDLE);
  std::thread other([] {
    EXPECT_EQ(loom_last_error(), LOOM_SUCCESS);
    EXPECT_STREQ(loom_last_error_message(), "");
  });
  other.join();
  EXPECT_EQ(loom_last_error(), LOOM_ERROR_NULL_HANDLE);
  loom_clear_last_error();
  EXPECT_EQ(loom_last_error(), LOOM_SUCCESS);
}

TEST(CApiBasics, AModulePathThatIsNoRegularFileFailsWithoutBlocking) {
  // A FIFO used to block loom_module_load forever, and /dev/zero to fill the memory.
  LoomRuntime r = make_runtime(LOOM_ARCH_CPU);
  LoomModule m = nullptr;
  std::string fifo = (std::filesystem::temp_directory_path() /
                      ("loom_c_api_fifo_" + std::to_string(::getpid()) + ".loommod"))
                         .string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_LOOM_ERROR(loom_module_load(r, fifo.c_str(), &m), LOOM_ERROR_IO,
                    fifo + ": cannot read the module file: it is a FIFO, not a regular file");
  std::filesystem::remove(fifo);
  EXPECT_LOOM_ERROR(loom_module_load(r, "/dev/zero", &m), LOOM_ERROR_IO,
                    "/dev/zero: cannot read the module file: it is a character device");
  EXPECT_EQ(m, nullptr);
  EXPECT_LOOM(loom_runtime_destroy(r));
}

TEST(CApiBasics, BadModulesAreClearErrorsNamingTheFile) {
  LoomRuntime r = make_runtime(LOOM_ARCH_CPU);
  LoomModule m = nullptr;
  EXPECT_LOOM_ERROR(loom_module_load(r, "/nonexistent/x.loommod", &m), LOOM_ERROR_IO,
                    "/nonexistent/x.loommod: cannot open");
  EXPECT_LOOM_ERROR(loom_module_load(r, "", &m), LOOM_ERROR_INVALID_ARGUMENT, "the path is empty");
  std::vector<uint8_t> good = read_bytes(module_path(LOOM_ARCH_CPU, "heat"));
  ASSERT_GT(good.size(), 100u);
  // Truncated, a flipped byte, not a module at all.
  for (size_t cut : {size_t{0}, size_t{7}, size_t{20}, good.size() / 2, good.size() - 1}) {
    std::vector<uint8_t> bytes(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(cut));
    EXPECT_LOOM_ERROR(loom_module_load_memory(r, bytes.empty() ? good.data() : bytes.data(),
                                              bytes.size(), "cut.loommod", &m),
                      LOOM_ERROR_CORRUPT_MODULE, "cut.loommod");
  }
  std::vector<uint8_t> flipped = good;
  flipped[flipped.size() - 10] ^= 0x40;
  EXPECT_LOOM_ERROR(
      loom_module_load_memory(r, flipped.data(), flipped.size(), "flipped.loommod", &m),
      LOOM_ERROR_CORRUPT_MODULE, "flipped.loommod");
  // Another archive version (bytes 8..11, little endian).
  std::vector<uint8_t> future = good;
  future[8] = 99;
  EXPECT_LOOM_ERROR(loom_module_load_memory(r, future.data(), future.size(), "future.loommod", &m),
                    LOOM_ERROR_VERSION_MISMATCH, "module archive version 99");
  // A module for the other arch.
  EXPECT_LOOM_ERROR(loom_module_load(r, module_path(LOOM_ARCH_VULKAN, "heat").c_str(), &m),
                    LOOM_ERROR_WRONG_ARCH, "compiled for vulkan, not for the CPU");
  EXPECT_EQ(m, nullptr);  // nothing written on failure
  EXPECT_LOOM(loom_runtime_destroy(r));
  LoomRuntimeCreateInfo bad{};
  bad.struct_size = sizeof bad;
  bad.arch = (LoomArch)7;
  LoomRuntime none = nullptr;
  EXPECT_LOOM_ERROR(loom_runtime_create(&bad, &none), LOOM_ERROR_INVALID_ARGUMENT,
                    "arch 7 is not a LoomArch");
}

// SPIR-V that would reach the driver as it is (make_test_modules writes these from heat): a
// corrupt module, named with the kernel and task, and the runtime unharmed.
TEST(CApiBasics, HostileSpirvIsACorruptModuleNotACrash) {
  LOOM_REQUIRE_VULKAN_OR_SKIP();
  LoomRuntime r = make_runtime(LOOM_ARCH_VULKAN);
  LoomModule m = nullptr;
  std::string path = module_path(LOOM_ARCH_VULKAN, "hostile_entry_point");
  EXPECT_LOOM_ERROR(loom_module_load(r, path.c_str(), &m), LOOM_ERROR_CORRUPT_MODULE,
                    path +
                        ": kernel 'diffuse': task 0: the shader's entry point is 'oain'; a "
                        "task's is 'main'");
  path = module_path(LOOM_ARCH_VULKAN, "hostile_truncated");
  EXPECT_LOOM_ERROR(loom_module_load(r, path.c_str(), &m), LOOM_ERROR_CORRUPT_MODULE,
                    path +
                        ": kernel 'diffuse': task 0 (blob '1.diffuse.task0.spv') is not valid "
                        "SPIR-V: ");
  EXPECT_EQ(m, nullptr);
  EXPECT_LOOM(loom_module_load(r, module_path(LOOM_ARCH_VULKAN, "heat").c_str(), &m));
  LoomPipeline step = nullptr;
  EXPECT_LOOM(loom_module_get_pipeline(m, "step", &step));
  EXPECT_LOOM(loom_pipeline_launch(step));
  EXPECT_LOOM(loom_runtime_wait(r));
  EXPECT_LOOM(loom_module_destroy(m));
  EXPECT_LOOM(loom_runtime_destroy(r));
}

// A copy of the heat module's folder form (written at build time) whose metadata's
// requirement list `key` is `value`.
std::string module_needing(LoomArch arch, const std::string& key, const std::string& value,
                           const std::string& dir) {
  std::string folder = dir + "/needy_" + (arch == LOOM_ARCH_CPU ? "cpu" : "vulkan");
  fs::remove_all(folder);
  fs::create_directories(dir);
  fs::copy(modules_dir(arch) + "/heat_folder", folder, fs::copy_options::recursive);
  std::string meta_path = folder + "/metadata.json";
  std::ifstream in(meta_path);
  std::string meta((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t at = meta.find("\"" + key + "\"");
  EXPECT_NE(at, std::string::npos) << key;
  size_t open = meta.find('[', at), close = meta.find(']', at);
  meta = meta.substr(0, open + 1) + value + meta.substr(close);
  std::ofstream(meta_path, std::ios::trunc) << meta;
  return folder;
}

TEST(CApiBasics, MissingCapabilitiesAreNamed) {
  std::string dir = testing::TempDir() + "/c_api_caps";
  LoomRuntime r = make_runtime(LOOM_ARCH_CPU);
  LoomModule m = nullptr;
  // A feature no CPU has (one this runtime does not know counts as missing).
  std::string cpu =
      module_needing(LOOM_ARCH_CPU, "cpu_features", "\"+sse2\", \"+loom-test-feature\"", dir);
  EXPECT_LOOM_ERROR(loom_module_load(r, cpu.c_str(), &m), LOOM_ERROR_MISSING_CAPABILITY,
                    "this CPU lacks features the module's code uses");
  EXPECT_NE(std::string(loom_last_error_message())
                .find("): loom-test-feature; compile the module for an older CPU"),
            std::string::npos);
  EXPECT_LOOM(loom_runtime_destroy(r));
  LOOM_REQUIRE_VULKAN_OR_SKIP();
  r = make_runtime(LOOM_ARCH_VULKAN);
  std::string gpu =
      module_needing(LOOM_ARCH_VULKAN, "vulkan_features", "\"shaderBufferFloat64AtomicAdd\"", dir);
  EXPECT_LOOM_ERROR(loom_module_load(r, gpu.c_str(), &m), LOOM_ERROR_MISSING_CAPABILITY,
                    "lacks what the module needs: shaderBufferFloat64AtomicAdd");
  EXPECT_LOOM(loom_runtime_destroy(r));
}

}  // namespace
