// Loom inside Unity on a Vulkan 1.0 device (tests/support/engine_host.h, Engine::Unity10),
// through loom.h exactly as a Unity plugin gets it: IUnityGraphicsVulkan's UnityVulkanInstance
// (pipeline cache, instance, physical device, device, graphics queue and family,
// vkGetInstanceProcAddr) and the API version Unity's instance asked for; no create info, no
// features, no extensions. The sample modules, compiled in the suite's setup with
// `loom compile --vulkan-version 1.0`, run through loom_pipeline_launch_into in the engine's
// frames under the validation layer (any message fails), and what they compute is compared
// with a CPU runtime's run of the same samples.
#include <gtest/gtest.h>
#include <loom/loom.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "tests/support/engine_host.h"
#include "tests/support/engine_import.h"
#include "tests/support/run_loom.h"
#include "tests/support/vulkan_required.h"

namespace {

using loom::testing::Engine;
using loom::testing::EngineHost;

#define ASSERT_LOOM(call) \
  ASSERT_EQ((call), LOOM_SUCCESS) << #call << ": " << loom_last_error_message()
#define EXPECT_LOOM(call) \
  EXPECT_EQ((call), LOOM_SUCCESS) << #call << ": " << loom_last_error_message()

constexpr const char* kSamples[] = {"cloth", "heat", "julia"};
constexpr int kFrames = 4;

// Per process: ctest runs this suite's tests in parallel processes, each compiling its own.
std::string modules_dir() {
  return ::testing::TempDir() + "/loom_unity_vulkan1_0_modules_" + std::to_string(getpid());
}
std::string module_path(const std::string& kind, const std::string& sample) {
  return modules_dir() + "/" + kind + "/" + sample + ".loommod";
}

// What a buffer or texture of a module holds after the run, by name.
struct Contents {
  std::string name;
  LoomDataType dtype = LOOM_DTYPE_F32;  // textures: F32 or U8 (RGBA8)
  std::vector<uint8_t> bytes;
};

uint64_t texture_bytes(const LoomTextureInfo& t) {
  uint64_t texels = uint64_t{t.width} * t.height * std::max(t.depth, 1u);
  switch (t.format) {
    case LOOM_TEXTURE_R32F: return texels * 4;
    case LOOM_TEXTURE_RG32F: return texels * 8;
    case LOOM_TEXTURE_RGBA32F: return texels * 16;
    case LOOM_TEXTURE_RGBA8: return texels * 4;
  }
  return 0;
}

// The module's pipelines in metadata order (init first, then step, in the samples).
std::vector<LoomPipeline> pipelines_of(LoomModule m) {
  LoomModuleInfo info{sizeof(LoomModuleInfo)};
  EXPECT_LOOM(loom_module_get_info(m, &info));
  std::vector<LoomPipeline> out;
  for (uint32_t p = 0; p < info.pipeline_count; ++p) {
    const char* name = nullptr;
    EXPECT_LOOM(loom_module_get_item_name(m, LOOM_ITEM_PIPELINE, p, &name));
    LoomPipeline pipeline = nullptr;
    EXPECT_LOOM(loom_module_get_pipeline(m, name, &pipeline));
    if (pipeline) out.push_back(pipeline);
  }
  return out;
}

// Every field and texture of a module: name, and the array or texture handle.
struct Resource {
  std::string name;
  LoomArray array = nullptr;
  LoomTexture texture = nullptr;
  uint64_t bytes = 0;
  LoomDataType dtype = LOOM_DTYPE_F32;
};

std::vector<Resource> resources_of(LoomModule m) {
  LoomModuleInfo info{sizeof(LoomModuleInfo)};
  EXPECT_LOOM(loom_module_get_info(m, &info));
  std::vector<Resource> out;
  for (uint32_t i = 0; i < info.field_count; ++i) {
    const char* name = nullptr;
    EXPECT_LOOM(loom_module_get_item_name(m, LOOM_ITEM_FIELD, i, &name));
    Resource r;
    r.name = name ? name : "?";
    EXPECT_LOOM(loom_module_get_array(m, r.name.c_str(), &r.array));
    LoomArrayInfo a{sizeof(LoomArrayInfo)};
    EXPECT_LOOM(loom_array_get_info(r.array, &a));
    r.bytes = a.bytes;
    r.dtype = a.dtype;
    out.push_back(r);
  }
  for (uint32_t i = 0; i < info.texture_count; ++i) {
    const char* name = nullptr;
    EXPECT_LOOM(loom_module_get_item_name(m, LOOM_ITEM_TEXTURE, i, &name));
    Resource r;
    r.name = name ? name : "?";
    EXPECT_LOOM(loom_module_get_texture(m, r.name.c_str(), &r.texture));
    LoomTextureInfo t{sizeof(LoomTextureInfo)};
    EXPECT_LOOM(loom_texture_get_info(r.texture, &t));
    r.bytes = texture_bytes(t);
    r.dtype = t.format == LOOM_TEXTURE_RGBA8 ? LOOM_DTYPE_U8 : LOOM_DTYPE_F32;
    out.push_back(r);
  }
  return out;
}

// The sample on a CPU runtime: init, then step once per frame.
std::vector<Contents> run_on_cpu(const std::string& sample) {
  LoomRuntimeCreateInfo ci{};
  ci.struct_size = sizeof ci;
  ci.arch = LOOM_ARCH_CPU;
  LoomRuntime cpu = nullptr;
  EXPECT_LOOM(loom_runtime_create(&ci, &cpu));
  LoomModule m = nullptr;
  EXPECT_LOOM(loom_module_load(cpu, module_path("cpu", sample).c_str(), &m));
  std::vector<Contents> out;
  if (!m) return out;
  std::vector<LoomPipeline> pipelines = pipelines_of(m);
  for (int frame = 0; frame < kFrames; ++frame)
    for (size_t p = frame == 0 ? 0 : 1; p < pipelines.size(); ++p)
      EXPECT_LOOM(loom_pipeline_launch(pipelines[p]));
  for (const Resource& r : resources_of(m)) {
    Contents c{r.name, r.dtype, std::vector<uint8_t>(r.bytes)};
    LoomResult read = r.array ? loom_array_read(r.array, c.bytes.data(), r.bytes)
                              : loom_texture_read(r.texture, c.bytes.data(), r.bytes);
    EXPECT_EQ(read, LOOM_SUCCESS) << r.name << ": " << loom_last_error_message();
    out.push_back(std::move(c));
  }
  EXPECT_LOOM(loom_module_destroy(m));
  EXPECT_LOOM(loom_runtime_destroy(cpu));
  return out;
}

// The GPU's float math differs from the CPU's in the last bits (fused multiply-adds,
// transcendental precision); a few steps of each sample stay within this.
void expect_close(const Contents& vulkan, const Contents& cpu) {
  SCOPED_TRACE(cpu.name);
  ASSERT_EQ(vulkan.bytes.size(), cpu.bytes.size());
  if (cpu.dtype == LOOM_DTYPE_F32) {
    size_t n = cpu.bytes.size() / 4;
    const auto* a = reinterpret_cast<const float*>(vulkan.bytes.data());
    const auto* b = reinterpret_cast<const float*>(cpu.bytes.data());
    double worst = 0;
    size_t off = 0;
    for (size_t i = 0; i < n; ++i) {
      double d = std::fabs(double{a[i]} - double{b[i]}) / std::max(1.0, std::fabs(double{b[i]}));
      if (!(d <= 1e-3)) ++off;
      worst = std::max(worst, std::isnan(d) ? 1e30 : d);
    }
    EXPECT_EQ(off, 0u) << off << " of " << n << " values differ; worst relative difference "
                       << worst;
    std::printf("%s: %zu f32 values, worst relative difference from the CPU %.3g\n",
                cpu.name.c_str(), n, worst);
    return;
  }
  // RGBA8: colours from iteration counts; a pixel on the set's boundary may escape one
  // iteration earlier in one float implementation than in the other.
  size_t n = cpu.bytes.size(), off = 0;
  for (size_t i = 0; i < n; ++i) off += std::abs(int{vulkan.bytes[i]} - int{cpu.bytes[i]}) > 1;
  EXPECT_LE(off, n / 100) << off << " of " << n << " channels differ by more than 1";
  std::printf("%s: %zu u8 channels, %zu differ from the CPU by more than 1\n", cpu.name.c_str(), n,
              off);
}

class UnityVulkan1_0 : public ::testing::Test {
 protected:
  // Modules compiled as a Unity project's build step would: Vulkan 1.0 and the CPU, plus the
  // default (Vulkan 1.1) to see it refused.
  static void SetUpTestSuite() {
    std::filesystem::remove_all(modules_dir());
    for (const char* sample : kSamples) {
      std::string doc = std::string(LOOM_SOURCE_DIR) + "/assets/graphs/" + sample + ".loom.json";
      for (const auto& [kind, options] :
           {std::pair<std::string, std::string>{"vulkan1_0", "--arch vulkan --vulkan-version 1.0"},
            {"vulkan1_1", "--arch vulkan"},
            {"cpu", "--arch cpu"}}) {
        loom::test::CliRun r = loom::test::run_loom("compile '" + doc + "' " + options + " -o '" +
                                                    module_path(kind, sample) + "'");
        compile_log() += r.out;
        if (r.code != 0) compile_failed() = true;
      }
    }
  }
  static void TearDownTestSuite() { std::filesystem::remove_all(modules_dir()); }
  static std::string& compile_log() {
    static std::string log;
    return log;
  }
  static bool& compile_failed() {
    static bool failed = false;
    return failed;
  }

