/* Proxy devices (proxy.c): on the controller, another machine's devices,
 * whose every call is forwarded to the machine's agent. */
#ifndef RIG_PROXY_H
#define RIG_PROXY_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "rig/rig_driver.h"
#include "rig/rig_rail.h"

typedef struct rig_job rig_job;

/* What a job's proxies reach it through: a proxy may outlive its job (a
 * buffer on it released after the close), so the link is held by the job
 * and by each proxy, and freed by the last of them. */
typedef struct proxy_link {
  rig_job *_Atomic job;
  _Atomic int refs;
  struct express *express; /* the proxies' timelines and rings live as long */
  /* Windows of a failed job, whose registrations stay until the link goes
   * (a late RMA of its agent may still land until the job is closed). */
  struct far_window *_Atomic kept;
} proxy_link;

/* Memory of an agent is addressed, here, as its id in the top bits and an
 * offset in the low 40; a controller host pointer never has bit 63 set. */
#define REMOTE_TAG    (UINT64_C(1) << 63)
#define REMOTE_SHIFT  40
#define REMOTE_OFFSET ((UINT64_C(1) << REMOTE_SHIFT) - 1)

static inline bool rig_proxy_is_remote(uint64_t a) {
  return (a & REMOTE_TAG) != 0;
}
static inline uint64_t rig_proxy_remote_id(uint64_t a) {
  return (a & ~REMOTE_TAG) >> REMOTE_SHIFT;
}
static inline uint64_t rig_proxy_remote_offset(uint64_t a) {
  return a & REMOTE_OFFSET;
}

typedef struct proxy {
  proxy_link *link;
  int machine;
  uint32_t index; /* the device's index on its machine */
  rig_device *dev;
  _Atomic uint64_t shadow;       /* the shadow timeline, moved by DONE */
  _Atomic uint64_t *timeline;    /* shadow, or the express timeline */
  struct ex_timeline *tl;        /* the express timeline (express.h), by its route */
  struct ex_ring *ring;          /* the device's express ring, by its route */
  const struct rig_route *route; /* how it reaches the agent, chosen once (route/route.h) */
} proxy;

/* The proxy's job; RIG_EJOB once it is closed. */
static inline rig_status rig_proxy_job(proxy *px, rig_job **job, rig_error *err) {
  *job = atomic_load(&px->link->job);
  if (!*job) return rig_error_set(err, RIG_EJOB, "%s: its job is closed", rig_device_name(px->dev));
  return RIG_OK;
}
/* The driver's submit (proxy_submit.c): hands w over to the agent, as
 * its route does. */
rig_status rig_proxy_submit(void *st, const rig_work *w, rig_error *err);
/* For the routes (route/): a run's words of w, checked (*bytes, *len);
 * the words as a frame of the control protocol; a copy so. */
rig_status rig_proxy_words(proxy *px, const rig_work *w, const void **bytes, size_t *len,
                           rig_error *err);
rig_status rig_proxy_send_words(proxy *px, rig_job *job, uint64_t value, const void *bytes,
                                size_t len, rig_error *err);
rig_status rig_proxy_send_copy(proxy *px, rig_job *job, const rig_work *w, rig_error *err);

/* The proxies' drivers (proxy.c), for a route's proxy_setup: waiters
 * woken by rig_device_signal, or asleep as the route's sleep says. */
extern const rig_driver rig_proxy_driver, rig_proxy_timeline_driver;
/* A window of far copies opened to px's agent (proxy.c) at the host
 * buffer mem (bytes), with reg, the registration its agent reaches by RMA
 * (or NULL; the window takes it, released with it): *mapping. */
rig_status rig_proxy_open_window(proxy *px, const rig_mem_info *mem, uint64_t bytes,
                                 rig_registration *reg, void **mapping, rig_error *err);

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
