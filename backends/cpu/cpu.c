/* cpu:N devices: asynchronous CPU devices that stand in for accelerators.
 * Each is a bounded queue (a ring of packed works) with its own thread: a
 * hand-over enqueues and returns (waiting for room when the queue is full);
 * the thread waits for the work's in-queue points, runs it as host code,
 * stores the word and wakes sleepers. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/env.h"
#include "hostcode.h"

#define QUEUE_BYTES (1u << 20)

typedef struct entry {
  uint64_t bytes; /* the whole entry, header included */
  uint64_t wrap;  /* 1: the rest of the ring is unused; go to its start */
} entry;

typedef struct cpu {
  rig_device *dev;
  _Atomic uint64_t word;
  pthread_mutex_t lock;
  pthread_cond_t nonempty, room;
  unsigned char *ring;
  size_t head, tail, used; /* bytes; used counts wrap waste too */
  pthread_t thread;
  rig_presence presence; /* the queue thread's */
} cpu;

static size_t up16(size_t n) {
  return (n + 15) & ~(size_t)15;
}

static rig_status cpu_alloc(void *st, rig_buffer_kind kind, uint64_t bytes, rig_mem_info *out,
                            rig_error *err) {
  (void)st;
  (void)kind;
  return rig_hostcode_alloc(bytes, out, err);
}

static void cpu_free(void *st, const rig_mem_info *mem) {
  (void)st;
  rig_hostcode_free(mem);
}

static rig_status cpu_image_load(void *st, const void *bytes, size_t len, void **image,
                                 rig_error *err) {
  cpu *c = st;
  return rig_hostcode_image_load(rig_device_name(c->dev), bytes, len, image, err);
}

static rig_status cpu_image_entry(void *st, void *image, const char *name, size_t len,
                                  rig_entry *out, rig_error *err) {
  cpu *c = st;
  return rig_hostcode_image_entry(rig_device_name(c->dev), image, name, len, out, err);
}

static void cpu_image_unload(void *st, void *image) {
  (void)st;
  rig_hostcode_image_unload(image);
}

static bool cpu_can_wait(void *st, const rig_device *other) {
  (void)st;
  (void)other; /* every timeline word is host memory */
  return true;
}

static rig_status cpu_submit(void *st, const rig_work *w, rig_error *err) {
  cpu *c = st;
  size_t n = up16(sizeof(entry)) + up16(rig_work_bytes(w));
  if (n > QUEUE_BYTES / 4)
    return rig_error_set(err, RIG_EINVAL, "%s: a work of %zu bytes, more than its queue takes",
                         rig_device_name(c->dev), n);
  pthread_mutex_lock(&c->lock);
  bool wrap = false;
  for (;;) {
    /* Entries are 16-byte multiples, so a wrap mark always fits. */
    if (c->used == 0) {
      c->head = c->tail = 0;
      break;
    }
    if (c->head > c->tail) {
      if (n <= QUEUE_BYTES - c->head) break;
      if (n <= c->tail) {
        wrap = true;
        break;
      }
    } else if (c->head < c->tail && n <= c->tail - c->head) {
      break;
    }
    pthread_cond_wait(&c->room, &c->lock); /* full: wait, never fail */
  }
  if (wrap) {
    entry *mark = (entry *)(c->ring + c->head);
    mark->bytes = QUEUE_BYTES - c->head;
    mark->wrap = 1;
    c->used += mark->bytes;
    c->head = 0;
  }
  entry *e = (entry *)(c->ring + c->head);
  e->bytes = n;
  e->wrap = 0;
  rig_work_pack(w, c->ring + c->head + up16(sizeof(entry)));
  c->head = (c->head + n) % QUEUE_BYTES;
  c->used += n;
  pthread_cond_signal(&c->nonempty);
  pthread_mutex_unlock(&c->lock);
  return RIG_OK;
}

