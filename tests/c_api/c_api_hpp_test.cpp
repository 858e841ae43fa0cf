// loom.hpp, the header-only C++ layer over loom.h: handles destroy themselves at the end of
// their scope (in reverse order of declaration), move without double destroys, and a failed
// call throws an Error carrying the LoomResult and Loom's message.
#include <gtest/gtest.h>
#include <loom/loom.hpp>

#include <string>
#include <utility>

namespace {

std::string module_path(const std::string& name) {
  return std::string(LOOM_TEST_MODULES) + "/cpu/" + name + ".loommod";
}

LoomRuntimeCreateInfo cpu() {
  LoomRuntimeCreateInfo info{};
  info.arch = LOOM_ARCH_CPU;
  return info;
}

TEST(LoomHpp, HandlesDestroyThemselvesInReverseOrder) {
  LoomRuntime runtime_handle = nullptr;
  LoomModule module_handle = nullptr;
  LoomArray array_handle = nullptr;
  LoomArgpack pack_handle = nullptr;
  {
    loom::plugin::Runtime runtime = loom::plugin::create_runtime(cpu());
    loom::plugin::Ndarray a = loom::plugin::create_ndarray(runtime, LOOM_DTYPE_F32, {8});
    loom::plugin::Module module =
        loom::plugin::load_module(runtime, module_path("handles").c_str());
    loom::plugin::Argpack pack = loom::plugin::create_argpack(module, "Pair");
    LoomArgument member = loom_arg_ndarray(a);
    loom::plugin::check(loom_argpack_set(pack, "a", &member));
    runtime_handle = runtime;
    module_handle = module;
    array_handle = a;
    pack_handle = pack;
    LoomModuleInfo info{sizeof(LoomModuleInfo)};
    loom::plugin::check(loom_module_get_info(module, &info));
    EXPECT_GT(info.kernel_count, 0u);
  }
  // The pack went first (it referred to `a`), then the module, the ndarray, the runtime: each
  // handle is stale now, so every destroy ran and none was refused.
  EXPECT_EQ(loom_argpack_destroy(pack_handle), LOOM_ERROR_INVALID_HANDLE);
  EXPECT_EQ(loom_module_destroy(module_handle), LOOM_ERROR_INVALID_HANDLE);
  EXPECT_EQ(loom_ndarray_destroy(array_handle), LOOM_ERROR_INVALID_HANDLE);
  EXPECT_EQ(loom_runtime_destroy(runtime_handle), LOOM_ERROR_INVALID_HANDLE);
}

TEST(LoomHpp, MovesTransferOwnershipOnce) {
  loom::plugin::Runtime runtime = loom::plugin::create_runtime(cpu());
  loom::plugin::Ndarray a = loom::plugin::create_ndarray(runtime, LOOM_DTYPE_I32, {4, 4});
  LoomArray raw = a;
  loom::plugin::Ndarray b = std::move(a);
  EXPECT_FALSE(a);
  EXPECT_EQ(b.get(), raw);
  loom::plugin::Ndarray c;
  c = std::move(b);
  EXPECT_EQ(c.get(), raw);
  LoomArrayInfo info = loom::plugin::array_info(c);
  EXPECT_EQ(info.struct_size, sizeof info);
  EXPECT_EQ(info.ndim, 2u);
  EXPECT_EQ(loom::plugin::runtime_info(runtime).arch, LOOM_ARCH_CPU);
  // Reads recorded into a command buffer are Vulkan's: on the CPU the call says so.
  try {
    loom::plugin::read_into(c, VK_NULL_HANDLE);
    ADD_FAILURE() << "no exception";
  } catch (const loom::plugin::Error& e) {
    EXPECT_EQ(e.result(), LOOM_ERROR_WRONG_ARCH) << e.what();
  }
  c.reset();
  EXPECT_EQ(loom_array_get_info(raw, &info), LOOM_ERROR_INVALID_HANDLE);
  // release() hands the handle back to the caller, who destroys it.
  loom::plugin::Ndarray d = loom::plugin::create_ndarray(runtime, LOOM_DTYPE_I32, {2});
  LoomArray released = d.release();
  EXPECT_FALSE(d);
  EXPECT_EQ(loom_ndarray_destroy(released), LOOM_SUCCESS);
}

TEST(LoomHpp, FailedCallsThrowTheResultAndMessage) {
  loom::plugin::Runtime runtime = loom::plugin::create_runtime(cpu());
  try {
    loom::plugin::load_module(runtime, "/nonexistent/x.loommod");
    ADD_FAILURE() << "no exception";
  } catch (const loom::plugin::Error& e) {
    EXPECT_EQ(e.result(), LOOM_ERROR_IO);
    EXPECT_NE(std::string(e.what()).find("LOOM_ERROR_IO"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("/nonexistent/x.loommod"), std::string::npos) << e.what();
  }
  loom::plugin::Module module = loom::plugin::load_module(runtime, module_path("handles").c_str());
  try {
    loom::plugin::pipeline(module, "nope");
    ADD_FAILURE() << "no exception";
  } catch (const loom::plugin::Error& e) {
    EXPECT_EQ(e.result(), LOOM_ERROR_NOT_FOUND);
  }
}

}  // namespace
