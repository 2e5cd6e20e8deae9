/* A proxy's route to its agent (route.h), the controller's side: the one
 * place where handing over by the agent's ring in shared memory, by UCX
 * messages into that ring, or by frames of the control protocol differ.
 * A proxy takes its machine's table once, when it is made. */
#ifndef RIG_PROXY_ROUTE_H
#define RIG_PROXY_ROUTE_H

#include <stdbool.h>
#include <stdint.h>

#include "rig/rig_driver.h"
#include "route.h"

typedef struct proxy proxy;
typedef struct rig_job rig_job;
typedef struct express express;

/* A hand-over's kind (express.h's EX_*) and bytes: a head, then a body. */
typedef struct proxy_handover {
  uint64_t value;
  uint32_t kind;
  const void *head, *bytes;
  size_t hlen, len;
} proxy_handover;

typedef struct proxy_route {
  job_route route;
  /* Hands h over into the agent's ring, in value order with the frames:
   * false when this route takes it no way but a frame (no ring, the bytes
   * past a slot, the ring full); else *st says how it went. */
  bool (*handover)(proxy *px, rig_job *job, const proxy_handover *h, rig_status *st,
                   rig_error *err);
  /* A copy between the controller's memory and the agent's host memory
   * mapped here, made here: false when it is not (then it is handed
   * over); else *st says how it went. */
  bool (*copy_near)(proxy *px, rig_job *job, const rig_work *w, rig_status *st, rig_error *err);
  /* A waiter's sleep until the proxy's timeline shows value, at most
   * timeout_ns; NULL where reports come by frame (rig_device_signal wakes
   * the waiter). */
  void (*sleep)(void *px, uint64_t value, int64_t timeout_ns);
  /* Moves the worker on while a waiter polls (a report may be one of its
   * messages): whether it did something. */
  bool (*progress)(void);
  /* The agent reports by DONE frames (not into the timeline): a waiter
   * is woken by rig_device_signal, the control thread polls for them. */
  bool reports_by_frame;
  /* A copy out by frame: its bytes come back in a REPLY (a report by
   * message could pass it: that route's copies out go far, always). */
  bool copies_out_by_frame;
  /* The agent reaches this process's memory by RMA: a window of far
   * copies is registered for it. */
  bool windows_by_rma;
} proxy_route;

/* Machine m's table, as its route was agreed at the start. */
const proxy_route *rig_proxy_route(express *ex, int m);

/* Waits until the proxy's timeline shows `before` (false: the job failed
 * first), moving the worker on where reports come by message. */
bool rig_proxy_route_wait(proxy *px, rig_job *job, uint64_t before);

#endif
