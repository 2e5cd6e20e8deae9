/* launch.c: kernel launches, checked as the driver checks them, and run
 * on a stream's thread. Part of a test double of the CUDA driver API, for
 * the tests only. A kernel is a host function called once per block with
 * its rig_grid (worker 0, 64-byte aligned shared scratch); the block's
 * threads are its own loop. Only the parameter-buffer form of a launch is
 * taken (kernelParams NULL, extra = BUFFER_POINTER, BUFFER_SIZE, END). */
#include <stdlib.h>
#include <string.h>

#include "fakecuda_internal.h"

/* The extra array: BUFFER_POINTER and BUFFER_SIZE once each, then END. */
static CUresult read_extra(void **extra, const void **buf, size_t *size) {
  bool have_buf = false, have_size = false;
  if (!extra) return CUDA_ERROR_INVALID_VALUE;
  for (int i = 0; i < 4; i += 2) {
    if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER && !have_buf) {
      *buf = extra[i + 1];
      have_buf = true;
    } else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE && !have_size && extra[i + 1]) {
      *size = *(const size_t *)extra[i + 1];
      have_size = true;
    } else {
      return CUDA_ERROR_INVALID_VALUE;
    }
  }
  return extra[4] == CU_LAUNCH_PARAM_END ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult fc_launch_prepare(fc_launch *l, struct CUfunc_st *f, const unsigned grid[3],
                           const unsigned block[3], unsigned shared, void **params, void **extra) {
  if (!fc_function_valid(f)) return CUDA_ERROR_INVALID_HANDLE;
  const void *buf = NULL;
  size_t size = 0;
  if (params || read_extra(extra, &buf, &size)) return CUDA_ERROR_INVALID_VALUE;
  if (size > FC_MAX_PARAM_BYTES || (size && !buf)) return CUDA_ERROR_INVALID_VALUE;
  for (int i = 0; i < 3; i++)
    if (grid[i] == 0 || block[i] == 0) return CUDA_ERROR_INVALID_VALUE;
  if (grid[0] > 0x7fffffffu || grid[1] > 65535 || grid[2] > 65535) return CUDA_ERROR_INVALID_VALUE;
  if (block[0] > 1024 || block[1] > 1024 || block[2] > 64) return CUDA_ERROR_INVALID_VALUE;
  if ((uint64_t)block[0] * block[1] * block[2] > f->max_threads) return CUDA_ERROR_INVALID_VALUE;
  if (shared > f->max_dynamic_shared) return CUDA_ERROR_INVALID_VALUE;
  /* At least a byte, so that an empty block is still a pointer of ours. */
  unsigned char *bytes = malloc(size ? size : 1);
  if (!bytes) return CUDA_ERROR_OUT_OF_MEMORY;
  if (size) memcpy(bytes, buf, size);
  *l = (fc_launch){.func = f, .fn = f->fn, .shared = shared, .size = size, .params = bytes};
  memcpy(l->grid, grid, sizeof l->grid);
  memcpy(l->block, block, sizeof l->block);
  return CUDA_SUCCESS;
}

CUresult fc_launch_copy(fc_launch *dst, const fc_launch *src) {
  *dst = *src;
  dst->params = malloc(src->size ? src->size : 1);
  if (!dst->params) return CUDA_ERROR_OUT_OF_MEMORY;
  memcpy(dst->params, src->params, src->size);
  return CUDA_SUCCESS;
}

bool fc_launch_run(const fc_launch *l, struct CUctx_st *ctx) {
  CUresult fault = fc_take_launch_fault();
  if (fault) {
    fc_fault(ctx, fault);
    return false;
  }
  size_t room = ((size_t)l->shared + 63) & ~(size_t)63;
  void *shared = aligned_alloc(64, room ? room : 64);
  if (!shared) {
    fc_fault(ctx, CUDA_ERROR_LAUNCH_FAILED);
    return false;
  }
  rig_grid g = {.shared_bytes = l->shared, .shared = shared};
  memcpy(g.groups, l->grid, sizeof g.groups);
  memcpy(g.threads, l->block, sizeof g.threads);
  for (uint32_t z = 0; z < l->grid[2]; z++) {
    for (uint32_t y = 0; y < l->grid[1]; y++) {
      for (uint32_t x = 0; x < l->grid[0]; x++) {
        g.group[0] = x;
        g.group[1] = y;
        g.group[2] = z;
        /* Shared memory starts undefined on a GPU: garbage, not zeros. */
        memset(shared, 0xa5, room);
        l->fn(l->params, &g);
      }
    }
  }
  free(shared);
  fc_counted(FC_IX_KERNEL_RUNS);
  return true;
}

typedef struct launch_op {
  fc_op op;
  fc_launch l;
} launch_op;

static bool run_launch(fc_op *op, struct CUctx_st *ctx) {
  return fc_launch_run(&((launch_op *)op)->l, ctx);
}

static void drop_launch(fc_op *op) {
  free(((launch_op *)op)->l.params);
}

CUresult fc_LaunchKernel(CUfunction fn, unsigned int gx, unsigned int gy, unsigned int gz,
                         unsigned int bx, unsigned int by, unsigned int bz, unsigned int shared,
                         CUstream stream, void **params, void **extra) {
  pthread_mutex_lock(&fc_lock);
  struct CUctx_st *ctx = NULL;
  CUresult r = fc_current(&ctx);
  if (!r) r = fc_stream_get(stream, ctx);
  if (!r && !fc_function_valid(fn)) r = CUDA_ERROR_INVALID_HANDLE;
  if (!r && fc_function_context(fn) != ctx) r = CUDA_ERROR_INVALID_CONTEXT;
  launch_op *op = NULL;
  if (!r && !(op = calloc(1, sizeof *op))) r = CUDA_ERROR_OUT_OF_MEMORY;
  if (!r) {
    const unsigned grid[3] = {gx, gy, gz}, block[3] = {bx, by, bz};
    r = fc_launch_prepare(&op->l, fn, grid, block, shared, params, extra);
  }
  if (!r) {
    op->op.run = run_launch;
    op->op.drop = drop_launch;
    fc_stream_push(stream, &op->op);
  } else {
    free(op);
  }
  pthread_mutex_unlock(&fc_lock);
  return r ? r : fc_ok(FC_IX_LaunchKernel);
}
