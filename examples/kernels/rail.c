/* Host kernels for receiving through a rail (built to kernels/rail.so,
 * installed with the examples): a step that waits, so that a receiving
 * program needs no spin loop of its own. */
#include <string.h>

#include "rail_wait.h"
#include "rig/rig_host_abi.h"

void rail_wait_count(void *params, const rig_grid *grid);

/* { uint64_t counts; uint64_t at; uint64_t c }: waits until the count at
 * byte `at` of the Counts area at `counts` (RIG_RAIL_ARRIVED_AT: 256,
 * RIG_RAIL_SENT_AT: 128) reaches c. Launch it with one group and one
 * thread, before the steps that read what arrived. It returns at once when
 * a failure raised the count. */
void rail_wait_count(void *params, const rig_grid *grid) {
  struct {
    uint64_t counts, at, c;
  } p;
  memcpy(&p, params, sizeof p);
  rail_wait(grid, (const unsigned char *)(uintptr_t)p.counts + p.at, p.c);
}
