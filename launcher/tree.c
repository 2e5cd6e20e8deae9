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
#include "base/log.h"
#include "base/sync.h"
#include "bootstrap.h"
#include "failure.h"
#include "job_state.h"

/* Bytes one message carries at most: MPI counts are ints, and a buffer
 * shared down the tree moves on in pieces, so that a machine forwards one
 * while the next comes. */
#define CHUNK ((size_t)1 << 20)

rig_status rig_tree_start(rig_job *job, bool *pending, rig_error *err) {
  job_tree *t = &job->tree;
  t->comm = MPI_COMM_NULL;
  unsigned k = rig_env_get()->job_fanout;
  t->fanout = k;
  t->parent = job->as_controller ? -1 : (job->rank - 1) / (int)k; /* the controller: the root */
  long first = (long)k * job->rank + 1, last = first + (long)k;   /* last: one past */
  t->first = (int)(first < job->size ? first : job->size);
  t->nchildren = first >= job->size ? 0 : (int)((last < job->size ? last : job->size) - first);
  unsigned depth = 0;
  for (long m = job->size - 1; m > 0; m = (m - 1) / (long)k) depth++;
  t->depth = depth;
  t->words = calloc(3 * ((size_t)t->nchildren + 1), sizeof *t->words);
  t->reqs = calloc((size_t)t->nchildren + 2, sizeof *t->reqs);
  if (!t->words || !t->reqs) return rig_error_set(err, RIG_ENOMEM, "out of memory starting a job");
  rig_status rs = rig_tree_runs_make(job, err);
  if (rs != RIG_OK) return rs;
  MPI_Request req;
  rig_status st = rig_mpi_status(MPI_Comm_idup(job->c.comm, &t->comm, &req), "MPI_Comm_idup", err);
  if (st == RIG_OK) st = rig_bootstrap_wait(&req, "MPI_Comm_idup", pending, err);
  if (st != RIG_OK && !*pending) t->comm = MPI_COMM_NULL;
  /* Machine 0's runs in flight are every machine's: the protocol needs
   * one W. */
  unsigned w = rig_env_get()->job_in_flight;
  if (st == RIG_OK)
    st = rig_mpi_status(MPI_Ibcast(&w, 1, MPI_UNSIGNED, 0, t->comm, &req), "MPI_Ibcast", err);
  if (st == RIG_OK) st = rig_bootstrap_wait(&req, "MPI_Ibcast", pending, err);
  t->in_flight = w >= 1 && w <= TREE_IN_FLIGHT_MAX ? w : 1;
  /* The runs' way: shared memory on one host, UCX messages across hosts,
   * MPI where neither is every machine's (tree.h): the first every
   * machine takes, its table kept. */
  static const tree_way *const ways[] = {&rig_tree_by_memory, &rig_tree_by_messages,
                                         &rig_tree_by_mpi};
  for (size_t i = 0; st == RIG_OK && !t->way && i < sizeof ways / sizeof *ways; i++) {
    bool ok = false;
    if ((st = ways[i]->open(job, pending, &ok, err)) == RIG_OK && ok) t->way = ways[i];
  }
  if (st == RIG_OK && job->as_controller)
    rig_log(RIG_LOG_INFO, "the tree's starts and ends of runs go by %s, %u runs in flight",
            t->way->name, t->in_flight);
  if (st == RIG_OK) rig_tree_runs_open(job);
  return st;
}

/* What a wait the job's failure ended leaves to MPI, which may still
 * write it: kept for the process's life, reachable (one per failed job
 * whose tree was waiting, so few). */
typedef struct kept_tree {
  struct kept_tree *next;
  void *words, *reqs, *run_words, *run_reqs;
} kept_tree;
static kept_tree *kept;
static pthread_mutex_t kept_lock = PTHREAD_MUTEX_INITIALIZER;

