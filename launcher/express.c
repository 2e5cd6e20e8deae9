/* The express path's areas and the operations on them (express.h). A
 * slot's value is stored with release after its bytes, read with acquire
 * before them; sleeping and waking are futexes in the shared memory, each
 * side saying it sleeps before it looks a last time, and the other looking
 * whether it sleeps after it stored (both with full fences), so no wake is
 * missed; every sleep is bounded all the same. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <sys/uio.h>
#include <unistd.h>

#include "base/env.h"
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

static void ring_wake(ex_ring *ring) {
  atomic_thread_fence(memory_order_seq_cst);
  if (atomic_load_explicit(&ring->sleeping, memory_order_relaxed)) {
    atomic_fetch_add(&ring->bell, 1);
    rig_futex_wake_shared(&ring->bell, 1);
  }
}

void rig_express_ring_wake(ex_ring *ring) {
  atomic_fetch_add(&ring->bell, 1);
  rig_futex_wake_shared(&ring->bell, 1);
}

/* Value's slot, if the hand-over it last held (value - EX_RING) is done. */
static ex_slot *claim(ex_ring *ring, const ex_timeline *done, uint64_t value) {
  if (value > EX_RING && atomic_load_explicit(&done->value, memory_order_acquire) < value - EX_RING)
    return NULL;
  return &ring->slots[value % EX_RING];
}

static void publish(ex_ring *ring, ex_slot *s, uint64_t value, uint32_t kind, size_t len) {
  s->len = (uint32_t)len;
  s->kind = kind;
  atomic_store_explicit(&s->value, value, memory_order_release);
  ring_wake(ring);
}

bool rig_express_post(ex_ring *ring, const ex_timeline *done, uint64_t value, const void *bytes,
                      size_t len) {
  ex_slot *s = len <= sizeof s->bytes ? claim(ring, done, value) : NULL;
  if (!s) return false;
  memcpy(s->bytes, bytes, len);
  publish(ring, s, value, EX_WORDS, len);
  return true;
}

bool rig_express_copy_in(ex_ring *ring, const ex_timeline *done, uint64_t value, uint64_t memory,
                         uint64_t offset, const void *src, size_t len) {
  bool inline_ = len <= sizeof ring->slots[0].bytes - sizeof(ex_copy);
  if (!inline_ && !ring->far) return false;
  ex_slot *s = claim(ring, done, value);
  if (!s) return false;
  ex_copy c = {memory, offset, len, (uint64_t)(uintptr_t)src};
  memcpy(s->bytes, &c, sizeof c);
  if (inline_) memcpy(s->bytes + sizeof c, src, len);
  publish(ring, s, value, inline_ ? EX_IN : EX_IN_FAR, sizeof c + (inline_ ? len : 0));
  return true;
}

bool rig_express_copy_out(ex_ring *ring, const ex_timeline *done, uint64_t value, uint64_t memory,
                          uint64_t offset, void *dst, size_t len) {
  ex_slot *s = ring->far ? claim(ring, done, value) : NULL;
  if (!s) return false;
  ex_copy c = {memory, offset, len, (uint64_t)(uintptr_t)dst};
  memcpy(s->bytes, &c, sizeof c);
  publish(ring, s, value, EX_OUT_FAR, sizeof c);
  return true;
}

bool rig_express_copy_near(ex_ring *ring, const ex_timeline *done, uint64_t value, void *dst,
                           const void *src, size_t len) {
  ex_slot *s = claim(ring, done, value);
  if (!s) return false;
  memcpy(dst, src, len);
  publish(ring, s, value, EX_DONE, 0);
  return true;
}

void rig_express_mem_add(express *ex, int m, uint64_t id, const void *address, size_t len) {
  if (!ex || !ex->mems || m <= 0 || m >= ex->machines) return;
  rig_area *a = map(address, len, m);
  if (!a) return;
  pthread_mutex_lock(&ex->lock);
  struct ex_mems *t = &ex->mems[m];
  if (id >= t->n) {
    size_t n = t->n ? t->n : 64;
    while (n <= id) n *= 2;
    rig_area **bigger = realloc(t->by_id, n * sizeof *bigger);
    if (bigger) {
      memset(bigger + t->n, 0, (n - t->n) * sizeof *bigger);
      t->by_id = bigger;
      t->n = n;
    }
  }
  if (id < t->n) {
    rig_area_release(t->by_id[id]);
    t->by_id[id] = a;
    a = NULL;
  }
  pthread_mutex_unlock(&ex->lock);
  rig_area_release(a);
}

