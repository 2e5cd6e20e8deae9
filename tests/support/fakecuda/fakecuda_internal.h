/* fakecuda_internal.h: what the files of fakecuda share. fakecuda is a
 * test double of the CUDA driver API for the tests only: its devices are
 * host memory and host threads. Every entry point is fc_<field> for a field
 * of RIG_CUDA_FUNCTIONS (so its signature is cuda_api.h's); exports.c
 * gives each its CUDA symbol names. */
#ifndef FAKECUDA_INTERNAL_H
#define FAKECUDA_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cuda_api.h"
#include "fakecuda.h"
#include "rig/rig_host_abi.h"

/* Codes cuda_api.h leaves out, which the double answers. */
enum {
  CUDA_ERROR_INVALID_DEVICE = 101,
  CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED = 713,
};

#define FC_MAX_DEVICES     3
#define FC_TOTAL_MEM       ((size_t)1 << 30)
#define FC_MAX_THREADS     1024
#define FC_SHARED          49152
#define FC_SHARED_OPTIN    232448
#define FC_MAX_PARAM_BYTES 32764

/* The entry points, declared from the X-macro. */
#define FC_DECLARE(ret, field, names, params) ret fc_##field params;
RIG_CUDA_FUNCTIONS(FC_DECLARE)
#undef FC_DECLARE

/* Count indices: one per entry point, then the kernels run. */
#define FC_INDEX(ret, field, names, params) FC_IX_##field,
enum { RIG_CUDA_FUNCTIONS(FC_INDEX) FC_IX_KERNEL_RUNS, FC_IX_COUNT };
#undef FC_INDEX

enum fc_live_kind {
  FC_LIVE_ALLOCATIONS,
  FC_LIVE_HOST_ALLOCATIONS,
  FC_LIVE_REGISTRATIONS,
  FC_LIVE_MODULES,
  FC_LIVE_STREAMS,
  FC_LIVE_GRAPHS,
  FC_LIVE_EXECS,
  FC_LIVE_COUNT
};

/* One mutex guards the double's tables; stream threads never hold it while
 * they run kernels or wait. */
extern pthread_mutex_t fc_lock;

/* Counts a success of entry point `ix` and answers CUDA_SUCCESS. */
CUresult fc_ok(int ix);
void fc_counted(int ix);
void fc_live_add(enum fc_live_kind kind, int64_t n);

struct CUctx_st {
  int dev;
  int refs;               /* primary-context retains; 0: not usable */
  unsigned gen;           /* counts the context's ends (last releases) */
  _Atomic CUresult error; /* sticky, set by a fault */
  bool peer[FC_MAX_DEVICES];
};

bool fc_initialized(void);

/* Under fc_lock: whether an object made in ctx at generation gen is still
 * of the context (the last release ends a context, and what was made in
 * it: its handles answer as freed ones do, though fakecuda_live still
 * counts them, so that a test sees what a backend left behind). */
static inline bool fc_alive(const struct CUctx_st *ctx, unsigned gen) {
  return ctx->gen == gen;
}

/* Under fc_lock: CUDA_SUCCESS with the thread's current context (retained)
 * in *ctx; its sticky error, *ctx set too; or, without one, the code to
 * answer. */
CUresult fc_current(struct CUctx_st **ctx);

/* Faults (fault.c). fc_take_launch_fault: 0, or the code of an armed launch
 * fault, disarmed. fc_take_alloc_fault likewise. fc_fault sets the sticky
 * error of a context and wakes whatever waits on its streams. */
CUresult fc_take_launch_fault(void);
CUresult fc_take_alloc_fault(void);
void fc_fault(struct CUctx_st *ctx, CUresult code);

/* Memory (memory.c), under fc_lock. */
void fc_memory_init(int devices);
/* CUDA_SUCCESS when [addr, addr + bytes) lies wholly inside one device
 * allocation, host allocation or registration (a zero-length range counts
 * its first byte). */
CUresult fc_check_range(uint64_t addr, size_t bytes);

/* A kernel launch, its parameter bytes its own (launch.c). */
struct CUfunc_st {
  struct CUfunc_st *next;
  struct CUmod_st *module;
  char *name;
  rig_launch_fn *fn;
  unsigned max_threads;
  unsigned max_dynamic_shared;
};
typedef struct fc_launch {
  struct CUfunc_st *func;
  rig_launch_fn *fn;
  unsigned grid[3], block[3], shared;
  size_t size;
  unsigned char *params;
} fc_launch;

/* Under fc_lock. */
bool fc_function_valid(struct CUfunc_st *f);
struct CUctx_st *fc_function_context(struct CUfunc_st *f);
/* Checks the form of a launch (params NULL, extra the buffer form) and its
 * geometry, and fills *l with a copy of the parameter bytes. */
CUresult fc_launch_prepare(fc_launch *l, struct CUfunc_st *f, const unsigned grid[3],
                           const unsigned block[3], unsigned shared, void **params, void **extra);
/* Copies a prepared launch (its bytes too). */
CUresult fc_launch_copy(fc_launch *dst, const fc_launch *src);
/* Runs a launch on a stream thread, fc_lock not held: false when a fault
 * took it instead (the context then holds the error). */
bool fc_launch_run(const fc_launch *l, struct CUctx_st *ctx);

/* Streams (stream.c). A stream op: run on the stream's thread. run answers
 * false when the stream must stop (a fault). */
typedef struct fc_op {
  struct fc_op *next;
  bool (*run)(struct fc_op *op, struct CUctx_st *ctx);
  void (*drop)(struct fc_op *op); /* frees what the op owns, not op */
} fc_op;
/* Under fc_lock: the stream if live and of the current context ctx. */
CUresult fc_stream_get(CUstream s, struct CUctx_st *ctx);
/* Under fc_lock: queues op (which the stream then owns). */
void fc_stream_push(CUstream s, fc_op *op);
/* Under fc_lock: wakes the waiters on ctx's streams (a fault). */
void fc_streams_wake(struct CUctx_st *ctx);

#endif
