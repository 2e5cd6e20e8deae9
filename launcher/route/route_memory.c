/* The route by shared memory (route.h), between the controller and an
 * agent on one host: hand-overs are stored into the agent's ring, mapped
 * here; copies of the agent's host memory mapped here are made here; the
 * agent reports by a store into the proxy's timeline, mapped there, and
 * reaches the controller's memory for far copies by process_vm_readv and
 * writev. */
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/count_wait.h"
#include "base/sync.h"
#include "executor.h"
#include "failure.h"
#include "far_copy.h"
#include "job_state.h"
#include "route_express.h"

/* Copies of at least this many bytes wait for the device's earlier work
 * and are made here (express.h). */
#define NEAR_WAIT (UINT64_C(1) << 20)

/* How long a waiter yields before it sleeps, and an idle executor before
 * it sleeps on its ring's bell. */
#define YIELD_MEMORY_S RIG_WAIT_YIELD_S
#define YIELD_RING_S   50e-6

/* ---- the controller's half ---------------------------------------------------------------- */

static bool no_progress(void) {
  return false;
}

/* The proxy's timeline here and its ring, mapped. */
static rig_status proxy_setup(proxy *px, rig_job *job, const rig_device_facts *f, rig_error *err) {
  express *ex = px->link->express;
  px->tl = rig_express_timeline(ex, px->machine, px->index);
  px->ring = rig_express_ring(ex, px->machine, px->index);
  if (!px->tl || !px->ring)
    return rig_error_set(err, RIG_EJOB, "%s: device %zu has no place in the job's express",
                         rig_job_label(job, px->machine), (size_t)px->index);
  px->timeline = &px->tl->value;
  rig_status st =
      rig_device_register(&rig_proxy_timeline_driver, px, f, px->timeline, &px->dev, err);
  if (st == RIG_OK) px->tl->device = rig_device_index(px->dev);
  return st;
}

/* Stored into the agent's ring, mapped here (false when it does not fit a
 * slot, or its slot is still busy: the ring is full). */
static bool into_ring(proxy *px, uint64_t value, uint32_t kind, const void *head, size_t hlen,
                      const void *bytes, size_t len) {
  if (hlen + len > EX_SLOT_BYTES || !rig_express_claim(px->ring, px->tl, value)) return false;
  rig_express_publish(px->ring, value, kind, head, hlen, bytes, len);
  return true;
}

/* A copy between the controller's memory and the agent's host memory
 * mapped here: made here once the device's earlier work is done, and a
 * mark of its value in the ring (false: it is not made here). The core
 * waited for the memory's users on other devices, not for this device's
 * own earlier work. A large copy waits for it (the agent's copy would be
 * slower); a small one goes the agent's way, in order. */
