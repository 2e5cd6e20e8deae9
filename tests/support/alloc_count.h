/* Counting the heap allocations of a stretch of a test: malloc, calloc and
 * realloc are interposed, for the whole test binary and every thread, by
 * alloc_count.c: a library of its own (rig_test_alloc_count), linked only
 * into the suites that count.
 *
 * Under AddressSanitizer malloc is the sanitizer's and nothing is counted:
 * RIG_TEST_COUNTS_ALLOCATIONS is 0 and a test that counts skips, saying
 * RIG_TEST_NO_ALLOC_COUNT. */
#ifndef RIG_TEST_ALLOC_COUNT_H
#define RIG_TEST_ALLOC_COUNT_H

#include <stdbool.h>

#if defined(__SANITIZE_ADDRESS__)
#define RIG_TEST_COUNTS_ALLOCATIONS 0
#else
#define RIG_TEST_COUNTS_ALLOCATIONS 1
#endif

/* Why a test that counts allocations skips in this build. */
#define RIG_TEST_NO_ALLOC_COUNT "malloc is the sanitizer's in this build"

/* Turns counting on or off; allocations made while it is off are not
 * counted. */
void rig_test_alloc_counting(bool on);
/* The allocations counted since the last reset. */
long rig_test_alloc_count(void);
void rig_test_alloc_reset(void);

#endif
