/* Proxy devices: on the controller, another machine's devices. Every call
 * is forwarded to the machine's agent: memory, images and entries as
 * requests with replies; hand-overs (run words, copies between the
 * controller's host memory and the agent's memory) as frames the agent
 * runs in order, whose values the agent reports done, moving the proxy's
 * shadow timeline. With the express path (express.h) the timeline is a
 * value in shared memory the agent stores to, and runs and copies go into
 * the agent's ring, or are copied here into its mapped memory. */
#include "proxy.h"

#include <stdio.h>
#include <stdlib.h>

#include "express.h"
#include "failure.h"
#include "job_state.h"
#include "route/route.h"

/* An image loaded by the agent: its id there. */
typedef struct proxy_image {
  uint64_t id;
} proxy_image;

/* A request of machine m's agent; a refusal names the machine, as every
 * error from another machine does ("machine 1: cpu:0: image 0 has no
 * function \"bump\""). */
static rig_status ask(rig_job *job, int m, frame *f, const void *payload, size_t n, request **r,
                      rig_error *err) {
  rig_status st = rig_request(job, m, f, payload, n, r, err);
  if (st != RIG_OK && st != RIG_EJOB) rig_error_prefix(err, "%s", rig_job_label(job, m));
  return st;
}

static rig_status proxy_alloc(void *st, rig_buffer_kind kind, uint64_t bytes, rig_mem_info *out,
                              rig_error *err) {
  proxy *px = st;
  rig_job *job;
  rig_status s = rig_proxy_job(px, &job, err);
  if (s != RIG_OK) return s;
  if (bytes > REMOTE_OFFSET)
    return rig_error_set(err, RIG_ENOMEM, "%s: %llu bytes, more than a proxy addresses",
                         rig_device_name(px->dev), (unsigned long long)bytes);
  frame f = {.h = {.kind = F_ALLOC, .device = px->index},
             .alloc = {.kind = (uint32_t)kind, .bytes = bytes}};
  request *r;
  s = ask(job, px->machine, &f, NULL, 0, &r, err);
  if (s != RIG_OK) return s;
  /* The id must fit between the tag and the offset. */
  if (r->value == 0 || r->value > (REMOTE_TAG >> REMOTE_SHIFT) - 1) {
    frame release = {.h = {.kind = F_FREE, .device = px->index}, .release.id = r->value};
    rig_ctl_send(&job->c, px->machine, &release, NULL, 0, NULL);
    s = rig_error_set(err, RIG_ENOMEM, "%s: memory %llu, more than a proxy addresses",
                      rig_device_name(px->dev), (unsigned long long)r->value);
    rig_request_free(r);
    return s;
  }
  /* Memory the agent shares (its host's): mapped here for copies, where
   * its route makes them here. */
  if (r->len) px->route->memory_shared(px, r->value, r->payload, r->len);
  out->address = REMOTE_TAG | (r->value << REMOTE_SHIFT);
  out->handle = r->value;
  out->host = NULL;
  out->driver = NULL;
  rig_request_free(r);
  return RIG_OK;
}

static void proxy_free(void *st, const rig_mem_info *mem) {
  proxy *px = st;
  rig_job *job;
  /* Nothing to tell a closed or failed job: its agent frees what is left. */
  rig_express_mem_drop(px->link->express, px->machine, mem->handle);
  if (rig_proxy_job(px, &job, NULL) != RIG_OK || atomic_load(&job->failed)) return;
  frame f = {.h = {.kind = F_FREE, .device = px->index}, .release.id = mem->handle};
  rig_ctl_send(&job->c, px->machine, &f, NULL, 0, NULL);
}

/* Host memory of the controller, at its host pointer (hand-overs carry its
 * bytes); memory of the same machine, at its tagged address. An agent that
 * reaches the controller's memory itself for far copies is told the window
 * first, and checks every far copy against its windows. */
typedef struct far_window {
  proxy *px;
  uint64_t address, length;
  rig_registration *reg;   /* the agent reaches it by RMA (by messages) */
  struct far_window *next; /* in the link's kept windows */
} far_window;

rig_status rig_proxy_open_window(proxy *px, const rig_mem_info *mem, uint64_t bytes,
                                 rig_registration *reg, void **mapping, rig_error *err) {
  rig_job *job;
  rig_status s = rig_proxy_job(px, &job, err);
  far_window *w = s == RIG_OK ? calloc(1, sizeof *w) : NULL;
  if (s == RIG_OK && !w)
    s = rig_error_set(err, RIG_ENOMEM, "out of memory for a window of far copies");
  if (s != RIG_OK) {
    rig_registration_release(reg);
    return s;
  }
  *w = (far_window){px, (uint64_t)(uintptr_t)mem->host, bytes, reg, NULL};
  const void *key = NULL;
  size_t keylen = 0;
  if (reg) rig_registration_key(reg, &key, &keylen);
  frame f = {.h = {.kind = F_FAR_OPEN, .device = px->index},
             .window = {.address = w->address, .length = w->length}};
  request *r;
  if ((s = ask(job, px->machine, &f, key, keylen, &r, err)) != RIG_OK) {
    rig_registration_release(w->reg);
    free(w);
    return s;
  }
  rig_request_free(r);
  *mapping = w;
  return RIG_OK;
}

