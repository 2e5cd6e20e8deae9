/* rail_wait.h: host code's wait for a rail's count (docs/rails.md), for
 * kernels that receive through a rail: include it and call rail_wait on
 * the address of a count (the Counts area's address + RIG_RAIL_ARRIVED_AT,
 * or + RIG_RAIL_SENT_AT). Installed with the examples; needs POSIX
 * (_POSIX_C_SOURCE 200809L) for nanosleep. */
#ifndef RIG_EXAMPLES_RAIL_WAIT_H
#define RIG_EXAMPLES_RAIL_WAIT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "rig/rig_rail.h"

/* Waits until the count at `count` reaches c, with acquire: what the rail
 * wrote before it (the transfer's bytes) is then visible. Spins briefly,
 * then sleeps 50 us at a time, so that a long wait costs no core. Returns
 * true when the count reached c, false when a failure raised it to
 * RIG_RAIL_RAISED (the job failed: the kernel should stop). */
static inline bool rail_wait(const void *count, uint64_t c) {
  const _Atomic uint64_t *p = (const _Atomic uint64_t *)count;
  for (unsigned spins = 0;; spins++) {
    uint64_t v = atomic_load_explicit(p, memory_order_acquire);
    if (v >= RIG_RAIL_RAISED) return false;
    if (v >= c) return true;
    if (spins < 20000) {
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
    } else {
      struct timespec ts = {0, 50000};
      nanosleep(&ts, NULL);
    }
  }
}

#endif
