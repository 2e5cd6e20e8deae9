/* Peers (rig_rail.h, docs/rails.md "Peers"): processes this one reaches
 * by UCX messages and remote memory, on another host or wherever their
 * memory cannot be mapped here. An endpoint per peer with peer error
 * handling (UCX reports a peer that is gone); messages are UCX active
 * messages, eager, copied into a send slot of the peer until UCX is done
 * with them, and delivered on whichever thread progresses the worker (the
 * rail thread, or one in rig_peer_progress); remote memory moves by
 * ucp_put_nbx/ucp_get_nbx, waited for with a flush of the endpoint. Where
 * the transport has hardware RMA the peer's CPU takes no part in a put or a
 * get; where UCX emulates it (TCP) the peer's rail thread, woken by its
 * worker's event fd, serves it. */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/env.h"
#include "rails_internal.h"

/* Sends of one peer in flight at once. */
#define PEER_SENDS 128

typedef struct send_slot {
  struct rig_peer *peer;
  bool busy;
  unsigned char bytes[RIG_PEER_MESSAGE_MAX];
} send_slot;

struct rig_peer {
  ucp_ep_h ep;
  void (*lost)(void *ctx, const char *why);
  void *ctx;
  const _Atomic bool *cancel; /* a wait on this peer ends when it is true */
  _Atomic bool gone;
  char why[RIG_ERROR_MESSAGE_MAX];
  send_slot slots[PEER_SENDS]; /* under the worker's lock */
};

struct rig_peer_key {
  ucp_rkey_h rkey;
};

struct rig_registration {
  ucp_mem_h memh;
  void *key;
  size_t key_len;
};

typedef struct listener {
  rig_peer_handler *fn;
  void *ctx;
} listener;

/* The handlers of every message kind, set on the worker (the rail
 * thread's) and read by whoever progresses it. */
static listener listeners[RIG_PEER_KINDS];

static rig_status ucx_fail(rig_error *err, const char *what, ucs_status_t st) {
  return rig_error_set(err, RIG_ESYS, "UCX: %s: %s", what, ucs_status_string(st));
}

/* ---- messages ------------------------------------------------------------------------- */

static ucs_status_t on_message(void *arg, const void *header, size_t header_len, void *data,
                               size_t len, const ucp_am_recv_param_t *param) {
  (void)header;
  (void)header_len;
  listener *l = arg;
  /* Only eager messages are sent: a rendezvous one is no peer's. */
  if (!(param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) && l->fn) {
    l->fn(l->ctx, data, len);
    /* A thread asleep on the worker may wait for what this brought. */
    rig_engine_nudge();
  }
  return UCS_OK;
}

typedef struct listen_args {
  uint16_t kind;
  rig_peer_handler *fn;
  void *ctx;
} listen_args;

static rig_status listen_on_thread(void *arg, rig_error *err) {
  listen_args *a = arg;
  listener *l = &listeners[a->kind];
  l->fn = a->fn;
  l->ctx = a->ctx;
  ucp_am_handler_param_t p = {.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID |
                                            UCP_AM_HANDLER_PARAM_FIELD_CB |
                                            UCP_AM_HANDLER_PARAM_FIELD_ARG,
                              .id = a->kind,
                              /* Kept when the listener leaves: a message
                               * racing its close (a knock) is dropped
                               * quietly, where UCX would warn of it. */
                              .cb = on_message,
                              .arg = l};
  ucs_status_t st = ucp_worker_set_am_recv_handler(rig_engine_worker(), &p);
  return st == UCS_OK ? RIG_OK : ucx_fail(err, "ucp_worker_set_am_recv_handler", st);
}

rig_status rig_peer_listen(uint16_t kind, rig_peer_handler *fn, void *ctx, rig_error *err) {
  if (kind >= RIG_PEER_KINDS || !fn)
    return rig_error_set(err, RIG_EINVAL, "a message kind %u (at most %u)", kind,
                         RIG_PEER_KINDS - 1);
  rig_status st = rig_engine_hold(err);
  if (st != RIG_OK) return st;
  listen_args a = {kind, fn, ctx};
  if ((st = rig_engine_call(listen_on_thread, &a, err)) != RIG_OK) rig_engine_drop();
  return st;
}

