/* Host kernels the benchmarks load as images (built to core_kernels.so by
 * bench/CMakeLists.txt; bench_core reads it from the path it was built
 * with, or from $RIG_BENCH_KERNELS). */
#include "rig/rig_host_abi.h"

void noop(void *params, const rig_grid *grid);

/* Does nothing: what a submission costs beyond running its code. */
void noop(void *params, const rig_grid *grid) {
  (void)params;
  (void)grid;
}