static void keep(job_tree *t) {
  kept_tree *k = malloc(sizeof *k);
  if (!k) return; /* then they are lost, as MPI's own would be */
  *k = (kept_tree){NULL, t->words, t->reqs, t->run_words, t->run_reqs};
  pthread_mutex_lock(&kept_lock);
  k->next = kept;
  kept = k;
  pthread_mutex_unlock(&kept_lock);
}

void rig_tree_free(rig_job *job) {
  job_tree *t = &job->tree;
  rig_tree_runs_free(job);
  /* What runs left to MPI (a failed job's words) stays with the tree. */
  if (rig_tree_mpi_free(job)) t->pending = true;
  rig_tree_memory_free(job);
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
  out->in_flight = t->in_flight;
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
    st = send ? rig_tree_isend(job, p + at, k, MPI_BYTE, peer, tag, &req, err)
              : rig_tree_irecv(job, p + at, k, MPI_BYTE, peer, tag, &req, err);
    if (st == RIG_OK) st = rig_tree_mpi_wait(job, &req, 1, err);
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
  rig_status st = rig_tree_isend(job, len, 1, MPI_UINT64_T, to, tag, &req, err);
  if (st == RIG_OK) st = rig_tree_mpi_wait(job, &req, 1, err);
  return st == RIG_OK ? move(job, true, (void *)b, n, to, tag, err) : st;
}

static rig_status recv_bytes(rig_job *job, int from, int tag, void **b, size_t *n, rig_error *err) {
  uint64_t *word = &job->tree.words[0]; /* kept by the tree if left pending */
  MPI_Request req;
  rig_status st = rig_tree_irecv(job, word, 1, MPI_UINT64_T, from, tag, &req, err);
  if (st == RIG_OK) st = rig_tree_mpi_wait(job, &req, 1, err);
  if (st != RIG_OK) return st;
  uint64_t len = *word;
  if (len > SIZE_MAX - 1) return rig_tree_out_of_step(job, from, "a length", len, 0, err);
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
  rig_status st = rig_tree_usable(job, err);
  if (st != RIG_OK) return st;
  job_tree *t = &job->tree;
  uint64_t *word = &t->words[2];    /* kept by the tree if left pending */
  *word = t->parent < 0 ? *len : 0; /* the root's length goes down */
  MPI_Request reqs[2];
  if (t->parent >= 0) {
    st = rig_tree_irecv(job, word, 1, MPI_UINT64_T, t->parent, TAG_SHARE, &reqs[0], err);
    if (st == RIG_OK) st = rig_tree_mpi_wait(job, reqs, 1, err);
    if (st != RIG_OK) return st;
  }
  uint64_t n = *word;
  if (t->parent >= 0) {
    if (n > SIZE_MAX - 1) return rig_tree_out_of_step(job, t->parent, "a length", n, 0, err);
    if (!(*bytes = malloc(n ? n : 1)))
      return rig_error_set(err, RIG_ENOMEM, "out of memory for %llu bytes shared",
                           (unsigned long long)n);
    *len = n;
  }
  for (int c = 0; st == RIG_OK && c < t->nchildren; c++) {
    st = rig_tree_isend(job, word, 1, MPI_UINT64_T, t->first + c, TAG_SHARE, &reqs[1], err);
    if (st == RIG_OK) st = rig_tree_mpi_wait(job, &reqs[1], 1, err);
  }
  /* Piece by piece: each piece in from the parent, then out to every
   * child, so that the tree's levels move the buffer at once. */
  unsigned char *p = *bytes;
  MPI_Request *out = t->reqs;
  for (size_t at = 0; st == RIG_OK && at < n; at += CHUNK) {
    size_t k = n - at < CHUNK ? (size_t)(n - at) : CHUNK;
    if (t->parent >= 0) {
      st = rig_tree_irecv(job, p + at, k, MPI_BYTE, t->parent, TAG_SHARE, &reqs[0], err);
      if (st == RIG_OK) st = rig_tree_mpi_wait(job, reqs, 1, err);
    }
    /* The sends of the last piece end before these go. */
    if (st == RIG_OK && at && t->nchildren) st = rig_tree_mpi_wait(job, out, t->nchildren, err);
    for (int c = 0; st == RIG_OK && c < t->nchildren; c++)
      st = rig_tree_isend(job, p + at, k, MPI_BYTE, t->first + c, TAG_SHARE, &out[c], err);
  }
  if (st == RIG_OK && n && t->nchildren) st = rig_tree_mpi_wait(job, out, t->nchildren, err);
  /* A buffer MPI may still use is never freed: the caller gets none. */
  if (st != RIG_OK && t->parent >= 0) {
    if (!t->pending) free(*bytes);
    *bytes = NULL;
    *len = 0;
  }
  return st;
}

