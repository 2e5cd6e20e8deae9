/* The tree's edges by UCX messages (tree.h): a run's start to each child
 * and its end to the parent go as messages (rails' peers), which the
 * receiver's progressing thread writes into its tree's mailbox; a machine
 * that waits for its start or its children's ends progresses the worker
 * a while, then sleeps on its event fd: a waiting machine costs no core,
 * and the message that ends the wait wakes it at once. Messages carry the
 * job's id (a process may hold several jobs in turn), found among the
 * process's open jobs (jobs.h) while its tree hears them (tree.heard,
 * which the tree's free clears under their lock). Everything a message says
 * is checked: a machine that is not the receiver's parent or child, a
 * machine named outside the job, fails the job naming the receiver. */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/sync.h"
#include "bootstrap.h"
#include "failure.h"
#include "job_state.h"
#include "jobs.h"
#include "tree.h"

/* The kind of the tree's messages (express_messages.c has 1 to 3). */
#define MSG_TREE 4

enum { WHAT_START = 1, WHAT_DONE = 2 };

typedef struct tree_msg {
  uint64_t job;
  uint32_t what;
  int32_t from;
  uint64_t run, ns;
  int64_t machine;
} tree_msg;

/* How long a wait of the tree goes on once the controller closed the job:
 * a word already on its way from another machine (the last agreement,
 * forwarded by a parent) may still come, on a communicator of its own. */
#define CLOSED_GRACE_S 2.0

bool rig_tree_closed(rig_job *job, rig_error *err) {
  /* Only an agent is closed by another: the controller closes the job. */
  int64_t at = job->as_agent ? atomic_load(&job->as_agent->closed_ns) : 0;
  if (!at || rig_now_s() - (double)at * 1e-9 < CLOSED_GRACE_S) return false;
  rig_error_set(err, RIG_EJOB, "%s: the controller closed the job while this machine waited in it",
                rig_job_label(job, job->rank));
  return true;
}

/* The job of that id whose tree goes by messages (under the jobs' lock),
 * while its mailbox is whole: the runs' state goes before the way's. */
static rig_job *find(uint64_t id) {
  rig_job *job = rig_jobs_find(id);
  return job && job->tree.heard && job->tree.runs_made ? job : NULL;
}

/* Whether the job's tree hears its messages (under the jobs' lock). */
static void hear(rig_job *job, bool on) {
  rig_jobs_lock();
  job->tree.heard = on;
  rig_jobs_unlock();
}

/* Why a message is not one this machine takes from its sender, or "";
 * the sender named as every message names a machine (number and host). */
static void judge(const rig_job *job, const tree_msg *m, char *why, size_t n) {
  const job_tree *t = &job->tree;
  bool child = m->from >= t->first && m->from < t->first + t->nchildren;
  if (m->what == WHAT_START && m->from != t->parent)
    snprintf(why, n, "a run's start from %s, not its parent", rig_job_label(job, m->from));
  else if (m->what == WHAT_DONE && !child)
    snprintf(why, n, "a run's end from %s, not its child", rig_job_label(job, m->from));
  else if (m->what == WHAT_DONE && (m->machine < 0 || m->machine >= job->size))
    snprintf(why, n, "a run's end from %s naming machine %lld, not in the job",
             rig_job_label(job, m->from), (long long)m->machine);
  else if (m->what != WHAT_START && m->what != WHAT_DONE)
    snprintf(why, n, "a tree message of kind %u from %s", m->what, rig_job_label(job, m->from));
  else if (m->what == WHAT_START && m->run != atomic_load(&t->start_came))
    snprintf(why, n, "the start of run %llu from %s, after run %llu's", (unsigned long long)m->run,
             rig_job_label(job, m->from), (unsigned long long)atomic_load(&t->start_came) - 1);
  else if (m->what == WHAT_DONE && m->run != atomic_load(&t->done_came[m->from - t->first]))
    snprintf(why, n, "the end of run %llu from %s, after run %llu's", (unsigned long long)m->run,
             rig_job_label(job, m->from),
             (unsigned long long)atomic_load(&t->done_came[m->from - t->first]) - 1);
  else
    why[0] = '\0';
}

/* A message is input from the wire: one this machine does not take fails
 * the job, naming it, rather than leave a wait that never ends. */
static void on_message(void *ctx, const void *bytes, size_t len) {
  (void)ctx;
  tree_msg m;
  if (len != sizeof m) return;
  memcpy(&m, bytes, sizeof m);
  rig_jobs_lock();
  rig_job *job = find(m.job);
  job_tree *t = job ? &job->tree : NULL;
  char why[96 + 2 * RIG_JOB_LABEL] = "";
  if (t) judge(job, &m, why, sizeof why);
  if (t && why[0]) {
    char cause[RIG_ERROR_MESSAGE_MAX];
    snprintf(cause, sizeof cause, "%s: %s", rig_job_label(job, job->rank), why);
    if (!atomic_load(&job->failed)) rig_job_fail_with(job, true, cause);
  } else if (t && m.what == WHAT_START) {
    atomic_store_explicit(&t->start_came, m.run + 1, memory_order_release);
  } else if (t) {
    /* Runs come in order, and run q's slot is free once run q - 2 was
     * reported up (a child's q begins after its parent's q - 1 ended). */
    size_t at = 2 * (size_t)(m.from - t->first) + m.run % 2;
    t->done_ns[at] = m.ns;
    t->done_machine[at] = m.machine;
    atomic_store_explicit(&t->done_came[m.from - t->first], m.run + 1, memory_order_release);
  }
  if (t) atomic_fetch_add_explicit(&t->mail, 1, memory_order_release);
  rig_jobs_unlock();
}

