/* selftest.c: the test of fakecuda itself (a test double of the CUDA driver
 * API, for the tests only). It dlopens libfakecuda.so (RIG_CUDA_LIBRARY)
 * as the cuda backend does, resolves every name cuda_api.h lists, and
 * checks the promises the backend's tests rely on. The kernels are
 * cuda_kernels.so (RIG_TEST_CUDA_KERNELS). Unlike a backend, it may read
 * the double's device memory from the host: the double's device memory is
 * host memory. Usage: test_fakecuda_self [name filter]. */
#include <CUnit/Basic.h>
#include <dlfcn.h>
#include <elf.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuda_api.h"

enum { ERR_INVALID_DEVICE = 101, ERR_NOT_REGISTERED = 713 };

/* ---- the library, resolved by name -------------------------------------- */

#define FIELD(ret, field, names, params) ret(*field) params;
static struct { RIG_CUDA_FUNCTIONS(FIELD) } cu;
#undef FIELD

static struct {
  void (*fail_next_launch)(CUresult);
  void (*fail_next_alloc)(CUresult);
  uint64_t (*count)(const char *);
  uint64_t (*live)(const char *);
  void (*reset_counts)(void);
} fc;

static void *lib;
static const char *missing; /* a name the library does not export */

#define UNPAREN(...) __VA_ARGS__
#define NAMES(...)                                                                                 \
  (const char *[]) {                                                                               \
    __VA_ARGS__, NULL                                                                              \
  }
/* Every listed name must resolve; the field takes the first. */
#define RESOLVE(ret, field, names, params)                                                         \
  for (const char **n = NAMES(UNPAREN names); *n; n++) {                                           \
    void *sym = dlsym(lib, *n);                                                                    \
    if (!sym) missing = *n;                                                                        \
    if (n == NAMES(UNPAREN names) || !cu.field) memcpy(&cu.field, &sym, sizeof sym);               \
  }

static void *hook(const char *name) {
  void *sym = dlsym(lib, name);
  if (!sym) missing = name;
  return sym;
}

static int load(void) {
  const char *path = getenv("RIG_CUDA_LIBRARY");
  if (!path || !(lib = dlopen(path, RTLD_NOW | RTLD_LOCAL))) {
    fprintf(stderr, "cannot load RIG_CUDA_LIBRARY=%s: %s\n", path ? path : "(unset)",
            path ? dlerror() : "");
    return -1;
  }
  RIG_CUDA_FUNCTIONS(RESOLVE)
  /* The hooks, as a test finds them: by the loaded library's name. */
  void *again = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
  if (!again) return -1;
  void *h;
  h = hook("fakecuda_fail_next_launch"), memcpy(&fc.fail_next_launch, &h, sizeof h);
  h = hook("fakecuda_fail_next_alloc"), memcpy(&fc.fail_next_alloc, &h, sizeof h);
  h = hook("fakecuda_count"), memcpy(&fc.count, &h, sizeof h);
  h = hook("fakecuda_live"), memcpy(&fc.live, &h, sizeof h);
  h = hook("fakecuda_reset_counts"), memcpy(&fc.reset_counts, &h, sizeof h);
  dlclose(again);
  if (missing) fprintf(stderr, "libfakecuda.so does not export %s\n", missing);
  return missing ? -1 : 0;
}

/* ---- helpers -------------------------------------------------------------- */

static CUcontext ctx0, ctx1;
static CUmodule module;
static void *image;

static void ready(void) {
  static int done;
  if (done) return;
  CU_ASSERT_EQUAL_FATAL(cu.Init(0), CUDA_SUCCESS);
  CU_ASSERT_EQUAL_FATAL(cu.DevicePrimaryCtxRetain(&ctx0, 0), CUDA_SUCCESS);
  CU_ASSERT_EQUAL_FATAL(cu.DevicePrimaryCtxRetain(&ctx1, 1), CUDA_SUCCESS);
  done = 1;
}

static void push(CUcontext c) {
  CU_ASSERT_EQUAL_FATAL(cu.CtxPushCurrent(c), CUDA_SUCCESS);
}

static void pop(void) {
  CUcontext c;
  CU_ASSERT_EQUAL(cu.CtxPopCurrent(&c), CUDA_SUCCESS);
}

