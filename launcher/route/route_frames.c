/* The route by frames (route.h): every hand-over a frame of the control
 * protocol, every report a DONE frame; no ring, no timeline shared. The
 * proxy's shadow timeline moves by those frames, and its waiters are
 * woken by rig_device_signal. */
#include <stdlib.h>

#include "executor.h"
#include "express.h"
#include "failure.h"
#include "job_state.h"
#include "proxy.h"
#include "route.h"

/* ---- the controller's half ---------------------------------------------------------------- */

static rig_status proxy_setup(proxy *px, rig_job *job, const rig_device_facts *f, rig_error *err) {
  (void)job;
  px->timeline = &px->shadow;
  return rig_device_register(&rig_proxy_driver, px, f, px->timeline, &px->dev, err);
}

static rig_status submit(proxy *px, rig_job *job, const rig_work *w, rig_error *err) {
  if (!w->sub) return rig_proxy_send_copy(px, job, w, err);
  const void *bytes;
  size_t len;
  rig_status st = rig_proxy_words(px, w, &bytes, &len, err);
  return st == RIG_OK ? rig_proxy_send_words(px, job, w->value, bytes, len, err) : st;
}

static void memory_shared(proxy *px, uint64_t id, const void *address, size_t len) {
  (void)px, (void)id, (void)address, (void)len;
}

/* The agent does not reach this memory itself: no window. */
static rig_status open_window(proxy *px, const rig_mem_info *mem, uint64_t bytes, void **mapping,
                              rig_error *err) {
  (void)px, (void)mem, (void)bytes, (void)mapping, (void)err;
  return RIG_OK;
}

/* A DONE frame moves the shadow timeline and wakes its waiters. */
static void take_report(proxy *px, uint64_t value) {
  rig_point pt = rig_point_make(rig_device_index(px->dev), value);
  uint64_t old = atomic_load(&px->shadow);
  while (old < value && !atomic_compare_exchange_weak(&px->shadow, &old, value)) {
  }
  rig_trace_reached(&pt, 1);
  rig_device_signal(px->dev);
}

/* Work handed over and not reported: the control thread polls for its
 * DONE frames. */
static bool busy(proxy *px) {
  return rig_point_value(rig_device_last(px->dev)) > atomic_load(px->timeline);
}

/* Its reports come by frame, in order with the request that follows. */
static void drain(proxy *px) {
  (void)px;
}

/* ---- the agent's half --------------------------------------------------------------------- */

/* The controller maps none of this host's memory. */
static rig_buffer *share_memory(express *ex, uint64_t bytes, const void **address, size_t *len) {
  (void)ex, (void)bytes, (void)address, (void)len;
  return NULL;
}

/* Executors start on their first hand-over. */
static rig_status agent_start(agent *a, size_t ndevices, rig_error *err) {
  (void)a, (void)ndevices, (void)err;
  return RIG_OK;
}

static rig_status executor_start(executor *e, rig_error *err) {
  (void)e, (void)err;
  return RIG_OK;
}

/* The work queue alone. */
static handover *next(executor *e) {
  return (handover *)rig_queue_take(&e->work);
}

static void queued(executor *e) {
  (void)e;
}

static double a_second(void) {
  return 1.0;
}

static void report(executor *e, const handover *h, uint64_t v) {
  (void)h;
  frame done = {.h = {.kind = F_DONE, .device = e->device, .value = v}};
  rig_ctl_send(&e->job->c, RIG_JOB_CONTROLLER, &done, NULL, 0, NULL);
}

static rig_status copy_out(executor *e, const handover *h, rig_error *err) {
  unsigned char *bytes;
  rig_status st = rig_executor_read_out(e, h, &bytes, err);
  if (st != RIG_OK) return st;
  frame r = {
      .h = {.kind = F_REPLY, .request = h->f.h.request, .device = h->f.h.device, .status = RIG_OK}};
  rig_ctl_send(&e->job->c, RIG_JOB_CONTROLLER, &r, bytes, h->f.copy_out.length, NULL);
  free(bytes);
  return RIG_OK;
}

/* No ring: no far copy comes this way. */
static rig_status far_move(express *ex, bool in, rig_peer_key *key, unsigned char *here,
                           uint64_t there, size_t n, rig_error *err) {
  (void)ex, (void)in, (void)key, (void)here, (void)there, (void)n;
  return rig_error_set(err, RIG_EREFUSED, "a far copy on a machine reached by frames");
}

const rig_route rig_route_frames = {
    .name = ROUTE_FRAMES,
    .proxy_setup = proxy_setup,
    .submit = submit,
    .sleep = NULL, /* rig_proxy_driver has none */
    .memory_shared = memory_shared,
    .open_window = open_window,
    .take_report = take_report,
    .busy = busy,
    .drain = drain,
    .share_memory = share_memory,
    .agent_start = agent_start,
    .executor_start = executor_start,
    .next = next,
    .queued = queued,
    .wake = queued,
    .late_s = a_second,
    .report = report,
    .copy_out = copy_out,
    .far_move = far_move,
};