/* ---- setting up ------------------------------------------------------------------- */

/* A tree neighbour lost: the job fails naming it. The context may outlive
 * the job (kept): it is compared, read only once found open. */
typedef struct lost_ctx {
  rig_job *job;
  int machine;
} lost_ctx;

static void on_lost(void *ctx, const char *why) {
  lost_ctx *l = ctx;
  rig_jobs_lock();
  bool live = rig_jobs_holds(l->job) && l->job->tree.heard;
  if (live && !atomic_load(&l->job->failed) && !atomic_load(&l->job->closing)) {
    char cause[RIG_ERROR_MESSAGE_MAX];
    snprintf(cause, sizeof cause, "%s: %s", /* why names UCX */
             rig_job_label(l->job, l->machine), why);
    rig_job_fail_with(l->job, true, cause);
  }
  rig_jobs_unlock();
}

rig_status rig_tree_swap(rig_job *job, const void *mine, size_t n, size_t max, void **theirs,
                         size_t *lens, bool *pending, rig_error *err) {
  job_tree *t = &job->tree;
  int k = t->nchildren + (t->parent >= 0);
  int *peers = calloc((size_t)k + 1, sizeof *peers);
  uint64_t *got = calloc((size_t)k + 1, sizeof *got), mine_len = n;
  MPI_Request *req = calloc(2 * (size_t)k + 1, sizeof *req);
  rig_status st = peers && got && req ? RIG_OK : rig_error_set(err, RIG_ENOMEM, "out of memory");
  for (int i = 0; st == RIG_OK && i < k; i++) {
    peers[i] = i < t->nchildren ? t->first + i : t->parent;
    MPI_Irecv(&got[i], 1, MPI_UINT64_T, peers[i], 1, t->comm, &req[2 * i]);
    MPI_Isend(&mine_len, 1, MPI_UINT64_T, peers[i], 1, t->comm, &req[2 * i + 1]);
  }
  for (int i = 0; st == RIG_OK && i < 2 * k; i++)
    st = rig_bootstrap_wait(&req[i], "MPI_Irecv", pending, err);
  for (int i = 0; st == RIG_OK && i < k; i++) {
    if (got[i] > max) got[i] = 0;
    if (!(theirs[i] = malloc(got[i] ? got[i] : 1)))
      st = rig_error_set(err, RIG_ENOMEM, "out of memory");
    lens[i] = got[i];
  }
  for (int i = 0; st == RIG_OK && i < k; i++) {
    MPI_Irecv(theirs[i], (int)got[i], MPI_BYTE, peers[i], 2, t->comm, &req[2 * i]);
    MPI_Isend(mine, (int)n, MPI_BYTE, peers[i], 2, t->comm, &req[2 * i + 1]);
  }
  for (int i = 0; st == RIG_OK && i < 2 * k; i++)
    st = rig_bootstrap_wait(&req[i], "MPI_Irecv", pending, err);
  free(peers);
  free(got);
  free(req);
  return st;
}

/* The handler's listening, held while any job listens. Its calls wait for
 * the engine's thread, whose handlers take the jobs' lock: they are made
 * under a lock of their own, never under that one. */
static pthread_mutex_t listen_lock = PTHREAD_MUTEX_INITIALIZER;
static size_t nlistening;

static rig_status listen_hold(rig_error *err) {
  pthread_mutex_lock(&listen_lock);
  rig_status st = nlistening ? RIG_OK : rig_peer_listen(MSG_TREE, on_message, NULL, err);
  if (st == RIG_OK) nlistening++;
  pthread_mutex_unlock(&listen_lock);
  return st;
}

static void listen_drop(void) {
  pthread_mutex_lock(&listen_lock);
  if (--nlistening == 0) rig_peer_unlisten(MSG_TREE);
  pthread_mutex_unlock(&listen_lock);
}

