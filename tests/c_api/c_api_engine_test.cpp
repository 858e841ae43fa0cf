// loom.h as engines use it: devices made the way Unity, Unreal and Godot 4 make theirs
// (tests/support/engine_host.h), imported with only what each engine exposes (handles, the
// API version, its vkGetInstanceProcAddr where it has one; no create info, no features), the
// sample modules run through loom_pipeline_launch_into in the engine's frames under the
// validation layer; versioned info structs; the log callback; device memory per module; and
// an engine's job system running CPU kernels.
#include <gtest/gtest.h>
#include <loom/loom.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "tests/c_api/loom_result_checks.h"
#include "tests/support/engine_host.h"
#include "tests/support/engine_import.h"
#include "tests/support/host_vulkan_device.h"
#include "tests/support/vulkan_required.h"

namespace {

using loom::testing::Engine;
using loom::testing::engine_name;
using loom::testing::EngineHost;

std::string module_path(const char* arch, const std::string& name) {
  return std::string(LOOM_TEST_MODULES) + "/" + arch + "/" + name + ".loommod";
}

struct Logged {
  std::vector<std::pair<LoomLogLevel, std::string>> messages;
  static void log(void* user, LoomLogLevel level, const char* message) {
    static_cast<Logged*>(user)->messages.emplace_back(level, message);
  }
};

// What each engine hands a plugin: never its device's create info or enabled features.
LoomVulkanDeviceImport what_the_engine_exposes(const EngineHost& host, Engine engine) {
  LoomVulkanDeviceImport d = loom::testing::engine_import(host);
  // Unity's UnityVulkanInstance::getInstanceProcAddr, Unreal's RHIGetVkInstanceProcAddr; Godot
  // gives none.
  if (engine != Engine::Godot) d.get_instance_proc_addr = vkGetInstanceProcAddr;
  return d;
}

class CApiEngine : public ::testing::TestWithParam<Engine> {
 protected:
  void SetUp() override {
    LOOM_REQUIRE_VULKAN_OR_SKIP();
    host_.create();
    LoomVulkanDeviceImport d = what_the_engine_exposes(host_, GetParam());
    d.log = &Logged::log;
    d.log_user = &logged_;
    ASSERT_LOOM(loom_runtime_import_vulkan(&d, &runtime_));
  }
  void TearDown() override {
    if (runtime_) EXPECT_LOOM(loom_runtime_destroy(runtime_));
    for (const std::string& m : host_.take_messages()) ADD_FAILURE() << "Vulkan validation: " << m;
    for (const auto& [level, m] : logged_.messages) ADD_FAILURE() << "Loom logged: " << m;
  }

