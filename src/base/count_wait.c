/* The plain wait on a count and the hook for the rails layer's. */
#include "count_wait.h"

#include <sched.h>
#include <stdatomic.h>
#include <time.h>

#include "clock.h"
#include "sync.h"

#define NAP_NS 50000

/* How long a wait spins before it yields (rig_wait_crowded). */
#define SPIN_ROOMY_S   20e-6
#define SPIN_CROWDED_S 0.2e-6
static _Atomic bool crowded;

void rig_wait_crowded(bool yes) {
  atomic_store(&crowded, yes);
}

double rig_wait_spin_s(void) {
  return atomic_load_explicit(&crowded, memory_order_relaxed) ? SPIN_CROWDED_S : SPIN_ROOMY_S;
}

static _Atomic(rig_count_wait_fn *) hook;
static _Atomic(rig_wait_chores_fn *) chores;

void rig_wait_chores_set(rig_wait_chores_fn *fn) {
  atomic_store(&chores, fn);
}

void rig_wait_chores(void) {
  rig_wait_chores_fn *fn = atomic_load_explicit(&chores, memory_order_acquire);
  if (fn) fn();
}

void rig_count_wait_set(rig_count_wait_fn *fn) {
  atomic_store(&hook, fn);
}

int rig_count_wait(const void *count, uint64_t c) {
  rig_count_wait_fn *fn = atomic_load_explicit(&hook, memory_order_acquire);
  return fn ? fn(count, c) : rig_count_wait_plain(count, c);
}

int rig_count_wait_plain(const void *count, uint64_t c) {
  return rig_count_wait_turning(count, c, NULL);
}

int rig_count_wait_turning(const void *count, uint64_t c, bool (*turn)(void)) {
  int ok;
  if (rig_count_seen(count, c, &ok)) return ok;
  double t0 = rig_now_s(), spin_s = rig_wait_spin_s();
  bool spinning = true, slept = false;
  for (unsigned polls = 1; !rig_count_seen(count, c, &ok); polls++) {
    /* The clock is read once every 64 polls while spinning. */
    if (spinning && (polls % 64 != 0 || rig_now_s() - t0 < spin_s)) {
      rig_cpu_relax();
      continue;
    }
    spinning = false;
    rig_wait_chores();
    if (turn && turn()) continue;
    if (!slept && rig_now_s() - t0 < spin_s + RIG_WAIT_YIELD_S) {
      sched_yield();
      continue;
    }
    slept = true;
    struct timespec ts = {0, NAP_NS};
    nanosleep(&ts, NULL);
  }
  return ok;
}
