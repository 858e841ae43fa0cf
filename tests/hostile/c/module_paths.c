/* Issue 17, files that are no modules: a FIFO used to block loom_module_load forever and
 * /dev/zero to fill the memory. Each path that is no regular file is LOOM_ERROR_IO naming
 * the path and what it is, at once; empty, missing and cut-short modules are clear errors.
 *   usage: module_paths SCRATCH_DIR */
#include <sys/stat.h>
#include <unistd.h>

#include "hostile_c.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: module_paths SCRATCH_DIR\n");
    return 2;
  }
  LoomRuntimeCreateInfo info;
  LoomRuntime r = NULL;
  LoomModule m = NULL;
  char fifo[4096], fragment[4200];
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  info.arch = LOOM_ARCH_CPU;
  info.cpu_threads = 1;
  REQUIRE_SUCCESS(loom_runtime_create(&info, &r));

  snprintf(fifo, sizeof fifo, "%s/module_paths_%d.loommod", argv[1], (int)getpid());
  unlink(fifo);
  if (mkfifo(fifo, 0600) != 0) {
    printf("FAIL cannot make the FIFO %s\n", fifo);
    return 1;
  }
  snprintf(fragment, sizeof fragment,
           "%s: cannot read the module file: it is a FIFO, not a regular file", fifo);
  EXPECT_RESULT(loom_module_load(r, fifo, &m), LOOM_ERROR_IO, fragment);
  unlink(fifo);
  EXPECT_RESULT(loom_module_load(r, "/dev/zero", &m), LOOM_ERROR_IO,
                "/dev/zero: cannot read the module file: it is a character device");
  EXPECT_RESULT(loom_module_load(r, "/dev/null", &m), LOOM_ERROR_IO,
                "/dev/null: cannot read the module file: it is a character device");
  EXPECT_RESULT(loom_module_load(r, "/nonexistent/x.loommod", &m), LOOM_ERROR_IO,
                "/nonexistent/x.loommod: cannot open");
  EXPECT_RESULT(loom_module_load(r, "", &m), LOOM_ERROR_INVALID_ARGUMENT, "the path is empty");
  EXPECT_RESULT(loom_module_load(r, NULL, &m), LOOM_ERROR_NULL_HANDLE, "path is null");
  static const char kCut[] = "LOOMMOD";
  EXPECT_RESULT(loom_module_load_memory(r, kCut, sizeof kCut, "cut.loommod", &m),
                LOOM_ERROR_CORRUPT_MODULE, "cut.loommod");
  CHECK(m == NULL);
  EXPECT_SUCCESS(loom_runtime_destroy(r));
  return hostile_finish("module_paths");
}
