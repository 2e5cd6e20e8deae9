/* bench_cuda: the cuda backend's rows (docs/bench.md), each beside a floor
 * done by hand with the driver API in the same process, on the same GPU,
 * interleaved sample by sample:
 *
 * - cuda/launch-1: a one-kernel submission (the `set` test kernel, one
 *   thread), handed over and waited. Floor: cuLaunchKernel and
 *   cuStreamSynchronize. Target <= 1.1x.
 * - cuda/step-64: one submission of 64 dependent kernels (`add` over 256
 *   threads on one buffer), which the backend replays as a CUDA graph,
 *   handed over and waited. Floor: a graph of the same 64 kernels built by
 *   hand, cuGraphLaunch and cuStreamSynchronize. Target <= 1.05x.
 * - cuda/inflight-100: the one-kernel submission handed over 100 times,
 *   each time after waiting only for the run before last; per run. Floor:
 *   the one-kernel graph launched 100 times the same way (each launch
 *   followed by a stream write of its index that the host waits on).
 *   Target <= 1.1x.
 * - cuda/h2d-64MiB: a copy of 64 MiB of pinned host memory to device
 *   memory, handed over and waited. Floor: cuMemcpyHtoDAsync and
 *   cuStreamSynchronize. Target >= 0.9x, in GB/s.
 *
 * Without a GPU every row skips and says so (exit 0). On the driver
 * double (RIG_CUDA_LIBRARY) the rows measure only the double, so they
 * skip too unless RIG_BENCH_CUDA_DOUBLE=1 asks to exercise them.
 *
 * The kernels: the tests' cuda_kernels.cubin (the .so for the double), at
 * the path it was built at or $RIG_BENCH_CUDA_KERNELS.
 *
 * Usage: bench_cuda [RESULTS.jsonl] */
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "cuda_api.h"
#include "rig/rig_core.h"

#ifndef RIG_BENCH_CUDA_CUBIN
#define RIG_BENCH_CUDA_CUBIN ""
#endif
#ifndef RIG_BENCH_CUDA_SO
#define RIG_BENCH_CUDA_SO ""
#endif

#define STEPS    64
#define INFLIGHT 100
#define H2D      (64u << 20)

/* ---- the driver, by hand, for the floors ------------------------------------ */

static struct {
#define FIELD(ret, field, names, params) ret(*field) params;
  RIG_CUDA_FUNCTIONS(FIELD)
#undef FIELD
} cu;

