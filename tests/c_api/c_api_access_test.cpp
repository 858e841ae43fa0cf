// What kernels read and write, through loom.h (loom_kernel_get_resource_access) and
// `loom-module info`, for modules the `loom` CLI compiles from docs/resource_access.loom.json
// for the CPU and for Vulkan, and for a module written before Loom recorded it.
#include <gtest/gtest.h>
#include <loom/loom.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <unistd.h>

#include "tests/c_api/loom_result_checks.h"
#include "tests/support/vulkan_required.h"

namespace fs = std::filesystem;

namespace {

const char* arch_name(LoomArch arch) { return arch == LOOM_ARCH_CPU ? "cpu" : "vulkan"; }

// Runs `command`, returning its exit status and (in `out`) what it printed.
int run(const std::string& command, std::string* out) {
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return -1;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, pipe)) > 0;) out->append(buf, n);
  return pclose(pipe);
}

fs::path work_dir() {
  fs::path dir = fs::temp_directory_path() / ("loom_c_api_access_" + std::to_string(getpid()));
  fs::create_directories(dir);
  return dir;
}

// Removes the modules this process compiled when the tests are done.
class RemoveWorkDir : public testing::Environment {
 public:
  void TearDown() override { fs::remove_all(work_dir()); }
};
const testing::Environment* const kRemoveWorkDir =
    testing::AddGlobalTestEnvironment(new RemoveWorkDir);

// The module folder for `arch`, compiled once per process by the `loom` CLI.
std::string module_for(LoomArch arch) {
  fs::path dir = work_dir() / arch_name(arch);
  if (fs::exists(dir / "metadata.json")) return dir.string();
  std::string out;
  int status = run(std::string(LOOM_CLI) + " compile " + LOOM_SOURCE_DIR +
                       "/tests/c_api/docs/resource_access.loom.json --arch " + arch_name(arch) +
                       " --folder --kernel serial --kernel idle -o " + dir.string(),
                   &out);
  EXPECT_EQ(status, 0) << out;
  return dir.string();
}

// The same module as a module written before resource access was recorded: its kernels'
// ABIs without the key (an unknown key is ignored, like any key a later Loom adds).
std::string old_module_for(LoomArch arch) {
  fs::path from = module_for(arch);
  fs::path dir = work_dir() / (std::string("old_") + arch_name(arch));
  fs::remove_all(dir);
  fs::copy(from, dir, fs::copy_options::recursive);
  std::ifstream in(dir / "metadata.json");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  in.close();
  size_t renamed = 0;
  for (size_t at = 0; (at = text.find("\"resource_access\"", at)) != std::string::npos; ++renamed)
    at = text.replace(at, 17, "\"not_this_version\"").find('"', at + 1);
  EXPECT_EQ(renamed, 3u);
  std::ofstream(dir / "metadata.json", std::ios::trunc) << text;
  return dir.string();
}

LoomRuntime make_runtime(LoomArch arch) {
  LoomRuntimeCreateInfo info{};
  info.struct_size = sizeof info;
  info.arch = arch;
  info.cpu_threads = 1;
  info.validation = arch == LOOM_ARCH_VULKAN;
  LoomRuntime r = nullptr;
  EXPECT_EQ(loom_runtime_create(&info, &r), LOOM_SUCCESS) << loom_last_error_message();
  return r;
}

// "name:source:kind:param:access" per entry, all of them, so anything extra shows.
std::string describe(const std::vector<LoomResourceAccess>& list) {
  std::string out;
  for (const LoomResourceAccess& a : list) {
    const char* source = a.source == LOOM_RESOURCE_PARAM         ? "param"
                         : a.source == LOOM_RESOURCE_FIELD       ? "field"
                         : a.source == LOOM_RESOURCE_PACK_MEMBER ? "member"
                                                                 : "?";
    const char* kind = a.kind == LOOM_ITEM_FIELD     ? "field"
                       : a.kind == LOOM_ITEM_NDARRAY ? "ndarray"
                       : a.kind == LOOM_ITEM_TEXTURE ? "texture"
                                                     : "?";
    std::string access = std::string(a.access & LOOM_ACCESS_READ ? "r" : "") +
                         (a.access & LOOM_ACCESS_WRITE ? "w" : "") +
                         (a.access & LOOM_ACCESS_ATOMIC ? "a" : "");
    out += (out.empty() ? "" : " ") + std::string(a.name) + ":" + source + ":" + kind + ":" +
           (a.param == UINT32_MAX ? "-" : std::to_string(a.param)) + ":" + access;
  }
  return out;
}

class CApiAccess : public testing::TestWithParam<LoomArch> {
 protected:
  void SetUp() override {
    if (GetParam() == LOOM_ARCH_VULKAN) LOOM_REQUIRE_VULKAN_OR_SKIP();
    runtime = make_runtime(GetParam());
    ASSERT_NE(runtime, nullptr);
  }
  void TearDown() override {
    if (module) EXPECT_LOOM(loom_module_destroy(module));
    if (runtime) EXPECT_LOOM(loom_runtime_destroy(runtime));
  }

  LoomKernel kernel(const std::string& path, const char* name) {
    if (!module) EXPECT_LOOM(loom_module_load(runtime, path.c_str(), &module));
    LoomTemplateArgument field{};
    field.name = "tf";
    field.kind = LOOM_TEMPLATE_FIELD;
    field.field = "g";
    bool touch = std::string(name) == "touch";
    LoomKernel k = nullptr;
    EXPECT_LOOM(loom_module_get_kernel(module, name, touch ? 1 : 0, touch ? &field : nullptr, &k));
    return k;
  }

  LoomRuntime runtime = nullptr;
  LoomModule module = nullptr;
};

