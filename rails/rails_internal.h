/* Private to the rails layer: the engine (one UCX context, one worker, one
 * rail thread per process) and a rail's state, which only the rail thread
 * changes once the rail is attached. */
#ifndef RIG_RAILS_INTERNAL_H
#define RIG_RAILS_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <ucp/api/ucp.h>

#include "rig/rig_driver.h"
#include "rig/rig_rail.h"

/* At most this many puts of one rail in flight (a ring of their slots). */
#define RAIL_WINDOW 64

/* The counts area lives at the start of a page of its own; past the 384
 * bytes a program sees, the page holds the peer's goodbye word and the way
 * back from the counts address that ready is given to its rail. */
#define RAIL_PAGE    4096
#define RAIL_BYE_AT  512
#define RAIL_BACK_AT 1024
#define RAIL_MAGIC   UINT64_C(0x6c696172676972) /* "rigrail" */

typedef enum rail_state {
  RAIL_MADE,    /* areas registered, no peer yet */
  RAIL_LIVE,    /* attached: the rail thread pumps it */
  RAIL_CLOSING, /* released: sending what was ready, then goodbye */
  RAIL_CLOSED,  /* dropped: the areas are gone (or kept, when abandoned) */
} rail_state;

typedef struct rig_endpoint rig_endpoint;

typedef struct put_slot {
  _Atomic bool done;
  void *request;
  uint64_t header[2]; /* a message's (msg.c), UCX's until it is done */
} put_slot;

/* Rails by messages (msg.c): where UCX emulates RMA (TCP), a put and an
 * add are each a message to the peer and each answered by a completion,
 * four messages a transfer; a transfer of at most RAIL_MSG_MAX bytes goes
 * instead as one active message of this id carrying its bytes and count,
 * which the peer's progress writes into its inbound copy before raising
 * arrived. */
#define RAIL_MSG_ID  24
#define RAIL_MSG_MAX (64 * 1024)

/* ---- memory (shm.c) ------------------------------------------------------- */

/* One allocation of UCX on the engine's context (posix shared memory where
 * the host has it), zero-filled, with its packed remote key. */
typedef struct rig_seg {
  ucp_mem_h memh;
  unsigned char *base;
  size_t length;
  void *rkey;
  size_t rkey_len;
} rig_seg;

/* The one way this layer makes memory: `length` bytes, holding the engine
 * until rig_seg_free. RIG_ENOMEM saying what could not be made. */
rig_status rig_seg_make(size_t length, rig_seg *out, rig_error *err);
void rig_seg_free(rig_seg *s);

/* A rail's area: cut from a shared chunk when small, else a segment of its
 * own; zero-filled, page aligned. */
typedef struct rig_piece {
  struct chunk *chunk; /* NULL: own */
  rig_seg own;
  unsigned char *base;
  size_t length;
  unsigned first, pages; /* in the chunk */
} rig_piece;
rig_status rig_piece_make(size_t length, rig_piece **out, rig_error *err);
/* The segment a piece lies in (its key reaches the piece). */
const rig_seg *rig_piece_seg(const rig_piece *p);
void rig_piece_free(rig_piece *p);
/* A buffer of the host over the piece, which frees it once released. */
rig_status rig_piece_buffer(rig_piece *p, rig_buffer **out, rig_error *err);

/* Whether `bytes` more fit the host (shared: in /dev/shm too); RIG_ENOMEM
 * saying what there is (the caller names the rail). */
rig_status rig_shm_room(uint64_t bytes, bool shared, rig_error *err);

/* ---- UCX (ucx.c) ------------------------------------------------------------ */

/* RIG_ESYS, "UCX: what: status". */
rig_status rig_ucx_error(rig_error *err, const char *what, ucs_status_t st);
/* The engine's context settings: the user's, without sysv, allocating
 * posix memory (*shared) or, where the transports have no posix, private. */
rig_status rig_ucx_config(ucp_config_t **out, bool *shared, rig_error *err);

/* The peer's end as its address bytes describe it. */
typedef struct rail_peer {
  uint64_t inbound, inbound_copy; /* its inbound's address, one copy's bytes */
  uint64_t counts;                /* its counts page */
  uint64_t msg_key;               /* names its end in a message (0: it takes none) */
  rig_endpoint *link;             /* the endpoint, shared with others to the peer */
  ucp_ep_h ep;
  ucp_rkey_h inbound_rkey, counts_rkey;
  /* The peer's inbound and counts mapped here (ucp_rkey_ptr: shared
   * memory on one host), or NULL: puts and adds then go through UCX. */
  unsigned char *inbound_map, *counts_map;
} rail_peer;

