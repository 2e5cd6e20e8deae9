/* alloc_count.h: counting the heap allocations of the timed work, for the
 * rows such as core/alloc. alloc_count.c interposes malloc, calloc,
 * realloc and posix_memalign for the whole binary, on every thread; it is
 * a library of its own (rig_bench_alloc_count), linked only into the
 * benchmarks that count.
 *
 * Under AddressSanitizer malloc is the sanitizer's: nothing is counted and
 * BENCH_COUNTS_ALLOCATIONS is 0 (the alloc rows are then left out). */
#ifndef RIG_BENCH_ALLOC_COUNT_H
#define RIG_BENCH_ALLOC_COUNT_H

#include <stdbool.h>

#if defined(__SANITIZE_ADDRESS__)
#define BENCH_COUNTS_ALLOCATIONS 0
#else
#define BENCH_COUNTS_ALLOCATIONS 1
#endif

/* Turns counting on or off; allocations made while it is off are not
 * counted. */
void bench_alloc_counting(bool on);
/* The allocations counted since the start (or the last reset). */
long bench_alloc_count(void);
void bench_alloc_reset(void);

/* Prints and appends the row `name` ("core/alloc"): the allocations counted
 * per timed operation, over `ops` operations called `what` ("submits").
 * Target: 0. 0 or -1, as bench_report. */
int bench_alloc_report(int argc, char **argv, const char *name, long ops, const char *what);

#endif
