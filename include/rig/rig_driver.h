/* rig_driver.h: the interface between the core and a driver (a backend:
 * host, cpu, cuda; the tests' polled driver; the launcher's proxies). The
 * core calls a driver through one struct of function pointers and never
 * includes a backend's header; a driver calls back only what is declared
 * here. */
#ifndef RIG_DRIVER_H
#define RIG_DRIVER_H

#include <stdatomic.h>

#include "rig_core.h"
#include "rig_host_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Memory a driver made. */
typedef struct rig_mem_info {
  uint64_t address; /* as the device's work addresses it */
  uint64_t handle;  /* the driver's object (a CUdeviceptr, a host pointer) */
  void *host;       /* a host pointer to it, or NULL */
  void *driver;     /* the driver's own */
} rig_mem_info;

/* One hand-over: a submission's work, or a copy (sub NULL). Valid only
 * during the driver's submit call: a driver that runs the work later copies
 * what it needs (rig_work_bytes, rig_work_pack). */
typedef struct rig_work {
  uint64_t value;         /* the device's timeline value this work takes */
  const rig_point *waits; /* unreached points of other devices the driver
                             said it can wait on itself (can_wait) */
  size_t nwaits;
  const rig_submission *sub;
  const void *block;         /* the per-run block (never NULL) */
  const uint64_t *slot_addr; /* each slot's address as the device addresses it */
  /* A copy (sub == NULL): bytes from src to dst, both addressed by the
   * device. */
  uint64_t src, dst, length;
} rig_work;

typedef struct rig_driver {
  const char *name;
  rig_status (*alloc)(void *st, rig_buffer_kind kind, uint64_t bytes, rig_mem_info *out,
                      rig_error *err);
  void (*free)(void *st, const rig_mem_info *mem);
  /* Memory of another device (`owner`) as this device's work addresses it.
   * NULL means: host memory is addressed at its host pointer (when the
   * device maps host memory), nothing else. */
  rig_status (*map)(void *st, const rig_device *owner, const rig_mem_info *mem, uint64_t bytes,
                    uint64_t *address, void **mapping, rig_error *err);
  void (*unmap)(void *st, void *mapping);
  rig_status (*image_load)(void *st, const void *bytes, size_t len, void **image, rig_error *err);
  rig_status (*image_entry)(void *st, void *image, const char *name, size_t len, rig_entry *out,
                            rig_error *err);
  void (*image_unload)(void *st, void *image);
  /* Whether the device's queue can wait itself for `other`'s points. */
  bool (*can_wait)(void *st, const rig_device *other);
  /* Hands the work over. On failure nothing was handed over. */
  rig_status (*submit)(void *st, const rig_work *w, rig_error *err);
  /* Called by a waiter about to sleep on this device's point: drive or poll
   * the device for up to timeout_ns. NULL: the core sleeps until
   * rig_device_signal. */
  void (*sleep)(void *st, uint64_t value, int64_t timeout_ns);
  /* The process is ending: stop threads. */
  void (*stop)(void *st);
} rig_driver;

/* Registers a device driven by drv. `word` is its timeline word, in host
 * memory, written only by the driver. */
rig_status rig_device_register(const rig_driver *drv, void *st, const rig_device_facts *facts,
                               _Atomic uint64_t *word, rig_device **out, rig_error *err);

/* Wakes the waiters of dev after the driver stored a new value in its word. */
void rig_device_signal(rig_device *dev);

/* Loses dev for good: later calls, its memory and waits on its unreached
 * points answer RIG_ELOST with "<name> lost: <reason>". Only the first loss
 * counts. */
void rig_device_lose(rig_device *dev, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Loses dev as rig_device_lose does, but later calls answer `code` with
 * the message itself (a job's root cause, RIG_EJOB). */
void rig_device_lose_status(rig_device *dev, rig_status code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* A provider of devices by name: `open` is called for names starting with
 * `prefix` ("cpu:") that are not open yet. */
typedef rig_status rig_device_open_fn(const char *name, rig_device **out, rig_error *err);
rig_status rig_device_provider_add(const char *prefix, rig_device_open_fn *open, rig_error *err);

/* The parts of a submission, for drivers that run them. */
size_t rig_submission_nparts(const rig_submission *s);
const rig_part *rig_submission_part(const rig_submission *s, size_t i);

/* ---- Host code: what the host and cpu drivers share ------------------------ */

/* Runs w's parts on this thread as host code: launches over the worker
 * pool, fills, copies by memcpy. Words are not host work. Returns RIG_OK,
 * or the error of a fill that failed (which loses the device). */
rig_status rig_hostcode_run(const rig_work *w, rig_error *err);

/* ELF shared objects for this ISA, loaded from memory (memfd_create, then
 * dlopen of /proc/self/fd/N: nothing is left on disk). */
rig_status rig_hostcode_image_load(const char *device, const void *bytes, size_t len, void **image,
                                   rig_error *err);
rig_status rig_hostcode_image_entry(const char *device, void *image, const char *name, size_t len,
                                    rig_entry *out, rig_error *err);
void rig_hostcode_image_unload(void *image);

/* Page-aligned host memory for host and cpu devices. */
rig_status rig_hostcode_alloc(uint64_t bytes, rig_mem_info *out, rig_error *err);
void rig_hostcode_free(const rig_mem_info *mem);

/* A work's size when packed (for queues), and packing it into `into`
 * (rig_work_bytes bytes, 8-aligned); the packed copy reads as a work. */
size_t rig_work_bytes(const rig_work *w);
const rig_work *rig_work_pack(const rig_work *w, void *into);

/* ---- The worker pool --------------------------------------------------------
 * One per process, sized from the cores of the process's cpuset (and its
 * cgroup CPU quota), its threads bound to them. */

/* Calls fn(params, grid) once per group of `groups`, in parallel; a grid
 * of one group, or a call from inside a pool job, runs inline. */
void rig_pool_launch(rig_launch_fn *fn, void *params, const uint32_t groups[3],
                     const uint32_t threads[3], uint32_t shared_bytes);
/* How many threads run a launch's groups (the workers and the caller). */
unsigned rig_pool_threads(void);

/* The most shared scratch a host launch's group may have. */
#define RIG_HOST_MAX_SHARED (48u * 1024u)

#ifdef __cplusplus
}
#endif
#endif
