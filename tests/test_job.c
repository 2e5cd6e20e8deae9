/* The MPI job (run under mpirun -n 2, 3 and 4): bootstrap, proxies,
 * programs of another machine, their refusals and failures. Rank 0 runs
 * these tests; the other ranks serve each job (support/mpi_main.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "job_state.h"
#include "polled.h"
#include "rig/rig_program.h"
#include "rig_mpi_test.h"
#include "tree.h"
#include "wait.h"

/* Every agent has a polled device whose functions allow 64 threads, so
 * that the controller's threads check has something to check. */
void rig_test_agent_setup(int rank) {
  (void)rank;
  rig_polled_options opt = {.arch = "polled", .max_threads = 64};
  rig_device *d;
  rig_polled *p;
  rig_polled_open(&opt, &d, &p, NULL);
}

/* ---- the tree: machine-local runs' (every rank takes part) ------------------- */

enum {
  SPMD_RUNS = 1,
  SPMD_SHARE,
  SPMD_SCATTER,
  SPMD_AGREE,
  SPMD_FAIL,
  SPMD_ALIKE,  /* every machine fails alike at once */
  SPMD_LEAVE,  /* the last machine closes the job in run 0 */
  SPMD_CLOSED, /* every agent waits for run 0, which the controller never begins */
  SPMD_REPORT, /* every agent gathers what its last SPMD_CLOSED wait said */
  SPMD_TIMED,  /* runs as SPMD_RUNS, then gathers each run's begin and end */
  SPMD_FORGE   /* the last machine forges the end of a run it never ran */
};

/* What an agent's wait in SPMD_CLOSED ended with. */
static char closed_said[RIG_ERROR_MESSAGE_MAX];

#define TREE_RUNS 50
/* Machine m's run r "takes" (m + 1) * 1000 + r ns: the last machine is the
 * slowest of every run. */
static uint64_t run_ns(int m, uint64_t r) {
  return (uint64_t)(m + 1) * 1000 + r;
}

/* A shared buffer of 3 MiB and 5 bytes: three pieces and a bit. */
#define SHARED_BYTES ((size_t)3 * 1024 * 1024 + 5)
static unsigned char shared_byte(size_t i) {
  return (unsigned char)(i * 7 + i / 1000);
}

static void spmd_runs(rig_job *job, int m) {
  rig_error err;
  for (uint64_t r = 0; r < TREE_RUNS; r++) {
    if (rig_job_run_begin(job, r, &err) != RIG_OK) return;
    if (rig_job_run_end(job, r, run_ns(m, r), NULL, &err) != RIG_OK) return;
  }
  rig_job_runs_done(job, NULL, &err);
}

/* Each machine's begin and end of every run, on CLOCK_MONOTONIC (one host:
 * one clock): run r began here after begins[r], ended before ends[r]. */
typedef struct run_times {
  uint64_t begins[TREE_RUNS], ends[TREE_RUNS], done;
} run_times;

static uint64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Runs as spmd_runs does, keeping the times: a run's begin is taken once
 * rig_job_run_begin returned, its end before rig_job_run_end is called,
 * the runs' done after rig_job_runs_done. */
static bool timed_runs(rig_job *job, run_times *t, rig_error *err) {
  for (uint64_t r = 0; r < TREE_RUNS; r++) {
    if (rig_job_run_begin(job, r, err) != RIG_OK) return false;
    t->begins[r] = now_ns();
    t->ends[r] = now_ns();
    if (rig_job_run_end(job, r, 1, NULL, err) != RIG_OK) return false;
  }
  if (rig_job_runs_done(job, NULL, err) != RIG_OK) return false;
  t->done = now_ns();
  return true;
}

/* An agent's part: what it got is sent back (gather) for rank 0 to judge. */
bool rig_test_agent_spmd(rig_job *job, int which) {
  int m = rig_job_rank(job);
  rig_error err;
  void *b = NULL;
  size_t n = 0;
  switch (which) {
    case SPMD_RUNS:
      spmd_runs(job, m);
      break;
    case SPMD_SHARE: {
      if (rig_job_share(job, &b, &n, &err) != RIG_OK) return false;
      unsigned char ok = n == SHARED_BYTES;
      for (size_t i = 0; ok && i < n; i++) ok = ((unsigned char *)b)[i] == shared_byte(i);
      free(b);
      rig_job_gather(job, &ok, 1, NULL, NULL, &err);
      break;
    }
    case SPMD_SCATTER:
      if (rig_job_scatter(job, NULL, NULL, &b, &n, &err) != RIG_OK) return false;
      rig_job_gather(job, b, n, NULL, NULL, &err);
      free(b);
      break;
    case SPMD_AGREE: {
      bool all;
      if (rig_job_agree(job, m != (int)rig_job_machines(job) - 1, &all, &err) != RIG_OK)
        return false;
      if (rig_job_agree(job, true, &all, &err) != RIG_OK) return false;
      unsigned char got = (unsigned char)all;
      rig_job_gather(job, &got, 1, NULL, NULL, &err);
      break;
    }
    case SPMD_FAIL:
      /* Machine 1 fails in run 0 instead of ending it; the others wait. */
      if (rig_job_run_begin(job, 0, &err) != RIG_OK) return false;
      if (m == 1) {
        rig_job_fail(job, "machine 1: a test failed run 0");
        return false;
      }
      if (rig_job_run_end(job, 0, 1, NULL, &err) == RIG_OK) rig_job_runs_done(job, NULL, &err);
      break;
    case SPMD_LEAVE:
      if (rig_job_run_begin(job, 0, &err) != RIG_OK) return false;
      if (m == (int)rig_job_machines(job) - 1) {
        rig_job_close(job, &err);
        return true;
      }
      if (rig_job_run_end(job, 0, 1, NULL, &err) == RIG_OK) rig_job_runs_done(job, NULL, &err);
      break;
    case SPMD_CLOSED:
      snprintf(closed_said, sizeof closed_said, "(it began)");
      if (rig_job_run_begin(job, 0, &err) != RIG_OK)
        snprintf(closed_said, sizeof closed_said, "%s", err.message);
      break;
    case SPMD_ALIKE: {
      /* Every machine fails alike; each leaves once the controller told it. */
      rig_job_fail(job, "%s: a test failed alike", rig_job_label(job, m));
      snprintf(closed_said, sizeof closed_said, "%s",
               rig_job_await_told(job) ? "told" : "not told");
      rig_job_close(job, &err);
      return true;
    }
    case SPMD_REPORT:
      rig_job_gather(job, closed_said, strlen(closed_said) + 1, NULL, NULL, &err);
      break;
    case SPMD_FORGE:
      /* The end of run 999 up the tree, as its way sends one; then no run
       * of its own, whose true end would take the forged one's place. */
      if (m == (int)rig_job_machines(job) - 1)
        job->tree.way->done(job, 999, 1, m, &err);
      else
        spmd_runs(job, m);
      break;
    case SPMD_TIMED: {
      static run_times t;
      if (timed_runs(job, &t, &err)) rig_job_gather(job, &t, sizeof t, NULL, NULL, &err);
      break;
    }
  }
  return false;
}