static rig_status proxy_map(void *st, const rig_device *owner, const rig_mem_info *mem,
                            uint64_t bytes, uint64_t *address, void **mapping, rig_error *err) {
  proxy *px = st;
  *mapping = NULL;
  const rig_device_facts *f = rig_device_facts_of(owner);
  if (f->machine == 0 && mem->host) {
    *address = (uint64_t)(uintptr_t)mem->host;
    return px->route->open_window(px, mem, bytes, mapping, err);
  }
  if (f->machine == px->machine && rig_proxy_is_remote(mem->address)) {
    *address = mem->address;
    return RIG_OK;
  }
  return rig_error_set(err, RIG_EREFUSED, "%s cannot address memory of %s",
                       rig_device_name(px->dev), f->name);
}

/* The memory is free: every work that used it is done. */
static void proxy_unmap(void *st, void *mapping) {
  (void)st;
  far_window *w = mapping;
  rig_job *job;
  if (rig_proxy_job(w->px, &job, NULL) == RIG_OK && !atomic_load(&job->failed)) {
    frame f = {.h = {.kind = F_FAR_CLOSE, .device = w->px->index},
               .window = {.address = w->address, .length = w->length}};
    rig_ctl_send(&job->c, w->px->machine, &f, NULL, 0, NULL);
  }
  /* A late RMA of a failed job's agent may still land: a failed job's
   * registrations stay until its link goes. */
  if (job && atomic_load(&job->failed) && w->reg) {
    proxy_link *link = w->px->link;
    w->next = atomic_load(&link->kept);
    while (!atomic_compare_exchange_weak(&link->kept, &w->next, w)) {
    }
    return;
  }
  rig_registration_release(w->reg);
  free(w);
}

static rig_status proxy_image_load(void *st, const void *bytes, size_t len, void **image,
                                   rig_error *err) {
  proxy *px = st;
  rig_job *job;
  rig_status s = rig_proxy_job(px, &job, err);
  if (s != RIG_OK) return s;
  frame f = {.h = {.kind = F_IMAGE, .device = px->index}};
  request *r;
  s = ask(job, px->machine, &f, bytes, len, &r, err);
  if (s != RIG_OK) return s;
  proxy_image *im = calloc(1, sizeof *im);
  if (!im) {
    rig_request_free(r);
    return rig_error_set(err, RIG_ENOMEM, "out of memory for an image");
  }
  im->id = r->value;
  rig_request_free(r);
  *image = im;
  return RIG_OK;
}

static rig_status proxy_image_entry(void *st, void *image, const char *name, size_t len,
                                    rig_entry *out, rig_error *err) {
  proxy *px = st;
  proxy_image *im = image;
  rig_job *job;
  rig_status s = rig_proxy_job(px, &job, err);
  if (s != RIG_OK) return s;
  frame f = {.h = {.kind = F_ENTRY, .device = px->index}, .entry.image = im->id};
  request *r;
  s = ask(job, px->machine, &f, name, len, &r, err);
  if (s != RIG_OK) return s;
  out->value = r->value;
  out->max_threads = r->max_threads;
  rig_request_free(r);
  return RIG_OK;
}

static void proxy_image_unload(void *st, void *image) {
  proxy *px = st;
  proxy_image *im = image;
  rig_job *job;
  if (rig_proxy_job(px, &job, NULL) == RIG_OK && !atomic_load(&job->failed)) {
    frame f = {.h = {.kind = F_UNLOAD, .device = px->index}, .release.id = im->id};
    rig_ctl_send(&job->c, px->machine, &f, NULL, 0, NULL);
  }
  free(im);
}

static void link_release(proxy_link *link) {
  if (atomic_fetch_sub(&link->refs, 1) != 1) return;
  for (far_window *w = atomic_load(&link->kept), *next; w; w = next) {
    next = w->next;
    rig_registration_release(w->reg);
    free(w);
  }
  rig_express_free(link->express);
  free(link);
}

/* The device is gone and nothing uses it any more. */
static void proxy_stop(void *st) {
  proxy *px = st;
  link_release(px->link);
  free(px);
}

/* Proxies whose reports come by frame are woken by rig_device_signal when
 * a DONE frame arrives; the others' timelines are written by the agent (or
 * a message of it), so their waiters sleep on the timeline as their route
 * says (route/route.h). Otherwise the two are one. */
#define PROXY_CALLS                                                                                \
  .stop = proxy_stop, .name = "proxy", .alloc = proxy_alloc, .free = proxy_free, .map = proxy_map, \
  .unmap = proxy_unmap, .image_load = proxy_image_load, .image_entry = proxy_image_entry,          \
  .image_unload = proxy_image_unload, .submit = rig_proxy_submit

static void proxy_sleep(void *st, uint64_t value, int64_t timeout_ns) {
  proxy *px = st;
  px->route->sleep(px, value, timeout_ns);
}

