/* The express path of the job (docs/jobs.md, "Runs by shared memory"):
 * between the controller and an agent on the same host, a run's words go
 * into a ring of slots in the agent's memory (one ring per device), which
 * the agent's executor reads in order from its own memory, and its done
 * reports are stores into the proxy's timeline, in the controller's
 * memory; both are shared areas (rig_area, UCX's mapped memory). Neither
 * side's control thread is in between. Where an area cannot be mapped
 * (another host, UCX_TLS=tcp,self, the engine not starting) the frames of
 * the control protocol carry everything, as before. */
#ifndef RIG_EXPRESS_H
#define RIG_EXPRESS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/array.h"
#include "base/idtab.h"
#include "rig/rig_driver.h"
#include "rig/rig_rail.h"

/* Slots per device's ring, and the bytes of one (its header included): a
 * run's words longer than a slot, or a run when the ring is full, go by
 * frame; the agent takes hand-overs in value order from both. */
#define EX_RING 64
#define EX_SLOT 1024

/* What a slot holds (never on the wire: frame kinds are below 100). */
enum {
  EX_WORDS = 101, /* a run's words */
  EX_IN,          /* a copy in: ex_copy (address unused), then its bytes */
  EX_IN_FAR,      /* a copy in: ex_copy; the agent reads the controller's bytes */
  EX_OUT_FAR,     /* a copy out: ex_copy; the agent writes the controller's bytes */
  EX_DONE,        /* nothing: a copy the controller made in the agent's memory */
};

/* The bytes a slot carries. */
#define EX_SLOT_BYTES (EX_SLOT - 16)

typedef struct ex_slot {
  _Atomic uint64_t value; /* the hand-over's value once its bytes are in */
  uint32_t len;
  uint32_t kind;
  unsigned char bytes[EX_SLOT_BYTES];
} ex_slot;

/* A copy's part of a slot: memory `memory` of the agent at `offset`, and
 * the controller's host memory at `address`. */
typedef struct ex_copy {
  uint64_t memory, offset, length, address;
} ex_copy;

/* One device's ring, in the agent's memory. */
typedef struct ex_ring {
  _Atomic uint32_t bell;     /* futex: bumped when a hand-over may be there */
  _Atomic uint32_t sleeping; /* the executor sleeps (or is about to) on bell */
  uint32_t far;              /* the agent reaches the controller's memory (CMA) */
  unsigned char pad[52];
  ex_slot slots[EX_RING];
} ex_ring;

/* One proxy's timeline, in the controller's memory. */
typedef struct ex_timeline {
  _Atomic uint64_t value;   /* the proxy device's timeline */
  _Atomic uint64_t posted;  /* the last value handed over (a report past it is false) */
  _Atomic uint32_t seq;     /* futex: bumped after each report */
  _Atomic uint32_t waiters; /* threads asleep (or about to be) on seq */
  uint32_t device;          /* the controller's: its proxy's index (a trace's stamps) */
  unsigned char pad[36];
} ex_timeline;

_Static_assert(sizeof(ex_slot) == EX_SLOT && sizeof(ex_timeline) == 64 &&
                   sizeof(ex_ring) == 64 + EX_RING * EX_SLOT,
               "the shared layouts are what both sides compute");

/* A window of the controller's memory an agent's far copies may reach
 * (far_copy.h). */
typedef struct ex_window {
  uint64_t address, length;
  rig_peer_key *key; /* across hosts: the controller's registration, unpacked */
} ex_window;

