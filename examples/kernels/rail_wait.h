/* rail_wait.h: host code's wait for a rail's count (docs/rails.md,
 * "Waiting in host code"), for kernels that receive through a rail:
 * include it and call rail_wait with the launch's grid and the address of
 * a count (the Counts area's address + RIG_RAIL_ARRIVED_AT, or
 * + RIG_RAIL_SENT_AT). Installed with the examples; needs POSIX
 * (_POSIX_C_SOURCE 200809L) for nanosleep. */
#ifndef RIG_EXAMPLES_RAIL_WAIT_H
#define RIG_EXAMPLES_RAIL_WAIT_H

#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "rig/rig_host_abi.h"
#include "rig/rig_rail.h"

/* Waits until the count at `count` reaches c, with acquire: what the rail
 * wrote before it (the transfer's bytes) is then visible. Returns true
 * when the count reached c, false when a failure raised it to
 * RIG_RAIL_RAISED (the job failed: the kernel should stop). The library's
 * wait (grid->calls->rail_wait) makes the count land where only this
 * process's progress of the transport does (TCP between hosts) and sleeps
 * on the transport's event; where a grid has none (a library without it),
 * this spins, yields, then sleeps 50 us at a time. */
static inline bool rail_wait(const rig_grid *grid, const void *count, uint64_t c) {
  const rig_host_calls *calls = grid ? grid->calls : NULL;
  if (calls && calls->size >= offsetof(rig_host_calls, rail_wait) + sizeof calls->rail_wait &&
      calls->rail_wait)
    return calls->rail_wait(count, c) != 0;
  const _Atomic uint64_t *p = (const _Atomic uint64_t *)count;
  for (unsigned spins = 0;; spins++) {
    uint64_t v = atomic_load_explicit(p, memory_order_acquire);
    if (v >= RIG_RAIL_RAISED) return false;
    if (v >= c) return true;
    if (spins < 20000) {
      sched_yield();
    } else {
      struct timespec ts = {0, 50000};
      nanosleep(&ts, NULL);
    }
  }
}

#endif
