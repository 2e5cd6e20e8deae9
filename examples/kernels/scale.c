/* The host kernel of examples/scale.json (built to kernels/scale.so), the
 * complete example of docs/json.md: plain C on the host ABI, called once
 * per group of the launch, groups in parallel. */
#include <stdint.h>
#include <string.h>

#include "rig/rig_host_abi.h"

void scale(void *params, const rig_grid *grid);

/* { const uint32_t *m; uint32_t *x; uint32_t trip; uint32_t n }:
 * x[i] = m[i] * (trip + 1) for i < n, each call its share of the i (a
 * grid-stride loop over its group's threads), so that any geometry
 * computes the same. */
void scale(void *params, const rig_grid *grid) {
  struct {
    const uint32_t *m;
    uint32_t *x;
    uint32_t trip, n;
  } p;
  memcpy(&p, params, sizeof p);
  uint64_t stride = (uint64_t)grid->groups[0] * grid->threads[0];
  for (uint32_t t = 0; t < grid->threads[0]; t++)
    for (uint64_t i = (uint64_t)grid->group[0] * grid->threads[0] + t; i < p.n; i += stride)
      p.x[i] = p.m[i] * (p.trip + 1);
}