void rig_peer_unlisten(uint16_t kind) {
  if (kind >= RIG_PEER_KINDS || !listeners[kind].fn) return;
  listen_args a = {kind, NULL, NULL};
  rig_error err;
  rig_engine_call(listen_on_thread, &a, &err);
  rig_engine_drop();
}

rig_status rig_peer_self(const void **address, size_t *len, rig_error *err) {
  rig_status st = rig_engine_hold(err);
  if (st != RIG_OK) return st;
  rig_engine_worker_address(address, len);
  return RIG_OK;
}

void rig_peer_self_release(void) {
  rig_engine_drop();
}

/* ---- endpoints ------------------------------------------------------------------------ */

static void peer_failed(void *arg, ucp_ep_h ep, ucs_status_t st) {
  (void)ep;
  rig_peer *p = arg;
  if (atomic_exchange(&p->gone, true)) return;
  snprintf(p->why, sizeof p->why, "UCX: the peer is lost: %s", ucs_status_string(st));
  if (p->lost) p->lost(p->ctx, p->why);
}

typedef struct connect_args {
  rig_peer *p;
  const void *address;
} connect_args;

static rig_status connect_on_thread(void *arg, rig_error *err) {
  connect_args *a = arg;
  ucp_ep_params_t ep = {.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS |
                                      UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                                      UCP_EP_PARAM_FIELD_ERR_HANDLER,
                        .address = (const ucp_address_t *)a->address,
                        .err_mode = UCP_ERR_HANDLING_MODE_PEER,
                        .err_handler = {.cb = peer_failed, .arg = a->p}};
  ucs_status_t st = ucp_ep_create(rig_engine_worker(), &ep, &a->p->ep);
  if (st != UCS_OK) {
    a->p->ep = NULL;
    return ucx_fail(err, "ucp_ep_create", st);
  }
  return RIG_OK;
}

rig_status rig_peer_connect(const void *address, size_t len, const _Atomic bool *cancel,
                            void (*lost)(void *ctx, const char *why), void *ctx, rig_peer **out,
                            rig_error *err) {
  if (!address || len == 0 || len > RIG_PEER_ADDRESS_MAX)
    return rig_error_set(err, RIG_EINVAL, "%zu bytes are not a peer's address", len);
  rig_peer *p = calloc(1, sizeof *p);
  if (!p) return rig_error_set(err, RIG_ENOMEM, "out of memory for a peer");
  p->lost = lost;
  p->ctx = ctx;
  p->cancel = cancel;
  for (size_t i = 0; i < PEER_SENDS; i++) p->slots[i].peer = p;
  rig_status st = rig_engine_hold(err);
  if (st != RIG_OK) {
    free(p);
    return st;
  }
  connect_args a = {p, address};
  if ((st = rig_engine_call(connect_on_thread, &a, err)) != RIG_OK) {
    rig_engine_drop();
    free(p);
    return st;
  }
  *out = p;
  return RIG_OK;
}

static bool stopped(const rig_peer *p) {
  return atomic_load(&p->gone) || (p->cancel && atomic_load(p->cancel));
}

static rig_status gone_error(const rig_peer *p, rig_error *err) {
  if (atomic_load(&p->gone)) return rig_error_set(err, RIG_ELOST, "%s", p->why);
  return rig_error_set(err, RIG_ELOST, "the wait for a peer was given up");
}

/* Waits, progressing the worker, until *done or the peer stops. */
static void progress_until(rig_peer *p, _Atomic bool *done) {
  while (!atomic_load_explicit(done, memory_order_acquire) && !stopped(p)) {
    rig_engine_lock();
    unsigned n = ucp_worker_progress(rig_engine_worker());
    rig_engine_unlock();
    if (!n) sched_yield();
  }
}

typedef struct close_args {
  rig_peer *p;
  _Atomic bool done;
  struct close_args *next; /* in the lingering closes */
} close_args;

/* Closes still under way (a peer that stopped answering): kept here, since
 * UCX may call back into them, and freed once done. */