static CUstream stream(void) {
  CUstream s = NULL;
  CU_ASSERT_EQUAL_FATAL(cu.StreamCreate(&s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  return s;
}

static void *host_alloc(size_t bytes) {
  void *p = NULL;
  CU_ASSERT_EQUAL_FATAL(cu.MemHostAlloc(&p, bytes, CU_MEMHOSTALLOC_DEVICEMAP), CUDA_SUCCESS);
  memset(p, 0, bytes);
  return p;
}

static CUdeviceptr dev(const void *host) {
  return (CUdeviceptr)(uintptr_t)host;
}

/* The fixture module, loaded once in ctx0. */
static CUfunction function(const char *name) {
  if (!module) {
    const char *path = getenv("RIG_TEST_CUDA_KERNELS");
    FILE *f = path ? fopen(path, "rb") : NULL;
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    image = malloc((size_t)n);
    CU_ASSERT_EQUAL_FATAL(fread(image, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    CU_ASSERT_EQUAL_FATAL(cu.ModuleLoadData(&module, image), CUDA_SUCCESS);
  }
  CUfunction fn = NULL;
  CU_ASSERT_EQUAL_FATAL(cu.ModuleGetFunction(&fn, module, name), CUDA_SUCCESS);
  return fn;
}

/* A launch in the parameter-buffer form. */
static CUresult launch(CUfunction fn, unsigned gx, unsigned bx, unsigned shared, CUstream s,
                       const void *params, size_t size) {
  void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, (void *)params, CU_LAUNCH_PARAM_BUFFER_SIZE,
                   &size, CU_LAUNCH_PARAM_END};
  return cu.LaunchKernel(fn, gx, 1, 1, bx, 1, 1, shared, s, NULL, extra);
}

static void pause_ms(long ms) {
  struct timespec t = {0, ms * 1000000};
  nanosleep(&t, NULL);
}

static void store_release(uint64_t *word, uint64_t v) {
  atomic_store_explicit((_Atomic uint64_t *)word, v, memory_order_release);
}

static uint64_t load_acquire(uint64_t *word) {
  return atomic_load_explicit((_Atomic uint64_t *)word, memory_order_acquire);
}

/* ---- before cuInit -------------------------------------------------------- */

static void test_calls_before_cuInit_answer_not_initialized(void) {
  int n = -1, version = 0;
  CUdeviceptr p;
  if (cu.DeviceGetCount(&n) == CUDA_SUCCESS) {
    printf("\n  SKIPPED: cuInit already ran (a filter ran a later test first)\n");
    return;
  }
  CU_ASSERT_EQUAL(cu.DeviceGetCount(&n), CUDA_ERROR_NOT_INITIALIZED);
  CU_ASSERT_EQUAL(cu.MemAlloc(&p, 256), CUDA_ERROR_NOT_INITIALIZED);
  /* As the driver's: no cuInit needed. */
  CU_ASSERT_EQUAL(cu.DriverGetVersion(&version), CUDA_SUCCESS);
  CU_ASSERT_EQUAL(version, 13000);
}

static void test_no_devices_makes_cuInit_answer_no_device(void) {
  int n;
  if (cu.DeviceGetCount(&n) == CUDA_SUCCESS) {
    printf("\n  SKIPPED: cuInit already ran\n");
    return;
  }
  setenv("FAKECUDA_DEVICES", "0", 1);
  CU_ASSERT_EQUAL(cu.Init(0), CUDA_ERROR_NO_DEVICE);
  CU_ASSERT_EQUAL(cu.DeviceGetCount(&n), CUDA_ERROR_NOT_INITIALIZED);
  setenv("FAKECUDA_DEVICES", "2", 1);
}

/* ---- devices ---------------------------------------------------------------- */

static void test_devices_are_sm90_with_their_attributes(void) {
  ready();
  int n = 0, v = 0;
  char name[128];
  size_t total = 0;
  CU_ASSERT_EQUAL(cu.DeviceGetCount(&n), CUDA_SUCCESS);
  CU_ASSERT_EQUAL(n, 2);
  CU_ASSERT_EQUAL(cu.DeviceGetName(name, sizeof name, 0), CUDA_SUCCESS);
  CU_ASSERT_STRING_EQUAL(name, "fakecuda (a test double of an sm_90 GPU)");
  CU_ASSERT_EQUAL(cu.DeviceTotalMem(&total, 1), CUDA_SUCCESS);
  CU_ASSERT_EQUAL(total, (size_t)1 << 30);
  static const int want[][2] = {
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 9},
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, 0},
      {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 1024},
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, 49152},
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, 232448},
      {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 132},
      {CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY, 1},
      {CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING, 1},
      {CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS, 1},
  };
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    CU_ASSERT_EQUAL(cu.DeviceGetAttribute(&v, want[i][0], 1), CUDA_SUCCESS);
    CU_ASSERT_EQUAL(v, want[i][1]);
  }
  CU_ASSERT_EQUAL(cu.DeviceGetAttribute(&v, 9999, 0), CUDA_ERROR_INVALID_VALUE);
  CU_ASSERT_EQUAL(cu.DeviceGetName(name, sizeof name, 2), ERR_INVALID_DEVICE);
}

static void test_bus_ids_are_not_in_ordinal_order(void) {
  ready();
  char id[32];
  CU_ASSERT_EQUAL(cu.DeviceGetPCIBusId(id, sizeof id, 0), CUDA_SUCCESS);
  CU_ASSERT_STRING_EQUAL(id, "0000:41:00.0");
  CU_ASSERT_EQUAL(cu.DeviceGetPCIBusId(id, sizeof id, 1), CUDA_SUCCESS);
  CU_ASSERT_STRING_EQUAL(id, "0000:01:00.0");
}

static void test_peer_access_needs_FAKECUDA_PEER(void) {
  ready();
  int can = -1;
  CU_ASSERT_EQUAL(cu.DeviceCanAccessPeer(&can, 0, 1), CUDA_SUCCESS);
  CU_ASSERT_EQUAL(can, 0);
  push(ctx0);
  CU_ASSERT_EQUAL(cu.CtxEnablePeerAccess(ctx1, 0), ERR_INVALID_DEVICE);
  setenv("FAKECUDA_PEER", "1", 1);
  CU_ASSERT_EQUAL(cu.DeviceCanAccessPeer(&can, 0, 1), CUDA_SUCCESS);
  CU_ASSERT_EQUAL(can, 1);
  CU_ASSERT_EQUAL(cu.CtxEnablePeerAccess(ctx1, 0), CUDA_SUCCESS);
  CU_ASSERT_EQUAL(cu.CtxEnablePeerAccess(ctx1, 0), CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED);
  unsetenv("FAKECUDA_PEER");
  pop();
}

/* ---- contexts ----------------------------------------------------------- */

static void test_calls_need_a_current_context(void) {
  ready();
  CUdeviceptr p;
  CUstream s;
  void *h;
  CU_ASSERT_EQUAL(cu.MemAlloc(&p, 256), CUDA_ERROR_INVALID_CONTEXT);
  CU_ASSERT_EQUAL(cu.StreamCreate(&s, 0), CUDA_ERROR_INVALID_CONTEXT);
  CU_ASSERT_EQUAL(cu.MemHostAlloc(&h, 4096, 0), CUDA_ERROR_INVALID_CONTEXT);
  CU_ASSERT_EQUAL(cu.ModuleLoadData(&module, "x"), CUDA_ERROR_INVALID_CONTEXT);
  push(ctx0);
  CU_ASSERT_EQUAL(cu.MemAlloc(&p, 256), CUDA_SUCCESS);
  pop();
  CU_ASSERT_EQUAL(cu.MemFree(p), CUDA_ERROR_INVALID_CONTEXT);
  CUcontext c;
  CU_ASSERT_EQUAL(cu.CtxPopCurrent(&c), CUDA_ERROR_INVALID_CONTEXT); /* the stack is empty */
  push(ctx0);
  CU_ASSERT_EQUAL(cu.MemFree(p), CUDA_SUCCESS);
  pop();
}

