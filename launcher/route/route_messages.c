/* The route by UCX messages (route.h), between hosts: hand-overs are sent
 * as messages into the agent's ring once their slot is free, the agent
 * reports by messages into the proxy's timeline, and reaches the
 * controller's memory for far copies by RMA, in windows registered here.
 * The waiters on both sides move the worker on themselves. */
#include <sched.h>
#include <stdlib.h>

#include "base/clock.h"
#include "base/count_wait.h"
#include "base/env.h"
#include "base/sync.h"
#include "executor.h"
#include "express_messages.h"
#include "failure.h"
#include "job_state.h"
#include "route_express.h"

/* How long a waiter on the timeline yields before it sleeps. */
#define YIELD_MESSAGES_S RIG_WAIT_YIELD_S
/* How long an executor yields after its last hand-over (a round trip by
 * message is longer than one by memory: a shorter watch sleeps through
 * the next one, and every wake-up adds to the next round trip), and how
 * long it sleeps on the worker before it sleeps on its bell alone. */
#define YIELD_RING_S 200e-6
#define WATCH_S      10e-3

/* ---- the controller's half ---------------------------------------------------------------- */

/* The proxy's timeline here, which the agent's messages move. */
static rig_status proxy_setup(proxy *px, rig_job *job, const rig_device_facts *f, rig_error *err) {
  px->tl = rig_express_timeline(px->link->express, px->machine, px->index);
  if (!px->tl)
    return rig_error_set(err, RIG_EJOB, "%s: device %zu has no place in the job's express",
                         rig_job_label(job, px->machine), (size_t)px->index);
  px->timeline = &px->tl->value;
  rig_status st =
      rig_device_register(&rig_proxy_timeline_driver, px, f, px->timeline, &px->dev, err);
  if (st == RIG_OK) px->tl->device = rig_device_index(px->dev);
  return st;
}

/* Sent as a message into the agent's ring, once its slot is free. */
static rig_status into_ring(proxy *px, rig_job *job, uint64_t value, uint32_t kind,
                            const void *head, size_t hlen, const void *bytes, size_t len,
                            rig_error *err) {
  if (value > EX_RING && !rig_route_wait(px, job, value - EX_RING, rig_peer_progress))
    return rig_job_error(job, err);
  return rig_express_msg_handover(px->link->express, px->machine, px->index, value, kind, head,
                                  hlen, bytes, len, err);
}

/* A copy in carries its bytes where they fit a slot; else, and every copy
 * out (a REPLY could be passed by a report), it goes far: the agent
 * reaches this memory by RMA. */
static rig_status copy(proxy *px, rig_job *job, const rig_work *w, rig_error *err) {
  bool in = !rig_proxy_is_remote(w->src) && rig_proxy_is_remote(w->dst);
  bool out = rig_proxy_is_remote(w->src) && !rig_proxy_is_remote(w->dst);
  if (!in && !out) return rig_proxy_send_copy(px, job, w, err);
  uint64_t there = in ? w->dst : w->src;
  ex_copy c = {rig_proxy_remote_id(there), rig_proxy_remote_offset(there), w->length,
               in ? w->src : w->dst};
  if (in && sizeof c + w->length <= EX_SLOT_BYTES)
    return into_ring(px, job, w->value, EX_IN, &c, sizeof c, (const void *)(uintptr_t)w->src,
                     w->length, err);
  return into_ring(px, job, w->value, in ? EX_IN_FAR : EX_OUT_FAR, &c, sizeof c, NULL, 0, err);
}

static rig_status submit(proxy *px, rig_job *job, const rig_work *w, rig_error *err) {
  /* A report by message past this is false (express_messages.c). */
  atomic_store_explicit(&px->tl->posted, w->value, memory_order_release);
  if (!w->sub) return copy(px, job, w, err);
  const void *bytes;
  size_t len;
  rig_status st = rig_proxy_words(px, w, &bytes, &len, err);
  if (st != RIG_OK) return st;
  /* Into the agent's ring where it fits a slot; else as a frame: the
   * agent takes both in value order. */
  if (len <= EX_SLOT_BYTES) return into_ring(px, job, w->value, EX_WORDS, NULL, 0, bytes, len, err);
  return rig_proxy_send_words(px, job, w->value, bytes, len, err);
}

/* A report by message lands when the worker is progressed: the waiter does
 * that itself meanwhile, and sleeps on the worker's event fd
 * (rig_peer_wait), so that the report wakes this thread and no other. */
static void sleep_on_worker(proxy *px, uint64_t value, int64_t timeout_ns) {
  rig_peer_polling(true);
  double until = rig_route_first_sleep(px, value) ? rig_now_s() + YIELD_MESSAGES_S : 0;
  while (!rig_route_reached(px, value) && rig_now_s() < until)
    if (!rig_peer_progress()) sched_yield();
  if (!rig_route_reached(px, value)) {
    uint32_t seq = atomic_load(&px->tl->seq);
    if (!rig_route_reached(px, value)) rig_peer_wait(&px->tl->seq, seq, timeout_ns);
  }
  rig_peer_polling(false);
}

/* Nothing of the agent's host is mapped here. */
static void memory_shared(proxy *px, uint64_t id, const void *address, size_t len) {
  (void)px, (void)id, (void)address, (void)len;
}

/* The agent reaches this memory by RMA: registered, its key goes with the
 * window. */
static rig_status open_window(proxy *px, const rig_mem_info *mem, uint64_t bytes, void **mapping,
                              rig_error *err) {
  rig_registration *reg;
  rig_status st = rig_memory_register(mem->host, bytes, &reg, err);
  return st == RIG_OK ? rig_proxy_open_window(px, mem, bytes, reg, mapping, err) : st;
}

