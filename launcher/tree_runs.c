/* Runs begun down the job's tree and ended up it (tree.h, rig_job.h).
 *
 * Run q starts on a machine once run q - W is done on every machine: a
 * start goes down as soon as it may (machine 0 sends run q's once it knows
 * run q - W done everywhere, every other machine passes a start on as it
 * comes), and a subtree's end of a run goes up as soon as it is whole
 * (the machine's own end and its children's). With W = 2 neither waits
 * for the next run's own work: machine 0 learns of run q - 1's end while
 * it runs run q, and its children have run q + 1's start before they end
 * run q. The protocol's steps are chores that whichever thread of the
 * process waits does (a rail's wait in a kernel, the tree's own waits:
 * base/count_wait.h), under the tree's lock, never blocking; the calls
 * wait for what they need and do the chores meanwhile. The words go by
 * the tree's way (tree.h), into this process's mailbox. */
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/count_wait.h"
#include "base/sync.h"
#include "failure.h"
#include "job_state.h"
#include "jobs.h"
#include "tree.h"

/* ---- the process's jobs, for the chores of its waiting threads ------------------------ */

static rig_status chores(rig_job *job, rig_error *err);

/* The jobs whose chores a waiting thread does, their runs' locks held. */
typedef struct chore_jobs {
  rig_job *job[RIG_JOBS_MAX];
  size_t n;
} chore_jobs;

static void take_chores(rig_job *job, void *ctx) {
  chore_jobs *c = ctx;
  job_tree *t = &job->tree;
  if (t->runs_open && !atomic_load(&job->failed) && pthread_mutex_trylock(&t->runs_lock) == 0)
    c->job[c->n++] = job;
}

/* A waiting thread's chores: every job's whose lock is free (a thread
 * that holds it does them itself). Done once the open jobs' lock is let
 * go: a chore sends, which may wait for the rails' engine, whose thread's
 * handlers take that lock. */
static void chores_of_all(void) {
  chore_jobs c;
  c.n = 0;
  if (!rig_jobs_try_each(take_chores, &c)) return;
  for (size_t i = 0; i < c.n; i++) {
    rig_error ignored;
    chores(c.job[i], &ignored); /* a failure is the job's: its own waits tell it */
    pthread_mutex_unlock(&c.job[i]->tree.runs_lock);
  }
}

rig_status rig_tree_runs_make(rig_job *job, rig_error *err) {
  job_tree *t = &job->tree;
  size_t n = (size_t)t->nchildren;
  t->done_came = calloc(n + 1, sizeof *t->done_came);
  t->done_ns = calloc(2 * n + 1, sizeof *t->done_ns);
  t->done_machine = calloc(2 * n + 1, sizeof *t->done_machine);
  if (!t->done_came || !t->done_ns || !t->done_machine)
    return rig_error_set(err, RIG_ENOMEM, "out of memory starting a job");
  pthread_mutex_init(&t->runs_lock, NULL);
  t->runs_made = true;
  return RIG_OK;
}

void rig_tree_runs_open(rig_job *job) {
  rig_jobs_lock();
  job->tree.runs_open = true;
  rig_jobs_unlock();
  rig_wait_chores_set(chores_of_all);
}

/* No waiting thread's chore takes the runs from here on; one under way
 * holds their lock, and is waited for. Nor does a tree message fill the
 * mailbox (tree_peers.c), whose words go next. */
static void runs_close(rig_job *job) {
  job_tree *t = &job->tree;
  rig_jobs_lock();
  t->runs_open = false;
  t->runs_made = false;
  rig_jobs_unlock();
  pthread_mutex_lock(&t->runs_lock);
  pthread_mutex_unlock(&t->runs_lock);
}

static void serve(job_tree *t, bool on);

bool rig_tree_runs_free(rig_job *job) {
  job_tree *t = &job->tree;
  serve(t, false); /* a run the job's failure cut short */
  if (!t->runs_made) return false;
  /* No chore runs from here on. */
  runs_close(job);
  pthread_mutex_destroy(&t->runs_lock);
  free(t->done_came);
  free(t->done_ns);
  free(t->done_machine);
  t->done_came = NULL;
  t->done_ns = NULL;
  t->done_machine = NULL;
  return false;
}

/* ---- the chores ------------------------------------------------------------------------ */

static bool children_done(job_tree *t, uint64_t q) {
  for (int c = 0; c < t->nchildren; c++)
    if (atomic_load_explicit(&t->done_came[c], memory_order_acquire) < q + 1) return false;
  return true;
}

/* The subtree's runs whose ends are whole: each one's slowest machine,
 * sent up (machine 0: kept for its caller). */
