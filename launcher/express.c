/* The express path's areas and the operations on them (express.h). A
 * slot's value is stored with release after its bytes, read with acquire
 * before them; sleeping and waking are futexes in the shared memory, each
 * side saying it sleeps before it looks a last time, and the other looking
 * whether it sleeps after it stored (both with full fences), so no wake is
 * missed; every sleep is bounded all the same. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "base/env.h"
#include "base/log.h"
#include "base/sync.h"
#include "express.h"

static rig_area *map(const void *addr, size_t len, int rank);

/* ---- the operations -------------------------------------------------------------- */

ex_timeline *rig_express_timeline(express *ex, int m, uint32_t i) {
  if (!ex || !ex->timelines || m <= 0 || i >= ex->stride) return NULL;
  return (ex_timeline *)rig_area_base(ex->timelines) + (size_t)m * ex->stride + i;
}

ex_ring *rig_express_ring(express *ex, int m, uint32_t i) {
  if (!ex || !ex->rings || !ex->rings[m]) return NULL;
  if ((i + 1) * sizeof(ex_ring) > rig_area_length(ex->rings[m])) return NULL;
  return (ex_ring *)rig_area_base(ex->rings[m]) + i;
}

ex_ring *rig_express_my_ring(express *ex, uint32_t i) {
  if (!ex || !ex->my_rings || (i + 1) * sizeof(ex_ring) > rig_area_length(ex->my_rings))
    return NULL;
  return (ex_ring *)rig_area_base(ex->my_rings) + i;
}

ex_timeline *rig_express_my_timeline(express *ex, int rank, uint32_t i) {
  if (!ex || !ex->my_timelines || i >= ex->stride) return NULL;
  size_t at = ((size_t)rank * ex->stride + i + 1) * sizeof(ex_timeline);
  if (at > rig_area_length(ex->my_timelines)) return NULL;
  return (ex_timeline *)rig_area_base(ex->my_timelines) + (size_t)rank * ex->stride + i;
}

/* The bell moves with every hand-over (an executor watching the worker
 * for messages sleeps on it as on a futex, rig_peer_wait); the futex is
 * woken only for an executor asleep on it. */
static void ring_wake(ex_ring *ring) {
  atomic_fetch_add(&ring->bell, 1);
  atomic_thread_fence(memory_order_seq_cst);
  if (atomic_load_explicit(&ring->sleeping, memory_order_relaxed))
    rig_futex_wake_shared(&ring->bell, 1);
}

void rig_express_ring_wake(ex_ring *ring) {
  atomic_fetch_add(&ring->bell, 1);
  rig_futex_wake_shared(&ring->bell, 1);
  rig_peer_nudge();
}

ex_slot *rig_express_claim(ex_ring *ring, const ex_timeline *done, uint64_t value) {
  if (value > EX_RING && atomic_load_explicit(&done->value, memory_order_acquire) < value - EX_RING)
    return NULL;
  return &ring->slots[value % EX_RING];
}

void rig_express_publish(ex_ring *ring, uint64_t value, uint32_t kind, const void *head,
                         size_t hlen, const void *bytes, size_t len) {
  ex_slot *s = &ring->slots[value % EX_RING];
  if (hlen) memcpy(s->bytes, head, hlen);
  if (len) memcpy(s->bytes + hlen, bytes, len);
  s->len = (uint32_t)(hlen + len);
  s->kind = kind;
  atomic_store_explicit(&s->value, value, memory_order_release);
  ring_wake(ring);
}

void rig_express_mem_add(express *ex, int m, uint64_t id, const void *address, size_t len) {
  if (!ex || !ex->mems || m <= 0 || m >= ex->machines) return;
  rig_area *a = map(address, len, m);
  if (!a) return;
  pthread_mutex_lock(&ex->lock);
  rig_area *old = rig_idtab_get(&ex->mems[m], id);
  if (rig_idtab_put(&ex->mems[m], id, a)) {
    rig_area_release(old);
    a = NULL;
  }
  pthread_mutex_unlock(&ex->lock);
  rig_area_release(a);
}

unsigned char *rig_express_mem(express *ex, int m, uint64_t id, uint64_t *length) {
  if (!ex || !ex->mems || m <= 0 || m >= ex->machines) return NULL;
  pthread_mutex_lock(&ex->lock);
  rig_area *a = rig_idtab_get(&ex->mems[m], id);
  pthread_mutex_unlock(&ex->lock);
  if (a) *length = rig_area_length(a);
  return a ? rig_area_base(a) : NULL;
}

void rig_express_mem_drop(express *ex, int m, uint64_t id) {
  if (!ex || !ex->mems || m <= 0 || m >= ex->machines) return;
  pthread_mutex_lock(&ex->lock);
  rig_area *a = rig_idtab_take(&ex->mems[m], id);
  pthread_mutex_unlock(&ex->lock);
  rig_area_release(a);
}

static void area_gone(void *ctx) {
  rig_area_release(ctx);
}

