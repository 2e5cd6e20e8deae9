/* The express path by messages (express_messages.h). Messages carry the job's id:
 * a process may hold several jobs, and its handlers are one per kind, so
 * they find the job among the process's open ones (jobs.h), and the express
 * its messages reach (job->heard). A handler runs on a thread that
 * progresses the rails' worker and never blocks but on the jobs' lock,
 * under which rig_express_msg_forget clears heard: once it returns, no
 * handler uses the express. Everything a message says is checked as a
 * frame is. */
#include "express_messages.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "failure.h"
#include "job_state.h"
#include "jobs.h"

/* The message kinds (rig_peer_listen). */
enum { MSG_HANDOVER = 1, MSG_REPORT = 2, MSG_KNOCK = 3 };

/* Controller to agent: a hand-over for the device's ring, then its bytes. */
typedef struct msg_handover {
  uint64_t job, value;
  uint32_t device, kind, len, unused;
} msg_handover;

/* Agent to controller: the device's work up to value is done. */
typedef struct msg_report {
  uint64_t job, value;
  uint32_t machine, device;
} msg_report;

/* Either way: a frame of the job is on its way to the receiver. */
typedef struct msg_knock {
  uint64_t job;
} msg_knock;

_Static_assert(sizeof(msg_handover) + EX_SLOT_BYTES <= RIG_PEER_MESSAGE_MAX,
               "a slot's hand-over fits a message");

/* A peer's loss fails the job naming its machine. The context may
 * outlive both (kept): they are compared, read only once found open. */
typedef struct lost_ctx {
  rig_job *job;
  express *ex;
  int machine;
  struct lost_ctx *next; /* in kept */
} lost_ctx;

/* Expresses listening: the handlers are set while any is. The calls that
 * set them wait for the engine's thread, whose handlers take the jobs'
 * lock: they are made under a lock of their own, never under that one. */
static pthread_mutex_t listen_lock = PTHREAD_MUTEX_INITIALIZER;
static int listeners;
/* The contexts of peers whose close is still under way (rig_peer_release):
 * UCX may yet call their loss, which finds no express of theirs. */
static pthread_mutex_t kept_lock = PTHREAD_MUTEX_INITIALIZER;
static lost_ctx *kept;

/* The express that job's messages reach (under the jobs' lock). */
static express *find(uint64_t job) {
  rig_job *j = rig_jobs_find(job);
  return j ? j->heard : NULL;
}

/* Whether ex is still heard by its job (under the jobs' lock). */
static void hear(express *ex, bool on) {
  rig_jobs_lock();
  if (on)
    ex->job->heard = ex;
  else if (ex->job->heard == ex)
    ex->job->heard = NULL;
  rig_jobs_unlock();
}

/* The job of ex fails with "machine m: why" (m: where it was found). */
static void fail(express *ex, int m, const char *why) {
  char cause[RIG_ERROR_MESSAGE_MAX + RIG_JOB_LABEL];
  snprintf(cause, sizeof cause, "%s: %s", rig_job_label(ex->job, m), why);
  rig_job_fail_with(ex->job, true, cause);
}

/* ---- the handlers --------------------------------------------------------------------- */

static void on_handover(void *ctx, const void *bytes, size_t len) {
  (void)ctx;
  msg_handover h;
  if (len < sizeof h) return;
  memcpy(&h, bytes, sizeof h);
  rig_jobs_lock();
  express *ex = find(h.job);
  ex_ring *ring = ex ? rig_express_my_ring(ex, h.device) : NULL;
  char why[160] = "";
  if (ex && !ring)
    snprintf(why, sizeof why, "a hand-over by message to no device %u", h.device);
  else if (ex && (h.len != len - sizeof h || h.len > EX_SLOT_BYTES))
    snprintf(why, sizeof why, "device %u: hand-over %llu by a message of %zu bytes for %u",
             h.device, (unsigned long long)h.value, len, h.len);
  else if (ex && atomic_load_explicit(&ring->slots[h.value % EX_RING].value,
                                      memory_order_acquire) >= h.value)
    snprintf(why, sizeof why, "device %u: hand-over %llu by message, its slot taken", h.device,
             (unsigned long long)h.value);
  if (ex && !why[0])
    rig_express_publish(ring, h.value, h.kind, NULL, 0, (const unsigned char *)bytes + sizeof h,
                        h.len);
  else if (ex)
    fail(ex, ex->job->rank, why);
  rig_jobs_unlock();
}