unsigned char *rig_express_mem(express *ex, int m, uint64_t id, uint64_t *length) {
  if (!ex || !ex->mems || m <= 0 || m >= ex->machines) return NULL;
  pthread_mutex_lock(&ex->lock);
  struct ex_mems *t = &ex->mems[m];
  rig_area *a = id < t->n ? t->by_id[id] : NULL;
  pthread_mutex_unlock(&ex->lock);
  if (a) *length = rig_area_length(a);
  return a ? rig_area_base(a) : NULL;
}

void rig_express_mem_drop(express *ex, int m, uint64_t id) {
  if (!ex || !ex->mems || m <= 0 || m >= ex->machines) return;
  pthread_mutex_lock(&ex->lock);
  struct ex_mems *t = &ex->mems[m];
  rig_area *a = id < t->n ? t->by_id[id] : NULL;
  if (a) t->by_id[id] = NULL;
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
  if (!ex || !ex->my_timelines || !bytes || rig_area_make(bytes, &a, &err) != RIG_OK) return NULL;
  if (rig_buffer_adopt(rig_area_base(a), bytes, area_gone, a, &b, &err) != RIG_OK) {
    rig_area_release(a);
    return NULL;
  }
  rig_area_address(a, address, len);
  return b;
}

/* Far copies in pieces of at most this, staged where the agent's memory is
 * not the host's. */
#define FAR_PIECE (8u << 20)

/* One process_vm_readv or writev, to the end (it may move fewer bytes). */
static bool far_move(int pid, bool in, unsigned char *here, uint64_t there, size_t n) {
  while (n) {
    struct iovec local = {here, n}, remote = {(void *)(uintptr_t)there, n};
    ssize_t got = in ? process_vm_readv(pid, &local, 1, &remote, 1, 0)
                     : process_vm_writev(pid, &local, 1, &remote, 1, 0);
    if (got <= 0) return false;
    here += got;
    there += (uint64_t)got;
    n -= (size_t)got;
  }
  return true;
}

rig_status rig_express_window_open(express *ex, uint64_t address, uint64_t length, rig_error *err) {
  struct ex_windows *w = &ex->windows;
  pthread_mutex_lock(&w->lock);
  if (w->n == w->room) {
    size_t room = w->room ? 2 * w->room : 16;
    uint64_t(*bigger)[2] = realloc(w->at, room * sizeof *bigger);
    if (!bigger) {
      pthread_mutex_unlock(&w->lock);
      return rig_error_set(err, RIG_ENOMEM, "out of memory for a window of far copies");
    }
    w->at = bigger;
    w->room = room;
  }
  w->at[w->n][0] = address;
  w->at[w->n++][1] = length;
  pthread_mutex_unlock(&w->lock);
  return RIG_OK;
}

void rig_express_window_close(express *ex, uint64_t address, uint64_t length) {
  struct ex_windows *w = &ex->windows;
  pthread_mutex_lock(&w->lock);
  for (size_t i = 0; i < w->n; i++)
    if (w->at[i][0] == address && w->at[i][1] == length) {
      w->at[i][0] = w->at[w->n - 1][0];
      w->at[i][1] = w->at[--w->n][1];
      break;
    }
  pthread_mutex_unlock(&w->lock);
}

/* Whether [address, address + length) lies inside one open window. */
static bool in_window(express *ex, uint64_t address, uint64_t length) {
  struct ex_windows *w = &ex->windows;
  bool inside = false;
  pthread_mutex_lock(&w->lock);
  for (size_t i = 0; i < w->n && !inside; i++)
    inside = address >= w->at[i][0] && length <= w->at[i][1] &&
             address - w->at[i][0] <= w->at[i][1] - length;
  pthread_mutex_unlock(&w->lock);
  return inside;
}

