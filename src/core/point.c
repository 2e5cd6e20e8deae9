/* Points: reached is one acquire load of the device's word; a wait spins
 * about a microsecond, then waits in the driver's sleep where it has one,
 * else yields a few times and sleeps on a futex the driver's signal wakes. */
#include <errno.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include "base/sync.h"
#include "core_internal.h"

static inline bool word_passed(const rig_device *d, uint64_t v) {
  return atomic_load_explicit(d->word, memory_order_acquire) >= v;
}

bool rig_point_reached(rig_point p) {
  if (p == RIG_POINT_REACHED) return true;
  rig_device *d = rig_device_at(rig_point_device(p));
  return d && word_passed(d, rig_point_value(p));
}

void rig_device_signal(rig_device *dev) {
  atomic_fetch_add_explicit(&dev->seq, 1, memory_order_seq_cst);
  if (atomic_load_explicit(&dev->sleepers, memory_order_seq_cst))
    rig_futex_wake(&dev->seq, INT32_MAX);
}

const _Atomic uint64_t *rig_point_word(rig_point p, uint64_t *value) {
  rig_device *d = p == RIG_POINT_REACHED ? NULL : rig_device_at(rig_point_device(p));
  if (!d) return NULL;
  *value = rig_point_value(p);
  return d->word;
}

/* Bumped at every loss, of any device (rig_core_lost): a wait on several
 * points, asleep on one device, wakes at another's loss. */
static _Atomic uint32_t losses;
static _Atomic uint32_t multi; /* threads in rig_points_wait */

void rig_core_lost(void) {
  atomic_fetch_add_explicit(&losses, 1, memory_order_seq_cst);
  if (!atomic_load_explicit(&multi, memory_order_seq_cst)) return;
  /* Every sleeper, whatever device it sleeps on, looks again: a loss is
   * rare, a sleeper on another device may be waiting for it. */
  for (size_t i = 0; i < rig_device_count(); i++) {
    rig_device *d = rig_device_in_place(i);
    if (d) rig_device_signal(d);
  }
}

/* The wait has something else to look at: a loss, when `seen` counts them. */
#define RIG_WAIT_AGAIN ((rig_status)-1)

static bool loss_since(const uint32_t *seen) {
  return seen && atomic_load_explicit(&losses, memory_order_seq_cst) != *seen;
}

/* The wait on a device whose driver has a sleep hook: in bounded turns,
 * so that a loss is seen. */
static rig_status wait_in_driver(rig_device *d, uint64_t v, const uint32_t *seen, rig_error *err) {
  for (;;) {
    if (word_passed(d, v)) return RIG_OK;
    if (rig_device_lost_now(d)) return rig_device_lost_error(d, err);
    if (loss_since(seen)) return RIG_WAIT_AGAIN;
    d->drv->sleep(d->st, v, 1000000);
  }
}

/* Waits until value v of d is reached, d is lost, or (seen given) any
 * device is lost: RIG_WAIT_AGAIN. */
static rig_status wait_value(rig_device *d, uint64_t v, const uint32_t *seen, rig_error *err) {
  /* About a microsecond of spinning, then a few yields. */
  for (int i = 0; i < 256; i++) {
    if (word_passed(d, v)) return RIG_OK;
    rig_cpu_relax();
  }
  /* A driver that drives or polls its device waits its own way from here
   * (its sleep hook). */
  if (d->drv->sleep) return wait_in_driver(d, v, seen, err);
  /* Then yields, for up to about 50 us: the work of a device on another
   * thread (or machine) is often that close, and a sleep costs a wake. */
  struct timespec t0, t;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (int i = 0;; i++) {
    if (word_passed(d, v)) return RIG_OK;
    if (rig_device_lost_now(d)) return rig_device_lost_error(d, err);
    if (loss_since(seen)) return RIG_WAIT_AGAIN;
    sched_yield();
    if (i % 8 == 7) {
      clock_gettime(CLOCK_MONOTONIC, &t);
      if ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) > 50000) break;
    }
  }
  for (;;) {
    atomic_fetch_add_explicit(&d->sleepers, 1, memory_order_seq_cst);
    uint32_t seq = atomic_load_explicit(&d->seq, memory_order_seq_cst);
    bool done = word_passed(d, v), lost = rig_device_lost_now(d), other = loss_since(seen);
    /* The timeout only bounds the cost of a missed wake; none is expected. */
    if (!done && !lost && !other) rig_futex_wait(&d->seq, seq, 100000000L);
    atomic_fetch_sub_explicit(&d->sleepers, 1, memory_order_seq_cst);
    if (word_passed(d, v)) return RIG_OK;
    if (rig_device_lost_now(d)) return rig_device_lost_error(d, err);
    if (loss_since(seen)) return RIG_WAIT_AGAIN;
  }
}

/* p's device, or an error for a point of no device or past its last work. */
static rig_status point_device(rig_point p, rig_device **out, rig_error *err) {
  rig_device *d = rig_device_at(rig_point_device(p));
  if (!d) return rig_error_set(err, RIG_EINVAL, "a point of no device (%u)", rig_point_device(p));
  uint64_t v = rig_point_value(p);
  if (v > atomic_load_explicit(&d->next, memory_order_acquire) && !word_passed(d, v))
    return rig_error_set(err, RIG_EINVAL, "a point of %s past its last work (%llu of %llu)",
                         d->facts.name, (unsigned long long)v,
                         (unsigned long long)atomic_load(&d->next));
  *out = d;
  return RIG_OK;
}

rig_status rig_point_wait(rig_point p, rig_error *err) {
  if (p == RIG_POINT_REACHED) return RIG_OK;
  rig_device *d;
  rig_status st = point_device(p, &d, err);
  return st == RIG_OK ? wait_value(d, rig_point_value(p), NULL, err) : st;
}

static rig_status points_wait(const rig_point *p, size_t n, rig_error *err) {
  for (;;) {
    uint32_t seen = atomic_load_explicit(&losses, memory_order_seq_cst);
    /* A lost device among them answers at once, whatever runs before it. */
    size_t first = n;
    for (size_t i = 0; i < n; i++) {
      if (p[i] == RIG_POINT_REACHED) continue;
      rig_device *d;
      rig_status st = point_device(p[i], &d, err);
      if (st != RIG_OK) return st;
      if (word_passed(d, rig_point_value(p[i]))) continue;
      if (rig_device_lost_now(d)) return rig_device_lost_error(d, err);
      if (first == n) first = i;
    }
    if (first == n) return RIG_OK;
    rig_device *d = rig_device_at(rig_point_device(p[first]));
    rig_status st = wait_value(d, rig_point_value(p[first]), &seen, err);
    if (st != RIG_OK && st != RIG_WAIT_AGAIN) return st;
  }
}

rig_status rig_points_wait(const rig_point *p, size_t n, rig_error *err) {
  atomic_fetch_add_explicit(&multi, 1, memory_order_seq_cst);
  rig_status st = points_wait(p, n, err);
  atomic_fetch_sub_explicit(&multi, 1, memory_order_seq_cst);
  return st;
}
