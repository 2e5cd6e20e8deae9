/* The host driver: the machine's host, this process's threads. A hand-over
 * runs the work on the calling thread (a launch's groups over the worker
 * pool) and stores the word before it returns, so its work is done when
 * submit returns. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "hostcode.h"

typedef struct host {
  rig_device *dev;
  _Atomic uint64_t word;
  rig_presence presence; /* hand-overs are one at a time (the core's lock) */
} host;

static host the_host;

static rig_status host_alloc(void *st, rig_buffer_kind kind, uint64_t bytes, rig_mem_info *out,
                             rig_error *err) {
  (void)st;
  (void)kind; /* every kind is ordinary host memory here */
  return rig_hostcode_alloc(bytes, out, err);
}

static void host_free(void *st, const rig_mem_info *mem) {
  (void)st;
  rig_hostcode_free(mem);
}

static rig_status host_image_load(void *st, const void *bytes, size_t len, void **image,
                                  rig_error *err) {
  (void)st;
  return rig_hostcode_image_load("host", bytes, len, image, err);
}

static rig_status host_image_entry(void *st, void *image, const char *name, size_t len,
                                   rig_entry *out, rig_error *err) {
  (void)st;
  return rig_hostcode_image_entry("host", image, name, len, out, err);
}

static void host_image_unload(void *st, void *image) {
  (void)st;
  rig_hostcode_image_unload(image);
}

static rig_status host_submit(void *st, const rig_work *w, rig_error *err) {
  host *h = st;
  rig_error why;
  if (!rig_presence_enter(&h->presence, h->dev, w->value)) {
    rig_device_is_lost(h->dev, err);
    return RIG_ELOST;
  }
  rig_status s = rig_hostcode_run(w, &why);
  rig_presence_leave(&h->presence, h->dev);
  if (s != RIG_OK)
    rig_device_lose(h->dev, "%s", why.message);
  else
    atomic_store_explicit(&h->word, w->value, memory_order_release);
  rig_device_signal(h->dev);
  if (s == RIG_OK) return RIG_OK;
  rig_device_is_lost(h->dev, err);
  return RIG_ELOST;
}

static bool host_busy(void *st, uint64_t value) {
  return rig_presence_busy(&((host *)st)->presence, value);
}

static const rig_driver host_driver = {
    .name = "host",
    .alloc = host_alloc,
    .free = host_free,
    .image_load = host_image_load,
    .image_entry = host_image_entry,
    .image_unload = host_image_unload,
    .submit = host_submit,
    .busy = host_busy,
};

static rig_status host_count(unsigned *n, rig_error *err) {
  (void)err;
  *n = 1;
  return RIG_OK;
}

static rig_status host_open(unsigned index, rig_device **out, rig_error *err) {
  (void)index;
  rig_device_facts f = {.numa = -1};
  snprintf(f.name, sizeof f.name, "host");
  snprintf(f.arch, sizeof f.arch, "%s", rig_host_isa());
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  f.budget = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
  f.maps_host = f.host_addresses = true;
  f.runs_copies = f.runs_fills = f.runs_launches = true;
  f.synchronous = true;
  f.max_shared = RIG_HOST_MAX_SHARED;
  f.threads = rig_pool_threads();
  /* Fails only out of memory at start; rig_host() is then NULL. */
  rig_status st =
      rig_device_register(&host_driver, &the_host, &f, &the_host.word, &the_host.dev, err);
  if (st == RIG_OK) *out = the_host.dev;
  return st;
}

/* The host's arch is its machine's ISA (rig_host_isa: uname's): an arch
 * of no other family's prefix. */
const rig_provider rig_provider_host = {
    .abi = RIG_PROVIDER_ABI,
    .family = "host",
    .single = true,
    .other_archs = true,
    .count = host_count,
    .open = host_open,
    .image_functions = rig_hostcode_image_functions,
};
