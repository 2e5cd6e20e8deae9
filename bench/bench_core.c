/* bench_core: the core's own rows, the floors that docs/bench.md's program rows
 * (program/host-1, program/host-64, program/cpu-64, program/alloc) compare
 * with. Each row runs beside a floor that calls the kernel's function
 * directly (its rig_entry value as a rig_launch_fn) with the same
 * parameters, so a ratio is the core's cost over running the code.
 *
 * - core/host-1: one prepared submission of one launch (one group) of the
 *   no-op kernel, with a ref (Write) to a slot, submitted directly on the
 *   host with a caller-owned block; a sample is REPS such submits in a row,
 *   in ns per submit. Floor: REPS calls of the function.
 * - core/host-64: 64 such submissions, each its own (one per step of a
 *   64-step program), each submitted once per sample, in ns per submit.
 *   Floor: 64 calls of the function, each with its step's parameters.
 * - core/cpu-64: 64 submissions alternating cpu:0 and cpu:1; step i reads
 *   the buffer step i - 1 wrote and writes the one step i - 1 read, so each
 *   follows the previous one on the other device (an in-queue wait); the
 *   two devices' last points are waited at the end of each sample of 64.
 *   In ns per submit. Floor: the same 64 direct calls.
 * - core/alloc: heap allocations (malloc, calloc, realloc, posix_memalign
 *   interposed in this binary) per submit over every timed submit of the
 *   rows above, on every thread. Target: 0.
 *
 * Rows and floors are interleaved sample by sample (which goes first
 * alternates); the table shows medians, stderr the p99s. Targets: report
 * only, except core/alloc.
 *
 * The kernel image is core_kernels.so (bench/kernels.c), at the path it was
 * built at, or at $RIG_BENCH_KERNELS.
 *
 * Usage: bench_core [RESULTS.jsonl] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_report.h"
#include "bench.h"
#include "rig/rig_core.h"
#include "rig/rig_driver.h"
#include "rig/rig_host_abi.h"

#ifndef RIG_BENCH_KERNELS
#define RIG_BENCH_KERNELS "core_kernels.so"
#endif

#define STEPS        64   /* steps of the 64-step rows */
#define REPS         64   /* submits of one submission per host-1 sample */
#define HOST_SAMPLES 5000 /* per host row (and as many of its floor) */
#define CPU_SAMPLES  2000
#define WARMUP       100 /* samples of each row run before timing */

/* ---- the work --------------------------------------------------------------- */

static rig_launch_fn *noop_fn;
static const rig_grid one_group = {.groups = {1, 1, 1}, .threads = {1, 1, 1}};

/* A prepared submission, its block and slots, and the parameters its
 * function sees (the ref patched), for the floor. */
typedef struct step {
  rig_submission *sub;
  _Alignas(8) unsigned char block[64];
  rig_buffer *slots[2];
  uint64_t params[2];
} step;

static void die(const char *what, const rig_error *err) {
  fprintf(stderr, "bench_core: %s: %s\n", what, err->message);
  exit(1);
}

static rig_image *load(rig_device *dev, const void *so, size_t len, rig_entry *noop) {
  rig_image *img = NULL;
  rig_error err;
  if (rig_image_load(dev, so, len, &img, &err) != RIG_OK) die("loading the kernels", &err);
  if (rig_image_entry(img, "noop", 4, noop, &err) != RIG_OK) die("the noop kernel", &err);
  return img;
}

/* A one-launch submission of noop on dev whose params are two 64-bit words:
 * the first a ref to slot 0 of use u0, the second one to slot 1 of use u1
 * when nslots is 2. */