  void SetUp() override {
    ASSERT_FALSE(compile_failed()) << compile_log();
    LOOM_REQUIRE_VULKAN_OR_SKIP();
    host_.create();
    VkPipelineCacheCreateInfo pci{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
    ASSERT_EQ(vkCreatePipelineCache(host_.device(), &pci, nullptr, &cache_), VK_SUCCESS);
    // UnityVulkanInstance, field by field; the API version is the one Unity's instance asked
    // for (a plugin learns it in its InterceptVulkanInitialization hook).
    LoomVulkanDeviceImport d = loom::testing::engine_import(host_);
    d.pipeline_cache = cache_;
    d.get_instance_proc_addr = vkGetInstanceProcAddr;
    d.log = &UnityVulkan1_0::log;
    d.log_user = &logged_;
    ASSERT_LOOM(loom_runtime_import_vulkan(&d, &runtime_));
  }
  void TearDown() override {
    if (runtime_) {
      EXPECT_LOOM(loom_runtime_destroy(runtime_));
    }
    if (cache_) vkDestroyPipelineCache(host_.device(), cache_, nullptr);
    for (const std::string& m : host_.take_messages()) ADD_FAILURE() << "Vulkan validation: " << m;
    for (const std::string& m : logged_) ADD_FAILURE() << "Loom logged: " << m;
  }

  static void log(void* user, LoomLogLevel, const char* message) {
    static_cast<std::vector<std::string>*>(user)->push_back(message);
  }

  EngineHost host_{Engine::Unity10};
  VkPipelineCache cache_ = VK_NULL_HANDLE;
  LoomRuntime runtime_ = nullptr;
  std::vector<std::string> logged_;
};

TEST_F(UnityVulkan1_0, SampleModulesRunInTheEnginesFramesAsOnTheCpu) {
  ASSERT_EQ(host_.api_version(), static_cast<uint32_t>(VK_API_VERSION_1_0));
  for (const char* sample : kSamples) {
    SCOPED_TRACE(sample);
    LoomModule m = nullptr;
    ASSERT_LOOM(loom_module_load(runtime_, module_path("vulkan1_0", sample).c_str(), &m));
    std::vector<LoomPipeline> pipelines = pipelines_of(m);
    ASSERT_GE(pipelines.size(), 2u);
    std::vector<Resource> resources = resources_of(m);
    ASSERT_FALSE(resources.empty());
    std::vector<LoomReadback> readbacks(resources.size(), nullptr);
    for (int frame = 0; frame < kFrames; ++frame) {
      ASSERT_LOOM(loom_runtime_begin_frame(runtime_));
      LoomResult result = LOOM_SUCCESS;
      host_.frame([&](VkCommandBuffer cb) {
        for (size_t p = frame == 0 ? 0 : 1; p < pipelines.size(); ++p)
          if (result == LOOM_SUCCESS) result = loom_pipeline_launch_into(pipelines[p], cb);
        if (frame + 1 < kFrames) return;
        // The last frame also reads everything back, recorded after the launches.
        for (size_t i = 0; i < resources.size() && result == LOOM_SUCCESS; ++i)
          result = resources[i].array ? loom_array_read_into(resources[i].array, cb, nullptr,
                                                             nullptr, &readbacks[i])
                                      : loom_texture_read_into(resources[i].texture, cb, nullptr,
                                                               nullptr, &readbacks[i]);
      });
      ASSERT_EQ(result, LOOM_SUCCESS) << loom_last_error_message();
    }
    // The engine waited for its last frame; the readbacks land within frames_in_flight
    // begin_frame calls.
    for (int i = 0; i < 2; ++i) ASSERT_LOOM(loom_runtime_begin_frame(runtime_));
    std::vector<Contents> cpu = run_on_cpu(sample);
    ASSERT_EQ(cpu.size(), resources.size());
    // The samples compute something: a run that wrote nothing would compare equal too.
    EXPECT_TRUE(std::any_of(cpu.begin(), cpu.end(), [](const Contents& c) {
      return std::any_of(c.bytes.begin(), c.bytes.end(), [](uint8_t b) { return b != 0; });
    }));
    for (size_t i = 0; i < resources.size(); ++i) {
      Contents vulkan{resources[i].name, resources[i].dtype,
                      std::vector<uint8_t>(resources[i].bytes)};
      ASSERT_LOOM(loom_readback_get(readbacks[i], vulkan.bytes.data(), vulkan.bytes.size()));
      EXPECT_LOOM(loom_readback_destroy(readbacks[i]));
      ASSERT_EQ(cpu[i].name, vulkan.name);
      expect_close(vulkan, cpu[i]);
    }
    ASSERT_LOOM(loom_module_destroy(m));
  }
}

// The default module (SPIR-V 1.3, for Vulkan 1.1) is refused on the 1.0 device at load, naming
// the kernel and both versions; nothing reaches the driver.
TEST_F(UnityVulkan1_0, ModulesForVulkan1_1AreRefusedByName) {
  LoomModule m = nullptr;
  EXPECT_NE(loom_module_load(runtime_, module_path("vulkan1_1", "heat").c_str(), &m), LOOM_SUCCESS);
  EXPECT_EQ(m, nullptr);
  std::string message = loom_last_error_message();
  EXPECT_NE(message.find("kernel '"), std::string::npos) << message;
  EXPECT_NE(message.find("SPIR-V 1.3, newer than Vulkan 1.0"), std::string::npos) << message;
}

}  // namespace
