/* stream.c: streams, each a thread of its own that runs the stream's
 * operations in order, so that work completes asynchronously as on a GPU;
 * the value ops, host functions and copies. Part of a test double of the
 * CUDA driver API, for the tests only.
 *
 * The double has no default stream: a NULL stream is refused
 * (CUDA_ERROR_INVALID_HANDLE), so that a backend that forgets its stream
 * is caught. A stream is used only with its own context current. */
#define _GNU_SOURCE
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fakecuda_internal.h"

struct CUstream_st {
  struct CUstream_st *next; /* live streams, under fc_lock */
  struct CUctx_st *ctx;
  unsigned gen;      /* of ctx, when made */
  pthread_mutex_t m; /* guards what follows; taken after fc_lock */
  pthread_cond_t cv;
  fc_op *head, *tail;
  size_t pending; /* queued or running */
  bool destroyed;
  CUresult stopped; /* a fault's code: the stream runs nothing more */
  pthread_t thread;
};

static struct CUstream_st *streams;

static void free_op(fc_op *op) {
  if (op->drop) op->drop(op);
  free(op);
}

static void *stream_main(void *arg) {
  struct CUstream_st *s = arg;
  pthread_mutex_lock(&s->m);
  for (;;) {
    while ((!s->head || s->stopped) && !s->destroyed) pthread_cond_wait(&s->cv, &s->m);
    if (!s->head || s->stopped) break; /* destroyed: the rest never runs */
    fc_op *op = s->head;
    s->head = op->next;
    if (!s->head) s->tail = NULL;
    pthread_mutex_unlock(&s->m);
    CUresult before = atomic_load(&s->ctx->error);
    bool ran = !before && op->run(op, s->ctx);
    free_op(op);
    pthread_mutex_lock(&s->m);
    if (ran) {
      s->pending--;
    } else {
      CUresult code = atomic_load(&s->ctx->error);
      s->stopped = code ? code : CUDA_ERROR_LAUNCH_FAILED;
    }
    pthread_cond_broadcast(&s->cv);
  }
  while (s->head) {
    fc_op *op = s->head;
    s->head = op->next;
    free_op(op);
  }
  pthread_mutex_unlock(&s->m);
  pthread_mutex_destroy(&s->m);
  pthread_cond_destroy(&s->cv);
  free(s);
  return NULL;
}

