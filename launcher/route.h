/* How the controller and one agent hand work over (docs/internals.md
 * "Routes"): agreed once, at the start, per machine (bootstrap.c), and
 * held by the job's express. Each side takes its table of operations for
 * the route once — the proxy's (proxy_route.h), the executor's
 * (executor.c) — and asks the table, never a flag, where routes differ. */
#ifndef RIG_ROUTE_H
#define RIG_ROUTE_H

typedef enum job_route {
  ROUTE_FRAMES = 0,   /* frames of the control protocol, both ways */
  ROUTE_MEMORY = 1,   /* the agent's ring and the controller's timelines, mapped */
  ROUTE_MESSAGES = 2, /* UCX messages into the ring and the timelines */
} job_route;

/* "frames", "shared memory", "messages": how docs and logs say it. */
static inline const char *rig_route_name(job_route r) {
  return r == ROUTE_MEMORY ? "shared memory" : r == ROUTE_MESSAGES ? "messages" : "frames";
}

#endif
