/* bench_ring: the rows of programs joined by rails (docs/bench.md), an MPI
 * program. scripts/bench.sh runs it with 2 ranks (program/ring-2 and
 * program/pipeline) and with 4 (program/ring-4), on this host and across
 * simulated hosts (rows named "... hosts").
 *
 * The row is the examples' job as progrun runs it: a job of every rank
 * (rig_job_start), the job file's rails made by the controller
 * (rig_job_rail_as), each machine's program read from the examples'
 * descriptions (ring_head.json on machine 0 and ring_node.json on the
 * others, each program's rail 0 the one from its left and 1 the one to
 * its right; pipeline_produce.json and pipeline_consume.json), loaded on
 * its own host, and each run begun and ended by the job's tree around the
 * machine's own run (rig_job_run_begin, rig_program_run, its ends waited,
 * rig_job_run_end), as progrun's machine-local runs are. Its kernels wait
 * on their rails as examples/kernels/rail_wait.h does. A sample is one run
 * as machine 0 sees it, from before its begin to the end of its end (every
 * machine done), in us.
 *
 * The floor is an MPI program of the same shape on MPI_COMM_WORLD: the
 * ring, rank 0 sending the run's number and every other rank adding its
 * index and passing it on, a sample the token's way round at rank 0; the
 * pipeline, rank 0 writing the run's block of 512 words (4 KiB) and
 * sending it, rank 1 adding it into its sum and answering with 8 bytes, a
 * sample rank 0's send to the answer. Each in both of MPI's ways of
 * waiting: busy (MPI_Recv) and yielding (MPI_Irecv, then MPI_Test with
 * sched_yield between), the better median the floor.
 *
 * Row and floors alternate by batches (a job started, its rails and
 * programs made, WARMUP untimed runs, RUNS timed, the job closed; then a
 * batch of each floor), so that no thread of the job runs beside a floor.
 * Targets: the job's median <= 1.5x the floor's, its p99 <= 3x its median.
 * Each batch checks the sums the programs leave (the ring's R (R - 1) / 2
 * + R N (N - 1) / 2 over R runs, the pipeline's sum of blocks).
 *
 * tree/round-trip ($RIG_BENCH_RING_TREE=1, 2 ranks, under
 * RIG_JOB_IN_FLIGHT=1): runs of no work, one in flight at a time, so that a
 * run's cycle at machine 0 is the tree's start down and its end back,
 * beside MPI's ping-pong of the same words (8 bytes there, 24 back).
 * Target: ratio <= 1.2 (the tree's messages as fast as MPI's).
 *
 * $RIG_BENCH_RING_BATCHES and $RIG_BENCH_RING_RUNS override the batches
 * and the runs per batch.
 *
 * Usage: mpirun -n 2|4 bench_ring [RESULTS.jsonl] */
#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "rig/rig_job.h"
#include "rig/rig_program.h"
#include "rig/rig_run.h"

#ifndef RIG_BENCH_EXAMPLES
#define RIG_BENCH_EXAMPLES "examples"
#endif

#define BATCHES 5
#define RUNS    1000
#define WARMUP  100
#define WORDS   512 /* the pipeline's block */
#define TAG     7411

enum { CMD_JOB = 1, CMD_FLOOR = 2, CMD_QUIT = 3 };
enum { RING = 0, PIPELINE = 1, TREE = 2 };
enum { BUSY = 0, YIELDING = 1 };

#define CHECK(cond)                                                                                \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      fprintf(stderr, "bench_ring: %s:%d: %s failed\n", __FILE__, __LINE__, #cond);                \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                                \
    }                                                                                              \
  } while (0)

static int rank, size;

