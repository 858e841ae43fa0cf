/* Issue 17, out-of-range arguments through the C ABI: null handles and pointers, sizes,
 * counts and indices past what exists, a handle used after its destroy. Each is a clear
 * error naming the argument, never a read or write out of bounds.
 *   usage: arguments MODULE_DIR (the C ABI tests' modules) */
#include "hostile_c.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: arguments MODULE_DIR\n");
    return 2;
  }
  char path[4096];
  LoomRuntimeCreateInfo create;
  LoomRuntime r = NULL;
  EXPECT_RESULT(loom_runtime_create(NULL, &r), LOOM_ERROR_NULL_HANDLE, "info is null");
  memset(&create, 0, sizeof create);
  create.arch = LOOM_ARCH_CPU;
  EXPECT_RESULT(loom_runtime_create(&create, &r), LOOM_ERROR_INVALID_ARGUMENT,
                "info: struct_size is 0");
  create.struct_size = sizeof create;
  create.cpu_threads = 1;
  REQUIRE_SUCCESS(loom_runtime_create(&create, &r));
  LoomModule m = NULL;
  REQUIRE_SUCCESS(
      loom_module_load(r, hostile_module(path, sizeof path, argv[1], "cpu", "args"), &m));
  LoomKernel run = NULL;
  REQUIRE_SUCCESS(loom_module_get_kernel(m, "run", 0, NULL, &run));

  /* Lookups: unknown names, indices past the end, null outputs. */
  LoomKernel k = NULL;
  EXPECT_RESULT(loom_module_get_kernel(m, "no_such_kernel", 0, NULL, &k), LOOM_ERROR_NOT_FOUND,
                "no_such_kernel");
  EXPECT_RESULT(loom_module_get_kernel(m, "run", 0, NULL, NULL), LOOM_ERROR_NULL_HANDLE,
                "out is null");
  const char* name = NULL;
  EXPECT_RESULT(loom_module_get_item_name(m, LOOM_ITEM_KERNEL, 999, &name), LOOM_ERROR_NOT_FOUND,
                "index 999 is past the module's 1 item(s) of that kind");
  LoomParamInfo param;
  memset(&param, 0, sizeof param);
  param.struct_size = sizeof param;
  EXPECT_RESULT(loom_kernel_get_param(run, 99, &param), LOOM_ERROR_NOT_FOUND,
                "kernel 'run': parameter 99 is past the kernel's 3");

  /* Ndarrays of impossible shapes. */
  LoomArray arr = NULL;
  int64_t shape[LOOM_MAX_DIMS + 1] = {4, 4, 4, 4, 4};
  int64_t negative = -1;
  EXPECT_RESULT(loom_ndarray_create(r, LOOM_DTYPE_F32, 1, LOOM_MAX_DIMS + 1, shape, &arr),
                LOOM_ERROR_WRONG_NDIM, "loom_ndarray_create: ndim 5 is not in 1..4");
  EXPECT_RESULT(loom_ndarray_create(r, LOOM_DTYPE_F32, 1, 1, &negative, &arr),
                LOOM_ERROR_INVALID_ARGUMENT, "extent -1 of dimension 0 is not positive");
  EXPECT_RESULT(loom_ndarray_create(r, LOOM_DTYPE_F32, 0, 1, shape, &arr), LOOM_ERROR_WRONG_DTYPE,
                "0 components per element is not in 1..16");
  EXPECT_RESULT(loom_ndarray_create(r, LOOM_DTYPE_F32, LOOM_MAX_COMPONENTS + 1, 1, shape, &arr),
                LOOM_ERROR_WRONG_DTYPE, "17 components per element is not in 1..16");
  EXPECT_RESULT(loom_ndarray_create(r, LOOM_DTYPE_F32, 1, 1, NULL, &arr), LOOM_ERROR_NULL_HANDLE,
                "shape is null");
  CHECK(arr == NULL);

  /* Reads and writes of another size than the array's. */
  int64_t n = 32;
  REQUIRE_SUCCESS(loom_ndarray_create(r, LOOM_DTYPE_I32, 1, 1, &n, &arr));
  int32_t data[64];
  memset(data, 0, sizeof data);
  EXPECT_RESULT(loom_array_read(arr, data, sizeof data), LOOM_ERROR_INVALID_ARGUMENT,
                "holds 128 bytes; the call gives 256");
  EXPECT_RESULT(loom_array_write(arr, data, 4), LOOM_ERROR_INVALID_ARGUMENT,
                "holds 128 bytes; the call gives 4");
  EXPECT_RESULT(loom_array_read(arr, NULL, 128), LOOM_ERROR_NULL_HANDLE, "dst is null");

  /* Launches with too few or too many arguments, or the wrong kinds: run(base: i32, arr,
   * v: i32x3). */
  LoomArgument args[4], v3 = {LOOM_ARGUMENT_VALUE, LOOM_DTYPE_I32, 3, {{0}}};
  args[0] = loom_arg_i32(1);
  args[1] = loom_arg_ndarray(arr);
  args[2] = v3;
  args[3] = loom_arg_i32(4);
  EXPECT_RESULT(loom_launch(run, 2, args), LOOM_ERROR_INVALID_ARGUMENT,
                "kernel 'run': the kernel takes 3 argument(s) (base, arr, v), given 2");
  EXPECT_RESULT(loom_launch(run, 4, args), LOOM_ERROR_INVALID_ARGUMENT,
                "kernel 'run': the kernel takes 3 argument(s) (base, arr, v), given 4");
  EXPECT_RESULT(loom_launch(run, 3, NULL), LOOM_ERROR_NULL_HANDLE, "args is null");
  args[1] = loom_arg_i32(7);
  EXPECT_RESULT(loom_launch(run, 3, args), LOOM_ERROR_WRONG_TYPE,
                "parameter 'arr' (argument 1) takes an ndarray, given a value");
  args[1] = loom_arg_ndarray(arr);
  args[2].count = LOOM_MAX_COMPONENTS + 1;
  EXPECT_RESULT(loom_launch(run, 3, args), LOOM_ERROR_WRONG_DTYPE,
                "parameter 'v' (argument 2) is a i32x3 of 3 component(s), given 17");
  args[2] = v3;
  EXPECT_SUCCESS(loom_launch(run, 3, args));

  /* A handle used after its destroy, and one that never was a handle. */
  EXPECT_SUCCESS(loom_ndarray_destroy(arr));
  LoomArrayInfo info;
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  EXPECT_RESULT(loom_array_get_info(arr, &info), LOOM_ERROR_INVALID_HANDLE,
                "array: the LoomArray was destroyed");
  EXPECT_RESULT(loom_ndarray_destroy(arr), LOOM_ERROR_INVALID_HANDLE,
                "array: the LoomArray was destroyed");
  EXPECT_RESULT(loom_array_get_info((LoomArray)(void*)data, &info), LOOM_ERROR_INVALID_HANDLE,
                "array: the value is not a Loom handle");
  EXPECT_RESULT(loom_module_get_kernel(NULL, "run", 0, NULL, &k), LOOM_ERROR_NULL_HANDLE,
                "module is null");

  EXPECT_SUCCESS(loom_module_destroy(m));
  EXPECT_SUCCESS(loom_runtime_destroy(r));
  return hostile_finish("arguments");
}
