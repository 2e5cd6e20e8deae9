/* Host kernels of examples/saxpy.json (built to kernels/saxpy.so): plain C
 * on the host ABI, loaded on the host and on cpu:N devices. Each is called
 * once per group, groups in parallel, and loops over its own threads; a
 * grid-stride loop covers n elements whatever the launch's geometry, so
 * that editing the description's groups or threads keeps results right. */
#include <stdint.h>
#include <string.h>

#include "rig/rig_host_abi.h"

void saxpy(void *params, const rig_grid *grid);
void scale(void *params, const rig_grid *grid);

/* The elements this call handles: i = first, first + stride, ... < n. */
static uint64_t first_of(const rig_grid *grid, uint32_t thread) {
  return (uint64_t)grid->group[0] * grid->threads[0] + thread;
}
static uint64_t stride_of(const rig_grid *grid) {
  return (uint64_t)grid->groups[0] * grid->threads[0];
}

/* { const float *x; float *y; float a; uint32_t n }: y[i] = a * x[i] + y[i]
 * for i < n. Parameters are read with memcpy: the block is only 4-byte
 * aligned for the host ABI's sake. */
void saxpy(void *params, const rig_grid *grid) {
  struct {
    uint64_t x, y;
    float a;
    uint32_t n;
  } p;
  memcpy(&p, params, sizeof p);
  const float *x = (const float *)(uintptr_t)p.x;
  float *y = (float *)(uintptr_t)p.y;
  for (uint32_t t = 0; t < grid->threads[0]; t++)
    for (uint64_t i = first_of(grid, t); i < p.n; i += stride_of(grid)) y[i] = p.a * x[i] + y[i];
}

/* { const float *factor; float *x; uint32_t trip; uint32_t n }:
 * x[i] = x[i] * *factor + trip for i < n. The factor is read through an
 * address (memory the step fixes) and the trip from the run's ints, so that
 * the example shows both ways a parameter reaches a kernel. */
void scale(void *params, const rig_grid *grid) {
  struct {
    uint64_t factor, x;
    uint32_t trip, n;
  } p;
  memcpy(&p, params, sizeof p);
  const float c = *(const float *)(uintptr_t)p.factor;
  float *x = (float *)(uintptr_t)p.x;
  for (uint32_t t = 0; t < grid->threads[0]; t++)
    for (uint64_t i = first_of(grid, t); i < p.n; i += stride_of(grid))
      x[i] = x[i] * c + (float)p.trip;
}
