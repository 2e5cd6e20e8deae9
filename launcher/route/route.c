/* The choice of each machine's route (route.h; docs/internals.md
 * "Routes"): every agent offers what it can, the controller chooses and
 * tells, and each side stores the chosen route's table once per machine
 * in the job's express. bootstrap.c moves the offers and the plan. */
#include "route.h"

#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "express.h"
#include "express_messages.h"
#include "job_state.h"

static const rig_route *table_of(unsigned char route) {
  return route == ROUTE_MEMORY     ? &rig_route_memory
         : route == ROUTE_MESSAGES ? &rig_route_messages
                                   : &rig_route_frames;
}

bool rig_route_init(express *ex) {
  ex->routes = malloc((size_t)ex->machines * sizeof *ex->routes);
  if (!ex->routes) return false;
  for (int m = 0; m < ex->machines; m++) ex->routes[m] = &rig_route_frames;
  ex->route = &rig_route_frames;
  return true;
}

/* An agent's offer: whether it maps the controller's timelines, then the
 * address its messages reach (none: it does not listen). */
unsigned char *rig_route_offer(rig_job *job, express *ex, bool want, size_t *n) {
  *n = 0;
  if (job->as_controller || !want || !ex->my_rings) return NULL;
  const void *address = NULL;
  size_t len = 0;
  rig_error e;
  bool mapped = ex->my_timelines != NULL;
  if (!mapped && rig_express_msg_listen(ex, &address, &len, &e) != RIG_OK) {
    /* Said, not kept silent: frames are several times slower. */
    rig_log(RIG_LOG_WARN, "machine %d: runs go by frames, not by UCX messages: %s", job->rank,
            e.message);
    len = 0;
  }
  unsigned char *offer = malloc(1 + len);
  if (!offer) return NULL;
  offer[0] = mapped;
  if (len) memcpy(offer + 1, address, len);
  *n = 1 + len;
  return offer;
}

/* The controller's choice for machine m from its offer (express_messages.h): by
 * memory where each maps the other's, by messages where neither does and
 * both listen (connected here), else by frames. */
static unsigned char choose_route(rig_job *job, express *ex, int m, const unsigned char *offer,
                                  size_t n, bool listening) {
  unsigned char route = ROUTE_FRAMES;
  rig_error e;
  if (n >= 1 && offer[0] && ex->rings && ex->rings[m]) {
    route = ROUTE_MEMORY;
  } else if (n > 1 && listening && ex->timelines) {
    if (rig_express_msg_connect(ex, m, offer + 1, n - 1, &e) == RIG_OK)
      route = ROUTE_MESSAGES;
    else /* the route the machine offered, lost: said once, with why */
      rig_log(RIG_LOG_WARN,
              "%s: runs go by frames, not by UCX messages: %s (UCX_NET_DEVICES, RIG_UCX_TLS: "
              "docs/jobs.md, \"On a cluster\")",
              rig_job_label(job, m), e.message);
  }
  if (route != ROUTE_MEMORY && ex->rings && ex->rings[m]) {
    rig_area_release(ex->rings[m]);
    ex->rings[m] = NULL;
  }
  return route;
}

unsigned char *rig_route_plan(rig_job *job, express *ex, const unsigned char *all, const int *offs,
                              const int *lens, uint64_t *n) {
  const void *address = NULL;
  size_t len = 0;
  rig_error e;
  bool listening = false;
  for (int m = 1; m < job->size && !listening; m++) listening = lens[m] > 1 && !all[offs[m]];
  if (listening && rig_express_msg_listen(ex, &address, &len, &e) != RIG_OK) {
    rig_log(RIG_LOG_WARN, "runs of the other hosts go by frames, not by UCX messages: %s",
            e.message);
    listening = false;
  }
  unsigned char *plan = calloc(1, (size_t)job->size + len);
  if (!plan) return NULL;
  bool messages = false;
  for (int m = 1; m < job->size; m++) {
    plan[m] = choose_route(job, ex, m, all + offs[m], (size_t)lens[m], listening);
    messages |= plan[m] == ROUTE_MESSAGES;
  }
  if (messages && len) memcpy(plan + job->size, address, len);
  /* Held for the job's life: every proxy of machine m takes it. */
  for (int m = 1; m < job->size; m++) {
    ex->routes[m] = table_of(plan[m]);
    if (rig_log_enabled(RIG_LOG_INFO))
      rig_log(RIG_LOG_INFO, "machine %d: runs go by %s", m, rig_route_name(ex->routes[m]->name));
  }
  if (!messages) rig_express_msg_forget(ex);
  *n = (size_t)job->size + (messages ? len : 0);
  return plan;
}

/* By memory as it mapped; by messages it reaches the controller's address
 * (failing that its reports go by frames); by frames it reports by
 * frames. */
void rig_route_follow(rig_job *job, express *ex, const unsigned char *plan, uint64_t n) {
  unsigned char route = n > (uint64_t)job->rank ? plan[job->rank] : ROUTE_FRAMES;
  rig_error e;
  if (route == ROUTE_MESSAGES && n > (uint64_t)job->size) {
    if (rig_express_msg_connect(ex, 0, plan + job->size, n - (uint64_t)job->size, &e) == RIG_OK) {
      ex->route = &rig_route_messages;
      return;
    }
    rig_log(RIG_LOG_WARN, "machine %d: its reports go by frames, not by UCX messages: %s",
            job->rank, e.message);
  }
  ex->route = route == ROUTE_MEMORY ? &rig_route_memory : &rig_route_frames;
  if (route != ROUTE_MEMORY) {
    rig_area_release(ex->my_timelines);
    ex->my_timelines = NULL;
    rig_express_msg_forget(ex);
  }
}