static void *cpu_main(void *arg) {
  cpu *c = arg;
  for (;;) {
    pthread_mutex_lock(&c->lock);
    while (c->used == 0) pthread_cond_wait(&c->nonempty, &c->lock);
    entry *e = (entry *)(c->ring + c->tail);
    if (e->wrap) {
      c->used -= e->bytes;
      c->tail = 0;
      pthread_mutex_unlock(&c->lock);
      continue;
    }
    pthread_mutex_unlock(&c->lock);
    /* The entry stays in the ring, untouched by producers, until the tail
     * passes it below. */
    const rig_work *w = (const rig_work *)((unsigned char *)e + up16(sizeof(entry)));
    /* A work whose waits were lost is not run (its inputs never came), but
     * released with the loss instead of left hanging. */
    bool run = true;
    for (size_t i = 0; i < w->nwaits; i++)
      if (rig_point_wait(w->waits[i], NULL) != RIG_OK) run = false;
    if (run && rig_presence_enter(&c->presence, c->dev, w->value)) {
      rig_error err;
      rig_status st = rig_hostcode_run(w, &err);
      rig_presence_leave(&c->presence, c->dev);
      if (st != RIG_OK) rig_device_lose(c->dev, "%s", err.message);
    }
    /* A lost device's word stays: waits on its later points answer the
     * loss instead of passing as done. */
    if (!rig_device_is_lost(c->dev, NULL))
      atomic_store_explicit(&c->word, w->value, memory_order_release);
    rig_device_signal(c->dev);
    pthread_mutex_lock(&c->lock);
    c->tail = (c->tail + e->bytes) % QUEUE_BYTES;
    c->used -= e->bytes;
    pthread_cond_broadcast(&c->room);
    pthread_mutex_unlock(&c->lock);
  }
  return NULL;
}

/* A lost device's thread may still be inside a kernel nobody can stop. */
static bool cpu_busy(void *st, uint64_t value) {
  return rig_presence_busy(&((cpu *)st)->presence, value);
}

static const rig_driver cpu_driver = {
    .name = "cpu",
    .alloc = cpu_alloc,
    .free = cpu_free,
    .image_load = cpu_image_load,
    .image_entry = cpu_image_entry,
    .image_unload = cpu_image_unload,
    .can_wait = cpu_can_wait,
    .submit = cpu_submit,
    .busy = cpu_busy,
};

static unsigned cpu_devices(void) {
  return rig_env_get()->cpu_devices;
}

static rig_status cpu_count(unsigned *n, rig_error *err) {
  (void)err;
  *n = cpu_devices();
  return RIG_OK;
}

static rig_status cpu_open(unsigned n, rig_device **out, rig_error *err) {
  char name[32];
  snprintf(name, sizeof name, "cpu:%u", n);
  cpu *c = calloc(1, sizeof *c);
  if (c) c->ring = malloc(QUEUE_BYTES);
  if (!c || !c->ring) {
    if (c) free(c);
    return rig_error_set(err, RIG_ENOMEM, "%s: out of memory for its queue", name);
  }
  pthread_mutex_init(&c->lock, NULL);
  pthread_cond_init(&c->nonempty, NULL);
  pthread_cond_init(&c->room, NULL);
  rig_device_facts f = {.numa = -1};
  snprintf(f.name, sizeof f.name, "%s", name);
  snprintf(f.arch, sizeof f.arch, "cpu-%s", rig_host_isa());
  f.budget = rig_device_facts_of(rig_host())->budget;
  f.maps_host = f.host_addresses = true;
  f.runs_copies = f.runs_fills = f.runs_launches = true;
  f.max_shared = RIG_HOST_MAX_SHARED;
  f.threads = rig_pool_threads();
  rig_status st = rig_device_register(&cpu_driver, c, &f, &c->word, &c->dev, err);
  if (st != RIG_OK) {
    free(c->ring);
    free(c);
    return st;
  }
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  if (pthread_create(&c->thread, &attr, cpu_main, c) != 0)
    rig_device_lose(c->dev, "its thread could not start");
  pthread_attr_destroy(&attr);
  *out = c->dev;
  return RIG_OK;
}

static const char *const cpu_arch[] = {"cpu-", NULL};

/* A cpu:N runs its machine's host code: "cpu-<ISA>" images are the ISA's. */
static rig_status cpu_image_functions(const char *arch, const void *bytes, size_t len,
                                      void (*each)(void *ctx, const char *name), void *ctx,
                                      rig_error *err) {
  return rig_hostcode_image_functions(arch + strlen(cpu_arch[0]), bytes, len, each, ctx, err);
}

const rig_provider rig_provider_cpu = {
    .abi = RIG_PROVIDER_ABI,
    .family = "cpu",
    .arch_prefixes = cpu_arch,
    .count = cpu_count,
    .open = cpu_open,
    .image_functions = cpu_image_functions,
};
