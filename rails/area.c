/* Shared areas: memory UCX allocates (a segment, shm.c: posix shared
 * memory, mode 0600 and unlinked) and a peer on the same host maps with its
 * remote key (ucp_rkey_ptr), so that both read and write it with plain
 * loads and stores, and neither needs the worker per access. Everything
 * that uses the worker (packing, endpoints, unpacking, closing) runs on the
 * rail thread as an engine call. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rails_internal.h"

#define AREA_MAGIC UINT64_C(0x61657261676972) /* "rigarea" */

/* What rig_area_address gives: this, the worker's address, the key. */
typedef struct area_wire {
  uint64_t magic;
  char host[64];
  uint64_t base, length;
  uint64_t worker_len, rkey_len;
} area_wire;

struct rig_area {
  void *base;
  size_t length;
  rig_seg seg;        /* made here */
  rig_endpoint *peer; /* mapped: the endpoint the key was unpacked on */
  ucp_rkey_h rkey;    /* mapped */
  void *address;
  size_t address_len;
};

/* The segment and the address bytes of a made area. */
static rig_status make_here(rig_area *a, rig_error *err) {
  rig_status st = rig_seg_make(a->length, &a->seg, err);
  if (st != RIG_OK) return st;
  a->base = a->seg.base;
  const void *worker;
  size_t worker_len;
  rig_engine_worker_address(&worker, &worker_len);
  a->address_len = sizeof(area_wire) + worker_len + a->seg.rkey_len;
  unsigned char *at = a->address = malloc(a->address_len);
  if (!at) return rig_error_set(err, RIG_ENOMEM, "out of memory for an area");
  area_wire w = {AREA_MAGIC, {0},        (uint64_t)(uintptr_t)a->base,
                 a->length,  worker_len, a->seg.rkey_len};
  gethostname(w.host, sizeof w.host - 1);
  memcpy(at, &w, sizeof w);
  memcpy(at + sizeof w, worker, worker_len);
  memcpy(at + sizeof w + worker_len, a->seg.rkey, a->seg.rkey_len);
  return RIG_OK;
}

typedef struct map_args {
  rig_area *a;
  const unsigned char *worker, *key;
  size_t worker_len;
  uint64_t base;
} map_args;

static rig_status map_on_thread(void *arg, rig_error *err) {
  map_args *m = arg;
  rig_area *a = m->a;
  /* One host: no peer-failure handling (it keeps UCX 1.13 off shared
   * memory); the job learns of a lost peer itself. */
  rig_status rs = rig_endpoint_take(m->worker, m->worker_len, false, &a->peer, err);
  if (rs != RIG_OK) return rs;
  ucs_status_t st;
  if ((st = ucp_ep_rkey_unpack(rig_endpoint_ep(a->peer), m->key, &a->rkey)) != UCS_OK) {
    a->rkey = NULL;
    return rig_ucx_error(err, "ucp_ep_rkey_unpack", st);
  }
  /* Only transports that map the peer's memory give a pointer. */
  if ((st = ucp_rkey_ptr(a->rkey, m->base, &a->base)) != UCS_OK)
    return rig_error_set(err, RIG_EREFUSED, "UCX: ucp_rkey_ptr: %s: the area is not mapped here",
                         ucs_status_string(st));
  return RIG_OK;
}

static rig_status unmap_on_thread(void *arg, rig_error *err) {
  (void)err;
  rig_area *a = arg;
  if (a->rkey) ucp_rkey_destroy(a->rkey);
  if (a->peer) rig_endpoint_leave(a->peer, NULL, false);
  return RIG_OK;
}

static void area_free(rig_area *a) {
  rig_error err;
  if (a->peer || a->rkey) rig_engine_call(unmap_on_thread, a, &err);
  rig_seg_free(&a->seg);
  rig_engine_drop();
  free(a->address);
  free(a);
}

rig_status rig_area_make(size_t bytes, rig_area **out, rig_error *err) {
  rig_area *a = calloc(1, sizeof *a);
  if (!a) return rig_error_set(err, RIG_ENOMEM, "out of memory for an area");
  a->length = bytes ? bytes : 1;
  rig_status st = rig_engine_hold(err);
  if (st != RIG_OK) {
    free(a);
    return st;
  }
  if ((st = make_here(a, err)) != RIG_OK) {
    area_free(a);
    return st;
  }
  *out = a;
  return RIG_OK;
}

void rig_area_address(const rig_area *a, const void **bytes, size_t *len) {
  *bytes = a->address;
  *len = a->address_len;
}

rig_status rig_area_map(const void *bytes, size_t len, rig_area **out, rig_error *err) {
  area_wire w;
  if (len < sizeof w) return rig_error_set(err, RIG_EINVAL, "%zu bytes are not an area's", len);
  memcpy(&w, bytes, sizeof w);
  size_t rest = len - sizeof w;
  if (w.magic != AREA_MAGIC || w.worker_len == 0 || w.rkey_len == 0 || w.worker_len > rest ||
      w.rkey_len != rest - w.worker_len)
    return rig_error_set(err, RIG_EINVAL, "%zu bytes are not an area's", len);
  char host[64] = {0};
  gethostname(host, sizeof host - 1);
  w.host[sizeof w.host - 1] = '\0';
  if (strcmp(host, w.host) != 0)
    return rig_error_set(err, RIG_EREFUSED, "an area of host %s is not mapped on %s", w.host, host);
  rig_area *a = calloc(1, sizeof *a);
  if (!a) return rig_error_set(err, RIG_ENOMEM, "out of memory for an area");
  a->length = w.length;
  rig_status st = rig_engine_hold(err);
  if (st != RIG_OK) {
    free(a);
    return st;
  }
  const unsigned char *at = (const unsigned char *)bytes + sizeof w;
  map_args m = {a, at, at + w.worker_len, w.worker_len, w.base};
  if ((st = rig_engine_call(map_on_thread, &m, err)) != RIG_OK) {
    area_free(a);
    return st;
  }
  *out = a;
  return RIG_OK;
}

void *rig_area_base(const rig_area *a) {
  return a->base;
}

size_t rig_area_length(const rig_area *a) {
  return a->length;
}

void rig_area_release(rig_area *a) {
  if (a) area_free(a);
}