/* Runs begun down the tree and ended up it: run after run, machine 0
 * learns each run's slowest machine and its time (with W runs in flight,
 * at the end of the run W - 1 later, the last ones once the runs are
 * done), and sends K messages a run (the starts of its children). */
static void test_the_tree_starts_and_ends_every_run_and_names_the_slowest(void) {
  rig_job *job = rig_test_job_start_spmd(SPMD_RUNS);
  CU_ASSERT_PTR_NOT_NULL_FATAL(job);
  int n = (int)rig_job_machines(job);
  rig_job_tree t;
  rig_job_tree_facts(job, &t);
  uint64_t sent0 = t.messages, w = t.in_flight;
  CU_ASSERT(w == 1 || w == 2);
  rig_error err;
  bool ok = true;
  uint64_t next = 0; /* the next run machine 0 should learn of */
  rig_job_runs_plan(job, TREE_RUNS);
  for (uint64_t r = 0; r < TREE_RUNS && ok; r++) {
    rig_job_slowest slow = {0, -1, 0};
    ok = rig_job_run_begin(job, r, &err) == RIG_OK &&
         rig_job_run_end(job, r, run_ns(0, r), &slow, &err) == RIG_OK;
    if (r + 1 < w) {
      CU_ASSERT_EQUAL(slow.run, RIG_JOB_NO_RUN);
      continue;
    }
    CU_ASSERT_EQUAL(slow.run, next);
    CU_ASSERT_EQUAL(slow.machine, n - 1);
    CU_ASSERT_EQUAL(slow.ns, run_ns(n - 1, next));
    next++;
  }
  rig_job_slowest last = {0, -1, 0};
  CU_ASSERT_EQUAL(rig_job_runs_done(job, &last, &err), RIG_OK);
  if (w == 2) {
    CU_ASSERT_EQUAL(last.run, (uint64_t)TREE_RUNS - 1);
    CU_ASSERT_EQUAL(last.ns, run_ns(n - 1, TREE_RUNS - 1));
  } else {
    CU_ASSERT_EQUAL(last.run, RIG_JOB_NO_RUN);
  }
  CU_ASSERT_TRUE(ok);
  if (!ok) fprintf(stderr, "tree: %s\n", err.message);
  rig_job_tree_facts(job, &t);
  CU_ASSERT_EQUAL(t.parent, -1);
  /* Planned: no start goes past the last run. */
  CU_ASSERT_EQUAL(t.messages - sent0, (uint64_t)TREE_RUNS * (uint64_t)t.children);
  CU_ASSERT(t.children <= (int)t.fanout);
  rig_test_job_close_ok(job);
}

/* With W runs in flight, no machine begins run r before every machine
 * ended run r - W, and once machine 0's runs are done every machine's
 * are: each machine's times (one host, one clock) gathered and compared. */
static void test_no_machine_begins_a_run_before_run_r_less_w_ended_everywhere(void) {
  rig_job *job = rig_test_job_start_spmd(SPMD_TIMED);
  CU_ASSERT_PTR_NOT_NULL_FATAL(job);
  size_t n = rig_job_machines(job);
  rig_job_tree facts;
  rig_job_tree_facts(job, &facts);
  uint64_t w = facts.in_flight;
  static run_times mine;
  run_times *all[16] = {&mine};
  size_t lens[16] = {sizeof mine};
  CU_ASSERT_FATAL(n <= 16);
  rig_error err;
  bool ok = timed_runs(job, &mine, &err);
  CU_ASSERT_TRUE(ok);
  if (!ok) fprintf(stderr, "timed runs: %s\n", err.message);
  CU_ASSERT_EQUAL(rig_job_gather(job, NULL, 0, (void **)all, lens, &err), RIG_OK);
  all[0] = &mine;
  bool whole = true;
  for (size_t m = 1; m < n; m++) whole = whole && all[m] && lens[m] == sizeof mine;
  CU_ASSERT_TRUE_FATAL(whole);
  unsigned early = 0, late = 0;
  for (size_t m = 0; m < n; m++)
    for (uint64_t r = w; r < TREE_RUNS; r++)
      for (size_t o = 0; o < n; o++) early += all[m]->begins[r] < all[o]->ends[r - w];
  for (size_t o = 0; o < n; o++) late += all[o]->ends[TREE_RUNS - 1] > mine.done;
  CU_ASSERT_EQUAL(early, 0);
  CU_ASSERT_EQUAL(late, 0);
  for (size_t m = 1; m < n; m++) free(all[m]);
  rig_test_job_close_ok(job);
}

/* A machine that reports the end of a run it never ran (the tree's words
 * are input from the wire, by whichever way they go): the job fails,
 * naming it and the run, rather than take it for done. */
static void test_the_tree_fails_the_job_on_a_forged_report_naming_its_sender(void) {
  rig_job *job = rig_test_job_start_spmd(SPMD_FORGE);
  CU_ASSERT_PTR_NOT_NULL_FATAL(job);
  size_t n = rig_job_machines(job);
  rig_error err;
  rig_status st = RIG_OK;
  for (uint64_t r = 0; st == RIG_OK && r < TREE_RUNS; r++) {
    st = rig_job_run_begin(job, r, &err);
    if (st == RIG_OK) st = rig_job_run_end(job, r, 1, NULL, &err);
  }
  if (st == RIG_OK) st = rig_job_runs_done(job, NULL, &err);
  char label[96], sender[128];
  snprintf(sender, sizeof sender, "from %s", rig_test_label(job, n - 1, label, sizeof label));
  CU_ASSERT_EQUAL(st, RIG_EJOB);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "run 999"));
  CU_ASSERT_PTR_NOT_NULL(strstr(err.message, sender));
  if (!strstr(err.message, "run 999") || !strstr(err.message, sender))
    fprintf(stderr, "forged report: %s\n", err.message);
  rig_job_close(job, &err);
}

