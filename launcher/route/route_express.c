/* What the routes by memory and by messages share (route_express.h). */
#include "route_express.h"

#include "agent.h"
#include "base/count_wait.h"
#include "executor.h"
#include "job_state.h"

/* ---- the controller's half ---------------------------------------------------------------- */

bool rig_route_wait(proxy *px, rig_job *job, uint64_t before, bool (*progress)(void)) {
  while (atomic_load_explicit(&px->tl->value, memory_order_acquire) < before) {
    if (atomic_load(&job->failed)) return false;
    if (progress()) continue;
    rig_express_sleep(px->tl, before, 1000000);
  }
  return true;
}

/* The wait this thread is in: the first sleep of a wait yields
 * RIG_WAIT_YIELD_S before it sleeps, since the work of another machine is
 * often that close and a sleep costs a wake on top of the agent's own
 * (after a quiet, two wakes where one would do); later ones sleep at
 * once. */
static _Thread_local const ex_timeline *waiting_on;
static _Thread_local uint64_t waiting_for;

bool rig_route_first_sleep(const proxy *px, uint64_t value) {
  bool first = waiting_on != px->tl || waiting_for != value;
  waiting_on = px->tl;
  waiting_for = value;
  return first;
}

void rig_route_timeline_report(proxy *px, uint64_t value) {
  rig_point pt = rig_point_make(rig_device_index(px->dev), value);
  rig_express_report(px->tl, value);
  rig_trace_reached(&pt, 1);
}

bool rig_route_timeline_busy(proxy *px) {
  (void)px;
  return false;
}

void rig_route_timeline_drain(proxy *px) {
  rig_error err;
  rig_point_wait(rig_device_last(px->dev), &err);
}

/* ---- the agent's half --------------------------------------------------------------------- */

rig_status rig_route_ring_agent_start(agent *a, size_t ndevices, rig_error *err) {
  for (uint32_t d = 0; d < ndevices; d++) {
    executor *e;
    rig_status st = rig_agent_executor(a, d, &e, err);
    if (st != RIG_OK) return st;
  }
  return RIG_OK;
}

void rig_route_ring_queued(executor *e) {
  atomic_fetch_add_explicit(&e->pushed, 1, memory_order_release);
  rig_express_ring_wake(e->ring);
}

void rig_route_ring_wake(executor *e) {
  rig_express_ring_wake(e->ring);
}

double rig_route_a_second(void) {
  return 1.0;
}
