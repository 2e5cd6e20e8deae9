/* The pump the rail thread (or a thread calling ready that finds the
 * worker free) runs for each rail: a put of each transfer made ready into
 * the peer's inbound copy, sent stored as the puts complete here, and
 * arrived told at the peer by one non-fetching atomic add for every put
 * known to have landed.
 *
 * Landed: the puts of a rail may go over one transport (tcp, cma, an HCA)
 * and the adds over another (shared memory), and ucp_worker_fence orders
 * operations on each transport alone (UCX 1.13: uct_iface_fence per
 * interface), not across them. A flush of the endpoint (ucp_ep_flush_nbx)
 * completes once every put and add posted before it is done at the peer,
 * on every lane: the add that tells of a put is posted only after a flush
 * that covers it completed, so a count never runs ahead of its bytes, on
 * any mix of transports. On shared memory a flush completes at once.
 * Where the endpoint has one lane (TCP between hosts), a fence orders the
 * add after the puts on it, and no flush (a round trip) is waited for. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/copy.h"
#include "rails_internal.h"

static _Atomic(rig_rail_stamp_fn) stamp_fn;

void rig_rail_set_stamp(rig_rail_stamp_fn fn) {
  atomic_store(&stamp_fn, fn);
}

static void stamp(const rig_rail *r, rig_rail_stamp what, uint64_t count) {
  rig_rail_stamp_fn fn = atomic_load_explicit(&stamp_fn, memory_order_relaxed);
  if (fn) fn(r->id, what, count);
}

/* ---- completions ------------------------------------------------------------------ */

static void put_done(void *request, ucs_status_t st, void *user_data) {
  put_slot *slot = user_data;
  if (st != UCS_OK) slot->request = (void *)(uintptr_t)st; /* seen as a failure below */
  atomic_store_explicit(&slot->done, true, memory_order_release);
  ucp_request_free(request);
}

static void add_done(void *request, ucs_status_t st, void *user_data) {
  rig_rail *r = user_data;
  r->add_request = NULL;
  ucp_request_free(request);
  if (st != UCS_OK) rig_rail_fail_ucx(r, "ucp_atomic_op_nbx", st);
  if (st == UCS_OK && r->add_at == RIG_RAIL_ARRIVED_AT) stamp(r, RIG_RAIL_STAMP_ARRIVED, r->added);
}

static void flush_done(void *request, ucs_status_t st, void *user_data) {
  rig_rail *r = user_data;
  r->flush_request = NULL;
  ucp_request_free(request);
  if (st != UCS_OK) {
    rig_rail_fail_ucx(r, "ucp_ep_flush_nbx", st);
    return;
  }
  r->flushed = r->flushing;
  r->flushed_adds = r->flushing_adds;
}

/* ---- operations ------------------------------------------------------------------- */

/* A non-fetching add of r->operand at the peer's counts page + at. */
static bool post_add(rig_rail *r, size_t at) {
  ucp_request_param_t p = {.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK |
                                           UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_DATATYPE,
                           .cb.send = add_done,
                           .user_data = r,
                           .datatype = ucp_dt_make_contig(sizeof r->operand)};
  r->add_at = at; /* before the add: its callback reads it */
  if (r->peer.counts_map) {
    /* Release: the puts it tells of are seen before it. */
    atomic_fetch_add_explicit((_Atomic uint64_t *)(r->peer.counts_map + at), r->operand,
                              memory_order_release);
    r->adds++;
    r->add_request = NULL;
    if (at == RIG_RAIL_ARRIVED_AT) stamp(r, RIG_RAIL_STAMP_ARRIVED, r->added);
    return true;
  }
  ucs_status_ptr_t sp = ucp_atomic_op_nbx(r->peer.ep, UCP_ATOMIC_OP_ADD, &r->operand, 1,
                                          r->peer.counts + at, r->peer.counts_rkey, &p);
  if (UCS_PTR_IS_ERR(sp)) {
    rig_rail_fail_ucx(r, "ucp_atomic_op_nbx", UCS_PTR_STATUS(sp));
    return false;
  }
  r->adds++;
  r->add_request = sp; /* NULL: done already */
  if (!sp && at == RIG_RAIL_ARRIVED_AT) stamp(r, RIG_RAIL_STAMP_ARRIVED, r->added);
  return true;
}

/* A flush of everything posted so far, when none is in flight; on one
 * lane, a fence. */
