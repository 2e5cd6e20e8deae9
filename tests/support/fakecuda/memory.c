/* memory.c: device memory, host allocations and registrations, and the
 * range check of copies and value ops. Part of a test double of the CUDA
 * driver API, for the tests only.
 *
 * Device memory is carved from a per-device arena of host memory (1 GiB
 * reserved, pages taken only when touched), at addresses of the double's
 * own, so that a device pointer names nothing else. The double's kernels
 * are host functions and so may dereference them; the backend's host code
 * must not, and the double cannot stop it: that bug shows only on a GPU.
 *
 * Copies and value ops must name device memory, host-allocated or
 * registered memory, each range wholly inside one region. The driver also
 * copies from pageable memory; the double refuses it on purpose, to catch
 * a missing registration. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fakecuda_internal.h"

enum kind { DEVICE, HOST_ALLOC, REGISTERED };

typedef struct region {
  uint64_t base;
  size_t size;
  enum kind kind;
  struct CUctx_st *ctx; /* the context it was made in, at gen */
  unsigned gen;
} region;

/* Every live region, unordered (the tests hold few). */
static region *regions;
static size_t nregions, room;

static unsigned char *arena[FC_MAX_DEVICES];

#define ALIGN 256

void fc_memory_init(int devices) {
  for (int d = 0; d < devices; d++) {
    void *p = mmap(NULL, FC_TOTAL_MEM, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    arena[d] = p == MAP_FAILED ? NULL : p;
  }
}

static bool add_region(region r) {
  if (nregions == room) {
    size_t n = room ? 2 * room : 64;
    region *g = realloc(regions, n * sizeof *g);
    if (!g) return false;
    regions = g;
    room = n;
  }
  regions[nregions++] = r;
  return true;
}

/* A region whose context ended is gone, as the driver frees it, though
 * it stays counted live. */
static bool stale(const region *r) {
  return !fc_alive(r->ctx, r->gen);
}

static region *find_start(uint64_t base, enum kind kind) {
  for (size_t i = 0; i < nregions; i++)
    if (!stale(&regions[i]) && regions[i].base == base && regions[i].kind == kind)
      return &regions[i];
  return NULL;
}

static region *find_containing(uint64_t addr) {
  for (size_t i = 0; i < nregions; i++)
    if (!stale(&regions[i]) && addr >= regions[i].base && addr - regions[i].base < regions[i].size)
      return &regions[i];
  return NULL;
}

static void remove_region(region *r) {
  *r = regions[--nregions];
}

static bool overlaps(uint64_t base, size_t size) {
  for (size_t i = 0; i < nregions; i++) {
    if (regions[i].kind == DEVICE || stale(&regions[i])) continue;
    if (base < regions[i].base + regions[i].size && regions[i].base < base + size) return true;
  }
  return false;
}

CUresult fc_check_range(uint64_t addr, size_t bytes) {
  region *r = find_containing(addr);
  size_t n = bytes ? bytes : 1;
  if (!r || n > r->size - (addr - r->base)) return CUDA_ERROR_INVALID_VALUE;
  return CUDA_SUCCESS;
}

/* First fit among dev's allocations, 256-byte aligned: 0 when none fits. */
static uint64_t carve(int dev, size_t bytes) {
  uint64_t at = (uint64_t)(uintptr_t)arena[dev], hi = at + FC_TOTAL_MEM;
  for (bool moved = true; moved;) {
    moved = false;
    if (bytes > hi - at) return 0;
    for (size_t i = 0; i < nregions; i++) {
      region *r = &regions[i];
      if (r->kind == DEVICE && r->ctx->dev == dev && !stale(r) && r->base < at + bytes &&
          at < r->base + r->size) {
        at = (r->base + r->size + ALIGN - 1) & ~(uint64_t)(ALIGN - 1);
        moved = true;
        break;
      }
    }
  }
  return at;
}

CUresult fc_MemAlloc(CUdeviceptr *ptr, size_t bytes) {
  pthread_mutex_lock(&fc_lock);
  struct CUctx_st *ctx = NULL;
  CUresult r = fc_current(&ctx);
  if (!r && (!ptr || bytes == 0)) r = CUDA_ERROR_INVALID_VALUE;
  if (!r) r = fc_take_alloc_fault();
  if (!r && (!arena[ctx->dev] || bytes > FC_TOTAL_MEM)) r = CUDA_ERROR_OUT_OF_MEMORY;
  uint64_t at = 0;
  if (!r && !(at = carve(ctx->dev, bytes))) r = CUDA_ERROR_OUT_OF_MEMORY;
  if (!r && !add_region((region){at, bytes, DEVICE, ctx, ctx->gen})) r = CUDA_ERROR_OUT_OF_MEMORY;
  if (!r) {
    *ptr = at;
    fc_live_add(FC_LIVE_ALLOCATIONS, 1);
  }
  pthread_mutex_unlock(&fc_lock);
  return r ? r : fc_ok(FC_IX_MemAlloc);
}

CUresult fc_MemFree(CUdeviceptr ptr) {
  pthread_mutex_lock(&fc_lock);
  struct CUctx_st *ctx = NULL;
  CUresult r = fc_current(&ctx);
  region *reg = NULL;
  if (!r && !(reg = find_start(ptr, DEVICE))) r = CUDA_ERROR_INVALID_VALUE;
  if (!r) {
    /* Gives the pages back, so that a later allocation reads zeros, not
     * what a freed one held. */
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    uint64_t lo = (reg->base + page - 1) & ~(uint64_t)(page - 1);
    uint64_t hi = (reg->base + reg->size) & ~(uint64_t)(page - 1);
    if (hi > lo) madvise((void *)(uintptr_t)lo, hi - lo, MADV_DONTNEED);
    remove_region(reg);
    fc_live_add(FC_LIVE_ALLOCATIONS, -1);
  }
  pthread_mutex_unlock(&fc_lock);
  return r ? r : fc_ok(FC_IX_MemFree);
}

CUresult fc_MemHostAlloc(void **ptr, size_t bytes, unsigned int flags) {
  pthread_mutex_lock(&fc_lock);
  struct CUctx_st *ctx = NULL;
  CUresult r = fc_current(&ctx);
  if (!r && (!ptr || bytes == 0)) r = CUDA_ERROR_INVALID_VALUE;
  if (!r && (flags & ~(CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP)))
    r = CUDA_ERROR_INVALID_VALUE;
  if (!r) r = fc_take_alloc_fault();
  void *p = MAP_FAILED;
  if (!r) {
    p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) r = CUDA_ERROR_OUT_OF_MEMORY;
  }
  if (!r && !add_region((region){(uint64_t)(uintptr_t)p, bytes, HOST_ALLOC, ctx, ctx->gen})) {
    munmap(p, bytes);
    r = CUDA_ERROR_OUT_OF_MEMORY;
  }
  if (!r) {
    *ptr = p;
    fc_live_add(FC_LIVE_HOST_ALLOCATIONS, 1);
  }
  pthread_mutex_unlock(&fc_lock);
  return r ? r : fc_ok(FC_IX_MemHostAlloc);
}