/* ---- memory ----------------------------------------------------------------- */

static void test_device_memory_is_aligned_and_bounded_by_the_device(void) {
  ready();
  push(ctx0);
  CUdeviceptr a, b, c, big, bigger;
  CU_ASSERT_EQUAL(cu.MemAlloc(&a, 1), CUDA_SUCCESS);
  CU_ASSERT_EQUAL(cu.MemAlloc(&b, 300), CUDA_SUCCESS);
  CU_ASSERT_EQUAL(cu.MemAlloc(&c, 8), CUDA_SUCCESS);
  CU_ASSERT(a % 256 == 0 && b % 256 == 0 && c % 256 == 0);
  CU_ASSERT(a != b && b != c && a != c);
  CU_ASSERT(b >= a + 256 || a >= b + 300);
  CU_ASSERT_EQUAL(cu.MemAlloc(&big, (size_t)2 << 30), CUDA_ERROR_OUT_OF_MEMORY);
  CU_ASSERT_EQUAL(cu.MemAlloc(&big, (size_t)600 << 20), CUDA_SUCCESS);
  CU_ASSERT_EQUAL(cu.MemAlloc(&bigger, (size_t)600 << 20), CUDA_ERROR_OUT_OF_MEMORY);
  CU_ASSERT_EQUAL(cu.MemFree(big), CUDA_SUCCESS);
  CU_ASSERT_EQUAL(cu.MemAlloc(&bigger, (size_t)600 << 20), CUDA_SUCCESS);
  CU_ASSERT_EQUAL(cu.MemFree(bigger), CUDA_SUCCESS);
  CU_ASSERT_EQUAL(cu.MemAlloc(&big, 0), CUDA_ERROR_INVALID_VALUE);
  CU_ASSERT_EQUAL(cu.MemFree(b + 8), CUDA_ERROR_INVALID_VALUE); /* not an allocation's start */
  CU_ASSERT_EQUAL(cu.MemFree(a), CUDA_SUCCESS);
  CU_ASSERT_EQUAL(cu.MemFree(a), CUDA_ERROR_INVALID_VALUE); /* twice */
  CU_ASSERT_EQUAL(cu.MemFree(b), CUDA_SUCCESS);
  CU_ASSERT_EQUAL(cu.MemFree(c), CUDA_SUCCESS);
  pop();
}

static void test_fail_next_alloc_fails_one_allocation(void) {
  ready();
  push(ctx0);
  CUdeviceptr p;
  void *h;
  fc.fail_next_alloc(CUDA_ERROR_OUT_OF_MEMORY);
  CU_ASSERT_EQUAL(cu.MemAlloc(&p, 256), CUDA_ERROR_OUT_OF_MEMORY);
  CU_ASSERT_EQUAL(cu.MemAlloc(&p, 256), CUDA_SUCCESS);
  CU_ASSERT_EQUAL(cu.MemFree(p), CUDA_SUCCESS);
  fc.fail_next_alloc(CUDA_ERROR_UNKNOWN);
  CU_ASSERT_EQUAL(cu.MemHostAlloc(&h, 4096, 0), CUDA_ERROR_UNKNOWN);
  CU_ASSERT_EQUAL(cu.MemHostAlloc(&h, 4096, 0), CUDA_SUCCESS);
  CU_ASSERT_EQUAL(cu.MemFreeHost(h), CUDA_SUCCESS);
  pop();
}

