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
#include "job.h"

/* An image loaded by the agent: its id there. */
typedef struct proxy_image {
  uint64_t id;
} proxy_image;

/* Memory of an agent is addressed, here, as its id in the top bits and an
 * offset in the low 40; a controller host pointer never has bit 63 set. */
#define REMOTE_TAG    (UINT64_C(1) << 63)
#define REMOTE_SHIFT  40
#define REMOTE_OFFSET ((UINT64_C(1) << REMOTE_SHIFT) - 1)

static bool is_remote(uint64_t a) {
  return (a & REMOTE_TAG) != 0;
}
static uint64_t remote_id(uint64_t a) {
  return (a & ~REMOTE_TAG) >> REMOTE_SHIFT;
}
static uint64_t remote_offset(uint64_t a) {
  return a & REMOTE_OFFSET;
}

/* The proxy's job; RIG_EJOB once it is closed. */
static rig_status job_of(proxy *px, rig_job **job, rig_error *err) {
  *job = atomic_load(&px->link->job);
  if (!*job) return rig_error_set(err, RIG_EJOB, "%s: its job is closed", rig_device_name(px->dev));
  return RIG_OK;
}

static rig_status proxy_alloc(void *st, rig_buffer_kind kind, uint64_t bytes, rig_mem_info *out,
                              rig_error *err) {
  proxy *px = st;
  rig_job *job;
  rig_status s = job_of(px, &job, err);
  if (s != RIG_OK) return s;
  if (bytes > REMOTE_OFFSET)
    return rig_error_set(err, RIG_ENOMEM, "%s: %llu bytes, more than a proxy addresses",
                         rig_device_name(px->dev), (unsigned long long)bytes);
  frame f = {.h = {.kind = F_ALLOC, .device = px->index},
             .alloc = {.kind = (uint32_t)kind, .bytes = bytes}};
  request *r;
  s = rig_request(job, px->machine, &f, NULL, 0, &r, err);
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
  /* Memory the agent shares (its host's): mapped here for copies. */
  if (r->len && px->tl)
    rig_express_mem_add(px->link->express, px->machine, r->value, r->payload, r->len);
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
  if (job_of(px, &job, NULL) != RIG_OK || atomic_load(&job->failed)) return;
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
} far_window;