CUresult fc_MemFreeHost(void *ptr) {
  pthread_mutex_lock(&fc_lock);
  struct CUctx_st *ctx = NULL;
  CUresult r = fc_current(&ctx);
  region *reg = NULL;
  if (!r && !(reg = find_start((uint64_t)(uintptr_t)ptr, HOST_ALLOC))) r = CUDA_ERROR_INVALID_VALUE;
  if (!r) {
    munmap(ptr, reg->size);
    remove_region(reg);
    fc_live_add(FC_LIVE_HOST_ALLOCATIONS, -1);
  }
  pthread_mutex_unlock(&fc_lock);
  return r ? r : fc_ok(FC_IX_MemFreeHost);
}

CUresult fc_MemHostRegister(void *ptr, size_t bytes, unsigned int flags) {
  pthread_mutex_lock(&fc_lock);
  struct CUctx_st *ctx = NULL;
  CUresult r = fc_current(&ctx);
  uint64_t base = (uint64_t)(uintptr_t)ptr;
  if (!r && (!ptr || bytes == 0)) r = CUDA_ERROR_INVALID_VALUE;
  if (!r && (flags & ~(CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP)))
    r = CUDA_ERROR_INVALID_VALUE;
  if (!r && overlaps(base, bytes)) r = CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
  if (!r && !add_region((region){base, bytes, REGISTERED, ctx, ctx->gen}))
    r = CUDA_ERROR_OUT_OF_MEMORY;
  if (!r) fc_live_add(FC_LIVE_REGISTRATIONS, 1);
  pthread_mutex_unlock(&fc_lock);
  return r ? r : fc_ok(FC_IX_MemHostRegister);
}

CUresult fc_MemHostUnregister(void *ptr) {
  pthread_mutex_lock(&fc_lock);
  struct CUctx_st *ctx = NULL;
  CUresult r = fc_current(&ctx);
  region *reg = NULL;
  if (!r && !(reg = find_start((uint64_t)(uintptr_t)ptr, REGISTERED)))
    r = CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
  if (!r) {
    remove_region(reg);
    fc_live_add(FC_LIVE_REGISTRATIONS, -1);
  }
  pthread_mutex_unlock(&fc_lock);
  return r ? r : fc_ok(FC_IX_MemHostUnregister);
}

/* Unified addressing: the device sees host memory at its host address. */
CUresult fc_MemHostGetDevicePointer(CUdeviceptr *dptr, void *ptr, unsigned int flags) {
  pthread_mutex_lock(&fc_lock);
  struct CUctx_st *ctx = NULL;
  CUresult r = fc_current(&ctx);
  region *reg = NULL;
  if (!r && (!dptr || flags != 0)) r = CUDA_ERROR_INVALID_VALUE;
  if (!r && (!(reg = find_containing((uint64_t)(uintptr_t)ptr)) || reg->kind == DEVICE))
    r = CUDA_ERROR_INVALID_VALUE;
  if (!r) *dptr = (uint64_t)(uintptr_t)ptr;
  pthread_mutex_unlock(&fc_lock);
  return r ? r : fc_ok(FC_IX_MemHostGetDevicePointer);
}
