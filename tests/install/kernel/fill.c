/* A host kernel built outside the project against an installed tree
 * (tests/install/check_install.sh): with rig_add_kernel, and with cc and
 * pkg-config rig-kernel. check_install.sh's run_kernel runs it with the
 * installed progrun and fails unless it wrote exactly 7, 8, 9, 10
 * (fill.json); the kernel itself checks that it was given the one input
 * and the grid fill.json describes, and aborts the run otherwise (the
 * params the installed headers laid out are what the kernel reads). */
#include <stdint.h>
#include <stdlib.h>
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
  /* fill.json: 4 values from 7 into its 16-byte input, one group. */
  if (!p.out || p.n != 4 || p.value != 7) abort();
  if (grid->group[0] != 0) return;
  uint32_t *out = (uint32_t *)(uintptr_t)p.out;
  for (uint32_t i = 0; i < p.n; i++) out[i] = p.value + i;
}
