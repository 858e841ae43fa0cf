/* loom.h compiles as C99 with every warning, and its calls link from C. */
#include <loom/loom.h>
#include <stdio.h>
#include <string.h>

int main(void) {
  LoomArgument a = loom_arg_f32(1.5f);
  LoomRuntimeCreateInfo info;
  LoomRuntime runtime = NULL;
  LoomResult r;
  if (LOOM_VERSION_MAJOR(loom_version()) != LOOM_VERSION_MAJOR(LOOM_HEADER_VERSION) ||
      a.value.f32[0] != 1.5f)
    return 1;
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  info.arch = LOOM_ARCH_CPU;
  r = loom_runtime_create(&info, &runtime);
  if (r != LOOM_SUCCESS) {
    fprintf(stderr, "%s: %s\n", loom_result_name(r), loom_last_error_message());
    return 1;
  }
  if (loom_launch(NULL, 0, NULL) != LOOM_ERROR_NULL_HANDLE) return 1;
  /* A value that never was a handle is refused, never followed. */
  if (loom_runtime_wait((LoomRuntime)(uintptr_t)0x1000) != LOOM_ERROR_INVALID_HANDLE) return 1;
  if (strcmp(loom_result_name(LOOM_ERROR_IN_USE), "LOOM_ERROR_IN_USE") != 0) return 1;
  {
    LoomResourceAccess access;
    uint32_t count = 1;
    memset(&access, 0, sizeof access);
    access.struct_size = sizeof access;
    if (loom_kernel_get_resource_access(NULL, &count, &access) != LOOM_ERROR_NULL_HANDLE ||
        count != 1 || (LOOM_ACCESS_READ | LOOM_ACCESS_WRITE | LOOM_ACCESS_ATOMIC) != 7)
      return 1;
  }
  printf("%s; last error: %s\n", loom_version_string(), loom_last_error_message());
  return loom_runtime_destroy(runtime) == LOOM_SUCCESS ? 0 : 1;
}