CUresult fc_stream_get(CUstream s, struct CUctx_st *ctx) {
  struct CUstream_st *t = streams;
  while (t && t != s) t = t->next;
  if (!t || !fc_alive(t->ctx, t->gen)) return CUDA_ERROR_INVALID_HANDLE;
  return t->ctx == ctx ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

void fc_stream_push(CUstream s, fc_op *op) {
  op->next = NULL;
  pthread_mutex_lock(&s->m);
  if (s->tail) {
    s->tail->next = op;
  } else {
    s->head = op;
  }
  s->tail = op;
  s->pending++;
  pthread_cond_broadcast(&s->cv);
  pthread_mutex_unlock(&s->m);
}

void fc_streams_wake(struct CUctx_st *ctx) {
  for (struct CUstream_st *t = streams; t; t = t->next) {
    if (t->ctx != ctx) continue;
    pthread_mutex_lock(&t->m);
    pthread_cond_broadcast(&t->cv);
    pthread_mutex_unlock(&t->m);
  }
}

CUresult fc_StreamCreate(CUstream *stream, unsigned int flags) {
  pthread_mutex_lock(&fc_lock);
  struct CUctx_st *ctx = NULL;
  CUresult r = fc_current(&ctx);
  if (!r && (!stream || (flags & ~CU_STREAM_NON_BLOCKING))) r = CUDA_ERROR_INVALID_VALUE;
  struct CUstream_st *s = NULL;
  if (!r && !(s = calloc(1, sizeof *s))) r = CUDA_ERROR_OUT_OF_MEMORY;
  if (!r) {
    s->ctx = ctx;
    s->gen = ctx->gen;
    pthread_mutex_init(&s->m, NULL);
    pthread_cond_init(&s->cv, NULL);
    if (pthread_create(&s->thread, NULL, stream_main, s) != 0) {
      pthread_mutex_destroy(&s->m);
      pthread_cond_destroy(&s->cv);
      free(s);
      r = CUDA_ERROR_OUT_OF_MEMORY;
    }
  }
  if (!r) {
    s->next = streams;
    streams = s;
    fc_live_add(FC_LIVE_STREAMS, 1);
    *stream = s;
  }
  pthread_mutex_unlock(&fc_lock);
  return r ? r : fc_ok(FC_IX_StreamCreate);
}

/* Returns at once, as the driver's: pending work still completes, then the
 * thread ends. */
CUresult fc_StreamDestroy(CUstream stream) {
  pthread_mutex_lock(&fc_lock);
  struct CUctx_st *ctx = NULL;
  CUresult r = fc_current(&ctx);
  if (!r) r = fc_stream_get(stream, ctx);
  if (!r) {
    for (struct CUstream_st **p = &streams; *p; p = &(*p)->next) {
      if (*p == stream) {
        *p = stream->next;
        break;
      }
    }
    fc_live_add(FC_LIVE_STREAMS, -1);
    pthread_detach(stream->thread);
    pthread_mutex_lock(&stream->m);
    stream->destroyed = true;
    pthread_cond_broadcast(&stream->cv);
    pthread_mutex_unlock(&stream->m);
  }
  pthread_mutex_unlock(&fc_lock);
  return r ? r : fc_ok(FC_IX_StreamDestroy);
}

/* The stream's state once its context is checked: CUDA_SUCCESS when all
 * is done, CUDA_ERROR_NOT_READY, or the fault that stopped it. Under s->m. */
static CUresult stream_state(struct CUstream_st *s) {
  CUresult e = atomic_load(&s->ctx->error);
  if (e) return e;
  if (s->stopped) return s->stopped;
  return s->pending ? CUDA_ERROR_NOT_READY : CUDA_SUCCESS;
}

CUresult fc_StreamQuery(CUstream stream) {
  pthread_mutex_lock(&fc_lock);
  struct CUctx_st *ctx = NULL;
  CUresult r = fc_current(&ctx);
  if (!r) r = fc_stream_get(stream, ctx);
  if (!r) {
    pthread_mutex_lock(&stream->m);
    r = stream_state(stream);
    pthread_mutex_unlock(&stream->m);
  }
  pthread_mutex_unlock(&fc_lock);
  return r ? r : fc_ok(FC_IX_StreamQuery);
}

CUresult fc_StreamSynchronize(CUstream stream) {
  pthread_mutex_lock(&fc_lock);
  struct CUctx_st *ctx = NULL;
  CUresult r = fc_current(&ctx);
  if (!r) r = fc_stream_get(stream, ctx);
  if (!r) pthread_mutex_lock(&stream->m);
  /* Waits without fc_lock: the stream's thread, or a fault elsewhere in the
   * context (fc_fault, which wakes this), ends the wait. */
  pthread_mutex_unlock(&fc_lock);
  if (r) return r;
  while ((r = stream_state(stream)) == CUDA_ERROR_NOT_READY)
    pthread_cond_wait(&stream->cv, &stream->m);
  pthread_mutex_unlock(&stream->m);
  return r ? r : fc_ok(FC_IX_StreamSynchronize);
}

/* ---- operations ---------------------------------------------------------- */

typedef struct value_op {
  fc_op op;
  _Atomic uint64_t *addr;
  uint64_t value;
  unsigned flags;
} value_op;

static bool run_write(fc_op *op, struct CUctx_st *ctx) {
  (void)ctx;
  value_op *v = (value_op *)op;
  atomic_store_explicit(v->addr, v->value, memory_order_release);
  return true;
}

/* The conditions of CUstreamWaitValue_flags: GEQ (cyclic), EQ, AND, NOR. */
static bool wait_met(uint64_t have, uint64_t want, unsigned flags) {
  switch (flags & 3u) {
    case 0:
      return (int64_t)(have - want) >= 0;
    case 1:
      return have == want;
    case 2:
      return (have & want) != 0;
    default:
      return ~(have | want) != 0;
  }
}

/* Polls with a brief spin, then 20 us sleeps, so a long wait takes no
 * core; a fault in the context ends it. */
static bool run_wait(fc_op *op, struct CUctx_st *ctx) {
  value_op *v = (value_op *)op;
  for (unsigned i = 0;; i++) {
    if (wait_met(atomic_load_explicit(v->addr, memory_order_acquire), v->value, v->flags))
      return true;
    if (atomic_load(&ctx->error)) return false;
    if (i < 64) {
      sched_yield();
    } else {
      struct timespec t = {0, 20000};
      nanosleep(&t, NULL);
    }
  }
}

static CUresult value_op_push(CUstream stream, CUdeviceptr addr, uint64_t value, unsigned flags,
                              bool (*run)(fc_op *, struct CUctx_st *)) {
  struct CUctx_st *ctx = NULL;
  CUresult r = fc_current(&ctx);
  if (!r) r = fc_stream_get(stream, ctx);
  if (!r && (addr % 8 != 0)) r = CUDA_ERROR_INVALID_VALUE;
  if (!r) r = fc_check_range(addr, 8);
  value_op *v = NULL;
  if (!r && !(v = calloc(1, sizeof *v))) r = CUDA_ERROR_OUT_OF_MEMORY;
  if (!r) {
    v->op.run = run;
    v->addr = (_Atomic uint64_t *)(uintptr_t)addr;
    v->value = value;
    v->flags = flags;
    fc_stream_push(stream, &v->op);
  }
  return r;
}

/* Flags: CU_STREAM_WRITE_VALUE_DEFAULT or NO_MEMORY_BARRIER (1). */
CUresult fc_StreamWriteValue64(CUstream stream, CUdeviceptr addr, uint64_t value,
                               unsigned int flags) {
  pthread_mutex_lock(&fc_lock);
  CUresult r = flags & ~1u ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
  if (!r) r = value_op_push(stream, addr, value, flags, run_write);
  pthread_mutex_unlock(&fc_lock);
  return r ? r : fc_ok(FC_IX_StreamWriteValue64);
}

/* Flags: a condition (GEQ, EQ, AND, NOR), optionally FLUSH (1 << 30). */
CUresult fc_StreamWaitValue64(CUstream stream, CUdeviceptr addr, uint64_t value,
                              unsigned int flags) {
  pthread_mutex_lock(&fc_lock);
  CUresult r = flags & ~(3u | 1u << 30) ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
  if (!r) r = value_op_push(stream, addr, value, flags, run_wait);
  pthread_mutex_unlock(&fc_lock);
  return r ? r : fc_ok(FC_IX_StreamWaitValue64);
}

typedef struct host_op {
  fc_op op;
  CUhostFn fn;
  void *user;
} host_op;

static bool run_host(fc_op *op, struct CUctx_st *ctx) {
  (void)ctx;
  host_op *h = (host_op *)op;
  h->fn(h->user);
  return true;
}

CUresult fc_LaunchHostFunc(CUstream stream, CUhostFn fn, void *user) {
  pthread_mutex_lock(&fc_lock);
  struct CUctx_st *ctx = NULL;
  CUresult r = fc_current(&ctx);
  if (!r) r = fc_stream_get(stream, ctx);
  if (!r && !fn) r = CUDA_ERROR_INVALID_VALUE;
  host_op *h = NULL;
  if (!r && !(h = calloc(1, sizeof *h))) r = CUDA_ERROR_OUT_OF_MEMORY;
  if (!r) {
    h->op.run = run_host;
    h->fn = fn;
    h->user = user;
    fc_stream_push(stream, &h->op);
  }
  pthread_mutex_unlock(&fc_lock);
  return r ? r : fc_ok(FC_IX_LaunchHostFunc);
}

typedef struct copy_op {
  fc_op op;
  void *dst;
  const void *src;
  size_t bytes;
} copy_op;

static bool run_copy(fc_op *op, struct CUctx_st *ctx) {
  (void)ctx;
  copy_op *c = (copy_op *)op;
  memmove(c->dst, c->src, c->bytes);
  return true;
}

static CUresult copy_push(CUdeviceptr dst, uint64_t src, size_t bytes, CUstream stream) {
  struct CUctx_st *ctx = NULL;
  CUresult r = fc_current(&ctx);
  if (!r) r = fc_stream_get(stream, ctx);
  if (!r) r = fc_check_range(dst, bytes);
  if (!r) r = fc_check_range(src, bytes);
  copy_op *c = NULL;
  if (!r && !(c = calloc(1, sizeof *c))) r = CUDA_ERROR_OUT_OF_MEMORY;
  if (!r) {
    c->op.run = run_copy;
    c->dst = (void *)(uintptr_t)dst;
    c->src = (const void *)(uintptr_t)src;
    c->bytes = bytes;
    fc_stream_push(stream, &c->op);
  }
  return r;
}

CUresult fc_MemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream stream) {
  pthread_mutex_lock(&fc_lock);
  CUresult r = copy_push(dst, src, bytes, stream);
  pthread_mutex_unlock(&fc_lock);
  return r ? r : fc_ok(FC_IX_MemcpyAsync);
}

CUresult fc_MemcpyHtoDAsync(CUdeviceptr dst, const void *src, size_t bytes, CUstream stream) {
  pthread_mutex_lock(&fc_lock);
  CUresult r = copy_push(dst, (uint64_t)(uintptr_t)src, bytes, stream);
  pthread_mutex_unlock(&fc_lock);
  return r ? r : fc_ok(FC_IX_MemcpyHtoDAsync);
}
