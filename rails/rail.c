/* A rail's end: its areas, the bytes its peer needs, attaching, the ready
 * function, failure and release (the pump is pump.c's). A rail lives until
 * it is released and its counts page is no longer viewed: the page holds
 * the way back to the rail that ready takes, so the two go together. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/env.h"
#include "rails_internal.h"

/* ---- the process's live rails ------------------------------------------------------ */

static pthread_mutex_t all_lock = PTHREAD_MUTEX_INITIALIZER;
static rig_rail *all;  /* made and not yet released */
static rig_rail *kept; /* released but abandoned: kept on purpose, mapped */

static void rails_register(rig_rail *r) {
  pthread_mutex_lock(&all_lock);
  r->next_all = all;
  all = r;
  pthread_mutex_unlock(&all_lock);
}

/* Out of the live rails; into the kept ones when abandoned. */
static void rails_unregister(rig_rail *r, bool keep) {
  pthread_mutex_lock(&all_lock);
  for (rig_rail **at = &all; *at; at = &(*at)->next_all)
    if (*at == r) {
      *at = r->next_all;
      break;
    }
  if (keep) {
    r->next_all = kept;
    kept = r;
  }
  pthread_mutex_unlock(&all_lock);
}

bool rig_rails_count_served(const void *count) {
  uintptr_t page = (uintptr_t)count & ~(uintptr_t)(RAIL_PAGE - 1);
  pthread_mutex_lock(&all_lock);
  bool served = false;
  for (rig_rail *r = all; r; r = r->next_all)
    if (!r->elsewhere && (uintptr_t)r->counts == page) {
      served = atomic_load(&r->served);
      break;
    }
  pthread_mutex_unlock(&all_lock);
  return served;
}

static bool rails_id_used(int64_t id) {
  pthread_mutex_lock(&all_lock);
  bool used = false;
  for (rig_rail *r = all; r && !used; r = r->next_all)
    used = r->id == id && !atomic_load(&r->released);
  pthread_mutex_unlock(&all_lock);
  return used;
}

static void set_why(rig_rail *r, const char *why) {
  pthread_mutex_lock(&r->why_lock);
  if (!r->why[0]) snprintf(r->why, sizeof r->why, "%s", why);
  pthread_mutex_unlock(&r->why_lock);
}

void rig_rail_raise(rig_rail *r, const char *why) {
  if (!r || r->elsewhere || !r->counts) return;
  set_why(r, why ? why : "raised");
  atomic_store(&r->failed, true);
  if (atomic_load(&r->state) == RAIL_CLOSED && !atomic_load(&r->abandon)) return;
  rig_rail_raise_to(rig_rail_count_at(r, RIG_RAIL_READY_AT), RIG_RAIL_RAISED);
  rig_rail_raise_to(rig_rail_count_at(r, RIG_RAIL_SENT_AT), RIG_RAIL_RAISED);
  rig_rail_raise_to(rig_rail_count_at(r, RIG_RAIL_ARRIVED_AT), RIG_RAIL_RAISED);
  rig_engine_wake();
  rig_engine_nudge(); /* a wait asleep on a count ends */
}

void rig_rails_raise_all(const char *why) {
  pthread_mutex_lock(&all_lock);
  for (rig_rail *r = all; r; r = r->next_all)
    if (!r->elsewhere && r->counts && !atomic_load(&r->failed)) rig_rail_raise(r, why);
  pthread_mutex_unlock(&all_lock);
}

/* The rail fails (misused: by this end's program); the rail thread tells
 * the layer above. */
static void fail(rig_rail *r, const char *why, bool misused) {
  if (atomic_load(&r->failed)) return;
  r->misused = misused; /* seen by whoever sees failed */
  rig_rail_raise(r, why);
  atomic_store(&r->tell, true);
  rig_engine_wake();
}

void rig_rail_fail(rig_rail *r, const char *why) {
  fail(r, why, false);
}

void rig_rail_fail_ucx(rig_rail *r, const char *what, ucs_status_t st) {
  if (atomic_load(&r->failed)) return;
  char why[RIG_ERROR_MESSAGE_MAX];
  snprintf(why, sizeof why, "rail %lld: %s: %s", (long long)r->id, what, ucs_status_string(st));
  rig_rail_fail(r, why);
}

/* ---- ready ---------------------------------------------------------------------- */

