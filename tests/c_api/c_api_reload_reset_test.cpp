// A reload that resets argpack members the host set, because the new module changed the
// pack's layout, says which: through the log callback and loom_module_get_reload_reset.
// The module is a graph document this test writes and edits, compiled by the `loom` CLI, on
// the CPU and on Vulkan.
#include <gtest/gtest.h>
#include <loom/loom.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/c_api/loom_result_checks.h"
#include "tests/support/vulkan_required.h"

namespace fs = std::filesystem;

namespace {

// A pack `params` of type Params read by one kernel; `members` are Params' members and
// `values` its declared values (JSON), `expr` what the kernel returns of them.
std::string document(const std::string& members, const std::string& values,
                     const std::string& expr) {
  return R"({
  "format": "loom-graph",
  "version": 2,
  "name": "reset",
  "argpack_types": [
    {"name": "Params", "kind": "pack", "members": [)" +
         members + R"(]}
  ],
  "argpacks": [
    {"name": "params", "type": "Params", "values": {)" +
         values + R"(}}
  ],
  "kernels": [
    {
      "name": "apply",
      "params": [{"name": "p", "kind": "argpack", "type": "Params"}],
      "returns": ["f32"],
      "nodes": [
        {"id": 1, "type": "member", "params": {"param": "p", "path": "gain"}},
        {"id": 2, "type": "member", "params": {"param": "p", "path": "bias"}},
        {"id": 3, "type": "expr", "inputs": {"g": "1", "b": "2"}, "params": {"expr": ")" +
         expr + R"("}},
        {"id": 4, "type": "return", "inputs": {"r0": "3"}}
      ]
    }
  ]
})";
}

const std::string kTwoMembers =
    R"({"name": "gain", "type": "f32"}, {"name": "bias", "type": "f32"})";
const std::string kTwoValues = R"("gain": 1.0, "bias": 0.5)";

// Replaces `path` with a modification time that differs from the last one.
void replace_file(const std::string& path, const std::string& text) {
  auto before = fs::exists(path) ? fs::last_write_time(path) : fs::file_time_type::clock::now();
  std::ofstream(path + ".tmp", std::ios::trunc) << text;
  fs::rename(path + ".tmp", path);
  fs::last_write_time(path, before + std::chrono::seconds(2));
}

struct Log {
  std::vector<std::string> warnings;
  static void record(void* user, LoomLogLevel level, const char* message) {
    if (level == LOOM_LOG_WARNING) static_cast<Log*>(user)->warnings.push_back(message);
  }
};

class ReloadReset : public testing::TestWithParam<LoomArch> {
 protected:
  void SetUp() override {
    setenv("LOOM_COMPILER", LOOM_CLI, 1);
    LoomRuntimeCreateInfo info{};
    info.struct_size = sizeof info;
    info.arch = GetParam();
    info.validation = GetParam() == LOOM_ARCH_VULKAN;  // a validation message is a warning
    info.log = &Log::record;
    info.log_user = &log;
    if (loom_runtime_create(&info, &runtime) != LOOM_SUCCESS) {
      if (GetParam() == LOOM_ARCH_VULKAN) LOOM_SKIP_FOR_NO_VULKAN(loom_last_error_message());
      FAIL() << loom_last_error_message();
    }
    // One folder per test and arch: ctest runs the tests in parallel processes.
    std::string test = testing::UnitTest::GetInstance()->current_test_info()->name();
    for (char& c : test)
      if (c == '/') c = '_';
    dir = testing::TempDir() + "/c_api_reload_reset_" + test;
    fs::remove_all(dir);
    fs::create_directories(dir);
    doc = dir + "/reset.loom.json";
  }
  void TearDown() override {
    if (module) EXPECT_EQ(loom_module_destroy(module), LOOM_SUCCESS);
    if (runtime) EXPECT_EQ(loom_runtime_destroy(runtime), LOOM_SUCCESS);
    unsetenv("LOOM_COMPILER");
  }
  float member(const char* path) {
    LoomArgument out{};
    EXPECT_EQ(loom_argpack_get(params, path, &out), LOOM_SUCCESS) << loom_last_error_message();
    return out.value.f32[0];
  }
  void set(const char* path, float value) {
    LoomArgument a = loom_arg_f32(value);
    ASSERT_LOOM(loom_argpack_set(params, path, &a));
  }
  // Every entry loom_module_get_reload_reset lists, checking it ends with NOT_FOUND.
  std::vector<std::string> resets() {
    std::vector<std::string> all;
    const char* path = nullptr;
    uint32_t i = 0;
    for (; loom_module_get_reload_reset(module, i, &path) == LOOM_SUCCESS; ++i) all.push_back(path);
    EXPECT_EQ(loom_module_get_reload_reset(module, i, &path), LOOM_ERROR_NOT_FOUND);
    return all;
  }
  void load_and_get_pack() {
    replace_file(doc, document(kTwoMembers, kTwoValues, "g + b"));
    ASSERT_LOOM(loom_module_load(runtime, doc.c_str(), &module));
    ASSERT_LOOM(loom_module_get_argpack(module, "params", &params));
  }
  void reload_to(const std::string& text) {
    replace_file(doc, text);
    LoomReloadStatus status = LOOM_RELOAD_UNCHANGED;
    ASSERT_LOOM(loom_module_reload_if_changed(module, &status));
    ASSERT_EQ(status, LOOM_RELOAD_SWAPPED);
  }

