/* A rail's end: its areas, the bytes its peer needs, attaching, and the
 * pump the rail thread runs for each count made ready: a put of the
 * transfer into the peer's inbound copy, a fence, one non-fetching atomic
 * add on the peer's arrived for every put posted since the last (never
 * breaking count order), and sent stored as the puts complete locally. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/env.h"
#include "rails_internal.h"

/* ---- the process's rails ---------------------------------------------------- */

static pthread_mutex_t all_lock = PTHREAD_MUTEX_INITIALIZER;
static rig_rail *all; /* every rail made, kept so that a release is idempotent */

void rig_rails_register(rig_rail *r) {
  pthread_mutex_lock(&all_lock);
  r->next_all = all;
  all = r;
  pthread_mutex_unlock(&all_lock);
}

bool rig_rails_id_used(int64_t id) {
  pthread_mutex_lock(&all_lock);
  bool used = false;
  for (rig_rail *r = all; r && !used; r = r->next_all)
    used = r->id == id && !atomic_load(&r->released);
  pthread_mutex_unlock(&all_lock);
  return used;
}

static _Atomic uint64_t *count_at(const rig_rail *r, size_t at) {
  return (_Atomic uint64_t *)(r->counts + at);
}

/* Counts only grow. */
static void raise_to(_Atomic uint64_t *count, uint64_t c) {
  uint64_t seen = atomic_load_explicit(count, memory_order_relaxed);
  while (seen < c && !atomic_compare_exchange_weak_explicit(count, &seen, c, memory_order_release,
                                                            memory_order_relaxed)) {
  }
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
  raise_to(count_at(r, RIG_RAIL_READY_AT), RIG_RAIL_RAISED);
  raise_to(count_at(r, RIG_RAIL_SENT_AT), RIG_RAIL_RAISED);
  raise_to(count_at(r, RIG_RAIL_ARRIVED_AT), RIG_RAIL_RAISED);
  rig_engine_wake();
}

void rig_rails_raise_all(const char *why) {
  pthread_mutex_lock(&all_lock);
  for (rig_rail *r = all; r; r = r->next_all)
    if (!r->elsewhere && r->counts && !atomic_load(&r->failed)) rig_rail_raise(r, why);
  pthread_mutex_unlock(&all_lock);
}

void rig_rail_fail_ucx(rig_rail *r, const char *what, ucs_status_t st) {
  if (atomic_load(&r->failed)) return;
  char why[RIG_ERROR_MESSAGE_MAX];
  snprintf(why, sizeof why, "rail %lld: %s: %s", (long long)r->id, what, ucs_status_string(st));
  rig_rail_raise(r, why);
  if (r->hooks.failed) r->hooks.failed(r->hooks.ctx, r, why);
}

/* ---- ready ---------------------------------------------------------------------- */

/* The end's ready function: counts is the counts area's address. A count
 * at or below the one stored changes nothing. */
