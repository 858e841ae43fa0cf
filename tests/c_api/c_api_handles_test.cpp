// Handles through loom.h as a careless or hostile host uses them: destroyed twice, used after
// destroy, cast to another kind, mixed between runtimes, freed while an argpack refers to
// them. Each is a clean error naming the call and the argument, never a crash; CI runs this
// suite under AddressSanitizer, so a hidden use-after-free fails there too.
#include <gtest/gtest.h>
#include <loom/loom.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <map>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tests/c_api/loom_result_checks.h"
#include "tests/support/vulkan_required.h"

namespace fs = std::filesystem;

namespace {

std::string module_path(LoomArch arch, const std::string& name) {
  return std::string(LOOM_TEST_MODULES) + (arch == LOOM_ARCH_CPU ? "/cpu/" : "/vulkan/") + name +
         ".loommod";
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

LoomArray make_ndarray(LoomRuntime r, int64_t n) {
  LoomArray a = nullptr;
  EXPECT_EQ(loom_ndarray_create(r, LOOM_DTYPE_F32, 1, 1, &n, &a), LOOM_SUCCESS)
      << loom_last_error_message();
  return a;
}

LoomTexture make_texture(LoomRuntime r) {
  LoomTexture t = nullptr;
  EXPECT_EQ(loom_texture_create(r, LOOM_TEXTURE_RGBA8, 16, 8, 0, &t), LOOM_SUCCESS)
      << loom_last_error_message();
  return t;
}

LoomResult set_array(LoomArgpack p, const char* member, LoomArray a) {
  LoomArgument v = loom_arg_ndarray(a);
  return loom_argpack_set(p, member, &v);
}
LoomResult set_texture(LoomArgpack p, const char* member, LoomTexture t) {
  LoomArgument v = loom_arg_texture(t);
  return loom_argpack_set(p, member, &v);
}
LoomResult launch_pack(LoomKernel k, LoomArgpack p) {
  LoomArgument a = loom_arg_argpack(p);
  return loom_launch(k, 1, &a);
}

std::vector<float> read_floats(LoomArray a) {
  LoomArrayInfo info{sizeof(LoomArrayInfo)};
  EXPECT_LOOM(loom_array_get_info(a, &info));
  std::vector<float> v(info.bytes / 4);
  EXPECT_LOOM(loom_array_read(a, v.data(), info.bytes));
  return v;
}

// ---- per arch

class Handles : public testing::TestWithParam<LoomArch> {
 protected:
  void SetUp() override {
    if (GetParam() == LOOM_ARCH_VULKAN) LOOM_REQUIRE_VULKAN_OR_SKIP();
    runtime = make_runtime(GetParam());
    ASSERT_NE(runtime, nullptr);
    ASSERT_LOOM(loom_module_load(runtime, module_path(GetParam(), "handles").c_str(), &module));
    ASSERT_LOOM(loom_module_get_kernel(module, "copy", 0, nullptr, &copy));
    ASSERT_LOOM(loom_module_get_kernel(module, "paint", 0, nullptr, &paint));
  }
  void TearDown() override {
    if (module) EXPECT_LOOM(loom_module_destroy(module));
    if (runtime) EXPECT_LOOM(loom_runtime_destroy(runtime));
  }
  LoomRuntime runtime = nullptr;
  LoomModule module = nullptr;
  LoomKernel copy = nullptr, paint = nullptr;
};

TEST_P(Handles, AnArrayOrTextureAPackRefersToIsNotFreedUnderIt) {
  LoomArray a = make_ndarray(runtime, 64), b = make_ndarray(runtime, 64);
  LoomTexture img = make_texture(runtime);
  std::vector<float> ones(64, 1.0f);
  ASSERT_LOOM(loom_array_write(b, ones.data(), 256));
  LoomArgpack pair = nullptr;
  ASSERT_LOOM(loom_argpack_create(module, "Pair", &pair));
  ASSERT_LOOM(set_array(pair, "a", a));
  ASSERT_LOOM(set_array(pair, "b", b));
  ASSERT_LOOM(set_texture(pair, "img", img));

  // Refused, naming the pack and the member; the pack still works afterwards.
  EXPECT_LOOM_ERROR(loom_ndarray_destroy(b), LOOM_ERROR_IN_USE, "member 'b' of argpack 'Pair'");
  EXPECT_LOOM_ERROR(loom_texture_destroy(img), LOOM_ERROR_IN_USE, "member 'img' of argpack 'Pair'");
  ASSERT_LOOM(launch_pack(copy, pair));
  for (float x : read_floats(a)) ASSERT_EQ(x, 2.0f);
  ASSERT_LOOM(launch_pack(paint, pair));

  // A member set to another array releases the old one.
  LoomArray c = make_ndarray(runtime, 64);
  ASSERT_LOOM(set_array(pair, "b", c));
  EXPECT_LOOM(loom_ndarray_destroy(b));
  ASSERT_LOOM(launch_pack(copy, pair));
  for (float x : read_floats(a)) ASSERT_EQ(x, 1.0f);  // c is zeros

  // Destroying the pack releases what it held; a pack bound into another is in use too.
  EXPECT_LOOM_ERROR(loom_ndarray_destroy(a), LOOM_ERROR_IN_USE, "member 'a'");
  EXPECT_LOOM(loom_argpack_destroy(pair));
  EXPECT_LOOM(loom_ndarray_destroy(a));
  EXPECT_LOOM(loom_ndarray_destroy(c));
  EXPECT_LOOM(loom_texture_destroy(img));
}

TEST_P(Handles, AModuleResourceInAPackOfAnotherModuleKeepsThatModule) {
  LoomModule other = nullptr;
  ASSERT_LOOM(loom_module_load(runtime, module_path(GetParam(), "handles").c_str(), &other));
  LoomArray data = nullptr;
  ASSERT_LOOM(loom_module_get_array(other, "data", &data));
  LoomArgpack pair = nullptr;
  ASSERT_LOOM(loom_argpack_create(module, "Pair", &pair));
  ASSERT_LOOM(set_array(pair, "b", data));
  EXPECT_LOOM_ERROR(loom_module_destroy(other), LOOM_ERROR_IN_USE, "member 'b' of argpack 'Pair'");
  LoomArray mine = make_ndarray(runtime, 64);
  ASSERT_LOOM(set_array(pair, "b", mine));
  EXPECT_LOOM(loom_module_destroy(other));
  EXPECT_LOOM_ERROR(loom_array_get_info(data, nullptr), LOOM_ERROR_INVALID_HANDLE,
                    "loom_array_get_info: array");
  EXPECT_LOOM_ERROR(loom_ndarray_destroy(mine), LOOM_ERROR_IN_USE, "member 'b'");
  EXPECT_LOOM(loom_argpack_destroy(pair));
  EXPECT_LOOM(loom_ndarray_destroy(mine));
}

TEST_P(Handles, APackPointingIntoAModuleFollowsItsReload) {
  std::string dir = testing::TempDir() + "/c_api_handles_reload_" +
                    (GetParam() == LOOM_ARCH_CPU ? "cpu" : "vulkan");
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::string path = dir + "/handles.loommod";
  fs::copy_file(module_path(GetParam(), "handles"), path);
  LoomModule watched = nullptr;
  ASSERT_LOOM(loom_module_load(runtime, path.c_str(), &watched));
  LoomArray data = nullptr;
  ASSERT_LOOM(loom_module_get_array(watched, "data", &data));
  std::vector<float> ones(64, 1.0f);
  ASSERT_LOOM(loom_array_write(data, ones.data(), 256));
  LoomArray a = make_ndarray(runtime, 64);
  LoomArgpack pair = nullptr;
  ASSERT_LOOM(loom_argpack_create(module, "Pair", &pair));
  ASSERT_LOOM(set_array(pair, "a", a));
  ASSERT_LOOM(set_array(pair, "b", data));

  // The swap frees the old module's arrays; the pack reads the new module's (state kept).
  LoomReloadStatus status = LOOM_RELOAD_UNCHANGED;
  ASSERT_LOOM(loom_module_reload(watched, &status));
  ASSERT_EQ(status, LOOM_RELOAD_SWAPPED);
  ASSERT_LOOM(launch_pack(copy, pair));
  for (float x : read_floats(a)) ASSERT_EQ(x, 2.0f);
  ASSERT_LOOM(loom_array_write(data, std::vector<float>(64, 5.0f).data(), 256));
  ASSERT_LOOM(launch_pack(copy, pair));
  for (float x : read_floats(a)) ASSERT_EQ(x, 6.0f);

  EXPECT_LOOM_ERROR(loom_module_destroy(watched), LOOM_ERROR_IN_USE, "member 'b'");
  EXPECT_LOOM(loom_argpack_destroy(pair));
  EXPECT_LOOM(loom_module_destroy(watched));
  EXPECT_LOOM(loom_ndarray_destroy(a));
}

TEST_P(Handles, APackMemberTheKernelUsesMustBeSet) {
  LoomArgpack pair = nullptr;
  ASSERT_LOOM(loom_argpack_create(module, "Pair", &pair));
  LoomArray a = make_ndarray(runtime, 64);
  ASSERT_LOOM(set_array(pair, "a", a));
  EXPECT_LOOM_ERROR(launch_pack(copy, pair), LOOM_ERROR_INVALID_ARGUMENT,
                    "kernel 'copy': pin 'p': member 'b' (an ndarray) is not set");
  EXPECT_LOOM_ERROR(launch_pack(paint, pair), LOOM_ERROR_INVALID_ARGUMENT, "member 'img'");
  EXPECT_LOOM(loom_argpack_destroy(pair));
  EXPECT_LOOM(loom_ndarray_destroy(a));
}

// `copy` indexes p.b with p.a's index. A debug module checks every access in its code (it
// records no extent assumptions), so a short p.b fails its bounds check as a launch error;
// release modules refuse it before launching (c_api_extents_test.cpp).
TEST_P(Handles, PackMembersOfMismatchedExtentsFailTheBoundsCheckOfADebugModule) {
  LoomModule debug = nullptr;
  ASSERT_LOOM(loom_module_load(runtime, module_path(GetParam(), "handles_debug").c_str(), &debug));
  LoomKernel checked = nullptr;
  ASSERT_LOOM(loom_module_get_kernel(debug, "copy", 0, nullptr, &checked));
  LoomArray a = make_ndarray(runtime, 64), b = make_ndarray(runtime, 16);
  LoomArgpack pair = nullptr;
  ASSERT_LOOM(loom_argpack_create(debug, "Pair", &pair));
  ASSERT_LOOM(set_array(pair, "a", a));
  ASSERT_LOOM(set_array(pair, "b", b));
  EXPECT_LOOM_ERROR(launch_pack(checked, pair), LOOM_ERROR_LAUNCH, "kernel 'copy'");
  ASSERT_LOOM(set_array(pair, "b", a));  // equal extents run
  EXPECT_LOOM(launch_pack(checked, pair));
  EXPECT_LOOM(loom_module_destroy(debug));  // its pack goes with it, releasing a and b
  EXPECT_LOOM(loom_ndarray_destroy(a));
  EXPECT_LOOM(loom_ndarray_destroy(b));
}

TEST_P(Handles, DoubleDestroyIsACleanError) {
  LoomArray a = make_ndarray(runtime, 8);
  LoomTexture t = make_texture(runtime);
  LoomArgpack p = nullptr;
  ASSERT_LOOM(loom_argpack_create(module, "Pair", &p));
  LoomModule m = nullptr;
  ASSERT_LOOM(loom_module_load(runtime, module_path(GetParam(), "handles").c_str(), &m));
  EXPECT_LOOM(loom_ndarray_destroy(a));
  EXPECT_LOOM_ERROR(loom_ndarray_destroy(a), LOOM_ERROR_INVALID_HANDLE,
                    "loom_ndarray_destroy: array: the LoomArray was destroyed");
  EXPECT_LOOM(loom_texture_destroy(t));
  EXPECT_LOOM_ERROR(loom_texture_destroy(t), LOOM_ERROR_INVALID_HANDLE,
                    "loom_texture_destroy: texture: the LoomTexture was destroyed");
  EXPECT_LOOM(loom_argpack_destroy(p));
  EXPECT_LOOM_ERROR(loom_argpack_destroy(p), LOOM_ERROR_INVALID_HANDLE,
                    "loom_argpack_destroy: pack: the LoomArgpack was destroyed");
  EXPECT_LOOM(loom_module_destroy(m));
  EXPECT_LOOM_ERROR(loom_module_destroy(m), LOOM_ERROR_INVALID_HANDLE,
                    "loom_module_destroy: module: the LoomModule was destroyed");
  LoomRuntime r = make_runtime(LOOM_ARCH_CPU);
  EXPECT_LOOM(loom_runtime_destroy(r));
  EXPECT_LOOM_ERROR(loom_runtime_destroy(r), LOOM_ERROR_INVALID_HANDLE,
                    "loom_runtime_destroy: runtime: the LoomRuntime was destroyed");
}

TEST_P(Handles, UseAfterDestroyIsACleanError) {
  LoomModule m = nullptr;
  ASSERT_LOOM(loom_module_load(runtime, module_path(GetParam(), "handles").c_str(), &m));
  LoomKernel k = nullptr;
  ASSERT_LOOM(loom_module_get_kernel(m, "copy", 0, nullptr, &k));
  LoomArray field = nullptr;
  ASSERT_LOOM(loom_module_get_array(m, "data", &field));
  LoomTexture module_img = nullptr;
  ASSERT_LOOM(loom_module_get_texture(m, "img", &module_img));
  LoomArgpack declared = nullptr;
  ASSERT_LOOM(loom_module_get_argpack(m, "pair", &declared));
  LoomArray a = make_ndarray(runtime, 64);
  LoomTexture t = make_texture(runtime);
  LoomArgpack p = nullptr;
  ASSERT_LOOM(loom_argpack_create(module, "Pair", &p));
  EXPECT_LOOM(loom_ndarray_destroy(a));
  EXPECT_LOOM(loom_texture_destroy(t));
  EXPECT_LOOM(loom_argpack_destroy(p));
  EXPECT_LOOM(loom_module_destroy(m));

  float buf[64];
  LoomArrayInfo ai{sizeof(LoomArrayInfo)};
  LoomTextureInfo ti{sizeof(LoomTextureInfo)};
  LoomModuleInfo mi{sizeof(LoomModuleInfo)};
  LoomKernelInfo ki{sizeof(LoomKernelInfo)};
  EXPECT_LOOM_ERROR(loom_array_read(a, buf, sizeof buf), LOOM_ERROR_INVALID_HANDLE,
                    "loom_array_read: array: the LoomArray was destroyed");
  EXPECT_LOOM_ERROR(loom_array_get_info(field, &ai), LOOM_ERROR_INVALID_HANDLE,
                    "loom_array_get_info: array: the LoomArray was destroyed");
  EXPECT_LOOM_ERROR(loom_texture_get_info(t, &ti), LOOM_ERROR_INVALID_HANDLE,
                    "loom_texture_get_info: texture");
  EXPECT_LOOM_ERROR(loom_texture_get_info(module_img, &ti), LOOM_ERROR_INVALID_HANDLE,
                    "LoomTexture was destroyed");
  EXPECT_LOOM_ERROR(set_array(p, "a", a), LOOM_ERROR_INVALID_HANDLE,
                    "loom_argpack_set: pack: the LoomArgpack was destroyed");
  EXPECT_LOOM_ERROR(set_array(declared, "a", a), LOOM_ERROR_INVALID_HANDLE, "loom_argpack_set");
  EXPECT_LOOM_ERROR(loom_module_get_info(m, &mi), LOOM_ERROR_INVALID_HANDLE,
                    "loom_module_get_info: module");
  EXPECT_LOOM_ERROR(loom_kernel_get_info(k, &ki), LOOM_ERROR_INVALID_HANDLE,
                    "loom_kernel_get_info: kernel");
  EXPECT_LOOM_ERROR(launch_pack(k, declared), LOOM_ERROR_INVALID_HANDLE, "loom_launch: kernel");

  // A destroyed handle inside an argument or a member value names where it was given.
  LoomArgpack live = nullptr;
  ASSERT_LOOM(loom_argpack_create(module, "Pair", &live));
  EXPECT_LOOM_ERROR(set_array(live, "a", a), LOOM_ERROR_INVALID_HANDLE,
                    "member 'a': the ndarray: the LoomArray was destroyed");
  EXPECT_LOOM_ERROR(set_texture(live, "img", t), LOOM_ERROR_INVALID_HANDLE, "member 'img'");
  EXPECT_LOOM_ERROR(launch_pack(copy, p), LOOM_ERROR_INVALID_HANDLE,
                    "parameter 'p' (argument 0): the argpack: the LoomArgpack was destroyed");
  EXPECT_LOOM(loom_argpack_destroy(live));

  LoomRuntime r = make_runtime(LOOM_ARCH_CPU);
  EXPECT_LOOM(loom_runtime_destroy(r));
  LoomRuntimeInfo ri{sizeof(LoomRuntimeInfo)};
  EXPECT_LOOM_ERROR(loom_runtime_get_info(r, &ri), LOOM_ERROR_INVALID_HANDLE,
                    "loom_runtime_get_info: runtime: the LoomRuntime was destroyed");
  int64_t n = 4;
  LoomArray none = nullptr;
  EXPECT_LOOM_ERROR(loom_ndarray_create(r, LOOM_DTYPE_F32, 1, 1, &n, &none),
                    LOOM_ERROR_INVALID_HANDLE, "loom_ndarray_create: runtime");
  EXPECT_EQ(none, nullptr);
}

TEST_P(Handles, AHandleCastToAnotherKindOrGarbageIsACleanError) {
  LoomArray a = make_ndarray(runtime, 64);
  LoomTexture t = make_texture(runtime);
  LoomTextureInfo ti{sizeof(LoomTextureInfo)};
  LoomArrayInfo ai{sizeof(LoomArrayInfo)};
  LoomModuleInfo mi{sizeof(LoomModuleInfo)};
  LoomRuntimeInfo ri{sizeof(LoomRuntimeInfo)};
  EXPECT_LOOM_ERROR(loom_texture_get_info(reinterpret_cast<LoomTexture>(a), &ti),
                    LOOM_ERROR_INVALID_HANDLE,
                    "loom_texture_get_info: texture: the handle is a LoomArray, not a LoomTexture");
  EXPECT_LOOM_ERROR(loom_texture_destroy(reinterpret_cast<LoomTexture>(a)),
                    LOOM_ERROR_INVALID_HANDLE, "is a LoomArray, not a LoomTexture");
  EXPECT_LOOM_ERROR(loom_ndarray_destroy(reinterpret_cast<LoomArray>(t)), LOOM_ERROR_INVALID_HANDLE,
                    "is a LoomTexture, not a LoomArray");
  EXPECT_LOOM_ERROR(loom_module_get_info(reinterpret_cast<LoomModule>(copy), &mi),
                    LOOM_ERROR_INVALID_HANDLE, "is a LoomKernel, not a LoomModule");
  EXPECT_LOOM_ERROR(loom_runtime_get_info(reinterpret_cast<LoomRuntime>(module), &ri),
                    LOOM_ERROR_INVALID_HANDLE, "is a LoomModule, not a LoomRuntime");
  EXPECT_LOOM_ERROR(loom_runtime_destroy(reinterpret_cast<LoomRuntime>(module)),
                    LOOM_ERROR_INVALID_HANDLE, "loom_runtime_destroy: runtime");
  EXPECT_LOOM_ERROR(loom_array_get_info(reinterpret_cast<LoomArray>(runtime), &ai),
                    LOOM_ERROR_INVALID_HANDLE, "is a LoomRuntime, not a LoomArray");
  LoomArgument wrong = loom_arg_argpack(reinterpret_cast<LoomArgpack>(a));
  EXPECT_LOOM_ERROR(loom_launch(copy, 1, &wrong), LOOM_ERROR_INVALID_HANDLE, "kernel 'copy'");

  // Values that were never handles: a pointer to the host's own memory, small integers.
  int64_t host_memory[8] = {};
  for (LoomArray garbage :
       {reinterpret_cast<LoomArray>(host_memory), reinterpret_cast<LoomArray>(uintptr_t{0x1234}),
        reinterpret_cast<LoomArray>(~uintptr_t{0})}) {
    EXPECT_LOOM_ERROR(loom_array_get_info(garbage, &ai), LOOM_ERROR_INVALID_HANDLE,
                      "loom_array_get_info: array: the value is not a Loom handle");
    EXPECT_LOOM_ERROR(loom_ndarray_destroy(garbage), LOOM_ERROR_INVALID_HANDLE,
                      "not a Loom handle");
  }
  EXPECT_STREQ(loom_result_name(LOOM_ERROR_INVALID_HANDLE), "LOOM_ERROR_INVALID_HANDLE");
  EXPECT_STREQ(loom_result_name(LOOM_ERROR_IN_USE), "LOOM_ERROR_IN_USE");
  // Nothing was harmed: the real handles still work.
  EXPECT_LOOM(loom_ndarray_destroy(a));
  EXPECT_LOOM(loom_texture_destroy(t));
}

TEST_P(Handles, HandlesOfTwoRuntimesDoNotMix) {
  LoomRuntime other = make_runtime(LOOM_ARCH_CPU);
  LoomArray foreign = make_ndarray(other, 64);
  LoomTexture foreign_img = make_texture(other);
  LoomModule foreign_module = nullptr;
  ASSERT_LOOM(
      loom_module_load(other, module_path(LOOM_ARCH_CPU, "handles").c_str(), &foreign_module));
  LoomArgpack foreign_pack = nullptr;
  ASSERT_LOOM(loom_argpack_create(foreign_module, "Pair", &foreign_pack));
  LoomArgpack pair = nullptr;
  ASSERT_LOOM(loom_argpack_create(module, "Pair", &pair));

  EXPECT_LOOM_ERROR(set_array(pair, "a", foreign), LOOM_ERROR_WRONG_RUNTIME,
                    "member 'a': the ndarray belongs to another runtime");
  EXPECT_LOOM_ERROR(set_texture(pair, "img", foreign_img), LOOM_ERROR_WRONG_RUNTIME,
                    "member 'img': the texture belongs to another runtime");
  EXPECT_LOOM_ERROR(launch_pack(copy, foreign_pack), LOOM_ERROR_WRONG_RUNTIME,
                    "the argpack belongs to another runtime");
  LoomKernel foreign_copy = nullptr;
  ASSERT_LOOM(loom_module_get_kernel(foreign_module, "copy", 0, nullptr, &foreign_copy));
  EXPECT_LOOM_ERROR(launch_pack(foreign_copy, pair), LOOM_ERROR_WRONG_RUNTIME,
                    "the argpack belongs to another runtime");
  // Nothing was bound: the foreign array is in no pack and goes.
  EXPECT_LOOM(loom_ndarray_destroy(foreign));
  EXPECT_LOOM(loom_texture_destroy(foreign_img));
  EXPECT_LOOM(loom_argpack_destroy(pair));
  EXPECT_LOOM(loom_module_destroy(foreign_module));
  EXPECT_LOOM(loom_runtime_destroy(other));
}

INSTANTIATE_TEST_SUITE_P(Arch, Handles, testing::Values(LOOM_ARCH_CPU, LOOM_ARCH_VULKAN),
                         [](const testing::TestParamInfo<LoomArch>& i) {
                           return i.param == LOOM_ARCH_CPU ? "cpu" : "vulkan";
                         });

// ---- threads: one runtime each, one handle table for all

TEST(HandlesThreads, RuntimesOnSeveralThreadsShareTheHandleTable) {
  std::vector<LoomArray> stale(4, nullptr);
  std::vector<int> failures(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([t, &stale, &failures] {
      LoomRuntime r = make_runtime(LOOM_ARCH_CPU);
      for (int i = 0; i < 300; ++i) {
        LoomArray a = make_ndarray(r, 16);
        LoomArrayInfo info{sizeof(LoomArrayInfo)};
        failures[t] += loom_array_get_info(a, &info) != LOOM_SUCCESS || info.shape[0] != 16;
        failures[t] += loom_ndarray_destroy(a) != LOOM_SUCCESS;
        failures[t] += loom_ndarray_destroy(a) != LOOM_ERROR_INVALID_HANDLE;
        stale[t] = a;
      }
      failures[t] += loom_runtime_destroy(r) != LOOM_SUCCESS;
    });
  for (std::thread& t : threads) t.join();
  for (int t = 0; t < 4; ++t) {
    EXPECT_EQ(failures[t], 0) << "thread " << t;
    // A handle another thread destroyed is a clean error here too.
    EXPECT_LOOM_ERROR(loom_ndarray_destroy(stale[t]), LOOM_ERROR_INVALID_HANDLE, "destroyed");
  }
}

// ---- a random host: thousands of calls, stale handles included, on the CPU runtime

// What the host believes: live handles, destroyed ones, and what every live pack's members
// refer to. Each call's result is checked against it.
struct Model {
  std::vector<LoomArray> arrays, dead_arrays;
  std::vector<LoomTexture> textures, dead_textures;
  std::vector<LoomArgpack> packs, dead_packs;
  std::map<LoomArgpack, std::map<std::string, const void*>> members;

  bool used(const void* h) const {
    for (const auto& [pack, m] : members)
      for (const auto& [name, target] : m)
        if (target == h) return true;
    return false;
  }
};

template <typename T>
T pick(std::mt19937& rng, const std::vector<T>& v) {
  return v[std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng)];
}

template <typename T>
void erase(std::vector<T>& v, T x) {
  v.erase(std::find(v.begin(), v.end(), x));
}

TEST(HandlesRandom, EveryCallOfARandomHostGetsTheDocumentedCode) {
  std::string dir = testing::TempDir() + "/c_api_handles_random";
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::string path = dir + "/handles.loommod";
  fs::copy_file(module_path(LOOM_ARCH_CPU, "handles"), path);

  LoomRuntime r = make_runtime(LOOM_ARCH_CPU);
  ASSERT_NE(r, nullptr);
  LoomModule m = nullptr;
  ASSERT_LOOM(loom_module_load(r, path.c_str(), &m));
  LoomKernel copy = nullptr, paint = nullptr;
  ASSERT_LOOM(loom_module_get_kernel(m, "copy", 0, nullptr, &copy));
  ASSERT_LOOM(loom_module_get_kernel(m, "paint", 0, nullptr, &paint));
  LoomArray module_data = nullptr;
  ASSERT_LOOM(loom_module_get_array(m, "data", &module_data));
  LoomTexture module_img = nullptr;
  ASSERT_LOOM(loom_module_get_texture(m, "img", &module_img));

  const std::set<LoomResult> documented = {
      LOOM_SUCCESS,          LOOM_ERROR_NULL_HANDLE,    LOOM_ERROR_INVALID_ARGUMENT,
      LOOM_ERROR_WRONG_TYPE, LOOM_ERROR_WRONG_DTYPE,    LOOM_ERROR_WRONG_NDIM,
      LOOM_ERROR_NOT_FOUND,  LOOM_ERROR_INVALID_HANDLE, LOOM_ERROR_IN_USE};
  Model model;
  std::mt19937 rng(20261124);
  std::map<LoomResult, int> seen;
  int launched = 0, reloads = 0;
  const char* members[2] = {"a", "b"};
  auto check = [&](LoomResult got, LoomResult want, int step, const char* what) {
    ++seen[got];
    ASSERT_TRUE(documented.count(got)) << step << " " << what << ": " << loom_result_name(got);
    ASSERT_EQ(got, want) << step << " " << what << ": " << loom_result_name(got) << ": "
                         << loom_last_error_message();
  };
  for (int step = 0; step < 4000; ++step) {
    int action = std::uniform_int_distribution<int>(0, 10)(rng);
    switch (action) {
      case 0: {
        int64_t n = 64;
        LoomArray a = nullptr;
        check(loom_ndarray_create(r, LOOM_DTYPE_F32, 1, 1, &n, &a), LOOM_SUCCESS, step, "create");
        model.arrays.push_back(a);
        break;
      }
      case 1: {
        bool stale = !model.dead_arrays.empty() && (model.arrays.empty() || rng() % 3 == 0);
        if (!stale && model.arrays.empty()) break;
        LoomArray a = stale ? pick(rng, model.dead_arrays) : pick(rng, model.arrays);
        LoomResult want = stale           ? LOOM_ERROR_INVALID_HANDLE
                          : model.used(a) ? LOOM_ERROR_IN_USE
                                          : LOOM_SUCCESS;
        check(loom_ndarray_destroy(a), want, step, "ndarray_destroy");
        if (want == LOOM_SUCCESS) erase(model.arrays, a), model.dead_arrays.push_back(a);
        break;
      }
      case 2: {
        LoomTexture t = nullptr;
        check(loom_texture_create(r, LOOM_TEXTURE_RGBA8, 16, 8, 0, &t), LOOM_SUCCESS, step,
              "texture_create");
        model.textures.push_back(t);
        break;
      }
      case 3: {
        bool stale = !model.dead_textures.empty() && (model.textures.empty() || rng() % 3 == 0);
        if (!stale && model.textures.empty()) break;
        LoomTexture t = stale ? pick(rng, model.dead_textures) : pick(rng, model.textures);
        LoomResult want = stale           ? LOOM_ERROR_INVALID_HANDLE
                          : model.used(t) ? LOOM_ERROR_IN_USE
                                          : LOOM_SUCCESS;
        check(loom_texture_destroy(t), want, step, "texture_destroy");
        if (want == LOOM_SUCCESS) erase(model.textures, t), model.dead_textures.push_back(t);
        break;
      }
      case 4: {
        LoomArgpack p = nullptr;
        check(loom_argpack_create(m, "Pair", &p), LOOM_SUCCESS, step, "argpack_create");
        model.packs.push_back(p);
        model.members[p];
        break;
      }
      case 5: {
        bool stale = !model.dead_packs.empty() && (model.packs.empty() || rng() % 3 == 0);
        if (!stale && model.packs.empty()) break;
        LoomArgpack p = stale ? pick(rng, model.dead_packs) : pick(rng, model.packs);
        check(loom_argpack_destroy(p), stale ? LOOM_ERROR_INVALID_HANDLE : LOOM_SUCCESS, step,
              "argpack_destroy");
        if (!stale) erase(model.packs, p), model.dead_packs.push_back(p), model.members.erase(p);
        break;
      }
      case 6:
      case 7: {  // set an ndarray member: a live, destroyed or module array
        if (model.packs.empty() && model.dead_packs.empty()) break;
        bool stale_pack = !model.dead_packs.empty() && (model.packs.empty() || rng() % 4 == 0);
        LoomArgpack p = stale_pack ? pick(rng, model.dead_packs) : pick(rng, model.packs);
        int source = static_cast<int>(rng() % 4);
        LoomArray a = module_data;
        bool stale_array = false;
        if (source == 1 && !model.dead_arrays.empty()) {
          a = pick(rng, model.dead_arrays);
          stale_array = true;
        } else if (source >= 2 && !model.arrays.empty()) {
          a = pick(rng, model.arrays);
        }
        const char* member = members[rng() % 2];
        LoomResult want = stale_pack || stale_array ? LOOM_ERROR_INVALID_HANDLE : LOOM_SUCCESS;
        check(set_array(p, member, a), want, step, "argpack_set ndarray");
        if (want == LOOM_SUCCESS) model.members[p][member] = a;
        break;
      }
      case 8: {  // set the texture member
        if (model.packs.empty()) break;
        LoomArgpack p = pick(rng, model.packs);
        bool stale = !model.dead_textures.empty() && rng() % 3 == 0;
        LoomTexture t = stale                    ? pick(rng, model.dead_textures)
                        : model.textures.empty() ? module_img
                                                 : pick(rng, model.textures);
        check(set_texture(p, "img", t), stale ? LOOM_ERROR_INVALID_HANDLE : LOOM_SUCCESS, step,
              "argpack_set texture");
        if (!stale) model.members[p]["img"] = t;
        break;
      }
      case 9: {  // launch: a pack whose members are all set runs, others are refused
        if (model.packs.empty() && model.dead_packs.empty()) break;
        bool stale = !model.dead_packs.empty() && (model.packs.empty() || rng() % 4 == 0);
        LoomArgpack p = stale ? pick(rng, model.dead_packs) : pick(rng, model.packs);
        bool use_paint = rng() % 2 == 0;
        LoomResult want = LOOM_ERROR_INVALID_HANDLE;
        if (!stale) {
          const auto& set = model.members[p];
          bool ready = use_paint ? set.count("img") : set.count("a") && set.count("b");
          want = ready ? LOOM_SUCCESS : LOOM_ERROR_INVALID_ARGUMENT;
        }
        check(launch_pack(use_paint ? paint : copy, p), want, step, "launch");
        launched += want == LOOM_SUCCESS;
        break;
      }
      case 10: {  // a reload swaps the module under the packs that point into it
        if (rng() % 4 != 0) break;
        LoomReloadStatus status = LOOM_RELOAD_UNCHANGED;
        check(loom_module_reload(m, &status), LOOM_SUCCESS, step, "reload");
        ASSERT_EQ(status, LOOM_RELOAD_SWAPPED);
        ++reloads;
        break;
      }
    }
    if (HasFatalFailure()) return;
  }
  // Every kind of outcome came up.
  EXPECT_GT(seen[LOOM_SUCCESS], 1000);
  EXPECT_GT(seen[LOOM_ERROR_INVALID_HANDLE], 50);
  EXPECT_GT(seen[LOOM_ERROR_IN_USE], 10);
  EXPECT_GT(seen[LOOM_ERROR_INVALID_ARGUMENT], 10);
  EXPECT_GT(launched, 50);
  EXPECT_GT(reloads, 20);

  for (LoomArgpack p : model.packs) EXPECT_LOOM(loom_argpack_destroy(p));
  for (LoomArray a : model.arrays) EXPECT_LOOM(loom_ndarray_destroy(a));
  for (LoomTexture t : model.textures) EXPECT_LOOM(loom_texture_destroy(t));
  EXPECT_LOOM(loom_module_destroy(m));
  EXPECT_LOOM(loom_runtime_destroy(r));
}

}  // namespace
