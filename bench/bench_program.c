/* bench_program: docs/bench.md's program rows, each beside a floor of the same
 * work handed to the core directly (rig_submit of equivalent submissions
 * made with rig_submission_make), so that a row's cost over its floor is
 * what rig_program_run adds to the core.
 *
 * - program/host-1: a run of a one-step program whose step is one host
 *   launch (one group) of the no-op kernel with one ref (Write) to a slot on
 *   the program's memory. Floor: the equivalent prepared submission, one
 *   launch with a ref to a host buffer, submitted with its block. A sample
 *   is REPS runs (or submits) in a row; in ns per run. Target: at most 50 ns
 *   over the floor.
 * - program/host-64: a run of 64 such steps, each its own Submit. Floor: 64
 *   such submissions, each submitted once. In ns per step. Target: at most
 *   15 ns per step over the floor, and a ratio of at most 1.3.
 * - program/cpu-64: a run of 64 steps alternating cpu:0 and cpu:1; step k
 *   reads memory x[k % 2] and writes x[(k + 1) % 2] (host Pinned memory the
 *   two devices borrow), so each follows the step before on the other
 *   device. A sample is CPU_RUNS runs, then a wait for the last run's ends.
 *   Floor: the same 64 submissions by hand, CPU_RUNS times, then a wait for
 *   the two devices' last points. In ns per step. Target: ratio <= 1.3.
 * - program/alloc: heap allocations (malloc, calloc, realloc,
 *   posix_memalign interposed in this binary, on every thread) per run over
 *   every timed run of the rows above, after their warm-up. Target: 0.
 * - program/load-scaling: rig_program_load of host programs of 1k, 10k and
 *   100k steps (each a Submit of one no-op launch with one slot on one
 *   memory), built with the builder; each load timed alone, the program
 *   released untimed. The row's median is the 100k load's, its floor the
 *   10k load's, its ratio 100k / 10k. Target: 8 to 13 (linear).
 *
 * Rows and floors are interleaved sample by sample (which goes first
 * alternates); the table shows medians, stderr the p99s and the cost over
 * the floor.
 *
 * The kernel image is core_kernels.so (bench/kernels.c), at the path it was
 * built at, or at $RIG_BENCH_KERNELS.
 *
 * Usage: bench_program [RESULTS.jsonl] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_report.h"
#include "bench.h"
#include "rig/rig_core.h"
#include "rig/rig_desc.h"
#include "rig/rig_driver.h"
#include "rig/rig_program.h"

#ifndef RIG_BENCH_KERNELS
#define RIG_BENCH_KERNELS "core_kernels.so"
#endif

#define STEPS        64    /* steps of the 64-step rows */
#define REPS         64    /* runs of the one-step program per host-1 sample */
#define HOST_SAMPLES 10000 /* per host row (and as many of its floor) */
#define CPU_RUNS     64    /* runs per cpu-64 sample: ends waited after each */
#define CPU_SAMPLES  300
#define WARMUP       200 /* samples of each row and floor before timing */

/* ---- fixtures ----------------------------------------------------------------- */

static void die(const char *what, const rig_error *err) {
  fprintf(stderr, "bench_program: %s: %s\n", what, err->message);
  exit(1);
}

static void *so_bytes;
static size_t so_len;

static rig_image *load_image(rig_device *dev, rig_entry *noop) {
  rig_image *img = NULL;
  rig_error err;
  if (rig_image_load(dev, so_bytes, so_len, &img, &err) != RIG_OK) die("loading the kernels", &err);
  if (rig_image_entry(img, "noop", 4, noop, &err) != RIG_OK) die("the noop kernel", &err);
  return img;
}

/* ---- the floors: submissions made by hand -------------------------------------- */

/* A prepared submission, its block and its slots. */
typedef struct step {
  rig_submission *sub;
  _Alignas(8) unsigned char block[64];
  rig_buffer *slots[2];
} step;

/* One launch (one group of one thread) of noop on dev, as a program's
 * step makes it: params of nslots 64-bit words, word i a ref to slot i of
 * use uses[i]. */
