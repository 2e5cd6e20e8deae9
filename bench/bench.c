/* bench.c: the helpers of bench.h. */
#include "bench.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rig/rig_core.h"

#ifndef RIG_BENCH_SOURCE_DIR
#define RIG_BENCH_SOURCE_DIR "."
#endif

void bench_check_failed(const char *file, int line, const char *cond) {
  fprintf(stderr, "%s: %s:%d: %s failed\n", program_invocation_short_name, file, line, cond);
  exit(1);
}

/* The whole file at path, or NULL. */
static void *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  void *bytes = NULL;
  long n = -1;
  if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0) {
    bytes = malloc((size_t)n);
    if (bytes && fread(bytes, 1, (size_t)n, f) != (size_t)n) {
      free(bytes);
      bytes = NULL;
    }
  }
  fclose(f);
  *len = n > 0 ? (size_t)n : 0;
  return bytes;
}

void *bench_read_kernels(const char *built_at, size_t *len) {
  const char *path = getenv("RIG_BENCH_KERNELS");
  if (!path || !path[0]) path = built_at;
  void *bytes = read_file(path, len);
  if (!bytes)
    fprintf(stderr, "%s: cannot read the kernels %s (set RIG_BENCH_KERNELS)\n",
            program_invocation_short_name, path);
  return bytes;
}

unsigned bench_start_pool(void) {
  unsigned threads = rig_device_facts_of(rig_host())->threads;
  struct timespec settle = {0, 50 * 1000 * 1000};
  nanosleep(&settle, NULL);
  return threads;
}

uint64_t bench_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double bench_median(double *samples, size_t n) {
  qsort(samples, n, sizeof *samples, cmp_double);
  return n % 2 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
}

double bench_p99(double *samples, size_t n) {
  qsort(samples, n, sizeof *samples, cmp_double);
  size_t rank = (99 * n + 99) / 100; /* ceil(0.99 n), 1-based */
  return samples[rank ? rank - 1 : 0];
}

bench_measured bench_measure(double (*row)(void), double (*floor_fn)(void), size_t warmup,
                             size_t samples, void (*counting)(bool on)) {
  double *r = malloc(samples * sizeof *r), *f = malloc(samples * sizeof *f);
  BENCH_CHECK(r && f);
  for (size_t i = 0; i < warmup; i++) {
    row();
    floor_fn();
  }
  for (size_t i = 0; i < samples; i++) {
    if (i % 2) f[i] = floor_fn();
    if (counting) counting(true);
    r[i] = row();
    if (counting) counting(false);
    if (i % 2 == 0) f[i] = floor_fn();
  }
  bench_measured m = {.median = bench_median(r, samples),
                      .p99 = bench_p99(r, samples),
                      .floor_median = bench_median(f, samples),
                      .floor_p99 = bench_p99(f, samples)};
  free(r);
  free(f);
  return m;
}

const char *bench_results_path(int argc, char **argv) {
  if (argc > 1 && argv[1][0]) return argv[1];
  const char *env = getenv("RIG_BENCH_RESULTS");
  if (env && env[0]) return env;
  return RIG_BENCH_SOURCE_DIR "/bench/results.jsonl";
}

void bench_print_header(void) {
  const char *quiet = getenv("RIG_BENCH_NO_HEADER");
  if (quiet && quiet[0]) return;
  printf("%-22s %-6s %12s %12s %7s %7s  %-16s %s\n", "name", "unit", "median", "floor", "ratio",
         "samples", "target", "ok");
}

void bench_print_row(const bench_row *row) {
  printf("%-22s %-6s %12.1f %12.1f %7.2f %7zu  %-16s %s\n", row->name, row->unit, row->median,
         row->floor_median, row->ratio, row->samples, row->target, row->ok ? "ok" : "FAIL");
  fflush(stdout);
}

/* s as a JSON string's contents (the names here are plain ASCII; quotes,
 * backslashes and control bytes are escaped all the same). */
static void put_json_string(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\')
      fprintf(f, "\\%c", c);
    else if (c < 0x20)
      fprintf(f, "\\u%04x", c);
    else
      fputc(c, f);
  }
  fputc('"', f);
}

int bench_append_json(const char *path, const bench_row *row) {
  char host[256] = "unknown";
  if (gethostname(host, sizeof host) != 0) strcpy(host, "unknown");
  host[sizeof host - 1] = '\0';
  char machine[300];
  snprintf(machine, sizeof machine, "%s (%ld cpus)", host, sysconf(_SC_NPROCESSORS_ONLN));

  FILE *f = fopen(path, "a");
  if (!f) {
    perror(path);
    return -1;
  }
  fputs("{\"name\": ", f);
  put_json_string(f, row->name);
  fputs(", \"unit\": ", f);
  put_json_string(f, row->unit);
  fprintf(f, ", \"median\": %.3f, \"floor_median\": %.3f, \"ratio\": %.4f, \"samples\": %zu",
          row->median, row->floor_median, row->ratio, row->samples);
  fputs(", \"target\": ", f);
  put_json_string(f, row->target);
  fprintf(f, ", \"ok\": %s, \"time\": %lld, \"machine\": ", row->ok ? "true" : "false",
          (long long)time(NULL));
  put_json_string(f, machine);
  fputs("}\n", f);
  if (fclose(f) != 0) {
    perror(path);
    return -1;
  }
  return 0;
}

int bench_report(int argc, char **argv, const bench_row *row) {
  bench_print_row(row);
  return bench_append_json(bench_results_path(argc, argv), row);
}

static bool across_hosts;

void bench_set_hosts(bool across) {
  across_hosts = across;
}

bool bench_across_hosts(void) {
  return across_hosts;
}

const char *bench_row_name(const char *base) {
  static char names[8][64];
  static unsigned next;
  char *n = names[next++ % 8];
  snprintf(n, sizeof names[0], "%s%s", base, across_hosts ? " hosts" : "");
  return n;
}