  Log log;
  LoomRuntime runtime = nullptr;
  LoomModule module = nullptr;
  LoomArgpack params = nullptr;
  std::string dir, doc;
};

TEST_P(ReloadReset, ALayoutChangeNamesTheMembersTheHostSet) {
  load_and_get_pack();
  const char* path = nullptr;
  EXPECT_EQ(loom_module_get_reload_reset(module, 0, &path), LOOM_ERROR_NOT_FOUND);
  set("gain", 5.0f);

  // A third member: another layout, so the pack starts at the new declared values.
  reload_to(document(kTwoMembers + R"(, {"name": "extra", "type": "f32"})",
                     kTwoValues + R"(, "extra": 2.0)", "g + b"));
  EXPECT_EQ(member("gain"), 1.0f);  // reset, as reported
  EXPECT_EQ(member("extra"), 2.0f);
  EXPECT_EQ(resets(), std::vector<std::string>{"params.gain"});
  ASSERT_EQ(log.warnings.size(), 1u);
  const std::string& w = log.warnings[0];
  EXPECT_NE(w.find("reset.loom.json"), std::string::npos) << w;
  EXPECT_NE(w.find("'params'"), std::string::npos) << w;
  EXPECT_NE(w.find("gain"), std::string::npos) << w;
  EXPECT_EQ(w.find("bias"), std::string::npos) << w;  // the host never set it

  // The next reload replaces the list; gain was reset, so only what the host set since counts.
  set("bias", 3.0f);
  reload_to(document(kTwoMembers, kTwoValues, "g + b"));
  EXPECT_EQ(member("bias"), 0.5f);
  EXPECT_EQ(resets(), std::vector<std::string>{"params.bias"});
  EXPECT_EQ(log.warnings.size(), 2u);
}

TEST_P(ReloadReset, AnUnchangedLayoutKeepsTheValuesAndReportsNothing) {
  load_and_get_pack();
  set("gain", 5.0f);
  // Another kernel body, the same pack layout: the host's value carries over.
  reload_to(document(kTwoMembers, kTwoValues, "g * b"));
  EXPECT_EQ(member("gain"), 5.0f);
  EXPECT_TRUE(resets().empty());
  EXPECT_TRUE(log.warnings.empty()) << log.warnings.front();
  const char* path = nullptr;
  EXPECT_EQ(loom_module_get_reload_reset(nullptr, 0, &path), LOOM_ERROR_NULL_HANDLE);
  EXPECT_EQ(loom_module_get_reload_reset(module, 0, nullptr), LOOM_ERROR_NULL_HANDLE);
}

INSTANTIATE_TEST_SUITE_P(Arch, ReloadReset, testing::Values(LOOM_ARCH_CPU, LOOM_ARCH_VULKAN),
                         [](const testing::TestParamInfo<LoomArch>& i) {
                           return i.param == LOOM_ARCH_CPU ? "cpu" : "vulkan";
                         });

}  // namespace