/* The highest count ready may take now: a sender writes run k's copy only
 * once sent covers run k - 2, so with sent at s (runs of n transfers) the
 * counts of runs up to s / n + 1 may be written, no more. */
static uint64_t ready_bound(const rig_rail *r) {
  uint64_t sent =
      atomic_load_explicit(rig_rail_count_at(r, RIG_RAIL_SENT_AT), memory_order_acquire);
  if (sent == RIG_RAIL_RAISED) return RIG_RAIL_RAISED;
  return r->nsend ? (sent / r->nsend + 2) * r->nsend : 0;
}

/* A count past the bound is a program's error: the rail fails saying so
 * (rather than send counts no copy holds, and stall its release). */
static void ready_past(rig_rail *r, uint64_t c, uint64_t bound) {
  char why[RIG_ERROR_MESSAGE_MAX];
  if (!r->nsend)
    snprintf(why, sizeof why, "rail %lld: ready %llu on an end that sends nothing",
             (long long)r->id, (unsigned long long)c);
  else
    snprintf(why, sizeof why,
             "rail %lld: ready %llu is past what the rail may send: sent is %llu, so its two "
             "copies hold counts up to %llu",
             (long long)r->id, (unsigned long long)c,
             (unsigned long long)atomic_load(rig_rail_count_at(r, RIG_RAIL_SENT_AT)),
             (unsigned long long)bound);
  fail(r, why, true);
}

/* The end's ready function: counts is the counts area's address. A count
 * at or below the one stored changes nothing. */
static void rail_ready(void *counts, uint64_t c) {
  unsigned char *page = counts;
  if (*(const uint64_t *)(page + RAIL_BACK_AT + 8) != RAIL_MAGIC) return;
  rig_rail *r;
  memcpy(&r, page + RAIL_BACK_AT, sizeof r);
  uint64_t bound = ready_bound(r);
  if (c > bound) {
    ready_past(r, c, bound);
    return;
  }
  rig_rail_raise_to((_Atomic uint64_t *)(page + RIG_RAIL_READY_AT), c);
  /* The worker free: the puts go now, from here, without waking the rail
   * thread, which is woken only for what stays in flight. */
  bool posted = false, waiting = false;
  if (atomic_load(&r->state) == RAIL_LIVE && rig_engine_try()) {
    if (atomic_load(&r->state) == RAIL_LIVE) {
      rig_rail_pump(r, &waiting);
      posted = true;
    }
    /* Puts and adds into mapped memory are done already; what is not (an
     * add waiting for its flush) progresses a little here. */
    for (int turns = 0; waiting && turns < 64; turns++) {
      ucp_worker_progress(rig_engine_worker());
      waiting = false;
      rig_rail_pump(r, &waiting);
    }
    rig_engine_untry();
  }
  if (posted && !waiting) return;
  /* Seen by the rail thread before it sleeps, or it is woken. */
  atomic_thread_fence(memory_order_seq_cst);
  rig_engine_wake();
}

/* ---- making an end ------------------------------------------------------------------ */

/* The bytes an end gives its peer: this header, then the end's send and
 * receive transfers, the worker's address and the two remote keys. */
typedef struct rail_wire {
  uint64_t magic;
  char host[64]; /* the end's host name: peers on one host use shared memory */
  int64_t id;
  uint64_t nsend, nreceive;
  uint64_t inbound, in_copy, counts;
  uint64_t worker_len, in_rkey_len, counts_rkey_len;
  uint64_t msg_key; /* names the end in the peer's messages (msg.c) */
} rail_wire;

