/* A route: how the controller and one agent hand work over
 * (docs/internals.md "Routes"). Agreed once, at the start, per machine
 * (route.c, called by bootstrap.c), and held by the job's express as one
 * table of operations per machine: the controller's for each machine, an
 * agent's own. Each route is one file of this folder, defining its table:
 * by frames of the control protocol (route_frames.c), by the agent's ring
 * and the controller's timelines in shared memory (route_memory.c), by UCX
 * messages into the ring and the timelines (route_messages.c). Nothing
 * outside this folder asks which route it is: it calls the table. */
#ifndef RIG_ROUTE_H
#define RIG_ROUTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rig/rig_driver.h"
#include "rig/rig_rail.h"

/* A route's name, for logs and traces only (and the start's plan, on the
 * wire: route.c). */
typedef enum job_route {
  ROUTE_FRAMES = 0,   /* frames of the control protocol, both ways */
  ROUTE_MEMORY = 1,   /* the agent's ring and the controller's timelines, mapped */
  ROUTE_MESSAGES = 2, /* UCX messages into the ring and the timelines */
} job_route;

/* "frames", "shared memory", "messages": how docs and logs say it. */
static inline const char *rig_route_name(job_route r) {
  return r == ROUTE_MEMORY ? "shared memory" : r == ROUTE_MESSAGES ? "messages" : "frames";
}

typedef struct proxy proxy;
typedef struct rig_job rig_job;
typedef struct express express;
typedef struct executor executor;
typedef struct handover handover;
typedef struct agent agent;

typedef struct rig_route {
  job_route name; /* for logs and traces */

  /* ---- the controller's half: a proxy (proxy.c, proxy_submit.c) calls it --------------- */
  /* Sets proxy px (its machine and index set) up on its timeline and ring,
   * and registers its device with facts f. */
  rig_status (*proxy_setup)(proxy *px, rig_job *job, const rig_device_facts *f, rig_error *err);
  /* Hands w over (a run's words, a copy), in value order with the
   * frames: into the ring, as a message, as a frame, or made here. */
  rig_status (*submit)(proxy *px, rig_job *job, const rig_work *w, rig_error *err);
  /* A waiter's sleep until the proxy's timeline shows value, at most
   * timeout_ns (the device's driver has it where proxy_setup said so). */
  void (*sleep)(proxy *px, uint64_t value, int64_t timeout_ns);
  /* Memory `id` the agent made on its host, at address (len bytes): mapped
   * here where copies of it are made here. */
  void (*memory_shared)(proxy *px, uint64_t id, const void *address, size_t len);
  /* A host buffer of the controller mapped for the proxy: a window of far
   * copies opened to the agent where it reaches this memory itself. */
  rig_status (*open_window)(proxy *px, const rig_mem_info *mem, uint64_t bytes, void **mapping,
                            rig_error *err);
  /* Takes a report the control thread got (a DONE frame, a REPLY's value). */
  void (*take_report)(proxy *px, uint64_t value);
  /* Whether work handed over is not reported yet in a way the control
   * thread must poll for (rig_proxies_busy). */
  bool (*busy)(proxy *px);
  /* Waits until the proxy's work is reported (rig_proxies_drain). */
  void (*drain)(proxy *px);

  /* ---- the agent's half: agent.c, executor.c, far_copy.c call it ------------------------- */
  /* Memory of the host (bytes) made where the controller maps it, and the
   * address that maps it; NULL: the device's own. */
  rig_buffer *(*share_memory)(express *ex, uint64_t bytes, const void **address, size_t *len);
  /* The agent starts: the executors that must run from the start. */
  rig_status (*agent_start)(agent *a, size_t ndevices, rig_error *err);
  /* An executor starts: its ring and timeline. */
  rig_status (*executor_start)(executor *e, rig_error *err);
  /* The next hand-over in value order (NULL: stopping), idling between. */
  handover *(*next)(executor *e);
  /* A frame was queued for the executor / it stops: wakes it. */
  void (*queued)(executor *e);
  void (*wake)(executor *e);
  /* How long a hand-over past the next may wait for the one before it. */
  double (*late_s)(void);
  /* Reports value v of h done (its ends reached), in value order. */
  void (*report)(executor *e, const handover *h, uint64_t v);
  /* A copy out by frame (F_COPY_OUT): its bytes back in a REPLY. */
  rig_status (*copy_out)(executor *e, const handover *h, rig_error *err);
  /* A far copy's bytes, between here and the controller's memory at
   * there, inside a window (key: its registration's, where it has one). */
  rig_status (*far_move)(express *ex, bool in, rig_peer_key *key, unsigned char *here,
                         uint64_t there, size_t n, rig_error *err);
} rig_route;

extern const rig_route rig_route_frames, rig_route_memory, rig_route_messages;

/* ---- the choice (route.c): bootstrap.c exchanges the offers and the plan ---------------- */

/* Every machine's route by frames until agreed otherwise (false: out of
 * memory). */
bool rig_route_init(express *ex);
/* An agent's offer (NULL, *n = 0: none). */
unsigned char *rig_route_offer(rig_job *job, express *ex, bool want, size_t *n);
/* The controller's plan from the offers (offer m at all + offs[m],
 * lens[m] bytes): each machine's route, stored, then its own address. */
unsigned char *rig_route_plan(rig_job *job, express *ex, const unsigned char *all, const int *offs,
                              const int *lens, uint64_t *n);
/* An agent follows the plan: its route, stored. */
void rig_route_follow(rig_job *job, express *ex, const unsigned char *plan, uint64_t n);

#endif