typedef struct express {
  int machines;
  uint32_t stride; /* timeline (m, i) is at m * stride + i */
  /* The route agreed with each machine, its table (route/route.h): the
   * controller's per machine, an agent's own; by frames until agreed. */
  const struct rig_route **routes;
  const struct rig_route *route;
  /* The controller. */
  rig_area *timelines; /* made here: every proxy's timeline */
  rig_area **rings;    /* per machine: its rings, mapped (NULL: by frames) */
  pthread_mutex_t lock;
  rig_idtab *mems; /* per machine: rig_area *, memory of the agent's host mapped here, by id */
  /* An agent. */
  rig_area *my_rings;     /* made here, one ring per device */
  rig_area *my_timelines; /* the controller's, mapped (NULL: DONE by frame) */
  int controller;         /* the controller's process id (far copies by CMA) */
  struct ex_windows {
    pthread_mutex_t lock;
    rig_array at; /* ex_window: what far copies may reach (far_copy.h) */
  } windows;
  /* By messages (express_messages.h), where the other side's memory is not mapped. */
  struct rig_job *job;                      /* its id in every message; a lost peer fails it */
  rig_peer **peers;                         /* the controller: per machine reached so */
  rig_peer *to_controller;                  /* an agent reached so */
  struct lost_ctx **lost, *lost_controller; /* the peers' loss contexts */
  bool listening;                           /* its job's messages reach it (heard) */
  bool self_held;                           /* rig_peer_self holds the engine */
  const void *self_address;                 /* this process's, while held */
  size_t self_len;
} express;

/* Setting up (bootstrap.c exchanges the addresses): an express of a job of
 * `machines`, each agent with at most `stride` devices. */
express *rig_express_new(int machines, uint32_t stride);
/* The controller: every proxy's timeline, made here; false (frames) where it
 * cannot be. *addr, *len: what maps it elsewhere. */
bool rig_express_make_timelines(express *ex, const void **addr, size_t *len);
/* An agent: its rings, one per device. */
bool rig_express_make_rings(express *ex, size_t ndevices, const void **addr, size_t *len);
/* An agent: the controller's timelines mapped here (where they can be). */
void rig_express_map_timelines(express *ex, const void *addr, size_t len, int rank);
/* The controller: machine m's rings mapped here (where they can be). */
void rig_express_map_rings(express *ex, int m, const void *addr, size_t len);
void rig_express_free(express *ex);

/* The controller: proxy (m, i)'s timeline (NULL: none), and its ring (NULL). */
ex_timeline *rig_express_timeline(express *ex, int m, uint32_t i);
ex_ring *rig_express_ring(express *ex, int m, uint32_t i);
/* Value's slot, if the hand-over it last held (value - EX_RING) is done
 * (else NULL: the ring is full). */
ex_slot *rig_express_claim(ex_ring *ring, const ex_timeline *done, uint64_t value);
/* The controller: memory `id` of machine m, mapped here from the address
 * an agent's allocation answered (NULL: not mapped); dropped when freed. */
void rig_express_mem_add(express *ex, int m, uint64_t id, const void *address, size_t len);
unsigned char *rig_express_mem(express *ex, int m, uint64_t id, uint64_t *length);
void rig_express_mem_drop(express *ex, int m, uint64_t id);
/* The agent: memory of its host made as a shared area (NULL where it
 * cannot be), and the address that maps it (the route by memory's
 * share_memory). */
rig_buffer *rig_express_alloc(express *ex, uint64_t bytes, const void **address, size_t *len);
/* Writes hand-over `value` into its slot of the ring (bytes, then the
 * value with release) and wakes the executor if it sleeps. The caller
 * made sure the slot is free (its last value is done). */
void rig_express_publish(ex_ring *ring, uint64_t value, uint32_t kind, const void *head,
                         size_t hlen, const void *bytes, size_t len);
/* A waiter's sleep on the timeline, at most timeout_ns. */
void rig_express_sleep(ex_timeline *w, uint64_t value, int64_t timeout_ns);
/* Moves the timeline to at least value and wakes its sleepers. */
void rig_express_report(ex_timeline *w, uint64_t value);

/* An agent: its ring of device i (NULL), and its timeline (NULL) at the
 * controller. */
ex_ring *rig_express_my_ring(express *ex, uint32_t i);
ex_timeline *rig_express_my_timeline(express *ex, int rank, uint32_t i);
/* The hand-over of value v, if its bytes are in the ring. */
const ex_slot *rig_express_peek(ex_ring *ring, uint64_t v);
/* Wakes the ring's executor if it sleeps (a frame was queued for it, or
 * the agent stops). */
void rig_express_ring_wake(ex_ring *ring);

#endif