static void on_report(void *ctx, const void *bytes, size_t len) {
  (void)ctx;
  msg_report r;
  if (len != sizeof r) return;
  memcpy(&r, bytes, sizeof r);
  rig_jobs_lock();
  express *ex = find(r.job);
  bool known =
      ex && r.machine > 0 && (int)r.machine < ex->machines && ex->peers && ex->peers[r.machine];
  ex_timeline *tl = known ? rig_express_timeline(ex, (int)r.machine, r.device) : NULL;
  char why[160] = "";
  if (ex && !tl)
    snprintf(why, sizeof why, "a report by message of no device %u", r.device);
  else if (tl && r.value > atomic_load_explicit(&tl->posted, memory_order_acquire))
    snprintf(why, sizeof why, "device %u: a report of value %llu past its last hand-over %llu",
             r.device, (unsigned long long)r.value, (unsigned long long)atomic_load(&tl->posted));
  if (tl && !why[0]) {
    rig_express_report(tl, r.value);
    /* The report is here: a trace's hand-overs to it end now. */
    rig_point pt = rig_point_make(tl->device, r.value);
    rig_trace_reached(&pt, 1);
  } else if (ex)
    fail(ex, known ? (int)r.machine : 0, why);
  rig_jobs_unlock();
}

static void on_knock(void *ctx, const void *bytes, size_t len) {
  (void)ctx;
  msg_knock k;
  if (len != sizeof k) return;
  memcpy(&k, bytes, sizeof k);
  rig_jobs_lock();
  express *ex = find(k.job);
  if (ex) rig_ctl_knock(&ex->job->c);
  rig_jobs_unlock();
}

static void on_lost(void *ctx, const char *why) {
  lost_ctx *l = ctx;
  rig_jobs_lock();
  if (rig_jobs_holds(l->job) && l->job->heard == l->ex && !atomic_load(&l->job->closing))
    fail(l->ex, l->machine, why);
  rig_jobs_unlock();
}

/* ---- setting up --------------------------------------------------------------------------- */

static rig_status listen_all(rig_error *err) {
  rig_status st = rig_peer_listen(MSG_HANDOVER, on_handover, NULL, err);
  if (st != RIG_OK) return st;
  if ((st = rig_peer_listen(MSG_REPORT, on_report, NULL, err)) != RIG_OK) {
    rig_peer_unlisten(MSG_HANDOVER);
  } else if ((st = rig_peer_listen(MSG_KNOCK, on_knock, NULL, err)) != RIG_OK) {
    rig_peer_unlisten(MSG_HANDOVER);
    rig_peer_unlisten(MSG_REPORT);
  }
  return st;
}

rig_status rig_express_msg_listen(express *ex, const void **address, size_t *len, rig_error *err) {
  if (!ex->listening) {
    hear(ex, true);
    rig_status st = RIG_OK;
    pthread_mutex_lock(&listen_lock);
    if (listeners == 0) st = listen_all(err);
    if (st == RIG_OK) listeners++;
    pthread_mutex_unlock(&listen_lock);
    if (st != RIG_OK) {
      hear(ex, false);
      return st;
    }
    ex->listening = true;
  }
  if (!ex->self_held) {
    rig_status st = rig_peer_self(&ex->self_address, &ex->self_len, err);
    if (st != RIG_OK) return st;
    ex->self_held = true;
  }
  *address = ex->self_address;
  *len = ex->self_len;
  return RIG_OK;
}

