/* fakecuda.h: the test hooks of fakecuda, a test double of the CUDA driver
 * API (libcuda) that exists only for the tests of machines without a GPU.
 * Tests reach these by dlsym on libfakecuda.so (dlopen with RTLD_NOLOAD),
 * so that nothing links the double. */
#ifndef FAKECUDA_H
#define FAKECUDA_H

#include <stdint.h>

#include "cuda_api.h"

#pragma GCC visibility push(default)

/* The next kernel to run (a cuLaunchKernel or a graph's kernel node) does
 * not run: its context takes `code` as a sticky error, as an illegal
 * address does on a GPU. Every later call in that context answers `code`
 * and its streams run nothing more. */
void fakecuda_fail_next_launch(CUresult code);

/* The next cuMemAlloc or cuMemHostAlloc answers `code` (once, not sticky). */
void fakecuda_fail_next_alloc(CUresult code);

/* Successful calls of an entry point by its unversioned name ("cuMemAlloc",
 * "cuGraphLaunch"), or "kernel_runs": kernels run, graph nodes included.
 * UINT64_MAX for a name the double does not know (so a typo fails a test). */
uint64_t fakecuda_count(const char *call);

/* Live "allocations", "host_allocations", "registrations", "modules",
 * "streams", "graphs", "execs"; UINT64_MAX for any other name. */
uint64_t fakecuda_live(const char *what);

/* Sets every count of fakecuda_count to 0 (live counts stay: they are
 * state, not history). */
void fakecuda_reset_counts(void);

#pragma GCC visibility pop

#endif
