/* The runs' way by shared memory (tree.h), where every machine is on one
 * host: each machine makes a box (a shared area, rig_area: only its own
 * user maps it) that its neighbours map, and a word goes as a store into
 * the receiver's box: a start into the child's, an end into the parent's
 * (its slowest first, the count last, with release). A store costs what
 * MPI's shared memory does without its calls, and nobody need progress
 * anything for it to land.
 *
 * A box is written by other processes: it is input from the wire. Each
 * look at it (take) checks what changed against what the protocol allows
 * (a count only grows, by no more than the runs this machine let happen;
 * a slowest machine is one of the job's) before the mailbox takes it; a
 * box that breaks it fails the job naming its writer. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "base/count_wait.h"
#include "base/sync.h"
#include "bootstrap.h"
#include "failure.h"
#include "job_state.h"
#include "rig/rig_rail.h"
#include "tree.h"

/* A box of a machine of n children: the start (its own cache line), then
 * each child's count of ends, then each child's slowest of run q at slot
 * 2 c + q % 2, its ns and its machine. */
#define BOX_HEAD 64
/* The most bytes of an area's address taken from a neighbour. */
#define ADDRESS_MAX 65536

static size_t box_bytes(int n) {
  return BOX_HEAD + 40 * (size_t)n;
}
static _Atomic uint64_t *box_start(void *b) {
  return b;
}
static _Atomic uint64_t *box_done(void *b, int c) {
  return (_Atomic uint64_t *)((unsigned char *)b + BOX_HEAD) + c;
}
static uint64_t *box_ns(void *b, int n, size_t at) {
  return (uint64_t *)((unsigned char *)b + BOX_HEAD + 8 * (size_t)n) + at;
}
static int64_t *box_machine(void *b, int n, size_t at) {
  return (int64_t *)((unsigned char *)b + BOX_HEAD + 24 * (size_t)n) + at;
}

/* Machine m's children, as rig_tree_start places them. */
static int children_of(const rig_job *job, int m) {
  long k = job->tree.fanout, first = k * m + 1;
  if (first >= job->size) return 0;
  long last = first + k < job->size ? first + k : job->size;
  return (int)(last - first);
}

/* The neighbour i's box here: child i, or the parent after the children. */
static void *theirs(job_tree *t, int i) {
  return rig_area_base(t->theirs[i]);
}

void rig_tree_memory_free(rig_job *job) {
  job_tree *t = &job->tree;
  int k = t->nchildren + (t->parent >= 0);
  for (int i = 0; t->theirs && i < k; i++) rig_area_release(t->theirs[i]);
  free(t->theirs);
  rig_area_release(t->box);
  t->theirs = NULL;
  t->box = NULL;
}

/* Whether every machine says `mine`, bounded as the start is. */
static rig_status all_say(rig_job *job, bool mine, bool *all, bool *pending, rig_error *err) {
  int in = mine, out = 0;
  MPI_Request req;
  rig_status st = rig_mpi_status(
      MPI_Iallreduce(&in, &out, 1, MPI_INT, MPI_LAND, job->tree.comm, &req), "MPI_Iallreduce", err);
  if (st == RIG_OK) st = rig_bootstrap_wait(&req, "MPI_Iallreduce", pending, err);
  *all = out != 0;
  return st;
}

/* Maps the neighbours' boxes from their addresses: false if one cannot be
 * mapped, or is shorter than its machine's box. */
static bool map_all(rig_job *job, void **addr, size_t *len) {
  job_tree *t = &job->tree;
  int k = t->nchildren + (t->parent >= 0);
  for (int i = 0; i < k; i++) {
    int m = i < t->nchildren ? t->first + i : t->parent;
    rig_error e;
    if (!len[i] || rig_area_map(addr[i], len[i], &t->theirs[i], &e) != RIG_OK) return false;
    if (rig_area_length(t->theirs[i]) < box_bytes(children_of(job, m))) return false;
  }
  return true;
}

