/* What every CUnit suite of the project shares: one main (cunit_main.c)
 * that runs the suites a test file registers, a seeded random source, and
 * small helpers for matching messages. */
#ifndef RIG_TEST_H
#define RIG_TEST_H

#include <CUnit/CUnit.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "rig/rig_base.h"

/* Each test file defines this: it registers its suites with
 * rig_test_add_suite. */
void rig_test_register(void);

/* Registers a suite of NULL-terminated tests. */
void rig_test_add_suite(const char *name, CU_TestInfo *tests);

/* Prints that a test skipped and why (a GPU missing, say); the test then
 * returns without asserting. A suite every test of which skipped exits
 * RIG_TEST_SKIPPED, which CTest reports as skipped (SKIP_RETURN_CODE). */
#define RIG_TEST_SKIPPED 77
void rig_test_skip(const char *test, const char *why);

/* A status and a message: the status must be `code` and the message must
 * equal `message` exactly. */
#define RIG_ASSERT_ERROR(st, err, want_code, want_message)                                         \
  do {                                                                                             \
    rig_status got_ = (st); /* evaluated once: it is often the call under test */                  \
    CU_ASSERT_EQUAL(got_, (want_code));                                                            \
    CU_ASSERT_STRING_EQUAL((err).message, (want_message));                                         \
    if (got_ != (want_code) || strcmp((err).message, (want_message)) != 0)                         \
      rig_test_mismatch(__FILE__, __LINE__, got_, (err).message, (want_code), (want_message));     \
  } while (0)

void rig_test_mismatch(const char *file, int line, rig_status got, const char *got_message,
                       rig_status want, const char *want_message);

/* splitmix64: a small, seeded, reproducible random source. */
typedef struct rig_rng {
  uint64_t s;
} rig_rng;
static inline uint64_t rig_rng_next(rig_rng *r) {
  uint64_t z = (r->s += UINT64_C(0x9E3779B97F4A7C15));
  z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
  return z ^ (z >> 31);
}
/* Uniform in [0, n). */
static inline uint64_t rig_rng_below(rig_rng *r, uint64_t n) {
  return n ? rig_rng_next(r) % n : 0;
}

/* Reads a whole file, a NUL after its bytes; NULL on failure. The caller
 * frees. */
void *rig_test_read_file(const char *path, size_t *len);
/* The source tree's path of a file (from RIG_TEST_SOURCE_DIR). */
const char *rig_test_source_path(const char *rel, char *buf, size_t size);
const char *rig_test_binary_path(const char *rel, char *buf, size_t size);

/* Whether message begins by naming machine m as the job labels it:
 * "machine 1: ..." on one host, "machine 1 (node2): ..." across hosts. */
static inline bool rig_test_names_machine(const char *message, int m) {
  char head[32];
  int n = snprintf(head, sizeof head, "machine %d", m);
  return strncmp(message, head, (size_t)n) == 0 &&
         (strncmp(message + n, ": ", 2) == 0 || strncmp(message + n, " (", 2) == 0);
}

#endif