static void make_step(step *st, rig_device *dev, rig_image *img, const rig_entry *noop,
                      size_t nslots, const rig_use *uses, rig_buffer *a, rig_buffer *b) {
  static const uint64_t params[2] = {0, 0};
  rig_ref refs[2] = {{0, 0, uses[0]}, {1, 8, nslots > 1 ? uses[1] : RIG_USE_READ}};
  rig_part part = {.kind = RIG_WORK_LAUNCH};
  part.u.launch.image = img;
  part.u.launch.entry = *noop;
  part.u.launch.params = params;
  part.u.launch.params_bytes = (uint32_t)(8 * nslots);
  part.u.launch.refs = refs;
  part.u.launch.nrefs = nslots;
  for (int i = 0; i < 3; i++) part.u.launch.groups[i] = part.u.launch.threads[i] = 1;
  rig_error err;
  if (rig_submission_make(dev, &part, 1, nslots, NULL, 0, &st->sub, &err) != RIG_OK)
    die("making a submission", &err);
  BENCH_CHECK(rig_submission_block_bytes(st->sub) <= sizeof st->block);
  rig_submission_block_init(st->sub, st->block);
  st->slots[0] = a;
  st->slots[1] = b;
}

static rig_point submit(step *st) {
  rig_point p;
  rig_error err;
  if (rig_submit(st->sub, st->block, st->slots, NULL, 0, &p, &err) != RIG_OK) die("a submit", &err);
  return p;
}

/* ---- the programs -------------------------------------------------------------- */

static char cpu_arch[48];

/* A Submit step on dev of one noop launch (one group of one thread) whose
 * params are nslots 64-bit words, word i a ref to slot i, a view of the
 * whole of memory mem[i] (64 bytes), of use uses[i]. */
static void add_noop_step(rig_desc *d, int64_t dev, int64_t img, size_t nslots, const int64_t *mem,
                          const rig_use *uses) {
  static const uint64_t params[2] = {0, 0};
  rig_desc_submit *s = rig_desc_add_submit(d, NULL, dev);
  BENCH_CHECK(s);
  int64_t k[2];
  for (size_t i = 0; i < nslots; i++) {
    k[i] = rig_desc_submit_add_slot(d, s, rig_desc_slot_memory(mem[i], 0, 64));
    BENCH_CHECK(k[i] >= 0);
  }
  rig_desc_part *part = rig_desc_submit_add_launch(d, s, img, "noop", params, 8 * nslots,
                                                   rig_desc_fixed(1), rig_desc_fixed(1));
  BENCH_CHECK(part);
  for (size_t i = 0; i < nslots; i++)
    BENCH_CHECK(rig_desc_part_add_ref(d, part, k[i], 8 * (int64_t)i, uses[i]) == 0);
}

/* A host program of n steps, each one noop launch writing memory 0. */
static rig_desc *host_desc(size_t n) {
  rig_desc *d = rig_desc_create();
  BENCH_CHECK(d);
  BENCH_CHECK(rig_desc_add_device(d, rig_host_isa()) == 0);
  BENCH_CHECK(rig_desc_add_alloc(d, 0, RIG_KIND_DEVICE, 64, RIG_COPIES_ONE) == 0);
  BENCH_CHECK(rig_desc_add_image(d, 0, so_bytes, so_len) == 0);
  static const int64_t mem[1] = {0};
  static const rig_use uses[1] = {RIG_USE_WRITE};
  for (size_t i = 0; i < n; i++) add_noop_step(d, 0, 0, 1, mem, uses);
  return d;
}

/* Devices host, cpu:0, cpu:1; memory 0 and 1 host Pinned; step k on
 * cpu:(k % 2) reads memory k % 2 and writes memory (k + 1) % 2. */
static rig_desc *cpu_desc(void) {
  rig_desc *d = rig_desc_create();
  BENCH_CHECK(d);
  BENCH_CHECK(rig_desc_add_device(d, rig_host_isa()) == 0);
  BENCH_CHECK(rig_desc_add_device(d, cpu_arch) == 1);
  BENCH_CHECK(rig_desc_add_device(d, cpu_arch) == 2);
  for (int j = 0; j < 2; j++)
    BENCH_CHECK(rig_desc_add_alloc(d, 0, RIG_KIND_PINNED, 64, RIG_COPIES_ONE) == j);
  BENCH_CHECK(rig_desc_add_image(d, 1, so_bytes, so_len) == 0);
  BENCH_CHECK(rig_desc_add_image(d, 2, so_bytes, so_len) == 1);
  static const rig_use uses[2] = {RIG_USE_READ, RIG_USE_WRITE};
  for (int k = 0; k < STEPS; k++) {
    int64_t mem[2] = {k % 2, (k + 1) % 2};
    add_noop_step(d, 1 + k % 2, k % 2, 2, mem, uses);
  }
  return d;
}

