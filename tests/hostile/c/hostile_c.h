/* What the hostile C programs share (tests/hostile/README.md): each call is checked for the
 * result and a fragment of the message it must give, and printed with what it gave. A program
 * exits 0 only when every check held, 77 (skipped) when it needs a Vulkan device the machine
 * lacks and LOOM_REQUIRE_VULKAN is not 1. */
#ifndef LOOM_HOSTILE_C_H
#define LOOM_HOSTILE_C_H

#include <loom/loom.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int hostile_failures = 0;

/* The call returned `want` and its message holds `fragment` (NULL: any message). */
static inline void hostile_expect(const char* what, LoomResult got, LoomResult want,
                                  const char* fragment) {
  const char* message = got == LOOM_SUCCESS ? "" : loom_last_error_message();
  int ok = got == want && (!fragment || strstr(message, fragment) != NULL);
  printf("%s %s -> %s: %s\n", ok ? "ok  " : "FAIL", what, loom_result_name(got), message);
  if (!ok) {
    printf("     expected %s with \"%s\"\n", loom_result_name(want), fragment ? fragment : "");
    ++hostile_failures;
  }
}

#define EXPECT_RESULT(call, want, fragment) hostile_expect(#call, (call), (want), (fragment))
#define EXPECT_SUCCESS(call) hostile_expect(#call, (call), LOOM_SUCCESS, NULL)

static inline void hostile_check(const char* what, int ok) {
  printf("%s %s\n", ok ? "ok  " : "FAIL", what);
  if (!ok) ++hostile_failures;
}

#define CHECK(condition) hostile_check(#condition, (condition))

/* A required step that did not work: nothing after it can be checked. */
static inline void hostile_require(const char* what, LoomResult got) {
  if (got == LOOM_SUCCESS) return;
  printf("FAIL %s -> %s: %s\n", what, loom_result_name(got), loom_last_error_message());
  exit(1);
}

#define REQUIRE_SUCCESS(call) hostile_require(#call, (call))

static inline int hostile_finish(const char* program) {
  if (hostile_failures) {
    printf("%s: %d check(s) failed\n", program, hostile_failures);
    return 1;
  }
  printf("%s: every check held\n", program);
  return 0;
}

/* "DIR/ARCH/NAME.loommod" in `buf`. */
static inline const char* hostile_module(char* buf, size_t size, const char* dir, const char* arch,
                                         const char* name) {
  snprintf(buf, size, "%s/%s/%s.loommod", dir, arch, name);
  return buf;
}

#endif
