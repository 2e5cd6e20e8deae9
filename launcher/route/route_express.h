/* What the two routes of the express path share (route_express.c): by
 * memory and by messages, hand-overs come into the agent's ring and
 * reports go into the controller's timeline of the proxy. */
#ifndef RIG_ROUTE_EXPRESS_H
#define RIG_ROUTE_EXPRESS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "express.h"
#include "proxy.h"
#include "route.h"

/* ---- the controller's half ---- */

/* Whether the proxy's timeline shows value. */
static inline bool rig_route_reached(const proxy *px, uint64_t value) {
  return atomic_load_explicit(&px->tl->value, memory_order_acquire) >= value;
}
/* Waits until the proxy's timeline shows `before` (false: the job failed
 * first), calling progress (the worker moved on, where reports come by
 * message) between its looks. */
bool rig_route_wait(proxy *px, rig_job *job, uint64_t before, bool (*progress)(void));
/* Whether this sleep of the thread's is a new wait (not the same one
 * sleeping again): the first sleep of a wait yields first. */
bool rig_route_first_sleep(const proxy *px, uint64_t value);
/* The operations both routes do alike: a report the control thread got
 * moves the timeline; nothing to poll for; the drain waits on the
 * device's last point. */
void rig_route_timeline_report(proxy *px, uint64_t value);
bool rig_route_timeline_busy(proxy *px);
void rig_route_timeline_drain(proxy *px);

/* ---- the agent's half ---- */

/* Every device's executor runs from the start: hand-overs reach it with
 * no thread in between. */
rig_status rig_route_ring_agent_start(agent *a, size_t ndevices, rig_error *err);
/* A frame was queued (counted, the ring's executor woken) / it stops. */
void rig_route_ring_queued(executor *e);
void rig_route_ring_wake(executor *e);
/* How long a hand-over past the next waits for the one before it: a
 * second, where it comes from memory on this host. */
double rig_route_a_second(void);

#endif
