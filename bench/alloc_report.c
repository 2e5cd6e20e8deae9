/* The alloc rows (core/alloc, program/alloc): the allocations the count
 * of tests/support/alloc_count.h saw, per timed operation. */
#include "alloc_report.h"

#include <stdio.h>

#include "alloc_count.h"

int bench_alloc_report(int argc, char **argv, const char *name, long ops, const char *what) {
  long allocs = rig_alloc_count();
  bench_row row = {
      .name = name,
      .unit = "allocs",
      .median = (double)allocs / (double)ops,
      .samples = (size_t)ops,
      .target = "0",
      .ok = allocs == 0,
  };
  int rc = bench_report(argc, argv, &row);
  fprintf(stderr, "(%s: %ld allocations over %ld %s)\n", name, allocs, ops, what);
  return rc;
}