struct rig_rail {
  int64_t id;
  bool elsewhere; /* both ends on other machines: no end here */
  rig_rail_hooks hooks;
  rig_rail_end end;
  rig_buffer *counts_page;                        /* its release frees the rail */
  rig_piece *out_piece, *in_piece, *counts_piece; /* what the areas are */
  unsigned char *outbound, *inbound, *counts;
  rig_rail_transfer *send, *receive;
  size_t nsend, nreceive;
  uint64_t out_copy, in_copy;
  void *address; /* what rig_rail_address gives */
  size_t address_len;
  rail_peer peer;
  uint64_t msg_key;   /* a random name of this end, which messages for it carry */
  bool by_msg;        /* its transfers go as messages (rail thread's, set at attach) */
  uint64_t msg_taken; /* the last count a message brought (under the worker) */
  /* The rail thread's. */
  _Atomic bool served;          /* its peer reaches it by emulated RMA (rig_rail_wait) */
  _Atomic int state;            /* rail_state */
  uint64_t posted;              /* counts whose put is posted */
  _Atomic uint64_t posted_seen; /* posted, for a look without the worker */
  _Atomic bool in_flight;       /* operations of it wait for progress */
  uint64_t added;               /* counts the peer's arrived was told of */
  uint64_t sent;                /* counts stored in sent */
  uint64_t operand;             /* the add in flight's value */
  void *add_request;            /* an add in flight */
  size_t add_at;                /* where on the peer's page it adds */
  uint64_t adds;                /* adds posted */
  /* A flush of the endpoint: once it completes, the puts and adds posted
   * before it are done at the peer. Only then is arrived told of them. */
  void *flush_request;
  uint64_t flushing, flushing_adds; /* what the flush in flight covers */
  uint64_t flushed, flushed_adds;   /* what the last completed one covered */
  put_slot ring[RAIL_WINDOW];
  bool bye_posted;
  _Atomic bool abandon; /* the releaser gave up waiting: drop the peer, keep the areas */
  /* Failure. */
  _Atomic bool failed;
  _Atomic bool tell; /* failed, and the layer above not told yet */
  bool misused;      /* by this end's program (before tell) */
  pthread_mutex_t why_lock;
  char why[RIG_ERROR_MESSAGE_MAX];
  _Atomic bool released;     /* rig_rail_release was called */
  struct rig_rail *next_all; /* the process's live rails, for raise_all */
};

/* The rail's count at offset `at` of its counts page. */
static inline _Atomic uint64_t *rig_rail_count_at(const rig_rail *r, size_t at) {
  return (_Atomic uint64_t *)(r->counts + at);
}

/* Counts only grow. */
static inline void rig_rail_raise_to(_Atomic uint64_t *count, uint64_t c) {
  uint64_t seen = atomic_load_explicit(count, memory_order_relaxed);
  while (seen < c && !atomic_compare_exchange_weak_explicit(count, &seen, c, memory_order_release,
                                                            memory_order_relaxed)) {
  }
}

/* ---- the engine ---------------------------------------------------------- */

/* The engine, made with its rail thread at the first call and kept while a
 * rail holds it (rig_engine_hold / rig_engine_drop). */
rig_status rig_engine_hold(rig_error *err);
void rig_engine_drop(void);
ucp_context_h rig_engine_context(void);
/* The worker's address (the rail thread's worker), valid while held. */
void rig_engine_worker_address(const void **bytes, size_t *len);
/* Runs fn(arg, err) on the rail thread and waits for it: every use of the
 * worker but progress and pumping goes through here. */
rig_status rig_engine_call(rig_status (*fn)(void *arg, rig_error *err), void *arg, rig_error *err);
/* The rail thread pumps r from now on / no longer (on the rail thread). */
rig_status rig_engine_add(rig_rail *r, rig_error *err);
void rig_engine_remove(rig_rail *r);
/* Wakes the rail thread if it sleeps (any thread, never blocks). */
void rig_engine_wake(void);
ucp_worker_h rig_engine_worker(void);
/* Whether the engine's areas are shared memory (posix), which a peer on
 * the host maps; else private (transports without posix). Valid while
 * held. */
bool rig_engine_shared(void);
/* Takes the worker if no one has it (then rig_engine_untry), for a ready
 * that posts its own puts; false when the rail thread is using it. */
bool rig_engine_try(void);
void rig_engine_untry(void);
/* Takes the worker, waiting for the rail thread's turn to end (peers'
 * sends and remote copies, which are short). */
void rig_engine_lock(void);
void rig_engine_unlock(void);
/* Operations posted outside the rail thread that need progress to
 * complete (+1 posted, -1 done): the rail thread keeps progressing while
 * any is. */
void rig_engine_inflight(long delta);
/* A thread starts (on) or stops progressing the worker itself in a loop. */
void rig_engine_polling(bool on);
/* A thread that polls sleeps on the worker's event fd itself, at most
 * timeout_ns or until rig_engine_nudge; not at all when events are there
 * (progressed here) or *word (when not NULL) is no longer seen. */
void rig_engine_watch(const _Atomic uint32_t *word, uint32_t seen, int64_t timeout_ns);
/* The same, asleep until the count at `count` reaches c or is raised. */
void rig_engine_watch_count(const void *count, uint64_t c, int64_t timeout_ns);
/* Wakes the threads asleep in rig_engine_watch whose word moved (or that
 * sleep on none). */
