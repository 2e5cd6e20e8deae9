/* bench_scale: what a job costs machine 0 as it grows (docs/bench.md,
 * "Jobs of many machines"). An MPI program of N ranks, every rank a
 * machine; scripts/bench.sh runs it across 2, 4, 8, 16 and 32 simulated
 * hosts (scripts/hosts.sh) and once on this host. Rows, named "... N=<n>":
 *
 * - scale/run: a run of a one-step no-op host program on every machine,
 *   each machine running its own (machine-local), begun and ended by the
 *   job's tree: its time on machine 0, from its start there to its end
 *   everywhere; floor: the same runs handed over by machine 0 to every
 *   other machine's proxy host (the controller-driven path), waited.
 * - scale/messages: machine 0's messages a run on the tree, counted
 *   (target <= K + 1); floor: N - 1, what the controller-driven path
 *   hands over a run.
 * - scale/bytes: machine 0's bytes a run on the tree, counted.
 * - scale/cpu: machine 0's CPU a run (user + system, getrusage), in us.
 * - scale/skew: how much later than machine 0 the last machine starts a
 *   run (medians over the runs of the latest start less machine 0's;
 *   simulated hosts share one CLOCK_MONOTONIC); target <= (depth + 1) x one
 *   hop, a hop being machine 1's start less machine 0's.
 * - scale/input: a 16 MiB input shared down the tree: the bytes machine 0
 *   sends, in copies of it (target <= K); floor: 1 copy.
 * - scale/output: 16 MiB made on every machine and written there (a
 *   temporary file renamed once every machine agreed): the MiB machine
 *   0's network link takes in meanwhile (target < one output); floor: the
 *   same outputs gathered to machine 0. On one host there is no link (0).
 * - scale/start: rig_job_start's time (gathers, endpoints, the tree's
 *   communicator), reported.
 *
 * Counts are exact whatever the load; times on 2 cores shared by N ranks
 * say what they say (docs/bench.md). */
#include <dirent.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "bench.h"
#include "rig/rig_job.h"
#include "rig/rig_program.h"

#ifndef RIG_BENCH_KERNELS
#define RIG_BENCH_KERNELS "core_kernels.so"
#endif

#define RUNS      200 /* timed runs of each path */
#define WARMUP    20
#define STARTS    3
#define INPUT_MIB 16

#define CHECK(cond)                                                                                \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      fprintf(stderr, "bench_scale: %s:%d: %s failed\n", __FILE__, __LINE__, #cond);               \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                                \
    }                                                                                              \
  } while (0)

