/* Issue 17, one runtime and two threads: loom.h allows one call at a time per runtime. While
 * one thread is inside loom_pipeline_launch (held there by the engine's job system), every
 * call on that runtime from another thread is LOOM_ERROR_RUNTIME_BUSY naming both calls and
 * does nothing; a callback calling its own runtime is refused the same way.
 *   usage: two_threads MODULE_DIR (the C ABI tests' modules) */
#include <pthread.h>

#include "hostile_c.h"

/* The engine's job system: while `hold` is set, a parallel_for waits inside the launch. */
static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static int hold = 0, inside = 0;
static LoomRuntime callback_runtime = NULL; /* called from inside the callback when set */
static LoomResult callback_result = LOOM_SUCCESS;

static void parallel_for(void* user, uint32_t count, LoomJobFn job, void* context) {
  uint32_t i;
  (void)user;
  pthread_mutex_lock(&mutex);
  if (hold) {
    inside = 1;
    pthread_cond_broadcast(&changed);
    while (hold) pthread_cond_wait(&changed, &mutex);
    inside = 0;
  }
  pthread_mutex_unlock(&mutex);
  if (callback_runtime) {
    LoomRuntimeInfo info;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    callback_result = loom_runtime_get_info(callback_runtime, &info);
    callback_runtime = NULL;
    hostile_expect("loom_runtime_get_info(own runtime) inside its parallel_for", callback_result,
                   LOOM_ERROR_RUNTIME_BUSY, "called from the parallel_for callback");
  }
  for (i = 0; i < count; ++i) job(context, i);
}

static LoomResult launched = LOOM_ERROR_DEVICE;
static void* launch_step(void* step) {
  launched = loom_pipeline_launch((LoomPipeline)step);
  return NULL;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: two_threads MODULE_DIR\n");
    return 2;
  }
  char path[4096];
  LoomRuntimeCreateInfo create;
  LoomRuntime r = NULL;
  memset(&create, 0, sizeof create);
  create.struct_size = sizeof create;
  create.arch = LOOM_ARCH_CPU;
  create.parallel_for = parallel_for;
  create.parallel_for_workers = 1;
  REQUIRE_SUCCESS(loom_runtime_create(&create, &r));
  LoomModule m = NULL;
  REQUIRE_SUCCESS(
      loom_module_load(r, hostile_module(path, sizeof path, argv[1], "cpu", "heat"), &m));
  LoomPipeline init = NULL, step = NULL;
  LoomArray temperature = NULL;
  REQUIRE_SUCCESS(loom_module_get_pipeline(m, "init", &init));
  REQUIRE_SUCCESS(loom_module_get_pipeline(m, "step", &step));
  REQUIRE_SUCCESS(loom_module_get_array(m, "temperature", &temperature));
  REQUIRE_SUCCESS(loom_pipeline_launch(init));

  /* Another thread launches `step`; the job system keeps it inside the runtime. */
  pthread_mutex_lock(&mutex);
  hold = 1;
  pthread_mutex_unlock(&mutex);
  pthread_t other;
  if (pthread_create(&other, NULL, launch_step, step) != 0) {
    printf("FAIL pthread_create\n");
    return 1;
  }
  pthread_mutex_lock(&mutex);
  while (!inside) pthread_cond_wait(&changed, &mutex);
  pthread_mutex_unlock(&mutex);

  LoomArrayInfo info;
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  info.bytes = 12345;
  EXPECT_RESULT(loom_array_get_info(temperature, &info), LOOM_ERROR_RUNTIME_BUSY,
                "loom_array_get_info: the runtime is in use by another thread");
  CHECK(strstr(loom_last_error_message(), "inside loom_pipeline_launch") != NULL);
  CHECK(info.bytes == 12345); /* nothing written by a refused call */
  EXPECT_RESULT(loom_pipeline_launch(step), LOOM_ERROR_RUNTIME_BUSY, "loom_pipeline_launch:");
  LoomKernel kernel = NULL;
  EXPECT_RESULT(loom_module_get_kernel(m, "diffuse", 0, NULL, &kernel), LOOM_ERROR_RUNTIME_BUSY,
                "one thread at a time");
  CHECK(kernel == NULL);
  EXPECT_RESULT(loom_module_destroy(m), LOOM_ERROR_RUNTIME_BUSY, "loom_module_destroy:");
  EXPECT_RESULT(loom_runtime_destroy(r), LOOM_ERROR_RUNTIME_BUSY, "loom_runtime_destroy:");

  pthread_mutex_lock(&mutex);
  hold = 0;
  pthread_cond_broadcast(&changed);
  pthread_mutex_unlock(&mutex);
  pthread_join(other, NULL);
  hostile_expect("loom_pipeline_launch(step) on the other thread", launched, LOOM_SUCCESS, NULL);

  /* The call has returned: the runtime is this thread's, and everything is still there. */
  EXPECT_SUCCESS(loom_array_get_info(temperature, &info));
  CHECK(info.bytes == (uint64_t)256 * 256 * 4);
  callback_runtime = r;
  EXPECT_SUCCESS(loom_pipeline_launch(step));
  CHECK(callback_result == LOOM_ERROR_RUNTIME_BUSY);
  EXPECT_SUCCESS(loom_module_destroy(m));
  EXPECT_SUCCESS(loom_runtime_destroy(r));
  return hostile_finish("two_threads");
}
