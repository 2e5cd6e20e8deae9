/* The job's tree (tree.h): runs begun down it and ended up it, bytes shared
 * down it, scattered and gathered by machine 0, and an agreement up and
 * down it. */
#include "tree.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "base/env.h"
#include "base/sync.h"
#include "bootstrap.h"
#include "failure.h"
#include "job.h"

enum {
  TAG_START = 1, /* run r may start: r */
  TAG_DONE,      /* run r is done in the sender's subtree: r, its slowest's ns, machine */
  TAG_SHARE,     /* a shared buffer: its length, then its bytes */
  TAG_SCATTER,   /* machine 0 to one machine: its length, then its bytes */
  TAG_GATHER,    /* one machine to machine 0: its length, then its bytes */
  TAG_AGREE_UP,  /* whether the sender's subtree agrees */
  TAG_AGREE_DOWN /* whether every machine does */
};

/* Bytes one message carries at most: MPI counts are ints, and a buffer
 * shared down the tree moves on in pieces, so that a machine forwards one
 * while the next comes. */
#define CHUNK ((size_t)1 << 20)

rig_status rig_tree_start(rig_job *job, bool *pending, rig_error *err) {
  job_tree *t = &job->tree;
  t->comm = MPI_COMM_NULL;
  unsigned k = rig_env_get()->job_fanout;
  t->fanout = k;
  t->parent = job->rank == 0 ? -1 : (job->rank - 1) / (int)k;
  long first = (long)k * job->rank + 1, last = first + (long)k; /* last: one past */
  t->first = (int)(first < job->size ? first : job->size);
  t->nchildren = first >= job->size ? 0 : (int)((last < job->size ? last : job->size) - first);
  unsigned depth = 0;
  for (long m = job->size - 1; m > 0; m = (m - 1) / (long)k) depth++;
  t->depth = depth;
  t->words = calloc(3 * ((size_t)t->nchildren + 2), sizeof *t->words);
  t->reqs = calloc((size_t)t->nchildren + 2, sizeof *t->reqs);
  if (!t->words || !t->reqs) return rig_error_set(err, RIG_ENOMEM, "out of memory starting a job");
  MPI_Request req;
  rig_status st = rig_mpi_status(MPI_Comm_idup(job->c.comm, &t->comm, &req), "MPI_Comm_idup", err);
  if (st == RIG_OK) st = rig_bootstrap_wait(&req, "MPI_Comm_idup", pending, err);
  if (st != RIG_OK && !*pending) t->comm = MPI_COMM_NULL;
  if (st == RIG_OK) st = rig_tree_peers_start(job, pending, err);
  return st;
}

/* What a wait the job's failure ended leaves to MPI, which may still
 * write it: kept for the process's life, reachable (one per failed job
 * whose tree was waiting, so few). */
typedef struct kept_tree {
  struct kept_tree *next;
  void *words, *reqs;
} kept_tree;
static kept_tree *kept;
static pthread_mutex_t kept_lock = PTHREAD_MUTEX_INITIALIZER;

static void keep(job_tree *t) {
  kept_tree *k = malloc(sizeof *k);
  if (!k) return; /* then they are lost, as MPI's own would be */
  *k = (kept_tree){NULL, t->words, t->reqs};
  pthread_mutex_lock(&kept_lock);
  k->next = kept;
  kept = k;
  pthread_mutex_unlock(&kept_lock);
}

void rig_tree_free(rig_job *job) {
  job_tree *t = &job->tree;
  rig_tree_peers_free(job);
  if (t->pending) { /* MPI may still use the words and the communicator */
    keep(t);
    t->words = NULL;
    t->reqs = NULL;
    return;
  }
  if (t->comm != MPI_COMM_NULL) MPI_Comm_free(&t->comm);
  free(t->words);
  free(t->reqs);
  t->words = NULL;
  t->reqs = NULL;
}

void rig_job_tree_facts(const rig_job *job, rig_job_tree *out) {
  const job_tree *t = &job->tree;
  out->fanout = t->fanout;
  out->depth = t->depth;
  out->parent = t->parent;
  out->children = t->nchildren;
  out->messages = atomic_load(&t->messages);
  out->bytes = atomic_load(&t->bytes);
}

/* ---- waiting ------------------------------------------------------------------------ */

