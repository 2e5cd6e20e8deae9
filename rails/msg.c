/* Rails by messages. Where UCX emulates RMA and atomics by messages (TCP
 * between hosts), a put is a message the peer's progress applies and
 * answers with a completion, and so is the add on its arrived count: four
 * messages and two turns of the peer's progress a transfer, where an MPI
 * send is one. There a transfer of at most RAIL_MSG_MAX bytes goes as one
 * eager active message instead: a header naming the receiving end (its
 * random key, carried in its address) and the transfer's count, then the
 * transfer's bytes. The receiver's handler, on whichever thread progresses
 * its worker, checks the message against its own end (the count the next
 * one, the length the transfer's), copies the bytes into the inbound copy
 * the count names and only then raises arrived (release): a count never
 * runs ahead of its bytes. Messages of one endpoint arrive in order (one
 * TCP lane). Everything here runs under the worker (its lock, or the rail
 * thread's turn), which serialises the receivers' table. */
#include <stdio.h>
#include <string.h>

#include "base/array.h"
#include "rails_internal.h"

typedef struct rail_msg {
  uint64_t key, count;
} rail_msg;

_Static_assert(sizeof(rail_msg) == sizeof(((put_slot *)0)->header), "a slot holds a header");

/* rig_rail *: the ends that take messages. */
static rig_array receivers = RIG_ARRAY_INIT(rig_rail *, 0);

static rig_rail *receiver(size_t i) {
  return ((rig_rail **)receivers.items)[i];
}

static rig_rail *find(uint64_t key) {
  for (size_t i = 0; i < receivers.n; i++)
    if (receiver(i)->msg_key == key) return receiver(i);
  return NULL;
}

/* The peer's message of count c: its bytes into the inbound copy, then
 * arrived. A message that breaks the rail's rules fails the rail (the
 * peer's fault), as a bad frame would. */
static void take(rig_rail *r, uint64_t c, const void *data, size_t len) {
  if (atomic_load(&r->failed) || atomic_load(&r->state) == RAIL_CLOSED) return;
  char why[RIG_ERROR_MESSAGE_MAX];
  long long id = (long long)r->id;
  if (!r->nreceive) {
    snprintf(why, sizeof why, "rail %lld: a message from the peer to an end that receives nothing",
             id);
    rig_rail_fail(r, why);
    return;
  }
  if (c != r->msg_taken + 1) {
    snprintf(why, sizeof why, "rail %lld: the peer's message of count %llu after count %llu", id,
             (unsigned long long)c, (unsigned long long)r->msg_taken);
    rig_rail_fail(r, why);
    return;
  }
  size_t k = (size_t)((c - 1) % r->nreceive);
  const rig_rail_transfer *t = &r->receive[k];
  if ((uint64_t)len != (uint64_t)t->length) {
    snprintf(why, sizeof why,
             "rail %lld: the peer's message of count %llu holds %zu bytes, receive %zu %lld", id,
             (unsigned long long)c, len, k, (long long)t->length);
    rig_rail_fail(r, why);
    return;
  }
  uint64_t copy = ((c - 1) / r->nreceive) % 2;
  memcpy(r->inbound + copy * r->in_copy + (uint64_t)t->dst, data, len);
  r->msg_taken = c;
  rig_rail_raise_to(rig_rail_count_at(r, RIG_RAIL_ARRIVED_AT), c);
}

static ucs_status_t on_message(void *arg, const void *header, size_t header_len, void *data,
                               size_t len, const ucp_am_recv_param_t *param) {
  (void)arg;
  rail_msg m;
  /* Only eager messages of this header are sent: another is no rail's. */
  if (header_len != sizeof m || (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV)) return UCS_OK;
  memcpy(&m, header, sizeof m);
  rig_rail *r = m.key ? find(m.key) : NULL;
  /* None: a message racing the end's release, dropped. */
  if (r) take(r, m.count, data, len);
  return UCS_OK;
}

rig_status rig_rail_msg_listen(ucp_worker_h worker, rig_error *err) {
  ucp_am_handler_param_t p = {.field_mask =
                                  UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB,
                              .id = RAIL_MSG_ID,
                              .cb = on_message};
  ucs_status_t st = ucp_worker_set_am_recv_handler(worker, &p);
  return st == UCS_OK ? RIG_OK : rig_ucx_error(err, "ucp_worker_set_am_recv_handler", st);
}

rig_status rig_rail_msg_open(rig_rail *r, rig_error *err) {
  if (!r->nreceive || !r->msg_key) return RIG_OK;
  if (!rig_array_push(&receivers, &r))
    return rig_error_set(err, RIG_ENOMEM, "out of memory for rail %lld", (long long)r->id);
  return RIG_OK;
}

void rig_rail_msg_close(rig_rail *r) {
  for (size_t i = 0; i < receivers.n; i++)
    if (receiver(i) == r) {
      rig_array_remove(&receivers, i);
      break;
    }
  if (!receivers.n) rig_array_free(&receivers);
}

bool rig_rail_msg_fits(const rig_rail *r) {
  if (!r->nsend || !r->peer.msg_key || !r->peer.link || !rig_endpoint_emulated(r->peer.link))
    return false;
  for (size_t i = 0; i < r->nsend; i++)
    if (r->send[i].length > RAIL_MSG_MAX) return false;
  return true;
}

ucs_status_ptr_t rig_rail_msg_send(rig_rail *r, uint64_t c, put_slot *slot, const void *src,
                                   size_t len, const ucp_request_param_t *p) {
  rail_msg m = {r->peer.msg_key, c};
  memcpy(slot->header, &m, sizeof m);
  ucp_request_param_t q = *p;
  q.op_attr_mask |= UCP_OP_ATTR_FIELD_FLAGS;
  q.flags = UCP_AM_SEND_FLAG_EAGER;
  return ucp_am_send_nbx(r->peer.ep, RAIL_MSG_ID, slot->header, sizeof m, src, len, &q);
}