static void test_overlapping_registration_is_refused(void) {
  ready();
  push(ctx0);
  char *buf = aligned_alloc(4096, 4 * 4096);
  CUdeviceptr d;
  CU_ASSERT_EQUAL(cu.MemHostRegister(buf, 2 * 4096, CU_MEMHOSTREGISTER_PORTABLE), CUDA_SUCCESS);
  CU_ASSERT_EQUAL(cu.MemHostRegister(buf + 4096, 2 * 4096, 0),
                  CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
  CU_ASSERT_EQUAL(cu.MemHostGetDevicePointer(&d, buf + 100, 0), CUDA_SUCCESS);
  CU_ASSERT_EQUAL(d, dev(buf + 100)); /* unified addressing */
  CU_ASSERT_EQUAL(cu.MemHostGetDevicePointer(&d, buf + 3 * 4096, 0), CUDA_ERROR_INVALID_VALUE);
  CU_ASSERT_EQUAL(cu.MemHostUnregister(buf + 4096), ERR_NOT_REGISTERED);
  CU_ASSERT_EQUAL(cu.MemHostUnregister(buf), CUDA_SUCCESS);
  CU_ASSERT_EQUAL(cu.MemHostUnregister(buf), ERR_NOT_REGISTERED);
  free(buf);
  char *h = host_alloc(4096);
  CU_ASSERT_EQUAL(cu.MemHostRegister(h, 4096, 0), CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
  CU_ASSERT_EQUAL(cu.MemHostGetDevicePointer(&d, h, 0), CUDA_SUCCESS);
  CU_ASSERT_EQUAL(d, dev(h));
  CU_ASSERT_EQUAL(cu.MemFreeHost(h), CUDA_SUCCESS);
  pop();
}

static void test_copies_refuse_memory_the_double_does_not_know(void) {
  ready();
  push(ctx0);
  CUstream s = stream();
  CUdeviceptr d;
  CU_ASSERT_EQUAL(cu.MemAlloc(&d, 64), CUDA_SUCCESS);
  uint32_t pageable[16] = {1, 2, 3};
  uint32_t *pinned = host_alloc(4096);
  pinned[0] = 11;
  CU_ASSERT_EQUAL(cu.MemcpyHtoDAsync(d, pageable, 64, s), CUDA_ERROR_INVALID_VALUE);
  CU_ASSERT_EQUAL(cu.MemcpyHtoDAsync(d, pinned, 65, s), CUDA_ERROR_INVALID_VALUE); /* past d */
  CU_ASSERT_EQUAL(cu.MemcpyHtoDAsync(d, pinned, 64, s), CUDA_SUCCESS);
  CU_ASSERT_EQUAL(cu.MemcpyAsync(dev(pinned + 64), d, 64, s), CUDA_SUCCESS);
  CU_ASSERT_EQUAL(cu.MemcpyAsync(d, d, 64, NULL),
                  CUDA_ERROR_INVALID_HANDLE); /* no default stream */
  CU_ASSERT_EQUAL(cu.StreamSynchronize(s), CUDA_SUCCESS);
  CU_ASSERT_EQUAL(pinned[64], 11);
  CU_ASSERT_EQUAL(cu.MemFree(d), CUDA_SUCCESS);
  CU_ASSERT_EQUAL(cu.MemFreeHost(pinned), CUDA_SUCCESS);
  CU_ASSERT_EQUAL(cu.StreamDestroy(s), CUDA_SUCCESS);
  pop();
}

/* ---- streams ---------------------------------------------------------------- */

static void test_wait_value_holds_a_later_write_until_the_word_is_stored(void) {
  ready();
  push(ctx0);
  CUstream s = stream();
  uint64_t *words = host_alloc(4096);
  CU_ASSERT_EQUAL(cu.StreamWaitValue64(s, dev(&words[0]), 5, CU_STREAM_WAIT_VALUE_GEQ),
                  CUDA_SUCCESS);
  CU_ASSERT_EQUAL(cu.StreamWriteValue64(s, dev(&words[1]), 42, 0), CUDA_SUCCESS);
  /* The wait cannot pass while words[0] < 5, however long this takes; the
   * pause only gives a double whose wait does not hold the time to show it. */
  pause_ms(20);
  CU_ASSERT_EQUAL(cu.StreamQuery(s), CUDA_ERROR_NOT_READY);
  store_release(&words[0], 7);
  CU_ASSERT_EQUAL(cu.StreamSynchronize(s), CUDA_SUCCESS);
  CU_ASSERT_EQUAL(load_acquire(&words[1]), 42);
  CU_ASSERT_EQUAL(cu.StreamQuery(s), CUDA_SUCCESS);
  /* Misaligned, or memory the double does not know. */
  CU_ASSERT_EQUAL(cu.StreamWriteValue64(s, dev(&words[1]) + 4, 1, 0), CUDA_ERROR_INVALID_VALUE);
  uint64_t pageable = 0;
  CU_ASSERT_EQUAL(cu.StreamWaitValue64(s, dev(&pageable), 0, 0), CUDA_ERROR_INVALID_VALUE);
  CU_ASSERT_EQUAL(cu.StreamDestroy(s), CUDA_SUCCESS);
  CU_ASSERT_EQUAL(cu.MemFreeHost(words), CUDA_SUCCESS);
  pop();
}

static int order[8], norder;
static void note(void *user) {
  order[norder++] = (int)(intptr_t)user;
}

static void test_stream_ops_run_in_the_order_queued(void) {
  ready();
  push(ctx0);
  CUstream s = stream();
  uint64_t *words = host_alloc(4096);
  norder = 0;
  CU_ASSERT_EQUAL(cu.StreamWaitValue64(s, dev(&words[0]), 1, 0), CUDA_SUCCESS);
  for (int i = 1; i <= 5; i++)
    CU_ASSERT_EQUAL(cu.LaunchHostFunc(s, note, (void *)(intptr_t)i), CUDA_SUCCESS);
  pause_ms(20);
  CU_ASSERT_EQUAL(cu.StreamQuery(s), CUDA_ERROR_NOT_READY); /* held by the wait */
  store_release(&words[0], 1);
  CU_ASSERT_EQUAL(cu.StreamSynchronize(s), CUDA_SUCCESS);
  CU_ASSERT_EQUAL(norder, 5);
  for (int i = 0; i < norder; i++) CU_ASSERT_EQUAL(order[i], i + 1);
  CU_ASSERT_EQUAL(cu.StreamDestroy(s), CUDA_SUCCESS);
  CU_ASSERT_EQUAL(cu.MemFreeHost(words), CUDA_SUCCESS);
  pop();
}

static void test_destroy_returns_at_once_and_pending_work_completes(void) {
  ready();
  push(ctx0);
  uint64_t streams = fc.live("streams");
  CUstream s = stream();
  uint64_t *words = host_alloc(4096);
  CU_ASSERT_EQUAL(cu.StreamWaitValue64(s, dev(&words[0]), 1, 0), CUDA_SUCCESS);
  CU_ASSERT_EQUAL(cu.StreamWriteValue64(s, dev(&words[1]), 9, 0), CUDA_SUCCESS);
  CU_ASSERT_EQUAL(cu.StreamDestroy(s), CUDA_SUCCESS); /* with the wait unmet */
  CU_ASSERT_EQUAL(fc.live("streams"), streams);
  CU_ASSERT_EQUAL(cu.StreamQuery(s), CUDA_ERROR_INVALID_HANDLE);
  store_release(&words[0], 1);
  for (int i = 0; i < 10000 && load_acquire(&words[1]) != 9; i++) {
    struct timespec t = {0, 1000000};
    nanosleep(&t, NULL);
  }
  CU_ASSERT_EQUAL(load_acquire(&words[1]), 9);
  CU_ASSERT_EQUAL(cu.MemFreeHost(words), CUDA_SUCCESS);
  pop();
}

/* ---- modules and launches -------------------------------------------------- */

static void test_images_not_for_this_host_are_invalid(void) {
  ready();
  push(ctx0);
  function("ids");
  CUmodule m;
  CU_ASSERT_EQUAL(cu.ModuleLoadData(&m, ".version 9.0\n.target sm_90\n"), CUDA_ERROR_INVALID_IMAGE);
  /* A cubin: an ELF for machine 190. */
  Elf64_Ehdr *h = calloc(1, 65536);
  memcpy(h, image, sizeof *h);
  h->e_machine = 190;
  CU_ASSERT_EQUAL(cu.ModuleLoadData(&m, h), CUDA_ERROR_INVALID_IMAGE);
  free(h);
  /* The fixtures nvcc built, where it was found. */
  const char *vars[] = {"RIG_TEST_CUDA_CUBIN", "RIG_TEST_CUDA_PTX"};
  for (int i = 0; i < 2; i++) {
    const char *path = getenv(vars[i]);
    if (!path || !*path) {
      printf("\n  SKIPPED %s: no nvcc at build time\n", vars[i]);
      continue;
    }
    FILE *f = fopen(path, "rb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    char *text = calloc(1, 1 << 20); /* NUL-terminated, as PTX is passed */
    CU_ASSERT(fread(text, 1, (1 << 20) - 1, f) > 0);
    fclose(f);
    CU_ASSERT_EQUAL(cu.ModuleLoadData(&m, text), CUDA_ERROR_INVALID_IMAGE);
    free(text);
  }
  CUfunction f;
  CU_ASSERT_EQUAL(cu.ModuleGetFunction(&f, module, "no_such_kernel"), CUDA_ERROR_NOT_FOUND);
  pop();
}

static void test_ids_on_4x64_threads_writes_7_plus_3k(void) {
  ready();
  push(ctx0);
  CUfunction ids = function("ids");
  CUstream s = stream();
  CUdeviceptr d;
  CU_ASSERT_EQUAL(cu.MemAlloc(&d, 256 * 4), CUDA_SUCCESS);
  uint32_t *out = host_alloc(4096);
  uint64_t params = d;
  CU_ASSERT_EQUAL(launch(ids, 4, 64, 0, s, &params, sizeof params), CUDA_SUCCESS);
  params = 0; /* copied at the launch */
  CU_ASSERT_EQUAL(cu.MemcpyAsync(dev(out), d, 256 * 4, s), CUDA_SUCCESS);
  CU_ASSERT_EQUAL(cu.StreamSynchronize(s), CUDA_SUCCESS);
  for (uint32_t k = 0; k < 256; k++) CU_ASSERT_EQUAL(out[k], 7 + 3 * k);
  CU_ASSERT_EQUAL(cu.MemFree(d), CUDA_SUCCESS);
  CU_ASSERT_EQUAL(cu.MemFreeHost(out), CUDA_SUCCESS);
  CU_ASSERT_EQUAL(cu.StreamDestroy(s), CUDA_SUCCESS);
  pop();
}

static void test_launches_are_checked_as_the_driver_checks_them(void) {
  ready();
  push(ctx0);
  CUfunction ids = function("ids"), bounded = function("bounded");
  CUstream s = stream();
  uint32_t *out = host_alloc(65536);
  uint64_t p = dev(out);
  int v = 0;
  CU_ASSERT_EQUAL(launch(ids, 0, 64, 0, s, &p, 8), CUDA_ERROR_INVALID_VALUE);
  CU_ASSERT_EQUAL(launch(ids, 1, 1025, 0, s, &p, 8), CUDA_ERROR_INVALID_VALUE);
  CU_ASSERT_EQUAL(launch(ids, 1, 64, 49153, s, &p, 8), CUDA_ERROR_INVALID_VALUE);
  CU_ASSERT_EQUAL(cu.FuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, bounded),
                  CUDA_SUCCESS);
  CU_ASSERT_EQUAL(v, 128);
  CU_ASSERT_EQUAL(launch(bounded, 1, 256, 0, s, &p, 8), CUDA_ERROR_INVALID_VALUE);
  CU_ASSERT_EQUAL(launch(bounded, 1, 128, 0, s, &p, 8), CUDA_SUCCESS);
  size_t eight = 8;
  void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &p, CU_LAUNCH_PARAM_BUFFER_SIZE, &eight,
                   CU_LAUNCH_PARAM_END};
  CU_ASSERT_EQUAL(cu.LaunchKernel(ids, 1, 65536, 1, 64, 1, 1, 0, s, NULL, extra),
                  CUDA_ERROR_INVALID_VALUE); /* grid y */
  CU_ASSERT_EQUAL(cu.LaunchKernel(ids, 1, 1, 1, 32, 32, 2, 0, s, NULL, extra),
                  CUDA_ERROR_INVALID_VALUE); /* 2048 threads a block */
  CU_ASSERT_EQUAL(cu.LaunchKernel(ids, 2, 2, 1, 8, 8, 1, 0, s, NULL, extra), CUDA_SUCCESS);
  static unsigned char big[32765];
  memcpy(big, &p, sizeof p);
  CU_ASSERT_EQUAL(launch(ids, 1, 64, 0, s, big, sizeof big), CUDA_ERROR_INVALID_VALUE);
  CU_ASSERT_EQUAL(launch(ids, 1, 64, 0, s, big, sizeof big - 1), CUDA_SUCCESS);
  void *no_end[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &p, CU_LAUNCH_PARAM_BUFFER_SIZE, &eight,
                    (void *)3};
  CU_ASSERT_EQUAL(cu.LaunchKernel(ids, 1, 1, 1, 64, 1, 1, 0, s, NULL, no_end),
                  CUDA_ERROR_INVALID_VALUE);
  void *kernel_params[] = {&p};
  CU_ASSERT_EQUAL(cu.LaunchKernel(ids, 1, 1, 1, 64, 1, 1, 0, s, kernel_params, NULL),
                  CUDA_ERROR_INVALID_VALUE); /* only the buffer form */
  CU_ASSERT_EQUAL(cu.LaunchKernel(ids, 1, 1, 1, 64, 1, 1, 0, s, NULL, NULL),
                  CUDA_ERROR_INVALID_VALUE);
  CU_ASSERT_EQUAL(cu.FuncSetAttribute(ids, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 232449),
                  CUDA_ERROR_INVALID_VALUE);
  CU_ASSERT_EQUAL(cu.FuncSetAttribute(ids, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 100000),
                  CUDA_SUCCESS);
  CU_ASSERT_EQUAL(launch(ids, 1, 64, 100000, s, &p, 8), CUDA_SUCCESS);
  CU_ASSERT_EQUAL(cu.StreamSynchronize(s), CUDA_SUCCESS);
  for (uint32_t k = 0; k < 256; k++) CU_ASSERT_EQUAL(out[k], 7 + 3 * k); /* the 2x2 x 8x8 one */
  CU_ASSERT_EQUAL(cu.MemFreeHost(out), CUDA_SUCCESS);
  CU_ASSERT_EQUAL(cu.StreamDestroy(s), CUDA_SUCCESS);
  pop();
}

static void test_scale_sh_stages_through_dynamic_shared_memory(void) {
  ready();
  push(ctx0);
  CUfunction f = function("scale_sh");
  CUstream s = stream();
  uint32_t *buf = host_alloc(4096);
  for (uint32_t k = 0; k < 128; k++) buf[k] = k;
  struct {
    uint64_t in, out;
    uint32_t factor;
  } p = {dev(buf), dev(buf + 128), 5};
  CU_ASSERT_EQUAL(launch(f, 2, 64, 64 * 4, s, &p, 20), CUDA_SUCCESS);
  CU_ASSERT_EQUAL(cu.StreamSynchronize(s), CUDA_SUCCESS);
  for (uint32_t k = 0; k < 128; k++) CU_ASSERT_EQUAL(buf[128 + k], 5 * k);
  CU_ASSERT_EQUAL(cu.MemFreeHost(buf), CUDA_SUCCESS);
  CU_ASSERT_EQUAL(cu.StreamDestroy(s), CUDA_SUCCESS);
  pop();
}

/* ---- graphs ----------------------------------------------------------------- */

static CUDA_KERNEL_NODE_PARAMS node_params(CUfunction fn, unsigned gx, unsigned bx, void **extra) {
  return (CUDA_KERNEL_NODE_PARAMS){.func = fn,
                                   .gridDimX = gx,
                                   .gridDimY = 1,
                                   .gridDimZ = 1,
                                   .blockDimX = bx,
                                   .blockDimY = 1,
                                   .blockDimZ = 1,
                                   .extra = extra};
}

static void test_graph_replays_and_set_params_changes_later_launches(void) {
  ready();
  push(ctx0);
  CUfunction ids = function("ids"), twice = function("twice");
  CUstream s = stream();
  uint32_t *a = host_alloc(4096), *b = host_alloc(4096), *c = host_alloc(4096);
  uint64_t *word = host_alloc(4096);
  uint64_t p_ids = dev(a), p_twice[2] = {dev(a), dev(b)};
  size_t n_ids = 8, n_twice = 16;
  void *e_ids[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &p_ids, CU_LAUNCH_PARAM_BUFFER_SIZE, &n_ids,
                   CU_LAUNCH_PARAM_END};
  void *e_twice[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, p_twice, CU_LAUNCH_PARAM_BUFFER_SIZE, &n_twice,
                     CU_LAUNCH_PARAM_END};
  CUgraph g, other;
  CUgraphNode n1, n2, stranger;
  CUgraphExec x;
  CU_ASSERT_EQUAL(cu.GraphCreate(&g, 0), CUDA_SUCCESS);
  CU_ASSERT_EQUAL(cu.GraphCreate(&other, 0), CUDA_SUCCESS);
  CUDA_KERNEL_NODE_PARAMS k1 = node_params(ids, 4, 64, e_ids),
                          k2 = node_params(twice, 4, 64, e_twice);
  CU_ASSERT_EQUAL(cu.GraphAddKernelNode(&n1, g, NULL, 0, &k1), CUDA_SUCCESS);
  CU_ASSERT_EQUAL(cu.GraphAddKernelNode(&stranger, other, NULL, 0, &k1), CUDA_SUCCESS);
  CU_ASSERT_EQUAL(cu.GraphAddKernelNode(&n2, g, &stranger, 1, &k2), CUDA_ERROR_INVALID_VALUE);
  CU_ASSERT_EQUAL(cu.GraphAddKernelNode(&n2, g, &n1, 1, &k2), CUDA_SUCCESS);
  p_ids = 0; /* copied when added */
  CU_ASSERT_EQUAL(cu.GraphInstantiateWithFlags(&x, g, 0), CUDA_SUCCESS);
  CU_ASSERT_EQUAL(cu.GraphLaunch(x, s), CUDA_SUCCESS);
  CU_ASSERT_EQUAL(cu.StreamSynchronize(s), CUDA_SUCCESS);
  for (uint32_t k = 0; k < 256; k++) CU_ASSERT_EQUAL(b[k], 2 * (7 + 3 * k) + 1);
  /* A launch held by a wait, then an update: the launch keeps what it had. */
  memset(b, 0, 1024);
  CU_ASSERT_EQUAL(cu.StreamWaitValue64(s, dev(word), 1, 0), CUDA_SUCCESS);
  CU_ASSERT_EQUAL(cu.GraphLaunch(x, s), CUDA_SUCCESS);
  p_twice[1] = dev(c);
  CUDA_KERNEL_NODE_PARAMS k3 = node_params(twice, 2, 64, e_twice);
  CU_ASSERT_EQUAL(cu.GraphExecKernelNodeSetParams(x, n2, &k3), CUDA_SUCCESS);
  store_release(word, 1);
  CU_ASSERT_EQUAL(cu.StreamSynchronize(s), CUDA_SUCCESS);
  CU_ASSERT_EQUAL(b[255], 2 * (7 + 3 * 255) + 1);
  CU_ASSERT_EQUAL(c[0], 0);
  CU_ASSERT_EQUAL(cu.GraphLaunch(x, s), CUDA_SUCCESS);
  CU_ASSERT_EQUAL(cu.StreamSynchronize(s), CUDA_SUCCESS);
  for (uint32_t k = 0; k < 128; k++) CU_ASSERT_EQUAL(c[k], 2 * (7 + 3 * k) + 1);
  CU_ASSERT_EQUAL(c[128], 0); /* the new geometry: 2 blocks */
  /* A node of another graph, or another function: refused. */
  CU_ASSERT_EQUAL(cu.GraphExecKernelNodeSetParams(x, stranger, &k1), CUDA_ERROR_INVALID_VALUE);
  CU_ASSERT_EQUAL(cu.GraphExecKernelNodeSetParams(x, n1, &k3), CUDA_ERROR_INVALID_VALUE);
  CU_ASSERT_EQUAL(fc.live("execs"), 1);
  CU_ASSERT_EQUAL(cu.GraphExecDestroy(x), CUDA_SUCCESS);
  CU_ASSERT_EQUAL(cu.GraphDestroy(g), CUDA_SUCCESS);
  CU_ASSERT_EQUAL(cu.GraphDestroy(other), CUDA_SUCCESS);
  CU_ASSERT_EQUAL(cu.GraphDestroy(g), CUDA_ERROR_INVALID_VALUE);
  CU_ASSERT_EQUAL(fc.live("execs"), 0);
  CU_ASSERT_EQUAL(fc.live("graphs"), 0);
  CU_ASSERT_EQUAL(cu.StreamDestroy(s), CUDA_SUCCESS);
  CU_ASSERT_EQUAL(cu.MemFreeHost(a), CUDA_SUCCESS);
  CU_ASSERT_EQUAL(cu.MemFreeHost(b), CUDA_SUCCESS);
  CU_ASSERT_EQUAL(cu.MemFreeHost(c), CUDA_SUCCESS);
  CU_ASSERT_EQUAL(cu.MemFreeHost(word), CUDA_SUCCESS);
  pop();
}

/* ---- faults ----------------------------------------------------------------- */

/* In device 1's context, which the last release then clears. */
static void test_a_failed_launch_makes_its_context_answer_its_code(void) {
  ready();
  push(ctx0);
  function("set"); /* reads the image */
  pop();
  push(ctx1);
  CUmodule m;
  CUfunction set;
  CU_ASSERT_EQUAL_FATAL(cu.ModuleLoadData(&m, image), CUDA_SUCCESS);
  CU_ASSERT_EQUAL(cu.ModuleGetFunction(&set, m, "set"), CUDA_SUCCESS);
  CUstream s = stream();
  uint64_t *words = host_alloc(4096);
  struct {
    uint64_t x, v;
  } p = {dev(&words[0]), 5};
  fc.fail_next_launch(CUDA_ERROR_ILLEGAL_ADDRESS);
  /* Held by a wait, so that the fault comes after all is queued. */
  CU_ASSERT_EQUAL(cu.StreamWaitValue64(s, dev(&words[2]), 1, 0), CUDA_SUCCESS);
  CU_ASSERT_EQUAL(launch(set, 1, 1, 0, s, &p, 16), CUDA_SUCCESS);
  CU_ASSERT_EQUAL(cu.StreamWriteValue64(s, dev(&words[1]), 3, 0), CUDA_SUCCESS);
  store_release(&words[2], 1);
  CU_ASSERT_EQUAL(cu.StreamSynchronize(s), CUDA_ERROR_ILLEGAL_ADDRESS);
  CU_ASSERT_EQUAL(cu.StreamQuery(s), CUDA_ERROR_ILLEGAL_ADDRESS);
  CUdeviceptr d;
  CU_ASSERT_EQUAL(cu.MemAlloc(&d, 256), CUDA_ERROR_ILLEGAL_ADDRESS);
  CU_ASSERT_EQUAL(launch(set, 1, 1, 0, s, &p, 16), CUDA_ERROR_ILLEGAL_ADDRESS);
  CU_ASSERT_EQUAL(words[0], 0); /* the kernel did not run */
  CU_ASSERT_EQUAL(words[1], 0); /* nor what followed it */
  pop();
  /* Device 0's context is untouched. */
  push(ctx0);
  CU_ASSERT_EQUAL(cu.MemAlloc(&d, 256), CUDA_SUCCESS);
  CU_ASSERT_EQUAL(cu.MemFree(d), CUDA_SUCCESS);
  pop();
  /* The last release ends the context, and its fault. */
  CU_ASSERT_EQUAL(cu.DevicePrimaryCtxRelease(1), CUDA_SUCCESS);
  CU_ASSERT_EQUAL(cu.DevicePrimaryCtxRetain(&ctx1, 1), CUDA_SUCCESS);
  push(ctx1);
  CU_ASSERT_EQUAL(cu.MemAlloc(&d, 256), CUDA_SUCCESS);
  CU_ASSERT_EQUAL(cu.MemFree(d), CUDA_SUCCESS);
  pop();
}

static void test_handles_made_in_an_ended_context_are_stale(void) {
  ready();
  push(ctx0);
  function("ids"); /* reads the image */
  pop();
  push(ctx1);
  CUmodule m;
  CUfunction ids;
  CUdeviceptr d;
  CU_ASSERT_EQUAL_FATAL(cu.ModuleLoadData(&m, image), CUDA_SUCCESS);
  CU_ASSERT_EQUAL(cu.ModuleGetFunction(&ids, m, "ids"), CUDA_SUCCESS);
  CUstream s = stream();
  void *h = host_alloc(4096);
  CU_ASSERT_EQUAL(cu.MemAlloc(&d, 256), CUDA_SUCCESS);
  pop();
  uint64_t streams = fc.live("streams"), allocations = fc.live("allocations");
  CU_ASSERT_EQUAL(cu.DevicePrimaryCtxRelease(1), CUDA_SUCCESS); /* the last */
  CU_ASSERT_EQUAL(cu.DevicePrimaryCtxRetain(&ctx1, 1), CUDA_SUCCESS);
  push(ctx1);
  uint64_t p = d;
  CU_ASSERT_EQUAL(cu.StreamQuery(s), CUDA_ERROR_INVALID_HANDLE);
  CU_ASSERT_EQUAL(cu.ModuleUnload(m), CUDA_ERROR_INVALID_HANDLE);
  CUstream s2 = stream();
  CU_ASSERT_EQUAL(launch(ids, 1, 1, 0, s2, &p, 8), CUDA_ERROR_INVALID_HANDLE);
  CU_ASSERT_EQUAL(cu.MemFree(d), CUDA_ERROR_INVALID_VALUE);
  CU_ASSERT_EQUAL(cu.MemFreeHost(h), CUDA_ERROR_INVALID_VALUE);
  /* Still counted: the backend, not the double, should have freed them. */
  CU_ASSERT_EQUAL(fc.live("streams"), streams + 1);
  CU_ASSERT_EQUAL(fc.live("allocations"), allocations);
  CU_ASSERT_EQUAL(cu.StreamDestroy(s2), CUDA_SUCCESS);
  pop();
}

/* ---- names and counts ------------------------------------------------------ */

static void test_error_names_are_cudas(void) {
  const char *name = "x";
  CU_ASSERT_EQUAL(cu.GetErrorName(CUDA_ERROR_ILLEGAL_ADDRESS, &name), CUDA_SUCCESS);
  CU_ASSERT_STRING_EQUAL(name, "CUDA_ERROR_ILLEGAL_ADDRESS");
  CU_ASSERT_EQUAL(cu.GetErrorName(ERR_NOT_REGISTERED, &name), CUDA_SUCCESS);
  CU_ASSERT_STRING_EQUAL(name, "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED");
  CU_ASSERT_EQUAL(cu.GetErrorName(ERR_INVALID_DEVICE, &name), CUDA_SUCCESS);
  CU_ASSERT_STRING_EQUAL(name, "CUDA_ERROR_INVALID_DEVICE");
  CU_ASSERT_EQUAL(cu.GetErrorName(12345, &name), CUDA_ERROR_INVALID_VALUE);
  CU_ASSERT_PTR_NULL(name);
}

static void test_counts_are_of_successful_calls_and_live_objects(void) {
  ready();
  push(ctx0);
  CUfunction ids = function("ids");
  fc.reset_counts();
  uint64_t allocations = fc.live("allocations");
  CUdeviceptr a, b;
  CU_ASSERT_EQUAL(cu.MemAlloc(&a, 256), CUDA_SUCCESS);
  CU_ASSERT_EQUAL(cu.MemAlloc(&b, 0), CUDA_ERROR_INVALID_VALUE);
  CU_ASSERT_EQUAL(cu.MemAlloc(&b, 256), CUDA_SUCCESS);
  CU_ASSERT_EQUAL(fc.count("cuMemAlloc"), 2);
  CU_ASSERT_EQUAL(fc.live("allocations"), allocations + 2);
  CUstream s = stream();
  uint64_t p = a;
  CU_ASSERT_EQUAL(launch(ids, 1, 64, 0, s, &p, 8), CUDA_SUCCESS);
  CU_ASSERT_EQUAL(launch(ids, 1, 64, 0, s, &p, 8), CUDA_SUCCESS);
  CU_ASSERT_EQUAL(cu.StreamSynchronize(s), CUDA_SUCCESS);
  CU_ASSERT_EQUAL(fc.count("cuLaunchKernel"), 2);
  CU_ASSERT_EQUAL(fc.count("kernel_runs"), 2);
  CU_ASSERT_EQUAL(fc.count("cuStreamCreate"), 1);
  CU_ASSERT_EQUAL(cu.StreamDestroy(s), CUDA_SUCCESS);
  CU_ASSERT_EQUAL(cu.MemFree(a), CUDA_SUCCESS);
  CU_ASSERT_EQUAL(cu.MemFree(b), CUDA_SUCCESS);
  CU_ASSERT_EQUAL(fc.live("allocations"), allocations);
  CU_ASSERT_EQUAL(fc.count("cuMemFree"), 2);
  CU_ASSERT_EQUAL(fc.count("cuNoSuchCall"), UINT64_MAX);
  CU_ASSERT_EQUAL(fc.live("nothing"), UINT64_MAX);
  fc.reset_counts();
  CU_ASSERT_EQUAL(fc.count("cuMemAlloc"), 0);
  pop();
}

/* ---- main --------------------------------------------------------------------- */

#define T(name)                                                                                    \
  { #name, test_##name }
static CU_TestInfo tests[] = {
    T(calls_before_cuInit_answer_not_initialized),
    T(no_devices_makes_cuInit_answer_no_device),
    T(devices_are_sm90_with_their_attributes),
    T(bus_ids_are_not_in_ordinal_order),
    T(peer_access_needs_FAKECUDA_PEER),
    T(calls_need_a_current_context),
    T(device_memory_is_aligned_and_bounded_by_the_device),
    T(fail_next_alloc_fails_one_allocation),
    T(overlapping_registration_is_refused),
    T(copies_refuse_memory_the_double_does_not_know),
    T(wait_value_holds_a_later_write_until_the_word_is_stored),
    T(stream_ops_run_in_the_order_queued),
    T(destroy_returns_at_once_and_pending_work_completes),
    T(images_not_for_this_host_are_invalid),
    T(ids_on_4x64_threads_writes_7_plus_3k),
    T(launches_are_checked_as_the_driver_checks_them),
    T(scale_sh_stages_through_dynamic_shared_memory),
    T(graph_replays_and_set_params_changes_later_launches),
    T(a_failed_launch_makes_its_context_answer_its_code),
    T(handles_made_in_an_ended_context_are_stale),
    T(error_names_are_cudas),
    T(counts_are_of_successful_calls_and_live_objects),
    CU_TEST_INFO_NULL,
};

int main(int argc, char **argv) {
  setenv("FAKECUDA_DEVICES", "2", 1);
  unsetenv("FAKECUDA_PEER");
  if (load() != 0) return 1;
  if (CU_initialize_registry() != CUE_SUCCESS) return 2;
  CU_pSuite suite = CU_add_suite("fakecuda", NULL, NULL);
  for (CU_TestInfo *t = tests; suite && t->pName; t++)
    if (argc < 2 || strstr(t->pName, argv[1])) CU_add_test(suite, t->pName, t->pTestFunc);
  CU_basic_set_mode(CU_BRM_VERBOSE);
  CU_basic_run_tests();
  unsigned failed = CU_get_number_of_tests_failed() + CU_get_number_of_failures();
  unsigned ran = CU_get_number_of_tests_run();
  CU_cleanup_registry();
  return failed || ran == 0 ? 1 : 0;
}
