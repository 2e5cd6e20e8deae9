/* The memory the rails layer makes: segments UCX allocates on the engine's
 * context (posix shared memory, mode 0600 and unlinked, where the host
 * has it: ucx.c), zero-filled, with their packed remote keys, and the pool
 * that packs small areas into shared chunks, so that a thousand small
 * rails hold a few dozen segments (each holds a file descriptor) rather
 * than three thousand. Every segment holds the engine, whose context it
 * is. Before anything is made, what is asked is checked against what the
 * host can give: half of what /dev/shm has free (the peer's end on the
 * same host takes as much again) and the host's memory. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "base/bytes.h"
#include "rails_internal.h"

/* The pool: chunks of CHUNK_UNITS units (a page or 4 KiB, whichever is
 * larger); a piece of up to POOL_UNITS units is cut from a chunk, a larger
 * one is a segment of its own. */
#define CHUNK_UNITS 64
#define POOL_UNITS  16

typedef struct chunk {
  struct chunk *next;
  rig_seg seg;
  uint64_t used; /* a bit per unit */
} chunk;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static chunk *chunks;   /* under lock */
static size_t segments; /* under lock: segments made and not freed */
static uint64_t held;   /* under lock: their bytes */

static size_t unit_bytes(void) {
  long page = sysconf(_SC_PAGESIZE);
  return page > 4096 ? (size_t)page : 4096;
}

rig_status rig_shm_room(uint64_t bytes, bool shared, rig_error *err) {
  char want[32], has[32];
  rig_say_bytes(bytes, want, sizeof want);
  if (shared) {
    struct statvfs fs;
    if (statvfs("/dev/shm", &fs) != 0)
      return rig_error_set(err, RIG_ENOMEM,
                           "its end needs %s of shared memory, and /dev/shm cannot be read: %s",
                           want, strerror(errno));
    uint64_t free_bytes = (uint64_t)fs.f_bavail * fs.f_frsize;
    if (bytes > free_bytes / 2) {
      rig_say_bytes(free_bytes, has, sizeof has);
      return rig_error_set(err, RIG_ENOMEM,
                           "its end needs %s of shared memory, past half of the %s /dev/shm has "
                           "free",
                           want, has);
    }
  }
  rig_device *host = rig_host();
  uint64_t budget = host ? rig_device_facts_of(host)->budget : 0;
  pthread_mutex_lock(&lock);
  uint64_t now = held;
  pthread_mutex_unlock(&lock);
  if (budget && (bytes > budget || now > budget - bytes)) {
    rig_say_bytes(budget, has, sizeof has);
    char taken[32];
    rig_say_bytes(now, taken, sizeof taken);
    return rig_error_set(err, RIG_ENOMEM,
                         "its end needs %s of memory, past the host's %s (%s of it held already)",
                         want, has, taken);
  }
  return RIG_OK;
}

rig_status rig_rail_room(uint64_t bytes, rig_error *err) {
  return rig_shm_room(bytes, true, err);
}

/* ---- segments ------------------------------------------------------------------ */

/* Each posix segment holds a file descriptor (the one its peers open
 * through /proc): a process holds at most half of its descriptors' limit in
 * segments, so that a rail past that is refused rather than the process
 * running out of descriptors. */
static rig_status check_count(rig_error *err) {
  if (!rig_engine_shared()) return RIG_OK;
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return RIG_OK;
  if (segments < rl.rlim_cur / 2) return RIG_OK;
  return rig_error_set(err, RIG_ENOMEM,
                       "%zu shared-memory segments are held already, the most a process holds "
                       "(half of its %llu file descriptors)",
                       segments, (unsigned long long)rl.rlim_cur);
}

/* Counts a segment of `length` in (or out, with -1). */
static void count(int sign, size_t length) {
  pthread_mutex_lock(&lock);
  segments += (size_t)sign;
  held += (uint64_t)sign * length;
  pthread_mutex_unlock(&lock);
}

rig_status rig_seg_make(size_t length, rig_seg *out, rig_error *err) {
  *out = (rig_seg){0};
  rig_status st = rig_engine_hold(err);
  if (st != RIG_OK) return st;
  pthread_mutex_lock(&lock);
  st = check_count(err);
  pthread_mutex_unlock(&lock);
  if (st != RIG_OK) {
    rig_engine_drop();
    return st;
  }
  ucp_mem_map_params_t p = {.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS |
                                          UCP_MEM_MAP_PARAM_FIELD_LENGTH |
                                          UCP_MEM_MAP_PARAM_FIELD_FLAGS,
                            .address = NULL,
                            .length = length,
                            .flags = UCP_MEM_MAP_ALLOCATE};
  ucp_mem_attr_t attr = {.field_mask = UCP_MEM_ATTR_FIELD_ADDRESS};
  const char *what = "ucp_mem_map";
  ucs_status_t us = ucp_mem_map(rig_engine_context(), &p, &out->memh);
  if (us == UCS_OK) {
    what = "ucp_mem_query";
    us = ucp_mem_query(out->memh, &attr);
    if (us == UCS_OK) what = "ucp_rkey_pack";
    if (us == UCS_OK)
      us = ucp_rkey_pack(rig_engine_context(), out->memh, &out->rkey, &out->rkey_len);
    if (us != UCS_OK) ucp_mem_unmap(rig_engine_context(), out->memh);
  }
  if (us != UCS_OK) {
    *out = (rig_seg){0};
    rig_engine_drop();
    char size[32];
    rig_say_bytes(length, size, sizeof size);
    return rig_error_set(err, RIG_ENOMEM, "cannot make %s of %s memory: UCX: %s: %s", size,
                         rig_engine_shared() ? "shared" : "host", what, ucs_status_string(us));
  }
  count(1, length);
  out->base = attr.address;
  out->length = length;
  memset(out->base, 0, length);
  return RIG_OK;
}

