/* Issue 17, C ABI enums: a C caller may pass any int where loom.h takes an enum. Each value
 * outside the enum (-1, 999, INT32_MIN, INT32_MAX, 0) is refused with
 * LOOM_ERROR_INVALID_ARGUMENT and a message naming the argument and the integer, never read
 * as an enumerator.   usage: enums MODULE_DIR (the C ABI tests' modules) */
#include <limits.h>

#include "hostile_c.h"

static const int32_t kBad[] = {-1, 999, INT32_MIN, INT32_MAX, 0};
enum { kBadCount = sizeof kBad / sizeof kBad[0] };

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: enums MODULE_DIR\n");
    return 2;
  }
  char path[4096];
  int i;
  for (i = 0; i < kBadCount; ++i) {
    LoomRuntimeCreateInfo info;
    LoomRuntime r = NULL;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    info.arch = (LoomArch)kBad[i];
    char fragment[64];
    snprintf(fragment, sizeof fragment, "arch %d is not a LoomArch", kBad[i]);
    EXPECT_RESULT(loom_runtime_create(&info, &r), LOOM_ERROR_INVALID_ARGUMENT, fragment);
    CHECK(r == NULL);
  }
  CHECK(strcmp(loom_result_name((LoomResult)999), "LOOM_ERROR_UNKNOWN") == 0);
  CHECK(strcmp(loom_result_name((LoomResult)INT32_MIN), "LOOM_ERROR_UNKNOWN") == 0);

  LoomRuntimeCreateInfo info;
  LoomRuntime r = NULL;
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  info.arch = LOOM_ARCH_CPU;
  info.cpu_threads = 1;
  REQUIRE_SUCCESS(loom_runtime_create(&info, &r));
  LoomModule m = NULL;
  REQUIRE_SUCCESS(
      loom_module_load(r, hostile_module(path, sizeof path, argv[1], "cpu", "args"), &m));
  LoomKernel run = NULL;
  REQUIRE_SUCCESS(loom_module_get_kernel(m, "run", 0, NULL, &run));
  int64_t n = 32;
  LoomArray arr = NULL;
  REQUIRE_SUCCESS(loom_ndarray_create(r, LOOM_DTYPE_I32, 1, 1, &n, &arr));

  for (i = 0; i < kBadCount; ++i) {
    char fragment[128];
    const char* name = NULL;
    LoomArray made = NULL;
    LoomTexture texture = NULL;
    printf("value %d:\n", kBad[i]);
    snprintf(fragment, sizeof fragment, "item: %d", kBad[i]);
    EXPECT_RESULT(loom_module_get_item_name(m, (LoomModuleItem)kBad[i], 0, &name),
                  LOOM_ERROR_INVALID_ARGUMENT, fragment);
    snprintf(fragment, sizeof fragment, "dtype: %d is not a LoomDataType", kBad[i]);
    EXPECT_RESULT(loom_ndarray_create(r, (LoomDataType)kBad[i], 1, 1, &n, &made),
                  LOOM_ERROR_INVALID_ARGUMENT, fragment);
    CHECK(made == NULL);
    snprintf(fragment, sizeof fragment, "format: %d is not a LoomTextureFormat", kBad[i]);
    EXPECT_RESULT(loom_texture_create(r, (LoomTextureFormat)kBad[i], 4, 4, 0, &texture),
                  LOOM_ERROR_INVALID_ARGUMENT, fragment);
    CHECK(texture == NULL);

    LoomArgument args[3];
    args[0] = loom_arg_i32(1);
    args[1] = loom_arg_ndarray(arr);
    args[2] = loom_arg_i32(3);
    args[0].kind = (LoomArgumentKind)kBad[i];
    snprintf(fragment, sizeof fragment,
             "parameter 'base' (argument 0): kind %d is not a LoomArgumentKind", kBad[i]);
    EXPECT_RESULT(loom_launch(run, 3, args), LOOM_ERROR_INVALID_ARGUMENT, fragment);
    args[0] = loom_arg_i32(1);
    args[2].dtype = (LoomDataType)kBad[i];
    snprintf(fragment, sizeof fragment, "parameter 'v' (argument 2): %d is not a LoomDataType",
             kBad[i]);
    EXPECT_RESULT(loom_launch(run, 3, args), LOOM_ERROR_INVALID_ARGUMENT, fragment);
  }
  EXPECT_SUCCESS(loom_ndarray_destroy(arr));
  EXPECT_SUCCESS(loom_module_destroy(m));
  EXPECT_SUCCESS(loom_runtime_destroy(r));
  return hostile_finish("enums");
}
