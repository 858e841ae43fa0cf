/* Issue 17, hot reload by time and size: on file systems with coarse timestamps a module
 * rewritten within one tick keeps its time, and often its size. Here both are forced (heat
 * and heat_k differ only in a value of the metadata): loom_module_reload_if_changed still
 * swaps, once, and the same bytes again are no change.
 *   usage: reload_same_time_and_size MODULE_DIR SCRATCH_DIR */
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hostile_c.h"

/* The whole file, or NULL. */
static char* read_file(const char* path, long* size) {
  FILE* f = fopen(path, "rb");
  char* bytes = NULL;
  if (!f) return NULL;
  if (fseek(f, 0, SEEK_END) == 0 && (*size = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0) {
    bytes = malloc((size_t)*size);
    if (bytes && fread(bytes, 1, (size_t)*size, f) != (size_t)*size) {
      free(bytes);
      bytes = NULL;
    }
  }
  fclose(f);
  return bytes;
}

/* Written in place (as a build step that does not rename would), its time set to `time`. */
static int write_in_place(const char* path, const char* bytes, long size,
                          const struct timespec* time) {
  FILE* f = fopen(path, "wb");
  struct timespec times[2];
  if (!f) return 0;
  int ok = fwrite(bytes, 1, (size_t)size, f) == (size_t)size;
  ok = fclose(f) == 0 && ok;
  if (!time) return ok;
  times[0] = *time;
  times[1] = *time;
  return ok && utimensat(AT_FDCWD, path, times, 0) == 0;
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: reload_same_time_and_size MODULE_DIR SCRATCH_DIR\n");
    return 2;
  }
  char path[4096], heat_path[4096], heat_k_path[4096];
  long heat_size = 0, heat_k_size = 0;
  char* heat =
      read_file(hostile_module(heat_path, sizeof heat_path, argv[1], "cpu", "heat"), &heat_size);
  char* heat_k = read_file(
      hostile_module(heat_k_path, sizeof heat_k_path, argv[1], "cpu", "heat_k"), &heat_k_size);
  if (!heat || !heat_k) {
    printf("FAIL cannot read %s or %s\n", heat_path, heat_k_path);
    return 1;
  }
  CHECK(heat_size == heat_k_size);
  CHECK(memcmp(heat, heat_k, (size_t)heat_size) != 0);

  snprintf(path, sizeof path, "%s/reload_%d.loommod", argv[2], (int)getpid());
  struct stat st;
  if (!write_in_place(path, heat, heat_size, NULL) || stat(path, &st) != 0) {
    printf("FAIL cannot write %s\n", path);
    return 1;
  }
  const struct timespec tick = st.st_mtim;

  LoomRuntimeCreateInfo create;
  LoomRuntime r = NULL;
  LoomModule m = NULL;
  memset(&create, 0, sizeof create);
  create.struct_size = sizeof create;
  create.arch = LOOM_ARCH_CPU;
  create.cpu_threads = 1;
  REQUIRE_SUCCESS(loom_runtime_create(&create, &r));
  REQUIRE_SUCCESS(loom_module_load(r, path, &m));

  /* Rewritten within the same tick: the same time (set back) and the same size. */
  CHECK(write_in_place(path, heat_k, heat_k_size, &tick));
  CHECK(stat(path, &st) == 0 && st.st_mtim.tv_sec == tick.tv_sec &&
        st.st_mtim.tv_nsec == tick.tv_nsec && st.st_size == heat_size);
  LoomReloadStatus status = LOOM_RELOAD_UNCHANGED;
  EXPECT_SUCCESS(loom_module_reload_if_changed(m, &status));
  CHECK(status == LOOM_RELOAD_SWAPPED);
  EXPECT_SUCCESS(loom_module_reload_if_changed(m, &status)); /* and once only */
  CHECK(status == LOOM_RELOAD_UNCHANGED);
  /* The same bytes written again at the same time: no change. */
  CHECK(write_in_place(path, heat_k, heat_k_size, &tick));
  EXPECT_SUCCESS(loom_module_reload_if_changed(m, &status));
  CHECK(status == LOOM_RELOAD_UNCHANGED);

  EXPECT_SUCCESS(loom_module_destroy(m));
  EXPECT_SUCCESS(loom_runtime_destroy(r));
  unlink(path);
  free(heat);
  free(heat_k);
  return hostile_finish("reload_same_time_and_size");
}
