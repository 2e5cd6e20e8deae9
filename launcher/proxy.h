/* Proxy devices (proxy.c): on the controller, another machine's devices,
 * whose every call is forwarded to the machine's agent. */
#ifndef RIG_PROXY_H
#define RIG_PROXY_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "rig/rig_driver.h"

typedef struct rig_job rig_job;

/* What a job's proxies reach it through: a proxy may outlive its job (a
 * buffer on it released after the close), so the link is held by the job
 * and by each proxy, and freed by the last of them. */
typedef struct proxy_link {
  rig_job *_Atomic job;
  _Atomic int refs;
  struct express *express; /* the proxies' timelines and rings live as long */
} proxy_link;

typedef struct proxy {
  proxy_link *link;
  int machine;
  uint32_t index; /* the device's index on its machine */
  rig_device *dev;
  _Atomic uint64_t shadow;    /* the shadow timeline, moved by DONE */
  _Atomic uint64_t *timeline; /* shadow, or the express timeline */
  struct ex_timeline *tl;     /* the express timeline (express.h), or NULL */
  struct ex_ring *ring;       /* the device's express ring, or NULL */
} proxy;

/* Makes the proxies of machine m's devices. */
rig_status rig_proxies_make(rig_job *job, int m, rig_error *err);
/* A DONE report: moves the shadow timeline of device `index` of machine m. */
void rig_proxy_done(rig_job *job, int m, uint32_t index, uint64_t value);
/* Loses every proxy with the job's root cause. */
void rig_proxies_lose(rig_job *job);
/* Whether some proxy has work handed over by frame and not yet reported
 * done: the controller's control thread then keeps polling, so that a done
 * report is seen (and a machine's run stamped) when it arrives, not at the
 * end of a sleep. */
bool rig_proxies_busy(rig_job *job);
/* Waits until every work of machine m's proxies handed over by a ring is
 * done (or the job failed): before a request that follows their work,
 * such as its trace, or the close (m < 0: every machine). */
void rig_proxies_drain(rig_job *job, int m);
/* The job is being freed: its proxies leave the device table once nothing
 * uses them (rig_device_unregister), and the job lets go of the link. */
void rig_proxies_free(rig_job *job);

#endif
