/* Issue 17, crafted SPIR-V reaching the driver: modules of tests/hostile/modules whose SPIR-V
 * passes the archive's checks but would crash lavapipe (an entry point that is not "main") or
 * is cut short. loom_module_load on a Vulkan runtime refuses each as LOOM_ERROR_CORRUPT_MODULE
 * naming the file, the kernel and the task; the good module beside them loads and runs.
 *   usage: hostile_spirv CORPUS_MODULE_DIR (tests/hostile/modules) */
#include "hostile_c.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: hostile_spirv CORPUS_MODULE_DIR\n");
    return 2;
  }
  char path[4096], fragment[4400];
  LoomRuntimeCreateInfo create;
  LoomRuntime r = NULL;
  memset(&create, 0, sizeof create);
  create.struct_size = sizeof create;
  create.arch = LOOM_ARCH_VULKAN;
  LoomResult made = loom_runtime_create(&create, &r);
  if (made != LOOM_SUCCESS) {
    const char* require = getenv("LOOM_REQUIRE_VULKAN");
    printf("no Vulkan device: %s\n", loom_last_error_message());
    return require && strcmp(require, "1") == 0 ? 1 : 77;
  }
  LoomModule m = NULL;
  snprintf(path, sizeof path, "%s/entry_point_oain", argv[1]);
  snprintf(fragment, sizeof fragment,
           "%s: kernel 'fill': task 0: the shader's entry point is 'oain'; a task's is 'main'",
           path);
  EXPECT_RESULT(loom_module_load(r, path, &m), LOOM_ERROR_CORRUPT_MODULE, fragment);
  snprintf(path, sizeof path, "%s/spirv_cut_in_entry_point", argv[1]);
  snprintf(fragment, sizeof fragment,
           "%s: kernel 'fill': task 0 (blob '0.fill.task0.spv') is not valid SPIR-V", path);
  EXPECT_RESULT(loom_module_load(r, path, &m), LOOM_ERROR_CORRUPT_MODULE, fragment);
  CHECK(m == NULL);

  snprintf(path, sizeof path, "%s/fill_vulkan", argv[1]);
  EXPECT_SUCCESS(loom_module_load(r, path, &m));
  LoomPipeline step = NULL;
  EXPECT_SUCCESS(loom_module_get_pipeline(m, "step", &step));
  EXPECT_SUCCESS(loom_pipeline_launch(step));
  EXPECT_SUCCESS(loom_runtime_wait(r));
  EXPECT_SUCCESS(loom_module_destroy(m));
  EXPECT_SUCCESS(loom_runtime_destroy(r));
  return hostile_finish("hostile_spirv");
}