/* The address bytes, from the areas made. */
static rig_status write_address(rig_rail *r, rig_error *err) {
  const rig_seg *in = r->in_piece ? rig_piece_seg(r->in_piece) : NULL;
  const rig_seg *counts = rig_piece_seg(r->counts_piece);
  const void *worker;
  size_t worker_len, in_len = in ? in->rkey_len : 0;
  rig_engine_worker_address(&worker, &worker_len);
  size_t transfers = (r->nsend + r->nreceive) * sizeof(rig_rail_transfer);
  r->address_len = sizeof(rail_wire) + transfers + worker_len + in_len + counts->rkey_len;
  unsigned char *a = r->address = malloc(r->address_len);
  if (!a) return rig_error_set(err, RIG_ENOMEM, "out of memory for rail %lld", (long long)r->id);
  rail_wire w = {.magic = RAIL_MAGIC,
                 .id = r->id,
                 .nsend = r->nsend,
                 .nreceive = r->nreceive,
                 .inbound = (uint64_t)(uintptr_t)r->inbound,
                 .in_copy = r->in_copy,
                 .counts = (uint64_t)(uintptr_t)r->counts,
                 .worker_len = worker_len,
                 .in_rkey_len = in_len,
                 .counts_rkey_len = counts->rkey_len,
                 .msg_key = r->msg_key};
  gethostname(w.host, sizeof w.host - 1);
  memcpy(a, &w, sizeof w);
  a += sizeof w;
  if (r->nsend) memcpy(a, r->send, r->nsend * sizeof *r->send);
  a += r->nsend * sizeof *r->send;
  if (r->nreceive) memcpy(a, r->receive, r->nreceive * sizeof *r->receive);
  a += r->nreceive * sizeof *r->receive;
  memcpy(a, worker, worker_len);
  a += worker_len;
  if (in_len) memcpy(a, in->rkey, in_len);
  memcpy(a + in_len, counts->rkey, counts->rkey_len);
  return RIG_OK;
}

/* An area of `length` bytes as a buffer of the host (none: a buffer of 0). */
static rig_status make_area(size_t length, rig_piece **piece, rig_buffer **out,
                            unsigned char **host, rig_error *err) {
  *piece = NULL;
  rig_status st;
  if (length == 0) {
    st = rig_buffer_create(rig_host(), RIG_KIND_DEVICE, 0, out, err);
  } else if ((st = rig_piece_make(length, piece, err)) == RIG_OK &&
             (st = rig_piece_buffer(*piece, out, err)) != RIG_OK) {
    rig_piece_free(*piece);
  }
  if (st != RIG_OK) {
    *piece = NULL;
    return st;
  }
  *host = rig_buffer_host(*out);
  return RIG_OK;
}

static void rail_gone(void *ctx) {
  rig_rail *r = ctx;
  rig_piece_free(r->counts_piece);
  pthread_mutex_destroy(&r->why_lock);
  free(r);
}

/* The counts page, whose release frees the rail. */
static rig_status make_counts(rig_rail *r, rig_error *err) {
  rig_status st = rig_piece_make(RAIL_PAGE, &r->counts_piece, err);
  if (st != RIG_OK) return st;
  if ((st = rig_buffer_adopt(r->counts_piece->base, RAIL_PAGE, rail_gone, r, &r->counts_page,
                             err)) != RIG_OK) {
    rig_piece_free(r->counts_piece);
    r->counts_piece = NULL;
    return st;
  }
  r->counts = r->counts_piece->base;
  if ((st = rig_buffer_view(r->counts_page, 0, RIG_RAIL_COUNTS_BYTES, &r->end.counts, err)) !=
      RIG_OK)
    return st;
  r->end.ready = rail_ready;
  void *self = r;
  memcpy(r->counts + RAIL_BACK_AT, &self, sizeof self);
  uint64_t magic = RAIL_MAGIC;
  memcpy(r->counts + RAIL_BACK_AT + 8, &magic, sizeof magic);
  return RIG_OK;
}

/* A random key for the end's messages: one no other end of the process
 * has, and that a process that did not get the end's address cannot
 * guess. 0 (none) only when the system gives no random bytes. */
static uint64_t msg_key(void) {
  uint64_t k = 0;
  if (getrandom(&k, sizeof k, 0) != (ssize_t)sizeof k) return 0;
  return k;
}

static rig_rail *rail_new(int64_t id) {
  rig_rail *r = calloc(1, sizeof *r);
  if (!r) return NULL;
  r->id = id;
  r->msg_key = msg_key();
  pthread_mutex_init(&r->why_lock, NULL);
  atomic_init(&r->state, RAIL_MADE);
  return r;
}

/* What a rail holds but its counts page: its transfers, its address and
 * its areas (each goes once no buffer views it). */
static void rail_drop(rig_rail *r) {
  free(r->send);
  free(r->receive);
  free(r->address);
  r->send = r->receive = NULL;
  r->address = NULL;
  rig_buffer_release(r->end.outbound);
  rig_buffer_release(r->end.inbound);
  rig_buffer_release(r->end.counts);
  r->end.outbound = r->end.inbound = r->end.counts = NULL;
}

/* The rail itself goes with its counts page (at once when nothing views
 * it), or now when it has none. */