static rig_status report_whole(rig_job *job, rig_error *err) {
  job_tree *t = &job->tree;
  while (t->reported < t->ended && children_done(t, t->reported)) {
    uint64_t q = t->reported;
    rig_job_slowest s = {t->own_ns[q % 2], job->rank, q};
    for (int c = 0; c < t->nchildren; c++) {
      size_t at = 2 * (size_t)c + q % 2;
      if (t->done_ns[at] > s.ns) s = (rig_job_slowest){t->done_ns[at], (int)t->done_machine[at], q};
    }
    if (t->parent < 0) {
      t->slow[q % 2] = s;
    } else {
      if (!t->way->may_send(job, false, q)) break;
      if (t->way->done(job, q, s.ns, s.machine, err) != RIG_OK)
        return rig_tree_send_failed(job, err);
    }
    t->reported++;
  }
  return RIG_OK;
}

/* The starts that may go down: another machine's as they came; machine
 * 0's once run q - W is known done everywhere, and no further than W - 1
 * runs past those it began (with W = 2, run q + 1's while it runs run q:
 * its children have it before they end run q), nor past the last run its
 * caller planned (rig_job_runs_plan; else one start goes past the last). */
static rig_status start_due(rig_job *job, rig_error *err) {
  job_tree *t = &job->tree;
  uint64_t limit = atomic_load(&t->start_came);
  if (t->parent < 0) {
    limit = t->reported + t->in_flight;
    if (limit > t->begun + t->in_flight - 1) limit = t->begun + t->in_flight - 1;
    if (t->planned && limit > t->planned) limit = t->planned;
  }
  while (t->started < limit && t->way->may_send(job, true, t->started)) {
    if (t->nchildren && t->way->start(job, t->started, err) != RIG_OK)
      return rig_tree_send_failed(job, err);
    t->started++;
  }
  return RIG_OK;
}

/* Under the lock; never blocks. */
static rig_status chores(rig_job *job, rig_error *err) {
  rig_status st = job->tree.way->take(job, err);
  if (st == RIG_OK) st = report_whole(job, err);
  if (st == RIG_OK) st = start_due(job, err);
  return st;
}

/* ---- waiting ----------------------------------------------------------------------------- */

typedef bool tree_cond(rig_job *job, uint64_t arg);

/* Run q may start here: machine 0 once run q - W is known done
 * everywhere, another machine once its start came. */
static bool may_start(rig_job *job, uint64_t q) {
  job_tree *t = &job->tree;
  if (t->parent < 0) return q < t->reported + t->in_flight;
  return atomic_load_explicit(&t->start_came, memory_order_acquire) > q;
}

static bool known(rig_job *job, uint64_t q) {
  return job->tree.reported >= q;
}

/* Every run ended here is reported, every send done. */
static bool settled(rig_job *job, uint64_t unused) {
  (void)unused;
  return job->tree.reported >= job->tree.ended && job->tree.way->settled(job);
}

/* Does the chores until cond holds, or the job fails: spinning
 * rig_wait_spin_s, yielding RIG_WAIT_YIELD_S, then asleep as the way
 * sleeps. */
static rig_status wait_for(rig_job *job, tree_cond *cond, uint64_t arg, rig_error *err) {
  job_tree *t = &job->tree;
  const tree_way *way = t->way;
  /* Most often it holds already: no wait begins. */
  pthread_mutex_lock(&t->runs_lock);
  bool met = cond(job, arg);
  pthread_mutex_unlock(&t->runs_lock);
  if (met) return RIG_OK;
  way->waiting(true);
  rig_status st = RIG_OK;
  double t0 = 0, spin_s = way->spin_s();
  long nap_ns = 20000;
  for (unsigned polls = 0;; polls++) {
    uint32_t seen = atomic_load_explicit(&t->mail, memory_order_acquire);
    pthread_mutex_lock(&t->runs_lock);
    st = chores(job, err);
    met = st == RIG_OK && cond(job, arg);
    pthread_mutex_unlock(&t->runs_lock);
    if (st != RIG_OK || met) break;
    if (atomic_load(&job->failed)) {
      st = rig_job_error(job, err);
      break;
    }
    if (rig_tree_closed(job, err)) {
      st = RIG_EJOB;
      break;
    }
    if (way->progress()) continue;
    if (polls < 64) {
      rig_cpu_relax();
      continue;
    }
    double now = rig_now_s();
    if (!t0) t0 = now;
    if (now - t0 < spin_s) {
      rig_cpu_relax();
      continue;
    }
    if (now - t0 < spin_s + RIG_WAIT_YIELD_S) {
      sched_yield();
      continue;
    }
    way->sleep(t, seen, &nap_ns);
  }
  way->waiting(false);
  /* Left to MPI, if it is the way: the words stay with the tree. */
  if (st != RIG_OK) t->pending = true;
  return st;
}

