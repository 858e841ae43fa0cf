// What the C ABI tests that run one module share: a runtime as an engine would create it for
// `arch` (2 CPU threads; on Vulkan the validation layers on) with the module at `path` loaded.
#pragma once

#include <gtest/gtest.h>
#include <loom/loom.h>

#include <string>

#include "tests/c_api/loom_result_checks.h"

namespace loom::test {

// Fails the test (ASSERT_NO_FATAL_FAILURE in the caller stops it) when either call fails.
inline void open_module(LoomArch arch, const std::string& path, LoomRuntime* runtime,
                        LoomModule* module) {
  LoomRuntimeCreateInfo info{};
  info.struct_size = sizeof info;
  info.arch = arch;
  info.cpu_threads = 2;
  info.validation = arch == LOOM_ARCH_VULKAN;
  ASSERT_LOOM(loom_runtime_create(&info, runtime));
  ASSERT_LOOM(loom_module_load(*runtime, path.c_str(), module));
}

#ifdef LOOM_TEST_MODULES
// The module make_test_modules wrote from a document for `arch`: modules/ARCH/NAME.loommod.
inline std::string test_module_path(LoomArch arch, const std::string& name) {
  return std::string(LOOM_TEST_MODULES) + (arch == LOOM_ARCH_CPU ? "/cpu/" : "/vulkan/") + name +
         ".loommod";
}
#endif

}  // namespace loom::test