/* A buffer of three pieces and a bit reaches every machine byte exact. */
static void test_the_tree_shares_bytes_with_every_machine(void) {
  rig_job *job = rig_test_job_start_spmd(SPMD_SHARE);
  CU_ASSERT_PTR_NOT_NULL_FATAL(job);
  size_t n = rig_job_machines(job), len = SHARED_BYTES;
  unsigned char *b = malloc(len);
  void **parts = calloc(n, sizeof *parts);
  size_t *lens = calloc(n, sizeof *lens);
  CU_ASSERT_FATAL(b && parts && lens);
  for (size_t i = 0; i < len; i++) b[i] = shared_byte(i);
  void *given = b;
  rig_error err;
  CU_ASSERT_EQUAL(rig_job_share(job, &given, &len, &err), RIG_OK);
  CU_ASSERT_EQUAL(rig_job_gather(job, NULL, 0, parts, lens, &err), RIG_OK);
  for (size_t m = 1; m < n; m++) {
    CU_ASSERT(lens[m] == 1 && parts[m] && ((unsigned char *)parts[m])[0] == 1);
    free(parts[m]);
  }
  free(parts);
  free(lens);
  free(b);
  rig_test_job_close_ok(job);
}

/* Each machine gets its own bytes, and machine 0 each machine's back. */
static void test_the_tree_scatters_and_gathers_each_machines_bytes(void) {
  rig_job *job = rig_test_job_start_spmd(SPMD_SCATTER);
  CU_ASSERT_PTR_NOT_NULL_FATAL(job);
  size_t n = rig_job_machines(job);
  char text[16][48];
  const void *out[16];
  size_t outlen[16], lens[16];
  void *back[16] = {0};
  CU_ASSERT_FATAL(n <= 16);
  for (size_t m = 0; m < n; m++) {
    snprintf(text[m], sizeof text[m], "machine %zu's part", m);
    out[m] = text[m];
    outlen[m] = strlen(text[m]) + m; /* its NUL and what follows, for the lengths */
  }
  rig_error err;
  CU_ASSERT_EQUAL(rig_job_scatter(job, out, outlen, NULL, NULL, &err), RIG_OK);
  CU_ASSERT_EQUAL(rig_job_gather(job, NULL, 0, back, lens, &err), RIG_OK);
  for (size_t m = 1; m < n; m++) {
    CU_ASSERT(lens[m] == outlen[m] && back[m] && memcmp(back[m], text[m], lens[m]) == 0);
    free(back[m]);
  }
  rig_test_job_close_ok(job);
}

/* One machine against: every machine learns no; all for: yes. */
static void test_the_tree_agrees_only_when_every_machine_does(void) {
  rig_job *job = rig_test_job_start_spmd(SPMD_AGREE);
  CU_ASSERT_PTR_NOT_NULL_FATAL(job);
  size_t n = rig_job_machines(job);
  bool first = true, second = false;
  rig_error err;
  CU_ASSERT_EQUAL(rig_job_agree(job, true, &first, &err), RIG_OK);
  CU_ASSERT_EQUAL(rig_job_agree(job, true, &second, &err), RIG_OK);
  CU_ASSERT_FALSE(first);
  CU_ASSERT_TRUE(second);
  void *got[16] = {0};
  size_t lens[16];
  CU_ASSERT_EQUAL(rig_job_gather(job, NULL, 0, got, lens, &err), RIG_OK);
  for (size_t m = 1; m < n && m < 16; m++) {
    CU_ASSERT(lens[m] == 1 && got[m] && ((unsigned char *)got[m])[0] == 1);
    free(got[m]);
  }
  rig_test_job_close_ok(job);
}

/* A machine that fails instead of ending its run: machine 0's wait in the
 * run ends with the job's cause, not never. */
static void test_a_failure_ends_a_wait_on_the_tree(void) {
  rig_job *job = rig_test_job_start_spmd(SPMD_FAIL);
  CU_ASSERT_PTR_NOT_NULL_FATAL(job);
  rig_error err;
  /* Machine 1 fails as soon as it starts: the failure may reach machine 0
   * while it still starts its other children, which ends the start. */
  rig_status st = rig_job_run_begin(job, 0, &err);
  if (st == RIG_OK) st = rig_job_run_end(job, 0, 1, NULL, &err);
  if (st == RIG_OK) st = rig_job_runs_done(job, NULL, &err);
  RIG_ASSERT_ERROR(st, err, RIG_EJOB, "machine 1: a test failed run 0");
  rig_job_close(job, &err);
}

/* Every machine fails alike: the controller tells it once, naming them
 * together, and every agent, told that the controller took it, need not
 * say it itself. */
static void test_machines_that_fail_alike_are_told_once_together(void) {
  rig_job *job = rig_test_job_start_spmd(SPMD_ALIKE);
  CU_ASSERT_PTR_NOT_NULL_FATAL(job);
  size_t n = rig_job_machines(job);
  char label[96], want[256];
  rig_job_fail(job, "%s: a test failed alike", rig_test_label(job, 0, label, sizeof label));
  rig_error why, err;
  rig_job_told_cause(job, 30.0, &why); /* every agent answers: no wait past the last */
  snprintf(want, sizeof want, "machines 0-%zu: a test failed alike", n - 1);
  CU_ASSERT_STRING_EQUAL(why.message, want);
  rig_job_close(job, &err);
  job = rig_test_job_start_spmd(SPMD_REPORT);
  CU_ASSERT_PTR_NOT_NULL_FATAL(job);
  void *parts[16] = {0};
  size_t lens[16];
  CU_ASSERT_FATAL(n <= 16);
  CU_ASSERT_EQUAL(rig_job_gather(job, NULL, 0, parts, lens, &err), RIG_OK);
  for (size_t m = 1; m < n; m++) {
    CU_ASSERT(parts[m] && strcmp(parts[m], "told") == 0);
    if (parts[m] && strcmp(parts[m], "told") != 0)
      fprintf(stderr, "machine %zu: %s\n", m, (char *)parts[m]);
    free(parts[m]);
  }
  rig_test_job_close_ok(job);
}

/* An agent that closes the job while the others wait for it in a run:
 * its leaving is the job's failure, told to the controller, whose wait
 * ends with it rather than at the silence bound or never. */
