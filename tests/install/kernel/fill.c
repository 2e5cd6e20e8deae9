/* A host kernel built outside the project against an installed tree
 * (tests/install/check_install.sh): with rig_add_kernel, and with cc and
 * pkg-config rig-kernel. A fixture, not a test: check_install.sh's
 * run_kernel runs it with the installed progrun and fails unless it wrote
 * exactly 7, 8, 9, 10 (fill.json). */
#include <stdint.h>
#include <string.h>

#include <rig/rig_host_abi.h>

void fill(void *params, const rig_grid *grid);

/* { uint32_t *out; uint32_t n, value }: out[i] = value + i for i < n, by
 * group 0's first thread (the description launches one). */
void fill(void *params, const rig_grid *grid) {
  struct {
    uint64_t out;
    uint32_t n, value;
  } p;
  memcpy(&p, params, sizeof p);
  if (grid->group[0] != 0) return;
  uint32_t *out = (uint32_t *)(uintptr_t)p.out;
  for (uint32_t i = 0; i < p.n; i++) out[i] = p.value + i;
}
