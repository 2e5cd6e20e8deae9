/* bench.h: what every benchmark of bench/ shares (docs/bench.md): a check that
 * exits, the kernel image's bytes, a monotonic clock, a row and its floor
 * measured interleaved, the median and p99 of samples, the table row, and
 * the JSON line appended to the results file.
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

/* Exits 1 when cond is false, naming the binary, the place and cond on
 * stderr. (bench_remote, an MPI program, has its own, which aborts the
 * job.) */
#define BENCH_CHECK(cond)                                                                          \
  do {                                                                                             \
    if (!(cond)) bench_check_failed(__FILE__, __LINE__, #cond);                                    \
  } while (0)

_Noreturn void bench_check_failed(const char *file, int line, const char *cond);

/* The bytes of the benchmarks' kernel image (core_kernels.so): at
 * $RIG_BENCH_KERNELS, else at built_at; the caller frees them. NULL, with a
 * message on stderr, when they cannot be read. */
void *bench_read_kernels(const char *built_at, size_t *len);

/* Starts the worker pool's threads and lets them bind to their cores
 * (hwloc allocates there, once per thread), so that it happens before
 * anything is timed or counted; the threads that run a host launch. */
unsigned bench_start_pool(void);

/* Nanoseconds of CLOCK_MONOTONIC. */
uint64_t bench_now_ns(void);

/* The median and the 99th percentile (nearest rank) of n samples; sorts
 * them in place. n > 0. */
double bench_median(double *samples, size_t n);
double bench_p99(double *samples, size_t n);

/* A row's and its floor's medians and p99s, in the unit of the samples. */
typedef struct bench_measured {
  double median, p99, floor_median, floor_p99;
} bench_measured;

/* Runs row and floor_fn `warmup` times each untimed, then takes `samples`
 * samples of each (a sample is what one call returns), interleaved: which
 * goes first alternates. counting, unless NULL, is called with true just
 * before each timed call of row and with false just after it
 * (rig_alloc_counting: the row's allocations are counted, the floor's
 * are not). */
bench_measured bench_measure(double (*row)(void), double (*floor_fn)(void), size_t warmup,
                             size_t samples, void (*counting)(bool on));

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

/* Rows measured across hosts (scripts/hosts.sh) are named "BASE hosts":
 * bench_set_hosts(true) once the ranks are known to span hosts. A name
 * stays valid for the next seven. */
void bench_set_hosts(bool across);
bool bench_across_hosts(void);
const char *bench_row_name(const char *base);

#endif