static void load_driver(void) {
  const char *lib = getenv("RIG_CUDA_LIBRARY");
  void *dl = dlopen(lib && *lib ? lib : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  BENCH_CHECK(dl != NULL);
#define NAMES(...) __VA_ARGS__
#define FIND(ret, field, names, params)                                                            \
  do {                                                                                             \
    static const char *const n_[] = {NAMES names};                                                 \
    void *f_ = NULL;                                                                               \
    for (size_t i_ = 0; !f_ && i_ < sizeof n_ / sizeof *n_; i_++) f_ = dlsym(dl, n_[i_]);          \
    BENCH_CHECK(f_ != NULL);                                                                       \
    memcpy(&cu.field, &f_, sizeof f_);                                                             \
  } while (0);
  RIG_CUDA_FUNCTIONS(FIND)
#undef FIND
#undef NAMES
}

#define CU(call) BENCH_CHECK((call) == CUDA_SUCCESS)

static void die(const char *what, const rig_error *err) {
  fprintf(stderr, "bench_cuda: %s: %s\n", what, err->message);
  exit(1);
}

/* ---- state ------------------------------------------------------------------------ */

static rig_device *gpu;
static CUcontext ctx;
static CUstream stream;
static CUfunction set_fn, add_fn;
static rig_buffer *dbuf, *hsrc, *ddst;
static rig_submission *one, *step64;
static CUgraphExec graph1, graph64;
static _Atomic uint64_t *word; /* pinned, for the in-flight floor */
static CUdeviceptr word_d;
static uint64_t word_next;

static uint64_t set_params[2];
static uint32_t add_params[4];

static void launch_extra(void *params, size_t *n, void **extra) {
  extra[0] = CU_LAUNCH_PARAM_BUFFER_POINTER;
  extra[1] = params;
  extra[2] = CU_LAUNCH_PARAM_BUFFER_SIZE;
  extra[3] = n;
  extra[4] = CU_LAUNCH_PARAM_END;
}

static CUgraphExec make_graph(CUfunction fn, void *params, size_t bytes, unsigned groups,
                              unsigned threads, int n) {
  CUgraph g;
  CU(cu.GraphCreate(&g, 0));
  CUgraphNode prev = NULL, node;
  for (int i = 0; i < n; i++) {
    void *extra[5];
    size_t sz = bytes;
    launch_extra(params, &sz, extra);
    CUDA_KERNEL_NODE_PARAMS np = {.func = fn,
                                  .gridDimX = groups,
                                  .gridDimY = 1,
                                  .gridDimZ = 1,
                                  .blockDimX = threads,
                                  .blockDimY = 1,
                                  .blockDimZ = 1,
                                  .extra = extra};
    CU(cu.GraphAddKernelNode(&node, g, prev ? &prev : NULL, prev ? 1 : 0, &np));
    prev = node;
  }
  CUgraphExec x;
  CU(cu.GraphInstantiateWithFlags(&x, g, 0));
  CU(cu.GraphDestroy(g));
  return x;
}

static rig_part launch_part(rig_image *img, rig_entry e, const rig_ref *ref, const void *params,
                            uint32_t bytes, uint32_t groups, uint32_t threads) {
  rig_part p = {.kind = RIG_WORK_LAUNCH};
  p.u.launch.image = img;
  p.u.launch.entry = e;
  p.u.launch.params = params;
  p.u.launch.params_bytes = bytes;
  p.u.launch.refs = ref;
  p.u.launch.nrefs = 1;
  p.u.launch.groups[0] = groups;
  p.u.launch.groups[1] = p.u.launch.groups[2] = 1;
  p.u.launch.threads[0] = threads;
  p.u.launch.threads[1] = p.u.launch.threads[2] = 1;
  return p;
}

static void setup(const void *kbytes, size_t klen) {
  rig_error err;
  rig_image *img;
  if (rig_image_load(gpu, kbytes, klen, &img, &err) != RIG_OK) die("the kernels", &err);
  rig_entry se, ae;
  if (rig_image_entry(img, "set", 3, &se, &err) != RIG_OK) die("set", &err);
  if (rig_image_entry(img, "add", 3, &ae, &err) != RIG_OK) die("add", &err);
  set_fn = (CUfunction)(uintptr_t)se.value;
  add_fn = (CUfunction)(uintptr_t)ae.value;
  if (rig_buffer_create(gpu, RIG_KIND_DEVICE, 4096, &dbuf, &err) != RIG_OK) die("memory", &err);
  static const rig_ref w = {0, 0, RIG_USE_WRITE};
  rig_part p1 = launch_part(img, se, &w, set_params, 16, 1, 1);
  if (rig_submission_make(gpu, &p1, 1, 1, NULL, 0, &one, &err) != RIG_OK) die("launch-1", &err);
  add_params[2] = 256;
  add_params[3] = 1;
  rig_part parts[STEPS];
  for (int i = 0; i < STEPS; i++) parts[i] = launch_part(img, ae, &w, add_params, 16, 1, 256);
  if (rig_submission_make(gpu, parts, STEPS, 1, NULL, 0, &step64, &err) != RIG_OK)
    die("step-64", &err);
  rig_image_release(img);
  if (rig_buffer_create(gpu, RIG_KIND_PINNED, H2D, &hsrc, &err) != RIG_OK ||
      rig_buffer_create(gpu, RIG_KIND_DEVICE, H2D, &ddst, &err) != RIG_OK)
    die("64 MiB", &err);
  memset(rig_buffer_host(hsrc), 1, H2D);

  /* The floors' own stream, in the same primary context. */
  CUdevice dev;
  CU(cu.Init(0));
  /* cuda:0 is the first GPU by bus id: the floors find it the same way. */
  int count;
  CU(cu.DeviceGetCount(&count));
  char want[16], bus[16];
  snprintf(want, sizeof want, "%s", rig_device_facts_of(gpu)->bus_id);
  dev = 0;
  for (int i = 0; i < count; i++) {
    CU(cu.DeviceGetPCIBusId(bus, sizeof bus, i));
    if (!strcmp(bus, want)) CU(cu.DeviceGet(&dev, i));
  }
  CU(cu.DevicePrimaryCtxRetain(&ctx, dev));
  CU(cu.CtxPushCurrent(ctx));
  CU(cu.StreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  void *w64;
  CU(cu.MemHostAlloc(&w64, 4096, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP));
  memset(w64, 0, 4096);
  word = w64;
  CU(cu.MemHostGetDevicePointer(&word_d, w64, 0));
  /* The floors' parameters hold the address the submissions' refs add. */
  set_params[0] = rig_buffer_address(dbuf);
  set_params[1] = 7;
  uint64_t a = rig_buffer_address(dbuf);
  memcpy(add_params, &a, 8);
  graph1 = make_graph(set_fn, set_params, 16, 1, 1, 1);
  graph64 = make_graph(add_fn, add_params, 16, 1, 256, STEPS);
}

/* ---- rows and floors ------------------------------------------------------------------ */

static void submit_wait(rig_submission *s) {
  rig_point pt;
  rig_error err;
  if (rig_submit(s, NULL, &dbuf, NULL, 0, &pt, &err) != RIG_OK) die("submit", &err);
  if (rig_point_wait(pt, &err) != RIG_OK) die("wait", &err);
}

static double row_launch1(void) {
  uint64_t t0 = bench_now_ns();
  submit_wait(one);
  return (double)(bench_now_ns() - t0);
}

static double floor_launch1(void) {
  uint64_t t0 = bench_now_ns();
  void *extra[5];
  size_t n = 16;
  launch_extra(set_params, &n, extra);
  CU(cu.LaunchKernel(set_fn, 1, 1, 1, 1, 1, 1, 0, stream, NULL, extra));
  CU(cu.StreamSynchronize(stream));
  return (double)(bench_now_ns() - t0);
}

static double row_step64(void) {
  uint64_t t0 = bench_now_ns();
  submit_wait(step64);
  return (double)(bench_now_ns() - t0);
}

static double floor_step64(void) {
  uint64_t t0 = bench_now_ns();
  CU(cu.GraphLaunch(graph64, stream));
  CU(cu.StreamSynchronize(stream));
  return (double)(bench_now_ns() - t0);
}

static double row_inflight(void) {
  rig_point pts[INFLIGHT];
  rig_error err;
  uint64_t t0 = bench_now_ns();
  for (int i = 0; i < INFLIGHT; i++) {
    if (i >= 2 && rig_point_wait(pts[i - 2], &err) != RIG_OK) die("wait", &err);
    if (rig_submit(one, NULL, &dbuf, NULL, 0, &pts[i], &err) != RIG_OK) die("submit", &err);
  }
  if (rig_point_wait(pts[INFLIGHT - 1], &err) != RIG_OK) die("wait", &err);
  return (double)(bench_now_ns() - t0) / INFLIGHT;
}

static void spin_until(uint64_t v) {
  while (atomic_load_explicit(word, memory_order_acquire) < v) {
  }
}

static double floor_inflight(void) {
  uint64_t base = word_next;
  uint64_t t0 = bench_now_ns();
  for (int i = 0; i < INFLIGHT; i++) {
    if (i >= 2) spin_until(base + (uint64_t)i - 1);
    CU(cu.GraphLaunch(graph1, stream));
    CU(cu.StreamWriteValue64(stream, word_d, base + (uint64_t)i + 1, 0));
  }
  spin_until(base + INFLIGHT);
  word_next = base + INFLIGHT;
  return (double)(bench_now_ns() - t0) / INFLIGHT;
}

static double gbps(uint64_t ns) {
  return (double)H2D / (double)ns;
}

static double row_h2d(void) {
  rig_point pt;
  rig_error err;
  uint64_t t0 = bench_now_ns();
  if (rig_buffer_copy_submit(hsrc, 0, ddst, 0, H2D, NULL, 0, &pt, &err) != RIG_OK)
    die("copy", &err);
  if (rig_point_wait(pt, &err) != RIG_OK) die("wait", &err);
  return gbps(bench_now_ns() - t0);
}

static double floor_h2d(void) {
  uint64_t t0 = bench_now_ns();
  CU(cu.MemcpyHtoDAsync(rig_buffer_address(ddst), rig_buffer_host(hsrc), H2D, stream));
  CU(cu.StreamSynchronize(stream));
  return gbps(bench_now_ns() - t0);
}

static int report(int argc, char **argv, const char *name, const char *unit, bench_measured m,
                  size_t samples, const char *target, double most, bool higher) {
  double ratio = higher ? m.floor_median / m.median : m.median / m.floor_median;
  bench_row r = {
      name,  unit,    m.median, m.floor_median,
      ratio, samples, target,   higher ? m.median / m.floor_median >= most : ratio <= most};
  return bench_report(argc, argv, &r);
}

int main(int argc, char **argv) {
  bench_print_header();
  const char *why = NULL;
  rig_error err;
  if (getenv("RIG_CUDA_LIBRARY") && !getenv("RIG_BENCH_CUDA_DOUBLE"))
    why = "the driver double measures nothing of a GPU";
  else if (rig_device_open("cuda:0", &gpu, &err) != RIG_OK)
    why = err.message;
  if (why) {
    printf("cuda/*: skipped: %s\n", why);
    return 0;
  }
  const char *kpath = getenv("RIG_BENCH_CUDA_KERNELS");
  if (!kpath || !*kpath)
    kpath = getenv("RIG_CUDA_LIBRARY") ? RIG_BENCH_CUDA_SO : RIG_BENCH_CUDA_CUBIN;
  size_t klen = 0;
  FILE *f = *kpath ? fopen(kpath, "rb") : NULL;
  if (!f) {
    printf("cuda/*: skipped: no kernels (%s)\n",
           *kpath ? kpath : "nvcc was not found at build time");
    return 0;
  }
  fseek(f, 0, SEEK_END);
  klen = (size_t)ftell(f);
  rewind(f);
  void *kbytes = malloc(klen);
  BENCH_CHECK(kbytes && fread(kbytes, 1, klen, f) == klen);
  fclose(f);
  load_driver();
  setup(kbytes, klen);
  free(kbytes);
  int rc = 0;
  rc |= report(argc, argv, "cuda/launch-1", "ns",
               bench_measure(row_launch1, floor_launch1, 200, 2000, NULL), 2000, "<= 1.1x", 1.1,
               false);
  rc |=
      report(argc, argv, "cuda/step-64", "ns",
             bench_measure(row_step64, floor_step64, 50, 500, NULL), 500, "<= 1.05x", 1.05, false);
  rc |= report(argc, argv, "cuda/inflight-100", "ns",
               bench_measure(row_inflight, floor_inflight, 10, 200, NULL), 200, "<= 1.1x", 1.1,
               false);
  rc |= report(argc, argv, "cuda/h2d-64MiB", "GB/s", bench_measure(row_h2d, floor_h2d, 3, 30, NULL),
               30, ">= 0.9x", 0.9, true);
  return rc ? 1 : 0;
}
