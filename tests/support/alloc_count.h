/* alloc_count.h: counting the heap allocations of a stretch of work, for
 * the tests that promise none (a submit, a run) and the benchmarks' alloc
 * rows. alloc_count.c interposes malloc, calloc, realloc and
 * posix_memalign for the whole binary, on every thread; it is a library
 * of its own (rig_alloc_count, alloc_count.cmake), linked only into the
 * suites and benchmarks that count.
 *
 * Under AddressSanitizer malloc is the sanitizer's and nothing is counted:
 * RIG_COUNTS_ALLOCATIONS is 0; a test that counts then skips, saying
 * RIG_NO_ALLOC_COUNT, and a benchmark leaves its alloc row out. */
#ifndef RIG_ALLOC_COUNT_H
#define RIG_ALLOC_COUNT_H

#include <stdbool.h>

#if defined(__SANITIZE_ADDRESS__)
#define RIG_COUNTS_ALLOCATIONS 0
#else
#define RIG_COUNTS_ALLOCATIONS 1
#endif

/* Why allocations are not counted in this build. */
#define RIG_NO_ALLOC_COUNT "malloc is the sanitizer's in this build"

/* Turns counting on or off; allocations made while it is off are not
 * counted. */
void rig_alloc_counting(bool on);
/* The allocations counted since the start (or the last reset). */
long rig_alloc_count(void);
void rig_alloc_reset(void);

#endif
