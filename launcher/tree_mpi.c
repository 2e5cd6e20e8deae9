/* The tree's words by MPI (tree.h): its sends and receives on the tree's
 * communicator, counted, a wait for requests that ends when the job
 * fails, and what a broken word or a failed call does to the job. */
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "base/clock.h"
#include "base/count_wait.h"
#include "base/sync.h"
#include "bootstrap.h"
#include "failure.h"
#include "job_state.h"
#include "tree.h"

rig_status rig_tree_usable(rig_job *job, rig_error *err) {
  if (atomic_load(&job->failed)) return rig_job_error(job, err);
  if (job->tree.comm == MPI_COMM_NULL)
    return rig_error_set(err, RIG_EINVAL, "the job has no tree (it did not start)");
  return RIG_OK;
}

/* An MPI failure on the tree is the job's, this machine's. */
static rig_status mpi_failed(rig_job *job, rig_error *err) {
  job->tree.pending = true;
  rig_job_fail_here(job, err);
  return rig_job_error(job, err);
}

rig_status rig_tree_send_failed(rig_job *job, rig_error *err) {
  if (!atomic_load(&job->failed)) rig_job_fail_here(job, err);
  return rig_job_error(job, err);
}

rig_status rig_tree_mpi(rig_job *job, int rc, const char *call, rig_error *err) {
  return rig_mpi_status(rc, call, err) == RIG_OK ? RIG_OK : mpi_failed(job, err);
}

rig_status rig_tree_mpi_wait(rig_job *job, MPI_Request *reqs, int n, rig_error *err) {
  double t0 = 0;
  long nap_ns = 20000;
  for (unsigned polls = 0;; polls++) {
    /* MPI_Test one by one, not MPI_Testall: a done request becomes
     * MPI_REQUEST_NULL alike, and GCC takes MPICH's MPI_STATUSES_IGNORE
     * for an array of no room. */
    bool done = true;
    for (int i = 0; i < n; i++) {
      int one = 0;
      if (rig_tree_mpi(job, MPI_Test(&reqs[i], &one, MPI_STATUS_IGNORE), "MPI_Test", err) != RIG_OK)
        return RIG_EJOB;
      done = done && one;
    }
    if (done) return RIG_OK;
    if (atomic_load(&job->failed) || rig_tree_closed(job, err)) {
      job->tree.pending = true;
      return atomic_load(&job->failed) ? rig_job_error(job, err) : RIG_EJOB;
    }
    if (polls < 256) {
      rig_cpu_relax();
      continue;
    }
    double now = rig_now_s();
    if (!t0) t0 = now;
    if (now - t0 < RIG_WAIT_YIELD_S) {
      sched_yield();
      continue;
    }
    struct timespec nap = {0, nap_ns};
    nanosleep(&nap, NULL);
    if (nap_ns < 1000000) nap_ns *= 2;
  }
}

rig_status rig_tree_isend(rig_job *job, const void *b, size_t n, MPI_Datatype type, int to, int tag,
                          MPI_Request *req, rig_error *err) {
  job_tree *t = &job->tree;
  int size = 1;
  MPI_Type_size(type, &size);
  atomic_fetch_add_explicit(&t->messages, 1, memory_order_relaxed);
  atomic_fetch_add_explicit(&t->bytes, n * (size_t)size, memory_order_relaxed);
  return rig_tree_mpi(job, MPI_Isend(b, (int)n, type, to, tag, t->comm, req), "MPI_Isend", err);
}

rig_status rig_tree_irecv(rig_job *job, void *b, size_t n, MPI_Datatype type, int from, int tag,
                          MPI_Request *req, rig_error *err) {
  return rig_tree_mpi(job, MPI_Irecv(b, (int)n, type, from, tag, job->tree.comm, req), "MPI_Irecv",
                      err);
}

rig_status rig_tree_out_of_step(rig_job *job, int from, const char *what, uint64_t got,
                                uint64_t want, rig_error *err) {
  rig_error e;
  rig_error_set(&e, RIG_EJOB, "the tree: %s of run %llu from %s, in run %llu", what,
                (unsigned long long)got, rig_job_label(job, from), (unsigned long long)want);
  rig_job_fail_here(job, &e);
  return rig_job_error(job, err);
}