static void rail_free(rig_rail *r) {
  rail_drop(r);
  if (!r->counts_page) {
    rail_gone(r);
    return;
  }
  memset(r->counts + RAIL_BACK_AT, 0, 16); /* ready finds no rail here any more */
  rig_buffer_release(r->counts_page);
}

static rig_status check_id(int64_t id, rig_error *err) {
  if (id < 1)
    return rig_error_set(err, RIG_EINVAL, "rail %lld: an id is at least 1", (long long)id);
  if (rails_id_used(id))
    return rig_error_set(err, RIG_EINVAL, "rail %lld: an id already in use", (long long)id);
  return RIG_OK;
}

/* Its transfers and areas, checked against the host's room first. */
static rig_status make_end(rig_rail *r, const rig_rail_transfer *send, size_t nsend,
                           const rig_rail_transfer *receive, size_t nreceive, rig_error *err) {
  r->send = malloc((nsend ? nsend : 1) * sizeof *send);
  r->receive = malloc((nreceive ? nreceive : 1) * sizeof *receive);
  if (!r->send || !r->receive)
    return rig_error_set(err, RIG_ENOMEM, "out of memory for rail %lld", (long long)r->id);
  if (nsend) memcpy(r->send, send, nsend * sizeof *send);
  if (nreceive) memcpy(r->receive, receive, nreceive * sizeof *receive);
  r->nsend = nsend;
  r->nreceive = nreceive;
  r->out_copy = rig_rail_copy_bytes(send, nsend, false);
  r->in_copy = rig_rail_copy_bytes(receive, nreceive, true);
  rig_status st =
      rig_shm_room(rig_rail_end_bytes(send, nsend, receive, nreceive), rig_engine_shared(), err);
  if (st == RIG_OK) st = make_counts(r, err);
  if (st == RIG_OK)
    st = make_area(2 * r->out_copy, &r->out_piece, &r->end.outbound, &r->outbound, err);
  if (st == RIG_OK) st = make_area(2 * r->in_copy, &r->in_piece, &r->end.inbound, &r->inbound, err);
  if (st == RIG_OK) st = write_address(r, err);
  if (st != RIG_OK) rig_error_prefix(err, "rail %lld", (long long)r->id);
  return st;
}

rig_status rig_rail_create(int64_t id, const rig_rail_transfer *send, size_t nsend,
                           const rig_rail_transfer *receive, size_t nreceive, rig_rail **out,
                           rig_error *err) {
  rig_status st = rig_rail_check(send, nsend, receive, nreceive, err);
  if (st == RIG_OK) st = check_id(id, err);
  if (st != RIG_OK) return st;
  if ((st = rig_engine_hold(err)) != RIG_OK) return st;
  rig_rail *r = rail_new(id);
  if (!r) {
    rig_engine_drop();
    return rig_error_set(err, RIG_ENOMEM, "out of memory for rail %lld", (long long)id);
  }
  if ((st = make_end(r, send, nsend, receive, nreceive, err)) != RIG_OK) {
    rail_free(r);
    rig_engine_drop();
    return st;
  }
  rails_register(r);
  *out = r;
  return RIG_OK;
}

rig_status rig_rail_create_elsewhere(int64_t id, rig_rail **out, rig_error *err) {
  rig_status st = check_id(id, err);
  if (st != RIG_OK) return st;
  rig_rail *r = rail_new(id);
  if (!r) return rig_error_set(err, RIG_ENOMEM, "out of memory for rail %lld", (long long)id);
  r->elsewhere = true;
  rails_register(r);
  *out = r;
  return RIG_OK;
}

void rig_rail_address(const rig_rail *r, const void **bytes, size_t *len) {
  *bytes = r->address;
  *len = r->address_len;
}

void rig_rail_set_hooks(rig_rail *r, const rig_rail_hooks *hooks) {
  r->hooks = *hooks;
}

int64_t rig_rail_id(const rig_rail *r) {
  return r->id;
}

const rig_rail_end *rig_rail_end_of(const rig_rail *r) {
  return r->elsewhere || !r->counts ? NULL : &r->end;
}

bool rig_rail_misused(const rig_rail *r) {
  return atomic_load(&r->failed) && r->misused;
}

bool rig_rail_failed(const rig_rail *r, rig_error *why) {
  if (!atomic_load(&r->failed)) return false;
  if (why) {
    pthread_mutex_lock((pthread_mutex_t *)&r->why_lock);
    rig_error_set(why, RIG_EJOB, "%s", r->why);
    pthread_mutex_unlock((pthread_mutex_t *)&r->why_lock);
  }
  return true;
}