TEST_P(CApiAccess, ReportsWhatTheCompiledCodeReadsAndWrites) {
  LoomKernel k = kernel(module_for(GetParam()), "touch");
  ASSERT_NE(k, nullptr);
  uint32_t count = 0;
  ASSERT_LOOM(loom_kernel_get_resource_access(k, &count, nullptr));
  std::vector<LoomResourceAccess> list(count, LoomResourceAccess{sizeof(LoomResourceAccess)});
  ASSERT_LOOM(loom_kernel_get_resource_access(k, &count, list.data()));
  ASSERT_EQ(count, list.size());
  // d's load is dead and job.idle unused: neither is listed. c is only updated atomically.
  // The parameters' indices: a 0, b 1, c 2, d 3, job 4, img 5, out 6 (tf is a template).
  EXPECT_EQ(describe(list),
            "a:param:ndarray:0:r b:param:ndarray:1:w c:param:ndarray:2:a "
            "img:param:texture:5:r out:param:texture:6:w job.src:member:ndarray:4:r "
            "f:field:field:-:r job.dst:member:ndarray:4:w job.inner.grid:member:ndarray:4:rw "
            "g:field:field:-:rw");
  LoomParamInfo param{sizeof(LoomParamInfo)};
  ASSERT_LOOM(loom_kernel_get_param(k, list[7].param, &param));
  EXPECT_STREQ(param.name, "job");

  // Fewer entries than there are: that many, in order.
  std::vector<LoomResourceAccess> two(2, LoomResourceAccess{sizeof(LoomResourceAccess)});
  count = 2;
  ASSERT_LOOM(loom_kernel_get_resource_access(k, &count, two.data()));
  EXPECT_EQ(count, 2u);
  EXPECT_EQ(describe(two), "a:param:ndarray:0:r b:param:ndarray:1:w");

  // One thread runs serial code: its atomic is a plain read and write.
  LoomKernel serial = kernel("", "serial");
  count = 4;
  ASSERT_LOOM(loom_kernel_get_resource_access(serial, &count, list.data()));
  list.resize(count);
  EXPECT_EQ(describe(list), "c:param:ndarray:0:rw");
}

TEST_P(CApiAccess, ArgumentErrorsAreNamed) {
  LoomKernel k = kernel(module_for(GetParam()), "touch");
  EXPECT_EQ(loom_kernel_get_resource_access(k, nullptr, nullptr), LOOM_ERROR_NULL_HANDLE);
  EXPECT_NE(std::string(loom_last_error_message()).find("loom_kernel_get_resource_access: count"),
            std::string::npos)
      << loom_last_error_message();
  uint32_t count = 0;
  EXPECT_EQ(loom_kernel_get_resource_access(nullptr, &count, nullptr), LOOM_ERROR_NULL_HANDLE);
  EXPECT_NE(std::string(loom_last_error_message()).find("loom_kernel_get_resource_access: kernel"),
            std::string::npos)
      << loom_last_error_message();
  EXPECT_EQ(loom_kernel_get_resource_access(reinterpret_cast<LoomKernel>(module), &count, nullptr),
            LOOM_ERROR_INVALID_HANDLE);
}

TEST_P(CApiAccess, ModulesWrittenBeforeItSayItIsNotKnown) {
  std::string path = old_module_for(GetParam());
  LoomKernel k = kernel(path, "touch");
  ASSERT_NE(k, nullptr);
  uint32_t count = 7;
  EXPECT_EQ(loom_kernel_get_resource_access(k, &count, nullptr), LOOM_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(count, 7u);  // nothing written on an error
  std::string message = loom_last_error_message();
  EXPECT_NE(message.find("kernel 'touch'"), std::string::npos) << message;
  EXPECT_NE(message.find("loom_kernel_get_resource_access: "), std::string::npos) << message;
  EXPECT_NE(message.find("before Loom recorded which resources kernels read and write"),
            std::string::npos)
      << message;
  // A kernel with no resources touches none, whatever its module's age.
  LoomKernel idle = kernel(path, "idle");
  ASSERT_LOOM(loom_kernel_get_resource_access(idle, &count, nullptr));
  EXPECT_EQ(count, 0u);
}

INSTANTIATE_TEST_SUITE_P(Arch, CApiAccess, testing::Values(LOOM_ARCH_CPU, LOOM_ARCH_VULKAN),
                         [](const testing::TestParamInfo<LoomArch>& info) {
                           return std::string(arch_name(info.param));
                         });

// `loom-module info` needs no device: it reads the metadata.
TEST(LoomModuleInfo, PrintsEachKernelsReadsAndWrites) {
  for (LoomArch arch : {LOOM_ARCH_CPU, LOOM_ARCH_VULKAN}) {
    std::string out;
    ASSERT_EQ(run(std::string(LOOM_MODULE_CLI) + " info " + module_for(arch), &out), 0) << out;
    EXPECT_NE(out.find("kernel touch: 7 parameter(s), 1 task(s)\n"
                       "  reads: a, img, job.src, f, job.inner.grid, g; "
                       "writes: b, out, job.dst, job.inner.grid, g; atomics: c\n"),
              std::string::npos)
        << out;
    EXPECT_NE(out.find("kernel serial: 1 parameter(s), 1 task(s)\n"
                       "  reads: c; writes: c; atomics: -\n"),
              std::string::npos)
        << out;
    out.clear();
    ASSERT_EQ(run(std::string(LOOM_MODULE_CLI) + " info " + old_module_for(arch), &out), 0) << out;
    EXPECT_NE(out.find("kernel touch: 7 parameter(s), 1 task(s)\n"
                       "  reads, writes: unknown (the module was written before Loom recorded "
                       "them)\n"),
              std::string::npos)
        << out;
  }
}

}  // namespace
