/* bench.h: what every benchmark of bench/ shares (BENCH.md): a monotonic
 * clock, the median and p99 of samples, the table row, and the JSON line
 * appended to the results file.
 *
 * Each row is measured beside its floor, interleaved, in the same process.
 * `median` and `floor_median` are in the row's unit; `ratio` is always the
 * row's time over the floor's time (1.0 = as fast as the floor), so for a
 * throughput unit such as MB/s it is floor / median. */
#ifndef RIG_BENCH_H
#define RIG_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Nanoseconds of CLOCK_MONOTONIC. */
uint64_t bench_now_ns(void);

/* The median and the 99th percentile (nearest rank) of n samples; sorts
 * them in place. n > 0. */
double bench_median(double *samples, size_t n);
double bench_p99(double *samples, size_t n);

typedef struct bench_row {
  const char *name;    /* "codec/decode" */
  const char *unit;    /* "MB/s", "ns" */
  double median;       /* the row's median, in unit */
  double floor_median; /* the floor's median, in unit (0 when there is none) */
  double ratio;        /* the row's time over the floor's */
  size_t samples;
  const char *target; /* ">= 300 MB/s" */
  bool ok;            /* whether the target is met */
} bench_row;

/* Where rows are appended: argv[1] when given, else $RIG_BENCH_RESULTS, else
 * bench/results.jsonl in the source tree. */
const char *bench_results_path(int argc, char **argv);

/* Prints the table's header (unless $RIG_BENCH_NO_HEADER is set: bench.sh
 * prints it once for all the binaries) and a row, to stdout. */
void bench_print_header(void);
void bench_print_row(const bench_row *row);

/* Appends row as one JSON line to path (with the machine: host name and
 * processor count); 0, or -1 with a message on stderr. */
int bench_append_json(const char *path, const bench_row *row);

/* Prints and appends row; 0 or -1. */
int bench_report(int argc, char **argv, const bench_row *row);

#endif
