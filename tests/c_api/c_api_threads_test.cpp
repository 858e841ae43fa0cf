// One runtime used from two threads at once, against loom.h's rule (issue 17): the call that
// breaks it is refused with LOOM_ERROR_RUNTIME_BUSY naming both calls and doing nothing,
// never a data race. Callbacks Loom makes may call Loom on other runtimes, not on theirs.
// tools/tsan_threads_test.sh runs this file under ThreadSanitizer.
#include <gtest/gtest.h>
#include <loom/loom.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tests/c_api/loom_result_checks.h"
#include "tests/support/vulkan_required.h"

namespace {

std::string module_path(LoomArch arch, const std::string& name) {
  return std::string(LOOM_TEST_MODULES) + (arch == LOOM_ARCH_CPU ? "/cpu/" : "/vulkan/") + name +
         ".loommod";
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// An engine job system that can hold a launch inside its parallel_for: the call that runs it
// stays inside the runtime until the test lets it go.
struct HeldJobs {
  std::mutex mutex;
  std::condition_variable changed;
  bool hold = false, inside = false;
  std::function<void()> while_inside;  // run once, on the launching thread, inside the callback

  static void parallel_for(void* user, uint32_t count, LoomJobFn job, void* context) {
    auto* self = static_cast<HeldJobs*>(user);
    {
      std::unique_lock<std::mutex> lock(self->mutex);
      if (self->hold) {
        self->inside = true;
        self->changed.notify_all();
        self->changed.wait(lock, [&] { return !self->hold; });
        self->inside = false;
      }
    }
    if (std::function<void()> once = std::move(self->while_inside)) {
      self->while_inside = nullptr;
      once();
    }
    for (uint32_t i = 0; i < count; ++i) job(context, i);
  }
  void wait_inside() {
    std::unique_lock<std::mutex> lock(mutex);
    changed.wait(lock, [&] { return inside; });
  }
  void let_go() {
    std::lock_guard<std::mutex> lock(mutex);
    hold = false;
    changed.notify_all();
  }
};

LoomRuntime cpu_runtime(HeldJobs* jobs) {
  LoomRuntimeCreateInfo info{};
  info.struct_size = sizeof info;
  info.arch = LOOM_ARCH_CPU;
  if (jobs) {
    info.parallel_for = HeldJobs::parallel_for;
    info.parallel_for_user = jobs;
    info.parallel_for_workers = 1;
  }
  LoomRuntime r = nullptr;
  EXPECT_LOOM(loom_runtime_create(&info, &r));
  return r;
}

TEST(Threads, ASecondThreadIsRefusedNamingBothCallsAndNothingIsDone) {
  HeldJobs jobs;
  LoomRuntime r = cpu_runtime(&jobs);
  ASSERT_NE(r, nullptr);
  LoomModule m = nullptr;
  ASSERT_LOOM(loom_module_load(r, module_path(LOOM_ARCH_CPU, "heat").c_str(), &m));
  LoomPipeline init = nullptr, step = nullptr;
  ASSERT_LOOM(loom_module_get_pipeline(m, "init", &init));
  ASSERT_LOOM(loom_module_get_pipeline(m, "step", &step));
  LoomArray temperature = nullptr;
  ASSERT_LOOM(loom_module_get_array(m, "temperature", &temperature));
  ASSERT_LOOM(loom_pipeline_launch(init));

  // Another thread launches `step`; the engine's job system keeps it inside the runtime.
  jobs.hold = true;
  LoomResult launched = LOOM_ERROR_DEVICE;
  std::thread other([&] { launched = loom_pipeline_launch(step); });
  jobs.wait_inside();

  LoomArrayInfo info{sizeof(LoomArrayInfo)};
  info.bytes = 12345;  // not written by a refused call
  EXPECT_EQ(loom_array_get_info(temperature, &info), LOOM_ERROR_RUNTIME_BUSY);
  EXPECT_EQ(loom_last_error(), LOOM_ERROR_RUNTIME_BUSY);
  std::string message = loom_last_error_message();
  EXPECT_TRUE(contains(message, "loom_array_get_info: the runtime is in use by another thread"))
      << message;
  EXPECT_TRUE(contains(message, "inside loom_pipeline_launch")) << message;
  EXPECT_TRUE(contains(message, "one thread at a time")) << message;
  EXPECT_EQ(info.bytes, 12345u);
  // Every kind of handle of the runtime, and the runtime: refused, nothing destroyed.
  EXPECT_EQ(loom_pipeline_launch(step), LOOM_ERROR_RUNTIME_BUSY);
  EXPECT_TRUE(contains(loom_last_error_message(), "loom_pipeline_launch:"));
  LoomKernel kernel = nullptr;
  EXPECT_EQ(loom_module_get_kernel(m, "diffuse", 0, nullptr, &kernel), LOOM_ERROR_RUNTIME_BUSY);
  EXPECT_EQ(kernel, nullptr);
  EXPECT_EQ(loom_module_destroy(m), LOOM_ERROR_RUNTIME_BUSY);
  EXPECT_EQ(loom_runtime_destroy(r), LOOM_ERROR_RUNTIME_BUSY);
  EXPECT_TRUE(contains(loom_last_error_message(), "loom_runtime_destroy:"));
  LoomRuntimeInfo runtime_info{sizeof(LoomRuntimeInfo)};
  EXPECT_EQ(loom_runtime_get_info(r, &runtime_info), LOOM_ERROR_RUNTIME_BUSY);
  EXPECT_STREQ(loom_result_name(LOOM_ERROR_RUNTIME_BUSY), "LOOM_ERROR_RUNTIME_BUSY");

  // Other runtimes are this thread's to use meanwhile.
  LoomRuntime mine = cpu_runtime(nullptr);
  ASSERT_NE(mine, nullptr);
  EXPECT_LOOM(loom_runtime_get_info(mine, &runtime_info));
  EXPECT_LOOM(loom_runtime_destroy(mine));

  jobs.let_go();
  other.join();
  EXPECT_EQ(launched, LOOM_SUCCESS);

  // The call has returned: the runtime is this thread's now, and everything is still there.
  EXPECT_LOOM(loom_array_get_info(temperature, &info));
  EXPECT_EQ(info.bytes, 256u * 256u * 4u);
  EXPECT_LOOM(loom_pipeline_launch(step));
  EXPECT_LOOM(loom_module_destroy(m));
  EXPECT_LOOM(loom_runtime_destroy(r));
}

TEST(Threads, ACallbackMayCallOtherRuntimesButNotItsOwn) {
  HeldJobs jobs;
  LoomRuntime r = cpu_runtime(&jobs);
  LoomRuntime other = cpu_runtime(nullptr);
  ASSERT_TRUE(r && other);
  LoomModule m = nullptr;
  ASSERT_LOOM(loom_module_load(r, module_path(LOOM_ARCH_CPU, "heat").c_str(), &m));
  LoomPipeline init = nullptr;
  ASSERT_LOOM(loom_module_get_pipeline(m, "init", &init));
  LoomResult own = LOOM_SUCCESS, others = LOOM_ERROR_DEVICE;
  std::string message;
  std::thread::id callback_thread;
  jobs.while_inside = [&] {
    callback_thread = std::this_thread::get_id();
    LoomRuntimeInfo info{sizeof(LoomRuntimeInfo)};
    own = loom_runtime_get_info(r, &info);
    message = loom_last_error_message();
    others = loom_runtime_get_info(other, &info);
  };
  ASSERT_LOOM(loom_pipeline_launch(init));
  EXPECT_EQ(callback_thread, std::this_thread::get_id());  // called on the launching thread
  EXPECT_EQ(own, LOOM_ERROR_RUNTIME_BUSY);
  EXPECT_TRUE(contains(message,
                       "loom_runtime_get_info: called from the parallel_for callback "
                       "of loom_pipeline_launch on the same runtime"))
      << message;
  EXPECT_EQ(others, LOOM_SUCCESS);
  // Left as the runtime was: this thread uses it again.
  LoomRuntimeInfo info{sizeof(LoomRuntimeInfo)};
  EXPECT_LOOM(loom_runtime_get_info(r, &info));
  EXPECT_LOOM(loom_module_destroy(m));
  EXPECT_LOOM(loom_runtime_destroy(r));
  EXPECT_LOOM(loom_runtime_destroy(other));
}

// Two threads hammer one runtime with launches, reads, lookups and reloads: every call either
// runs alone or is refused, nothing crashes, and the launches that ran are exactly the ones
// that succeeded (the state is what as many launches on one thread give).
class ThreadsHammer : public testing::TestWithParam<LoomArch> {
 protected:
  LoomRuntime make() {
    LoomRuntimeCreateInfo info{};
    info.struct_size = sizeof info;
    info.arch = GetParam();
    info.cpu_threads = 2;
    LoomRuntime r = nullptr;
    if (loom_runtime_create(&info, &r) != LOOM_SUCCESS) return nullptr;
    return r;
  }
};

TEST_P(ThreadsHammer, EveryCallRunsAloneOrIsRefused) {
  LoomRuntime r = make();
  if (!r) {
    if (GetParam() == LOOM_ARCH_VULKAN) LOOM_SKIP_FOR_NO_VULKAN(loom_last_error_message());
    FAIL() << loom_last_error_message();
  }
  std::string path = module_path(GetParam(), "heat");
  LoomModule m = nullptr;
  ASSERT_LOOM(loom_module_load(r, path.c_str(), &m));
  LoomPipeline init = nullptr, step = nullptr;
  ASSERT_LOOM(loom_module_get_pipeline(m, "init", &init));
  ASSERT_LOOM(loom_module_get_pipeline(m, "step", &step));
  LoomArray temperature = nullptr;
  ASSERT_LOOM(loom_module_get_array(m, "temperature", &temperature));
  ASSERT_LOOM(loom_pipeline_launch(init));

  struct Tally {
    int calls = 0, busy = 0, steps = 0;
    std::vector<std::string> failures;
  };
  std::vector<Tally> tallies(2);
  std::atomic<int> ready{0}, busy{0};
  auto hammer = [&](Tally& t, int seed) {
    ++ready;
    while (ready.load() < 2) std::this_thread::yield();
    std::vector<float> data(256 * 256);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    // Until each thread ran 100 calls and the threads met (a refused call returns at once,
    // so calls are counted that ran).
    for (int i = 0; (t.calls - t.busy < 100 || busy.load() == 0) &&
                    std::chrono::steady_clock::now() < deadline;
         ++i) {
      const char* what = "";
      LoomResult res = LOOM_SUCCESS;
      switch ((i + seed) % 6) {
        case 0:
          what = "loom_pipeline_launch";
          res = loom_pipeline_launch(step);
          if (res == LOOM_SUCCESS) ++t.steps;
          break;
        case 1: {
          what = "loom_array_get_info";
          LoomArrayInfo info{sizeof(LoomArrayInfo)};
          res = loom_array_get_info(temperature, &info);
          break;
        }
        case 2:
          what = "loom_array_read";
          res = loom_array_read(temperature, data.data(), data.size() * 4);
          break;
        case 3: {
          what = "loom_module_get_pipeline";
          LoomPipeline p = nullptr;
          res = loom_module_get_pipeline(m, i % 2 ? "init" : "step", &p);
          break;
        }
        case 4: {
          what = "loom_module_reload_if_changed";
          LoomReloadStatus status;
          res = loom_module_reload_if_changed(m, &status);
          break;
        }
        case 5: {
          what = "loom_module_get_info";
          LoomModuleInfo info{sizeof(LoomModuleInfo)};
          res = loom_module_get_info(m, &info);
          break;
        }
      }
      ++t.calls;
      if (res == LOOM_ERROR_RUNTIME_BUSY) {
        ++t.busy;
        ++busy;
        std::string message = loom_last_error_message();
        if (!contains(message, std::string(what) + ": the runtime is in use by another thread"))
          t.failures.push_back(message);
      } else if (res != LOOM_SUCCESS) {
        t.failures.push_back(std::string(what) + ": " + loom_result_name(res) + ": " +
                             loom_last_error_message());
      }
    }
  };
  std::thread a(hammer, std::ref(tallies[0]), 0), b(hammer, std::ref(tallies[1]), 3);
  a.join();
  b.join();
  for (const Tally& t : tallies) {
    std::printf("a thread: %d calls, %d of them refused; %d steps\n", t.calls, t.busy, t.steps);
    EXPECT_GE(t.calls - t.busy, 100);
    EXPECT_TRUE(t.failures.empty())
        << t.failures.size()
        << " failures, the first: " << (t.failures.empty() ? "" : t.failures[0]);
  }
  EXPECT_GT(busy.load(), 0);  // the threads did meet

  // As many steps on one thread give the same temperatures.
  LoomModule reference = nullptr;
  ASSERT_LOOM(loom_module_load(r, path.c_str(), &reference));
  LoomPipeline ref_init = nullptr, ref_step = nullptr;
  ASSERT_LOOM(loom_module_get_pipeline(reference, "init", &ref_init));
  ASSERT_LOOM(loom_module_get_pipeline(reference, "step", &ref_step));
  ASSERT_LOOM(loom_pipeline_launch(ref_init));
  for (int i = 0; i < tallies[0].steps + tallies[1].steps; ++i)
    ASSERT_LOOM(loom_pipeline_launch(ref_step));
  LoomArray ref_temperature = nullptr;
  ASSERT_LOOM(loom_module_get_array(reference, "temperature", &ref_temperature));
  std::vector<float> got(256 * 256), want(got.size());
  ASSERT_LOOM(loom_array_read(temperature, got.data(), got.size() * 4));
  ASSERT_LOOM(loom_array_read(ref_temperature, want.data(), want.size() * 4));
  EXPECT_EQ(got, want);
  EXPECT_LOOM(loom_module_destroy(reference));
  EXPECT_LOOM(loom_module_destroy(m));
  EXPECT_LOOM(loom_runtime_destroy(r));
}

INSTANTIATE_TEST_SUITE_P(Arch, ThreadsHammer, testing::Values(LOOM_ARCH_CPU, LOOM_ARCH_VULKAN),
                         [](const testing::TestParamInfo<LoomArch>& i) {
                           return i.param == LOOM_ARCH_CPU ? "cpu" : "vulkan";
                         });

}  // namespace