const rig_driver rig_proxy_driver = {PROXY_CALLS};
const rig_driver rig_proxy_timeline_driver = {PROXY_CALLS, .sleep = proxy_sleep};

rig_status rig_proxies_make(rig_job *job, int m, rig_error *err) {
  const rig_machine *mach = &job->machines[m];
  struct job_controller *ctrl = job->as_controller;
  if (!ctrl->link) {
    ctrl->link = calloc(1, sizeof *ctrl->link);
    if (!ctrl->link) return rig_error_set(err, RIG_ENOMEM, "out of memory making proxies");
    atomic_store(&ctrl->link->job, job);
    atomic_store(&ctrl->link->refs, 1); /* the job's */
    ctrl->link->express = job->express; /* the proxies' timelines live there */
    job->express = NULL;
  }
  ctrl->proxies[m] = calloc(mach->ndevices ? mach->ndevices : 1, sizeof *ctrl->proxies[m]);
  job->devices[m] = calloc(mach->ndevices ? mach->ndevices : 1, sizeof *job->devices[m]);
  if (!ctrl->proxies[m] || !job->devices[m])
    return rig_error_set(err, RIG_ENOMEM, "out of memory making proxies");
  for (size_t i = 0; i < mach->ndevices; i++) {
    proxy *px = calloc(1, sizeof *px);
    if (!px) return rig_error_set(err, RIG_ENOMEM, "out of memory making proxies");
    px->link = ctrl->link;
    px->machine = m;
    px->index = (uint32_t)i;
    rig_device_facts f = {0};
    snprintf(f.name, sizeof f.name, "%.40s@rank%d", mach->devices[i].name, m);
    snprintf(f.arch, sizeof f.arch, "%s", mach->devices[i].arch);
    f.machine = m;
    f.budget = mach->devices[i].budget;
    f.runs_copies = true;
    f.runs_words = i == 0;
    f.machine_device = (uint32_t)i;
    f.machine_host = i == 0;
    snprintf(f.bus_id, sizeof f.bus_id, "%s", mach->devices[i].bus_id);
    f.numa = mach->devices[i].numa;
    /* The route, chosen once per machine (route/route.h), sets the proxy
     * up: its timeline, its ring, its device. */
    px->route = ctrl->link->express->routes[m];
    rig_status st = px->route->proxy_setup(px, job, &f, err);
    if (st != RIG_OK) {
      free(px);
      return st;
    }
    atomic_fetch_add(&px->link->refs, 1);
    ctrl->proxies[m][i] = px;
    job->devices[m][i] = px->dev;
  }
  return RIG_OK;
}

void rig_proxy_done(rig_job *job, int m, uint32_t index, uint64_t value) {
  struct job_controller *ctrl = job->as_controller;
  if (m <= 0 || m >= job->size || !ctrl->proxies[m] || index >= job->machines[m].ndevices) return;
  proxy *px = ctrl->proxies[m][index];
  /* The report is here: a trace's hand-overs to it end now (its route
   * stamps them). */
  px->route->take_report(px, value);
}

bool rig_proxies_busy(rig_job *job) {
  struct job_controller *ctrl = job->as_controller;
  if (!ctrl || !ctrl->proxies) return false; /* an agent has none */
  for (int m = 1; m < job->size; m++)
    for (size_t i = 0; ctrl->proxies[m] && i < job->machines[m].ndevices; i++) {
      proxy *px = ctrl->proxies[m][i];
      /* An express proxy's reports do not come this way (express.h). */
      if (px && px->route->busy(px)) return true;
    }
  return false;
}

void rig_proxies_lose(rig_job *job) {
  struct job_controller *ctrl = job->as_controller;
  for (int m = 1; ctrl && ctrl->proxies && m < job->size; m++)
    for (size_t i = 0; ctrl->proxies[m] && i < job->machines[m].ndevices; i++)
      rig_device_lose_status(ctrl->proxies[m][i]->dev, RIG_EJOB, "%s", job->failure.cause);
}

void rig_proxies_free(rig_job *job) {
  struct job_controller *ctrl = job->as_controller;
  if (!ctrl || !ctrl->link) return;
  atomic_store(&ctrl->link->job, NULL);
  for (int m = 1; ctrl->proxies && m < job->size; m++)
    for (size_t i = 0; ctrl->proxies[m] && i < job->machines[m].ndevices; i++)
      if (ctrl->proxies[m][i]) rig_device_unregister(ctrl->proxies[m][i]->dev);
  link_release(ctrl->link);
  ctrl->link = NULL;
}

void rig_proxies_drain(rig_job *job, int m) {
  struct job_controller *ctrl = job->as_controller;
  for (int at = m < 0 ? 1 : m; ctrl && at < job->size && (m < 0 || at == m); at++)
    for (size_t i = 0; ctrl->proxies[at] && i < job->machines[at].ndevices; i++) {
      if (atomic_load(&job->failed)) return;
      proxy *px = ctrl->proxies[at][i];
      if (px) px->route->drain(px);
    }
}
