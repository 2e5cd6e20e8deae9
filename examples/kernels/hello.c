/* The host kernel of examples/hello.json (built to kernels/hello.so):
 * plain C on the host ABI, called once per group of the launch. */
#include <stdint.h>
#include <string.h>

#include "rig/rig_host_abi.h"

void add(void *params, const rig_grid *grid);

/* y[i] += x[i] for i < n. The struct is the launch's list of typed
 * parameters, in order: a ref, a ref, a u32 (docs/json.md, "Typed
 * parameters"). Read with memcpy: the block is only 4-byte aligned for
 * the host ABI's sake. */
void add(void *params, const rig_grid *grid) {
  (void)grid; /* one group of one thread */
  struct {
    const uint32_t *x;
    uint32_t *y;
    uint32_t n;
  } p;
  memcpy(&p, params, sizeof p);
  for (uint32_t i = 0; i < p.n; i++) p.y[i] += p.x[i];
}
