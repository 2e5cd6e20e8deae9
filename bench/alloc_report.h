/* alloc_report.h: the alloc rows of the benchmarks that count their
 * allocations (tests/support/alloc_count.h: rig_alloc_counting around the
 * timed work, RIG_COUNTS_ALLOCATIONS 0 under the sanitizers, when the rows
 * are left out). A library of its own, rig_bench_alloc_count. */
#ifndef RIG_BENCH_ALLOC_REPORT_H
#define RIG_BENCH_ALLOC_REPORT_H

#include "alloc_count.h"
#include "bench.h"

/* Prints and appends the row `name` ("core/alloc"): the allocations counted
 * per timed operation, over `ops` operations called `what` ("submits").
 * Target: 0. 0 or -1, as bench_report. */
int bench_alloc_report(int argc, char **argv, const char *name, long ops, const char *what);

#endif
