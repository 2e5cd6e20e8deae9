/* bench_remote: the job's rows (docs/bench.md), an MPI program. scripts/bench.sh
 * runs it twice: `mpirun -n 2` for remote/run, remote/run ucx-floor and
 * remote/copy-64MiB, `mpirun -n 4` for remote/host-64 x4 and
 * remote/idle-cpu (the rows a run takes follow from its size: fewer than
 * 4 ranks the first three, 4 or more the last two).
 *
 * - remote/run (2 ranks): an empty program (one host Submit of one launch,
 *   one group, of the no-op kernel; no inputs, no ints) loaded on machine
 *   1 from the controller, then run and its end waited (rig_point_wait),
 *   again and again; a sample is one run, in ns. Floor: an MPI ping-pong
 *   of the run words' bytes (rig_program_run_words_count(0, 0) * 8) on an
 *   MPI_Comm_dup of MPI_COMM_WORLD, rank 1 echoing; a sample is one round
 *   trip. Rank 1 switches between serving the job and echoing: the row and
 *   its floor alternate by batches (a job started, its program loaded, RUNS
 *   runs, the job closed; then a batch of as many round trips; which goes
 *   first alternates), so that no control thread runs during the floor's
 *   batches. Target: ratio <= 2.
 * - remote/run ucx-floor: the same runs beside a floor by hand with UCX
 *   (remote_floor.c, a context of its own): 16 bytes ucp_put_nbx into the
 *   peer's registered memory, a fence and an atomic add on its count,
 *   which the peer answers the same way; in batches interleaved as above.
 *   Report only.
 * - remote/run-after-idle: a run after 2 s of quiet, beside MPI's
 *   ping-pong after the same quiet (rank 1 busy in MPI_Recv): what the
 *   machines make of a quiet is in both. Samples alternate, a pair at a
 *   time. Target: ratio <= 1.5.
 * - remote/run-after-idle poll (2 ranks, RIG_JOB_POLL=1 in the
 *   environment: that row alone): the same, the agent's executor polling
 *   through the quiet as the floor's receiver does. Target: ratio <= 1.5.
 * - remote/copy-64MiB (2 ranks): 64 MiB of a controller host buffer
 *   copied into memory of machine 1's host and back, waited; a sample is
 *   both, in ns. Floor: ucp_put_nbx of 64 MiB into rank 1's registered
 *   memory and ucp_get_nbx back, each flushed, by hand; batches of each
 *   interleaved. Target: ratio <= 1.25 (>= 0.8x the floor's bandwidth).
 * - remote/host-64 x4 (4 ranks): a 64-step host program (64 Submit steps,
 *   each one launch of the no-op kernel) loaded on machines 0..3; a sample
 *   runs it on machines 1, 2, 3 and then 0 (here, done on return) and
 *   waits every end, in ns per run. Its "floor" is the same program run on
 *   machine 0 alone (local), sample by sample interleaved. Report only.
 * - remote/idle-cpu (4 ranks): a job of every rank, a program loaded and
 *   run once on each machine, then 10 s idle ($RIG_BENCH_IDLE_S): the
 *   utime + stime of every rank (/proc/<pid>/stat) over that time, as %
 *   of one core. Target: < 2.
 *
 * Ranks other than 0 are agents: they follow the controller's commands
 * (MPI_Bcast on MPI_COMM_WORLD): serve one job, echo a batch, or quit.
 * The table shows medians, stderr the p99s.
 *
 * The kernel image is core_kernels.so (bench/kernels.c), at the path it was
 * built at, or at $RIG_BENCH_KERNELS; only rank 0 reads it (the agents get
 * it inside the program). $RIG_BENCH_REMOTE_BATCHES and
 * $RIG_BENCH_REMOTE_RUNS override the batches and the runs per batch.
 *
 * Usage: mpirun -n 2|4 bench_remote [RESULTS.jsonl] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "remote_floor.h"
#include "rig/rig_job.h"
#include "rig/rig_program.h"

#ifndef RIG_BENCH_KERNELS
#define RIG_BENCH_KERNELS "core_kernels.so"
#endif

#define BATCHES   20  /* remote/run: batches of the row and of its floor */
#define RUNS      500 /* timed runs (or round trips) per batch */
#define WARMUP    50  /* untimed ones at the start of each batch */
#define STEPS     64  /* steps of the x4 row's program */
#define X4_RUNS   4000
#define X4_WARMUP 100
#define PING_TAG  7301

