/* rig_host_abi.h: what host code (kernels of host and cpu:N devices)
 * includes. Plain C with no other dependency: a kernel image is an ELF
 * shared object whose functions have these types. */
#ifndef RIG_HOST_ABI_H
#define RIG_HOST_ABI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Exported; the rest of librig is hidden (src/librig.map). */
#pragma GCC visibility push(default)

typedef struct rig_grid {
  uint32_t group[3];   /* this call's group */
  uint32_t groups[3];  /* the launch's groups */
  uint32_t threads[3]; /* the launch's threads per group */
  uint32_t worker;     /* the worker running this call */
  uint32_t shared_bytes;
  void *shared; /* shared_bytes of scratch, 64-byte aligned, this call's */
} rig_grid;

/* A Launch: called once per group, groups in parallel; the threads of a
 * group are the function's own loop. params is the launch's parameter block
 * after holes and refs: each ref's 8 bytes hold its slot's address plus the
 * offset the description put there. */
typedef void rig_launch_fn(void *params, const rig_grid *grid);

/* A Fill: queue is NULL on host and cpu devices; value is the timeline value
 * of the submission. Returns 0, or an error that loses the device. */
typedef int rig_fill_fn(void *queue, void *params, uint64_t value);

/* A rail's ready function: stores ready = count in counts and wakes the
 * rail. */
typedef void rig_ready_fn(void *counts, uint64_t count);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
