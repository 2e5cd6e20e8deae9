/* The main of every suite: registers the file's suites, runs them (or the
 * tests whose names contain argv[1]), and exits non-zero on any failure,
 * or RIG_TEST_SKIPPED when every test that ran skipped (CTest's
 * SKIP_RETURN_CODE: the suite tested nothing here, and says so). */
#include <CUnit/Basic.h>
#include <stdio.h>
#include <stdlib.h>

#include "rig_test.h"

static const char *filter;
/* The tests that skipped, each counted once. */
static unsigned skipped;
static CU_pTest last_skipped;

void rig_test_add_suite(const char *name, CU_TestInfo *tests) {
  CU_pSuite s = CU_add_suite(name, NULL, NULL);
  if (!s) {
    fprintf(stderr, "cannot add suite %s: %s\n", name, CU_get_error_msg());
    exit(2);
  }
  for (CU_TestInfo *t = tests; t->pName; t++) {
    if (filter && !strstr(t->pName, filter)) continue;
    if (!CU_add_test(s, t->pName, t->pTestFunc)) {
      fprintf(stderr, "cannot add test %s: %s\n", t->pName, CU_get_error_msg());
      exit(2);
    }
  }
}

void rig_test_skip(const char *test, const char *why) {
  printf("\n  SKIPPED %s: %s\n", test, why);
  fflush(stdout);
  CU_pTest now = CU_get_current_test();
  if (now && now != last_skipped) {
    last_skipped = now;
    skipped++;
  }
}

void rig_test_mismatch(const char *file, int line, rig_status got, const char *got_message,
                       rig_status want, const char *want_message) {
  fprintf(stderr, "%s:%d: got %s \"%s\"\n%*swanted %s \"%s\"\n", file, line, rig_status_name(got),
          got_message, (int)strlen(file) + 5, "", rig_status_name(want), want_message);
}

void *rig_test_read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t room = 4096, n = 0;
  unsigned char *buf = malloc(room);
  size_t got;
  while (buf && (got = fread(buf + n, 1, room - n, f)) > 0) {
    n += got;
    if (n == room) {
      unsigned char *b = realloc(buf, room *= 2);
      if (!b) {
        free(buf);
        buf = NULL;
      } else {
        buf = b;
      }
    }
  }
  fclose(f);
  if (buf) {
    buf[n] = 0; /* a NUL after the bytes (n < room): text reads as a string */
    *len = n;
  }
  return buf;
}

static const char *dir_path(const char *var, const char *fallback, const char *rel, char *buf,
                            size_t size) {
  const char *dir = getenv(var);
  snprintf(buf, size, "%s/%s", dir ? dir : fallback, rel);
  return buf;
}

const char *rig_test_source_path(const char *rel, char *buf, size_t size) {
  return dir_path("RIG_TEST_SOURCE_DIR", RIG_TEST_SOURCE_DIR_DEFAULT, rel, buf, size);
}

const char *rig_test_binary_path(const char *rel, char *buf, size_t size) {
  return dir_path("RIG_TEST_BINARY_DIR", RIG_TEST_BINARY_DIR_DEFAULT, rel, buf, size);
}

int main(int argc, char **argv) {
  if (argc > 1) filter = argv[1];
  if (CU_initialize_registry() != CUE_SUCCESS) return 2;
  rig_test_register();
  CU_basic_set_mode(CU_BRM_VERBOSE);
  CU_basic_run_tests();
  unsigned failed = CU_get_number_of_tests_failed() + CU_get_number_of_failures();
  unsigned ran = CU_get_number_of_tests_run();
  CU_cleanup_registry();
  if (ran == 0 && !filter) {
    fprintf(stderr, "no test ran\n");
    return 1;
  }
  if (!failed && ran > 0 && skipped == ran) {
    printf("every test skipped: nothing was tested here\n");
    return RIG_TEST_SKIPPED;
  }
  return failed ? 1 : 0;
}
