/* Host code for GPU steps that follow a rail (built to kernels/rail_cuda.so,
 * installed with the examples; docs/cuda.md). A Fill of a CUDA Submit is
 * called on the host with the GPU's stream as its queue: this one enqueues
 * a wait in that stream for the rail's arrived count, so the launches after
 * it run once the bytes are there, and no host thread waits. (A Ready fill
 * later in the same Submit signals the rail in stream order: the cuda
 * device calls it from cuLaunchHostFunc.) It needs no CUDA header: the
 * driver is already loaded by the process, and found again by name. */
#define _GNU_SOURCE /* RTLD_NOLOAD */
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rig/rig_host_abi.h"

int rail_cuda_wait_arrived(void *queue, void *params, uint64_t value);

typedef int (*wait_value_fn)(void *stream, uint64_t addr, uint64_t value, unsigned flags);

/* cuStreamWaitValue64 of the libcuda this process loaded (RIG_CUDA_LIBRARY
 * names another, the tests' double). */
static wait_value_fn wait_value(void) {
  static wait_value_fn fn;
  if (fn) return fn;
  const char *lib = getenv("RIG_CUDA_LIBRARY");
  void *dl = dlopen(lib && *lib ? lib : "libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (!dl) return NULL;
  void *f = dlsym(dl, "cuStreamWaitValue64_v2");
  if (!f) f = dlsym(dl, "cuStreamWaitValue64");
  memcpy(&fn, &f, sizeof f);
  return fn;
}

/* { uint64_t counts; uint64_t count }: counts is the rail's Counts area as
 * the GPU addresses it (a ref to it: the cuda device registers it); the
 * stream waits until its arrived count (byte 256) reaches count. Returns
 * 0, or -1 without a driver, -2 when the driver refuses (the device is
 * then lost with the fill's failure). */
int rail_cuda_wait_arrived(void *queue, void *params, uint64_t value) {
  (void)value;
  uint64_t p[2];
  memcpy(p, params, sizeof p);
  wait_value_fn fn = wait_value();
  if (!fn || !queue) return -1;
  return fn(queue, p[0] + 256, p[1], 0 /* CU_STREAM_WAIT_VALUE_GEQ */) == 0 ? 0 : -2;
}
