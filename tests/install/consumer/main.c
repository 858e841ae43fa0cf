/* A program outside the Loom source tree built against an installed Loom (find_package or
 * pkg-config, tests/install/run_install_test.sh): loads the module named on the command line
 * into a CPU runtime, prints its info, kernels and pipelines, runs each pipeline once, and
 * destroys everything. Any failure prints the call and Loom's message and exits 1. */
#include <loom/loom.h>
#include <stdio.h>
#include <string.h>

static int failed(const char* call, LoomResult r) {
  fprintf(stderr, "loom_consumer: %s: %s: %s\n", call, loom_result_name(r),
          loom_last_error_message());
  return 1;
}

static int print_items(LoomModule module, LoomModuleItem item, const char* what, uint32_t count) {
  uint32_t i;
  for (i = 0; i < count; ++i) {
    const char* name = NULL;
    LoomResult r = loom_module_get_item_name(module, item, i, &name);
    if (r != LOOM_SUCCESS) return failed("loom_module_get_item_name", r);
    printf("%s %s\n", what, name);
  }
  return 0;
}

static int run_pipelines(LoomModule module, uint32_t count) {
  uint32_t i;
  for (i = 0; i < count; ++i) {
    const char* name = NULL;
    LoomPipeline pipeline = NULL;
    LoomResult r = loom_module_get_item_name(module, LOOM_ITEM_PIPELINE, i, &name);
    if (r != LOOM_SUCCESS) return failed("loom_module_get_item_name", r);
    r = loom_module_get_pipeline(module, name, &pipeline);
    if (r != LOOM_SUCCESS) return failed("loom_module_get_pipeline", r);
    r = loom_pipeline_launch(pipeline);
    if (r != LOOM_SUCCESS) return failed("loom_pipeline_launch", r);
    printf("ran pipeline %s\n", name);
  }
  return 0;
}

int main(int argc, char** argv) {
  LoomRuntimeCreateInfo create;
  LoomRuntime runtime = NULL;
  LoomModule module = NULL;
  LoomModuleInfo info;
  LoomResult r;
  int status;
  if (argc != 2) {
    fprintf(stderr, "usage: loom_consumer MODULE.loommod\n");
    return 2;
  }
  printf("%s\n", loom_version_string());
  memset(&create, 0, sizeof create);
  create.struct_size = sizeof create;
  create.arch = LOOM_ARCH_CPU;
  r = loom_runtime_create(&create, &runtime);
  if (r != LOOM_SUCCESS) return failed("loom_runtime_create", r);
  r = loom_module_load(runtime, argv[1], &module);
  if (r != LOOM_SUCCESS) {
    loom_runtime_destroy(runtime);
    return failed("loom_module_load", r);
  }
  /* Zeroed, then its size: C99 with -Wextra warns about a partial initializer. */
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  r = loom_module_get_info(module, &info);
  if (r != LOOM_SUCCESS) {
    status = failed("loom_module_get_info", r);
  } else {
    printf("module %s: %u kernel(s), %u pipeline(s)\n", info.name, info.kernel_count,
           info.pipeline_count);
    status = print_items(module, LOOM_ITEM_KERNEL, "kernel", info.kernel_count);
    if (status == 0)
      status = print_items(module, LOOM_ITEM_PIPELINE, "pipeline", info.pipeline_count);
    if (status == 0) status = run_pipelines(module, info.pipeline_count);
  }
  r = loom_module_destroy(module);
  if (r != LOOM_SUCCESS && status == 0) status = failed("loom_module_destroy", r);
  r = loom_runtime_destroy(runtime);
  if (r != LOOM_SUCCESS && status == 0) status = failed("loom_runtime_destroy", r);
  return status;
}