static void rail_ready(void *counts, uint64_t c) {
  unsigned char *page = counts;
  if (*(const uint64_t *)(page + RAIL_BACK_AT + 8) != RAIL_MAGIC) return;
  raise_to((_Atomic uint64_t *)(page + RIG_RAIL_READY_AT), c);
  /* The worker free: the puts go now, from here, without waking the rail
   * thread, which is woken only for what stays in flight. */
  rig_rail *r;
  memcpy(&r, page + RAIL_BACK_AT, sizeof r);
  bool posted = false, waiting = false;
  if (atomic_load(&r->state) == RAIL_LIVE && rig_engine_try()) {
    if (atomic_load(&r->state) == RAIL_LIVE) {
      rig_rail_pump(r, &waiting);
      posted = true;
    }
    /* Puts and adds into mapped memory are done already; what is not (an
     * add queued behind its fence) progresses a little here. */
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
} rail_wire;

static rig_status ucx_error(rig_error *err, const char *what, ucs_status_t st) {
  return rig_error_set(err, RIG_ESYS, "UCX: %s: %s", what, ucs_status_string(st));
}

/* An area's memory is UCX's (ucp_mem_map allocating it), so that a peer
 * on this host maps it and its puts and adds are plain stores there; the
 * buffer that adopts it unmaps it once released and unused, and holds the
 * engine (whose context it is) till then. */
static void area_free(void *ctx) {
  ucp_mem_unmap(rig_engine_context(), ctx);
  rig_engine_drop();
}

static rig_status make_area(size_t length, rig_buffer **out, ucp_mem_h *memh, unsigned char **host,
                            rig_error *err) {
  *memh = NULL;
  if (length == 0) {
    rig_status st = rig_buffer_create(rig_host(), RIG_KIND_DEVICE, 0, out, err);
    if (st == RIG_OK) *host = rig_buffer_host(*out);
    return st;
  }
  ucp_mem_map_params_t p = {.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS |
                                          UCP_MEM_MAP_PARAM_FIELD_LENGTH |
                                          UCP_MEM_MAP_PARAM_FIELD_FLAGS,
                            .address = NULL,
                            .length = length,
                            .flags = UCP_MEM_MAP_ALLOCATE};
  ucs_status_t us = ucp_mem_map(rig_engine_context(), &p, memh);
  if (us != UCS_OK) return ucx_error(err, "ucp_mem_map", us);
  ucp_mem_attr_t attr = {.field_mask = UCP_MEM_ATTR_FIELD_ADDRESS};
  us = ucp_mem_query(*memh, &attr);
  rig_status st = us == UCS_OK ? rig_engine_hold(err) : ucx_error(err, "ucp_mem_query", us);
  if (st == RIG_OK) {
    *host = attr.address;
    memset(*host, 0, length);
    st = rig_buffer_adopt(*host, length, area_free, *memh, out, err);
    if (st != RIG_OK) rig_engine_drop();
  }
  if (st != RIG_OK) {
    ucp_mem_unmap(rig_engine_context(), *memh);
    *memh = NULL;
  }
  return st;
}

static rig_status make_areas(rig_rail *r, rig_error *err);

/* On the rail thread: makes and registers the areas, writes the address
 * bytes. */
static rig_status register_end(void *arg, rig_error *err) {
  rig_rail *r = arg;
  rig_status st;
  if ((st = make_areas(r, err)) != RIG_OK) return st;
  void *in_key = NULL, *counts_key = NULL;
  size_t in_len = 0, counts_len = 0;
  ucs_status_t us = UCS_OK;
  if (r->in_memh) us = ucp_rkey_pack(rig_engine_context(), r->in_memh, &in_key, &in_len);
  if (us == UCS_OK)
    us = ucp_rkey_pack(rig_engine_context(), r->counts_memh, &counts_key, &counts_len);
  if (us != UCS_OK) {
    if (in_key) ucp_rkey_buffer_release(in_key);
    return ucx_error(err, "ucp_rkey_pack", us);
  }
  const void *worker;
  size_t worker_len;
  rig_engine_worker_address(&worker, &worker_len);
  size_t transfers = (r->nsend + r->nreceive) * sizeof(rig_rail_transfer);
  r->address_len = sizeof(rail_wire) + transfers + worker_len + in_len + counts_len;
  unsigned char *a = r->address = malloc(r->address_len);
  if (a) {
    rail_wire w = {RAIL_MAGIC,  {0},
                   r->id,       r->nsend,
                   r->nreceive, (uint64_t)(uintptr_t)r->inbound,
                   r->in_copy,  (uint64_t)(uintptr_t)r->counts,
                   worker_len,  in_len,
                   counts_len};
    gethostname(w.host, sizeof w.host - 1);
    memcpy(a, &w, sizeof w);
    a += sizeof w;
    if (r->nsend) memcpy(a, r->send, r->nsend * sizeof *r->send);
    a += r->nsend * sizeof *r->send;
    if (r->nreceive) memcpy(a, r->receive, r->nreceive * sizeof *r->receive);
    a += r->nreceive * sizeof *r->receive;
    memcpy(a, worker, worker_len);
    a += worker_len;
    if (in_len) memcpy(a, in_key, in_len);
    a += in_len;
    memcpy(a, counts_key, counts_len);
  }
  if (in_key) ucp_rkey_buffer_release(in_key);
  ucp_rkey_buffer_release(counts_key);
  return r->address ? RIG_OK : rig_error_set(err, RIG_ENOMEM, "out of memory for a rail");
}

static void free_areas(rig_rail *r) {
  /* Under the rails' lock: rig_rails_raise_all never writes freed counts. */
  pthread_mutex_lock(&all_lock);
  r->outbound = r->inbound = r->counts = NULL;
  pthread_mutex_unlock(&all_lock);
  rig_buffer_release(r->end.outbound);
  rig_buffer_release(r->end.inbound);
  rig_buffer_release(r->end.counts);
  rig_buffer_release(r->counts_page);
  r->end = (rig_rail_end){0};
  r->counts_page = NULL;
  free(r->address);
  r->address = NULL;
}

/* On the rail thread. */
static rig_status make_areas(rig_rail *r, rig_error *err) {
  rig_status st;
  if ((st = make_area(2 * r->out_copy, &r->end.outbound, &r->out_memh, &r->outbound, err)) !=
          RIG_OK ||
      (st = make_area(2 * r->in_copy, &r->end.inbound, &r->in_memh, &r->inbound, err)) != RIG_OK ||
      (st = make_area(RAIL_PAGE, &r->counts_page, &r->counts_memh, &r->counts, err)) != RIG_OK ||
      (st = rig_buffer_view(r->counts_page, 0, RIG_RAIL_COUNTS_BYTES, &r->end.counts, err)) !=
          RIG_OK)
    return st;
  r->end.ready = rail_ready;
  void *self = r;
  memcpy(r->counts + RAIL_BACK_AT, &self, sizeof self);
  uint64_t magic = RAIL_MAGIC;
  memcpy(r->counts + RAIL_BACK_AT + 8, &magic, sizeof magic);
  return RIG_OK;
}

static rig_rail *rail_new(int64_t id) {
  rig_rail *r = calloc(1, sizeof *r);
  if (!r) return NULL;
  r->id = id;
  pthread_mutex_init(&r->why_lock, NULL);
  atomic_init(&r->state, RAIL_MADE);
  return r;
}

static rig_status check_id(int64_t id, rig_error *err) {
  if (id < 1)
    return rig_error_set(err, RIG_EINVAL, "rail %lld: an id is at least 1", (long long)id);
  if (rig_rails_id_used(id))
    return rig_error_set(err, RIG_EINVAL, "rail %lld: an id already in use", (long long)id);
  return RIG_OK;
}

rig_status rig_rail_create(int64_t id, const rig_rail_transfer *send, size_t nsend,
                           const rig_rail_transfer *receive, size_t nreceive, rig_rail **out,
                           rig_error *err) {
  rig_status st = rig_rail_check(send, nsend, receive, nreceive, err);
  if (st == RIG_OK) st = check_id(id, err);
  if (st != RIG_OK) return st;
  if ((st = rig_engine_hold(err)) != RIG_OK) return st;
  rig_rail *r = rail_new(id);
  if (r) {
    r->send = malloc((nsend ? nsend : 1) * sizeof *send);
    r->receive = malloc((nreceive ? nreceive : 1) * sizeof *receive);
  }
  if (!r || !r->send || !r->receive) {
    if (r) {
      free(r->send);
      free(r->receive);
    }
    free(r);
    rig_engine_drop();
    return rig_error_set(err, RIG_ENOMEM, "out of memory for rail %lld", (long long)id);
  }
  if (nsend) memcpy(r->send, send, nsend * sizeof *send);
  if (nreceive) memcpy(r->receive, receive, nreceive * sizeof *receive);
  r->nsend = nsend;
  r->nreceive = nreceive;
  r->out_copy = rig_rail_copy_bytes(send, nsend, false);
  r->in_copy = rig_rail_copy_bytes(receive, nreceive, true);
  st = rig_engine_call(register_end, r, err);
  if (st != RIG_OK) {
    free_areas(r);
    free(r->send);
    free(r->receive);
    pthread_mutex_destroy(&r->why_lock);
    free(r);
    rig_engine_drop();
    return st;
  }
  rig_rails_register(r);
  *out = r;
  return RIG_OK;
}

rig_status rig_rail_create_elsewhere(int64_t id, rig_rail **out, rig_error *err) {
  rig_status st = check_id(id, err);
  if (st != RIG_OK) return st;
  rig_rail *r = rail_new(id);
  if (!r) return rig_error_set(err, RIG_ENOMEM, "out of memory for rail %lld", (long long)id);
  r->elsewhere = true;
  rig_rails_register(r);
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

static void ep_failed(void *arg, ucp_ep_h ep, ucs_status_t st) {
  (void)ep;
  rig_rail *r = arg;
  /* A peer lost while closing is the goodbye that will not come. */
  if (atomic_load(&r->state) == RAIL_CLOSING) atomic_store(&r->abandon, true);
  rig_rail_fail_ucx(r, "the peer's end is lost", st);
}

typedef struct attach_args {
  rig_rail *r;
  const unsigned char *worker, *in_key, *counts_key;
  bool same_host;
} attach_args;

static rig_status attach_on_thread(void *arg, rig_error *err) {
  attach_args *a = arg;
  rig_rail *r = a->r;
  ucp_ep_params_t ep = {.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS |
                                      UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                                      UCP_EP_PARAM_FIELD_ERR_HANDLER,
                        .address = (const ucp_address_t *)a->worker,
                        .err_mode = UCP_ERR_HANDLING_MODE_PEER,
                        .err_handler = {.cb = ep_failed, .arg = r}};
  /* Peer-failure handling keeps UCX (1.13) off shared memory, and on one
   * host the job learns of a lost peer anyway (the launcher, the control
   * protocol's silence): there the rail takes shared memory, across hosts
   * UCX reports a lost peer. */
  if (a->same_host)
    ep.field_mask &=
        ~(uint64_t)(UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE | UCP_EP_PARAM_FIELD_ERR_HANDLER);
  ucs_status_t st = ucp_ep_create(rig_engine_worker(), &ep, &r->peer.ep);
  if (st != UCS_OK) return ucx_error(err, "ucp_ep_create", st);
  if (a->in_key &&
      (st = ucp_ep_rkey_unpack(r->peer.ep, a->in_key, &r->peer.inbound_rkey)) != UCS_OK)
    return ucx_error(err, "ucp_ep_rkey_unpack", st);
  if ((st = ucp_ep_rkey_unpack(r->peer.ep, a->counts_key, &r->peer.counts_rkey)) != UCS_OK)
    return ucx_error(err, "ucp_ep_rkey_unpack", st);
  rig_status rs = rig_engine_add(r, err);
  if (rs == RIG_OK) atomic_store(&r->state, RAIL_LIVE);
  return rs;
}

static bool same_transfers(const unsigned char *at, const rig_rail_transfer *mine, size_t n) {
  return n == 0 || memcmp(at, mine, n * sizeof *mine) == 0;
}

rig_status rig_rail_attach(rig_rail *r, const void *peer, size_t len, rig_error *err) {
  if (r->elsewhere || atomic_load(&r->state) != RAIL_MADE)
    return rig_error_set(err, RIG_EINVAL, "rail %lld: attached already", (long long)r->id);
  rail_wire w;
  const unsigned char *p = peer;
  if (len < sizeof w)
    return rig_error_set(err, RIG_EINVAL, "rail %lld: %zu bytes are not a rail end's address",
                         (long long)r->id, len);
  memcpy(&w, p, sizeof w);
  size_t rest = len - sizeof w;
  /* Every length bounded by what came before it is added. */
  if (w.magic != RAIL_MAGIC || w.nsend > rest / sizeof(rig_rail_transfer) ||
      w.nreceive > rest / sizeof(rig_rail_transfer) ||
      (w.nsend + w.nreceive) * sizeof(rig_rail_transfer) > rest || w.worker_len > rest ||
      w.in_rkey_len > rest || w.counts_rkey_len > rest ||
      (w.nsend + w.nreceive) * sizeof(rig_rail_transfer) + w.worker_len + w.in_rkey_len +
              w.counts_rkey_len !=
          rest ||
      w.worker_len == 0 || w.counts_rkey_len == 0)
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
  at += (w.nsend + w.nreceive) * sizeof(rig_rail_transfer);
  r->peer.inbound = w.inbound;
  r->peer.inbound_copy = w.in_copy;
  r->peer.counts = w.counts;
  char host[64] = {0};
  gethostname(host, sizeof host - 1);
  w.host[sizeof w.host - 1] = '\0';
  attach_args a = {r, at, w.in_rkey_len ? at + w.worker_len : NULL,
                   at + w.worker_len + w.in_rkey_len, strcmp(host, w.host) == 0};
  return rig_engine_call(attach_on_thread, &a, err);
}

/* ---- the pump ----------------------------------------------------------------------- */

static _Atomic(rig_rail_stamp_fn) stamp_fn;

void rig_rail_set_stamp(rig_rail_stamp_fn fn) {
  atomic_store(&stamp_fn, fn);
}

static void stamp(const rig_rail *r, rig_rail_stamp what, uint64_t count) {
  rig_rail_stamp_fn fn = atomic_load_explicit(&stamp_fn, memory_order_relaxed);
  if (fn) fn(r->id, what, count);
}

static void put_done(void *request, ucs_status_t st, void *user_data) {
  put_slot *slot = user_data;
  atomic_store_explicit(&slot->done, true, memory_order_release);
  if (st != UCS_OK) slot->request = (void *)(uintptr_t)st; /* seen as a failure below */
  ucp_request_free(request);
}

static void add_done(void *request, ucs_status_t st, void *user_data) {
  rig_rail *r = user_data;
  r->add_request = NULL;
  ucp_request_free(request);
  if (st != UCS_OK) rig_rail_fail_ucx(r, "ucp_atomic_op_nbx", st);
  if (st == UCS_OK && r->add_at == RIG_RAIL_ARRIVED_AT) stamp(r, RIG_RAIL_STAMP_ARRIVED, r->added);
}

static void close_done(void *request, ucs_status_t st, void *user_data) {
  (void)st;
  rig_rail *r = user_data;
  r->close_request = NULL;
  ucp_request_free(request);
}

/* A non-fetching add of r->operand at the peer's counts page + at. */
static bool post_add(rig_rail *r, size_t at) {
  ucp_request_param_t p = {.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK |
                                           UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_DATATYPE,
                           .cb.send = add_done,
                           .user_data = r,
                           .datatype = ucp_dt_make_contig(sizeof r->operand)};
  r->add_at = at; /* before the add: its callback reads it */
  ucs_status_ptr_t sp = ucp_atomic_op_nbx(r->peer.ep, UCP_ATOMIC_OP_ADD, &r->operand, 1,
                                          r->peer.counts + at, r->peer.counts_rkey, &p);
  if (UCS_PTR_IS_ERR(sp)) {
    rig_rail_fail_ucx(r, "ucp_atomic_op_nbx", UCS_PTR_STATUS(sp));
    return false;
  }
  r->add_request = sp; /* NULL: done already */
  if (!sp && at == RIG_RAIL_ARRIVED_AT) stamp(r, RIG_RAIL_STAMP_ARRIVED, r->added);
  return true;
}

static bool post_puts(rig_rail *r, uint64_t ready) {
  bool any = false;
  while (r->posted < ready && r->posted - r->sent < RAIL_WINDOW) {
    uint64_t c = r->posted + 1;
    const rig_rail_transfer *t = &r->send[(c - 1) % r->nsend];
    uint64_t copy = ((c - 1) / r->nsend) % 2;
    put_slot *slot = &r->ring[(c - 1) % RAIL_WINDOW];
    atomic_store_explicit(&slot->done, false, memory_order_relaxed);
    slot->request = NULL;
    ucp_request_param_t p = {.op_attr_mask =
                                 UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA,
                             .cb.send = put_done,
                             .user_data = slot};
    ucs_status_ptr_t sp = ucp_put_nbx(
        r->peer.ep, r->outbound + copy * r->out_copy + (uint64_t)t->src, (size_t)t->length,
        r->peer.inbound + copy * r->peer.inbound_copy + (uint64_t)t->dst, r->peer.inbound_rkey, &p);
    if (UCS_PTR_IS_ERR(sp)) {
      rig_rail_fail_ucx(r, "ucp_put_nbx", UCS_PTR_STATUS(sp));
      return true;
    }
    if (sp == NULL) atomic_store_explicit(&slot->done, true, memory_order_relaxed);
    r->posted = c;
    atomic_store_explicit(&r->posted_seen, c, memory_order_relaxed);
    stamp(r, RIG_RAIL_STAMP_READY, c);
    any = true;
  }
  return any;
}

static bool advance_sent(rig_rail *r) {
  bool any = false;
  while (r->sent < r->posted) {
    put_slot *slot = &r->ring[r->sent % RAIL_WINDOW];
    if (!atomic_load_explicit(&slot->done, memory_order_acquire)) break;
    if (slot->request) {
      rig_rail_fail_ucx(r, "ucp_put_nbx", (ucs_status_t)(intptr_t)slot->request);
      return true;
    }
    r->sent++;
    any = true;
  }
  if (any) raise_to(count_at(r, RIG_RAIL_SENT_AT), r->sent);
  return any;
}

/* Closing: once everything ready is posted and told, a goodbye add on the
 * peer's page (after a fence: it lands after every put); once the peer's
 * goodbye is here too, neither end has anything in flight to the other. */
static bool step_close(rig_rail *r, uint64_t ready) {
  bool told = r->posted >= ready && r->added == r->posted && !r->add_request;
  if (!r->bye_posted && told) {
    ucp_worker_fence(rig_engine_worker());
    r->operand = 1;
    if (!post_add(r, RAIL_BYE_AT)) return true;
    r->bye_posted = true;
    return true;
  }
  return false;
}

static void drop_peer(rig_rail *r, bool force) {
  if (r->peer.inbound_rkey) ucp_rkey_destroy(r->peer.inbound_rkey);
  if (r->peer.counts_rkey) ucp_rkey_destroy(r->peer.counts_rkey);
  r->peer.inbound_rkey = r->peer.counts_rkey = NULL;
  if (!r->peer.ep) return;
  ucp_request_param_t p = {.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK |
                                           UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_FLAGS,
                           .cb.send = close_done,
                           .user_data = r,
                           .flags = force ? UCP_EP_CLOSE_FLAG_FORCE : 0};
  ucs_status_ptr_t sp = ucp_ep_close_nbx(r->peer.ep, &p);
  r->peer.ep = NULL;
  r->close_request = UCS_PTR_IS_PTR(sp) ? sp : NULL;
}

bool rig_rail_pump(rig_rail *r, bool *waiting) {
  int state = atomic_load(&r->state);
  if (state == RAIL_CLOSED) return false;
  bool busy = false;
  /* Abandoned (the peer lost, or no goodbye in time): the endpoint goes,
   * the areas stay mapped. */
  if (atomic_load(&r->abandon)) {
    if (r->peer.ep) drop_peer(r, true);
    if (r->close_request) {
      *waiting = true;
      return false;
    }
    rig_engine_remove(r);
    atomic_store(&r->state, RAIL_CLOSED);
    return true;
  }
  uint64_t ready = atomic_load_explicit(count_at(r, RIG_RAIL_READY_AT), memory_order_acquire);
  bool live = !atomic_load(&r->failed) && ready != RIG_RAIL_RAISED;
  if (live && r->nsend) busy |= post_puts(r, ready);
  if (live && r->posted > r->added && !r->add_request) {
    /* Every put posted so far completes at the peer before the add. */
    ucp_worker_fence(rig_engine_worker());
    r->operand = r->posted - r->added;
    r->added = r->posted;
    post_add(r, RIG_RAIL_ARRIVED_AT);
    busy = true;
  }
  if (live) busy |= advance_sent(r);
  if (state == RAIL_CLOSING && live) {
    busy |= step_close(r, ready);
    uint64_t bye =
        atomic_load_explicit((_Atomic uint64_t *)(r->counts + RAIL_BYE_AT), memory_order_acquire);
    if (r->bye_posted && !r->add_request && bye >= 1 && r->peer.ep) {
      drop_peer(r, false);
      busy = true;
    }
    if (r->bye_posted && !r->peer.ep && !r->close_request) {
      rig_engine_remove(r);
      atomic_store(&r->state, RAIL_CLOSED);
      return true;
    }
  }
  bool flying = r->sent < r->posted || r->add_request || r->close_request;
  atomic_store_explicit(&r->in_flight, flying, memory_order_relaxed);
  if (flying) *waiting = true;
  return busy;
}

/* ---- release ------------------------------------------------------------------------ */

static void nap(void) {
  struct timespec ts = {0, 200000};
  nanosleep(&ts, NULL);
}

static void drop_end(rig_rail *r) {
  int state = atomic_load(&r->state);
  if (state == RAIL_MADE) {
    /* Never attached: no peer knows the areas. */
    free_areas(r);
    rig_engine_drop();
    return;
  }
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
  /* Abandoned areas stay mapped, and so the engine stays. */
  if (atomic_load(&r->abandon)) return;
  free_areas(r);
  rig_engine_drop();
}

void rig_rail_release(rig_rail *r) {
  if (!r || atomic_exchange(&r->released, true)) return;
  if (r->hooks.release) r->hooks.release(r->hooks.ctx, r);
  if (!r->elsewhere) drop_end(r);
  if (r->hooks.released) r->hooks.released(r->hooks.ctx, r);
}