void rig_seg_free(rig_seg *s) {
  if (!s->memh) return;
  ucp_rkey_buffer_release(s->rkey);
  ucp_mem_unmap(rig_engine_context(), s->memh);
  count(-1, s->length);
  *s = (rig_seg){0};
  rig_engine_drop();
}

/* ---- pieces ------------------------------------------------------------------------ */

/* The first of n free units in c at or after 0, or -1. */
static int find_run(const chunk *c, unsigned n) {
  for (unsigned at = 0; at + n <= CHUNK_UNITS; at++) {
    uint64_t mask = (n == 64 ? ~UINT64_C(0) : (UINT64_C(1) << n) - 1) << at;
    if (!(c->used & mask)) return (int)at;
  }
  return -1;
}

/* Cuts n units from a chunk with room (under lock): false when none has. */
static bool cut(rig_piece *p, unsigned n) {
  size_t unit = unit_bytes();
  for (chunk *c = chunks; c; c = c->next) {
    int at = find_run(c, n);
    if (at < 0) continue;
    p->chunk = c;
    p->first = (unsigned)at;
    p->base = c->seg.base + (size_t)at * unit;
    c->used |= (n == 64 ? ~UINT64_C(0) : (UINT64_C(1) << n) - 1) << at;
    memset(p->base, 0, (size_t)n * unit);
    return true;
  }
  return false;
}

/* A piece of n units from the pool, with a new chunk while none has room
 * (other threads may take the room of the one just made). */
static rig_status pooled(rig_piece *p, unsigned n, rig_error *err) {
  pthread_mutex_lock(&lock);
  while (!cut(p, n)) {
    pthread_mutex_unlock(&lock);
    chunk *c = calloc(1, sizeof *c);
    if (!c) return rig_error_set(err, RIG_ENOMEM, "out of memory for a rail's areas");
    rig_status st = rig_seg_make(CHUNK_UNITS * unit_bytes(), &c->seg, err);
    if (st != RIG_OK) {
      free(c);
      return st;
    }
    pthread_mutex_lock(&lock);
    c->next = chunks;
    chunks = c;
  }
  pthread_mutex_unlock(&lock);
  return RIG_OK;
}

rig_status rig_piece_make(size_t length, rig_piece **out, rig_error *err) {
  rig_piece *p = calloc(1, sizeof *p);
  if (!p) return rig_error_set(err, RIG_ENOMEM, "out of memory for a rail's areas");
  size_t unit = unit_bytes();
  size_t n = length ? (length + unit - 1) / unit : 1;
  p->length = length;
  p->pages = (unsigned)(n <= POOL_UNITS ? n : 0);
  rig_status st;
  if (n <= POOL_UNITS) {
    st = pooled(p, (unsigned)n, err);
  } else {
    st = rig_seg_make(length, &p->own, err);
    p->base = p->own.base;
  }
  if (st != RIG_OK) {
    free(p);
    return st;
  }
  *out = p;
  return RIG_OK;
}

const rig_seg *rig_piece_seg(const rig_piece *p) {
  return p->chunk ? &p->chunk->seg : &p->own;
}

void rig_piece_free(rig_piece *p) {
  if (!p) return;
  if (!p->chunk) {
    rig_seg_free(&p->own);
    free(p);
    return;
  }
  unsigned n = p->pages;
  pthread_mutex_lock(&lock);
  chunk *c = p->chunk;
  c->used &= ~((n == 64 ? ~UINT64_C(0) : (UINT64_C(1) << n) - 1) << p->first);
  bool empty = c->used == 0;
  if (empty)
    for (chunk **at = &chunks; *at; at = &(*at)->next)
      if (*at == c) {
        *at = c->next;
        break;
      }
  pthread_mutex_unlock(&lock);
  if (empty) {
    rig_seg_free(&c->seg);
    free(c);
  }
  free(p);
}

static void piece_gone(void *ctx) {
  rig_piece_free(ctx);
}

rig_status rig_piece_buffer(rig_piece *p, rig_buffer **out, rig_error *err) {
  return rig_buffer_adopt(p->base, p->length, piece_gone, p, out, err);
}