rig_status rig_express_msg_connect(express *ex, int m, const void *address, size_t len,
                                   rig_error *err) {
  lost_ctx *l = calloc(1, sizeof *l);
  if (!l) return rig_error_set(err, RIG_ENOMEM, "out of memory for a peer");
  *l = (lost_ctx){ex->job, ex, m, NULL};
  rig_peer *p;
  rig_status st = rig_peer_connect(address, len, &ex->job->failed, on_lost, l, &p, err);
  if (st != RIG_OK) {
    free(l);
    return st;
  }
  if (m == 0) {
    ex->to_controller = p;
    ex->lost_controller = l;
    return RIG_OK;
  }
  if (!ex->peers && (!(ex->peers = calloc((size_t)ex->machines, sizeof *ex->peers)) ||
                     !(ex->lost = calloc((size_t)ex->machines, sizeof *ex->lost)))) {
    rig_peer_release(p);
    free(l);
    return rig_error_set(err, RIG_ENOMEM, "out of memory for a peer");
  }
  ex->peers[m] = p;
  ex->lost[m] = l;
  return RIG_OK;
}

static void release_peer(rig_peer *p, lost_ctx *l) {
  if (rig_peer_release(p)) {
    free(l);
    return;
  }
  pthread_mutex_lock(&kept_lock);
  l->next = kept;
  kept = l;
  pthread_mutex_unlock(&kept_lock);
}

void rig_express_msg_forget(express *ex) {
  if (!ex) return;
  if (ex->job) hear(ex, false);
  /* No handler uses ex now; a late loss finds it gone. A peer whose close
   * is still under way (it stopped) keeps its loss's context. */
  release_peer(ex->to_controller, ex->lost_controller);
  ex->to_controller = NULL;
  ex->lost_controller = NULL;
  for (int m = 0; ex->peers && m < ex->machines; m++) release_peer(ex->peers[m], ex->lost[m]);
  free(ex->peers);
  free(ex->lost);
  ex->peers = NULL;
  ex->lost = NULL;
  if (ex->listening) {
    pthread_mutex_lock(&listen_lock);
    if (--listeners == 0) {
      rig_peer_unlisten(MSG_HANDOVER);
      rig_peer_unlisten(MSG_REPORT);
      rig_peer_unlisten(MSG_KNOCK);
    }
    pthread_mutex_unlock(&listen_lock);
  }
  if (ex->self_held) rig_peer_self_release();
  ex->self_held = ex->listening = false;
}

/* ---- sending ------------------------------------------------------------------------------- */

rig_status rig_express_msg_handover(express *ex, int m, uint32_t device, uint64_t value,
                                    uint32_t kind, const void *head, size_t hlen, const void *bytes,
                                    size_t len, rig_error *err) {
  unsigned char msg[sizeof(msg_handover) + EX_SLOT_BYTES];
  if (hlen + len > EX_SLOT_BYTES)
    return rig_error_set(err, RIG_EINVAL, "a hand-over of %zu bytes by message", hlen + len);
  msg_handover h = {ex->job->c.job_id, value, device, kind, (uint32_t)(hlen + len), 0};
  memcpy(msg, &h, sizeof h);
  if (hlen) memcpy(msg + sizeof h, head, hlen);
  if (len) memcpy(msg + sizeof h + hlen, bytes, len);
  return rig_peer_send(ex->peers[m], MSG_HANDOVER, msg, sizeof h + hlen + len, err);
}

rig_status rig_express_msg_report(express *ex, uint32_t device, uint64_t value, rig_error *err) {
  msg_report r = {ex->job->c.job_id, value, (uint32_t)ex->job->rank, device};
  return rig_peer_send(ex->to_controller, MSG_REPORT, &r, sizeof r, err);
}

bool rig_express_msg_knocks(const express *ex, int m) {
  return m == 0 ? ex->to_controller != NULL : ex->peers && ex->peers[m];
}

void rig_express_msg_knock(express *ex, int m) {
  if (!rig_express_msg_knocks(ex, m)) return;
  msg_knock k = {ex->job->c.job_id};
  rig_error err;
  /* A hint: lost, the frame is still taken at the receiver's next nap. */
  (void)rig_peer_send(m == 0 ? ex->to_controller : ex->peers[m], MSG_KNOCK, &k, sizeof k, &err);
}