static void die(const char *what, const rig_error *err) {
  fprintf(stderr, "bench_ring: machine %d: %s: %s\n", rank, what, err->message);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

static size_t env_count(const char *name, size_t fallback) {
  const char *v = getenv(name);
  long n = v && v[0] ? atol(v) : 0;
  return n > 0 ? (size_t)n : fallback;
}

/* ---- the job ------------------------------------------------------------------------ */

/* A program's rail ids to the job's: the ring's 0 (from the left) and 1
 * (to the right); the pipeline's are the job's own. */
typedef struct rail_map {
  const rig_rails *job;
  int shape, machine;
} rail_map;

static const rig_rail_end *mapped(void *ctx, int64_t id) {
  rail_map *m = ctx;
  if (m->shape == RING) {
    if (id != 0 && id != 1) return NULL;
    int from = (m->machine + size - 1) % size;
    /* Rail k + 1 joins machine k to machine k + 1. */
    id = id == 0 ? from + 1 : m->machine + 1;
  }
  return m->job->lookup(m->job->ctx, id);
}

static const char *program_of(int shape, int machine) {
  if (shape == RING) return machine == 0 ? "ring_head.json" : "ring_node.json";
  return machine == 0 ? "pipeline_produce.json" : "pipeline_consume.json";
}

/* The job file's rails: the ring's rail k + 1 from machine k to k + 1
 * (mod N), 8 bytes; the pipeline's rail 1, 4 KiB there and 8 bytes back. */
static void make_rails(rig_job *job, int shape) {
  rig_error err;
  rig_rail *r;
  if (shape == RING) {
    static const rig_rail_transfer word = {0, 0, 8};
    for (int k = 0; k < size; k++)
      if (rig_job_rail_as(job, k + 1, k, (k + 1) % size, &word, 1, NULL, 0, &r, &err) != RIG_OK)
        die("rig_job_rail_as", &err);
    return;
  }
  static const rig_rail_transfer block = {0, 0, 8 * WORDS}, ack = {0, 0, 8};
  if (rig_job_rail_as(job, 1, 0, 1, &block, 1, &ack, 1, &r, &err) != RIG_OK)
    die("rig_job_rail_as", &err);
}

/* This machine's program, loaded on its host beside the job's rails. */
typedef struct machine {
  rig_desc *desc;
  rig_program *program;
  rig_buffer *inputs[2];
  size_t ninputs;
  int64_t ints[2];
  rig_point *steps, ends[8];
  size_t nsteps, nends;
  rail_map map;
} machine;

static void machine_open(machine *m, rig_job *job, int shape) {
  rig_error err;
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", RIG_BENCH_EXAMPLES, program_of(shape, rank));
  if (rig_run_read_desc(path, &m->desc, &err) != RIG_OK) die(path, &err);
  rig_device *devs[4];
  CHECK(m->desc->ndevices <= 4);
  if (rig_run_map_devices(m->desc, NULL, 0, NULL, NULL, NULL, devs, &err) != RIG_OK)
    die("devices", &err);
  m->map = (rail_map){rig_job_rails(job), shape, rank};
  rig_rails rails = {mapped, &m->map};
  if (rig_program_load(m->desc, devs, m->desc->ndevices, &rails, &m->program, &err) != RIG_OK)
    die(path, &err);
  m->steps = rig_program_step_points(m->program, &m->nsteps);
  CHECK(m->steps);
  m->ninputs = m->desc->ninputs;
  CHECK(m->ninputs <= 2 && m->desc->ints <= 2);
  for (size_t i = 0; i < m->ninputs; i++) {
    const rig_desc_input *in = &m->desc->inputs[i];
    if (rig_buffer_create(devs[in->device], RIG_KIND_PINNED, (uint64_t)in->bytes, &m->inputs[i],
                          &err) != RIG_OK)
      die("an input", &err);
    memset(rig_buffer_host(m->inputs[i]), 0, (size_t)in->bytes);
  }
}

static void machine_close(machine *m) {
  for (size_t i = 0; i < m->ninputs; i++) rig_buffer_release(m->inputs[i]);
  rig_program_release(m->program);
  free(m->steps);
  rig_desc_free(m->desc);
}

/* Run r here: the ints are the job file's ("run", then "rank" on a ring's
 * node), the ends waited. */
static void machine_run(machine *m, uint64_t r) {
  rig_error err;
  m->ints[0] = (int64_t)r;
  m->ints[1] = rank;
  rig_frame f = {m->inputs, m->ninputs, m->ints, (size_t)m->desc->ints, m->steps, m->nsteps};
  m->nends = sizeof m->ends / sizeof *m->ends;
  if (rig_program_run(m->program, &f, NULL, 0, m->ends, &m->nends, &err) != RIG_OK)
    die("rig_program_run", &err);
  for (size_t k = 0; k < m->nends; k++)
    if (rig_point_wait(m->ends[k], &err) != RIG_OK) die("an end", &err);
}

/* What the programs leave after R runs: the ring's head's sum, the
 * pipeline consumer's first and last words. */
static void check_sums(machine *m, int shape, uint64_t runs) {
  const uint64_t *sum = m->ninputs ? rig_buffer_host(m->inputs[0]) : NULL;
  if (shape == RING && rank == 0) {
    uint64_t n = (uint64_t)size;
    CHECK(sum[0] == runs * (runs - 1) / 2 + runs * n * (n - 1) / 2);
  } else if (shape == PIPELINE && rank == 1) {
    CHECK(sum[0] == runs * (runs - 1) / 2);
    CHECK(sum[WORDS - 1] == runs * (WORDS - 1) + runs * (runs - 1) / 2);
  }
}

static bool agree(rig_job *job) {
  rig_error err;
  bool all = false;
  if (rig_job_agree(job, true, &all, &err) != RIG_OK) die("rig_job_agree", &err);
  return all;
}

/* A batch of the job: every rank. On rank 0, runs[i] is the job's time
 * of timed run i as progrun reports it (its slowest machine's run, from
 * its begin there to its ends reached), and cycles[i] the run as machine
 * 0 sees it, from before its begin to the end of its end (the tree's
 * start and end of the run included). */
static void job_batch(int shape, size_t runs, double *job_runs, double *cycles) {
  rig_job *job;
  rig_error err;
  if (rig_job_start(MPI_COMM_WORLD, &job, &err) != RIG_OK) die("rig_job_start", &err);
  if (rank == 0 && shape != TREE) make_rails(job, shape);
  if (shape == TREE) {
    /* One run in flight: a run's cycle is then the tree's round trip. */
    rig_job_tree facts;
    rig_job_tree_facts(job, &facts);
    CHECK(facts.in_flight == 1);
  }
  /* The rails are made everywhere before any machine loads. */
  CHECK(agree(job));
  bool here = shape == RING || (shape == PIPELINE && rank < 2);
  machine m = {0};
  if (here) machine_open(&m, job, shape);
  CHECK(agree(job));
  rig_job_slowest slow;
  if (rank == 0) rig_job_runs_plan(job, WARMUP + runs);
  for (uint64_t r = 0; r < WARMUP + runs; r++) {
    uint64_t t0 = bench_now_ns();
    if (rig_job_run_begin(job, r, &err) != RIG_OK) die("rig_job_run_begin", &err);
    uint64_t begun = bench_now_ns();
    if (here) machine_run(&m, r);
    if (rig_job_run_end(job, r, bench_now_ns() - begun, &slow, &err) != RIG_OK)
      die("rig_job_run_end", &err);
    if (rank == 0 && r >= WARMUP) cycles[r - WARMUP] = (double)(bench_now_ns() - t0) / 1e3;
    /* A run is known done everywhere one run later (rig_job_run_end). */
    if (rank == 0 && job_runs && slow.run != RIG_JOB_NO_RUN && slow.run >= WARMUP)
      job_runs[slow.run - WARMUP] = (double)slow.ns / 1e3;
  }
  if (rig_job_runs_done(job, &slow, &err) != RIG_OK) die("rig_job_runs_done", &err);
  if (rank == 0 && job_runs && slow.run != RIG_JOB_NO_RUN && slow.run >= WARMUP)
    job_runs[slow.run - WARMUP] = (double)slow.ns / 1e3;
  if (here) check_sums(&m, shape, WARMUP + runs);
  if (here) machine_close(&m);
  CHECK(agree(job));
  if (rank != 0 && rig_job_serve(job, &err) != RIG_OK) die("rig_job_serve", &err);
  if (rig_job_close(job, &err) != RIG_OK) die("rig_job_close", &err);
}

/* ---- the floor: the same shape in MPI --------------------------------------------------- */

static void recv_from(void *b, int n, MPI_Datatype type, int from, int mode) {
  if (mode == BUSY) {
    MPI_Recv(b, n, type, from, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    return;
  }
  MPI_Request req;
  MPI_Irecv(b, n, type, from, TAG, MPI_COMM_WORLD, &req);
  for (int done = 0;;) {
    MPI_Test(&req, &done, MPI_STATUS_IGNORE);
    if (done) return;
    sched_yield();
  }
}

/* The token of run r round the ring: rank k adds k. */
static void ring_floor(uint64_t r, int mode) {
  uint64_t v = r;
  if (rank == 0) {
    MPI_Send(&v, 1, MPI_UINT64_T, 1, TAG, MPI_COMM_WORLD);
    recv_from(&v, 1, MPI_UINT64_T, size - 1, mode);
    CHECK(v == r + (uint64_t)size * (uint64_t)(size - 1) / 2);
  } else {
    recv_from(&v, 1, MPI_UINT64_T, rank - 1, mode);
    v += (uint64_t)rank;
    MPI_Send(&v, 1, MPI_UINT64_T, (rank + 1) % size, TAG, MPI_COMM_WORLD);
  }
}

/* Block r there, the consumer's sum, its answer back. */
static void pipeline_floor(uint64_t r, int mode, uint64_t *block, uint64_t *sum) {
  uint64_t ack = 0;
  if (rank == 0) {
    for (uint64_t i = 0; i < WORDS; i++) block[i] = r + i;
    MPI_Send(block, WORDS, MPI_UINT64_T, 1, TAG, MPI_COMM_WORLD);
    recv_from(&ack, 1, MPI_UINT64_T, 1, mode);
    CHECK(ack == r);
  } else if (rank == 1) {
    recv_from(block, WORDS, MPI_UINT64_T, 0, mode);
    for (uint64_t i = 0; i < WORDS; i++) sum[i] += block[i];
    ack = r;
    MPI_Send(&ack, 1, MPI_UINT64_T, 0, TAG, MPI_COMM_WORLD);
  }
}

/* A run's start there (8 bytes) and its end back (24). */
static void tree_floor(uint64_t r, int mode) {
  uint64_t start = r, done[3] = {r, 0, 0};
  if (rank == 0) {
    MPI_Send(&start, 1, MPI_UINT64_T, 1, TAG, MPI_COMM_WORLD);
    recv_from(done, 3, MPI_UINT64_T, 1, mode);
    CHECK(done[0] == r);
  } else if (rank == 1) {
    recv_from(&start, 1, MPI_UINT64_T, 0, mode);
    done[0] = start;
    MPI_Send(done, 3, MPI_UINT64_T, 0, TAG, MPI_COMM_WORLD);
  }
}

static void floor_batch(int shape, int mode, size_t runs, double *samples) {
  static uint64_t block[WORDS], sum[WORDS];
  memset(sum, 0, sizeof sum);
  MPI_Barrier(MPI_COMM_WORLD);
  for (uint64_t r = 0; r < WARMUP + runs; r++) {
    uint64_t t0 = bench_now_ns();
    if (shape == RING)
      ring_floor(r, mode);
    else if (shape == PIPELINE)
      pipeline_floor(r, mode, block, sum);
    else
      tree_floor(r, mode);
    if (rank == 0 && r >= WARMUP) samples[r - WARMUP] = (double)(bench_now_ns() - t0) / 1e3;
  }
  if (shape == PIPELINE && rank == 1) CHECK(sum[1] == (WARMUP + runs) * (WARMUP + runs + 1) / 2);
}

/* ---- commands --------------------------------------------------------------------------- */

static void command(int cmd, int shape, int mode, int runs) {
  int c[4] = {cmd, shape, mode, runs};
  MPI_Bcast(c, 4, MPI_INT, 0, MPI_COMM_WORLD);
}

static void follow(void) {
  for (;;) {
    int c[4];
    MPI_Bcast(c, 4, MPI_INT, 0, MPI_COMM_WORLD);
    if (c[0] == CMD_JOB)
      job_batch(c[1], (size_t)c[3], NULL, NULL);
    else if (c[0] == CMD_FLOOR)
      floor_batch(c[1], c[2], (size_t)c[3], NULL);
    else
      return;
  }
}

/* ---- the rows --------------------------------------------------------------------------- */

/* tree/round-trip: one run in flight at a time, no work: a run's cycle at
 * machine 0 is its start's hop down and its end's back, against MPI's
 * ping-pong of the same words. */
static int tree_row(int argc, char **argv, double *cycle, double *busy, double *yielding,
                    size_t n) {
  double cm = bench_median(cycle, n), bm = bench_median(busy, n), ym = bench_median(yielding, n);
  double floor_median = bm < ym ? bm : ym;
  fprintf(stderr,
          "(tree/round-trip: a run of no work, one in flight: median %.1f us, p99 %.1f us; MPI "
          "8 bytes there and 24 back, busy median %.1f us, yielding %.1f us)\n",
          cm, bench_p99(cycle, n), bm, ym);
  bench_row r = {
      .name = bench_row_name("tree/round-trip"),
      .unit = "us",
      .median = cm,
      .floor_median = floor_median,
      .ratio = cm / floor_median,
      .samples = n,
      .target = "<= 1.2x",
      .ok = cm <= 1.2 * floor_median,
  };
  int rc = bench_report(argc, argv, &r);
  free(cycle);
  free(busy);
  free(yielding);
  return rc;
}

static int row(int argc, char **argv, int shape) {
  size_t batches = env_count("RIG_BENCH_RING_BATCHES", BATCHES);
  size_t runs = env_count("RIG_BENCH_RING_RUNS", RUNS);
  size_t n = batches * runs;
  double *job = malloc(n * sizeof *job), *cycle = malloc(n * sizeof *cycle),
         *busy = malloc(n * sizeof *busy), *yielding = malloc(n * sizeof *yielding);
  CHECK(job && cycle && busy && yielding);
  if (shape == TREE) free(job), job = NULL;
  for (size_t b = 0; b < batches; b++) {
    /* Which goes first alternates. */
    for (int k = 0; k < 3; k++) {
      int which = (k + (int)b) % 3;
      if (which == 0) {
        command(CMD_JOB, shape, 0, (int)runs);
        job_batch(shape, runs, job ? job + b * runs : NULL, cycle + b * runs);
      } else {
        int mode = which == 1 ? BUSY : YIELDING;
        command(CMD_FLOOR, shape, mode, (int)runs);
        floor_batch(shape, mode, runs, (mode == BUSY ? busy : yielding) + b * runs);
      }
    }
  }
  if (shape == TREE) return tree_row(argc, argv, cycle, busy, yielding, n);
  double median = bench_median(job, n), p99 = bench_p99(job, n);
  double cm = bench_median(cycle, n), cp = bench_p99(cycle, n);
  double bm = bench_median(busy, n), bp = bench_p99(busy, n);
  double ym = bench_median(yielding, n), yp = bench_p99(yielding, n);
  double floor_median = bm < ym ? bm : ym;
  char base[64], cycle_base[80];
  if (shape == RING)
    snprintf(base, sizeof base, "program/ring-%d", size);
  else
    snprintf(base, sizeof base, "program/pipeline");
  snprintf(cycle_base, sizeof cycle_base, "%s cycle", base);
  fprintf(stderr,
          "(%s: the job's run median %.1f us, p99 %.1f us; its cycle at machine 0 median %.1f "
          "us, p99 %.1f us; MPI busy median %.1f us, p99 %.1f us; yielding median %.1f us, "
          "p99 %.1f us; %zu batches of %zu runs)\n",
          bench_row_name(base), median, p99, cm, cp, bm, bp, ym, yp, batches, runs);
  bench_row r = {
      .name = bench_row_name(base),
      .unit = "us",
      .median = median,
      .floor_median = floor_median,
      .ratio = median / floor_median,
      .samples = n,
      .target = "<= 1.5x, p99 <= 3x",
      .ok = median <= 1.5 * floor_median && p99 <= 3 * median,
  };
  int rc = bench_report(argc, argv, &r);
  bench_row c = {
      .name = bench_row_name(cycle_base),
      .unit = "us",
      .median = cm,
      .floor_median = floor_median,
      .ratio = cm / floor_median,
      .samples = n,
      .target = "report",
      .ok = true,
  };
  if (bench_report(argc, argv, &c) != 0) rc = -1;
  free(job);
  free(cycle);
  free(busy);
  free(yielding);
  return rc;
}

int main(int argc, char **argv) {
  int provided;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 2) {
    fprintf(stderr, "bench_ring: run it under mpirun -n 2 (program/ring-2, program/pipeline) "
                    "or -n 4 (program/ring-4)\n");
    MPI_Finalize();
    return 1;
  }
  char host[MPI_MAX_PROCESSOR_NAME] = "", *hosts = calloc((size_t)size, sizeof host);
  int host_len = 0;
  CHECK(hosts);
  MPI_Get_processor_name(host, &host_len);
  MPI_Allgather(host, sizeof host, MPI_CHAR, hosts, sizeof host, MPI_CHAR, MPI_COMM_WORLD);
  for (int r = 1; r < size; r++)
    if (strcmp(hosts + r * sizeof host, hosts) != 0) bench_set_hosts(true);
  free(hosts);
  int rc = 0;
  /* RIG_BENCH_RING_TREE=1: the tree's round trip alone (2 ranks, run with
   * RIG_JOB_IN_FLIGHT=1). */
  const char *tree = getenv("RIG_BENCH_RING_TREE");
  bool tree_only = tree && strcmp(tree, "1") == 0;
  if (rank != 0) {
    follow();
  } else if (tree_only) {
    CHECK(size == 2);
    rc = row(argc, argv, TREE);
    command(CMD_QUIT, 0, 0, 0);
  } else {
    rc = row(argc, argv, RING);
    if (size == 2) rc |= row(argc, argv, PIPELINE);
    command(CMD_QUIT, 0, 0, 0);
  }
  MPI_Finalize();
  return rc == 0 ? 0 : 1;
}