rig_status rig_tree_peers_start(rig_job *job, bool *pending, bool *ok, rig_error *err) {
  job_tree *t = &job->tree;
  int k = t->nchildren + (t->parent >= 0);
  t->peers = calloc((size_t)k + 1, sizeof *t->peers);
  t->lost = calloc((size_t)k + 1, sizeof(lost_ctx));
  if (!t->peers || !t->lost) return rig_error_set(err, RIG_ENOMEM, "out of memory starting a job");
  /* This machine's address, or none: then every machine's tree goes by
   * MPI (each learns whether all have one). Not on one host: there the
   * tree goes by shared memory, or MPI's (UCX's endpoints with peer
   * failure handling go by TCP there). */
  const void *self = NULL;
  size_t n = 0;
  rig_error e;
  bool have = job->size > 1 && !job->one_host && rig_peer_self(&self, &n, &e) == RIG_OK;
  if (have) t->self_held = true;
  int all = have, every = 0;
  MPI_Request req;
  rig_status st = rig_mpi_status(MPI_Iallreduce(&all, &every, 1, MPI_INT, MPI_LAND, t->comm, &req),
                                 "MPI_Iallreduce", err);
  if (st == RIG_OK) st = rig_bootstrap_wait(&req, "MPI_Iallreduce", pending, err);
  *ok = false;
  if (st != RIG_OK || !every) return st;
  /* Listening before a neighbour can know this address: its first
   * message may come as soon as the addresses are swapped. */
  hear(job, true);
  if ((st = listen_hold(err)) == RIG_OK) t->listening = true;
  void **theirs = calloc((size_t)k + 1, sizeof *theirs);
  size_t *lens = calloc((size_t)k + 1, sizeof *lens);
  if (st == RIG_OK && (!theirs || !lens))
    st = rig_error_set(err, RIG_ENOMEM, "out of memory starting a job");
  if (st == RIG_OK)
    st = rig_tree_swap(job, self, n, RIG_PEER_ADDRESS_MAX, theirs, lens, pending, err);
  lost_ctx *lost = t->lost;
  for (int i = 0; st == RIG_OK && i < k; i++) {
    int m = i < t->nchildren ? t->first + i : t->parent;
    lost[i] = (lost_ctx){job, m};
    st = rig_peer_connect(theirs[i], lens[i], &job->failed, on_lost, &lost[i], &t->peers[i], err);
    if (st != RIG_OK) rig_job_unreached(job, job->rank, m, err);
  }
  for (int i = 0; theirs && i < k; i++) free(theirs[i]);
  free(theirs);
  free(lens);
  *ok = st == RIG_OK;
  return st;
}

void rig_tree_peers_free(rig_job *job) {
  job_tree *t = &job->tree;
  hear(job, false);
  if (t->listening) listen_drop();
  t->listening = false;
  int k = t->nchildren + (t->parent >= 0);
  bool closed = true;
  for (int i = 0; t->peers && i < k; i++) closed &= rig_peer_release(t->peers[i]);
  /* A close still under way may yet call its loss: its context stays. */
  if (closed) free(t->lost);
  free(t->peers);
  if (t->self_held) rig_peer_self_release();
  t->peers = NULL;
  t->lost = NULL;
  t->self_held = false;
}

/* ---- runs -------------------------------------------------------------------------- */

rig_status rig_tree_send(rig_job *job, int to, bool start, uint64_t run, uint64_t ns,
                         int64_t machine, rig_error *err) {
  job_tree *t = &job->tree;
  int i = to == t->parent ? t->nchildren : to - t->first;
  tree_msg m = {job->c.job_id, start ? WHAT_START : WHAT_DONE, job->rank, run, ns, machine};
  atomic_fetch_add_explicit(&t->messages, 1, memory_order_relaxed);
  atomic_fetch_add_explicit(&t->bytes, start ? 8 : 24, memory_order_relaxed);
  return rig_peer_send(t->peers[i], MSG_TREE, &m, sizeof m, err);
}

static rig_status take(rig_job *job, rig_error *err) {
  (void)job;
  (void)err; /* the handler fills the mailbox, checking each word */
  return RIG_OK;
}

static bool may_send(rig_job *job, bool start, uint64_t q) {
  (void)job;
  (void)start;
  (void)q; /* a message is copied as it is sent */
  return true;
}

static rig_status start(rig_job *job, uint64_t q, rig_error *err) {
  job_tree *t = &job->tree;
  for (int c = 0; c < t->nchildren; c++)
    if (rig_tree_send(job, t->first + c, true, q, 0, 0, err) != RIG_OK) return RIG_EJOB;
  return RIG_OK;
}

static rig_status done(rig_job *job, uint64_t q, uint64_t ns, int64_t machine, rig_error *err) {
  return rig_tree_send(job, job->tree.parent, false, q, ns, machine, err);
}

/* A waiter progresses the worker itself (the rail thread leaves it the
 * messages), and sleeps on it until a message (a nudge) comes. */
static void sleep_on_worker(job_tree *t, uint32_t seen, long *nap_ns) {
  (void)nap_ns;
  rig_peer_wait(&t->mail, seen, 100000000L);
}

static bool settled(rig_job *job) {
  (void)job;
  return true;
}

/* No spin: a message takes a system call to come. */
static double no_spin(void) {
  return 0;
}

const tree_way rig_tree_by_messages = {
    .name = "messages",
    .open = rig_tree_peers_start,
    .take = take,
    .may_send = may_send,
    .start = start,
    .done = done,
    .waiting = rig_peer_polling,
    .progress = rig_peer_progress,
    .sleep = sleep_on_worker,
    .settled = settled,
    .spin_s = no_spin,
};