/* ---- the runs' way by MPI --------------------------------------------------------------- */

/* Where the run's words and requests are (tree.h). */
static uint64_t *done_word(job_tree *t, int c) {
  return t->run_words + 3 * (size_t)c;
}
static uint64_t *start_word(job_tree *t) {
  return t->run_words + 3 * (size_t)t->nchildren;
}
static uint64_t *start_out(job_tree *t, uint64_t q) {
  return start_word(t) + 1 + q % 2;
}
static uint64_t *done_out(job_tree *t, uint64_t q) {
  return start_word(t) + 3 + 3 * (q % 2);
}
static MPI_Request *done_req(job_tree *t, int c) {
  return &t->run_reqs[c];
}
static MPI_Request *start_req(job_tree *t, int c, uint64_t q) {
  return &t->run_reqs[t->nchildren + 2 * c + (int)(q % 2)];
}
static MPI_Request *start_in_req(job_tree *t) {
  return &t->run_reqs[3 * t->nchildren];
}
static MPI_Request *up_req(job_tree *t, uint64_t q) {
  return &t->run_reqs[3 * t->nchildren + 1 + (int)(q % 2)];
}
enum { RUN_WORDS_MORE = 9, RUN_REQS_MORE = 3 }; /* beside 3 a child */

rig_status rig_tree_mpi_start(rig_job *job, rig_error *err) {
  job_tree *t = &job->tree;
  size_t n = (size_t)t->nchildren;
  t->run_words = calloc(3 * n + RUN_WORDS_MORE, sizeof *t->run_words);
  t->run_reqs = calloc(3 * n + RUN_REQS_MORE, sizeof *t->run_reqs);
  if (!t->run_words || !t->run_reqs)
    return rig_error_set(err, RIG_ENOMEM, "out of memory starting a job");
  for (size_t i = 0; i < 3 * n + RUN_REQS_MORE; i++) t->run_reqs[i] = MPI_REQUEST_NULL;
  return RIG_OK;
}

/* A receive left listening for a word no run will take (the start of a
 * run past the last): cancelled, so that its words may go. */
static bool cancel(MPI_Request *req) {
  if (*req == MPI_REQUEST_NULL) return true;
  MPI_Cancel(req);
  return MPI_Wait(req, MPI_STATUS_IGNORE) == MPI_SUCCESS;
}