enum { CMD_JOB = 1, CMD_PING = 2, CMD_QUIT = 3, CMD_TRIP = 4, CMD_COPIES = 5 };

#define CHECK(cond)                                                                                \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      fprintf(stderr, "bench_remote: %s:%d: %s failed\n", __FILE__, __LINE__, #cond);              \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                                \
    }                                                                                              \
  } while (0)

static void die(const char *what, const rig_error *err) {
  fprintf(stderr, "bench_remote: %s: %s\n", what, err->message);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

static MPI_Comm ping_comm;

static size_t env_count(const char *name, size_t fallback) {
  const char *v = getenv(name);
  long n = v && v[0] ? atol(v) : 0;
  return n > 0 ? (size_t)n : fallback;
}

/* ---- commands ------------------------------------------------------------------- */

/* cmd, and for CMD_PING the round trips and their bytes. */
static void command(int cmd, int count, int bytes) {
  int c[3] = {cmd, count, bytes};
  MPI_Bcast(c, 3, MPI_INT, 0, MPI_COMM_WORLD);
}

static void agent_loop(int rank) {
  for (;;) {
    int c[3];
    MPI_Bcast(c, 3, MPI_INT, 0, MPI_COMM_WORLD);
    if (c[0] == CMD_JOB) {
      rig_job *job;
      rig_error err;
      if (rig_job_start(MPI_COMM_WORLD, &job, &err) != RIG_OK) die("rig_job_start", &err);
      if (rig_job_serve(job, &err) != RIG_OK) die("serving", &err);
      if (rig_job_close(job, &err) != RIG_OK) die("closing", &err);
    } else if (c[0] == CMD_TRIP) {
      if (rank == 1) remote_floor_answer((size_t)c[1]);
    } else if (c[0] == CMD_COPIES) {
      if (rank == 1) remote_floor_serve_copies((size_t)c[1]);
    } else if (c[0] == CMD_PING) {
      if (rank != 1) continue;
      unsigned char buf[4096];
      CHECK(c[2] > 0 && (size_t)c[2] <= sizeof buf);
      for (int i = 0; i < c[1]; i++) {
        MPI_Recv(buf, c[2], MPI_BYTE, 0, PING_TAG, ping_comm, MPI_STATUS_IGNORE);
        MPI_Send(buf, c[2], MPI_BYTE, 0, PING_TAG, ping_comm);
      }
    } else {
      return;
    }
  }
}

static rig_job *job_start(void) {
  command(CMD_JOB, 0, 0);
  rig_job *job;
  rig_error err;
  if (rig_job_start(MPI_COMM_WORLD, &job, &err) != RIG_OK) die("rig_job_start", &err);
  return job;
}

static void job_close(rig_job *job) {
  rig_error err;
  if (rig_job_close(job, &err) != RIG_OK) die("closing the job", &err);
}

/* ---- the programs and their runs ------------------------------------------------ */

/* A host program of `steps` Submit steps, each one launch (one group of one
 * thread) of the no-op kernel; no inputs, no ints. */
static rig_desc *noop_program(const void *kernels, size_t len, int steps) {
  rig_desc *d = rig_desc_create();
  CHECK(d);
  CHECK(rig_desc_add_device(d, rig_host_isa()) == 0);
  CHECK(rig_desc_add_image(d, 0, kernels, len) == 0);
  for (int s = 0; s < steps; s++) {
    rig_desc_submit *sub = rig_desc_add_submit(d, NULL, 0);
    CHECK(sub);
    CHECK(rig_desc_submit_add_launch(d, sub, 0, "noop", NULL, 0, rig_desc_fixed(1),
                                     rig_desc_fixed(1)));
  }
  rig_error err;
  if (rig_desc_check(d, &err) != RIG_OK) die("the program", &err);
  return d;
}

typedef struct loaded {
  rig_program *prog;
  rig_point *points;
  size_t npoints;
  rig_frame frame;
  rig_point ends[4];
  size_t nends;
} loaded;

/* Loads d on machine m's host (its own when m is 0, a proxy otherwise). */
static void load_on(rig_job *job, size_t m, const rig_desc *d, loaded *l) {
  rig_device *host = rig_job_device(job, m, 0);
  CHECK(host);
  rig_error err;
  if (rig_program_load(d, &host, 1, NULL, &l->prog, &err) != RIG_OK) die("loading", &err);
  l->points = rig_program_step_points(l->prog, &l->npoints);
  CHECK(l->points);
  CHECK(rig_program_devices(l->prog) <= sizeof l->ends / sizeof l->ends[0]);
  l->frame = (rig_frame){NULL, 0, NULL, 0, l->points, l->npoints};
}

static void unload(loaded *l) {
  rig_program_release(l->prog);
  free(l->points);
}

static void run(loaded *l) {
  rig_error err;
  if (rig_program_run(l->prog, &l->frame, NULL, 0, l->ends, &l->nends, &err) != RIG_OK)
    die("a run", &err);
}

static void wait_ends(loaded *l) {
  rig_error err;
  for (size_t e = 0; e < l->nends; e++)
    if (rig_point_wait(l->ends[e], &err) != RIG_OK) die("waiting for a run", &err);
}

/* ---- remote/run -------------------------------------------------------------------- */

/* One job: the empty program loaded on machine 1, warmed up, then `runs`
 * runs, each waited, timed one by one into out. */
static void run_batch(const rig_desc *d, size_t warmup, size_t runs, double *out, double *handed) {
  rig_job *job = job_start();
  loaded l;
  load_on(job, 1, d, &l);
  for (size_t i = 0; i < warmup; i++) {
    run(&l);
    wait_ends(&l);
  }
  for (size_t i = 0; i < runs; i++) {
    uint64_t t0 = bench_now_ns();
    run(&l);
    uint64_t t1 = bench_now_ns();
    wait_ends(&l);
    out[i] = (double)(bench_now_ns() - t0);
    if (handed) handed[i] = (double)(t1 - t0);
  }
  unload(&l);
  job_close(job);
}

/* Round trips of `bytes` bytes with rank 1 on ping_comm, outside any job. */
static void ping_batch(int bytes, size_t warmup, size_t trips, double *out) {
  unsigned char buf[4096];
  CHECK(bytes > 0 && (size_t)bytes <= sizeof buf);
  memset(buf, 0x5a, (size_t)bytes);
  command(CMD_PING, (int)(warmup + trips), bytes);
  for (size_t i = 0; i < warmup + trips; i++) {
    uint64_t t0 = bench_now_ns();
    MPI_Send(buf, bytes, MPI_BYTE, 1, PING_TAG, ping_comm);
    MPI_Recv(buf, bytes, MPI_BYTE, 1, PING_TAG, ping_comm, MPI_STATUS_IGNORE);
    if (i >= warmup) out[i - warmup] = (double)(bench_now_ns() - t0);
  }
}

/* Round trips by hand with UCX (remote_floor.h), outside any job. */
static void trip_batch(size_t warmup, size_t trips, double *out) {
  command(CMD_TRIP, (int)(warmup + trips), 0);
  for (size_t i = 0; i < warmup + trips; i++) {
    double ns = remote_floor_trip();
    if (i >= warmup) out[i - warmup] = ns;
  }
}

/* remote/run-after-idle: a run after IDLE_S seconds of quiet (every
 * thread of the job asleep), beside MPI's own round trip after the same
 * quiet (rank 1 waiting in MPI_Recv, as MPI does, busy): what the machines
 * make of a quiet is in both, and the row is what the job adds (its
 * agent's wake-up). Samples alternate, each pair after its own quiet: a
 * job started, its program loaded and run once, the quiet, the timed run,
 * the job closed; then the quiet and the timed ping-pong. */
#define IDLE_S       2
#define IDLE_SAMPLES 8

static double ping_after_idle(int bytes) {
  unsigned char buf[4096];
  CHECK(bytes > 0 && (size_t)bytes <= sizeof buf);
  memset(buf, 0x5a, (size_t)bytes);
  command(CMD_PING, 1, bytes);
  struct timespec quiet = {IDLE_S, 0};
  nanosleep(&quiet, NULL);
  uint64_t t0 = bench_now_ns();
  MPI_Send(buf, bytes, MPI_BYTE, 1, PING_TAG, ping_comm);
  MPI_Recv(buf, bytes, MPI_BYTE, 1, PING_TAG, ping_comm, MPI_STATUS_IGNORE);
  return (double)(bench_now_ns() - t0);
}

static double run_after_idle(const rig_desc *d) {
  rig_job *job = job_start();
  loaded l;
  load_on(job, 1, d, &l);
  run(&l);
  wait_ends(&l);
  struct timespec quiet = {IDLE_S, 0};
  nanosleep(&quiet, NULL);
  uint64_t t0 = bench_now_ns();
  run(&l);
  wait_ends(&l);
  double ns = (double)(bench_now_ns() - t0);
  unload(&l);
  job_close(job);
  return ns;
}

static int remote_after_idle(int argc, char **argv, const rig_desc *d, double run_median, int bytes,
                             const char *name) {
  size_t samples = env_count("RIG_BENCH_IDLE_SAMPLES", IDLE_SAMPLES);
  double *r = malloc(samples * sizeof *r), *m = malloc(samples * sizeof *m);
  CHECK(r && m);
  for (size_t i = 0; i < samples; i++) {
    /* Which goes first alternates. */
    if (i % 2) m[i] = ping_after_idle(bytes);
    r[i] = run_after_idle(d);
    if (!(i % 2)) m[i] = ping_after_idle(bytes);
  }
  double median = bench_median(r, samples), mpi = bench_median(m, samples);
  bench_row row = {
      .name = bench_row_name(name),
      .unit = "ns",
      .median = median,
      .floor_median = mpi,
      .ratio = median / mpi,
      .samples = samples,
      .target = "<= 1.5x",
      .ok = median / mpi <= 1.5,
  };
  int rc = bench_report(argc, argv, &row);
  fprintf(stderr,
          "(%s: a run after %d s of quiet, p99 %.0f ns; floor: a %d-byte MPI ping-pong after "
          "the same quiet, rank 1 busy in MPI_Recv, p99 %.0f ns",
          name, IDLE_S, bench_p99(r, samples), bytes, bench_p99(m, samples));
  if (run_median > 0) fprintf(stderr, "; %.2fx remote/run's median", median / run_median);
  fprintf(stderr, ")\n");
  free(r);
  free(m);
  return rc;
}

static int remote_run(int argc, char **argv, const void *kernels, size_t len) {
  size_t batches = env_count("RIG_BENCH_REMOTE_BATCHES", BATCHES);
  size_t runs = env_count("RIG_BENCH_REMOTE_RUNS", RUNS);
  size_t n = batches * runs;
  rig_desc *d = noop_program(kernels, len, 1);
  int bytes = (int)(rig_program_run_words_count(0, (size_t)d->ints) * 8);
  double *r = malloc(n * sizeof *r), *f = malloc(n * sizeof *f), *u = malloc(n * sizeof *u);
  double *h = malloc(n * sizeof *h);
  CHECK(r && f && u && h);
  for (size_t b = 0; b < batches; b++) {
    if (b % 2) ping_batch(bytes, WARMUP, runs, f + b * runs);
    if (b % 2) trip_batch(WARMUP, runs, u + b * runs);
    run_batch(d, WARMUP, runs, r + b * runs, h + b * runs);
    if (b % 2 == 0) ping_batch(bytes, WARMUP, runs, f + b * runs);
    if (b % 2 == 0) trip_batch(WARMUP, runs, u + b * runs);
  }
  double median = bench_median(r, n), p99 = bench_p99(r, n);
  double floor_median = bench_median(f, n), floor_p99 = bench_p99(f, n);
  double ratio = median / floor_median;
  bench_print_header();
  bool hosts = bench_across_hosts();
  bench_row row = {
      .name = bench_row_name("remote/run"),
      .unit = "ns",
      .median = median,
      .floor_median = floor_median,
      .ratio = ratio,
      .samples = n,
      .target = hosts ? "<= 2x, p99 <= 10x" : "<= 2x floor",
      .ok = ratio <= 2.0 && (!hosts || p99 <= 10 * median),
  };
  int rc = bench_report(argc, argv, &row);
  fprintf(stderr,
          "(remote/run: p99 %.1f ns per run; floor: %d-byte MPI ping-pong, p99 %.1f ns; "
          "%zu batches of %zu)\n",
          p99, bytes, floor_p99, batches, runs);
  double ucx_median = bench_median(u, n), ucx_p99 = bench_p99(u, n);
  bench_row urow = {
      .name = bench_row_name("remote/run ucx-floor"),
      .unit = "ns",
      .median = median,
      .floor_median = ucx_median,
      .ratio = median / ucx_median,
      .samples = n,
      .target = hosts ? "<= 1.3x floor" : "report",
      .ok = !hosts || median / ucx_median <= 1.3,
  };
  if (bench_report(argc, argv, &urow) != 0) rc = -1;
  fprintf(stderr,
          "(remote/run ucx-floor: the same runs beside a 16-byte ucp_put_nbx, fence and "
          "atomic add each way; p99 %.1f ns)\n",
          ucx_p99);
  fprintf(stderr,
          "(remote/run: of it, rig_program_run on the controller (checks, words, the hand-over "
          "into the ring) takes a median %.1f ns; the rest is the agent's take, run and report "
          "and the waiter seeing it)\n",
          bench_median(h, n));
  if (remote_after_idle(argc, argv, d, median, bytes, "remote/run-after-idle") != 0) rc = -1;
  free(r);
  free(f);
  free(u);
  free(h);
  rig_desc_free(d);
  return rc;
}

/* remote/run-after-idle poll: the same, with the agent's executors polling
 * through the quiet (RIG_JOB_POLL=1 in this run's environment), as the
 * floor's MPI_Recv does: scripts/bench.sh's third run, this row alone. */
static int remote_poll(int argc, char **argv, const void *kernels, size_t len) {
  rig_desc *d = noop_program(kernels, len, 1);
  int bytes = (int)(rig_program_run_words_count(0, (size_t)d->ints) * 8);
  bench_print_header();
  int rc = remote_after_idle(argc, argv, d, 0, bytes, "remote/run-after-idle poll");
  rig_desc_free(d);
  return rc;
}

/* ---- remote/copy-64MiB ------------------------------------------------------------ */

/* One job: FLOOR_BIG bytes of a controller host buffer copied into memory
 * of machine 1's host and back, waited; a sample is both, in ns. */
static void copy_batch(size_t warmup, size_t samples, double *out) {
  rig_job *job = job_start();
  rig_buffer *src, *back, *remote;
  rig_error err;
  if (rig_buffer_create(rig_host(), RIG_KIND_PINNED, FLOOR_BIG, &src, &err) != RIG_OK ||
      rig_buffer_create(rig_host(), RIG_KIND_PINNED, FLOOR_BIG, &back, &err) != RIG_OK ||
      rig_buffer_create(rig_job_device(job, 1, 0), RIG_KIND_PINNED, FLOOR_BIG, &remote, &err) !=
          RIG_OK)
    die("buffers for the copies", &err);
  memset(rig_buffer_host(src), 0x5a, FLOOR_BIG);
  memset(rig_buffer_host(back), 0, FLOOR_BIG);
  for (size_t i = 0; i < warmup + samples; i++) {
    uint64_t t0 = bench_now_ns();
    rig_point p;
    if (rig_buffer_copy_submit(src, 0, remote, 0, FLOOR_BIG, NULL, 0, &p, &err) != RIG_OK ||
        rig_buffer_copy_submit(remote, 0, back, 0, FLOOR_BIG, NULL, 0, &p, &err) != RIG_OK ||
        rig_point_wait(p, &err) != RIG_OK)
      die("a copy", &err);
    if (i >= warmup) out[i - warmup] = (double)(bench_now_ns() - t0);
  }
  const unsigned char *b = rig_buffer_host(back);
  CHECK(b[0] == 0x5a && b[FLOOR_BIG - 1] == 0x5a);
  rig_buffer_release(remote);
  rig_buffer_release(src);
  rig_buffer_release(back);
  job_close(job);
}

static void floor_copy_batch(size_t warmup, size_t samples, double *out) {
  command(CMD_COPIES, (int)(warmup + samples), 0);
  for (size_t i = 0; i < warmup + samples; i++) {
    double ns = remote_floor_copy();
    if (i >= warmup) out[i - warmup] = ns;
  }
}

static int remote_copy(int argc, char **argv) {
  size_t batches = env_count("RIG_BENCH_REMOTE_COPY_BATCHES", 6);
  size_t per = env_count("RIG_BENCH_REMOTE_COPIES", 8), n = batches * per;
  double *r = malloc(n * sizeof *r), *f = malloc(n * sizeof *f);
  CHECK(r && f);
  for (size_t b = 0; b < batches; b++) {
    if (b % 2) floor_copy_batch(1, per, f + b * per);
    copy_batch(1, per, r + b * per);
    if (b % 2 == 0) floor_copy_batch(1, per, f + b * per);
  }
  double median = bench_median(r, n), floor_median = bench_median(f, n);
  bench_print_header();
  bench_row row = {
      .name = bench_row_name("remote/copy-64MiB"),
      .unit = "ns",
      .median = median,
      .floor_median = floor_median,
      .ratio = median / floor_median,
      .samples = n,
      .target = "<= 1.25x floor",
      .ok = median / floor_median <= 1.25,
  };
  int rc = bench_report(argc, argv, &row);
  fprintf(stderr,
          "(remote/copy-64MiB: 64 MiB to machine 1 and back, %.0f MB/s; floor: ucp_put_nbx and "
          "ucp_get_nbx of 64 MiB, each flushed, %.0f MB/s; target >= 0.8x its bandwidth)\n",
          2.0 * FLOOR_BIG / median * 1e3, 2.0 * FLOOR_BIG / floor_median * 1e3);
  free(r);
  free(f);
  return rc;
}

/* ---- remote/idle-cpu ------------------------------------------------------------- */

static int *pids;

/* utime + stime of every rank, in clock ticks. */
static double cpu_ticks(int size) {
  double total = 0;
  for (int r = 0; r < size; r++) {
    char path[64], buf[4096];
    snprintf(path, sizeof path, "/proc/%d/stat", pids[r]);
    FILE *f = fopen(path, "r");
    CHECK(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    /* Fields after the command's closing parenthesis: state is field 3,
     * utime 14 and stime 15. */
    char *at = strrchr(buf, ')');
    CHECK(at);
    unsigned long long ut = 0, st = 0;
    CHECK(sscanf(at + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) == 2);
    total += (double)(ut + st);
  }
  return total;
}

/* A job of every rank, a program loaded and run once on each machine,
 * then idle: the CPU time all ranks use over the next seconds. */
static int remote_idle(int argc, char **argv, const void *kernels, size_t len, int size) {
  double seconds = (double)env_count("RIG_BENCH_IDLE_S", 10);
  rig_desc *d = noop_program(kernels, len, 1);
  rig_job *job = job_start();
  loaded l[16];
  size_t n = (size_t)size < 16 ? (size_t)size : 16;
  for (size_t m = 0; m < n; m++) {
    load_on(job, m, d, &l[m]);
    run(&l[m]);
    wait_ends(&l[m]);
  }
  struct timespec settle = {1, 0};
  nanosleep(&settle, NULL);
  double t0 = cpu_ticks(size);
  struct timespec idle = {(time_t)seconds, 0};
  nanosleep(&idle, NULL);
  double used = (cpu_ticks(size) - t0) / (double)sysconf(_SC_CLK_TCK);
  for (size_t m = 0; m < n; m++) unload(&l[m]);
  job_close(job);
  rig_desc_free(d);
  double percent = 100.0 * used / seconds;
  bench_print_header();
  bench_row row = {
      .name = bench_row_name("remote/idle-cpu"),
      .unit = "% core",
      .median = percent,
      .floor_median = 0,
      .ratio = 0,
      .samples = 1,
      .target = "< 2% of a core",
      .ok = percent < 2.0,
  };
  int rc = bench_report(argc, argv, &row);
  fprintf(stderr, "(remote/idle-cpu: %d ranks idle %.0f s: %.3f s of CPU in all)\n", size, seconds,
          used);
  return rc;
}

/* ---- remote/host-64 x4 ------------------------------------------------------------- */

static int remote_x4(int argc, char **argv, const void *kernels, size_t len) {
  size_t samples = env_count("RIG_BENCH_REMOTE_RUNS", X4_RUNS);
  rig_desc *d = noop_program(kernels, len, STEPS);
  rig_job *job = job_start();
  loaded l[4];
  for (size_t m = 0; m < 4; m++) load_on(job, m, d, &l[m]);
  double *r = malloc(samples * sizeof *r), *f = malloc(samples * sizeof *f);
  CHECK(r && f);
  for (size_t i = 0; i < X4_WARMUP + samples; i++) {
    /* Machine 0 alone (the controller's own host: done on return). */
    uint64_t t0 = bench_now_ns();
    run(&l[0]);
    wait_ends(&l[0]);
    uint64_t t1 = bench_now_ns();
    /* Machines 1..3 first, so that they run while machine 0 does. */
    for (size_t m = 1; m < 4; m++) run(&l[m]);
    run(&l[0]);
    for (size_t m = 0; m < 4; m++) wait_ends(&l[m]);
    uint64_t t2 = bench_now_ns();
    if (i >= X4_WARMUP) {
      f[i - X4_WARMUP] = (double)(t1 - t0);
      r[i - X4_WARMUP] = (double)(t2 - t1);
    }
  }
  for (size_t m = 0; m < 4; m++) unload(&l[m]);
  job_close(job);
  double median = bench_median(r, samples), p99 = bench_p99(r, samples);
  double floor_median = bench_median(f, samples), floor_p99 = bench_p99(f, samples);
  bench_print_header();
  bench_row row = {
      .name = bench_row_name("remote/host-64 x4"),
      .unit = "ns",
      .median = median,
      .floor_median = floor_median,
      .ratio = median / floor_median,
      .samples = samples,
      .target = "report",
      .ok = true,
  };
  int rc = bench_report(argc, argv, &row);
  fprintf(stderr,
          "(remote/host-64 x4: p99 %.1f ns per run on 4 machines; machine 0 alone: median %.1f, "
          "p99 %.1f ns)\n",
          p99, floor_median, floor_p99);
  free(r);
  free(f);
  rig_desc_free(d);
  return rc;
}

int main(int argc, char **argv) {
  int provided, rank, size;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 2) {
    fprintf(stderr, "bench_remote: run it under mpirun -n 2 (remote/run) or -n 4 "
                    "(remote/host-64 x4)\n");
    MPI_Finalize();
    return 1;
  }
  MPI_Comm_dup(MPI_COMM_WORLD, &ping_comm);
  /* Where the ranks are: one host, or several. */
  char host[MPI_MAX_PROCESSOR_NAME] = "", *hosts = calloc((size_t)size, sizeof host);
  int host_len = 0;
  CHECK(hosts);
  MPI_Get_processor_name(host, &host_len);
  MPI_Allgather(host, sizeof host, MPI_CHAR, hosts, sizeof host, MPI_CHAR, MPI_COMM_WORLD);
  for (int r = 1; r < size; r++)
    if (strcmp(hosts + r * sizeof host, hosts) != 0) bench_set_hosts(true);
  free(hosts);
  int pid = (int)getpid();
  pids = calloc((size_t)size, sizeof *pids);
  CHECK(pids);
  MPI_Gather(&pid, 1, MPI_INT, pids, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Comm floor_comm;
  MPI_Comm_split(MPI_COMM_WORLD, size < 4 && rank < 2 ? 0 : MPI_UNDEFINED, rank, &floor_comm);
  if (floor_comm != MPI_COMM_NULL) remote_floor_open(floor_comm, rank);
  int rc = 0;
  if (rank != 0) {
    agent_loop(rank);
  } else {
    size_t len = 0;
    void *so = bench_read_kernels(RIG_BENCH_KERNELS, &len);
    if (!so) MPI_Abort(MPI_COMM_WORLD, 1);
    const char *poll = getenv("RIG_JOB_POLL");
    if (size < 4 && poll && !strcmp(poll, "1")) {
      rc = remote_poll(argc, argv, so, len);
    } else if (size < 4) {
      rc = remote_run(argc, argv, so, len);
      rc |= remote_copy(argc, argv);
    } else {
      rc = remote_x4(argc, argv, so, len);
      rc |= remote_idle(argc, argv, so, len, size);
    }
    free(so);
    command(CMD_QUIT, 0, 0);
  }
  if (floor_comm != MPI_COMM_NULL) {
    remote_floor_close();
    MPI_Comm_free(&floor_comm);
  }
  free(pids);
  MPI_Comm_free(&ping_comm);
  MPI_Finalize();
  return rc == 0 ? 0 : 1;
}