/* ---- attaching ---------------------------------------------------------------------- */

void rig_rail_peer_lost(rig_rail *r, ucs_status_t st) {
  /* A peer lost while closing is the goodbye that will not come. */
  if (atomic_load(&r->state) == RAIL_CLOSING) atomic_store(&r->abandon, true);
  rig_rail_fail_ucx(r, "the peer's end is lost", st);
}

typedef struct attach_args {
  rig_rail *r;
  const unsigned char *worker, *in_key, *counts_key;
  size_t worker_len;
  bool same_host;
} attach_args;

/* On one host the peer's areas may be mapped here (UCX's shared memory
 * transports): a put is then a memcpy and an add a CPU atomic on them,
 * which is what UCX itself does there, without its requests and
 * protocol selection on each of a hop's three operations. Both areas or
 * neither: the adds and the puts go the same way. */
static void map_peer(rig_rail *r) {
  void *in = NULL, *counts = NULL;
  if (r->peer.inbound_rkey && ucp_rkey_ptr(r->peer.inbound_rkey, r->peer.inbound, &in) != UCS_OK)
    return;
  if (ucp_rkey_ptr(r->peer.counts_rkey, r->peer.counts, &counts) != UCS_OK) return;
  r->peer.inbound_map = in;
  r->peer.counts_map = counts;
}

/* Peer-failure handling keeps UCX (1.13) off shared memory, and on one
 * host the job learns of a lost peer anyway (the launcher, the control
 * protocol's silence): there the rail takes shared memory, across hosts
 * UCX reports a lost peer. */
static rig_status attach_on_thread(void *arg, rig_error *err) {
  attach_args *a = arg;
  rig_rail *r = a->r;
  rig_status rs = rig_endpoint_take(a->worker, a->worker_len, !a->same_host, &r->peer.link, err);
  if (rs != RIG_OK) return rs;
  r->peer.ep = rig_endpoint_ep(r->peer.link);
  ucs_status_t st = UCS_OK;
  if (a->in_key) st = ucp_ep_rkey_unpack(r->peer.ep, a->in_key, &r->peer.inbound_rkey);
  if (st == UCS_OK) st = ucp_ep_rkey_unpack(r->peer.ep, a->counts_key, &r->peer.counts_rkey);
  rs = st == UCS_OK ? RIG_OK : rig_ucx_error(err, "ucp_ep_rkey_unpack", st);
  if (rs == RIG_OK && a->same_host) map_peer(r);
  if (rs == RIG_OK && !a->same_host) rs = rig_endpoint_watch(r->peer.link, r, err);
  if (rs == RIG_OK) rs = rig_engine_add(r, err);
  if (rs == RIG_OK && (rs = rig_rail_msg_open(r, err)) != RIG_OK) rig_engine_remove(r);
  if (rs == RIG_OK) {
    r->by_msg = rig_rail_msg_fits(r);
    atomic_store(&r->served, rig_endpoint_emulated(r->peer.link));
    atomic_store(&r->state, RAIL_LIVE);
    return RIG_OK;
  }
  if (r->peer.inbound_rkey) ucp_rkey_destroy(r->peer.inbound_rkey);
  if (r->peer.counts_rkey) ucp_rkey_destroy(r->peer.counts_rkey);
  r->peer.inbound_rkey = r->peer.counts_rkey = NULL;
  r->peer.inbound_map = r->peer.counts_map = NULL;
  rig_endpoint_leave(r->peer.link, r, false);
  r->peer.link = NULL;
  r->peer.ep = NULL;
  return rs;
}

static bool same_transfers(const unsigned char *at, const rig_rail_transfer *mine, size_t n) {
  return n == 0 || memcmp(at, mine, n * sizeof *mine) == 0;
}

/* Whether the bytes are an end's address: every length bounded by what
 * came before it is added. */
static bool is_address(const rail_wire *w, size_t rest) {
  size_t t = sizeof(rig_rail_transfer);
  return w->magic == RAIL_MAGIC && w->nsend <= rest / t && w->nreceive <= rest / t &&
         (w->nsend + w->nreceive) * t <= rest && w->worker_len <= rest && w->in_rkey_len <= rest &&
         w->counts_rkey_len <= rest &&
         (w->nsend + w->nreceive) * t + w->worker_len + w->in_rkey_len + w->counts_rkey_len ==
             rest &&
         w->worker_len != 0 && w->counts_rkey_len != 0;
}

