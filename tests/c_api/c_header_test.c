/* loom.h compiles as C99 with every warning, and its calls link from C. */
#include <loom/loom.h>
#include <stdio.h>
#include <string.h>

int main(void) {
  LoomArgument a = loom_arg_f32(1.5f);
  LoomRuntimeCreateInfo info;
  LoomRuntime runtime = NULL;
  LoomResult r;
  if (LOOM_VERSION_MAJOR(loom_version()) != 1 || a.value.f32[0] != 1.5f) return 1;
  memset(&info, 0, sizeof info);
  info.arch = LOOM_ARCH_CPU;
  r = loom_runtime_create(&info, &runtime);
  if (r != LOOM_SUCCESS) {
    fprintf(stderr, "%s: %s\n", loom_result_name(r), loom_last_error_message());
    return 1;
  }
  if (loom_launch(NULL, 0, NULL) != LOOM_ERROR_NULL_HANDLE) return 1;
  printf("%s; last error: %s\n", loom_version_string(), loom_last_error_message());
  return loom_runtime_destroy(runtime) == LOOM_SUCCESS ? 0 : 1;
}
