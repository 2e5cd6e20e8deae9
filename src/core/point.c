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

/* The wait on a device whose driver has a sleep hook: in bounded turns,
 * so that a loss is seen. */
static rig_status wait_in_driver(rig_device *d, uint64_t v, rig_error *err) {
  for (;;) {
    if (word_passed(d, v)) return RIG_OK;
    if (rig_device_lost_now(d)) return rig_device_lost_error(d, err);
    d->drv->sleep(d->st, v, 1000000);
  }
}

rig_status rig_point_wait(rig_point p, rig_error *err) {
  if (p == RIG_POINT_REACHED) return RIG_OK;
  rig_device *d = rig_device_at(rig_point_device(p));
  if (!d) return rig_error_set(err, RIG_EINVAL, "a point of no device (%u)", rig_point_device(p));
  uint64_t v = rig_point_value(p);
  if (v > atomic_load_explicit(&d->next, memory_order_acquire) && !word_passed(d, v))
    return rig_error_set(err, RIG_EINVAL, "a point of %s past its last work (%llu of %llu)",
                         d->facts.name, (unsigned long long)v,
                         (unsigned long long)atomic_load(&d->next));
  /* About a microsecond of spinning, then a few yields. */
  for (int i = 0; i < 256; i++) {
    if (word_passed(d, v)) return RIG_OK;
    rig_cpu_relax();
  }
  /* A driver that drives or polls its device waits its own way from here
   * (its sleep hook). */
  if (d->drv->sleep) return wait_in_driver(d, v, err);
  /* Then yields, for up to about 50 us: the work of a device on another
   * thread (or machine) is often that close, and a sleep costs a wake. */
  struct timespec t0, t;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (int i = 0;; i++) {
    if (word_passed(d, v)) return RIG_OK;
    if (rig_device_lost_now(d)) return rig_device_lost_error(d, err);
    sched_yield();
    if (i % 8 == 7) {
      clock_gettime(CLOCK_MONOTONIC, &t);
      if ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) > 50000) break;
    }
  }
  for (;;) {
    atomic_fetch_add_explicit(&d->sleepers, 1, memory_order_seq_cst);
    uint32_t seq = atomic_load_explicit(&d->seq, memory_order_seq_cst);
    bool done = word_passed(d, v), lost = rig_device_lost_now(d);
    /* The timeout only bounds the cost of a missed wake; none is expected. */
    if (!done && !lost) rig_futex_wait(&d->seq, seq, 100000000L);
    atomic_fetch_sub_explicit(&d->sleepers, 1, memory_order_seq_cst);
    if (word_passed(d, v)) return RIG_OK;
    if (rig_device_lost_now(d)) return rig_device_lost_error(d, err);
  }
}