rig_status rig_job_scatter(rig_job *job, const void *const *parts, const size_t *lens, void **bytes,
                           size_t *len, rig_error *err) {
  rig_status st = rig_tree_usable(job, err);
  if (st != RIG_OK) return st;
  if (job->as_agent) return recv_bytes(job, RIG_JOB_CONTROLLER, TAG_SCATTER, bytes, len, err);
  for (int m = 1; st == RIG_OK && m < job->size; m++)
    st = send_bytes(job, parts[m], lens[m], m, TAG_SCATTER, err);
  return st;
}

rig_status rig_job_gather(rig_job *job, const void *mine, size_t n, void **parts, size_t *lens,
                          rig_error *err) {
  rig_status st = rig_tree_usable(job, err);
  if (st != RIG_OK) return st;
  if (job->as_agent) return send_bytes(job, mine, n, RIG_JOB_CONTROLLER, TAG_GATHER, err);
  for (int m = 1; st == RIG_OK && m < job->size; m++)
    st = recv_bytes(job, m, TAG_GATHER, &parts[m], &lens[m], err);
  return st;
}

rig_status rig_job_agree(rig_job *job, bool mine, bool *all, rig_error *err) {
  rig_status st = rig_tree_usable(job, err);
  if (st != RIG_OK) return st;
  job_tree *t = &job->tree;
  int n = t->nchildren;
  uint64_t *words = t->words; /* a child's answer each, then the verdict */
  for (int c = 0; st == RIG_OK && c < n; c++)
    st = rig_tree_irecv(job, &words[c], 1, MPI_UINT64_T, t->first + c, TAG_AGREE_UP, &t->reqs[c],
                        err);
  if (st == RIG_OK && n) st = rig_tree_mpi_wait(job, t->reqs, n, err);
  uint64_t *verdict = &words[3 * (size_t)n];
  *verdict = mine;
  for (int c = 0; st == RIG_OK && c < n; c++) *verdict = *verdict && words[c];
  if (st == RIG_OK && t->parent >= 0) {
    st = rig_tree_isend(job, verdict, 1, MPI_UINT64_T, t->parent, TAG_AGREE_UP, &t->reqs[n], err);
    if (st == RIG_OK) st = rig_tree_mpi_wait(job, &t->reqs[n], 1, err);
    if (st == RIG_OK)
      st = rig_tree_irecv(job, verdict, 1, MPI_UINT64_T, t->parent, TAG_AGREE_DOWN, &t->reqs[n],
                          err);
    if (st == RIG_OK) st = rig_tree_mpi_wait(job, &t->reqs[n], 1, err);
  }
  for (int c = 0; st == RIG_OK && c < n; c++)
    st = rig_tree_isend(job, verdict, 1, MPI_UINT64_T, t->first + c, TAG_AGREE_DOWN, &t->reqs[c],
                        err);
  if (st == RIG_OK && n) st = rig_tree_mpi_wait(job, t->reqs, n, err);
  if (st == RIG_OK) *all = *verdict != 0;
  return st;
}
