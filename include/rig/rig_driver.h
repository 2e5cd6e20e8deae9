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

/* Exported; the rest of librig is hidden (src/librig.map). */
#pragma GCC visibility push(default)

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
  /* Called by a waiter after about a microsecond's spin on this device's
   * point, again and again till it is reached: drive or poll the device for
   * up to timeout_ns (the driver chooses how long it spins or yields before
   * it sleeps). NULL: the core yields a while, then sleeps until
   * rig_device_signal. */
  void (*sleep)(void *st, uint64_t value, int64_t timeout_ns);
  /* The device is gone (rig_device_unregister, and nothing uses it any
   * more): stop its threads and free st. NULL: nothing to do. */
  void (*stop)(void *st);
  /* Optional: what the device keeps per submission, made once when the
   * submission is (a CUDA graph of its launches): *state, read back in
   * each hand-over with rig_submission_prepared, and given to forget once
   * the submission and its last work are done. A refusal refuses the
   * make with its message. */
  rig_status (*prepare)(void *st, const rig_submission *sub, void **state, rig_error *err);
  void (*forget)(void *st, void *state);
  /* Optional: once the device is lost, whether work of a value up to
   * `value` may still be running, or yet start, on a thread or queue
   * nobody can stop (a kernel left spinning). What such work uses (its
   * image's code, its memory, its submission) is kept while this says so,
   * whatever the order of releases. NULL: a lost device runs nothing
   * more. A driver whose thread leaves work of a lost device calls
   * rig_device_left. */
  bool (*busy)(void *st, uint64_t value);
} rig_driver;

/* Registers a device driven by drv. `word` is its timeline word, in host
 * memory, written only by the driver. */
rig_status rig_device_register(const rig_driver *drv, void *st, const rig_device_facts *facts,
                               _Atomic uint64_t *word, rig_device **out, rig_error *err);

/* Gives a registered device up: once no buffer, image or submission of it
 * is left, its driver's stop is called and its place in the device table
 * is free again. Points of a device that is gone mean nothing. */
void rig_device_unregister(rig_device *dev);

/* Wakes the waiters of dev after the driver stored a new value in its word. */
void rig_device_signal(rig_device *dev);

/* Loses dev for good: later calls, its memory and waits on its unreached
 * points answer RIG_ELOST with "<name> lost: <reason>". Only the first loss
 * counts. */
void rig_device_lose(rig_device *dev, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A thread of dev's driver left work of dev, which is lost (its busy
 * hook now says so): what waited for it is released. Any thread but one
 * inside a callback of the core. */
void rig_device_left(rig_device *dev);

/* Loses dev as rig_device_lose does, but later calls answer `code` with
 * the message itself (a job's root cause, RIG_EJOB). */
void rig_device_lose_status(rig_device *dev, rig_status code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ---- Providers: how a backend registers -----------------------------------
 * A backend fills one rig_provider (a const global named
 * rig_provider_<backend>); the build lists the enabled backends in a table
 * (CMake's RIG_BACKENDS, the host first) that the core reads when it
 * starts (docs/internals.md). The core opens a family's devices by name
 * and index through it; nothing outside the backend spells its family or
 * arch names. */

/* The ABI of rig_provider and of the driver interface it opens devices
 * with: raised whenever either changes. The core refuses a provider of
 * another (its family then has no device, and says why). */
#define RIG_PROVIDER_ABI 2

typedef struct rig_provider {
  /* abi and family come first in every ABI, so that the core can read
   * them of any provider: RIG_PROVIDER_ABI as the backend saw it. */
  unsigned abi;
  /* The family: its devices are "<family>:0", "<family>:1", ... or, for a
   * family of one device (`single`: the host), "<family>" itself. */
  const char *family;
  bool single;
  /* The arch strings its devices have start with one of these (NULL
   * ends the list): a description's arch names its family. */
  const char *const *arch_prefixes;
  /* The family of the archs no family's prefix names: the host, whose
   * arch is its machine's ISA ("x86_64", "aarch64"), whichever it is. */
  bool other_archs;
  /* How many devices of the family this machine has: RIG_OK with *n (0
   * included), or why there are none at all ("no driver (libcuda.so.1 not
   * found)"). Called once, when the core starts. */
  rig_status (*count)(unsigned *n, rig_error *err);
  /* Opens device `index` (< the count): registers it with
   * rig_device_register. Called at most once per index, under the core's
   * open lock. */
  rig_status (*open)(unsigned index, rig_device **out, rig_error *err);
  /* Optional (NULL: the family cannot tell without a device). The
   * functions an image for `arch` exports, each handed to `each`, found
   * without a device and without running any of the image's code (what
   * `progrun check` looks launches up in): RIG_EREFUSED with why the bytes
   * are no image of arch (message without a device's name). */
  rig_status (*image_functions)(const char *arch, const void *bytes, size_t len,
                                void (*each)(void *ctx, const char *name), void *ctx,
                                rig_error *err);
} rig_provider;

/* The timeline word of point p's device and the value p waits for: what a
 * driver whose queue waits on another device's points itself (can_wait)
 * needs, e.g. to make its queue wait for *word >= *value (a CUDA stream's
 * cuStreamWaitValue64 on the word, registered so the device sees it). The
 * word is host memory, valid while p's device is registered; NULL for the
 * reached point or a point of no device. */
const _Atomic uint64_t *rig_point_word(rig_point p, uint64_t *value);

/* Host memory made elsewhere (a rail's areas, which UCX allocates so that
 * peers on the host map them) as a buffer of the host: release(ctx) frees
 * it once the buffer is released and the work on it is done. On failure
 * the memory stays the caller's. */
rig_status rig_buffer_adopt(void *host, uint64_t bytes, void (*release)(void *ctx), void *ctx,
                            rig_buffer **out, rig_error *err);

/* What the device's prepare made for s (NULL when it has none). */
void *rig_submission_prepared(const rig_submission *s);

/* Where the host's workers go: near the PCI device of this bus id (the
 * first GPU), on the cores of its NUMA node that the process may use. A
 * backend says so when it counts its devices, before the host opens; the
 * first call counts. rig_host_near_bus answers it, or NULL. */
void rig_host_near(const char *bus_id);
const char *rig_host_near_bus(void);

/* The parts of a submission, for drivers that run them. */
size_t rig_submission_nparts(const rig_submission *s);
const rig_part *rig_submission_part(const rig_submission *s, size_t i);

/* A work's per-run state of part i (its parameter bytes, then its
 * geometry: rig_block_geometry). */
const void *rig_work_part_block(const rig_work *w, size_t part);

/* Part `part`'s parameter bytes (a fill or a launch) as its code reads
 * them, into params (RIG_MAX_PARAMS bytes): the block's bytes, each ref's 8
 * bytes raised by its slot's address. Answers how many bytes. */
size_t rig_work_params(const rig_work *w, size_t part, void *params);

/* A side of a copy or words part (a slot, or fixed memory), as the
 * device addresses it. */
uint64_t rig_work_side_address(const rig_work *w, rig_side side);

/* A copy part's first source and destination bytes, as the device
 * addresses them: its sides at the block's offsets. */
void rig_work_copy_ends(const rig_work *w, size_t part, uint64_t *src, uint64_t *dst);

/* A work's size when packed (for queues), and packing it into `into`
 * (rig_work_bytes bytes, 8-aligned); the packed copy reads as a work. */
size_t rig_work_bytes(const rig_work *w);
const rig_work *rig_work_pack(const rig_work *w, void *into);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
