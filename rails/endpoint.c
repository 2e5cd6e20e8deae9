/* Endpoints to peer workers, one per peer (and per kind of failure
 * handling), shared by every rail and mapped area to that peer: a thousand
 * rails to one process hold one endpoint (one connection, one mapping of
 * its FIFO), not a thousand. The last to leave closes it. All on the rail
 * thread (the worker's). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/array.h"
#include "rails_internal.h"

struct rig_endpoint {
  struct rig_endpoint *next;
  ucp_ep_h ep;
  int refs;
  bool one_lane;   /* every operation on one transport lane (lanes()) */
  bool emulated;   /* its RMA and atomics are messages the target's progress serves (TCP) */
  bool handled;    /* with peer-failure handling */
  bool failed;     /* UCX reported it: closed by force */
  rig_array rails; /* rig_rail *, over it */
  size_t len;
  unsigned char worker[];
};

static rig_endpoint *peers;

static rig_rail *rail_at(const rig_endpoint *p, size_t i) {
  return ((rig_rail **)p->rails.items)[i];
}

/* How many lanes UCX made for the endpoint, as ucp_ep_print_info lists
 * them (UCX 1.13 has no query of them); 0 when it cannot tell. *emulated:
 * no lane does atomics ("amo#"), so UCX makes them, and RMA, of messages
 * that only the target's progress serves (TCP). */
static int lanes(ucp_ep_h ep, bool *emulated) {
  char *text = NULL;
  size_t len = 0;
  *emulated = false;
  FILE *f = open_memstream(&text, &len);
  if (!f) return 0;
  ucp_ep_print_info(ep, f);
  int n = 0;
  if (fclose(f) == 0 && text) {
    for (const char *at = text; (at = strstr(at, "lane[")); at += 5) n++;
    *emulated = n > 0 && !strstr(text, "amo#");
  }
  free(text);
  return n;
}

/* UCX lost the peer: every rail over it fails. */
static void peer_failed(void *arg, ucp_ep_h ep, ucs_status_t st) {
  (void)ep;
  rig_endpoint *p = arg;
  p->failed = true;
  for (size_t i = 0; i < p->rails.n; i++) rig_rail_peer_lost(rail_at(p, i), st);
}

rig_status rig_endpoint_take(const void *worker, size_t len, bool handled, rig_endpoint **out,
                             rig_error *err) {
  rig_endpoint *p = peers;
  while (p && (p->failed || p->handled != handled || p->len != len ||
               memcmp(p->worker, worker, len) != 0))
    p = p->next;
  if (!p) {
    if (!(p = calloc(1, sizeof *p + len)))
      return rig_error_set(err, RIG_ENOMEM, "out of memory for an endpoint");
    ucp_ep_params_t ep = {.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS,
                          .address = (const ucp_address_t *)worker};
    if (handled) {
      ep.field_mask |= UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE | UCP_EP_PARAM_FIELD_ERR_HANDLER;
      ep.err_mode = UCP_ERR_HANDLING_MODE_PEER;
      ep.err_handler = (ucp_err_handler_t){.cb = peer_failed, .arg = p};
    }
    ucs_status_t st = ucp_ep_create(rig_engine_worker(), &ep, &p->ep);
    if (st != UCS_OK) {
      free(p);
      return rig_ucx_error(err, "ucp_ep_create", st);
    }
    rig_array_init(&p->rails, sizeof(rig_rail *), 0);
    p->handled = handled;
    p->one_lane = lanes(p->ep, &p->emulated) == 1;
    p->len = len;
    memcpy(p->worker, worker, len);
    p->next = peers;
    peers = p;
  }
  p->refs++;
  *out = p;
  return RIG_OK;
}

bool rig_endpoint_one_lane(const rig_endpoint *p) {
  return p->one_lane;
}

bool rig_endpoint_emulated(const rig_endpoint *p) {
  return p->emulated;
}

ucp_ep_h rig_endpoint_ep(const rig_endpoint *p) {
  return p->ep;
}

rig_status rig_endpoint_watch(rig_endpoint *p, rig_rail *r, rig_error *err) {
  if (!rig_array_push(&p->rails, &r))
    return rig_error_set(err, RIG_ENOMEM, "out of memory for an endpoint");
  return RIG_OK;
}

/* Closes the endpoint: a wait bounded by progress turns, since the peer
 * may be gone (a close left waiting ends, or not, inside UCX). */
static void peer_close(rig_endpoint *p, bool force) {
  /* A forced close needs peer-failure handling (UCX 1.13). */
  bool forced = (force || p->failed) && p->handled;
  ucp_request_param_t cp = {.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS,
                            .flags = forced ? UCP_EP_CLOSE_FLAG_FORCE : 0};
  ucs_status_ptr_t sp = ucp_ep_close_nbx(p->ep, &cp);
  for (int turns = 0; UCS_PTR_IS_PTR(sp) && turns < 100000; turns++) {
    ucp_worker_progress(rig_engine_worker());
    if (ucp_request_check_status(sp) != UCS_INPROGRESS) break;
  }
  /* Released even while still under way: UCX frees it once it ends, and a
   * request left unreleased aborts the worker's destroy (UCX 1.13). */
  if (UCS_PTR_IS_PTR(sp)) ucp_request_free(sp);
}

void rig_endpoint_leave(rig_endpoint *p, rig_rail *r, bool force) {
  for (size_t i = 0; r && i < p->rails.n; i++)
    if (rail_at(p, i) == r) {
      rig_array_remove(&p->rails, i);
      break;
    }
  if (--p->refs > 0) return;
  for (rig_endpoint **at = &peers; *at; at = &(*at)->next)
    if (*at == p) {
      *at = p->next;
      break;
    }
  peer_close(p, force);
  rig_array_free(&p->rails);
  free(p);
}