/* ---- runs ------------------------------------------------------------------------------ */

/* This machine's run is in flight, or no longer: the rail thread serves
 * its rails meanwhile (rails.md, "Waiting on a rail across hosts"). */
static void serve(job_tree *t, bool on) {
  if (t->serving == on) return;
  t->serving = on;
  rig_rails_serve(on);
}

rig_status rig_job_run_begin(rig_job *job, uint64_t run, rig_error *err) {
  rig_status st = rig_tree_usable(job, err);
  if (st != RIG_OK) return st;
  job_tree *t = &job->tree;
  if (t->begun > t->ended)
    return rig_error_set(err, RIG_EINVAL, "run %llu begins before the one before it ended",
                         (unsigned long long)run);
  serve(t, true);
  if ((st = wait_for(job, may_start, t->begun, err)) != RIG_OK) return st;
  /* The children have the start before this machine's own run begins,
   * which may wait on theirs (a rail): passed on as it came, or, on
   * machine 0, sent now at the latest. */
  pthread_mutex_lock(&t->runs_lock);
  t->begun++;
  rig_job_running(job, run);
  st = chores(job, err);
  pthread_mutex_unlock(&t->runs_lock);
  return st;
}

void rig_job_runs_plan(rig_job *job, uint64_t runs) {
  job_tree *t = &job->tree;
  if (t->parent >= 0 || !t->runs_made) return;
  pthread_mutex_lock(&t->runs_lock);
  t->planned = t->begun + runs;
  pthread_mutex_unlock(&t->runs_lock);
}

/* Machine 0's caller learns of run upto - 1, known done everywhere,
 * unless it was told already. */
static void tell(job_tree *t, uint64_t upto, rig_job_slowest *slowest) {
  if (!upto || t->returned >= upto) return;
  uint64_t q = upto - 1;
  t->returned = upto;
  if (!slowest) return;
  *slowest = t->slow[q % 2];
  /* The caller's number of run q: it ended the tree's run ended - 1 as
   * last_run. */
  uint64_t behind = t->ended - 1 - q;
  slowest->run = t->last_run >= behind ? t->last_run - behind : RIG_JOB_NO_RUN;
}

rig_status rig_job_run_end(rig_job *job, uint64_t run, uint64_t ns, rig_job_slowest *slowest,
                           rig_error *err) {
  job_tree *t = &job->tree;
  serve(t, false);
  rig_job_running(NULL, 0);
  if (slowest) *slowest = (rig_job_slowest){0, -1, RIG_JOB_NO_RUN};
  rig_status st = rig_tree_usable(job, err);
  if (st != RIG_OK) return st;
  if (t->ended >= t->begun)
    return rig_error_set(err, RIG_EINVAL, "the end of run %llu, which did not begin",
                         (unsigned long long)run);
  pthread_mutex_lock(&t->runs_lock);
  t->own_ns[t->ended % TREE_IN_FLIGHT_MAX] = ns;
  t->ended++;
  t->last_run = run;
  st = chores(job, err);
  pthread_mutex_unlock(&t->runs_lock);
  if (st != RIG_OK) return st;
  /* Machine 0 waits for run q - W + 1 everywhere, and tells it. Another
   * machine's end went up by the chores once whole, or goes up by its
   * next wait's. */
  if (t->parent >= 0) return RIG_OK;
  uint64_t upto = t->ended - (t->in_flight - 1);
  if ((st = wait_for(job, known, upto, err)) != RIG_OK) return st;
  tell(t, upto, slowest); /* a later run known done already is told at the next end */
  return RIG_OK;
}

rig_status rig_job_runs_done(rig_job *job, rig_job_slowest *slowest, rig_error *err) {
  job_tree *t = &job->tree;
  serve(t, false);
  if (slowest) *slowest = (rig_job_slowest){0, -1, RIG_JOB_NO_RUN};
  rig_status st = rig_tree_usable(job, err);
  if (st != RIG_OK) return st;
  if (t->ended < t->begun)
    return rig_error_set(err, RIG_EINVAL, "the runs' end while run %llu goes on",
                         (unsigned long long)t->last_run + 1);
  if ((st = wait_for(job, settled, 0, err)) != RIG_OK) return st;
  if (t->parent < 0) tell(t, t->reported, slowest);
  return RIG_OK;
}