static bool post_flush(rig_rail *r) {
  if (r->flush_request) return false;
  if (r->flushed == r->posted && r->flushed_adds == r->adds) return false;
  if (r->peer.counts_map) {
    /* Stores into mapped memory are done when made. */
    r->flushed = r->posted;
    r->flushed_adds = r->adds;
    return true;
  }
  if (r->peer.link && rig_endpoint_one_lane(r->peer.link) &&
      !(atomic_load(&r->state) == RAIL_CLOSING)) {
    ucp_worker_fence(rig_engine_worker());
    r->flushed = r->posted;
    r->flushed_adds = r->adds;
    return true;
  }
  ucp_request_param_t p = {.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA,
                           .cb.send = flush_done,
                           .user_data = r};
  r->flushing = r->posted;
  r->flushing_adds = r->adds;
  ucs_status_ptr_t sp = ucp_ep_flush_nbx(r->peer.ep, &p);
  if (UCS_PTR_IS_ERR(sp)) {
    rig_rail_fail_ucx(r, "ucp_ep_flush_nbx", UCS_PTR_STATUS(sp));
    return true;
  }
  r->flush_request = sp;
  if (!sp) {
    r->flushed = r->flushing;
    r->flushed_adds = r->flushing_adds;
  }
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
    const unsigned char *src = r->outbound + copy * r->out_copy + (uint64_t)t->src;
    uint64_t dst = copy * r->peer.inbound_copy + (uint64_t)t->dst;
    ucs_status_ptr_t sp = NULL;
    if (r->by_msg)
      sp = rig_rail_msg_send(r, c, slot, src, (size_t)t->length, &p);
    else if (r->peer.inbound_map)
      rig_copy_bulk(r->peer.inbound_map + dst, src, (size_t)t->length); /* done: sp NULL */
    else
      sp = ucp_put_nbx(r->peer.ep, src, (size_t)t->length, r->peer.inbound + dst,
                       r->peer.inbound_rkey, &p);
    if (UCS_PTR_IS_ERR(sp)) {
      rig_rail_fail_ucx(r, r->by_msg ? "ucp_am_send_nbx" : "ucp_put_nbx", UCS_PTR_STATUS(sp));
      return true;
    }
    if (sp == NULL) atomic_store_explicit(&slot->done, true, memory_order_relaxed);
    r->posted = c;
    /* A message tells the peer's arrived itself: no add follows. */
    if (r->by_msg) r->added = c;
    stamp(r, RIG_RAIL_STAMP_READY, c);
    if (r->by_msg) stamp(r, RIG_RAIL_STAMP_ARRIVED, c);
    atomic_store_explicit(&r->posted_seen, c, memory_order_relaxed);
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
  if (any) rig_rail_raise_to(rig_rail_count_at(r, RIG_RAIL_SENT_AT), r->sent);
  return any;
}

/* Tells the peer's arrived of the puts a completed flush covers, once sent
 * covers them here too (so that arrived >= c there means sent >= c here:
 * a sender paced by acknowledgements may rewrite a copy). */
static bool tell_arrived(rig_rail *r) {
  uint64_t upto = r->flushed < r->sent ? r->flushed : r->sent;
  if (r->add_request || upto <= r->added) return false;
  r->operand = upto - r->added;
  r->added = upto;
  post_add(r, RIG_RAIL_ARRIVED_AT);
  return true;
}

/* Closing: once everything ready is posted and told, and a flush after the
 * last add completed (every put and add landed), a goodbye add on the
 * peer's page; once the peer's goodbye is here too, neither end has
 * anything in flight to the other. */
static bool step_close(rig_rail *r, uint64_t ready) {
  if (r->bye_posted) return false;
  bool told = r->posted >= ready && r->added == r->posted && !r->add_request;
  if (!told) return false;
  if (r->flushed_adds != r->adds || r->flushed != r->posted) return post_flush(r);
  r->operand = 1;
  if (post_add(r, RAIL_BYE_AT)) r->bye_posted = true;
  return true;
}

/* Leaves the endpoint and, unless an operation of r may still use them,
 * the peer's remote keys. */
static void drop_peer(rig_rail *r, bool force) {
  bool idle = !r->flush_request && !r->add_request && r->sent == r->posted;
  if (idle && r->peer.inbound_rkey) ucp_rkey_destroy(r->peer.inbound_rkey);
  if (idle && r->peer.counts_rkey) ucp_rkey_destroy(r->peer.counts_rkey);
  r->peer.inbound_rkey = r->peer.counts_rkey = NULL;
  r->peer.inbound_map = r->peer.counts_map = NULL;
  if (r->peer.link) rig_endpoint_leave(r->peer.link, r, force);
  r->peer.link = NULL;
  r->peer.ep = NULL;
}

/* Abandoned (the peer lost, or no goodbye in time): the endpoint is left,
 * the areas stay mapped, and so does the rail, whose operations may still
 * complete. */
static bool pump_abandoned(rig_rail *r) {
  rig_rail_msg_close(r);
  drop_peer(r, true);
  rig_engine_remove(r);
  atomic_store(&r->state, RAIL_CLOSED);
  return true;
}

/* A release under way: the goodbyes, then the endpoint closed. True once
 * closed: the releaser may free r from then on. */
static bool pump_closing(rig_rail *r, uint64_t ready, bool *busy) {
  *busy |= step_close(r, ready);
  uint64_t bye =
      atomic_load_explicit((_Atomic uint64_t *)(r->counts + RAIL_BYE_AT), memory_order_acquire);
  if (r->bye_posted && !r->add_request && !r->flush_request && bye >= 1) {
    rig_rail_msg_close(r);
    drop_peer(r, false);
    rig_engine_remove(r);
    atomic_store(&r->state, RAIL_CLOSED);
    return true;
  }
  return false;
}

bool rig_rail_pump(rig_rail *r, bool *waiting) {
  if (atomic_exchange(&r->tell, false) && r->hooks.failed)
    r->hooks.failed(r->hooks.ctx, r, r->why); /* why is set before tell, and kept */
  int state = atomic_load(&r->state);
  if (state == RAIL_CLOSED) return false;
  if (atomic_load(&r->abandon)) return pump_abandoned(r);
  bool busy = false;
  uint64_t ready =
      atomic_load_explicit(rig_rail_count_at(r, RIG_RAIL_READY_AT), memory_order_acquire);
  bool live = !atomic_load(&r->failed) && ready != RIG_RAIL_RAISED;
  if (live && r->nsend) busy |= post_puts(r, ready);
  if (live) busy |= advance_sent(r);
  if (live && r->posted > r->flushed) busy |= post_flush(r);
  if (live) busy |= tell_arrived(r);
  if (state == RAIL_CLOSING && live && pump_closing(r, ready, &busy)) return true;
  /* A failed rail waits for nothing but its requests. */
  bool flying =
      r->add_request || r->flush_request || (live && (r->sent < r->posted || r->added < r->posted));
  atomic_store_explicit(&r->in_flight, flying, memory_order_relaxed);
  if (flying) *waiting = true;
  return busy;
}