/* Whether a send's request is free (its send done); tested. */
static bool free_req(MPI_Request *r) {
  int done = 1;
  if (*r != MPI_REQUEST_NULL && MPI_Test(r, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) done = 0;
  return done;
}

static bool sends_done(job_tree *t) {
  for (int i = t->nchildren; i < 3 * t->nchildren + RUN_REQS_MORE; i++)
    if (&t->run_reqs[i] != start_in_req(t) && !free_req(&t->run_reqs[i])) return false;
  return true;
}

bool rig_tree_mpi_free(rig_job *job) {
  job_tree *t = &job->tree;
  if (!t->run_reqs) return false;
  /* A failed job's requests may still be MPI's; a closed one's receives
   * are cancelled, and its sends (of a few words, done at once but for a
   * peer that is gone) waited for a while. */
  bool left = atomic_load(&job->failed) || t->pending;
  if (!left) {
    bool ok = cancel(start_in_req(t));
    for (int c = 0; c < t->nchildren; c++) ok = cancel(done_req(t, c)) && ok;
    double until = rig_now_s() + 1.0;
    while (ok && !sends_done(t) && rig_now_s() < until) sched_yield();
    left = !ok || !sends_done(t);
  }
  if (left) return true; /* the words and requests stay, reachable, for MPI */
  free(t->run_words);
  free(t->run_reqs);
  t->run_words = NULL;
  t->run_reqs = NULL;
  return false;
}

/* The words come: a start from the parent, each child's end, each
 * checked against the run it must be, and the receive posted again. */
static rig_status take(rig_job *job, rig_error *err) {
  job_tree *t = &job->tree;
  rig_status st = RIG_OK;
  int done = 0;
  if (t->parent >= 0) {
    MPI_Request *r = start_in_req(t);
    if (*r != MPI_REQUEST_NULL &&
        (st = rig_tree_mpi(job, MPI_Test(r, &done, MPI_STATUS_IGNORE), "MPI_Test", err)) != RIG_OK)
      return st;
    if (done) {
      uint64_t q = atomic_load(&t->start_came);
      if (*start_word(t) != q)
        return rig_tree_out_of_step(job, t->parent, "a start", *start_word(t), q, err);
      atomic_store(&t->start_came, q + 1);
    }
    if (*r == MPI_REQUEST_NULL && (st = rig_tree_irecv(job, start_word(t), 1, MPI_UINT64_T,
                                                       t->parent, TAG_START, r, err)) != RIG_OK)
      return st;
  }
  for (int c = 0; c < t->nchildren; c++) {
    MPI_Request *r = done_req(t, c);
    done = 0;
    if (*r != MPI_REQUEST_NULL &&
        (st = rig_tree_mpi(job, MPI_Test(r, &done, MPI_STATUS_IGNORE), "MPI_Test", err)) != RIG_OK)
      return st;
    if (done) {
      const uint64_t *d = done_word(t, c);
      uint64_t q = atomic_load(&t->done_came[c]);
      if (d[0] != q) return rig_tree_out_of_step(job, t->first + c, "a report", d[0], q, err);
      if (d[2] >= (uint64_t)job->size)
        return rig_tree_out_of_step(job, t->first + c, "a report of a machine outside the job",
                                    d[0], q, err);
      t->done_ns[2 * (size_t)c + q % 2] = d[1];
      t->done_machine[2 * (size_t)c + q % 2] = (int64_t)d[2];
      atomic_store(&t->done_came[c], q + 1);
    }
    if (*r == MPI_REQUEST_NULL && (st = rig_tree_irecv(job, done_word(t, c), 3, MPI_UINT64_T,
                                                       t->first + c, TAG_DONE, r, err)) != RIG_OK)
      return st;
  }
  return RIG_OK;
}

static bool may_send(rig_job *job, bool start, uint64_t q) {
  job_tree *t = &job->tree;
  if (!start) return free_req(up_req(t, q));
  for (int c = 0; c < t->nchildren; c++)
    if (!free_req(start_req(t, c, q))) return false;
  return true;
}

static rig_status start(rig_job *job, uint64_t q, rig_error *err) {
  job_tree *t = &job->tree;
  *start_out(t, q) = q;
  rig_status st = RIG_OK;
  for (int c = 0; st == RIG_OK && c < t->nchildren; c++)
    st = rig_tree_isend(job, start_out(t, q), 1, MPI_UINT64_T, t->first + c, TAG_START,
                        start_req(t, c, q), err);
  return st;
}

static rig_status done(rig_job *job, uint64_t q, uint64_t ns, int64_t machine, rig_error *err) {
  job_tree *t = &job->tree;
  uint64_t *w = done_out(t, q);
  w[0] = q;
  w[1] = ns;
  w[2] = (uint64_t)machine;
  return rig_tree_isend(job, w, 3, MPI_UINT64_T, t->parent, TAG_DONE, up_req(t, q), err);
}

static void waiting(bool on) {
  (void)on;
}

static bool progress(void) {
  return false; /* the take's tests progress MPI */
}

void rig_tree_nap(job_tree *t, uint32_t seen, long *nap_ns) {
  (void)t;
  (void)seen;
  struct timespec nap = {0, *nap_ns};
  nanosleep(&nap, NULL);
  if (*nap_ns < 1000000) *nap_ns *= 2;
}

static bool settled(rig_job *job) {
  return sends_done(&job->tree);
}

/* MPI is every machine's: the last way tried. */
static rig_status open_mpi(rig_job *job, bool *pending, bool *ok, rig_error *err) {
  (void)pending;
  *ok = true;
  return rig_tree_mpi_start(job, err);
}

const tree_way rig_tree_by_mpi = {
    .name = "MPI",
    .open = open_mpi,
    .take = take,
    .may_send = may_send,
    .start = start,
    .done = done,
    .waiting = waiting,
    .progress = progress,
    .sleep = rig_tree_nap,
    .settled = settled,
    .spin_s = rig_wait_spin_s,
};