static pthread_mutex_t linger_lock = PTHREAD_MUTEX_INITIALIZER;
static close_args *lingering;

static void closed(void *request, ucs_status_t st, void *user) {
  (void)st;
  close_args *c = user;
  ucp_request_free(request);
  atomic_store_explicit(&c->done, true, memory_order_release);
}

/* Closes the endpoint: forced when the peer is gone or the wait on it is
 * given up (a failed job: nothing of it needs delivering any more). */
static rig_status close_on_thread(void *arg, rig_error *err) {
  (void)err;
  close_args *c = arg;
  ucp_request_param_t prm = {.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK |
                                             UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_FLAGS,
                             .cb.send = closed,
                             .user_data = c,
                             .flags = stopped(c->p) ? UCP_EP_CLOSE_FLAG_FORCE : 0};
  ucs_status_ptr_t sp = ucp_ep_close_nbx(c->p->ep, &prm);
  if (!UCS_PTR_IS_PTR(sp)) atomic_store(&c->done, true);
  return RIG_OK;
}

static void close_done(close_args *c) {
  free(c->p);
  free(c);
  rig_engine_drop();
}

/* Frees the lingering closes that are done. */
static void sweep(void) {
  close_args *done = NULL;
  pthread_mutex_lock(&linger_lock);
  for (close_args **at = &lingering; *at;) {
    close_args *c = *at;
    if (atomic_load_explicit(&c->done, memory_order_acquire)) {
      *at = c->next;
      c->next = done;
      done = c;
    } else {
      at = &c->next;
    }
  }
  pthread_mutex_unlock(&linger_lock);
  for (close_args *c = done, *next; c; c = next) {
    next = c->next;
    close_done(c);
  }
}

/* Progresses the worker until *done, the peer stops, or the deadline. */
static void progress_till(rig_peer *p, const _Atomic bool *done, double deadline) {
  while (!atomic_load_explicit(done, memory_order_acquire) && !stopped(p) &&
         rig_now_s() < deadline) {
    rig_engine_lock();
    unsigned n = ucp_worker_progress(rig_engine_worker());
    rig_engine_unlock();
    if (!n) sched_yield();
  }
}

static bool sends_busy(rig_peer *p) {
  bool busy = false;
  rig_engine_lock();
  for (size_t i = 0; i < PEER_SENDS && !busy; i++) busy = p->slots[i].busy;
  rig_engine_unlock();
  return busy;
}

bool rig_peer_release(rig_peer *p) {
  sweep();
  if (!p) return true;
  /* Sends in flight end (completed, or failed with the endpoint) first;
   * a peer that answers no more is bounded as a rail's release is. */
  double deadline = rig_now_s() + rig_env_get()->job_silence;
  while (sends_busy(p) && !stopped(p) && rig_now_s() < deadline) {
    rig_engine_lock();
    unsigned n = ucp_worker_progress(rig_engine_worker());
    rig_engine_unlock();
    if (!n) sched_yield();
  }
  close_args *c = calloc(1, sizeof *c);
  if (!c) return false;
  c->p = p;
  rig_error err;
  rig_engine_call(close_on_thread, c, &err);
  progress_till(p, &c->done, deadline);
  if (!atomic_load_explicit(&c->done, memory_order_acquire)) {
    pthread_mutex_lock(&linger_lock);
    c->next = lingering;
    lingering = c;
    pthread_mutex_unlock(&linger_lock);
    return false;
  }
  close_done(c);
  return true;
}

/* ---- sending ---------------------------------------------------------------------------- */

static void sent(void *request, ucs_status_t st, void *user) {
  send_slot *s = user;
  ucp_request_free(request);
  s->busy = false;
  rig_engine_inflight(-1);
  if (st != UCS_OK && st != UCS_ERR_CANCELED) peer_failed(s->peer, NULL, st);
}

/* A free send slot, progressing the worker (whose lock is held) till one is. */
static send_slot *free_slot(rig_peer *p) {
  for (;;) {
    for (size_t i = 0; i < PEER_SENDS; i++)
      if (!p->slots[i].busy) return &p->slots[i];
    if (stopped(p)) return NULL;
    if (!ucp_worker_progress(rig_engine_worker())) sched_yield();
  }
}

