/* cuda:N devices: NVIDIA GPUs through libcuda (docs/cuda.md). One device
 * per GPU, ordered by PCI bus id; the primary context, pushed around each
 * call; a non-blocking stream that runs every hand-over in order; the
 * timeline word in pinned host memory, written by the stream after each
 * value's work. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuda_internal.h"

#define MAX_GPUS 64

static struct {
  unsigned n;
  CUdevice order[MAX_GPUS]; /* cuda:i is ordinal order[i] */
  char bus[MAX_GPUS][16];
  cuda_gpu *open[MAX_GPUS];
  _Atomic unsigned opened;
} gpus;

cuda_gpu *rig_cuda_gpu(unsigned index) {
  return index < gpus.n ? gpus.open[index] : NULL;
}

unsigned rig_cuda_count(void) {
  return gpus.n;
}

unsigned rig_cuda_opened(void) {
  return atomic_load(&gpus.opened);
}

void cuda_enter(const cuda_gpu *g) {
  rig_cu.CtxPushCurrent(g->ctx);
}

void cuda_leave(void) {
  CUcontext c;
  rig_cu.CtxPopCurrent(&c);
}

rig_status cuda_fail(cuda_gpu *g, const char *call, CUresult r, rig_error *err) {
  rig_device_lose(g->dev, "%s: %s", call, rig_cuda_error_name(r));
  rig_device_is_lost(g->dev, err);
  return RIG_ELOST;
}

rig_status cuda_refuse(const cuda_gpu *g, const char *what, CUresult r, rig_error *err) {
  return rig_error_set(err, r == CUDA_ERROR_OUT_OF_MEMORY ? RIG_ENOMEM : RIG_EREFUSED, "%s: %s: %s",
                       g->name, what, rig_cuda_error_name(r));
}

/* Sleeping waits poll the stream: a completed stream with the word short
 * of the value cannot be (the word is written in stream order), and an
 * error CUDA reports late (an illegal address) loses the device here. */
/* A wait in the stream on a device that is lost never passes. */
static bool stuck(cuda_gpu *g, uint64_t word) {
  rig_device *lost = NULL;
  pthread_mutex_lock(&g->waits_lock);
  size_t n = g->nwaits < CUDA_READY_RING ? (size_t)g->nwaits : CUDA_READY_RING;
  for (size_t i = 0; i < n && !lost; i++) {
    if (g->waits[i].value <= word || rig_point_reached(g->waits[i].on)) continue;
    rig_device *other = rig_device_at(rig_point_device(g->waits[i].on));
    if (other && rig_device_is_lost(other, NULL)) lost = other;
  }
  pthread_mutex_unlock(&g->waits_lock);
  if (!lost) return false;
  rig_device_lose(g->dev, "it waits on %s, which is lost", rig_device_name(lost));
  rig_device_signal(g->dev);
  return true;
}

void cuda_sleep(void *st, uint64_t value, int64_t timeout_ns) {
  cuda_gpu *g = st;
  struct timespec t0, t, nap = {0, 20000};
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (;;) {
    if (atomic_load_explicit(g->word, memory_order_acquire) >= value) return;
    if (rig_device_is_lost(g->dev, NULL)) return;
    if (stuck(g, atomic_load_explicit(g->word, memory_order_acquire))) return;
    cuda_enter(g);
    CUresult r = rig_cu.StreamQuery(g->stream);
    cuda_leave();
    if (r != CUDA_SUCCESS && r != CUDA_ERROR_NOT_READY) {
      cuda_fail(g, "cuStreamQuery", r, NULL);
      rig_device_signal(g->dev);
      return;
    }
    nanosleep(&nap, NULL);
    clock_gettime(CLOCK_MONOTONIC, &t);
    if ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) > timeout_ns) return;
  }
}

/* After a loss, whether the stream may still run work of a value up to
 * v: not once its word shows v, nor once the stream is idle or broken (a
 * lost context runs nothing), nor when all it has left before v waits on
 * a lost device, which never passes (a lost device's word stays). */
