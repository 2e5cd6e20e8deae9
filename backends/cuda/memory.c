/* GPU memory and borrows: Device by cuMemAlloc, Pinned and Mapped by
 * cuMemHostAlloc (portable, mapped for every GPU), host memory borrowed by
 * cuMemHostRegister of its pages (counted, so two borrows of one page
 * register it once), another GPU's memory by peer access. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "cuda_internal.h"

#define PAGE      4096u
#define MEM_MAGIC 0x72696763756461ull /* "rigcuda" */

/* What mem_info.driver points at for memory of a GPU. */
typedef struct cuda_mem {
  uint64_t magic;
  bool host; /* cuMemHostAlloc'd */
  cuda_gpu *gpu;
} cuda_mem;

rig_status cuda_alloc(void *st, rig_buffer_kind kind, uint64_t bytes, rig_mem_info *out,
                      rig_error *err) {
  cuda_gpu *g = st;
  cuda_mem *m = malloc(sizeof *m);
  if (!m) return rig_error_set(err, RIG_ENOMEM, "%s: out of memory", g->name);
  m->magic = MEM_MAGIC;
  m->gpu = g;
  m->host = kind != RIG_KIND_DEVICE;
  size_t n = bytes ? (size_t)bytes : 1;
  const char *call = m->host ? "cuMemHostAlloc" : "cuMemAlloc";
  cuda_enter(g);
  CUresult r;
  CUdeviceptr dptr = 0;
  void *host = NULL;
  if (m->host) {
    r = rig_cu.MemHostAlloc(&host, n, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP);
    /* Mapped memory falls back to pinned where mapping is refused: with
     * unified addressing the GPU reaches pinned memory all the same. */
    if (r != CUDA_SUCCESS && r != CUDA_ERROR_OUT_OF_MEMORY && kind == RIG_KIND_MAPPED)
      r = rig_cu.MemHostAlloc(&host, n, CU_MEMHOSTALLOC_PORTABLE);
    if (r == CUDA_SUCCESS) {
      call = "cuMemHostGetDevicePointer";
      r = rig_cu.MemHostGetDevicePointer(&dptr, host, 0);
      if (r != CUDA_SUCCESS) rig_cu.MemFreeHost(host);
    }
  } else {
    r = rig_cu.MemAlloc(&dptr, n);
  }
  cuda_leave();
  if (r != CUDA_SUCCESS) {
    free(m);
    if (r == CUDA_ERROR_OUT_OF_MEMORY)
      return rig_error_set(err, RIG_ENOMEM, "%s: %s of %llu bytes: CUDA_ERROR_OUT_OF_MEMORY",
                           g->name, call, (unsigned long long)bytes);
    return cuda_fail(g, call, r, err);
  }
  out->address = out->handle = dptr;
  out->host = host;
  out->driver = m;
  return RIG_OK;
}

void cuda_free(void *st, const rig_mem_info *mem) {
  cuda_gpu *g = st;
  cuda_mem *m = mem->driver;
  cuda_enter(g);
  CUresult r = m->host ? rig_cu.MemFreeHost(mem->host) : rig_cu.MemFree(mem->handle);
  cuda_leave();
  /* A lost context refuses frees; its memory went with it. */
  if (r != CUDA_SUCCESS && !rig_device_is_lost(g->dev, NULL))
    cuda_fail(g, m->host ? "cuMemFreeHost" : "cuMemFree", r, NULL);
  free(m);
}

/* ---- host pages registered for the GPUs ------------------------------------ */

typedef struct reg {
  uintptr_t start, end;
  CUdeviceptr dptr; /* of start */
  unsigned refs;
  struct reg *next;
} reg;

static pthread_mutex_t regs_lock = PTHREAD_MUTEX_INITIALIZER;
static reg *regs;