/* Whether the tree can be used: made, and the job not failed. */
static rig_status usable(rig_job *job, rig_error *err) {
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

/* A message that could not be sent (a peer gone): the job's failure. */
static rig_status send_failed(rig_job *job, rig_error *err) {
  if (!atomic_load(&job->failed)) rig_job_fail_here(job, err);
  return rig_job_error(job, err);
}

static rig_status mpi(rig_job *job, int rc, const char *call, rig_error *err) {
  return rig_mpi_status(rc, call, err) == RIG_OK ? RIG_OK : mpi_failed(job, err);
}

/* Waits for n requests, or for the job's failure (the requests are then
 * left to MPI, and the tree keeps what they use). Spins about a
 * microsecond, yields for 200 us (the next hop is often that close), then
 * naps, longer and longer up to a millisecond, so that a wait through a
 * long run costs no core. */
static rig_status await(rig_job *job, MPI_Request *reqs, int n, rig_error *err) {
  double t0 = 0;
  long nap_ns = 20000;
  for (unsigned polls = 0;; polls++) {
    /* MPI_Test one by one, not MPI_Testall: a done request becomes
     * MPI_REQUEST_NULL alike, and GCC takes MPICH's MPI_STATUSES_IGNORE
     * for an array of no room. */
    bool done = true;
    for (int i = 0; i < n; i++) {
      int one = 0;
      if (mpi(job, MPI_Test(&reqs[i], &one, MPI_STATUS_IGNORE), "MPI_Test", err) != RIG_OK)
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
    if (now - t0 < 200e-6) {
      sched_yield();
      continue;
    }
    struct timespec nap = {0, nap_ns};
    nanosleep(&nap, NULL);
    if (nap_ns < 1000000) nap_ns *= 2;
  }
}

static rig_status isend(rig_job *job, const void *b, size_t n, MPI_Datatype type, int to, int tag,
                        MPI_Request *req, rig_error *err) {
  job_tree *t = &job->tree;
  int size = 1;
  MPI_Type_size(type, &size);
  atomic_fetch_add_explicit(&t->messages, 1, memory_order_relaxed);
  atomic_fetch_add_explicit(&t->bytes, n * (size_t)size, memory_order_relaxed);
  return mpi(job, MPI_Isend(b, (int)n, type, to, tag, t->comm, req), "MPI_Isend", err);
}

static rig_status irecv(rig_job *job, void *b, size_t n, MPI_Datatype type, int from, int tag,
                        MPI_Request *req, rig_error *err) {
  return mpi(job, MPI_Irecv(b, (int)n, type, from, tag, job->tree.comm, req), "MPI_Irecv", err);
}

/* A word a machine sent that is not the one the protocol wants: the
 * job fails, naming it. */
static rig_status out_of_step(rig_job *job, int from, const char *what, uint64_t got, uint64_t want,
                              rig_error *err) {
  rig_error e;
  rig_error_set(&e, RIG_EJOB, "the tree: %s of run %llu from %s, in run %llu", what,
                (unsigned long long)got, rig_job_label(job, from), (unsigned long long)want);
  rig_job_fail_here(job, &e);
  return rig_job_error(job, err);
}

/* ---- runs ---------------------------------------------------------------------------- */

rig_status rig_job_run_begin(rig_job *job, uint64_t run, rig_error *err) {
  rig_status st = usable(job, err);
  if (st != RIG_OK) return st;
  job_tree *t = &job->tree;
  uint64_t *start = t->words + 3 * (size_t)t->nchildren;
  if (t->by_messages) {
    if (t->parent >= 0 && (st = rig_tree_await(job, true, run, err)) != RIG_OK) return st;
    /* The children start before this machine's own run (it may wait on
     * theirs, by a rail). */
    for (int c = 0; st == RIG_OK && c < t->nchildren; c++)
      st = rig_tree_send(job, t->first + c, true, run, 0, 0, err);
    return st == RIG_OK ? st : send_failed(job, err);
  }
  if (t->parent < 0) {
    *start = run;
  } else {
    st = irecv(job, start, 1, MPI_UINT64_T, t->parent, TAG_START, &t->reqs[0], err);
    if (st == RIG_OK) st = await(job, t->reqs, 1, err);
    if (st == RIG_OK && *start != run)
      return out_of_step(job, t->parent, "a start", *start, run, err);
  }
  /* The children start before this machine's own run, which may wait on
   * theirs (a rail). Their sends complete at the run's end. */
  for (int c = 0; st == RIG_OK && c < t->nchildren; c++)
    st = isend(job, start, 1, MPI_UINT64_T, t->first + c, TAG_START, &t->reqs[c], err);
  t->started = st == RIG_OK;
  return st;
}

rig_status rig_job_run_end(rig_job *job, uint64_t run, uint64_t ns, rig_job_slowest *slowest,
                           rig_error *err) {
  rig_status st = usable(job, err);
  if (st != RIG_OK) return st;
  job_tree *t = &job->tree;
  int n = t->nchildren;
  if (t->by_messages) {
    if (n && (st = rig_tree_await(job, false, run, err)) != RIG_OK) return st;
    rig_job_slowest s = {ns, job->rank};
    for (int c = 0; c < n; c++)
      if (t->done_ns[c] > s.ns) s = (rig_job_slowest){t->done_ns[c], (int)t->done_machine[c]};
    if (t->parent >= 0 &&
        (st = rig_tree_send(job, t->parent, false, run, s.ns, s.machine, err)) != RIG_OK)
      return send_failed(job, err);
    if (slowest) *slowest = s;
    return RIG_OK;
  }
  /* The starts sent to the children, then their reports. */
  if (t->started && n) st = await(job, t->reqs, n, err);
  t->started = false;
  for (int c = 0; st == RIG_OK && c < n; c++)
    st = irecv(job, t->words + 3 * (size_t)c, 3, MPI_UINT64_T, t->first + c, TAG_DONE, &t->reqs[c],
               err);
  if (st == RIG_OK && n) st = await(job, t->reqs, n, err);
  if (st != RIG_OK) return st;
  uint64_t *mine = t->words + 3 * (size_t)n + 1;
  mine[0] = run;
  mine[1] = ns;
  mine[2] = (uint64_t)job->rank;
  for (int c = 0; c < n; c++) {
    const uint64_t *d = t->words + 3 * (size_t)c;
    if (d[0] != run) return out_of_step(job, t->first + c, "a report", d[0], run, err);
    if (d[1] > mine[1]) mine[1] = d[1], mine[2] = d[2];
  }
  if (t->parent >= 0) {
    st = isend(job, mine, 3, MPI_UINT64_T, t->parent, TAG_DONE, &t->reqs[n], err);
    if (st == RIG_OK) st = await(job, &t->reqs[n], 1, err);
  }
  if (st == RIG_OK && slowest) *slowest = (rig_job_slowest){mine[1], (int)mine[2]};
  return st;
}

/* ---- bytes -------------------------------------------------------------------------- */

/* n bytes at b to (send) or from (receive) machine `peer`, in chunks. */
static rig_status move(rig_job *job, bool send, void *b, size_t n, int peer, int tag,
                       rig_error *err) {
  rig_status st = RIG_OK;
  unsigned char *p = b;
  for (size_t at = 0; st == RIG_OK && at < n; at += CHUNK) {
    size_t k = n - at < CHUNK ? n - at : CHUNK;
    MPI_Request req;
    st = send ? isend(job, p + at, k, MPI_BYTE, peer, tag, &req, err)
              : irecv(job, p + at, k, MPI_BYTE, peer, tag, &req, err);
    if (st == RIG_OK) st = await(job, &req, 1, err);
  }
  return st;
}

/* A length, then its bytes; a receiver's buffer is malloc'd (at least
 * one byte). */
static rig_status send_bytes(rig_job *job, const void *b, size_t n, int to, int tag,
                             rig_error *err) {
  uint64_t *len = &job->tree.words[1]; /* kept by the tree if left pending */
  *len = n;
  MPI_Request req;
  rig_status st = isend(job, len, 1, MPI_UINT64_T, to, tag, &req, err);
  if (st == RIG_OK) st = await(job, &req, 1, err);
  return st == RIG_OK ? move(job, true, (void *)b, n, to, tag, err) : st;
}

static rig_status recv_bytes(rig_job *job, int from, int tag, void **b, size_t *n, rig_error *err) {
  uint64_t *word = &job->tree.words[0]; /* kept by the tree if left pending */
  MPI_Request req;
  rig_status st = irecv(job, word, 1, MPI_UINT64_T, from, tag, &req, err);
  if (st == RIG_OK) st = await(job, &req, 1, err);
  if (st != RIG_OK) return st;
  uint64_t len = *word;
  if (len > SIZE_MAX - 1) return out_of_step(job, from, "a length", len, 0, err);
  unsigned char *buf = malloc(len ? len : 1);
  if (!buf)
    return rig_error_set(err, RIG_ENOMEM, "out of memory for %llu bytes from %s",
                         (unsigned long long)len, rig_job_label(job, from));
  st = move(job, false, buf, len, from, tag, err);
  if (st != RIG_OK) {
    if (!job->tree.pending) free(buf); /* else MPI may still write it */
    return st;
  }
  *b = buf;
  *n = len;
  return RIG_OK;
}

rig_status rig_job_share(rig_job *job, void **bytes, size_t *len, rig_error *err) {
  rig_status st = usable(job, err);
  if (st != RIG_OK) return st;
  job_tree *t = &job->tree;
  uint64_t *word = &t->words[2]; /* kept by the tree if left pending */
  *word = job->rank == 0 ? *len : 0;
  MPI_Request reqs[2];
  if (t->parent >= 0) {
    st = irecv(job, word, 1, MPI_UINT64_T, t->parent, TAG_SHARE, &reqs[0], err);
    if (st == RIG_OK) st = await(job, reqs, 1, err);
    if (st != RIG_OK) return st;
  }
  uint64_t n = *word;
  if (t->parent >= 0) {
    if (n > SIZE_MAX - 1) return out_of_step(job, t->parent, "a length", n, 0, err);
    if (!(*bytes = malloc(n ? n : 1)))
      return rig_error_set(err, RIG_ENOMEM, "out of memory for %llu bytes shared",
                           (unsigned long long)n);
    *len = n;
  }
  for (int c = 0; st == RIG_OK && c < t->nchildren; c++) {
    st = isend(job, word, 1, MPI_UINT64_T, t->first + c, TAG_SHARE, &reqs[1], err);
    if (st == RIG_OK) st = await(job, &reqs[1], 1, err);
  }
  /* Piece by piece: each piece in from the parent, then out to every
   * child, so that the tree's levels move the buffer at once. */
  unsigned char *p = *bytes;
  MPI_Request *out = t->reqs;
  for (size_t at = 0; st == RIG_OK && at < n; at += CHUNK) {
    size_t k = n - at < CHUNK ? (size_t)(n - at) : CHUNK;
    if (t->parent >= 0) {
      st = irecv(job, p + at, k, MPI_BYTE, t->parent, TAG_SHARE, &reqs[0], err);
      if (st == RIG_OK) st = await(job, reqs, 1, err);
    }
    /* The sends of the last piece end before these go. */
    if (st == RIG_OK && at && t->nchildren) st = await(job, out, t->nchildren, err);
    for (int c = 0; st == RIG_OK && c < t->nchildren; c++)
      st = isend(job, p + at, k, MPI_BYTE, t->first + c, TAG_SHARE, &out[c], err);
  }
  if (st == RIG_OK && n && t->nchildren) st = await(job, out, t->nchildren, err);
  /* A buffer MPI may still use is never freed: the caller gets none. */
  if (st != RIG_OK && job->rank != 0) {
    if (!t->pending) free(*bytes);
    *bytes = NULL;
    *len = 0;
  }
  return st;
}

rig_status rig_job_scatter(rig_job *job, const void *const *parts, const size_t *lens, void **bytes,
                           size_t *len, rig_error *err) {
  rig_status st = usable(job, err);
  if (st != RIG_OK) return st;
  if (job->rank != 0) return recv_bytes(job, 0, TAG_SCATTER, bytes, len, err);
  for (int m = 1; st == RIG_OK && m < job->size; m++)
    st = send_bytes(job, parts[m], lens[m], m, TAG_SCATTER, err);
  return st;
}

rig_status rig_job_gather(rig_job *job, const void *mine, size_t n, void **parts, size_t *lens,
                          rig_error *err) {
  rig_status st = usable(job, err);
  if (st != RIG_OK) return st;
  if (job->rank != 0) return send_bytes(job, mine, n, 0, TAG_GATHER, err);
  for (int m = 1; st == RIG_OK && m < job->size; m++)
    st = recv_bytes(job, m, TAG_GATHER, &parts[m], &lens[m], err);
  return st;
}

rig_status rig_job_agree(rig_job *job, bool mine, bool *all, rig_error *err) {
  rig_status st = usable(job, err);
  if (st != RIG_OK) return st;
  job_tree *t = &job->tree;
  int n = t->nchildren;
  uint64_t *words = t->words; /* a child's answer each, then the verdict */
  for (int c = 0; st == RIG_OK && c < n; c++)
    st = irecv(job, &words[c], 1, MPI_UINT64_T, t->first + c, TAG_AGREE_UP, &t->reqs[c], err);
  if (st == RIG_OK && n) st = await(job, t->reqs, n, err);
  uint64_t *verdict = &words[3 * (size_t)n];
  *verdict = mine;
  for (int c = 0; st == RIG_OK && c < n; c++) *verdict = *verdict && words[c];
  if (st == RIG_OK && t->parent >= 0) {
    st = isend(job, verdict, 1, MPI_UINT64_T, t->parent, TAG_AGREE_UP, &t->reqs[n], err);
    if (st == RIG_OK) st = await(job, &t->reqs[n], 1, err);
    if (st == RIG_OK)
      st = irecv(job, verdict, 1, MPI_UINT64_T, t->parent, TAG_AGREE_DOWN, &t->reqs[n], err);
    if (st == RIG_OK) st = await(job, &t->reqs[n], 1, err);
  }
  for (int c = 0; st == RIG_OK && c < n; c++)
    st = isend(job, verdict, 1, MPI_UINT64_T, t->first + c, TAG_AGREE_DOWN, &t->reqs[c], err);
  if (st == RIG_OK && n) st = await(job, t->reqs, n, err);
  if (st == RIG_OK) *all = *verdict != 0;
  return st;
}