static bool cuda_busy(void *st, uint64_t v) {
  cuda_gpu *g = st;
  uint64_t word = atomic_load_explicit(g->word, memory_order_acquire);
  if (word >= v) return false;
  cuda_enter(g);
  CUresult r = rig_cu.StreamQuery(g->stream);
  cuda_leave();
  if (r != CUDA_ERROR_NOT_READY) return false;
  uint64_t stuck = 0; /* the first value past the word that waits on a lost device */
  pthread_mutex_lock(&g->waits_lock);
  size_t n = g->nwaits < CUDA_READY_RING ? (size_t)g->nwaits : CUDA_READY_RING;
  for (size_t i = 0; i < n; i++) {
    uint64_t at = g->waits[i].value;
    if (at <= word || (stuck && at >= stuck) || rig_point_reached(g->waits[i].on)) continue;
    rig_device *other = rig_device_at(rig_point_device(g->waits[i].on));
    if (other && rig_device_is_lost(other, NULL)) stuck = at;
  }
  pthread_mutex_unlock(&g->waits_lock);
  return !stuck || word + 1 < stuck;
}

static void cuda_stop(void *st) {
  cuda_gpu *g = st;
  cuda_words_drop(g); /* while its context is still held */
  cuda_enter(g);
  rig_cu.StreamSynchronize(g->stream);
  rig_cu.StreamDestroy(g->stream);
  rig_cu.MemFreeHost((void *)g->word);
  cuda_leave();
  rig_cu.DevicePrimaryCtxRelease(g->cu);
  pthread_mutex_destroy(&g->words_lock);
  pthread_mutex_destroy(&g->waits_lock);
  free(g);
}

static const rig_driver cuda_driver = {
    .name = "cuda",
    .alloc = cuda_alloc,
    .free = cuda_free,
    .map = cuda_map,
    .unmap = cuda_unmap,
    .image_load = cuda_image_load,
    .image_entry = cuda_image_entry,
    .image_unload = cuda_image_unload,
    .can_wait = cuda_can_wait,
    .submit = cuda_submit,
    .sleep = cuda_sleep,
    .stop = cuda_stop,
    .prepare = cuda_prepare,
    .forget = cuda_forget,
    .busy = cuda_busy,
};

static int by_bus(const void *a, const void *b) {
  const unsigned *x = a, *y = b;
  return strcmp(gpus.bus[*x], gpus.bus[*y]);
}

/* The GPUs in PCI bus id order: ids are fixed-width hex, so the order of
 * their strings is the order of their addresses. */
static rig_status cuda_count(unsigned *n, rig_error *err) {
  rig_status st = rig_cuda_load(err);
  if (st != RIG_OK) return st;
  int count = 0;
  CUresult r = rig_cu.DeviceGetCount(&count);
  if (r != CUDA_SUCCESS)
    return rig_error_set(err, RIG_EREFUSED, "cuDeviceGetCount: %s", rig_cuda_error_name(r));
  if (count <= 0) return rig_error_set(err, RIG_EREFUSED, "no GPU");
  if (count > MAX_GPUS) count = MAX_GPUS;
  unsigned idx[MAX_GPUS];
  char bus[MAX_GPUS][16];
  for (int i = 0; i < count; i++) {
    idx[i] = (unsigned)i;
    if (rig_cu.DeviceGetPCIBusId(gpus.bus[i], sizeof gpus.bus[i], i) != CUDA_SUCCESS)
      snprintf(gpus.bus[i], sizeof gpus.bus[i], "ffff:%02x:00.0", (unsigned)i & 0xffu);
  }
  qsort(idx, (size_t)count, sizeof *idx, by_bus);
  for (int i = 0; i < count; i++) {
    gpus.order[i] = (CUdevice)idx[i];
    memcpy(bus[i], gpus.bus[idx[i]], sizeof bus[i]);
  }
  memcpy(gpus.bus, bus, sizeof(bus[0]) * (size_t)count);
  gpus.n = (unsigned)count;
  rig_host_near(gpus.bus[0]);
  *n = gpus.n;
  return RIG_OK;
}

static int attr(CUdevice d, int a) {
  int v = 0;
  return rig_cu.DeviceGetAttribute(&v, a, d) == CUDA_SUCCESS ? v : 0;
}