rig_status rig_peer_send(rig_peer *p, uint16_t kind, const void *bytes, size_t len,
                         rig_error *err) {
  if (len > RIG_PEER_MESSAGE_MAX || kind >= RIG_PEER_KINDS)
    return rig_error_set(err, RIG_EINVAL, "a message of %zu bytes (at most %d)", len,
                         RIG_PEER_MESSAGE_MAX);
  if (stopped(p)) return gone_error(p, err);
  rig_engine_lock();
  send_slot *s = free_slot(p);
  if (!s) {
    rig_engine_unlock();
    return gone_error(p, err);
  }
  memcpy(s->bytes, bytes, len);
  s->busy = true;
  ucp_request_param_t prm = {.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK |
                                             UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_FLAGS,
                             .cb.send = sent,
                             .user_data = s,
                             .flags = UCP_AM_SEND_FLAG_EAGER};
  ucs_status_ptr_t sp = ucp_am_send_nbx(p->ep, kind, NULL, 0, s->bytes, len, &prm);
  rig_status st = RIG_OK;
  if (UCS_PTR_IS_ERR(sp)) {
    s->busy = false;
    st = ucx_fail(err, "ucp_am_send_nbx", UCS_PTR_STATUS(sp));
  } else if (sp == NULL) {
    s->busy = false;
  } else {
    /* Progress completes it: the rail thread keeps progressing meanwhile. */
    rig_engine_inflight(1);
  }
  rig_engine_unlock();
  if (sp != NULL && !UCS_PTR_IS_ERR(sp)) rig_engine_wake();
  return st;
}

void rig_peer_polling(bool on) {
  rig_engine_polling(on);
}

void rig_peer_wait(const _Atomic uint32_t *word, uint32_t seen, int64_t timeout_ns) {
  rig_engine_watch(word, seen, timeout_ns);
}

void rig_peer_nudge(void) {
  rig_engine_nudge();
}

bool rig_peer_progress(void) {
  return rig_engine_turn();
}

/* ---- remote memory ------------------------------------------------------------------------ */

typedef struct register_args {
  rig_registration *r;
  void *base;
  size_t len;
} register_args;

static rig_status register_on_thread(void *arg, rig_error *err) {
  register_args *a = arg;
  ucp_mem_map_params_t p = {.field_mask =
                                UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH,
                            .address = a->base,
                            .length = a->len};
  ucs_status_t st = ucp_mem_map(rig_engine_context(), &p, &a->r->memh);
  if (st != UCS_OK) {
    a->r->memh = NULL;
    return ucx_fail(err, "ucp_mem_map", st);
  }
  if ((st = ucp_rkey_pack(rig_engine_context(), a->r->memh, &a->r->key, &a->r->key_len)) !=
      UCS_OK) {
    a->r->key = NULL;
    return ucx_fail(err, "ucp_rkey_pack", st);
  }
  return RIG_OK;
}

static rig_status unregister_on_thread(void *arg, rig_error *err) {
  (void)err;
  rig_registration *r = arg;
  if (r->key) ucp_rkey_buffer_release(r->key);
  if (r->memh) ucp_mem_unmap(rig_engine_context(), r->memh);
  return RIG_OK;
}

rig_status rig_memory_register(void *base, size_t len, rig_registration **out, rig_error *err) {
  rig_registration *r = calloc(1, sizeof *r);
  if (!r) return rig_error_set(err, RIG_ENOMEM, "out of memory for a registration");
  rig_status st = rig_engine_hold(err);
  if (st != RIG_OK) {
    free(r);
    return st;
  }
  register_args a = {r, base, len ? len : 1};
  if ((st = rig_engine_call(register_on_thread, &a, err)) != RIG_OK) {
    rig_engine_call(unregister_on_thread, r, err);
    rig_engine_drop();
    free(r);
    return st;
  }
  *out = r;
  return RIG_OK;
}

void rig_registration_key(const rig_registration *r, const void **key, size_t *len) {
  *key = r->key;
  *len = r->key_len;
}