static void die(const char *what, const rig_error *err) {
  fprintf(stderr, "bench_scale: %s: %s\n", what, err->message);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

static rig_desc *noop_program(void) {
  size_t len = 0;
  void *k = bench_read_kernels(RIG_BENCH_KERNELS, &len);
  CHECK(k);
  rig_desc *d = rig_desc_create();
  CHECK(d);
  CHECK(rig_desc_add_device(d, rig_host_isa()) == 0);
  CHECK(rig_desc_add_image(d, 0, k, len) == 0);
  free(k);
  rig_desc_submit *sub = rig_desc_add_submit(d, NULL, 0);
  CHECK(sub);
  CHECK(
      rig_desc_submit_add_launch(d, sub, 0, "noop", NULL, 0, rig_desc_fixed(1), rig_desc_fixed(1)));
  return d;
}

typedef struct loaded {
  rig_program *prog;
  rig_point *points, ends[4];
  size_t npoints, nends;
  rig_frame frame;
} loaded;

static void load(rig_device *host, const rig_desc *d, loaded *l) {
  rig_error err;
  if (rig_program_load(d, &host, 1, NULL, &l->prog, &err) != RIG_OK) die("loading", &err);
  l->points = rig_program_step_points(l->prog, &l->npoints);
  CHECK(l->points);
  l->frame = (rig_frame){NULL, 0, NULL, 0, l->points, l->npoints};
}

static void unload(loaded *l) {
  rig_program_release(l->prog);
  free(l->points);
}

static void run_waited(loaded *l) {
  rig_error err;
  if (rig_program_run(l->prog, &l->frame, NULL, 0, l->ends, &l->nends, &err) != RIG_OK)
    die("a run", &err);
  if (rig_points_wait(l->ends, l->nends, &err) != RIG_OK) die("waiting", &err);
}

static double cpu_us(void) {
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  return (double)u.ru_utime.tv_sec * 1e6 + (double)u.ru_utime.tv_usec +
         (double)u.ru_stime.tv_sec * 1e6 + (double)u.ru_stime.tv_usec;
}

static int by_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median_of(double *v, size_t n) {
  qsort(v, n, sizeof *v, by_double);
  return n ? v[n / 2] : 0;
}

/* The bytes this host's network links (every one but loopback) took in:
 * across simulated hosts machine 0's own link. */
static uint64_t link_rx_bytes(void) {
  uint64_t sum = 0;
  DIR *d = opendir("/sys/class/net");
  if (!d) return 0;
  for (struct dirent *e; (e = readdir(d));) {
    if (e->d_name[0] == '.' || strcmp(e->d_name, "lo") == 0) continue;
    char path[512];
    snprintf(path, sizeof path, "/sys/class/net/%s/statistics/rx_bytes", e->d_name);
    FILE *f = fopen(path, "r");
    unsigned long long v = 0;
    if (f && fscanf(f, "%llu", &v) == 1) sum += v;
    if (f) fclose(f);
  }
  closedir(d);
  return sum;
}

/* An output written where it is made, as progrun's are: a temporary file
 * beside the target, renamed once every machine says its files are whole
 * (the vote up the tree, the verdict down), then removed (a bench). */
static void write_where_made(rig_job *job, const void *bytes, size_t len, int rank) {
  char tmp[160], target[128];
  snprintf(target, sizeof target, "/tmp/bench_scale_out.%d.%d", (int)getpid(), rank);
  snprintf(tmp, sizeof tmp, "%s.XXXXXX", target);
  int fd = mkstemp(tmp);
  CHECK(fd >= 0);
  bool whole = write(fd, bytes, len) == (ssize_t)len;
  whole &= close(fd) == 0;
  bool all = false;
  rig_error err;
  if (rig_job_agree(job, whole, &all, &err) != RIG_OK) die("agreeing", &err);
  CHECK(all);
  CHECK(rename(tmp, target) == 0);
  unlink(target);
}

static char names[8][64];
static const char *named(int k, const char *base, int n) {
  snprintf(names[k], sizeof names[k], "%s N=%d", base, n);
  return bench_row_name(names[k]);
}

int main(int argc, char **argv) {
  int provided, rank, n;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  bench_set_hosts(getenv("RIG_HOSTS") != NULL || getenv("OMPI_MCA_plm_rsh_agent") != NULL);
  if (rank == 0) bench_print_header();
  rig_desc *d = noop_program();
  rig_error err;

  /* scale/start: jobs started and closed. */
  double starts[STARTS];
  rig_job *job = NULL;
  for (int s = 0; s < STARTS; s++) {
    MPI_Barrier(MPI_COMM_WORLD);
    uint64_t t0 = bench_now_ns();
    if (rig_job_start(MPI_COMM_WORLD, &job, &err) != RIG_OK) die("rig_job_start", &err);
    starts[s] = (double)(bench_now_ns() - t0);
    if (s + 1 < STARTS) {
      if (rank == 0) {
        if (rig_job_close(job, &err) != RIG_OK) die("closing", &err);
      } else {
        if (rig_job_serve(job, &err) != RIG_OK || rig_job_close(job, &err) != RIG_OK)
          die("serving", &err);
      }
    }
  }

  /* The machine-local path: every machine its own program, by the tree. */
  loaded mine;
  load(rig_host(), d, &mine);
  rig_job_tree t0, t1;
  uint64_t *begins = calloc(RUNS + WARMUP, sizeof *begins);
  double *times = calloc(RUNS, sizeof *times);
  CHECK(begins && times);
  double cpu0 = 0;
  if (rank == 0) rig_job_runs_plan(job, RUNS + WARMUP);
  for (int r = 0; r < RUNS + WARMUP; r++) {
    if (r == WARMUP) {
      rig_job_tree_facts(job, &t0);
      cpu0 = cpu_us();
    }
    uint64_t start = bench_now_ns();
    if (rig_job_run_begin(job, (uint64_t)r, &err) != RIG_OK) die("run_begin", &err);
    /* Machine 0 starts the run before it sends the starts; the others
     * once theirs came. */
    begins[r] = rank == 0 ? start : bench_now_ns();
    run_waited(&mine);
    if (rig_job_run_end(job, (uint64_t)r, bench_now_ns() - begins[r], NULL, &err) != RIG_OK)
      die("run_end", &err);
    if (r >= WARMUP) times[r - WARMUP] = (double)(bench_now_ns() - start);
  }
  if (rig_job_runs_done(job, NULL, &err) != RIG_OK) die("runs_done", &err);
  double cpu = (cpu_us() - cpu0) / RUNS;
  rig_job_tree_facts(job, &t1);
  unload(&mine);

  /* Every machine's starts at machine 0: the skew. */
  uint64_t *all = rank == 0 ? calloc((size_t)n * (RUNS + WARMUP), sizeof *all) : NULL;
  MPI_Gather(begins, RUNS + WARMUP, MPI_UINT64_T, all, RUNS + WARMUP, MPI_UINT64_T, 0,
             MPI_COMM_WORLD);

  /* scale/input: 16 MiB shared down the tree. */
  size_t len = (size_t)INPUT_MIB << 20;
  void *bytes = rank == 0 ? calloc(1, len) : NULL;
  CHECK(rank != 0 || bytes);
  rig_job_tree i0, i1;
  rig_job_tree_facts(job, &i0);
  if (rig_job_share(job, &bytes, &len, &err) != RIG_OK) die("sharing", &err);
  rig_job_tree_facts(job, &i1);
  free(bytes);

  /* scale/output: 16 MiB made on every machine, written where made; the
   * floor gathers them to machine 0. What machine 0's link takes in. */
  void *out = malloc(len);
  CHECK(out);
  memset(out, rank + 1, len);
  MPI_Barrier(MPI_COMM_WORLD);
  uint64_t rx0 = link_rx_bytes();
  write_where_made(job, out, len, rank);
  uint64_t rx_made = link_rx_bytes() - rx0;
  MPI_Barrier(MPI_COMM_WORLD);
  void **parts = rank == 0 ? calloc((size_t)n, sizeof *parts) : NULL;
  size_t *lens = rank == 0 ? calloc((size_t)n, sizeof *lens) : NULL;
  CHECK(rank != 0 || (parts && lens));
  rx0 = link_rx_bytes();
  if (rig_job_gather(job, out, len, parts, lens, &err) != RIG_OK) die("gathering", &err);
  uint64_t rx_gathered = link_rx_bytes() - rx0;
  for (int m = 0; parts && m < n; m++) free(parts[m]);
  free(parts);
  free(lens);
  free(out);

  /* The floor: the controller-driven path, machine 0 handing each run to
   * every machine's proxy host. */
  double *floor_times = calloc(RUNS, sizeof *floor_times);
  CHECK(floor_times);
  if (rank == 0) {
    loaded *l = calloc((size_t)n, sizeof *l);
    CHECK(l);
    for (int m = 0; m < n; m++) load(rig_job_device(job, (size_t)m, 0), d, &l[m]);
    for (int r = 0; r < RUNS + WARMUP; r++) {
      uint64_t start = bench_now_ns();
      for (int m = n - 1; m >= 0; m--)
        if (rig_program_run(l[m].prog, &l[m].frame, NULL, 0, l[m].ends, &l[m].nends, &err) !=
            RIG_OK)
          die("a proxy run", &err);
      for (int m = 0; m < n; m++)
        if (rig_points_wait(l[m].ends, l[m].nends, &err) != RIG_OK) die("waiting", &err);
      if (r >= WARMUP) floor_times[r - WARMUP] = (double)(bench_now_ns() - start);
    }
    for (int m = 0; m < n; m++) unload(&l[m]);
    free(l);
    if (rig_job_close(job, &err) != RIG_OK) die("closing", &err);
  } else {
    if (rig_job_serve(job, &err) != RIG_OK || rig_job_close(job, &err) != RIG_OK)
      die("serving", &err);
  }

  if (rank == 0) {
    unsigned k = t1.fanout, depth = t1.depth;
    double msgs = (double)(t1.messages - t0.messages) / RUNS;
    double sent = (double)(t1.bytes - t0.bytes) / RUNS;
    /* Skew: per run, the latest machine's start less machine 0's. */
    double *skew = calloc(RUNS, sizeof *skew), *hop = calloc(RUNS, sizeof *hop);
    CHECK(skew && hop);
    for (int r = WARMUP; r < RUNS + WARMUP; r++) {
      uint64_t first = all[r], last = all[r];
      for (int m = 0; m < n; m++) {
        uint64_t b = all[(size_t)m * (RUNS + WARMUP) + (size_t)r];
        if (b > last) last = b;
      }
      skew[r - WARMUP] = (double)(last - first);
      /* Signed: with runs in flight machine 1 may begin a run before
       * machine 0 does (machine 0 still in the run before). */
      hop[r - WARMUP] = n > 1 ? (double)(int64_t)(all[(RUNS + WARMUP) + (size_t)r] - first) : 0;
    }
    double skew_m = median_of(skew, RUNS), hop_m = median_of(hop, RUNS);
    double run_m = median_of(times, RUNS), floor_m = median_of(floor_times, RUNS);
    /* Copies of the input's bytes (each piece's count is 8 bytes of its own). */
    double in_copies = (double)((i1.bytes - i0.bytes) - 8 * (i1.messages - i0.messages)) /
                       (double)((size_t)INPUT_MIB << 20);
    char target[64];
    bench_row rows[8];
    rows[0] = (bench_row){named(0, "scale/run", n), "ns", run_m,      floor_m,
                          run_m / floor_m,          RUNS, "reported", true};
    snprintf(target, sizeof target, "<= %u (K + 1)", k + 1);
    rows[1] = (bench_row){named(1, "scale/messages", n), "msg/run", msgs,           (double)(n - 1),
                          n > 1 ? msgs / (n - 1) : 0,    RUNS,      strdup(target), msgs <= k + 1};
    rows[2] = (bench_row){named(2, "scale/bytes", n), "B/run", sent, 0, 0, RUNS, "reported", true};
    rows[3] = (bench_row){named(3, "scale/cpu", n), "us/run", cpu, 0, 0, RUNS, "reported", true};
    snprintf(target, sizeof target, "<= %u x hop (%.0f ns)", depth + 1, hop_m);
    rows[4] = (bench_row){named(4, "scale/skew", n),
                          "ns",
                          skew_m,
                          hop_m,
                          hop_m > 0 ? skew_m / hop_m : 0,
                          RUNS,
                          strdup(target),
                          skew_m <= (depth + 1) * hop_m || n <= 2};
    snprintf(target, sizeof target, "<= %u copies", k);
    rows[5] = (bench_row){named(5, "scale/input", n),
                          "copies",
                          in_copies,
                          1.0,
                          in_copies,
                          1,
                          strdup(target),
                          in_copies <= k};
    rows[6] = (bench_row){named(6, "scale/start", n),
                          "ms",
                          median_of(starts, STARTS) / 1e6,
                          0,
                          0,
                          STARTS,
                          "reported",
                          true};
    /* On one host the machines share no link: the counts are 0. */
    double mib = (double)(1u << 20);
    snprintf(target, sizeof target, "< 1 output (%d MiB)", INPUT_MIB);
    rows[7] = (bench_row){named(7, "scale/output", n),
                          "MiB",
                          (double)rx_made / mib,
                          (double)rx_gathered / mib,
                          rx_gathered ? (double)rx_made / (double)rx_gathered : 0,
                          1,
                          strdup(target),
                          rx_made < ((uint64_t)INPUT_MIB << 20)};
    for (int i = 0; i < 8; i++) bench_report(argc, argv, &rows[i]);
    fprintf(stderr,
            "(scale N=%d: K %u, depth %u; machine 0 sends %.2f messages and %.1f bytes a run on "
            "the tree, the controller-driven path %d hand-overs; the last machine starts %.0f ns "
            "after machine 0, one hop %.0f ns; a 16 MiB input leaves machine 0 %.2f times)\n",
            n, k, depth, msgs, sent, n - 1, skew_m, hop_m, in_copies);
    free(skew);
    free(hop);
    free(all);
  }
  free(begins);
  free(times);
  free(floor_times);
  rig_desc_free(d);
  MPI_Finalize();
  return 0;
}
