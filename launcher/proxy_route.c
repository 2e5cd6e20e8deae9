/* The three routes of a proxy (proxy_route.h; docs/internals.md
 * "Routes"): by the agent's ring in shared memory, by UCX messages into
 * that ring, by frames of the control protocol. */
#include "proxy_route.h"

#include <sched.h>
#include <string.h>

#include "base/clock.h"
#include "base/count_wait.h"
#include "express.h"
#include "express_messages.h"
#include "failure.h"
#include "job.h"
#include "proxy.h"

/* Copies of at least this many bytes wait for the device's earlier work
 * and are made here (express.h). */
#define NEAR_WAIT (UINT64_C(1) << 20)

bool rig_proxy_route_wait(proxy *px, rig_job *job, uint64_t before) {
  while (atomic_load_explicit(&px->tl->value, memory_order_acquire) < before) {
    if (atomic_load(&job->failed)) return false;
    if (px->route->progress()) continue;
    rig_express_sleep(px->tl, before, 1000000);
  }
  return true;
}

static bool no_progress(void) {
  return false;
}

/* ---- waits on a timeline of the agent's reports ---------------------------------------- */

/* The wait this thread is in: the first sleep of a wait yields
 * RIG_WAIT_YIELD_S before it sleeps, since the work of another machine is
 * often that close and a sleep costs a wake on top of the agent's own
 * (after a quiet, two wakes where one would do); later ones sleep at
 * once. */
#define YIELD_MEMORY_S   RIG_WAIT_YIELD_S
#define YIELD_MESSAGES_S RIG_WAIT_YIELD_S
static _Thread_local const ex_timeline *waiting_on;
static _Thread_local uint64_t waiting_for;

static bool reached(const proxy *px, uint64_t value) {
  return atomic_load_explicit(&px->tl->value, memory_order_acquire) >= value;
}

/* Whether this is a new wait (not the same one sleeping again). */
static bool first_sleep(const proxy *px, uint64_t value) {
  bool first = waiting_on != px->tl || waiting_for != value;
  waiting_on = px->tl;
  waiting_for = value;
  return first;
}

/* The agent's report is a store into the timeline, which wakes it: no
 * rig_device_signal comes. */
static void sleep_by_memory(void *st, uint64_t value, int64_t timeout_ns) {
  proxy *px = st;
  double until = first_sleep(px, value) ? rig_now_s() + YIELD_MEMORY_S : 0;
  while (!reached(px, value) && rig_now_s() < until) sched_yield();
  if (!reached(px, value)) rig_express_sleep(px->tl, value, timeout_ns);
}

/* A report by message lands when the worker is progressed: the waiter does
 * that itself meanwhile, and sleeps on the worker's event fd
 * (rig_peer_wait), so that the report wakes this thread and no other. */
static void sleep_by_messages(void *st, uint64_t value, int64_t timeout_ns) {
  proxy *px = st;
  rig_peer_polling(true);
  double until = first_sleep(px, value) ? rig_now_s() + YIELD_MESSAGES_S : 0;
  while (!reached(px, value) && rig_now_s() < until)
    if (!rig_peer_progress()) sched_yield();
  if (!reached(px, value)) {
    uint32_t seq = atomic_load(&px->tl->seq);
    if (!reached(px, value)) rig_peer_wait(&px->tl->seq, seq, timeout_ns);
  }
  rig_peer_polling(false);
}

/* ---- hand-overs -------------------------------------------------------------------------- */

/* Stored into the agent's ring, mapped here (false when its slot is still
 * busy: the ring is full). */
static bool handover_by_memory(proxy *px, rig_job *job, const proxy_handover *h, rig_status *st,
                               rig_error *err) {
  (void)job;
  (void)err;
  if (h->hlen + h->len > EX_SLOT_BYTES || !rig_express_claim(px->ring, px->tl, h->value))
    return false;
  rig_express_publish(px->ring, h->value, h->kind, h->head, h->hlen, h->bytes, h->len);
  *st = RIG_OK;
  return true;
}