static rig_program *load_program(const rig_desc *d, rig_device *const *devs, size_t n) {
  rig_program *p = NULL;
  rig_error err;
  if (rig_program_load(d, devs, n, NULL, &p, &err) != RIG_OK) die("loading a program", &err);
  return p;
}

/* A loaded program with its frame (no inputs, no ints) and room for its
 * ends. */
typedef struct prog {
  rig_program *p;
  rig_frame f;
  rig_point *points;
  rig_point ends[4];
  size_t nends;
} prog;

static void prog_init(prog *x, rig_program *p) {
  memset(x, 0, sizeof *x);
  x->p = p;
  size_t n = 0;
  x->points = rig_program_step_points(p, &n);
  BENCH_CHECK(x->points);
  BENCH_CHECK(rig_program_devices(p) <= 4);
  x->f = (rig_frame){NULL, 0, NULL, 0, x->points, n};
}

static void prog_run(prog *x) {
  rig_error err;
  if (rig_program_run(x->p, &x->f, NULL, 0, x->ends, &x->nends, &err) != RIG_OK) die("a run", &err);
}

/* ---- the rows and their floors ------------------------------------------------- */

static prog host1_p, host64_p, cpu64_p;
static step host1_s, host64_s[STEPS], cpu64_s[STEPS];
static long runs_counted;

/* Each returns the sample's nanoseconds per run (host-1) or per step. */

static double row_host1(void) {
  uint64_t t0 = bench_now_ns();
  for (int r = 0; r < REPS; r++) prog_run(&host1_p);
  uint64_t t1 = bench_now_ns();
  return (double)(t1 - t0) / REPS;
}

static double floor_host1(void) {
  uint64_t t0 = bench_now_ns();
  for (int r = 0; r < REPS; r++) submit(&host1_s);
  uint64_t t1 = bench_now_ns();
  return (double)(t1 - t0) / REPS;
}

static double row_host64(void) {
  uint64_t t0 = bench_now_ns();
  prog_run(&host64_p);
  uint64_t t1 = bench_now_ns();
  return (double)(t1 - t0) / STEPS;
}

static double floor_host64(void) {
  uint64_t t0 = bench_now_ns();
  for (int k = 0; k < STEPS; k++) submit(&host64_s[k]);
  uint64_t t1 = bench_now_ns();
  return (double)(t1 - t0) / STEPS;
}

static double row_cpu64(void) {
  rig_error err;
  uint64_t t0 = bench_now_ns();
  for (int r = 0; r < CPU_RUNS; r++) prog_run(&cpu64_p);
  for (size_t i = 0; i < cpu64_p.nends; i++)
    if (rig_point_wait(cpu64_p.ends[i], &err) != RIG_OK) die("waiting for an end", &err);
  uint64_t t1 = bench_now_ns();
  return (double)(t1 - t0) / (CPU_RUNS * STEPS);
}

static double floor_cpu64(void) {
  rig_point last[2] = {0, 0};
  rig_error err;
  uint64_t t0 = bench_now_ns();
  for (int r = 0; r < CPU_RUNS; r++)
    for (int k = 0; k < STEPS; k++) last[k % 2] = submit(&cpu64_s[k]);
  for (int d = 0; d < 2; d++)
    if (rig_point_wait(last[d], &err) != RIG_OK) die("waiting for a cpu device", &err);
  uint64_t t1 = bench_now_ns();
  return (double)(t1 - t0) / (CPU_RUNS * STEPS);
}

/* Measures a row beside its floor (bench_measure), the row's allocations
 * counted; its runs (runs_per_sample a sample) count for program/alloc. */
static bench_measured measure(double (*row)(void), double (*floor_fn)(void), size_t samples,
                              long runs_per_sample) {
  runs_counted += (long)samples * runs_per_sample;
  return bench_measure(row, floor_fn, WARMUP, samples, rig_alloc_counting);
}