static bool copy_near(proxy *px, rig_job *job, const rig_work *w, rig_status *st, rig_error *err) {
  bool in = rig_proxy_is_remote(w->dst);
  uint64_t there = in ? w->dst : w->src, len;
  unsigned char *near =
      rig_express_mem(px->link->express, px->machine, rig_proxy_remote_id(there), &len);
  if (!near) return false;
  uint64_t at = rig_proxy_remote_offset(there), before = w->value - 1;
  if (at > len || w->length > len - at) return false;
  bool ready = atomic_load_explicit(&px->tl->value, memory_order_acquire) >= before ||
               (w->length >= NEAR_WAIT && rig_route_wait(px, job, before, no_progress));
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

/* A copy: made here where it can be; else into the ring, carrying its
 * bytes where they fit a slot (in), or far where the agent reaches this
 * memory itself; else as a frame. */
static rig_status copy(proxy *px, rig_job *job, const rig_work *w, rig_error *err) {
  bool in = !rig_proxy_is_remote(w->src) && rig_proxy_is_remote(w->dst);
  bool out = rig_proxy_is_remote(w->src) && !rig_proxy_is_remote(w->dst);
  if (!in && !out) return rig_proxy_send_copy(px, job, w, err);
  rig_status st;
  if (copy_near(px, job, w, &st, err)) return st;
  uint64_t there = in ? w->dst : w->src;
  ex_copy c = {rig_proxy_remote_id(there), rig_proxy_remote_offset(there), w->length,
               in ? w->src : w->dst};
  if (in &&
      into_ring(px, w->value, EX_IN, &c, sizeof c, (const void *)(uintptr_t)w->src, w->length))
    return RIG_OK;
  if (px->ring->far && into_ring(px, w->value, in ? EX_IN_FAR : EX_OUT_FAR, &c, sizeof c, NULL, 0))
    return RIG_OK;
  return rig_proxy_send_copy(px, job, w, err);
}

static rig_status submit(proxy *px, rig_job *job, const rig_work *w, rig_error *err) {
  atomic_store_explicit(&px->tl->posted, w->value, memory_order_release);
  if (!w->sub) return copy(px, job, w, err);
  const void *bytes;
  size_t len;
  rig_status st = rig_proxy_words(px, w, &bytes, &len, err);
  if (st != RIG_OK) return st;
  /* Into the agent's ring where it can; else (too long, the ring full) as
   * a frame: the agent takes both in value order. */
  if (into_ring(px, w->value, EX_WORDS, NULL, 0, bytes, len)) return RIG_OK;
  return rig_proxy_send_words(px, job, w->value, bytes, len, err);
}

/* The agent's report is a store into the timeline, which wakes it: no
 * rig_device_signal comes. */
static void sleep_on_timeline(proxy *px, uint64_t value, int64_t timeout_ns) {
  double until = rig_route_first_sleep(px, value) ? rig_now_s() + YIELD_MEMORY_S : 0;
  while (!rig_route_reached(px, value) && rig_now_s() < until) sched_yield();
  if (!rig_route_reached(px, value)) rig_express_sleep(px->tl, value, timeout_ns);
}

static void memory_shared(proxy *px, uint64_t id, const void *address, size_t len) {
  rig_express_mem_add(px->link->express, px->machine, id, address, len);
}

/* A window where the agent reaches this process's memory (the ring says). */
static rig_status open_window(proxy *px, const rig_mem_info *mem, uint64_t bytes, void **mapping,
                              rig_error *err) {
  return px->ring->far ? rig_proxy_open_window(px, mem, bytes, NULL, mapping, err) : RIG_OK;
}

/* ---- the agent's half --------------------------------------------------------------------- */

/* Its ring, and the controller's timeline of the device, mapped. */
static rig_status executor_start(executor *e, rig_error *err) {
  e->ring = rig_express_my_ring(e->job->express, e->device);
  e->timeline = rig_express_my_timeline(e->job->express, e->job->rank, e->device);
  if (!e->ring || !e->timeline)
    return rig_error_set(err, RIG_EJOB, "machine %d: device %u has no place in the job's express",
                         e->job->rank, e->device);
  return RIG_OK;
}

/* The next hand-over in value order, from the ring or the queue: polled
 * about 50 us after the last, then slept for on the ring's bell (which the
 * controller rings after a hand-over, and the control thread after a
 * frame). Only a ring starts the polling again: a sleep that ran out
 * sleeps on, and one that never took a hand-over sleeps from the start.
 * With RIG_JOB_POLL, one that took a hand-over never sleeps: no wake. */
static handover *next(executor *e) {
  double idle_since = 0;
  bool quiet = !e->taken; /* slept, and no ring since: sleeps on */
  for (unsigned spin = 0;; spin++) {
    uint32_t bell = atomic_load(&e->ring->bell);
    handover *h = rig_executor_peek(e);
    if (h || atomic_load(&e->stopping)) {
      e->taken |= h != NULL;
      return h;
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
    double now = rig_now_s();
    if (!idle_since) idle_since = now;
    /* Polling (RIG_JOB_POLL), it yields for as long as the job lasts. */
    if (e->poll || now - idle_since < YIELD_RING_S) {
      sched_yield();
      continue;
    }
    quiet = true;
  }
}

/* Waits until the controller's timeline of the device shows v (or the job
 * failed). */
static void wait_timeline(executor *e, uint64_t v) {
  for (unsigned i = 0; atomic_load_explicit(&e->timeline->value, memory_order_acquire) < v &&
                       !atomic_load(&e->job->failed);
       i++) {
    if (i < 1024) {
      rig_cpu_relax();
    } else {
      struct timespec nap = {0, 20000};
      nanosleep(&nap, NULL);
    }
  }
}

/* A store into the controller's timeline. A copy out's bytes go in a
 * REPLY frame, which moves the timeline there once they landed: a later
 * report must not pass it, so it is waited for (or the job's failure). */
static void report(executor *e, const handover *h, uint64_t v) {
  if (h->f.h.kind != F_COPY_OUT)
    rig_express_report(e->timeline, v);
  else
    wait_timeline(e, v);
}

/* Its REPLY names the copy's value and device: the controller reaches the
 * copy's point once the bytes are there, so the device's earlier work
 * must be reported first. */
static rig_status copy_out(executor *e, const handover *h, rig_error *err) {
  unsigned char *bytes;
  rig_status st = rig_executor_read_out(e, h, &bytes, err);
  if (st != RIG_OK) return st;
  frame_header fh = h->f.h;
  wait_timeline(e, fh.value - 1);
  frame r = {.h = {.kind = F_REPLY,
                   .request = fh.request,
                   .device = fh.device,
                   .value = fh.value,
                   .status = RIG_OK}};
  rig_ctl_send(&e->job->c, RIG_JOB_CONTROLLER, &r, bytes, h->f.copy_out.length, NULL);
  free(bytes);
  return RIG_OK;
}

/* By process_vm_readv/writev: no key. */
static rig_status far_move(express *ex, bool in, rig_peer_key *key, unsigned char *here,
                           uint64_t there, size_t n, rig_error *err) {
  (void)key;
  return rig_far_by_cma(ex, in, here, there, n, err);
}

const rig_route rig_route_memory = {
    .name = ROUTE_MEMORY,
    .proxy_setup = proxy_setup,
    .submit = submit,
    .sleep = sleep_on_timeline,
    .memory_shared = memory_shared,
    .open_window = open_window,
    .take_report = rig_route_timeline_report,
    .busy = rig_route_timeline_busy,
    .drain = rig_route_timeline_drain,
    .share_memory = rig_express_alloc, /* the controller maps it */
    .agent_start = rig_route_ring_agent_start,
    .executor_start = executor_start,
    .next = next,
    .queued = rig_route_ring_queued,
    .wake = rig_route_ring_wake,
    .late_s = rig_route_a_second,
    .report = report,
    .copy_out = copy_out,
    .far_move = far_move,
};
