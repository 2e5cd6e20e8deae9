/* The wait on a rail's count that host code is lent (rig_grid.calls->
 * rail_wait) and rig_rail_wait. Where the rail's peer reaches this process
 * by emulated RMA (TCP), its puts and adds land only when this process
 * progresses the worker: the waiting thread does so itself, rather than
 * wait for the rail thread's wake-up (two wake-ups a message: the rail
 * thread's, then the waiter's). It turns the worker, yielding between
 * turns a while, then sleeps on the worker's event fd, so that a message wakes it
 * alone; a failure's raise of the count nudges it. Elsewhere (shared
 * memory, hardware RMA) the count lands without this process: the plain
 * wait of the base kit. */
#include <sched.h>

#include "base/clock.h"
#include "base/count_wait.h"
#include "base/sync.h"
#include "rails_internal.h"

_Static_assert(RIG_RAIL_RAISED == RIG_COUNT_RAISED, "a raised count ends every wait");

/* A sleep's bound, so that a lost nudge costs at most this. */
#define SLEEP_NS 100000000L

static int progressing_wait(const void *count, uint64_t c) {
  int ok;
  rig_engine_polling(true);
  double t0 = 0;
  bool slept = false;
  while (!rig_count_seen(count, c, &ok)) {
    if (rig_engine_turn()) continue;
    rig_wait_chores();
    /* No spin: a turn is a system call (TCP), and a message takes longer
     * than one; the core goes to whoever else wants it between turns. */
    double now = rig_now_s();
    if (!t0) t0 = now;
    if (!slept && now - t0 < RIG_WAIT_YIELD_S) {
      sched_yield();
      continue;
    }
    slept = true;
    rig_engine_watch_count(count, c, SLEEP_NS);
  }
  rig_engine_polling(false);
  return ok;
}

bool rig_rail_wait(const void *count, uint64_t c) {
  int ok;
  if (rig_count_seen(count, c, &ok)) return ok;
  if (rig_rails_count_served(count)) return progressing_wait(count, c);
  /* Nothing need progress for the count; what this process sends may
   * (a large put in pieces): the waiter turns the worker too, once it
   * no longer spins, rather than leave it all to the rail thread. */
  return rig_count_wait_turning(count, c, rig_engine_turn_pumping);
}

static int lent_wait(const void *count, uint64_t c) {
  return rig_rail_wait(count, c);
}

void rig_rails_wait_lend(void) {
  rig_count_wait_set(lent_wait);
}