rig_buffer *rig_express_alloc(express *ex, uint64_t bytes, const void **address, size_t *len) {
  rig_area *a;
  rig_buffer *b;
  rig_error err;
  /* Shared memory is a file system of its own (/dev/shm, often small in
   * containers), where a page past its room is a SIGBUS, not an error:
   * only what fits easily goes there, the rest is the device's own. */
  struct statvfs fs;
  if (statvfs("/dev/shm", &fs) != 0 || bytes > (uint64_t)fs.f_bavail * fs.f_frsize / 4) return NULL;
  if (!ex || !bytes || rig_area_make(bytes, &a, &err) != RIG_OK) return NULL;
  if (rig_buffer_adopt(rig_area_base(a), bytes, area_gone, a, &b, &err) != RIG_OK) {
    rig_area_release(a);
    return NULL;
  }
  rig_area_address(a, address, len);
  return b;
}

const ex_slot *rig_express_peek(ex_ring *ring, uint64_t v) {
  const ex_slot *s = &ring->slots[v % EX_RING];
  return atomic_load_explicit(&s->value, memory_order_acquire) == v ? s : NULL;
}

void rig_express_report(ex_timeline *w, uint64_t value) {
  uint64_t old = atomic_load_explicit(&w->value, memory_order_relaxed);
  while (old < value && !atomic_compare_exchange_weak_explicit(
                            &w->value, &old, value, memory_order_release, memory_order_relaxed)) {
  }
  atomic_fetch_add_explicit(&w->seq, 1, memory_order_seq_cst);
  if (atomic_load_explicit(&w->waiters, memory_order_seq_cst))
    rig_futex_wake_shared(&w->seq, INT32_MAX);
}

void rig_express_sleep(ex_timeline *w, uint64_t value, int64_t timeout_ns) {
  atomic_fetch_add_explicit(&w->waiters, 1, memory_order_seq_cst);
  uint32_t seq = atomic_load_explicit(&w->seq, memory_order_seq_cst);
  if (atomic_load_explicit(&w->value, memory_order_acquire) < value)
    rig_futex_wait_shared(&w->seq, seq, timeout_ns);
  atomic_fetch_sub_explicit(&w->waiters, 1, memory_order_seq_cst);
}

/* ---- making and exchanging the areas --------------------------------------------------- */

void rig_express_free(express *ex) {
  if (!ex) return;
  rig_area_release(ex->my_timelines);
  rig_area_release(ex->my_rings);
  for (int m = 0; ex->rings && m < ex->machines; m++) rig_area_release(ex->rings[m]);
  for (int m = 0; ex->mems && m < ex->machines; m++) {
    for (uint64_t id = 1; id < rig_idtab_end(&ex->mems[m]); id++)
      rig_area_release(rig_idtab_get(&ex->mems[m], id));
    rig_idtab_free(&ex->mems[m]);
  }
  free(ex->mems);
  pthread_mutex_destroy(&ex->lock);
  pthread_mutex_destroy(&ex->windows.lock);
  free(ex->rings);
  free(ex->routes);
  rig_area_release(ex->timelines);
  free(ex);
}

/* An area made here, and its address; NULL where UCX cannot (the job then
 * goes by frames: not a failure). */
static rig_area *make(size_t bytes, const void **addr, size_t *len) {
  rig_area *a = NULL;
  rig_error err;
  *addr = NULL;
  *len = 0;
  if (rig_area_make(bytes, &a, &err) != RIG_OK) {
    rig_log(RIG_LOG_INFO, "runs go by frames: %s", err.message);
    return NULL;
  }
  rig_area_address(a, addr, len);
  return a;
}

static rig_area *map(const void *addr, size_t len, int rank) {
  rig_area *a = NULL;
  rig_error err;
  if (!len) return NULL;
  if (rig_area_map(addr, len, &a, &err) != RIG_OK) {
    rig_log(RIG_LOG_INFO, "rank %d: not mapped: %s", rank, err.message);
    return NULL;
  }
  return a;
}

express *rig_express_new(int machines, uint32_t stride) {
  express *ex = calloc(1, sizeof *ex);
  if (!ex) return NULL;
  pthread_mutex_init(&ex->lock, NULL);
  pthread_mutex_init(&ex->windows.lock, NULL);
  rig_array_init(&ex->windows.at, sizeof(ex_window), 0);
  ex->machines = machines;
  ex->stride = stride;
  return ex;
}

bool rig_express_make_timelines(express *ex, const void **addr, size_t *len) {
  *addr = NULL;
  *len = 0;
  ex->rings = calloc((size_t)ex->machines, sizeof *ex->rings);
  ex->mems = calloc((size_t)ex->machines, sizeof *ex->mems);
  for (int m = 0; ex->mems && m < ex->machines; m++) rig_idtab_init(&ex->mems[m], 0);
  if (!ex->rings || !ex->mems) return false;
  ex->timelines = make((size_t)ex->machines * ex->stride * sizeof(ex_timeline), addr, len);
  return ex->timelines != NULL;
}

bool rig_express_make_rings(express *ex, size_t ndevices, const void **addr, size_t *len) {
  *addr = NULL;
  *len = 0;
  ex->my_rings = make(ndevices * sizeof(ex_ring), addr, len);
  return ex->my_rings != NULL;
}

void rig_express_map_timelines(express *ex, const void *addr, size_t len, int rank) {
  if (ex->my_rings && len) ex->my_timelines = map(addr, len, rank);
}

void rig_express_map_rings(express *ex, int m, const void *addr, size_t len) {
  if (ex->timelines && ex->rings && m > 0 && m < ex->machines) ex->rings[m] = map(addr, len, m);
}
