/* Host kernels of examples/stencil.json (built to kernels/stencil.so): a
 * 1-D smoothing stencil over unsigned 64-bit cells, run until no cell
 * changes. Integer arithmetic, so that a checker computes the same cells
 * exactly (scripts/demo.sh, tests/test_cli.c). */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "rig/rig_host_abi.h"

void stencil(void *params, const rig_grid *grid);
void settle(void *params, const rig_grid *grid);

/* { const uint64_t *u; uint64_t *v; uint64_t *changed; uint32_t n; pad }:
 * v[i] = (u[i-1] + 2 u[i] + u[i+1]) / 4 inside, the two ends kept; then
 * changed[group] = whether a cell of this group's changed. One word per
 * group rather than one shared flag: groups run in parallel, and settle
 * (the next part, after every group) reduces the words without a race. */
void stencil(void *params, const rig_grid *grid) {
  struct {
    uint64_t u, v, changed;
    uint32_t n, pad;
  } p;
  memcpy(&p, params, sizeof p);
  const uint64_t *u = (const uint64_t *)(uintptr_t)p.u;
  uint64_t *v = (uint64_t *)(uintptr_t)p.v;
  uint64_t *changed = (uint64_t *)(uintptr_t)p.changed;
  uint64_t stride = (uint64_t)grid->groups[0] * grid->threads[0];
  bool any = false;
  for (uint32_t t = 0; t < grid->threads[0]; t++) {
    for (uint64_t i = (uint64_t)grid->group[0] * grid->threads[0] + t; i < p.n; i += stride) {
      uint64_t x = i == 0 || i + 1 == p.n ? u[i] : (u[i - 1] + 2 * u[i] + u[i + 1]) >> 2;
      any |= x != u[i];
      v[i] = x;
    }
  }
  changed[grid->group[0]] = any;
}

/* { const uint64_t *changed; uint64_t *status; uint32_t groups; uint32_t
 * trip }, one group: status[0] = whether any group changed a cell (the
 * loop's flag: 0 stops it), status[1] = trip + 1 (the trips run so far). */
void settle(void *params, const rig_grid *grid) {
  (void)grid;
  struct {
    uint64_t changed, status;
    uint32_t groups, trip;
  } p;
  memcpy(&p, params, sizeof p);
  const uint64_t *changed = (const uint64_t *)(uintptr_t)p.changed;
  uint64_t *status = (uint64_t *)(uintptr_t)p.status;
  uint64_t any = 0;
  for (uint32_t g = 0; g < p.groups; g++) any |= changed[g];
  status[0] = any != 0;
  status[1] = (uint64_t)p.trip + 1;
}