/* ---- the agent's half --------------------------------------------------------------------- */

/* The controller maps none of this host's memory. */
static rig_buffer *share_memory(express *ex, uint64_t bytes, const void **address, size_t *len) {
  (void)ex, (void)bytes, (void)address, (void)len;
  return NULL;
}

/* Its ring; the controller's timeline is reached by message. */
static rig_status executor_start(executor *e, rig_error *err) {
  e->ring = rig_express_my_ring(e->job->express, e->device);
  if (!e->ring)
    return rig_error_set(err, RIG_EJOB, "machine %d: device %u has no place in the job's express",
                         e->job->rank, e->device);
  return RIG_OK;
}

/* The next hand-over in value order, from the ring or the queue: polled
 * about 200 us after the last, the worker progressed meanwhile, then slept
 * for on the worker's event fd (rig_peer_wait) with the ring's bell for a
 * while: a message then wakes this thread and no other; then on the bell
 * alone. Only a ring starts the polling again: a sleep that ran out
 * sleeps on, and one that never took a hand-over sleeps from the start (a
 * device no program uses keeps the worker from the busy ones). Quiet, one
 * that took hand-overs still sleeps on the worker, beside the rail
 * thread: a hand-over after a long quiet then costs one wake, not two.
 * With RIG_JOB_POLL, one that took a hand-over never sleeps: no wake. */
static handover *next(executor *e) {
  double idle_since = 0;
  bool polling = false;   /* this thread progresses the worker (rig_peer_polling) */
  bool quiet = !e->taken; /* slept, and no ring since: sleeps on */
  for (unsigned spin = 0;; spin++) {
    uint32_t bell = atomic_load(&e->ring->bell);
    handover *h = rig_executor_peek(e);
    if (h || atomic_load(&e->stopping)) {
      if (polling) rig_peer_polling(false);
      e->taken |= h != NULL;
      return h;
    }
    /* Quiet, one that took a hand-over sleeps on the worker still (not
     * counted as polling: the rail thread watches too), so that the next
     * one, however late, wakes it at once. */
    if (quiet && e->taken) {
      if (rig_peer_progress()) continue;
      rig_peer_wait(&e->ring->bell, bell, 100000000L);
      if (atomic_load(&e->ring->bell) != bell) {
        quiet = false;
        spin = 0;
        idle_since = 0;
      }
      continue;
    }
    if (quiet) {
      quiet = !rig_executor_sleep_on_bell(e, bell, &h);
      e->taken |= h != NULL;
      if (h) return h;
      spin = 0;
      idle_since = 0;
      continue;
    }
    /* About a microsecond of spinning, then yields: on a host with fewer
     * cores than busy threads, the work this waits for may need this one. */
    if (spin < 256) {
      rig_cpu_relax();
      continue;
    }
    if (!polling) {
      rig_peer_polling(true);
      polling = true;
    }
    if (rig_peer_progress()) continue;
    double now = rig_now_s();
    if (!idle_since) idle_since = now;
    /* Polling (RIG_JOB_POLL), it yields for as long as the job lasts. */
    if (e->poll || now - idle_since < YIELD_RING_S) {
      sched_yield();
      continue;
    }
    /* For a while more it sleeps on the worker: its next hand-over is
     * likely soon. Idle longer, it leaves the worker to the rail thread
     * (or a busier executor) and sleeps on the bell. */
    if (now - idle_since < WATCH_S) {
      rig_peer_wait(&e->ring->bell, bell, (int64_t)(WATCH_S * 1e9));
      continue;
    }
    rig_peer_polling(false);
    polling = false;
    quiet = true;
  }
}

/* Messages may come late (another host): they have the silence bound. */
static double the_silence_bound(void) {
  return rig_env_get()->job_silence;
}

static void report(executor *e, const handover *h, uint64_t v) {
  (void)h;
  rig_error err;
  if (rig_express_msg_report(e->job->express, e->device, v, &err) != RIG_OK)
    rig_job_fail_here(e->job, &err);
}

/* Its REPLY could be passed by a report: the controller sends none. */
static rig_status copy_out(executor *e, const handover *h, rig_error *err) {
  (void)h;
  return rig_error_set(err, RIG_EREFUSED,
                       "device %u: a copy out by frame, which a machine reached by messages "
                       "does not take",
                       e->device);
}

/* By RMA with the window's key. */
static rig_status far_move(express *ex, bool in, rig_peer_key *key, unsigned char *here,
                           uint64_t there, size_t n, rig_error *err) {
  return in ? rig_peer_get(ex->to_controller, here, there, n, key, err)
            : rig_peer_put(ex->to_controller, here, there, n, key, err);
}

const rig_route rig_route_messages = {
    .name = ROUTE_MESSAGES,
    .proxy_setup = proxy_setup,
    .submit = submit,
    .sleep = sleep_on_worker,
    .memory_shared = memory_shared,
    .open_window = open_window,
    .take_report = rig_route_timeline_report,
    .busy = rig_route_timeline_busy,
    .drain = rig_route_timeline_drain,
    .share_memory = share_memory,
    .agent_start = rig_route_ring_agent_start,
    .executor_start = executor_start,
    .next = next,
    .queued = rig_route_ring_queued,
    .wake = rig_route_ring_wake,
    .late_s = the_silence_bound,
    .report = report,
    .copy_out = copy_out,
    .far_move = far_move,
};
