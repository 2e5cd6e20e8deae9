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

/* What the library lends host code to call back, through rig_grid.calls.
 * A kernel checks `size` before it uses a member a later header added:
 * a member is there when offsetof(rig_host_calls, member) < size. */
typedef struct rig_host_calls {
  uint32_t size; /* sizeof(rig_host_calls) of the library running the code */
  /* Waits until the count at `count` (a rail's counts area plus
   * RIG_RAIL_ARRIVED_AT or RIG_RAIL_SENT_AT, rig_rail.h) reaches c, with
   * acquire: what the rail wrote before it is then visible. Returns 1 then,
   * 0 once a failure raised the count (RIG_RAIL_RAISED: the job failed, the
   * kernel should return). Where the rail's peer is reached by emulated
   * RMA (TCP between hosts), bytes and counts land only when this process
   * progresses UCX: this wait progresses it itself, spins a little, yields
   * a while, then sleeps on the transport's event (one wake-up a message).
   * On one host it spins, yields, then sleeps in steps, as a wait by hand
   * would. Any thread may call it; any address may be given (one that is
   * no rail's count is waited on by the same spin, yield and sleep). */
  int (*rail_wait)(const void *count, uint64_t c);
} rig_host_calls;

typedef struct rig_grid {
  uint32_t group[3];   /* this call's group */
  uint32_t groups[3];  /* the launch's groups */
  uint32_t threads[3]; /* the launch's threads per group */
  uint32_t worker;     /* the worker running this call */
  uint32_t shared_bytes;
  void *shared;                /* shared_bytes of scratch, 64-byte aligned, this call's */
  const rig_host_calls *calls; /* the library's calls, always set */
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
