/* A device's executor on an agent (executor.c): it runs the device's
 * hand-overs (a program's run words, copies) in value order, from its
 * queue of frames and, with the express path, from its ring in shared
 * memory; its completer reports each value done once its work is done, in
 * order: by a store into the controller's timeline word of the device, or
 * a DONE frame. A hand-over that fails fails the job. */
#ifndef RIG_EXECUTOR_H
#define RIG_EXECUTOR_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "holdings.h"
#include "protocol.h"
#include "queue.h"
#include "rig/rig_base.h"

typedef struct rig_job rig_job;
typedef struct executor executor;
typedef struct ex_ring ex_ring;
typedef struct ex_timeline ex_timeline;
typedef struct rig_route rig_route;

/* A hand-over: a frame of the controller, or a slot read from the ring. */
typedef struct handover {
  queue_link link;
  frame f;
  unsigned char *payload;
  rig_point *ends; /* the points its work reaches, for the completer */
  size_t nends;
  bool from_ring; /* the executor's own record of a ring slot */
} handover;

/* Ends a run may have (the calloc of a frame's run, the ring's array). */
#define RUN_ENDS 64

/* An executor's state; its route's half (route/route.h) reads and moves
 * how hand-overs come and reports go. */
struct executor {
  rig_job *job;
  holdings *held;
  uint32_t device;
  queue work, done; /* frames to run; hand-overs run, to report */
  pthread_t runner, completer;
  const rig_route *route; /* how hand-overs come and reports go, chosen once */
  /* The express path (express.h): hand-overs come from the ring and the
   * work queue, taken in value order. */
  ex_ring *ring;
  ex_timeline *timeline;   /* by memory: reports go there */
  uint64_t expect;         /* the next value to run */
  _Atomic uint64_t pushed; /* frames queued on work */
  uint64_t popped;         /* and taken */
  double ahead_since;      /* the queue's head is past expect since */
  uint64_t missing;        /* a value that never came (the job fails) */
  uint64_t reported;       /* the last value reported done: they grow */
  bool taken;              /* it took a hand-over: it polls after each one */
  bool poll;               /* RIG_JOB_POLL: once taken, it never sleeps */
  _Atomic bool stopping;
  handover from_ring; /* the hand-over being run, when it came by the ring */
  rig_point ring_ends[RUN_ENDS];
};

/* For the routes' halves (route/): the next value's hand-over if it is
 * there, by frame or in the ring; a sleep on the ring's bell, seen at
 * `bell`, at most 100 ms, the hand-over there first if one is (whether
 * the bell rang); a copy out's bytes read (*bytes malloc'd), its range
 * checked first. */
handover *rig_executor_peek(executor *e);
bool rig_executor_sleep_on_bell(executor *e, uint32_t bell, handover **h);
rig_status rig_executor_read_out(executor *e, const handover *h, unsigned char **bytes,
                                 rig_error *err);

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