static void make_step(step *st, rig_device *dev, rig_image *img, const rig_entry *noop,
                      size_t nslots, rig_use u0, rig_use u1) {
  static const uint64_t params[2] = {0, 0};
  rig_ref refs[2] = {{0, 0, u0}, {1, 8, u1}};
  rig_part part = {.kind = RIG_WORK_LAUNCH};
  part.u.launch.image = img;
  part.u.launch.entry = *noop;
  part.u.launch.params = params;
  part.u.launch.params_bytes = sizeof params;
  part.u.launch.refs = refs;
  part.u.launch.nrefs = nslots;
  for (int i = 0; i < 3; i++) part.u.launch.groups[i] = part.u.launch.threads[i] = 1;
  rig_error err;
  if (rig_submission_make(dev, &part, 1, nslots, NULL, 0, &st->sub, &err) != RIG_OK)
    die("making a submission", &err);
  BENCH_CHECK(rig_submission_block_bytes(st->sub) <= sizeof st->block);
  rig_submission_block_init(st->sub, st->block);
}

/* The slots, and the parameters the function sees with them. */
static void set_slots(step *st, rig_buffer *a, rig_buffer *b) {
  st->slots[0] = a;
  st->slots[1] = b;
  st->params[0] = rig_buffer_address(a);
  st->params[1] = b ? rig_buffer_address(b) : 0;
}

static rig_point submit(step *st) {
  rig_point p;
  rig_error err;
  if (rig_submit(st->sub, st->block, st->slots, NULL, 0, &p, &err) != RIG_OK) die("a submit", &err);
  return p;
}

/* ---- the rows and their floors ---------------------------------------------- */

static step host1, host64[STEPS], cpu64[STEPS];
static long submits_counted;

/* Each returns the sample's nanoseconds per submit (or per call). */

static double row_host1(void) {
  uint64_t t0 = bench_now_ns();
  for (int r = 0; r < REPS; r++) submit(&host1);
  uint64_t t1 = bench_now_ns();
  return (double)(t1 - t0) / REPS;
}

static double floor_host1(void) {
  uint64_t t0 = bench_now_ns();
  for (int r = 0; r < REPS; r++) noop_fn(host1.params, &one_group);
  uint64_t t1 = bench_now_ns();
  return (double)(t1 - t0) / REPS;
}

static double row_host64(void) {
  uint64_t t0 = bench_now_ns();
  for (int k = 0; k < STEPS; k++) submit(&host64[k]);
  uint64_t t1 = bench_now_ns();
  return (double)(t1 - t0) / STEPS;
}

static double floor_host64(void) {
  uint64_t t0 = bench_now_ns();
  for (int k = 0; k < STEPS; k++) noop_fn(host64[k].params, &one_group);
  uint64_t t1 = bench_now_ns();
  return (double)(t1 - t0) / STEPS;
}

static double row_cpu64(void) {
  rig_point last[2] = {0, 0};
  rig_error err;
  uint64_t t0 = bench_now_ns();
  for (int k = 0; k < STEPS; k++) last[k % 2] = submit(&cpu64[k]);
  for (int d = 0; d < 2; d++)
    if (rig_point_wait(last[d], &err) != RIG_OK) die("waiting for a cpu device", &err);
  uint64_t t1 = bench_now_ns();
  return (double)(t1 - t0) / STEPS;
}

static double floor_cpu64(void) {
  uint64_t t0 = bench_now_ns();
  for (int k = 0; k < STEPS; k++) noop_fn(cpu64[k].params, &one_group);
  uint64_t t1 = bench_now_ns();
  return (double)(t1 - t0) / STEPS;
}

/* Measures a row beside its floor (bench_measure), the row's allocations
 * counted; its submits (submits_per_sample a sample) count for core/alloc. */
static bench_measured measure(double (*row)(void), double (*floor_fn)(void), size_t samples,
                              long submits_per_sample) {
  submits_counted += (long)samples * submits_per_sample;
  return bench_measure(row, floor_fn, WARMUP, samples, rig_alloc_counting);
}

static int report(int argc, char **argv, const char *name, size_t samples,
                  const bench_measured *m) {
  bench_row row = {
      .name = name,
      .unit = "ns",
      .median = m->median,
      .floor_median = m->floor_median,
      .ratio = m->floor_median > 0 ? m->median / m->floor_median : 0,
      .samples = samples,
      .target = "report",
      .ok = true,
  };
  int rc = bench_report(argc, argv, &row);
  fprintf(stderr, "(%s: p99 %.1f ns per submit; floor p99 %.1f ns per call)\n", name, m->p99,
          m->floor_p99);
  return rc;
}