void rig_engine_nudge(void);
/* One turn of progress of the worker by the calling thread, when no one
 * else has it: whether it did anything (threads asleep on what it moved
 * are nudged). */
bool rig_engine_turn(void);
/* The same, pumping every live rail too (what is in flight goes on: a
 * large put's pieces, the add that follows it). */
bool rig_engine_turn_pumping(void);
/* Runs in flight on this process (rig_rails_serve): the rail thread keeps
 * progressing the worker for peers reached by emulated RMA meanwhile. */
bool rig_engine_serving(void);

/* ---- threads asleep on the worker (watch.c) ------------------------------- */

typedef struct rig_sleeper {
  int fd, at; /* its eventfd; its place among those asleep (-1: none) */
  const _Atomic uint32_t *word;
  uint32_t seen;
  const void *count; /* or a count it waits to reach `want` (rig_rail_wait) */
  uint64_t want;
} rig_sleeper;

/* Registers this thread, asleep on word (NULL: on nothing but nudges)
 * while it reads `seen`: false when it cannot be nudged (no eventfd, or
 * too many asleep). */
bool rig_sleeper_add(rig_sleeper *s, const _Atomic uint32_t *word, uint32_t seen);
/* The same, asleep until the count reaches want or is raised. */
bool rig_sleeper_add_count(rig_sleeper *s, const void *count, uint64_t want);
/* Whether what s sleeps on moved (a sleeper on nothing: always). */
bool rig_sleeper_moved(const rig_sleeper *s);
/* Sleeps until nudged, `also` (a file descriptor, -1: none) is readable,
 * or timeout_ns. */
void rig_sleeper_sleep(rig_sleeper *s, int also, int64_t timeout_ns);
void rig_sleeper_remove(rig_sleeper *s);

/* ---- a rail, on the rail thread ------------------------------------------- */

/* Posts what is ready, stores sent, steps a release on: whether it did
 * anything. *waiting says whether it has operations in flight. */
bool rig_rail_pump(rig_rail *r, bool *waiting);
/* Fails r: its counts raised, why kept, the layer above told (by the rail
 * thread's next pump). */
void rig_rail_fail(rig_rail *r, const char *why);
/* Fails r with UCX's status. */
void rig_rail_fail_ucx(rig_rail *r, const char *what, ucs_status_t st);
/* UCX lost r's peer (the rail thread). */
void rig_rail_peer_lost(rig_rail *r, ucs_status_t st);
/* Whether count lies in the counts page of a live rail of this process
 * whose peer reaches it by emulated RMA (its waits progress the worker). */
bool rig_rails_count_served(const void *count);
/* Lends host code the rails' wait (rig_grid.calls->rail_wait). */
void rig_rails_wait_lend(void);

/* ---- rails by messages (msg.c, under the worker) ------------------------------- */

/* Sets the worker's handler of the rails' messages (the engine's make). */
rig_status rig_rail_msg_listen(ucp_worker_h worker, rig_error *err);
/* r takes messages from now on / no longer (on the rail thread). */
rig_status rig_rail_msg_open(rig_rail *r, rig_error *err);
void rig_rail_msg_close(rig_rail *r);
/* Whether r's transfers may go as messages to its attached peer. */
bool rig_rail_msg_fits(const rig_rail *r);
/* Posts count c's transfer of len bytes at src as a message (p: the put's
 * completion, its slot's header kept for UCX). */
ucs_status_ptr_t rig_rail_msg_send(rig_rail *r, uint64_t c, put_slot *slot, const void *src,
                                   size_t len, const ucp_request_param_t *p);

/* ---- endpoints (peer.c, on the rail thread) ---------------------------------- */

/* The endpoint to the peer worker of this address (with peer-failure
 * handling or without), made at the first take; each take is left once. */
rig_status rig_endpoint_take(const void *worker, size_t len, bool handled, rig_endpoint **out,
                             rig_error *err);
ucp_ep_h rig_endpoint_ep(const rig_endpoint *p);
/* Whether every operation of the endpoint goes over one transport lane
 * (TCP between hosts, say): a fence then orders them. */
bool rig_endpoint_one_lane(const rig_endpoint *p);
/* Whether UCX emulates the endpoint's RMA and atomics by messages, which
 * only the target's progress serves (TCP): the same on both sides. */
bool rig_endpoint_emulated(const rig_endpoint *p);
/* r fails when UCX reports the peer lost (a handled endpoint). */
rig_status rig_endpoint_watch(rig_endpoint *p, rig_rail *r, rig_error *err);
/* Leaves p (r, when watched, is no longer told); the last closes it, by
 * force when `force` (and the endpoint handles failure). */
void rig_endpoint_leave(rig_endpoint *p, rig_rail *r, bool force);

#endif
