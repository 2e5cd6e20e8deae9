/* clock.h: the monotonic clock every layer of librig reads for bounds and
 * idle times. Private to librig (never installed). */
#ifndef RIG_BASE_CLOCK_H
#define RIG_BASE_CLOCK_H

#include <time.h>

/* Seconds on CLOCK_MONOTONIC. */
static inline double rig_now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#endif