rig_status rig_tree_memory_start(rig_job *job, bool *pending, bool *ok, rig_error *err) {
  job_tree *t = &job->tree;
  *ok = false;
  /* Only where every machine is on this host: elsewhere no area maps. */
  if (job->size < 2 || !job->one_host) return RIG_OK;
  int k = t->nchildren + (t->parent >= 0);
  rig_error e;
  t->theirs = calloc((size_t)k + 1, sizeof *t->theirs);
  bool have = t->theirs && rig_area_make(box_bytes(t->nchildren), &t->box, &e) == RIG_OK;
  bool every = false;
  rig_status st = all_say(job, have, &every, pending, err);
  void **addr = calloc((size_t)k + 1, sizeof *addr);
  size_t *len = calloc((size_t)k + 1, sizeof *len);
  if (st == RIG_OK && every && addr && len) {
    const void *mine;
    size_t n;
    rig_area_address(t->box, &mine, &n);
    st = rig_tree_swap(job, mine, n, ADDRESS_MAX, addr, len, pending, err);
  } else {
    every = false;
  }
  bool mapped = st == RIG_OK && every && map_all(job, addr, len);
  for (int i = 0; addr && i < k; i++) free(addr[i]);
  free(addr);
  free(len);
  if (st == RIG_OK && every) st = all_say(job, mapped, ok, pending, err);
  if (!*ok) rig_tree_memory_free(job);
  return st;
}

/* ---- the way ------------------------------------------------------------------------ */

/* What the neighbours wrote into this machine's box since the last look,
 * checked, into the mailbox. */
static rig_status take(rig_job *job, rig_error *err) {
  job_tree *t = &job->tree;
  void *b = rig_area_base(t->box);
  if (t->parent >= 0) {
    uint64_t v = atomic_load_explicit(box_start(b), memory_order_acquire);
    uint64_t had = atomic_load(&t->start_came);
    /* A start only grows, and comes once run q - W is done everywhere,
     * this subtree's included: at most W past what it reported. */
    if (v != had && (v < had || v > t->reported + t->in_flight))
      return rig_tree_out_of_step(job, t->parent, "a start", v - 1, had, err);
    atomic_store(&t->start_came, v);
  }
  for (int c = 0; c < t->nchildren; c++) {
    uint64_t v = atomic_load_explicit(box_done(b, c), memory_order_acquire);
    uint64_t had = atomic_load(&t->done_came[c]);
    if (v == had) continue;
    /* An end only grows, of a run this machine started. */
    if (v < had || v > t->started || v - had > TREE_IN_FLIGHT_MAX)
      return rig_tree_out_of_step(job, t->first + c, "a report", v - 1, had, err);
    for (uint64_t q = had; q < v; q++) {
      size_t at = 2 * (size_t)c + q % 2;
      int64_t m = *box_machine(b, t->nchildren, at);
      if (m < 0 || m >= job->size)
        return rig_tree_out_of_step(job, t->first + c, "a report of a machine outside the job", q,
                                    had, err);
      t->done_ns[at] = *box_ns(b, t->nchildren, at);
      t->done_machine[at] = m;
    }
    atomic_store_explicit(&t->done_came[c], v, memory_order_release);
  }
  return RIG_OK;
}

static bool may_send(rig_job *job, bool start, uint64_t q) {
  (void)job;
  (void)start;
  (void)q; /* a store is done as it is made */
  return true;
}

static rig_status start(rig_job *job, uint64_t q, rig_error *err) {
  (void)err;
  job_tree *t = &job->tree;
  for (int c = 0; c < t->nchildren; c++)
    atomic_store_explicit(box_start(theirs(t, c)), q + 1, memory_order_release);
  atomic_fetch_add_explicit(&t->messages, (uint64_t)t->nchildren, memory_order_relaxed);
  atomic_fetch_add_explicit(&t->bytes, 8 * (uint64_t)t->nchildren, memory_order_relaxed);
  return RIG_OK;
}

static rig_status done(rig_job *job, uint64_t q, uint64_t ns, int64_t machine, rig_error *err) {
  (void)err;
  job_tree *t = &job->tree;
  void *b = theirs(t, t->nchildren);
  int n = children_of(job, t->parent), i = job->rank - (int)(job->tree.fanout * t->parent + 1);
  size_t at = 2 * (size_t)i + q % 2;
  *box_ns(b, n, at) = ns;
  *box_machine(b, n, at) = machine;
  atomic_store_explicit(box_done(b, i), q + 1, memory_order_release);
  atomic_fetch_add_explicit(&t->messages, 1, memory_order_relaxed);
  atomic_fetch_add_explicit(&t->bytes, 24, memory_order_relaxed);
  return RIG_OK;
}

static void waiting(bool on) {
  (void)on;
}

static bool progress(void) {
  return false;
}

static bool settled(rig_job *job) {
  (void)job;
  return true;
}

const tree_way rig_tree_by_memory = {
    .name = "shared memory",
    .open = rig_tree_memory_start,
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
