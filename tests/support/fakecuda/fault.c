/* fault.c: the faults tests arm (fakecuda.h). Part of a test double of the
 * CUDA driver API, for the tests only. */
#include "fakecuda_internal.h"

static _Atomic CUresult launch_fault, alloc_fault;

void fakecuda_fail_next_launch(CUresult code) {
  atomic_store(&launch_fault, code);
}

void fakecuda_fail_next_alloc(CUresult code) {
  atomic_store(&alloc_fault, code);
}

CUresult fc_take_launch_fault(void) {
  return atomic_exchange(&launch_fault, CUDA_SUCCESS);
}

CUresult fc_take_alloc_fault(void) {
  return atomic_exchange(&alloc_fault, CUDA_SUCCESS);
}

/* The first fault of a context stays (a GPU reports the first). */
void fc_fault(struct CUctx_st *ctx, CUresult code) {
  CUresult none = CUDA_SUCCESS;
  atomic_compare_exchange_strong(&ctx->error, &none, code);
  pthread_mutex_lock(&fc_lock);
  fc_streams_wake(ctx);
  pthread_mutex_unlock(&fc_lock);
}