void rig_registration_release(rig_registration *r) {
  if (!r) return;
  rig_error err;
  rig_engine_call(unregister_on_thread, r, &err);
  rig_engine_drop();
  free(r);
}

rig_status rig_peer_key_unpack(rig_peer *p, const void *key, size_t len, rig_peer_key **out,
                               rig_error *err) {
  if (!key || len == 0 || len > RIG_PEER_ADDRESS_MAX)
    return rig_error_set(err, RIG_EINVAL, "%zu bytes are not a remote key", len);
  rig_peer_key *k = calloc(1, sizeof *k);
  if (!k) return rig_error_set(err, RIG_ENOMEM, "out of memory for a remote key");
  rig_engine_lock();
  ucs_status_t st = ucp_ep_rkey_unpack(p->ep, key, &k->rkey);
  rig_engine_unlock();
  if (st != UCS_OK) {
    free(k);
    return ucx_fail(err, "ucp_ep_rkey_unpack", st);
  }
  *out = k;
  return RIG_OK;
}

void rig_peer_key_release(rig_peer_key *k) {
  if (!k) return;
  rig_engine_lock();
  ucp_rkey_destroy(k->rkey);
  rig_engine_unlock();
  free(k);
}

typedef struct op_wait {
  _Atomic bool done;
  ucs_status_t status;
} op_wait;

static void op_done(void *request, ucs_status_t st, void *user) {
  op_wait *w = user;
  ucp_request_free(request);
  w->status = st;
  atomic_store_explicit(&w->done, true, memory_order_release);
}

/* A put or a get of len bytes, then a flush of the endpoint: once it is
 * done the bytes are at their destination. */
static rig_status move(rig_peer *p, bool put, void *local, uint64_t remote, size_t len,
                       rig_peer_key *k, rig_error *err) {
  if (stopped(p)) return gone_error(p, err);
  /* On the heap: a wait given up leaves them to UCX's late callbacks. */
  op_wait *w = calloc(2, sizeof *w);
  if (!w) return rig_error_set(err, RIG_ENOMEM, "out of memory for a remote copy");
  op_wait *moved = &w[0], *flushed = &w[1];
  ucp_request_param_t prm = {.op_attr_mask =
                                 UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA,
                             .cb.send = op_done,
                             .user_data = moved};
  rig_engine_lock();
  ucs_status_ptr_t sp = put ? ucp_put_nbx(p->ep, local, len, remote, k->rkey, &prm)
                            : ucp_get_nbx(p->ep, local, len, remote, k->rkey, &prm);
  if (!UCS_PTR_IS_PTR(sp)) {
    moved->status = UCS_PTR_STATUS(sp);
    atomic_store(&moved->done, true);
  }
  if (moved->status == UCS_OK) {
    prm.user_data = flushed;
    ucs_status_ptr_t fp = ucp_ep_flush_nbx(p->ep, &prm);
    if (!UCS_PTR_IS_PTR(fp)) {
      flushed->status = UCS_PTR_STATUS(fp);
      atomic_store(&flushed->done, true);
    }
  } else {
    atomic_store(&flushed->done, true);
  }
  rig_engine_unlock();
  progress_until(p, &moved->done);
  progress_until(p, &flushed->done);
  /* Given up (the peer lost, or the wait cancelled): UCX may still call
   * back into w, which stays. */
  if (!atomic_load(&moved->done) || !atomic_load(&flushed->done)) return gone_error(p, err);
  ucs_status_t st = moved->status != UCS_OK ? moved->status : flushed->status;
  free(w);
  if (st != UCS_OK) return ucx_fail(err, put ? "ucp_put_nbx" : "ucp_get_nbx", st);
  return RIG_OK;
}

rig_status rig_peer_put(rig_peer *p, const void *local, uint64_t remote, size_t len,
                        rig_peer_key *k, rig_error *err) {
  return move(p, true, (void *)local, remote, len, k, err);
}

rig_status rig_peer_get(rig_peer *p, void *local, uint64_t remote, size_t len, rig_peer_key *k,
                        rig_error *err) {
  return move(p, false, local, remote, len, k, err);
}
