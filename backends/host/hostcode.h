/* hostcode.h: what the host and cpu drivers share (backends/host): running
 * a work as host code, ELF images loaded from memory, page-aligned host
 * memory, and the worker pool. Private to the backends that run host code
 * (and the tests' polled driver, which stands in for one). */
#ifndef RIG_HOSTCODE_H
#define RIG_HOSTCODE_H

#include "rig/rig_driver.h"
#include "rig/rig_host_abi.h"

/* The most shared scratch a host launch's group may have. */
#define RIG_HOST_MAX_SHARED (48u * 1024u)

/* Runs w's parts on this thread as host code: launches over the worker
 * pool, fills, copies by memmove. Words are not host work. Returns RIG_OK,
 * or the error of a fill that failed (which loses the device). */
rig_status rig_hostcode_run(const rig_work *w, rig_error *err);

/* Which work a driver's thread is inside, so that what the work uses
 * outlives a loss of its device while the thread runs it (rig_driver's
 * busy): one per thread that runs a device's work. */
typedef struct rig_presence {
  _Atomic uint64_t inside; /* the value of the work running, or 0 */
} rig_presence;

/* Marks the thread inside work `value` of dev: false, marking nothing,
 * when dev is lost (the work must not run). */
bool rig_presence_enter(rig_presence *p, rig_device *dev, uint64_t value);
/* The thread left it; tells the core when dev was lost meanwhile. */
void rig_presence_leave(rig_presence *p, rig_device *dev);
/* Whether the thread may be inside work of a value up to `value`. */
bool rig_presence_busy(const rig_presence *p, uint64_t value);

/* ELF shared objects for this ISA, loaded from memory (memfd_create, then
 * dlopen of /proc/self/fd/N: nothing is left on disk). `device` names the
 * device in refusals. */
rig_status rig_hostcode_image_load(const char *device, const void *bytes, size_t len, void **image,
                                   rig_error *err);
rig_status rig_hostcode_image_entry(const char *device, void *image, const char *name, size_t len,
                                    rig_entry *out, rig_error *err);
void rig_hostcode_image_unload(void *image);
/* Why bytes are no ELF shared object, or NULL when their header says they
 * are one. */
const char *rig_hostcode_not_a_shared_object(const void *bytes, size_t len);
/* The functions an ELF shared object for `isa` exports (its dynamic
 * symbols of default visibility), each handed to `each`, read from the
 * bytes without loading them (elf.c): RIG_EREFUSED with why when they are
 * no such object. */
rig_status rig_hostcode_image_functions(const char *isa, const void *bytes, size_t len,
                                        void (*each)(void *ctx, const char *name), void *ctx,
                                        rig_error *err);

/* Page-aligned host memory for host and cpu devices. */
rig_status rig_hostcode_alloc(uint64_t bytes, rig_mem_info *out, rig_error *err);
void rig_hostcode_free(const rig_mem_info *mem);

/* ---- the worker pool ----------------------------------------------------------
 * One per process, sized from the cores of the process's cpuset (and its
 * cgroup CPU quota, or RIG_WORKERS), its threads bound to them. */

/* Calls fn(params, grid) once per group of `groups`, in parallel; a grid
 * of one group, or a call from inside a pool job, runs inline. */
void rig_pool_launch(rig_launch_fn *fn, void *params, const uint32_t groups[3],
                     const uint32_t threads[3], uint32_t shared_bytes);
/* How many threads run a launch's groups (the workers and the caller). */
unsigned rig_pool_threads(void);

#endif
