/* A device's executor on an agent (executor.c): it runs the device's
 * hand-overs (a program's run words, copies) in value order, from its
 * queue of frames and, with the express path, from its ring in shared
 * memory; its completer reports each value done once its work is done, in
 * order: by a store into the controller's timeline word of the device, or
 * a DONE frame. A hand-over that fails fails the job. */
#ifndef RIG_EXECUTOR_H
#define RIG_EXECUTOR_H

#include <stdbool.h>
#include <stdint.h>

#include "holdings.h"
#include "protocol.h"
#include "queue.h"
#include "rig/rig_base.h"

typedef struct rig_job rig_job;
typedef struct executor executor;

/* A hand-over: a frame of the controller, or a slot read from the ring. */
typedef struct handover {
  queue_link link;
  frame f;
  unsigned char *payload;
  rig_point *ends; /* the points its work reaches, for the completer */
  size_t nends;
  bool from_ring; /* the executor's own record of a ring slot */
} handover;

/* Starts device `device`'s executor, which runs what the job's agent
 * holds (table). */
rig_status rig_executor_start(rig_job *job, holdings *table, uint32_t device, executor **out,
                              rig_error *err);
/* Queues a hand-over that came by frame (on the control thread). */
void rig_executor_push(executor *e, handover *h);
/* Waits until every hand-over queued so far is done and reported. */
void rig_executor_drain(executor *e);
/* Stops the threads once their queues are empty, and frees e. */
void rig_executor_stop(executor *e);
/* The same once the job failed: its threads are waited for `grace`
 * seconds at most (one may be inside a kernel that never ends: nobody
 * waits for it); false, e kept for them, when one did not end. */
bool rig_executor_stop_within(executor *e, double grace);
void rig_handover_free(handover *h);

#endif