/* Sent as a message into the agent's ring, once its slot is free. */
static bool handover_by_messages(proxy *px, rig_job *job, const proxy_handover *h, rig_status *st,
                                 rig_error *err) {
  if (h->hlen + h->len > EX_SLOT_BYTES) return false;
  if (h->value > EX_RING && !rig_proxy_route_wait(px, job, h->value - EX_RING))
    *st = rig_job_error(job, err);
  else
    *st = rig_express_msg_handover(px->link->express, px->machine, px->index, h->value, h->kind,
                                   h->head, h->hlen, h->bytes, h->len, err);
  return true;
}

static bool handover_by_frames(proxy *px, rig_job *job, const proxy_handover *h, rig_status *st,
                               rig_error *err) {
  (void)px, (void)job, (void)h, (void)st, (void)err;
  return false;
}

/* ---- copies of the agent's host memory mapped here ----------------------------------------- */

/* Made here once the device's earlier work is done, and a mark of its
 * value in the ring. The core waited for the memory's users on other
 * devices, not for this device's own earlier work. A large copy waits for
 * it (the agent's copy would be slower); a small one goes the agent's way,
 * in order. */
static bool copy_near_by_memory(proxy *px, rig_job *job, const rig_work *w, rig_status *st,
                                rig_error *err) {
  bool in = rig_proxy_is_remote(w->dst);
  uint64_t there = in ? w->dst : w->src, len;
  unsigned char *near =
      rig_express_mem(px->link->express, px->machine, rig_proxy_remote_id(there), &len);
  if (!near) return false;
  uint64_t at = rig_proxy_remote_offset(there), before = w->value - 1;
  if (at > len || w->length > len - at) return false;
  bool ready = atomic_load_explicit(&px->tl->value, memory_order_acquire) >= before ||
               (w->length >= NEAR_WAIT && rig_proxy_route_wait(px, job, before));
  if (atomic_load(&job->failed)) {
    *st = rig_job_error(job, err);
    return true;
  }
  if (!ready || !rig_express_claim(px->ring, px->tl, w->value)) return false;
  if (in)
    memcpy(near + at, (const void *)(uintptr_t)w->src, w->length);
  else
    memcpy((void *)(uintptr_t)w->dst, near + at, w->length);
  rig_express_publish(px->ring, w->value, EX_DONE, NULL, 0, NULL, 0);
  *st = RIG_OK;
  return true;
}

static bool copy_near_never(proxy *px, rig_job *job, const rig_work *w, rig_status *st,
                            rig_error *err) {
  (void)px, (void)job, (void)w, (void)st, (void)err;
  return false;
}

/* ---- the tables ----------------------------------------------------------------------------- */

static const proxy_route by_memory = {
    .route = ROUTE_MEMORY,
    .handover = handover_by_memory,
    .copy_near = copy_near_by_memory,
    .sleep = sleep_by_memory,
    .progress = no_progress,
    .reports_by_frame = false,
    .copies_out_by_frame = true,
    .windows_by_rma = false,
};

static const proxy_route by_messages = {
    .route = ROUTE_MESSAGES,
    .handover = handover_by_messages,
    .copy_near = copy_near_never,
    .sleep = sleep_by_messages,
    .progress = rig_peer_progress,
    .reports_by_frame = false,
    .copies_out_by_frame = false,
    .windows_by_rma = true,
};

static const proxy_route by_frames = {
    .route = ROUTE_FRAMES,
    .handover = handover_by_frames,
    .copy_near = copy_near_never,
    .sleep = NULL,
    .progress = no_progress,
    .reports_by_frame = true,
    .copies_out_by_frame = true,
    .windows_by_rma = false,
};

const proxy_route *rig_proxy_route(express *ex, int m) {
  switch (rig_express_route(ex, m)) {
    case ROUTE_MEMORY:
      return &by_memory;
    case ROUTE_MESSAGES:
      return &by_messages;
    default:
      return &by_frames;
  }
}