rig_status cuda_host_register(cuda_gpu *g, const void *p, uint64_t bytes, CUdeviceptr *dptr,
                              void **out, rig_error *err) {
  uintptr_t s = (uintptr_t)p & ~(uintptr_t)(PAGE - 1);
  uintptr_t e = ((uintptr_t)p + (bytes ? bytes : 1) + PAGE - 1) & ~(uintptr_t)(PAGE - 1);
  pthread_mutex_lock(&regs_lock);
  for (reg *r = regs; r; r = r->next) {
    if (r->start <= s && e <= r->end) {
      r->refs++;
      *dptr = r->dptr + ((uintptr_t)p - r->start);
      *out = r;
      pthread_mutex_unlock(&regs_lock);
      return RIG_OK;
    }
    if (s < r->end && r->start < e) {
      pthread_mutex_unlock(&regs_lock);
      return rig_error_set(err, RIG_EREFUSED,
                           "%s: host memory at %p of %llu bytes overlaps memory registered for "
                           "another borrow",
                           g->name, p, (unsigned long long)bytes);
    }
  }
  reg *r = calloc(1, sizeof *r);
  if (!r) {
    pthread_mutex_unlock(&regs_lock);
    return rig_error_set(err, RIG_ENOMEM, "%s: out of memory", g->name);
  }
  cuda_enter(g);
  const char *call = "cuMemHostRegister";
  CUresult c = rig_cu.MemHostRegister((void *)s, e - s,
                                      CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP);
  if (c == CUDA_SUCCESS) {
    call = "cuMemHostGetDevicePointer";
    c = rig_cu.MemHostGetDevicePointer(&r->dptr, (void *)s, 0);
    if (c != CUDA_SUCCESS) rig_cu.MemHostUnregister((void *)s);
  }
  cuda_leave();
  if (c != CUDA_SUCCESS) {
    pthread_mutex_unlock(&regs_lock);
    free(r);
    return cuda_refuse(g, call, c, err);
  }
  r->start = s;
  r->end = e;
  r->refs = 1;
  r->next = regs;
  regs = r;
  pthread_mutex_unlock(&regs_lock);
  *dptr = r->dptr + ((uintptr_t)p - s);
  *out = r;
  return RIG_OK;
}

void cuda_host_unregister(void *handle) {
  reg *r = handle;
  pthread_mutex_lock(&regs_lock);
  if (--r->refs == 0) {
    for (reg **p = &regs; *p; p = &(*p)->next)
      if (*p == r) {
        *p = r->next;
        break;
      }
    /* Registration is portable: any GPU's context unregisters it. */
    cuda_gpu *g = NULL;
    for (unsigned i = 0; !g && i < 64; i++) g = rig_cuda_gpu(i);
    if (g) {
      cuda_enter(g);
      rig_cu.MemHostUnregister((void *)r->start);
      cuda_leave();
    }
    free(r);
  }
  pthread_mutex_unlock(&regs_lock);
}

/* ---- borrows ----------------------------------------------------------------- */

typedef struct mapping {
  void *reg; /* a host registration, or NULL */
} mapping;

static rig_status peer(cuda_gpu *g, cuda_gpu *owner, rig_error *err) {
  int can = 0;
  CUresult r = rig_cu.DeviceCanAccessPeer(&can, g->cu, owner->cu);
  if (r != CUDA_SUCCESS || !can)
    return rig_error_set(err, RIG_EREFUSED, "%s cannot reach memory of %s: no peer access", g->name,
                         owner->name);
  cuda_enter(g);
  r = rig_cu.CtxEnablePeerAccess(owner->ctx, 0);
  cuda_leave();
  if (r != CUDA_SUCCESS && r != CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED)
    return cuda_refuse(g, "cuCtxEnablePeerAccess", r, err);
  return RIG_OK;
}

rig_status cuda_map(void *st, const rig_device *owner, const rig_mem_info *mem, uint64_t bytes,
                    uint64_t *address, void **out, rig_error *err) {
  cuda_gpu *g = st;
  const cuda_mem *m = mem->driver;
  if (m && m->magic == MEM_MAGIC) {
    /* Another GPU's: pinned memory is portable; its own needs a peer. */
    if (!m->host) {
      rig_status s = peer(g, m->gpu, err);
      if (s != RIG_OK) return s;
    }
    *address = mem->address;
    *out = NULL;
    return RIG_OK;
  }
  if (!mem->host)
    return rig_error_set(err, RIG_EREFUSED, "%s cannot address memory of %s", g->name,
                         rig_device_name(owner));
  mapping *mp = malloc(sizeof *mp);
  if (!mp) return rig_error_set(err, RIG_ENOMEM, "%s: out of memory", g->name);
  CUdeviceptr d;
  rig_status s = cuda_host_register(g, mem->host, bytes, &d, &mp->reg, err);
  if (s != RIG_OK) {
    free(mp);
    return s;
  }
  *address = d;
  *out = mp;
  return RIG_OK;
}

void cuda_unmap(void *st, void *handle) {
  (void)st;
  mapping *mp = handle;
  cuda_host_unregister(mp->reg);
  free(mp);
}