static rig_status open_window(proxy *px, const rig_mem_info *mem, uint64_t bytes, void **mapping,
                              rig_error *err) {
  rig_job *job;
  rig_status s = job_of(px, &job, err);
  if (s != RIG_OK) return s;
  far_window *w = malloc(sizeof *w);
  if (!w) return rig_error_set(err, RIG_ENOMEM, "out of memory for a window of far copies");
  *w = (far_window){px, (uint64_t)(uintptr_t)mem->host, bytes};
  frame f = {.h = {.kind = F_FAR_OPEN, .device = px->index},
             .window = {.address = w->address, .length = w->length}};
  request *r;
  if ((s = rig_request(job, px->machine, &f, NULL, 0, &r, err)) != RIG_OK) {
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
    return px->ring && px->ring->far ? open_window(px, mem, bytes, mapping, err) : RIG_OK;
  }
  if (f->machine == px->machine && is_remote(mem->address)) {
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
  if (job_of(w->px, &job, NULL) == RIG_OK && !atomic_load(&job->failed)) {
    frame f = {.h = {.kind = F_FAR_CLOSE, .device = w->px->index},
               .window = {.address = w->address, .length = w->length}};
    rig_ctl_send(&job->c, w->px->machine, &f, NULL, 0, NULL);
  }
  free(w);
}

static rig_status proxy_image_load(void *st, const void *bytes, size_t len, void **image,
                                   rig_error *err) {
  proxy *px = st;
  rig_job *job;
  rig_status s = job_of(px, &job, err);
  if (s != RIG_OK) return s;
  frame f = {.h = {.kind = F_IMAGE, .device = px->index}};
  request *r;
  s = rig_request(job, px->machine, &f, bytes, len, &r, err);
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
  rig_status s = job_of(px, &job, err);
  if (s != RIG_OK) return s;
  frame f = {.h = {.kind = F_ENTRY, .device = px->index}, .entry.image = im->id};
  request *r;
  s = rig_request(job, px->machine, &f, name, len, &r, err);
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
  if (job_of(px, &job, NULL) == RIG_OK && !atomic_load(&job->failed)) {
    frame f = {.h = {.kind = F_UNLOAD, .device = px->index}, .release.id = im->id};
    rig_ctl_send(&job->c, px->machine, &f, NULL, 0, NULL);
  }
  free(im);
}

/* Copies of at least this many bytes wait for the device's earlier work
 * and are made here (express.h). */
#define NEAR_WAIT (UINT64_C(1) << 20)

/* Whether the device's work before w is done (or, for a large copy, once
 * it is: false if the job fails first). */
static bool near_ready(proxy *px, rig_job *job, const rig_work *w, rig_error *err) {
  (void)err;
  uint64_t before = w->value - 1;
  if (atomic_load_explicit(&px->tl->value, memory_order_acquire) >= before) return true;
  if (w->length < NEAR_WAIT) return false;
  while (atomic_load_explicit(&px->tl->value, memory_order_acquire) < before) {
    if (atomic_load(&job->failed)) return false;
    rig_express_sleep(px->tl, before, 1000000);
  }
  return true;
}

static rig_status submit_copy(proxy *px, rig_job *job, const rig_work *w, rig_error *err) {
  /* By the ring where it can (express.h), else as frames: into or out of
   * memory mapped here by the controller itself, else by the agent. */
  uint64_t len;
  unsigned char *near;
  if (px->ring && is_remote(w->src) != is_remote(w->dst) &&
      (near = rig_express_mem(px->link->express, px->machine,
                              remote_id(is_remote(w->dst) ? w->dst : w->src), &len))) {
    uint64_t at = remote_offset(is_remote(w->dst) ? w->dst : w->src);
    /* The core waited for the memory's users on other devices, not for
     * this device's own earlier work: that must be done first. A large
     * copy waits for it (the agent's copy would be slower); a small one
     * goes the agent's way, in order. */
    if (at <= len && w->length <= len - at && near_ready(px, job, w, err)) {
      void *to = is_remote(w->dst) ? near + at : (void *)(uintptr_t)w->dst;
      const void *from = is_remote(w->dst) ? (const void *)(uintptr_t)w->src : near + at;
      if (rig_express_copy_near(px->ring, px->tl, w->value, to, from, w->length)) return RIG_OK;
    }
    if (atomic_load(&job->failed)) return rig_job_error(job, err);
  }
  if (px->ring && !is_remote(w->src) && is_remote(w->dst) &&
      rig_express_copy_in(px->ring, px->tl, w->value, remote_id(w->dst), remote_offset(w->dst),
                          (const void *)(uintptr_t)w->src, w->length))
    return RIG_OK;
  if (px->ring && is_remote(w->src) && !is_remote(w->dst) &&
      rig_express_copy_out(px->ring, px->tl, w->value, remote_id(w->src), remote_offset(w->src),
                           (void *)(uintptr_t)w->dst, w->length))
    return RIG_OK;
  frame f = {.h = {.device = px->index, .value = w->value}};
  if (!is_remote(w->src) && is_remote(w->dst)) {
    f.h.kind = F_COPY_IN;
    f.copy_in = (frame_copy_in){.memory = remote_id(w->dst), .offset = remote_offset(w->dst)};
    return rig_ctl_send(&job->c, px->machine, &f, (const void *)(uintptr_t)w->src, w->length, err);
  } else if (is_remote(w->src) && !is_remote(w->dst)) {
    f.h.kind = F_COPY_OUT;
    f.h.request = rig_request_id(job);
    f.copy_out = (frame_copy_out){
        .memory = remote_id(w->src), .offset = remote_offset(w->src), .length = w->length};
    rig_status st = rig_request_expect(job, f.h.request, (void *)(uintptr_t)w->dst, w->length, err);
    return st == RIG_OK ? rig_ctl_send(&job->c, px->machine, &f, NULL, 0, err) : st;
  } else if (is_remote(w->src) && is_remote(w->dst)) {
    f.h.kind = F_COPY;
    f.copy = (frame_copy){.src = remote_id(w->src),
                          .src_offset = remote_offset(w->src),
                          .length = w->length,
                          .dst = remote_id(w->dst),
                          .dst_offset = remote_offset(w->dst)};
    return rig_ctl_send(&job->c, px->machine, &f, NULL, 0, err);
  }
  return rig_error_set(err, RIG_EREFUSED, "%s: a copy between two host memories",
                       rig_device_name(px->dev));
}

static rig_status proxy_submit(void *st, const rig_work *w, rig_error *err) {
  proxy *px = st;
  rig_job *job;
  rig_status s = job_of(px, &job, err);
  if (s != RIG_OK) return s;
  if (atomic_load(&job->failed)) return rig_job_error(job, err);
  if (!w->sub) return submit_copy(px, job, w, err);
  /* Only words reach a proxy (the facts say it runs nothing else): their
   * bytes, read at the hand-over, travel with it. */
  const rig_part *p = rig_submission_part(w->sub, 0);
  if (rig_submission_nparts(w->sub) != 1 || p->kind != RIG_WORK_WORDS)
    return rig_error_set(err, RIG_EREFUSED, "%s: a submission of other than one words part",
                         rig_device_name(px->dev));
  uint64_t base = p->u.words.side.slot >= 0
                      ? w->slot_addr[p->u.words.side.slot]
                      : rig_submission_address(w->sub, (size_t)p->u.words.side.fixed);
  if (is_remote(base))
    return rig_error_set(err, RIG_EREFUSED, "%s: words in memory of another machine",
                         rig_device_name(px->dev));
  const void *bytes = (const void *)(uintptr_t)(base + p->u.words.offset);
  /* Into the agent's ring where it can; else (too long, the ring full, no
   * ring) as a frame: the agent takes both in value order. */
  if (px->ring && rig_express_post(px->ring, px->tl, w->value, bytes, p->u.words.length))
    return RIG_OK;
  frame f = {.h = {.kind = F_WORDS, .device = px->index, .value = w->value}};
  return rig_ctl_send(&job->c, px->machine, &f, bytes, p->u.words.length, err);
}

static void link_release(proxy_link *link) {
  if (atomic_fetch_sub(&link->refs, 1) != 1) return;
  rig_express_free(link->express);
  free(link);
}

/* A waiter on an express timeline sleeps on it: the agent's report wakes it,
 * no rig_device_signal comes. */
static void proxy_sleep(void *st, uint64_t value, int64_t timeout_ns) {
  proxy *px = st;
  rig_express_sleep(px->tl, value, timeout_ns);
}

/* The device is gone and nothing uses it any more. */
static void proxy_stop(void *st) {
  proxy *px = st;
  link_release(px->link);
  free(px);
}

/* Frame proxies are woken by rig_device_signal when a DONE frame arrives;
 * express proxies' timelines are written by the agent, so their waiters sleep
 * on the shared timeline themselves (proxy_sleep). Otherwise the two are one. */
#define PROXY_CALLS                                                                                \
  .stop = proxy_stop, .name = "proxy", .alloc = proxy_alloc, .free = proxy_free, .map = proxy_map, \
  .unmap = proxy_unmap, .image_load = proxy_image_load, .image_entry = proxy_image_entry,          \
  .image_unload = proxy_image_unload, .submit = proxy_submit

static const rig_driver proxy_driver = {PROXY_CALLS};
static const rig_driver proxy_express_driver = {PROXY_CALLS, .sleep = proxy_sleep};

rig_status rig_proxies_make(rig_job *job, int m, rig_error *err) {
  const rig_machine *mach = &job->machines[m];
  if (!job->link) {
    job->link = calloc(1, sizeof *job->link);
    if (!job->link) return rig_error_set(err, RIG_ENOMEM, "out of memory making proxies");
    atomic_store(&job->link->job, job);
    atomic_store(&job->link->refs, 1); /* the job's */
    job->link->express = job->express; /* the proxies' timelines live there */
    job->express = NULL;
  }
  job->proxies[m] = calloc(mach->ndevices ? mach->ndevices : 1, sizeof *job->proxies[m]);
  job->devices[m] = calloc(mach->ndevices ? mach->ndevices : 1, sizeof *job->devices[m]);
  if (!job->proxies[m] || !job->devices[m])
    return rig_error_set(err, RIG_ENOMEM, "out of memory making proxies");
  for (size_t i = 0; i < mach->ndevices; i++) {
    proxy *px = calloc(1, sizeof *px);
    if (!px) return rig_error_set(err, RIG_ENOMEM, "out of memory making proxies");
    px->link = job->link;
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
    px->tl = rig_express_timeline(job->link->express, m, (uint32_t)i);
    px->ring = px->tl ? rig_express_ring(job->link->express, m, (uint32_t)i) : NULL;
    px->timeline = px->tl ? &px->tl->value : &px->shadow;
    rig_status st = rig_device_register(px->tl ? &proxy_express_driver : &proxy_driver, px, &f,
                                        px->timeline, &px->dev, err);
    if (st != RIG_OK) {
      free(px);
      return st;
    }
    atomic_fetch_add(&px->link->refs, 1);
    job->proxies[m][i] = px;
    job->devices[m][i] = px->dev;
  }
  return RIG_OK;
}

void rig_proxy_done(rig_job *job, int m, uint32_t index, uint64_t value) {
  if (m <= 0 || m >= job->size || !job->proxies[m] || index >= job->machines[m].ndevices) return;
  proxy *px = job->proxies[m][index];
  if (px->tl) {
    rig_express_report(px->tl, value);
    return;
  }
  uint64_t old = atomic_load(&px->shadow);
  while (old < value && !atomic_compare_exchange_weak(&px->shadow, &old, value)) {
  }
  rig_device_signal(px->dev);
}

bool rig_proxies_busy(rig_job *job) {
  if (job->rank != 0 || !job->proxies) return false;
  for (int m = 1; m < job->size; m++)
    for (size_t i = 0; job->proxies[m] && i < job->machines[m].ndevices; i++) {
      proxy *px = job->proxies[m][i];
      /* An express proxy's reports do not come this way (express.h). */
      if (px && !px->ring && rig_point_value(rig_device_last(px->dev)) > atomic_load(px->timeline))
        return true;
    }
  return false;
}

void rig_proxies_lose(rig_job *job) {
  for (int m = 1; m < job->size; m++)
    for (size_t i = 0; job->proxies[m] && i < job->machines[m].ndevices; i++)
      rig_device_lose_status(job->proxies[m][i]->dev, RIG_EJOB, "%s", job->cause);
}

void rig_proxies_free(rig_job *job) {
  if (!job->link) return;
  atomic_store(&job->link->job, NULL);
  for (int m = 1; job->proxies && m < job->size; m++)
    for (size_t i = 0; job->proxies[m] && i < job->machines[m].ndevices; i++)
      if (job->proxies[m][i]) rig_device_unregister(job->proxies[m][i]->dev);
  link_release(job->link);
  job->link = NULL;
}

void rig_proxies_drain(rig_job *job, int m) {
  for (int at = m < 0 ? 1 : m; job->rank == 0 && at < job->size && (m < 0 || at == m); at++)
    for (size_t i = 0; job->proxies[at] && i < job->machines[at].ndevices; i++) {
      if (atomic_load(&job->failed)) return;
      proxy *px = job->proxies[at][i];
      if (!px || !px->ring) continue;
      rig_error err;
      rig_point_wait(rig_device_last(px->dev), &err);
    }
}