int main(int argc, char **argv) {
  size_t len = 0;
  void *so = bench_read_kernels(RIG_BENCH_KERNELS, &len);
  if (!so) return 1;
  rig_error err;
  rig_device *host = rig_host(), *cpu[2];
  BENCH_CHECK(host);
  unsigned threads = bench_start_pool();
  if (rig_device_open("cpu:0", &cpu[0], &err) != RIG_OK) die("cpu:0", &err);
  if (rig_device_open("cpu:1", &cpu[1], &err) != RIG_OK) die("cpu:1", &err);
  rig_entry noop_h, noop_c[2];
  rig_image *img_h = load(host, so, len, &noop_h);
  rig_image *img_c[2] = {load(cpu[0], so, len, &noop_c[0]), load(cpu[1], so, len, &noop_c[1])};
  free(so);
  noop_fn = (rig_launch_fn *)(uintptr_t)noop_h.value;

  /* The host rows write one host buffer. */
  rig_buffer *hb;
  if (rig_buffer_create(host, RIG_KIND_DEVICE, 64, &hb, &err) != RIG_OK) die("a buffer", &err);
  make_step(&host1, host, img_h, &noop_h, 1, RIG_USE_WRITE, RIG_USE_WRITE);
  set_slots(&host1, hb, NULL);
  for (int k = 0; k < STEPS; k++) {
    make_step(&host64[k], host, img_h, &noop_h, 1, RIG_USE_WRITE, RIG_USE_WRITE);
    set_slots(&host64[k], hb, NULL);
  }

  /* The cpu row: host buffers x[0], x[1], borrowed by both devices; step k
   * on cpu:(k % 2) reads x[k % 2] and writes x[(k + 1) % 2]. */
  rig_buffer *x[2], *xb[2][2];
  for (int j = 0; j < 2; j++)
    if (rig_buffer_create(host, RIG_KIND_PINNED, 64, &x[j], &err) != RIG_OK) die("a buffer", &err);
  for (int d = 0; d < 2; d++)
    for (int j = 0; j < 2; j++)
      if (rig_buffer_borrow(cpu[d], x[j], &xb[d][j], &err) != RIG_OK) die("a borrow", &err);
  for (int k = 0; k < STEPS; k++) {
    int d = k % 2;
    make_step(&cpu64[k], cpu[d], img_c[d], &noop_c[d], 2, RIG_USE_READ, RIG_USE_WRITE);
    set_slots(&cpu64[k], xb[d][k % 2], xb[d][(k + 1) % 2]);
  }

  bench_measured h1 = measure(row_host1, floor_host1, HOST_SAMPLES, REPS);
  bench_measured h64 = measure(row_host64, floor_host64, HOST_SAMPLES, STEPS);
  bench_measured c64 = measure(row_cpu64, floor_cpu64, CPU_SAMPLES, STEPS);

  bench_print_header();
  int rc = 0;
  rc |= report(argc, argv, "core/host-1", HOST_SAMPLES, &h1);
  rc |= report(argc, argv, "core/host-64", HOST_SAMPLES, &h64);
  rc |= report(argc, argv, "core/cpu-64", CPU_SAMPLES, &c64);
  if (RIG_COUNTS_ALLOCATIONS)
    rc |= bench_alloc_report(argc, argv, "core/alloc", submits_counted, "submits");
  fprintf(stderr, "(%u threads run a host launch; RIG_WORKERS overrides)\n", threads);

  for (int k = 0; k < STEPS; k++) {
    rig_submission_release(host64[k].sub);
    rig_submission_release(cpu64[k].sub);
  }
  rig_submission_release(host1.sub);
  for (int d = 0; d < 2; d++)
    for (int j = 0; j < 2; j++) rig_buffer_release(xb[d][j]);
  for (int j = 0; j < 2; j++) rig_buffer_release(x[j]);
  rig_buffer_release(hb);
  for (int d = 0; d < 2; d++) rig_image_release(img_c[d]);
  rig_image_release(img_h);
  return rc == 0 ? 0 : 1;
}