static int report(int argc, char **argv, const char *name, const char *per, size_t samples,
                  const bench_measured *m, const char *target, bool ok) {
  bench_row row = {
      .name = name,
      .unit = "ns",
      .median = m->median,
      .floor_median = m->floor_median,
      .ratio = m->floor_median > 0 ? m->median / m->floor_median : 0,
      .samples = samples,
      .target = target,
      .ok = ok,
  };
  int rc = bench_report(argc, argv, &row);
  fprintf(stderr, "(%s: %.1f ns per %s over the floor; p99 %.1f ns, floor p99 %.1f ns)\n", name,
          m->median - m->floor_median, per, m->p99, m->floor_p99);
  return rc;
}

/* ---- load scaling --------------------------------------------------------------- */

#define LOAD_SIZES 3
static const size_t load_steps[LOAD_SIZES] = {1000, 10000, 100000};
static const size_t load_samples[LOAD_SIZES] = {41, 21, 9};

/* Milliseconds of one rig_program_load of d on the host; the program is
 * released, untimed. */
static double time_load(const rig_desc *d) {
  rig_device *host = rig_host();
  uint64_t t0 = bench_now_ns();
  rig_program *p = load_program(d, &host, 1);
  uint64_t t1 = bench_now_ns();
  rig_program_release(p);
  rig_reclaim();
  return (double)(t1 - t0) / 1e6;
}

static int load_scaling(int argc, char **argv) {
  rig_desc *d[LOAD_SIZES];
  double *t[LOAD_SIZES], median[LOAD_SIZES], p99[LOAD_SIZES];
  for (int s = 0; s < LOAD_SIZES; s++) {
    d[s] = host_desc(load_steps[s]);
    t[s] = malloc(load_samples[s] * sizeof *t[s]);
    BENCH_CHECK(t[s]);
    time_load(d[s]); /* warm-up */
  }
  /* Round i loads each size that still wants samples, the order rotating. */
  for (size_t i = 0; i < load_samples[0]; i++)
    for (int j = 0; j < LOAD_SIZES; j++) {
      int s = (int)((i + (size_t)j) % LOAD_SIZES);
      if (i < load_samples[s]) t[s][i] = time_load(d[s]);
    }
  for (int s = 0; s < LOAD_SIZES; s++) {
    median[s] = bench_median(t[s], load_samples[s]);
    p99[s] = bench_p99(t[s], load_samples[s]);
    fprintf(stderr, "(program/load-scaling: %zu steps: median %.3f ms, p99 %.3f ms, %zu loads)\n",
            load_steps[s], median[s], p99[s], load_samples[s]);
    free(t[s]);
    rig_desc_free(d[s]);
  }
  double ratio = median[2] / median[1];
  bench_row row = {
      .name = "program/load-scaling",
      .unit = "ms",
      .median = median[2],
      .floor_median = median[1],
      .ratio = ratio,
      .samples = load_samples[2],
      .target = "100k/10k 8-13x",
      .ok = ratio >= 8 && ratio <= 13,
  };
  fprintf(stderr, "(program/load-scaling: 10k/1k %.2fx, 100k/10k %.2fx)\n", median[1] / median[0],
          ratio);
  return bench_report(argc, argv, &row);
}

/* ---- main ------------------------------------------------------------------------- */

