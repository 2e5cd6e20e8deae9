/* Host kernels of the two-machine pipeline (examples/pipeline.json): machine
 * 0 produces each run's block of 512 words and sends it over rail 1; machine
 * 1 waits for it, adds it into its output, and sends back an acknowledgement
 * that paces the producer, so that no copy is rewritten before it is read.
 * Each is launched with one group of one thread. */
#include <string.h>

#include "rail_wait.h"
#include "rig/rig_host_abi.h"

#define WORDS 512 /* a block: 4096 bytes, one copy of the rail's areas */

void produce(void *params, const rig_grid *grid);
void consume(void *params, const rig_grid *grid);

/* { uint64_t *outbound; void *counts; rig_ready_fn *ready; uint64_t run }:
 * block r is word i = r + i, written in copy r mod 2 once run r - 2's
 * block (the same copy) is acknowledged, then made ready as count r + 1. */
void produce(void *params, const rig_grid *grid) {
  struct {
    uint64_t outbound, counts, ready, run;
  } p;
  memcpy(&p, params, sizeof p);
  unsigned char *counts = (unsigned char *)(uintptr_t)p.counts;
  if (p.run >= 2 && !rail_wait(grid, counts + RIG_RAIL_ARRIVED_AT, p.run - 1)) return;
  uint64_t *block = (uint64_t *)(uintptr_t)p.outbound + (p.run % 2) * WORDS;
  for (uint64_t i = 0; i < WORDS; i++) block[i] = p.run + i;
  rig_ready_fn *ready = (rig_ready_fn *)(uintptr_t)p.ready;
  ready(counts, p.run + 1);
}

/* { const uint64_t *inbound; uint64_t *outbound; void *counts; uint64_t
 * *sum; rig_ready_fn *ready; uint64_t run }: waits for block r, adds it
 * into sum (after R runs sum[i] = R i + R (R - 1) / 2), then acknowledges
 * it with the run's number in copy r mod 2 of the way back. */
void consume(void *params, const rig_grid *grid) {
  struct {
    uint64_t inbound, outbound, counts, sum, ready, run;
  } p;
  memcpy(&p, params, sizeof p);
  unsigned char *counts = (unsigned char *)(uintptr_t)p.counts;
  if (!rail_wait(grid, counts + RIG_RAIL_ARRIVED_AT, p.run + 1)) return;
  const uint64_t *block = (const uint64_t *)(uintptr_t)p.inbound + (p.run % 2) * WORDS;
  uint64_t *sum = (uint64_t *)(uintptr_t)p.sum;
  for (uint64_t i = 0; i < WORDS; i++) sum[i] += block[i];
  /* The acknowledgement's copy was last sent two runs ago. */
  if (p.run >= 2 && !rail_wait(grid, counts + RIG_RAIL_SENT_AT, p.run - 1)) return;
  uint64_t *ack = (uint64_t *)(uintptr_t)p.outbound + (p.run % 2) * 32; /* copies of 256 bytes */
  ack[0] = p.run;
  rig_ready_fn *ready = (rig_ready_fn *)(uintptr_t)p.ready;
  ready(counts, p.run + 1);
}