/* What the GPU is: the facts the core and the checker read. */
static rig_status describe(cuda_gpu *g, unsigned index, rig_device_facts *f, rig_error *err) {
  size_t total = 0;
  CUresult r = rig_cu.DeviceTotalMem(&total, g->cu);
  if (r != CUDA_SUCCESS) return cuda_refuse(g, "cuDeviceTotalMem", r, err);
  snprintf(f->name, sizeof f->name, "%s", g->name);
  snprintf(f->arch, sizeof f->arch, "sm_%d%d",
           attr(g->cu, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR),
           attr(g->cu, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR));
  f->budget = total;
  f->maps_host = attr(g->cu, CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY) != 0;
  f->host_addresses = false; /* its own memory; pinned memory says so itself */
  f->runs_copies = f->runs_fills = f->runs_launches = true;
  int optin = attr(g->cu, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  f->max_shared =
      (uint32_t)(optin > 0 ? optin : attr(g->cu, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK));
  f->threads = (uint32_t)attr(g->cu, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT) *
               (uint32_t)attr(g->cu, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  /* Grid and block limits, where the driver answers them; else those of
   * every GPU since compute capability 3.0. */
  static const uint32_t usual[6] = {2147483647u, 65535u, 65535u, 1024u, 1024u, 64u};
  for (int k = 0; k < 3; k++) {
    int gv = attr(g->cu, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X + k);
    int bv = attr(g->cu, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X + k);
    g->max_groups[k] = gv > 0 ? (uint32_t)gv : usual[k];
    g->max_threads[k] = bv > 0 ? (uint32_t)bv : usual[3 + k];
  }
  snprintf(f->bus_id, sizeof f->bus_id, "%s", gpus.bus[index]);
  f->numa = rig_cuda_numa(f->bus_id);
  return RIG_OK;
}

/* The stream's word waits and writes need 64-bit stream memory
 * operations; a GPU without them cannot keep a timeline in its queue. */
static rig_status start(cuda_gpu *g, rig_error *err) {
  CUresult r = rig_cu.DevicePrimaryCtxRetain(&g->ctx, g->cu);
  if (r != CUDA_SUCCESS) return cuda_refuse(g, "cuDevicePrimaryCtxRetain", r, err);
  if (!attr(g->cu, CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS)) {
    rig_cu.DevicePrimaryCtxRelease(g->cu);
    return rig_error_set(err, RIG_EREFUSED, "%s: no 64-bit stream memory operations", g->name);
  }
  cuda_enter(g);
  void *word = NULL;
  r = rig_cu.StreamCreate(&g->stream, CU_STREAM_NON_BLOCKING);
  const char *call = "cuStreamCreate";
  if (r == CUDA_SUCCESS) {
    call = "cuMemHostAlloc";
    r = rig_cu.MemHostAlloc(&word, 4096, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP);
  }
  if (r == CUDA_SUCCESS) {
    call = "cuMemHostGetDevicePointer";
    memset(word, 0, 4096);
    r = rig_cu.MemHostGetDevicePointer(&g->word_dptr, word, 0);
  }
  if (r != CUDA_SUCCESS) {
    if (word) rig_cu.MemFreeHost(word);
    if (g->stream) rig_cu.StreamDestroy(g->stream);
    cuda_leave();
    rig_cu.DevicePrimaryCtxRelease(g->cu);
    return cuda_refuse(g, call, r, err);
  }
  cuda_leave();
  g->word = word;
  return RIG_OK;
}

static rig_status cuda_open(unsigned index, rig_device **out, rig_error *err) {
  cuda_gpu *g = calloc(1, sizeof *g);
  if (!g) return rig_error_set(err, RIG_ENOMEM, "cuda:%u: out of memory", index);
  snprintf(g->name, sizeof g->name, "cuda:%u", index);
  pthread_mutex_init(&g->waits_lock, NULL);
  pthread_mutex_init(&g->words_lock, NULL);
  cuda_words_init(g);
  CUresult r = rig_cu.DeviceGet(&g->cu, gpus.order[index]);
  rig_status st = r == CUDA_SUCCESS ? start(g, err) : cuda_refuse(g, "cuDeviceGet", r, err);
  if (st != RIG_OK) {
    free(g);
    return st;
  }
  rig_device_facts f = {.numa = -1};
  if ((st = describe(g, index, &f, err)) == RIG_OK)
    st = rig_device_register(&cuda_driver, g, &f, g->word, &g->dev, err);
  if (st != RIG_OK) {
    g->dev = NULL;
    cuda_stop(g);
    return st;
  }
  gpus.open[index] = g;
  atomic_fetch_add(&gpus.opened, 1);
  *out = g->dev;
  return RIG_OK;
}

static const char *const cuda_arch[] = {"sm_", NULL};

const rig_provider rig_provider_cuda = {
    .abi = RIG_PROVIDER_ABI,
    .family = "cuda",
    .arch_prefixes = cuda_arch,
    .count = cuda_count,
    .open = cuda_open,
};
