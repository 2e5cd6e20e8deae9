/* Host kernels of the ring (examples/ring-2.json, ring-4.json): machine i
 * has a rail to machine i + 1 (mod N). In run r machine 0 sends r; every
 * other machine adds its index to what it receives and passes it on; the
 * value back at machine 0 is added into its output, so that after R runs
 * it holds R (R - 1) / 2 + R N (N - 1) / 2. ring_head runs on machine 0
 * (ring_head.json), ring_node on every other (ring_node.json); each
 * program's rail 0 is the one from its left, 1 the one to its right, as
 * the job file maps them. Each is launched with one group of one thread. */
#include <string.h>

#include "rail_wait.h"
#include "rig/rig_host_abi.h"

void ring_head(void *params, const rig_grid *grid);
void ring_node(void *params, const rig_grid *grid);

/* A word sent in copy r mod 2 of an outbound area of 8-byte transfers. */
static void send_word(const rig_grid *grid, uint64_t outbound, unsigned char *counts,
                      uint64_t ready, uint64_t run, uint64_t v) {
  uint64_t *copy = (uint64_t *)(uintptr_t)outbound + (run % 2) * 32; /* copies of 256 bytes */
  /* The copy was last sent two runs ago. */
  if (run >= 2 && !rail_wait(grid, counts + RIG_RAIL_SENT_AT, run - 1)) return;
  copy[0] = v;
  ((rig_ready_fn *)(uintptr_t)ready)(counts, run + 1);
}

static uint64_t received(uint64_t inbound, uint64_t run) {
  return ((const uint64_t *)(uintptr_t)inbound)[(run % 2) * 32];
}

/* { out_area; out_counts; ready; in_area; in_counts; uint64_t *sum; run } */
void ring_head(void *params, const rig_grid *grid) {
  struct {
    uint64_t outbound, out_counts, ready, inbound, in_counts, sum, run;
  } p;
  memcpy(&p, params, sizeof p);
  send_word(grid, p.outbound, (unsigned char *)(uintptr_t)p.out_counts, p.ready, p.run, p.run);
  if (!rail_wait(grid, (unsigned char *)(uintptr_t)p.in_counts + RIG_RAIL_ARRIVED_AT, p.run + 1))
    return;
  *(uint64_t *)(uintptr_t)p.sum += received(p.inbound, p.run);
}

/* { out_area; out_counts; ready; in_area; in_counts; uint64_t index; run } */
void ring_node(void *params, const rig_grid *grid) {
  struct {
    uint64_t outbound, out_counts, ready, inbound, in_counts, index, run;
  } p;
  memcpy(&p, params, sizeof p);
  if (!rail_wait(grid, (unsigned char *)(uintptr_t)p.in_counts + RIG_RAIL_ARRIVED_AT, p.run + 1))
    return;
  uint64_t v = received(p.inbound, p.run) + p.index;
  send_word(grid, p.outbound, (unsigned char *)(uintptr_t)p.out_counts, p.ready, p.run, v);
}
