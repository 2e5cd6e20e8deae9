/* count_wait.h: waiting for a 64-bit count to reach a value, as host code
 * waits on a rail's count (rig_grid.calls->rail_wait, rig_host_abi.h): the
 * plain wait that needs no transport, and the hook through which the rails
 * layer puts its own, which progresses UCX where a count lands only by
 * this process's progress. Private to librig (never installed). */
#ifndef RIG_BASE_COUNT_WAIT_H
#define RIG_BASE_COUNT_WAIT_H

#include <stdbool.h>
#include <stdint.h>

/* A count raised by a failure (RIG_RAIL_RAISED): a wait on it ends. */
#define RIG_COUNT_RAISED ((uint64_t)INT64_MAX)

/* How long a wait in a run's hot path (a rail's count, the tree's start
 * and end) yields the core before it sleeps: a hop across hosts takes tens
 * of microseconds, a sleep costs a wake-up on top, and under load (more
 * threads than cores) a wake-up costs hundreds. A fixed window, not one
 * that shrinks after waits that outlast it: under load every wait does,
 * and a shrinking window makes each of them pay a wake-up. A yield gives
 * the core to any thread that wants it, so yielding costs the others
 * little; an MPI rank in its yielding mode never sleeps at all. */
#define RIG_WAIT_YIELD_S 1e-3

/* 1 once *count >= c (acquire), 0 once it is raised. */
typedef int rig_count_wait_fn(const void *count, uint64_t c);

/* Whether this process's host is crowded: more of the job's processes
 * on it than cores this process may run on (an MPI rank in Open MPI's
 * oversubscribed mode yields at once too). A wait then spins a fraction of
 * a microsecond before it yields, else 20 us: a spin that keeps the core
 * from a process the wait depends on costs what a yield would have saved,
 * and a yield on a roomy host costs a system call and sometimes a slice. */
void rig_wait_crowded(bool yes);
double rig_wait_spin_s(void);

/* Spins rig_wait_spin_s, yields the core RIG_WAIT_YIELD_S, then sleeps
 * 50 us at a time. */
int rig_count_wait_plain(const void *count, uint64_t c);
/* The same, doing a turn of what moves counts (turn, when not NULL:
 * whether it did anything) between its polls once it no longer spins. */
int rig_count_wait_turning(const void *count, uint64_t c, bool (*turn)(void));

/* The wait host code is lent: the rails layer's once it has set it, else
 * the plain one. */
int rig_count_wait(const void *count, uint64_t c);
void rig_count_wait_set(rig_count_wait_fn *fn);

/* What a thread does while it waits in the hot path, between polls (a
 * job's tree: the starts and ends of runs that may go on, tree_runs.c):
 * set by the layer that has such chores, never blocking, never called
 * from inside a transport's callback. */
typedef void rig_wait_chores_fn(void);
void rig_wait_chores_set(rig_wait_chores_fn *fn);
void rig_wait_chores(void);

/* The count's value now, and whether a wait for c would end on it (*done:
 * with the result in *ok). */
static inline bool rig_count_seen(const void *count, uint64_t c, int *ok) {
  uint64_t v = __atomic_load_n((const uint64_t *)count, __ATOMIC_ACQUIRE);
  if (v >= RIG_COUNT_RAISED) {
    *ok = 0;
    return true;
  }
  *ok = v >= c;
  return v >= c;
}

#endif