int main(int argc, char **argv) {
  so_bytes = bench_read_kernels(RIG_BENCH_KERNELS, &so_len);
  if (!so_bytes) return 1;
  snprintf(cpu_arch, sizeof cpu_arch, "cpu-%s", rig_host_isa());
  rig_error err;
  rig_device *host = rig_host(), *cpu[2];
  BENCH_CHECK(host);
  unsigned threads = bench_start_pool();
  if (rig_device_open("cpu:0", &cpu[0], &err) != RIG_OK) die("cpu:0", &err);
  if (rig_device_open("cpu:1", &cpu[1], &err) != RIG_OK) die("cpu:1", &err);

  /* The programs. */
  rig_desc *d1 = host_desc(1), *d64 = host_desc(STEPS), *dc = cpu_desc();
  rig_device *cpu_devs[3] = {host, cpu[0], cpu[1]};
  prog_init(&host1_p, load_program(d1, &host, 1));
  prog_init(&host64_p, load_program(d64, &host, 1));
  prog_init(&cpu64_p, load_program(dc, cpu_devs, 3));

  /* The floors: the same submissions, made by hand. */
  rig_entry noop_h, noop_c[2];
  rig_image *img_h = load_image(host, &noop_h);
  rig_image *img_c[2] = {load_image(cpu[0], &noop_c[0]), load_image(cpu[1], &noop_c[1])};
  rig_buffer *hb;
  if (rig_buffer_create(host, RIG_KIND_DEVICE, 64, &hb, &err) != RIG_OK) die("a buffer", &err);
  static const rig_use write1[1] = {RIG_USE_WRITE};
  make_step(&host1_s, host, img_h, &noop_h, 1, write1, hb, NULL);
  for (int k = 0; k < STEPS; k++)
    make_step(&host64_s[k], host, img_h, &noop_h, 1, write1, hb, NULL);
  rig_buffer *x[2], *xb[2][2];
  for (int j = 0; j < 2; j++)
    if (rig_buffer_create(host, RIG_KIND_PINNED, 64, &x[j], &err) != RIG_OK) die("a buffer", &err);
  for (int dv = 0; dv < 2; dv++)
    for (int j = 0; j < 2; j++)
      if (rig_buffer_borrow(cpu[dv], x[j], &xb[dv][j], &err) != RIG_OK) die("a borrow", &err);
  static const rig_use read_write[2] = {RIG_USE_READ, RIG_USE_WRITE};
  for (int k = 0; k < STEPS; k++) {
    int dv = k % 2;
    make_step(&cpu64_s[k], cpu[dv], img_c[dv], &noop_c[dv], 2, read_write, xb[dv][k % 2],
              xb[dv][(k + 1) % 2]);
  }

  bench_measured h1 = measure(row_host1, floor_host1, HOST_SAMPLES, REPS);
  bench_measured h64 = measure(row_host64, floor_host64, HOST_SAMPLES, 1);
  bench_measured c64 = measure(row_cpu64, floor_cpu64, CPU_SAMPLES, CPU_RUNS);

  bench_print_header();
  int rc = 0;
  double over1 = h1.median - h1.floor_median, over64 = h64.median - h64.floor_median;
  double ratio64 = h64.floor_median > 0 ? h64.median / h64.floor_median : 0;
  double ratioc = c64.floor_median > 0 ? c64.median / c64.floor_median : 0;
  rc |= report(argc, argv, "program/host-1", "run", HOST_SAMPLES, &h1, "<=50ns over", over1 <= 50);
  rc |= report(argc, argv, "program/host-64", "step", HOST_SAMPLES, &h64, "<=15ns/st <=1.3x",
               over64 <= 15 && ratio64 <= 1.3);
  rc |= report(argc, argv, "program/cpu-64", "step", CPU_SAMPLES, &c64, "<=1.3x", ratioc <= 1.3);
  if (RIG_COUNTS_ALLOCATIONS)
    rc |= bench_alloc_report(argc, argv, "program/alloc", runs_counted, "runs");
  rc |= load_scaling(argc, argv);
  fprintf(stderr, "(%u threads run a host launch; RIG_WORKERS overrides)\n", threads);

  free(host1_p.points);
  free(host64_p.points);
  free(cpu64_p.points);
  rig_program_release(host1_p.p);
  rig_program_release(host64_p.p);
  rig_program_release(cpu64_p.p);
  rig_desc_free(d1);
  rig_desc_free(d64);
  rig_desc_free(dc);
  for (int k = 0; k < STEPS; k++) {
    rig_submission_release(host64_s[k].sub);
    rig_submission_release(cpu64_s[k].sub);
  }
  rig_submission_release(host1_s.sub);
  for (int dv = 0; dv < 2; dv++)
    for (int j = 0; j < 2; j++) rig_buffer_release(xb[dv][j]);
  for (int j = 0; j < 2; j++) rig_buffer_release(x[j]);
  rig_buffer_release(hb);
  for (int dv = 0; dv < 2; dv++) rig_image_release(img_c[dv]);
  rig_image_release(img_h);
  free(so_bytes);
  return rc == 0 ? 0 : 1;
}