static void test_an_agent_that_closes_in_a_run_fails_the_job_naming_itself(void) {
  rig_job *job = rig_test_job_start_spmd(SPMD_LEAVE);
  CU_ASSERT_PTR_NOT_NULL_FATAL(job);
  size_t n = rig_job_machines(job);
  char label[96], want[256];
  snprintf(want, sizeof want, "%s: left the job (rig_job_close) before the controller closed it",
           rig_test_label(job, n - 1, label, sizeof label));
  rig_error err;
  CU_ASSERT_EQUAL(rig_job_run_begin(job, 0, &err), RIG_OK);
  rig_status st = rig_job_run_end(job, 0, 1, NULL, &err);
  if (st == RIG_OK) st = rig_job_runs_done(job, NULL, &err);
  RIG_ASSERT_ERROR(st, err, RIG_EJOB, want);
  rig_job_close(job, &err);
}

/* The controller closes the job while every agent waits for a run it
 * never begins: each wait ends, saying so, and every agent serves the
 * next job. */
static void test_a_close_of_the_controller_ends_every_agents_wait(void) {
  rig_job *job = rig_test_job_start_spmd(SPMD_CLOSED);
  CU_ASSERT_PTR_NOT_NULL_FATAL(job);
  size_t n = rig_job_machines(job);
  rig_test_job_close_ok(job);
  job = rig_test_job_start_spmd(SPMD_REPORT);
  CU_ASSERT_PTR_NOT_NULL_FATAL(job);
  void **parts = calloc(n, sizeof *parts);
  size_t *lens = calloc(n, sizeof *lens);
  CU_ASSERT_FATAL(parts && lens);
  rig_error err;
  CU_ASSERT_EQUAL(rig_job_gather(job, NULL, 0, parts, lens, &err), RIG_OK);
  for (size_t m = 1; m < n; m++) {
    char label[96], want[256];
    snprintf(want, sizeof want, "%s: the controller closed the job while this machine waited in it",
             rig_test_label(job, m, label, sizeof label));
    CU_ASSERT(parts[m] && lens[m] == strlen(want) + 1 && strcmp(parts[m], want) == 0);
    if (parts[m] && strcmp(parts[m], want) != 0)
      fprintf(stderr, "machine %zu: %s\n", m, (char *)parts[m]);
    free(parts[m]);
  }
  free(parts);
  free(lens);
  rig_test_job_close_ok(job);
}

/* Jobs closed one after another, each with its tree and its requests:
 * a neighbour's endpoint closing while a machine closes is not its loss,
 * nothing of a closed job reaches the next (whose communicator may take
 * its context), and every request of every job is answered. */
static void test_jobs_closed_one_after_another_leave_nothing_for_the_next(void) {
  enum { JOBS = 6 };
  for (int j = 0; j < JOBS; j++) {
    rig_job *job = rig_test_job_start_spmd(SPMD_RUNS);
    CU_ASSERT_PTR_NOT_NULL_FATAL(job);
    rig_error err;
    bool ok = true;
    for (uint64_t r = 0; r < TREE_RUNS && ok; r++)
      ok = rig_job_run_begin(job, r, &err) == RIG_OK &&
           rig_job_run_end(job, r, run_ns(0, r), NULL, &err) == RIG_OK;
    ok = ok && rig_job_runs_done(job, NULL, &err) == RIG_OK;
    CU_ASSERT_TRUE(ok);
    for (size_t m = 1; ok && m < rig_job_machines(job); m++) {
      rig_buffer *b = NULL;
      ok = rig_buffer_create(rig_job_device(job, m, 0), RIG_KIND_DEVICE, 64, &b, &err) == RIG_OK;
      CU_ASSERT_TRUE(ok);
      rig_buffer_release(b);
    }
    if (!ok) fprintf(stderr, "job %d: %s\n", j, err.message);
    CU_ASSERT_FALSE(rig_job_failed(job, NULL));
    rig_test_job_close_ok(job);
  }
}

/* Copies n bytes of b (any machine's) into a fresh host buffer. */
static rig_buffer *read_back(rig_buffer *b, size_t n) {
  rig_buffer *h = rig_test_host_buffer(n);
  rig_point p;
  rig_error err;
  rig_status st = rig_buffer_copy_submit(b, 0, h, 0, n, NULL, 0, &p, &err);
  if (st == RIG_OK) st = rig_point_wait(p, &err);
  if (st != RIG_OK) fprintf(stderr, "read back: %s\n", err.message);
  CU_ASSERT_EQUAL(st, RIG_OK);
  return h;
}