rig_status rig_rail_attach(rig_rail *r, const void *peer, size_t len, rig_error *err) {
  if (r->elsewhere || atomic_load(&r->state) != RAIL_MADE)
    return rig_error_set(err, RIG_EINVAL, "rail %lld: attached already", (long long)r->id);
  rail_wire w;
  const unsigned char *p = peer;
  if (len < sizeof w || (memcpy(&w, p, sizeof w), !is_address(&w, len - sizeof w)))
    return rig_error_set(err, RIG_EINVAL, "rail %lld: %zu bytes are not a rail end's address",
                         (long long)r->id, len);
  if (w.id != r->id)
    return rig_error_set(err, RIG_EINVAL, "rail %lld: the peer's end is of rail %lld",
                         (long long)r->id, (long long)w.id);
  const unsigned char *at = p + sizeof w;
  if (w.nsend != r->nreceive || w.nreceive != r->nsend ||
      !same_transfers(at, r->receive, w.nsend) ||
      !same_transfers(at + w.nsend * sizeof(rig_rail_transfer), r->send, w.nreceive))
    return rig_error_set(
        err, RIG_EINVAL,
        "rail %lld: the peer's send and receive are not this end's receive and send",
        (long long)r->id);
  /* Its puts land in the peer's copies by this end's transfers: the
   * copies are what those transfers take, as the peer made them. */
  uint64_t in_copy = rig_rail_copy_bytes(r->send, r->nsend, true);
  if (w.in_copy != in_copy)
    return rig_error_set(err, RIG_EINVAL,
                         "rail %lld: the peer's inbound copies are %llu bytes, not the %llu its "
                         "transfers take",
                         (long long)r->id, (unsigned long long)w.in_copy,
                         (unsigned long long)in_copy);
  at += (w.nsend + w.nreceive) * sizeof(rig_rail_transfer);
  r->peer.inbound = w.inbound;
  r->peer.inbound_copy = w.in_copy;
  r->peer.counts = w.counts;
  r->peer.msg_key = w.msg_key;
  char host[64] = {0};
  gethostname(host, sizeof host - 1);
  w.host[sizeof w.host - 1] = '\0';
  attach_args a = {r,
                   at,
                   w.in_rkey_len ? at + w.worker_len : NULL,
                   at + w.worker_len + w.in_rkey_len,
                   w.worker_len,
                   strcmp(host, w.host) == 0};
  return rig_engine_call(attach_on_thread, &a, err);
}

/* ---- release ------------------------------------------------------------------------ */

static void nap(void) {
  struct timespec ts = {0, 200000};
  nanosleep(&ts, NULL);
}

/* Closes the end with its peer (the goodbyes, pump.c): false when it was
 * abandoned (the peer lost, or silent past RIG_JOB_SILENCE). */
static bool close_end(rig_rail *r) {
  if (atomic_load(&r->state) == RAIL_MADE) return true; /* no peer knows the areas */
  if (atomic_load(&r->failed)) atomic_store(&r->abandon, true);
  atomic_store(&r->state, RAIL_CLOSING);
  rig_engine_wake();
  double deadline = rig_now_s() + rig_env_get()->job_silence;
  while (atomic_load(&r->state) != RAIL_CLOSED) {
    if (!atomic_load(&r->abandon) && (rig_now_s() > deadline || atomic_load(&r->failed)))
      atomic_store(&r->abandon, true);
    rig_engine_wake();
    nap();
  }
  return !atomic_load(&r->abandon);
}

void rig_rail_release(rig_rail *r) {
  if (!r || atomic_exchange(&r->released, true)) return;
  if (r->hooks.release) r->hooks.release(r->hooks.ctx, r);
  bool closed = r->elsewhere || close_end(r);
  rails_unregister(r, !closed);
  if (!r->elsewhere) rig_engine_drop();
  /* The layer above may still name the rail in its hook. */
  if (r->hooks.released) r->hooks.released(r->hooks.ctx, r);
  if (closed) {
    rail_free(r);
    return;
  }
  /* Abandoned: the areas stay mapped, so that no late put lands in freed
   * memory, and the rail with them (ready finds it by its page). */
  free(r->send);
  free(r->receive);
  free(r->address);
  r->send = r->receive = NULL;
  r->address = NULL;
}