  EngineHost host_{GetParam()};
  LoomRuntime runtime_ = nullptr;
  Logged logged_;
};

// Every pipeline of the samples, recorded into the engine's command buffers over frames in
// flight, with only handles and an API version declared.
TEST_P(CApiEngine, SampleModulesRunInTheEnginesFrames) {
  for (const char* sample : {"cloth", "heat", "julia"}) {
    SCOPED_TRACE(sample);
    LoomModule m = nullptr;
    ASSERT_LOOM(loom_module_load(runtime_, module_path("vulkan", sample).c_str(), &m));
    LoomModuleInfo info{sizeof(LoomModuleInfo)};
    ASSERT_LOOM(loom_module_get_info(m, &info));
    ASSERT_GT(info.pipeline_count, 0u);
    std::vector<LoomPipeline> pipelines;
    for (uint32_t p = 0; p < info.pipeline_count; ++p) {
      const char* name = nullptr;
      ASSERT_LOOM(loom_module_get_item_name(m, LOOM_ITEM_PIPELINE, p, &name));
      LoomPipeline pipeline = nullptr;
      ASSERT_LOOM(loom_module_get_pipeline(m, name, &pipeline));
      pipelines.push_back(pipeline);
    }
    for (int frame = 0; frame < 4; ++frame) {
      ASSERT_LOOM(loom_runtime_begin_frame(runtime_));
      LoomResult launched = LOOM_SUCCESS;
      host_.frame([&](VkCommandBuffer cb) {
        for (LoomPipeline p : pipelines)
          if (launched == LOOM_SUCCESS) launched = loom_pipeline_launch_into(p, cb);
        if (launched == LOOM_SUCCESS) launched = loom_runtime_barrier_for_graphics(runtime_, cb);
      });
      ASSERT_EQ(launched, LOOM_SUCCESS) << loom_last_error_message();
    }
    // Device memory Loom holds for the module: a few MiB, not hundreds.
    uint32_t count = 0;
    ASSERT_LOOM(loom_runtime_get_memory_usage(runtime_, &count, nullptr));
    std::vector<LoomMemoryUsage> usage(count, LoomMemoryUsage{sizeof(LoomMemoryUsage)});
    ASSERT_LOOM(loom_runtime_get_memory_usage(runtime_, &count, usage.data()));
    uint64_t reserved = 0, used = 0;
    for (const LoomMemoryUsage& u : usage) {
      EXPECT_LE(u.used, u.reserved);
      reserved += u.reserved;
      used += u.used;
    }
    EXPECT_GT(used, 0u);
    // At most 4 MiB, or twice what is in use for a module that holds more.
    EXPECT_LE(reserved, std::max<uint64_t>(4u << 20, 2 * used))
        << sample << ": " << reserved << " bytes reserved for " << used << " in use";
    std::printf("%s on %s: %llu bytes reserved, %llu used, %u memory types\n", sample,
                engine_name(GetParam()), static_cast<unsigned long long>(reserved),
                static_cast<unsigned long long>(used), count);
    ASSERT_LOOM(loom_module_destroy(m));
  }
}

INSTANTIATE_TEST_SUITE_P(Engines, CApiEngine,
                         ::testing::Values(Engine::Unity, Engine::Unreal, Engine::Godot),
                         [](const ::testing::TestParamInfo<Engine>& info) {
                           return std::string(engine_name(info.param));
                         });

// An engine whose vkGetInstanceProcAddr resolves device functions through a layer of its own:
// Loom says so through the log callback (it calls the loader's functions) and runs.
VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL layered_submit_of(VkDevice device, const char* name) {
  if (std::strcmp(name, "vkQueueSubmit") == 0)
    return reinterpret_cast<PFN_vkVoidFunction>(&layered_submit_of);  // not the loader's
  return vkGetDeviceProcAddr(device, name);
}
VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL layered_gipa(VkInstance instance, const char* name) {
  if (std::strcmp(name, "vkGetDeviceProcAddr") == 0)
    return reinterpret_cast<PFN_vkVoidFunction>(&layered_submit_of);
  return vkGetInstanceProcAddr(instance, name);
}

TEST(CApiImport, LogsWhenTheEnginesLoaderDiffersFromLooms) {
  LOOM_REQUIRE_VULKAN_OR_SKIP();
  EngineHost host(Engine::Unity);
  host.create();
  LoomVulkanDeviceImport d = what_the_engine_exposes(host, Engine::Unity);
  d.get_instance_proc_addr = &layered_gipa;
  Logged logged;
  d.log = &Logged::log;
  d.log_user = &logged;
  LoomRuntime r = nullptr;
  ASSERT_LOOM(loom_runtime_import_vulkan(&d, &r));
  ASSERT_EQ(logged.messages.size(), 1u);
  EXPECT_EQ(logged.messages[0].first, LOOM_LOG_WARNING);
  EXPECT_NE(logged.messages[0].second.find("resolves vkQueueSubmit differently"), std::string::npos)
      << logged.messages[0].second;
  EXPECT_LOOM(loom_runtime_destroy(r));
  EXPECT_TRUE(host.take_messages().empty());
}

// Info structs say their size: 0 or a size short of the struct is refused, naming the field.
TEST(CApiImport, InfoStructsMustSayTheirSize) {
  LoomRuntimeCreateInfo ci{};
  ci.arch = LOOM_ARCH_CPU;
  LoomRuntime r = nullptr;
  EXPECT_EQ(loom_runtime_create(&ci, &r), LOOM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(loom_last_error_message()).find("struct_size is 0"), std::string::npos)
      << loom_last_error_message();
  ci.struct_size = sizeof ci - 8;
  EXPECT_EQ(loom_runtime_create(&ci, &r), LOOM_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(r, nullptr);
  LoomVulkanDeviceImport d{};
  d.struct_size = 4;
  EXPECT_EQ(loom_runtime_import_vulkan(&d, &r), LOOM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(loom_last_error_message()).find("loom_runtime_import_vulkan: device"),
            std::string::npos)
      << loom_last_error_message();
  // An extension count without names is a null pointer, not a read of one.
  d = LoomVulkanDeviceImport{};
  d.struct_size = sizeof d;
  d.enabled_extension_count = 2;
  EXPECT_EQ(loom_runtime_import_vulkan(&d, &r), LOOM_ERROR_NULL_HANDLE);
  EXPECT_NE(std::string(loom_last_error_message()).find("enabled_extensions is null"),
            std::string::npos)
      << loom_last_error_message();
}

// A features chain declares what the engine enabled, without its create info: timeline
// semaphores declared are used (a timeline value signals); undeclared, the same value is
// refused, though the device has them enabled.
TEST(CApiImport, DeclaredFeaturesAreUsedAndOnlyThose) {
  LOOM_REQUIRE_VULKAN_OR_SKIP();
  loom::testing::HostDevice host;
  if (!host.create()) GTEST_SKIP() << "no Vulkan 1.2 device with a graphics and compute queue";
  VkSemaphoreTypeCreateInfo tci{VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
  tci.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
  VkSemaphoreCreateInfo sci{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, &tci};
  VkSemaphore timeline = VK_NULL_HANDLE;
  ASSERT_EQ(vkCreateSemaphore(host.device, &sci, nullptr, &timeline), VK_SUCCESS);
  for (bool declared : {true, false}) {
    LoomVulkanDeviceImport d = host.import_info();
    d.create_info = nullptr;
    d.enabled_features = declared ? &host.features : nullptr;
    d.queue_mode = LOOM_QUEUE_SHARED;  // loom_runtime_submit signals the host's semaphore
    LoomRuntime r = nullptr;
    ASSERT_LOOM(loom_runtime_import_vulkan(&d, &r));
    LoomSemaphore signal{timeline, declared ? 1u : 2u};
    LoomResult result = loom_runtime_submit(r, 0, nullptr, 1, &signal);
    if (declared) {
      EXPECT_EQ(result, LOOM_SUCCESS) << loom_last_error_message();
    } else {
      EXPECT_NE(result, LOOM_SUCCESS);
      EXPECT_NE(std::string(loom_last_error_message()).find("timeline semaphores are not enabled"),
                std::string::npos)
          << loom_last_error_message();
    }
    EXPECT_LOOM(loom_runtime_wait(r));
    EXPECT_LOOM(loom_runtime_destroy(r));
  }
  vkDestroySemaphore(host.device, timeline, nullptr);
}

// Pipeline caches: Loom's data goes back to the engine and seeds a later runtime; data of
// another driver (here, garbage) is ignored with a warning; an engine's own VkPipelineCache is
// used and left alive.
TEST(CApiImport, PipelineCachesComeFromTheEngineOrGoBackToIt) {
  LOOM_REQUIRE_VULKAN_OR_SKIP();
  EngineHost host(Engine::Unity);
  host.create();
  std::string heat = module_path("vulkan", "heat");
  auto run = [&](LoomVulkanDeviceImport d, Logged* logged) {
    d.log = &Logged::log;
    d.log_user = logged;
    LoomRuntime r = nullptr;
    EXPECT_LOOM(loom_runtime_import_vulkan(&d, &r));
    LoomModule m = nullptr;
    EXPECT_LOOM(loom_module_load(r, heat.c_str(), &m));
    size_t size = 0;
    EXPECT_LOOM(loom_runtime_get_pipeline_cache_data(r, &size, nullptr));
    std::vector<uint8_t> data(size);
    if (size > 0) {
      size_t short_size = size - 1;
      EXPECT_EQ(loom_runtime_get_pipeline_cache_data(r, &short_size, data.data()),
                LOOM_ERROR_INVALID_ARGUMENT);
    }
    EXPECT_LOOM(loom_runtime_get_pipeline_cache_data(r, &size, data.data()));
    EXPECT_LOOM(loom_module_destroy(m));
    EXPECT_LOOM(loom_runtime_destroy(r));
    return data;
  };
  Logged first_log;
  std::vector<uint8_t> first = run(what_the_engine_exposes(host, Engine::Unity), &first_log);
  ASSERT_GE(first.size(), 32u);  // at least VkPipelineCacheHeaderVersionOne
  uint32_t header[2];
  std::memcpy(header, first.data(), sizeof header);
  EXPECT_EQ(header[1], static_cast<uint32_t>(VK_PIPELINE_CACHE_HEADER_VERSION_ONE));
  EXPECT_TRUE(first_log.messages.empty());

  LoomVulkanDeviceImport seeded = what_the_engine_exposes(host, Engine::Unity);
  seeded.pipeline_cache_data = first.data();
  seeded.pipeline_cache_data_size = first.size();
  Logged seeded_log;
  run(seeded, &seeded_log);
  EXPECT_TRUE(seeded_log.messages.empty()) << seeded_log.messages[0].second;

  std::vector<uint8_t> garbage(64, 0xab);
  LoomVulkanDeviceImport damaged = what_the_engine_exposes(host, Engine::Unity);
  damaged.pipeline_cache_data = garbage.data();
  damaged.pipeline_cache_data_size = garbage.size();
  Logged damaged_log;
  run(damaged, &damaged_log);
  ASSERT_EQ(damaged_log.messages.size(), 1u);
  EXPECT_NE(damaged_log.messages[0].second.find("ignoring the pipeline cache data given (64 bytes"),
            std::string::npos)
      << damaged_log.messages[0].second;

  VkPipelineCacheCreateInfo ci{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
  VkPipelineCache engines = VK_NULL_HANDLE;
  ASSERT_EQ(vkCreatePipelineCache(host.device(), &ci, nullptr, &engines), VK_SUCCESS);
  LoomVulkanDeviceImport shared = what_the_engine_exposes(host, Engine::Unity);
  shared.pipeline_cache = engines;
  Logged shared_log;
  std::vector<uint8_t> through_loom = run(shared, &shared_log);
  size_t size = 0;
  ASSERT_EQ(vkGetPipelineCacheData(host.device(), engines, &size, nullptr), VK_SUCCESS);
  std::vector<uint8_t> direct(size);
  ASSERT_EQ(vkGetPipelineCacheData(host.device(), engines, &size, direct.data()), VK_SUCCESS);
  EXPECT_EQ(through_loom, direct);                          // Loom's cache was the engine's
  vkDestroyPipelineCache(host.device(), engines, nullptr);  // still alive: Loom left it
  EXPECT_TRUE(host.take_messages().empty());
}

// An engine's job system: CPU kernels run on its threads, with the results of Loom's pool.
struct Jobs {
  std::atomic<int> batches{0}, jobs{0};
  static void parallel_for(void* user, uint32_t count, LoomJobFn job, void* context) {
    auto* self = static_cast<Jobs*>(user);
    ++self->batches;
    std::atomic<int64_t> next{static_cast<int64_t>(count) - 1};
    auto worker = [&] {
      for (int64_t i; (i = next--) >= 0;) {
        job(context, static_cast<uint32_t>(i));
        ++self->jobs;
      }
    };
    std::thread a(worker), b(worker);
    a.join();
    b.join();
  }
};

std::vector<float> run_heat(LoomRuntime r) {
  LoomModule m = nullptr;
  EXPECT_LOOM(loom_module_load(r, module_path("cpu", "heat").c_str(), &m));
  LoomPipeline init = nullptr, step = nullptr;
  EXPECT_LOOM(loom_module_get_pipeline(m, "init", &init));
  EXPECT_LOOM(loom_module_get_pipeline(m, "step", &step));
  EXPECT_LOOM(loom_pipeline_launch(init));
  for (int i = 0; i < 5; ++i) EXPECT_LOOM(loom_pipeline_launch(step));
  LoomArray t = nullptr;
  EXPECT_LOOM(loom_module_get_array(m, "temperature", &t));
  LoomArrayInfo info{sizeof(LoomArrayInfo)};
  EXPECT_LOOM(loom_array_get_info(t, &info));
  std::vector<float> out(info.bytes / 4);
  EXPECT_LOOM(loom_array_read(t, out.data(), info.bytes));
  EXPECT_LOOM(loom_module_destroy(m));
  return out;
}

TEST(CApiJobs, CpuKernelsRunOnTheEnginesJobSystem) {
  LoomRuntimeCreateInfo ci{};
  ci.struct_size = sizeof ci;
  ci.arch = LOOM_ARCH_CPU;
  LoomRuntime pool = nullptr;
  ASSERT_LOOM(loom_runtime_create(&ci, &pool));
  std::vector<float> want = run_heat(pool);
  EXPECT_LOOM(loom_runtime_destroy(pool));

  Jobs jobs;
  ci.parallel_for = &Jobs::parallel_for;
  ci.parallel_for_user = &jobs;
  ci.parallel_for_workers = 2;
  LoomRuntime engine = nullptr;
  ASSERT_LOOM(loom_runtime_create(&ci, &engine));
  LoomRuntimeInfo info{sizeof(LoomRuntimeInfo)};
  ASSERT_LOOM(loom_runtime_get_info(engine, &info));
  EXPECT_NE(std::string(info.device_name).find("2 threads"), std::string::npos) << info.device_name;
  std::vector<float> got = run_heat(engine);
  EXPECT_LOOM(loom_runtime_destroy(engine));
  EXPECT_GT(jobs.batches.load(), 0);
  EXPECT_GE(jobs.jobs.load(), jobs.batches.load());
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], want[i]) << i;

  // A job system is for CPU runtimes.
  ci.arch = LOOM_ARCH_VULKAN;
  LoomRuntime wrong = nullptr;
  EXPECT_EQ(loom_runtime_create(&ci, &wrong), LOOM_ERROR_INVALID_ARGUMENT);
}

}  // namespace