static void test_bootstrap_gathers_every_machine(void) {
  rig_job *job = rig_test_job_start_ok();
  int size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CU_ASSERT_EQUAL(rig_job_machines(job), (size_t)size);
  CU_ASSERT_EQUAL(rig_job_rank(job), 0);
  char cpu_arch[64];
  snprintf(cpu_arch, sizeof cpu_arch, "cpu-%s", rig_host_isa());
  for (size_t m = 0; m < rig_job_machines(job); m++) {
    const rig_machine *mach = rig_job_machine(job, m);
    CU_ASSERT_PTR_NOT_NULL_FATAL(mach);
    CU_ASSERT_EQUAL(mach->rank, (int)m);
    CU_ASSERT(mach->host[0] != 0);
    CU_ASSERT(strstr(mach->topology, "cores") != NULL);
    CU_ASSERT_FATAL(mach->ndevices >= 4);
    CU_ASSERT_STRING_EQUAL(mach->devices[0].name, "host");
    CU_ASSERT_STRING_EQUAL(mach->devices[0].arch, rig_host_isa());
    CU_ASSERT_STRING_EQUAL(mach->devices[1].name, "cpu:0");
    CU_ASSERT_STRING_EQUAL(mach->devices[1].arch, cpu_arch);
    rig_device *d = rig_job_device(job, m, 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    if (m == 0) {
      CU_ASSERT_STRING_EQUAL(rig_device_name(d), "cpu:0");
    } else {
      char name[64];
      snprintf(name, sizeof name, "cpu:0@rank%zu", m);
      CU_ASSERT_STRING_EQUAL(rig_device_name(d), name);
      CU_ASSERT_EQUAL(rig_device_facts_of(d)->machine, (int)m);
      CU_ASSERT_PTR_EQUAL(rig_job_device_named(job, m, "cpu:0"), d);
    }
  }
  CU_ASSERT_PTR_NULL(rig_job_device(job, 0, 99));
  rig_test_job_close_ok(job);
}

/* A closed job frees its proxies: each leaves the device table once
 * nothing uses it, and a buffer still held on one keeps only that one. */
static void test_a_closed_job_leaves_no_proxy_in_the_device_table(void) {
  rig_job *job = rig_test_job_start_ok();
  enum { MAX = 256 };
  uint32_t index[MAX];
  size_t n = 0;
  for (size_t m = 1; m < rig_job_machines(job); m++)
    for (size_t i = 0; n < MAX && rig_job_device(job, m, i); i++)
      index[n++] = rig_device_index(rig_job_device(job, m, i));
  CU_ASSERT_FATAL(n > 0);
  rig_device *kept = rig_job_device(job, 1, 0);
  rig_buffer *held = NULL;
  CU_ASSERT_EQUAL_FATAL(rig_buffer_create(kept, RIG_KIND_DEVICE, 64, &held, NULL), RIG_OK);
  rig_test_job_close_ok(job);
  for (size_t k = 0; k < n; k++) {
    bool is_kept = index[k] == rig_device_index(kept);
    CU_ASSERT_PTR_EQUAL(rig_device_at(index[k]), is_kept ? kept : NULL);
  }
  uint32_t kept_index = rig_device_index(kept);
  rig_buffer_release(held);
  rig_reclaim();
  CU_ASSERT_PTR_NULL(rig_device_at(kept_index));
}

static void test_proxies_alloc_copy_in_and_out_byte_exact(void) {
  rig_job *job = rig_test_job_start_ok();
  enum { N = 100000 };
  rig_buffer *src = rig_test_host_buffer(N);
  unsigned char *s = rig_buffer_host(src);
  for (size_t i = 0; i < N; i++) s[i] = (unsigned char)(i * 7 + 3);
  for (size_t m = 1; m < rig_job_machines(job); m++) {
    rig_device *d = rig_job_device_named(job, m, "cpu:1");
    rig_buffer *remote = NULL;
    rig_error err;
    CU_ASSERT_EQUAL_FATAL(rig_buffer_create(d, RIG_KIND_DEVICE, N, &remote, &err), RIG_OK);
    CU_ASSERT_PTR_NULL(rig_buffer_host(remote));
    rig_point p;
    CU_ASSERT_EQUAL_FATAL(rig_buffer_copy_submit(src, 0, remote, 0, N, NULL, 0, &p, &err), RIG_OK);
    CU_ASSERT_EQUAL(rig_point_device(p), rig_device_index(d));
    /* A second copy at an offset, then the whole back. */
    CU_ASSERT_EQUAL_FATAL(rig_buffer_copy_submit(src, 0, remote, N - 10, 10, NULL, 0, &p, &err),
                          RIG_OK);
    rig_buffer *back = read_back(remote, N);
    unsigned char *b = rig_buffer_host(back);
    CU_ASSERT(memcmp(b, s, N - 10) == 0);
    CU_ASSERT(memcmp(b + N - 10, s, 10) == 0);
    rig_buffer_release(back);
    rig_buffer_release(remote);
  }
  rig_buffer_release(src);
  rig_test_job_close_ok(job);
}

/* A program over the host and cpu:0 whose loop adds (trip + 1) into word 0
 * of its input, Int(0) times a run; its memory of two copies accumulates
 * the same and is moved into word 1. */
static rig_desc *adding_program(void) {
  rig_desc *d = rig_desc_create();
  char cpu[64];
  snprintf(cpu, sizeof cpu, "cpu-%s", rig_host_isa());
  rig_desc_add_device(d, rig_host_isa());
  rig_desc_add_device(d, cpu);
  int64_t m = rig_desc_add_alloc(d, 1, RIG_KIND_DEVICE, 64, RIG_COPIES_TWO);
  rig_test_add_kernels(d, 1);
  rig_desc_add_input(d, 1, 64);
  d->ints = 2;
  rig_desc_step *loop = rig_desc_add_loop(d, NULL, rig_desc_int(0));
  rig_desc_loop_set_trip(loop, 1);
  uint64_t params[2] = {0, 0};
  for (int target = 0; target < 2; target++) {
    rig_desc_submit *s = rig_desc_add_submit(d, loop, 1);
    rig_desc_submit_add_slot(d, s,
                             target ? rig_desc_slot_memory(m, 0, 64) : rig_desc_slot_input(0));
    rig_desc_part *p = rig_desc_submit_add_launch(d, s, 0, "add_u64", params, 16, rig_desc_fixed(1),
                                                  rig_desc_fixed(1));
    rig_desc_part_add_ref(d, p, 0, 0, RIG_USE_WRITE);
    rig_desc_hole *h = rig_desc_data_add_hole(d, &p->u.launch.params, 8, RIG_W64, 1, 0);
    rig_desc_terms_add(d, &h->terms, rig_desc_int(1), 1);
  }
  rig_desc_add_move(d, NULL, rig_desc_slot_memory(m, 0, 8), rig_desc_slot_input(0), 8);
  rig_desc_step *mv = &d->steps.items[d->steps.n - 1];
  rig_desc_terms_add(d, &mv->u.move.dst_offset, rig_desc_fixed(8), 1);
  return d;
}

typedef struct machine_run {
  rig_program *prog;
  rig_buffer *input;
  rig_point *points;
  size_t npoints;
} machine_run;

static void load_on(rig_job *job, size_t m, const rig_desc *d, machine_run *r) {
  rig_device *devs[2] = {rig_job_device(job, m, 0), rig_job_device_named(job, m, "cpu:0")};
  rig_error err;
  rig_status st = rig_program_load(d, devs, 2, NULL, &r->prog, &err);
  if (st != RIG_OK) fprintf(stderr, "load on %zu: %s\n", m, err.message);
  CU_ASSERT_EQUAL_FATAL(st, RIG_OK);
  CU_ASSERT_EQUAL_FATAL(rig_buffer_create(devs[1], RIG_KIND_PINNED, 64, &r->input, &err), RIG_OK);
  rig_buffer *zero = rig_test_host_buffer(64);
  rig_point p;
  CU_ASSERT_EQUAL_FATAL(rig_buffer_copy_submit(zero, 0, r->input, 0, 64, NULL, 0, &p, &err),
                        RIG_OK);
  rig_point_wait(p, NULL);
  rig_buffer_release(zero);
  r->points = rig_program_step_points(r->prog, &r->npoints);
}

static void run_on(machine_run *r, int64_t trips, rig_point *ends, size_t *nends) {
  int64_t ints[1] = {trips};
  rig_frame f = {&r->input, 1, ints, 1, r->points, r->npoints};
  rig_error err;
  rig_status st = rig_program_run(r->prog, &f, NULL, 0, ends, nends, &err);
  if (st != RIG_OK) fprintf(stderr, "run: %s\n", err.message);
  CU_ASSERT_EQUAL(st, RIG_OK);
}

static void unload(machine_run *r) {
  rig_program_release(r->prog);
  rig_buffer_release(r->input);
  free(r->points);
}

static void test_a_program_runs_the_same_on_every_machine(void) {
  rig_job *job = rig_test_job_start_ok();
  rig_desc *d = adding_program();
  size_t n = rig_job_machines(job);
  machine_run runs[8] = {{0}};
  for (size_t m = 0; m < n; m++) load_on(job, m, d, &runs[m]);
  /* Three runs, the machines' runs overlapping. */
  for (int k = 0; k < 3; k++) {
    rig_point ends[8][4];
    size_t nends[8];
    for (size_t m = 0; m < n; m++) run_on(&runs[m], 4, ends[m], &nends[m]);
    for (size_t m = 0; m < n; m++) {
      CU_ASSERT(nends[m] >= 1);
      for (size_t e = 0; e < nends[m]; e++)
        CU_ASSERT_EQUAL(rig_point_wait(ends[m][e], NULL), RIG_OK);
      if (m > 0)
        for (size_t s = 0; s < runs[m].npoints; s++) CU_ASSERT_EQUAL(runs[m].points[s], ends[m][0]);
    }
  }
  uint64_t want[2] = {3 * 10, 2 * 10}; /* copy 0 ran twice of the three runs */
  for (size_t m = 0; m < n; m++) {
    rig_buffer *back = read_back(runs[m].input, 64);
    uint64_t *w = rig_buffer_host(back);
    CU_ASSERT_EQUAL(w[0], want[0]);
    CU_ASSERT_EQUAL(w[1], want[1]);
    if (w[0] != want[0] || w[1] != want[1])
      fprintf(stderr, "machine %zu: %llu %llu\n", m, (unsigned long long)w[0],
              (unsigned long long)w[1]);
    rig_buffer_release(back);
    unload(&runs[m]);
  }
  rig_desc_free(d);
  rig_test_job_close_ok(job);
}

static void test_two_copy_programs_run_many_times_on_agents(void) {
  rig_job *job = rig_test_job_start_ok();
  rig_desc *d = adding_program();
  size_t n = rig_job_machines(job);
  machine_run runs[8] = {{0}};
  for (size_t m = 1; m < n; m++) load_on(job, m, d, &runs[m]);
  for (int k = 0; k < 25; k++)
    for (size_t m = 1; m < n; m++) {
      rig_point ends[4];
      size_t ne;
      run_on(&runs[m], 1, ends, &ne);
    }
  for (size_t m = 1; m < n; m++) {
    rig_buffer *back = read_back(runs[m].input, 64);
    uint64_t *w = rig_buffer_host(back);
    CU_ASSERT_EQUAL(w[0], 25);
    CU_ASSERT_EQUAL(w[1], 13); /* run 24 used copy 0, which ran 13 times */
    rig_buffer_release(back);
    unload(&runs[m]);
  }
  rig_desc_free(d);
  rig_test_job_close_ok(job);
}

/* A refusal of another machine names it, as every error of one does. */
static void test_load_refusals_come_back_with_the_agents_message(void) {
  rig_job *job = rig_test_job_start_ok();
  rig_desc *d = adding_program();
  d->steps.items[0].u.loop.body.items[0].u.submit.parts[0].u.launch.name = rig_desc_str("nope");
  rig_device *devs[2] = {rig_job_device(job, 1, 0), rig_job_device_named(job, 1, "cpu:0")};
  rig_program *p;
  rig_error err;
  char m1[96], want1[256];
  rig_test_label(job, 1, m1, sizeof m1);
  snprintf(want1, sizeof want1, "%s: cpu:0: image 0 has no function \"nope\"", m1);
  RIG_ASSERT_ERROR(rig_program_load(d, devs, 2, NULL, &p, &err), err, RIG_EREFUSED, want1);
  /* An arch the agent's device is not, refused here before anything goes. */
  d->devices[1] = rig_desc_str("sm_90");
  char want[128];
  snprintf(want, sizeof want, "device 1: cpu:0@rank1 is \"cpu-%s\", not \"sm_90\"", rig_host_isa());
  RIG_ASSERT_ERROR(rig_program_load(d, devs, 2, NULL, &p, &err), err, RIG_EINVAL, want);
  /* Malformed bytes sent by hand as a program. */
  rig_image *img;
  snprintf(want1, sizeof want1, "%s: a malformed program at byte 11: an integer past the end", m1);
  RIG_ASSERT_ERROR(rig_image_load(devs[0], "rig.remote\n\1\0", 13, &img, &err), err, RIG_EREFUSED,
                   want1);
  snprintf(want1, sizeof want1, "%s: cpu:0: not an ELF shared object (10 bytes: no ELF magic)", m1);
  RIG_ASSERT_ERROR(rig_image_load(devs[1], "not an elf", 10, &img, &err), err, RIG_EREFUSED, want1);
  rig_desc_free(d);
  rig_test_job_close_ok(job);
}

static void test_malformed_run_words_fail_the_job_with_the_agents_message(void) {
  rig_job *job = rig_test_job_start_ok();
  rig_device *host1 = rig_job_device(job, 1, 0);
  rig_buffer *words = rig_test_host_buffer(8), *on;
  ((uint64_t *)rig_buffer_host(words))[0] = 999;
  CU_ASSERT_EQUAL_FATAL(rig_buffer_borrow(host1, words, &on, NULL), RIG_OK);
  rig_part part = {.kind = RIG_WORK_WORDS};
  part.u.words.side = (rig_side){-1, 0};
  part.u.words.length = 8;
  rig_fixed fixed = {on, RIG_ACCESS_READ};
  rig_submission *s;
  rig_error err;
  CU_ASSERT_EQUAL_FATAL(rig_submission_make(host1, &part, 1, 0, &fixed, 1, &s, &err), RIG_OK);
  rig_point p;
  CU_ASSERT_EQUAL_FATAL(rig_submit(s, NULL, NULL, NULL, 0, &p, &err), RIG_OK);
  char m1[96], want[256];
  snprintf(want, sizeof want, "%s: no program of this entry",
           rig_test_label(job, 1, m1, sizeof m1));
  RIG_ASSERT_ERROR(rig_point_wait(p, &err), err, RIG_EJOB, want);
  CU_ASSERT_TRUE(rig_job_failed(job, &err));
  CU_ASSERT_STRING_EQUAL(err.message, want);
  /* Every proxy answers the root cause now. */
  rig_buffer *more;
  RIG_ASSERT_ERROR(rig_buffer_create(rig_job_device(job, 1, 1), RIG_KIND_DEVICE, 8, &more, &err),
                   err, RIG_EJOB, want);
  rig_submission_release(s);
  rig_buffer_release(on);
  rig_buffer_release(words);
  RIG_ASSERT_ERROR(rig_job_close(job, &err), err, RIG_EJOB, want);
}

static void test_a_run_failing_at_a_step_fails_the_job(void) {
  rig_job *job = rig_test_job_start_ok();
  rig_desc *d = adding_program();
  /* Groups of Int(0): zero trips' loop would run nothing, so the groups
   * read a word the frame sets to 0. */
  d->steps.items[0].u.loop.body.items[0].u.submit.parts[0].u.launch.groups[0] = rig_desc_int(1);
  machine_run r = {0};
  size_t m = rig_job_machines(job) - 1;
  load_on(job, m, d, &r);
  rig_point ends[4];
  size_t ne;
  run_on(&r, 1, ends, &ne);
  rig_error err;
  char want[256], label[96];
  snprintf(want, sizeof want, "%s: step 1: part 0: groups (0, 1, 1) with a zero dimension",
           rig_test_label(job, m, label, sizeof label));
  RIG_ASSERT_ERROR(rig_point_wait(ends[0], &err), err, RIG_EJOB, want);
  unload(&r);
  rig_desc_free(d);
  RIG_ASSERT_ERROR(rig_job_close(job, &err), err, RIG_EJOB, want);
}

static void test_the_threads_check_refuses_too_many_threads_here(void) {
  rig_job *job = rig_test_job_start_ok();
  rig_desc *d = rig_desc_create();
  rig_desc_add_device(d, "polled");
  rig_test_add_kernels(d, 0);
  d->ints = 1;
  rig_desc_submit *s = rig_desc_add_submit(d, NULL, 0);
  rig_desc_part *p =
      rig_desc_submit_add_launch(d, s, 0, "noop", NULL, 0, rig_desc_fixed(1), rig_desc_int(0));
  p->u.launch.threads[1] = rig_desc_fixed(2);
  rig_device *dev = rig_job_device_named(job, 1, "polled:0");
  CU_ASSERT_PTR_NOT_NULL_FATAL(dev);
  rig_program *prog;
  rig_error err;
  CU_ASSERT_EQUAL_FATAL(rig_program_load(d, &dev, 1, NULL, &prog, &err), RIG_OK);
  uint32_t threads[1];
  CU_ASSERT_EQUAL(rig_program_threads(prog, threads, 1), 1);
  CU_ASSERT_EQUAL(threads[0], 64);
  size_t np;
  rig_point *pts = rig_program_step_points(prog, &np);
  int64_t ints[1] = {40};
  rig_frame f = {NULL, 0, ints, 1, pts, np};
  rig_point ends[1];
  size_t ne;
  RIG_ASSERT_ERROR(rig_program_run(prog, &f, NULL, 0, ends, &ne, &err), err, RIG_EINVAL,
                   "step 0: a launch of (40, 2, 1) threads per group, more than its function's 64");
  ints[0] = 32;
  CU_ASSERT_EQUAL(rig_program_run(prog, &f, NULL, 0, ends, &ne, &err), RIG_OK);
  CU_ASSERT_EQUAL(rig_point_wait(ends[0], &err), RIG_OK);
  free(pts);
  rig_program_release(prog);
  rig_desc_free(d);
  rig_test_job_close_ok(job);
}

/* Threads (Int 0, Int 1, 64) of 2^61 and 2^61: a product of 2^128, which
 * wraps to 0 modulo 2^128, is refused all the same. */
static void test_the_threads_check_is_exact_past_64_bits(void) {
  rig_job *job = rig_test_job_start_ok();
  rig_desc *d = rig_desc_create();
  rig_desc_add_device(d, "polled");
  rig_test_add_kernels(d, 0);
  d->ints = 2;
  rig_desc_submit *s = rig_desc_add_submit(d, NULL, 0);
  rig_desc_part *p =
      rig_desc_submit_add_launch(d, s, 0, "noop", NULL, 0, rig_desc_fixed(1), rig_desc_int(0));
  p->u.launch.threads[1] = rig_desc_int(1);
  p->u.launch.threads[2] = rig_desc_fixed(64);
  rig_device *dev = rig_job_device_named(job, 1, "polled:0");
  CU_ASSERT_PTR_NOT_NULL_FATAL(dev);
  rig_program *prog;
  rig_error err;
  CU_ASSERT_EQUAL_FATAL(rig_program_load(d, &dev, 1, NULL, &prog, &err), RIG_OK);
  size_t np;
  rig_point *pts = rig_program_step_points(prog, &np);
  int64_t ints[2] = {INT64_C(1) << 61, INT64_C(1) << 61};
  rig_frame f = {NULL, 0, ints, 2, pts, np};
  rig_point ends[1];
  size_t ne;
  RIG_ASSERT_ERROR(rig_program_run(prog, &f, NULL, 0, ends, &ne, &err), err, RIG_EINVAL,
                   "step 0: a launch of (2305843009213693952, 2305843009213693952, 64) threads "
                   "per group, more than its function's 64");
  free(pts);
  rig_program_release(prog);
  rig_desc_free(d);
  rig_test_job_close_ok(job);
}

/* A fault of the input named as such reaches every rank with its kind. */
static void test_every_machine_learns_what_the_cause_stands_for(void) {
  rig_job *job = rig_test_job_start_ok();
  rig_error err;
  CU_ASSERT_EQUAL(rig_job_cause(job, &err), RIG_OK);
  CU_ASSERT_EQUAL(rig_job_fail_as(job, RIG_EINVAL, "a job file's fault"), RIG_EJOB);
  CU_ASSERT_EQUAL(rig_job_cause(job, &err), RIG_EINVAL);
  CU_ASSERT_STRING_EQUAL(err.message, "a job file's fault");
  CU_ASSERT_TRUE(rig_job_failed(job, &err));
  CU_ASSERT_EQUAL(err.code, RIG_EJOB);
  RIG_ASSERT_ERROR(rig_job_close(job, &err), err, RIG_EJOB, "a job file's fault");
  int size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  rig_status codes[16] = {0};
  CU_ASSERT_FATAL(size <= 16);
  rig_test_agent_causes(codes);
  for (int r = 1; r < size; r++) CU_ASSERT_EQUAL(codes[r], RIG_EINVAL);
}

/* A cause of no kind (a machine's run failing) stands for RIG_EJOB. */
static void test_a_failure_of_the_job_stands_for_a_job_failure(void) {
  rig_job *job = rig_test_job_start_ok();
  CU_ASSERT_EQUAL(rig_job_fail(job, "gone"), RIG_EJOB);
  CU_ASSERT_EQUAL(rig_job_cause(job, NULL), RIG_EJOB);
  rig_error err;
  RIG_ASSERT_ERROR(rig_job_close(job, &err), err, RIG_EJOB, "gone");
}

/* ---- the control thread's stop --------------------------------------------------------- */

/* A control thread held inside a call (as Open MPI 4.1's MPI_Test was
 * seen spinning for ever after a peer's death): its hook blocks until
 * let go. */
static _Atomic bool hold_control, control_held;

static bool held_busy(rig_job *job) {
  (void)job;
  atomic_store(&control_held, true);
  while (atomic_load(&hold_control)) {
    struct timespec ms = {0, 1000000};
    nanosleep(&ms, NULL);
  }
  return false;
}

static void deliver_nothing(rig_job *job, int src, const frame *f, const unsigned char *payload) {
  (void)job, (void)src, (void)f, (void)payload;
}

static rig_status fail_nothing(rig_job *job, bool tell, const char *cause, rig_error *err) {
  (void)job, (void)tell, (void)cause, (void)err;
  return RIG_EJOB;
}

/* The close of a job whose control thread never comes back from a call
 * into MPI returns, saying so, rather than wait for it for ever; the
 * thread, let go later, still ends and is stopped as usual. */
static void test_a_control_thread_stuck_in_a_call_leaves_its_stop_bounded(void) {
  static _Atomic bool failed;
  static const char labels[1][RIG_JOB_LABEL] = {"machine 0"};
  ctl c = {.rank = 0, .size = 1, .failed = &failed, .labels = labels, .stop_wait_s = 0.2};
  c.hooks = (ctl_hooks){NULL, deliver_nothing, held_busy, fail_nothing, NULL, NULL};
  CU_ASSERT_EQUAL_FATAL(MPI_Comm_dup(MPI_COMM_SELF, &c.comm), MPI_SUCCESS);
  atomic_store(&hold_control, true);
  atomic_store(&control_held, false);
  rig_error err;
  CU_ASSERT_EQUAL_FATAL(rig_ctl_start(&c, &err), RIG_OK);
  rig_wait held = rig_wait_begin(RIG_HANG_S);
  while (!atomic_load(&control_held) && rig_wait_more(&held)) {
  }
  CU_ASSERT_TRUE(atomic_load(&control_held));
  CU_ASSERT_EQUAL(rig_ctl_stop(&c), CTL_STUCK);
  CU_ASSERT_TRUE(c.started);
  atomic_store(&hold_control, false);
  c.stop_wait_s = RIG_HANG_S;
  ctl_end end = rig_ctl_stop(&c);
  CU_ASSERT_NOT_EQUAL(end, CTL_STUCK);
  CU_ASSERT_FALSE(c.started);
  if (end == CTL_IDLE) MPI_Comm_free(&c.comm);
}

void rig_test_register(void) {
  static CU_TestInfo tests[] = {
      {"bootstrap gathers every machine", test_bootstrap_gathers_every_machine},
      {"the tree starts and ends every run and names the slowest",
       test_the_tree_starts_and_ends_every_run_and_names_the_slowest},
      {"the tree begins no run before run r less w ended everywhere",
       test_no_machine_begins_a_run_before_run_r_less_w_ended_everywhere},
      {"the tree fails the job on a forged report naming its sender",
       test_the_tree_fails_the_job_on_a_forged_report_naming_its_sender},
      {"the tree shares bytes with every machine", test_the_tree_shares_bytes_with_every_machine},
      {"an agent that closes in a run fails the job naming itself",
       test_an_agent_that_closes_in_a_run_fails_the_job_naming_itself},
      {"a close of the controller ends every agent's wait",
       test_a_close_of_the_controller_ends_every_agents_wait},
      {"the tree scatters and gathers each machine's bytes",
       test_the_tree_scatters_and_gathers_each_machines_bytes},
      {"the tree agrees only when every machine does",
       test_the_tree_agrees_only_when_every_machine_does},
      {"a failure ends a wait on the tree", test_a_failure_ends_a_wait_on_the_tree},
      {"machines that fail alike are told once together",
       test_machines_that_fail_alike_are_told_once_together},
      {"jobs closed one after another leave nothing for the next",
       test_jobs_closed_one_after_another_leave_nothing_for_the_next},
      {"a closed job leaves no proxy in the device table",
       test_a_closed_job_leaves_no_proxy_in_the_device_table},
      {"proxies alloc, copy in and copy out byte exact",
       test_proxies_alloc_copy_in_and_out_byte_exact},
      {"a program runs the same on every machine", test_a_program_runs_the_same_on_every_machine},
      {"two-copy programs run many times on agents",
       test_two_copy_programs_run_many_times_on_agents},
      {"load refusals come back with the agent's message",
       test_load_refusals_come_back_with_the_agents_message},
      {"the threads check refuses too many threads here",
       test_the_threads_check_refuses_too_many_threads_here},
      {"the threads check is exact past 64 bits", test_the_threads_check_is_exact_past_64_bits},
      {"malformed run words fail the job with the agent's message",
       test_malformed_run_words_fail_the_job_with_the_agents_message},
      {"a run failing at a step fails the job", test_a_run_failing_at_a_step_fails_the_job},
      {"every machine learns what the cause stands for",
       test_every_machine_learns_what_the_cause_stands_for},
      {"a failure of the job stands for a job failure",
       test_a_failure_of_the_job_stands_for_a_job_failure},
      {"a control thread stuck in a call leaves its stop bounded",
       test_a_control_thread_stuck_in_a_call_leaves_its_stop_bounded},
      CU_TEST_INFO_NULL};
  rig_test_add_suite("job", tests);
}
