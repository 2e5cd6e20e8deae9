/* Stamps: per memory, each device's last read, write and unordered use.
 * Entries are claimed under a flag once per device and raised lock-free. */
#include <stdlib.h>
#include <string.h>

#include "base/assert.h"
#include "core_internal.h"

void rig_stamps_init(rig_stamps *s) {
  memset(s, 0, sizeof *s);
  atomic_flag_clear(&s->claiming);
}

void rig_stamps_fini(rig_stamps *s) {
  rig_stamp_chunk *c = atomic_load(&s->first.next);
  while (c) {
    rig_stamp_chunk *next = atomic_load(&c->next);
    free(c);
    c = next;
  }
}

static rig_stamp *find(rig_stamps *s, uint32_t dev1) {
  for (rig_stamp_chunk *c = &s->first; c; c = atomic_load_explicit(&c->next, memory_order_acquire))
    for (int i = 0; i < RIG_STAMPS_INLINE; i++) {
      uint32_t k = atomic_load_explicit(&c->e[i].dev1, memory_order_acquire);
      if (k == dev1) return &c->e[i];
      if (k == 0) return NULL; /* entries fill in order: none after a free one */
    }
  return NULL;
}

static rig_stamp *claim(rig_stamps *s, uint32_t dev1) {
  while (atomic_flag_test_and_set_explicit(&s->claiming, memory_order_acquire)) {
  }
  rig_stamp *e = find(s, dev1);
  rig_stamp_chunk *c = &s->first, *last = c;
  for (; !e && c; c = atomic_load(&c->next)) {
    last = c;
    for (int i = 0; i < RIG_STAMPS_INLINE; i++)
      if (atomic_load(&c->e[i].dev1) == 0) {
        e = &c->e[i];
        break;
      }
  }
  if (!e) {
    rig_stamp_chunk *fresh = calloc(1, sizeof *fresh);
    if (fresh) {
      e = &fresh->e[0];
      atomic_store_explicit(&last->next, fresh, memory_order_release);
    }
  }
  /* The key is published last: a reader that finds it sees zeroed values. */
  if (e) atomic_store_explicit(&e->dev1, dev1, memory_order_release);
  atomic_flag_clear_explicit(&s->claiming, memory_order_release);
  return e;
}

static void raise_to(_Atomic uint64_t *a, uint64_t v) {
  uint64_t old = atomic_load_explicit(a, memory_order_relaxed);
  while (old < v && !atomic_compare_exchange_weak_explicit(a, &old, v, memory_order_release,
                                                           memory_order_relaxed)) {
  }
}

bool rig_stamps_raise(rig_stamps *s, uint32_t dev, rig_use use, uint64_t value) {
  rig_assert(dev < RIG_DEVICE_INDICES);
  uint32_t dev1 = dev + 1; /* 0 marks a free entry */
  rig_stamp *e = find(s, dev1);
  if (!e) e = claim(s, dev1);
  if (!e) return false;
  raise_to(use == RIG_USE_READ    ? &e->read
           : use == RIG_USE_WRITE ? &e->write
                                  : &e->unordered,
           value);
  return true;
}

static uint64_t max3(uint64_t a, uint64_t b, uint64_t c) {
  uint64_t m = a > b ? a : b;
  return m > c ? m : c;
}

bool rig_stamps_reached(const rig_stamps *s) {
  for (const rig_stamp_chunk *c = &s->first; c; c = atomic_load(&c->next))
    for (int i = 0; i < RIG_STAMPS_INLINE; i++) {
      uint32_t k = atomic_load(&c->e[i].dev1);
      if (k == 0) return true;
      const rig_stamp *e = &c->e[i];
      uint64_t v = max3(atomic_load(&e->read), atomic_load(&e->write), atomic_load(&e->unordered));
      /* A device gone has no work left; a lost one may still run some
       * (rig_device_past). */
      rig_device *d = rig_device_at(k - 1);
      if (v && d && !rig_device_past(d, v)) return false;
    }
  return true;
}

rig_status rig_waitset_add(rig_waitset *ws, uint32_t dev, rig_point p, rig_error *err) {
  if (p == RIG_POINT_REACHED) return RIG_OK;
  uint32_t pd = rig_point_device(p);
  if (pd == dev) return RIG_OK; /* the device's own order covers it */
  for (size_t i = 0; i < ws->n; i++)
    if (rig_point_device(ws->p[i]) == pd) {
      if (rig_point_value(p) > rig_point_value(ws->p[i])) ws->p[i] = p;
      return RIG_OK;
    }
  if (rig_point_reached(p)) return RIG_OK;
  if (ws->n == RIG_WAITSET_MAX) return rig_point_wait(p, err);
  ws->p[ws->n++] = p;
  return RIG_OK;
}

rig_status rig_stamps_follow(const rig_stamps *s, uint32_t dev, rig_use use, rig_waitset *ws,
                             rig_error *err) {
  for (const rig_stamp_chunk *c = &s->first; c;
       c = atomic_load_explicit(&c->next, memory_order_acquire))
    for (int i = 0; i < RIG_STAMPS_INLINE; i++) {
      uint32_t k = atomic_load_explicit(&c->e[i].dev1, memory_order_acquire);
      if (k == 0) return RIG_OK;
      if (k - 1 == dev) continue;
      const rig_stamp *e = &c->e[i];
      uint64_t r = atomic_load_explicit(&e->read, memory_order_acquire);
      uint64_t w = atomic_load_explicit(&e->write, memory_order_acquire);
      uint64_t u = atomic_load_explicit(&e->unordered, memory_order_acquire);
      uint64_t v = use == RIG_USE_READ    ? (w > u ? w : u)
                   : use == RIG_USE_WRITE ? max3(r, w, u)
                                          : (r > w ? r : w);
      /* A device gone from the table (a closed job's proxy) has no work
       * left to follow. */
      if (v && rig_device_at(k - 1)) {
        rig_status st = rig_waitset_add(ws, dev, rig_point_make(k - 1, v), err);
        if (st != RIG_OK) return st;
      }
    }
  return RIG_OK;
}