rig_status rig_express_far(express *ex, bool in, rig_buffer *b, uint64_t offset, uint64_t address,
                           uint64_t length, rig_error *err) {
  if (!in_window(ex, address, length))
    return rig_error_set(err, RIG_EREFUSED,
                         "a far copy of %llu bytes at 0x%llx, outside the controller's memory "
                         "open to this machine",
                         (unsigned long long)length, (unsigned long long)address);
  if (offset > rig_buffer_length(b) || length > rig_buffer_length(b) - offset)
    return rig_error_set(err, RIG_EREFUSED, "%llu bytes at %llu past its memory",
                         (unsigned long long)length, (unsigned long long)offset);
  rig_status st = rig_buffer_wait(b, in ? RIG_ACCESS_READ_WRITE : RIG_ACCESS_READ, err);
  if (st != RIG_OK) return st;
  unsigned char *host = rig_buffer_host(b);
  if (host) {
    if (!far_move(ex->controller, in, host + offset, address, length))
      return rig_error_set(err, RIG_ESYS, "a copy %s the controller's memory: %s",
                           in ? "from" : "into", strerror(errno));
    return RIG_OK;
  }
  unsigned char *stage = malloc(length < FAR_PIECE ? (length ? length : 1) : FAR_PIECE);
  if (!stage) return rig_error_set(err, RIG_ENOMEM, "out of memory for a copy");
  for (uint64_t at = 0; st == RIG_OK && at < length; at += FAR_PIECE) {
    size_t n = length - at < FAR_PIECE ? (size_t)(length - at) : FAR_PIECE;
    if (!in) st = rig_buffer_read(b, offset + at, stage, n, err);
    if (st == RIG_OK && !far_move(ex->controller, in, stage, address + at, n))
      st = rig_error_set(err, RIG_ESYS, "a copy %s the controller's memory: %s",
                         in ? "from" : "into", strerror(errno));
    if (st == RIG_OK && in) st = rig_buffer_write(b, offset + at, stage, n, err);
  }
  free(stage);
  return st;
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
    for (size_t i = 0; i < ex->mems[m].n; i++) rig_area_release(ex->mems[m].by_id[i]);
    free(ex->mems[m].by_id);
  }
  free(ex->mems);
  pthread_mutex_destroy(&ex->lock);
  free(ex->windows.at);
  pthread_mutex_destroy(&ex->windows.lock);
  free(ex->rings);
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
    if (rig_env_get()->trace) fprintf(stderr, "progrun: runs go by frames: %s\n", err.message);
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
    if (rig_env_get()->trace)
      fprintf(stderr, "progrun: rank %d: runs go by frames: %s\n", rank, err.message);
    return NULL;
  }
  return a;
}

static const uint64_t far_probe = UINT64_C(0x726166676972); /* "rigfar" */

const void *rig_express_far_probe(void) {
  return &far_probe;
}

express *rig_express_new(int machines, uint32_t stride) {
  express *ex = calloc(1, sizeof *ex);
  if (!ex) return NULL;
  pthread_mutex_init(&ex->lock, NULL);
  pthread_mutex_init(&ex->windows.lock, NULL);
  ex->machines = machines;
  ex->stride = stride;
  return ex;
}

bool rig_express_make_timelines(express *ex, const void **addr, size_t *len) {
  *addr = NULL;
  *len = 0;
  ex->rings = calloc((size_t)ex->machines, sizeof *ex->rings);
  ex->mems = calloc((size_t)ex->machines, sizeof *ex->mems);
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

void rig_express_map_timelines(express *ex, const void *addr, size_t len, int rank, int controller,
                               uint64_t probe_at, size_t ndevices) {
  ex->controller = controller;
  if (!ex->my_rings || !len) return;
  ex->my_timelines = map(addr, len, rank);
  /* Far copies where this process may read (and so write) the
   * controller's memory: before the rings go, so the controller sees it. */
  uint64_t probe = 0;
  if (ex->my_timelines &&
      far_move(controller, true, (unsigned char *)&probe, probe_at, sizeof probe) &&
      probe == far_probe)
    for (uint32_t i = 0; i < ndevices; i++) rig_express_my_ring(ex, i)->far = 1;
}

void rig_express_map_rings(express *ex, int m, const void *addr, size_t len) {
  if (ex->timelines && ex->rings && m > 0 && m < ex->machines) ex->rings[m] = map(addr, len, m);
}
