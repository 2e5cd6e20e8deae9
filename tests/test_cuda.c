/* The cuda backend (backends/cuda, docs/cuda.md): device facts and
 * refusals, copies between every memory kind and the host, launches at
 * their limits, the upstream GPU test through a description, a program
 * mixing host, cpu and cuda devices, graphs replayed with per-run holes,
 * a GPU step after a cpu step without the host waiting, and loss.
 *
 * It runs against the driver double (tests/support/fakecuda, selected by
 * RIG_CUDA_LIBRARY, kernels as a host object) in CI, and against the real
 * driver where a GPU is present (kernels as an sm_90 cubin); with neither,
 * each test skips and says so. Counts of driver calls are checked only
 * with the double. The loss test runs last: a lost context stays lost. */
#include <dlfcn.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "proc.h"
#include "rig/rig_driver.h"
#include "rig/rig_program.h"
#include "rig_test.h"

/* ---- fixtures --------------------------------------------------------------- */

static bool fake(void) {
  const char *lib = getenv("RIG_CUDA_LIBRARY");
  return lib && *lib;
}

/* The double's test hooks, or NULL with the real driver. */
static void *hook(const char *name) {
  if (!fake()) return NULL;
  void *dl = dlopen(getenv("RIG_CUDA_LIBRARY"), RTLD_NOW | RTLD_NOLOAD);
  return dl ? dlsym(dl, name) : NULL;
}

static uint64_t count(const char *call) {
  uint64_t (*f)(const char *) = (uint64_t(*)(const char *))hook("fakecuda_count");
  return f ? f(call) : 0;
}

static rig_device *gpu(const char *test, unsigned index) {
  char name[16];
  snprintf(name, sizeof name, "cuda:%u", index);
  rig_device *d = NULL;
  rig_error err;
  const char *cubin = getenv("RIG_TEST_CUDA_CUBIN");
  if (!fake() && (!cubin || !*cubin)) {
    rig_test_skip(test, "no cubin of the test kernels (nvcc was not found at build time)");
    return NULL;
  }
  if (rig_device_open(name, &d, &err) != RIG_OK) {
    rig_test_skip(test, err.message);
    return NULL;
  }
  return d;
}

#define GPU_OR_SKIP(d)                                                                             \
  rig_device *d = gpu(__func__, 0);                                                                \
  if (!d) return

/* The test kernels in the format of the driver in use. */
static void *kbytes;
static size_t klen;
static void kernels(const void **bytes, size_t *len) {
  if (!kbytes) {
    const char *path = getenv(fake() ? "RIG_TEST_CUDA_KERNELS" : "RIG_TEST_CUDA_CUBIN");
    CU_ASSERT_PTR_NOT_NULL_FATAL(path);
    CU_ASSERT_FATAL(*path != 0);
    kbytes = rig_test_read_file(path, &klen);
    CU_ASSERT_PTR_NOT_NULL_FATAL(kbytes);
  }
  *bytes = kbytes;
  *len = klen;
}

static rig_image *image(rig_device *d) {
  const void *b;
  size_t n;
  kernels(&b, &n);
  rig_image *img = NULL;
  rig_error err;
  rig_status st = rig_image_load(d, b, n, &img, &err);
  if (st != RIG_OK) fprintf(stderr, "image: %s\n", err.message);
  CU_ASSERT_EQUAL_FATAL(st, RIG_OK);
  return img;
}

static rig_entry entry(rig_image *img, const char *name) {
  rig_entry e;
  rig_error err;
  rig_status st = rig_image_entry(img, name, strlen(name), &e, &err);
  if (st != RIG_OK) fprintf(stderr, "entry: %s\n", err.message);
  CU_ASSERT_EQUAL_FATAL(st, RIG_OK);
  return e;
}

static rig_buffer *buffer(rig_device *d, rig_buffer_kind kind, uint64_t bytes) {
  rig_buffer *b = NULL;
  rig_error err;
  rig_status st = rig_buffer_create(d, kind, bytes, &b, &err);
  if (st != RIG_OK) fprintf(stderr, "buffer: %s\n", err.message);
  CU_ASSERT_EQUAL_FATAL(st, RIG_OK);
  return b;
}

static void write_words(rig_buffer *b, const uint32_t *w, size_t n) {
  rig_error err;
  CU_ASSERT_EQUAL_FATAL(rig_buffer_write(b, 0, w, n * 4, &err), RIG_OK);
}

static void read_words(rig_buffer *b, uint32_t *w, size_t n) {
  rig_error err;
  rig_status st = rig_buffer_read(b, 0, w, n * 4, &err);
  if (st != RIG_OK) fprintf(stderr, "read: %s\n", err.message);
  CU_ASSERT_EQUAL_FATAL(st, RIG_OK);
}

/* A launch part of fn over groups x threads with `nrefs` pointer
 * parameters, one ref each (slot i at byte 8i), then `extra` words. */
static rig_part launch_part(rig_image *img, rig_entry e, rig_ref *refs, size_t nrefs,
                            const void *params, uint32_t bytes, uint32_t groups, uint32_t threads) {
  rig_part p = {.kind = RIG_WORK_LAUNCH};
  p.u.launch.image = img;
  p.u.launch.entry = e;
  p.u.launch.params = params;
  p.u.launch.params_bytes = bytes;
  p.u.launch.refs = refs;
  p.u.launch.nrefs = nrefs;
  p.u.launch.groups[0] = groups;
  p.u.launch.groups[1] = p.u.launch.groups[2] = 1;
  p.u.launch.threads[0] = threads;
  p.u.launch.threads[1] = p.u.launch.threads[2] = 1;
  return p;
}

static rig_submission *make(rig_device *d, const rig_part *parts, size_t n, size_t nslots) {
  rig_submission *s = NULL;
  rig_error err;
  rig_status st = rig_submission_make(d, parts, n, nslots, NULL, 0, &s, &err);
  if (st != RIG_OK) fprintf(stderr, "make: %s\n", err.message);
  CU_ASSERT_EQUAL_FATAL(st, RIG_OK);
  return s;
}

static void submit_wait(rig_submission *s, const void *block, rig_buffer *const *slots) {
  rig_point pt;
  rig_error err;
  rig_status st = rig_submit(s, block, slots, NULL, 0, &pt, &err);
  if (st != RIG_OK) fprintf(stderr, "submit: %s\n", err.message);
  CU_ASSERT_EQUAL_FATAL(st, RIG_OK);
  CU_ASSERT_EQUAL(rig_point_wait(pt, &err), RIG_OK);
}

/* ---- devices ------------------------------------------------------------------- */

static void test_a_gpu_is_a_device_with_its_arch_budget_and_bus_id(void) {
  GPU_OR_SKIP(d);
  const rig_device_facts *f = rig_device_facts_of(d);
  CU_ASSERT_STRING_EQUAL(f->name, "cuda:0");
  CU_ASSERT_EQUAL(strncmp(f->arch, "sm_", 3), 0);
  CU_ASSERT(f->budget > 0);
  CU_ASSERT(f->runs_launches && f->runs_copies && f->runs_fills && !f->runs_words);
  CU_ASSERT(!f->synchronous);
  CU_ASSERT_EQUAL(strlen(f->bus_id), 12); /* dddd:bb:dd.f */
  int fam = rig_family_of_arch(f->arch);
  CU_ASSERT_FATAL(fam >= 0);
  CU_ASSERT_STRING_EQUAL(rig_family_name((size_t)fam), "cuda");
  if (fake()) {
    CU_ASSERT_STRING_EQUAL(f->arch, "sm_90");
    CU_ASSERT_EQUAL(f->budget, UINT64_C(1) << 30);
    CU_ASSERT_EQUAL(f->max_shared, 232448);
  }
}

static void test_gpus_are_ordered_by_pci_bus_id(void) {
  if (!gpu(__func__, 0)) return;
  rig_device *b = gpu(__func__, 1);
  if (!b) return;
  rig_device *a = gpu(__func__, 0);
  CU_ASSERT(strcmp(rig_device_facts_of(a)->bus_id, rig_device_facts_of(b)->bus_id) < 0);
  /* The double's ordinal 0 is bus 41, its ordinal 1 bus 01. */
  if (fake()) CU_ASSERT_STRING_EQUAL(rig_device_facts_of(a)->bus_id, "0000:01:00.0");
}

static void test_a_gpu_past_the_last_is_no_such_device(void) {
  GPU_OR_SKIP(d);
  (void)d;
  rig_device *x;
  rig_error err;
  CU_ASSERT_EQUAL(rig_device_open("cuda:63", &x, &err), RIG_EREFUSED);
  CU_ASSERT_EQUAL(strncmp(err.message, "cuda:63: ", 9), 0);
}

static void test_an_image_that_is_not_the_gpus_is_refused_naming_the_call(void) {
  GPU_OR_SKIP(d);
  static const char junk[] = "not a cubin";
  rig_image *img;
  rig_error err;
  RIG_ASSERT_ERROR(rig_image_load(d, junk, sizeof junk - 1, &img, &err), err, RIG_EREFUSED,
                   "cuda:0: cuModuleLoadData: CUDA_ERROR_INVALID_IMAGE");
}

static void test_a_missing_function_is_refused_by_name(void) {
  GPU_OR_SKIP(d);
  rig_image *img = image(d);
  rig_entry e;
  rig_error err;
  RIG_ASSERT_ERROR(rig_image_entry(img, "nope", 4, &e, &err), err, RIG_EREFUSED,
                   "cuda:0: no function \"nope\"");
  rig_image_release(img);
}

/* ---- memory ------------------------------------------------------------------------ */

/* Host bytes into each kind of GPU memory and back; and a copy from host
 * memory to it and from it to other host memory, by the GPU. */
static void test_copies_between_every_memory_kind_and_the_host_both_ways(void) {
  GPU_OR_SKIP(d);
  enum { N = 4096 };
  static uint32_t src[N], got[N];
  rig_buffer_kind kinds[3] = {RIG_KIND_DEVICE, RIG_KIND_PINNED, RIG_KIND_MAPPED};
  for (int k = 0; k < 3; k++) {
    for (int i = 0; i < N; i++) src[i] = (uint32_t)(i * 2654435761u + (unsigned)k);
    rig_buffer *g = buffer(d, kinds[k], N * 4);
    CU_ASSERT_EQUAL(rig_buffer_host(g) != NULL, kinds[k] != RIG_KIND_DEVICE);
    write_words(g, src, N);
    memset(got, 0, sizeof got);
    read_words(g, got, N);
    CU_ASSERT_EQUAL(memcmp(got, src, sizeof src), 0);

    rig_buffer *h = buffer(rig_host(), RIG_KIND_DEVICE, N * 4);
    rig_buffer *back = buffer(rig_host(), RIG_KIND_DEVICE, N * 4);
    for (int i = 0; i < N; i++) ((uint32_t *)rig_buffer_host(h))[i] = ~src[i];
    rig_point pt;
    rig_error err;
    CU_ASSERT_EQUAL_FATAL(rig_buffer_copy_submit(h, 0, g, 0, N * 4, NULL, 0, &pt, &err), RIG_OK);
    CU_ASSERT_EQUAL_FATAL(rig_buffer_copy_submit(g, 0, back, 0, N * 4, NULL, 0, &pt, &err), RIG_OK);
    CU_ASSERT_EQUAL(rig_point_wait(pt, &err), RIG_OK);
    CU_ASSERT_EQUAL(rig_buffer_wait(back, RIG_ACCESS_READ, &err), RIG_OK);
    CU_ASSERT_EQUAL(memcmp(rig_buffer_host(back), rig_buffer_host(h), N * 4), 0);
    rig_buffer_release(g);
    rig_buffer_release(h);
    rig_buffer_release(back);
  }
}

static void test_an_allocation_past_the_budget_is_out_of_memory_and_loses_nothing(void) {
  GPU_OR_SKIP(d);
  rig_buffer *b;
  rig_error err;
  uint64_t too_much = rig_device_facts_of(d)->budget * 2;
  CU_ASSERT_EQUAL(rig_buffer_create(d, RIG_KIND_DEVICE, too_much, &b, &err), RIG_ENOMEM);
  CU_ASSERT(strstr(err.message, "CUDA_ERROR_OUT_OF_MEMORY") != NULL);
  CU_ASSERT_FALSE(rig_device_is_lost(d, NULL));
  rig_buffer *ok = buffer(d, RIG_KIND_DEVICE, 64);
  rig_buffer_release(ok);
}

/* ---- launches ------------------------------------------------------------------------ */

/* ids over 4x64 threads then twice over 256x1, one submission: 7+3k and
 * 15+6k (the upstream GPU test, on the core). */
static void test_two_kernels_in_one_submission_run_in_order(void) {
  GPU_OR_SKIP(d);
  rig_image *img = image(d);
  rig_buffer *a = buffer(d, RIG_KIND_DEVICE, 1024), *b = buffer(d, RIG_KIND_DEVICE, 1024);
  rig_ref r_ids[1] = {{0, 0, RIG_USE_WRITE}};
  rig_ref r_tw[2] = {{0, 0, RIG_USE_READ}, {1, 8, RIG_USE_WRITE}};
  uint64_t p1[1] = {0}, p2[2] = {0, 0};
  rig_part parts[2] = {launch_part(img, entry(img, "ids"), r_ids, 1, p1, 8, 4, 64),
                       launch_part(img, entry(img, "twice"), r_tw, 2, p2, 16, 256, 1)};
  rig_submission *s = make(d, parts, 2, 2);
  rig_buffer *slots[2] = {a, b};
  submit_wait(s, NULL, slots);
  uint32_t got[256];
  read_words(a, got, 256);
  for (int k = 0; k < 256; k++) CU_ASSERT_EQUAL(got[k], 7u + 3u * (unsigned)k);
  read_words(b, got, 256);
  for (int k = 0; k < 256; k++) CU_ASSERT_EQUAL(got[k], 15u + 6u * (unsigned)k);
  rig_submission_release(s);
  rig_buffer_release(a);
  rig_buffer_release(b);
  rig_image_release(img);
}

/* Geometry at the limits: 1024 threads runs; 1025, a zero dimension, more
 * threads than a bounded function allows and more shared memory than the
 * GPU has are refused before anything runs. */
static void test_launches_at_every_geometry_limit(void) {
  GPU_OR_SKIP(d);
  rig_image *img = image(d);
  rig_buffer *a = buffer(d, RIG_KIND_DEVICE, 4 * 2048);
  rig_ref r[1] = {{0, 0, RIG_USE_WRITE}};
  uint64_t p[1] = {0};
  rig_part part = launch_part(img, entry(img, "ids"), r, 1, p, 8, 2, 1024);
  rig_submission *s = make(d, &part, 1, 1);
  rig_buffer *slots[1] = {a};
  submit_wait(s, NULL, slots);
  uint32_t got[2048];
  read_words(a, got, 2048);
  CU_ASSERT_EQUAL(got[2047], 7u + 3u * 2047u);

  size_t bytes = rig_submission_block_bytes(s);
  unsigned char *block = malloc(bytes);
  rig_error err;
  rig_point pt;
  struct {
    uint32_t g[7];
    const char *why;
  } bad[] = {
      {{1, 1, 1, 1025, 1, 1, 0}, "part 0: threads (1025, 1, 1), more than its function's 1024"},
      {{1, 0, 1, 1, 1, 1, 0}, "part 0: groups (1, 0, 1) with a zero dimension"},
      {{1, 65536, 1, 1, 1, 1, 0},
       "part 0: groups (1, 65536, 1) beyond cuda:0's (2147483647, 65535, 65535)"},
      {{1, 1, 1, 1, 1, 65, 0}, "part 0: threads (1, 1, 65) beyond cuda:0's (1024, 1024, 64)"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    rig_submission_block_init(s, block);
    memcpy(rig_block_geometry(s, block, 0), bad[i].g, sizeof bad[i].g);
    RIG_ASSERT_ERROR(rig_submit(s, block, slots, NULL, 0, &pt, &err), err, RIG_EINVAL, bad[i].why);
  }
  rig_submission_block_init(s, block);
  uint32_t *g = rig_block_geometry(s, block, 0);
  g[6] = rig_device_facts_of(d)->max_shared + 1;
  CU_ASSERT_EQUAL(rig_submit(s, block, slots, NULL, 0, &pt, &err), RIG_EINVAL);
  CU_ASSERT(strstr(err.message, "bytes of shared memory, more than") != NULL);
  free(block);
  rig_submission_release(s);

  rig_entry be = entry(img, "bounded");
  CU_ASSERT_EQUAL(be.max_threads, 128);
  rig_part bp = launch_part(img, be, r, 1, p, 8, 1, 129);
  s = make(d, &bp, 1, 1);
  RIG_ASSERT_ERROR(rig_submit(s, NULL, slots, NULL, 0, &pt, &err), err, RIG_EINVAL,
                   "part 0: threads (129, 1, 1), more than its function's 128");
  CU_ASSERT_FALSE(rig_device_is_lost(d, NULL));
  rig_submission_release(s);
  rig_buffer_release(a);
  rig_image_release(img);
}

/* ---- graphs ------------------------------------------------------------------------------ */

/* ids then add(x, 256, v) with v the run's index: one graph, instantiated
 * at make and never again; each run updates only the add node. */
static void test_a_graph_replays_1000_times_updating_only_the_node_that_changes(void) {
  GPU_OR_SKIP(d);
  rig_image *img = image(d);
  rig_buffer *a = buffer(d, RIG_KIND_DEVICE, 1024);
  rig_ref r[1] = {{0, 0, RIG_USE_WRITE}};
  uint64_t p1[1] = {0};
  uint32_t p2[4] = {0, 0, 256, 0};
  rig_part parts[2] = {launch_part(img, entry(img, "ids"), r, 1, p1, 8, 4, 64),
                       launch_part(img, entry(img, "add"), r, 1, p2, 16, 4, 64)};
  uint64_t inst0 = count("cuGraphInstantiateWithFlags");
  rig_submission *s = make(d, parts, 2, 1);
  uint64_t inst = count("cuGraphInstantiateWithFlags"),
           set0 = count("cuGraphExecKernelNodeSetParams");
  uint64_t launches0 = count("cuGraphLaunch"), kernels0 = count("cuLaunchKernel");
  if (fake()) CU_ASSERT_EQUAL(inst - inst0, 2); /* one exec per block it alternates */
  unsigned char *block = malloc(rig_submission_block_bytes(s));
  rig_buffer *slots[1] = {a};
  uint32_t got[256];
  for (uint32_t run = 0; run < 1000; run++) {
    rig_submission_block_init(s, block);
    ((uint32_t *)rig_block_params(s, block, 1))[3] = run;
    submit_wait(s, block, slots);
    read_words(a, got, 256);
    CU_ASSERT_EQUAL(got[0], 7u + run);
    CU_ASSERT_EQUAL(got[255], 7u + 3u * 255u + run);
  }
  if (fake()) {
    CU_ASSERT_EQUAL(count("cuGraphInstantiateWithFlags"), inst);
    CU_ASSERT_EQUAL(count("cuGraphLaunch") - launches0, 1000);
    CU_ASSERT_EQUAL(count("cuLaunchKernel"), kernels0);
    /* The first run sets both nodes; each later run the add node only. */
    CU_ASSERT_EQUAL(count("cuGraphExecKernelNodeSetParams") - set0, 2 + 999);
  }
  free(block);
  rig_submission_release(s);
  rig_buffer_release(a);
  rig_image_release(img);
}

/* ---- following other devices ---------------------------------------------------------- */

/* A cpu device's step that holds until its gate opens, then counts in
 * GPU pinned memory, and a GPU step after it adding 1 to that count: both
 * made, not yet handed over. */
typedef struct held {
  _Atomic uint64_t gate;
  rig_image *cimg, *img;
  rig_buffer *m, *mc;
  rig_submission *cs, *gs;
} held;

static void held_make(held *h, rig_device *cpu, rig_device *d) {
  rig_error err;
  const char *path = getenv("RIG_TEST_KERNELS");
  CU_ASSERT_PTR_NOT_NULL_FATAL(path);
  size_t n;
  void *bytes = rig_test_read_file(path, &n);
  CU_ASSERT_PTR_NOT_NULL_FATAL(bytes);
  CU_ASSERT_EQUAL_FATAL(rig_image_load(cpu, bytes, n, &h->cimg, &err), RIG_OK);
  free(bytes);
  h->m = buffer(d, RIG_KIND_PINNED, 1024);
  CU_ASSERT_EQUAL_FATAL(rig_buffer_borrow(cpu, h->m, &h->mc, &err), RIG_OK);
  memset(rig_buffer_host(h->m), 0, 1024);
  atomic_store(&h->gate, 0);
  rig_ref cr[1] = {{0, 8, RIG_USE_WRITE}};
  uint64_t cp[2] = {(uint64_t)(uintptr_t)&h->gate, 0}; /* kernels.c's hold */
  rig_part cpart = launch_part(h->cimg, entry(h->cimg, "hold"), cr, 1, cp, 16, 1, 1);
  h->cs = make(cpu, &cpart, 1, 1);
  h->img = image(d);
  rig_ref r[1] = {{0, 0, RIG_USE_WRITE}};
  uint32_t ap[4] = {0, 0, 1, 1}; /* add(x, 1, 1) */
  rig_part gpart = launch_part(h->img, entry(h->img, "add"), r, 1, ap, 16, 1, 1);
  h->gs = make(d, &gpart, 1, 1);
}

/* Hands both over, the cpu step first: *pc and *pg their points. */
static void held_submit(held *h, rig_point *pc, rig_point *pg) {
  rig_error err;
  CU_ASSERT_EQUAL_FATAL(rig_submit(h->cs, NULL, &h->mc, NULL, 0, pc, &err), RIG_OK);
  CU_ASSERT_EQUAL_FATAL(rig_submit(h->gs, NULL, &h->m, NULL, 0, pg, &err), RIG_OK);
}

static void held_free(held *h) {
  rig_submission_release(h->cs);
  rig_submission_release(h->gs);
  rig_buffer_release(h->mc);
  rig_buffer_release(h->m);
  rig_image_release(h->img);
  rig_image_release(h->cimg);
}

/* The GPU step is handed over while the cpu:0 step holds (its wait is in
 * the stream: the host never waits), cannot be reached before the gate
 * opens, and sees the count. */
static void test_a_gpu_step_follows_a_cpu_step_in_its_stream(void) {
  GPU_OR_SKIP(d);
  rig_device *cpu;
  rig_error err;
  CU_ASSERT_EQUAL_FATAL(rig_device_open("cpu:0", &cpu, &err), RIG_OK);
  static held h;
  held_make(&h, cpu, d);
  uint64_t waits0 = count("cuStreamWaitValue64");
  rig_point pc, pg;
  held_submit(&h, &pc, &pg);
  CU_ASSERT_FALSE(rig_point_reached(pc));
  CU_ASSERT_FALSE(rig_point_reached(pg));
  if (fake()) CU_ASSERT_EQUAL(count("cuStreamWaitValue64") - waits0, 1);
  atomic_store(&h.gate, 1);
  CU_ASSERT_EQUAL(rig_point_wait(pg, &err), RIG_OK);
  CU_ASSERT(rig_point_reached(pc));
  CU_ASSERT_EQUAL(((uint32_t *)rig_buffer_host(h.m))[0], 2u);
  held_free(&h);
}

/* A GPU step that follows a rail's arrived count and signals ready in
 * stream order (docs/cuda.md): rail_cuda.so's fill enqueues the wait on
 * the counts, a launch writes, and a ready fill runs after it. The test is
 * the rail's peer: it bumps arrived itself. */
static _Atomic uint64_t ready_count, ready_saw;
static uint64_t *ready_x;
static void record_ready(void *counts, uint64_t c) {
  (void)counts;
  atomic_store(&ready_saw, *(volatile uint64_t *)ready_x);
  atomic_store(&ready_count, c);
}

static void test_a_gpu_step_follows_a_rails_arrived_and_signals_ready_in_stream_order(void) {
  GPU_OR_SKIP(d);
  const char *path = getenv("RIG_TEST_RAIL_CUDA");
  CU_ASSERT_PTR_NOT_NULL_FATAL(path);
  size_t n;
  void *bytes = rig_test_read_file(path, &n);
  CU_ASSERT_PTR_NOT_NULL_FATAL(bytes);
  rig_image *himg;
  rig_error err;
  CU_ASSERT_EQUAL_FATAL(rig_image_load(rig_host(), bytes, n, &himg, &err), RIG_OK);
  free(bytes);
  rig_image *img = image(d);
  rig_buffer *x = buffer(d, RIG_KIND_PINNED, 64);
  rig_buffer *counts = buffer(rig_host(), RIG_KIND_DEVICE, 4096), *cb;
  memset(rig_buffer_host(counts), 0, 4096);
  memset(rig_buffer_host(x), 0, 64);
  CU_ASSERT_EQUAL_FATAL(rig_buffer_borrow(d, counts, &cb, &err), RIG_OK);
  ready_x = rig_buffer_host(x);
  atomic_store(&ready_count, 0);
  rig_ref wr[1] = {{1, 0, RIG_USE_READ}};
  uint64_t wp[2] = {0, 1};
  rig_part parts[3];
  parts[0] = (rig_part){.kind = RIG_WORK_FILL};
  parts[0].u.fill.fn = entry(himg, "rail_cuda_wait_arrived").value;
  parts[0].u.fill.image = himg;
  parts[0].u.fill.params = wp;
  parts[0].u.fill.params_bytes = 16;
  parts[0].u.fill.refs = wr;
  parts[0].u.fill.nrefs = 1;
  rig_ref sr[1] = {{0, 0, RIG_USE_WRITE}};
  uint64_t sp[2] = {0, 42};
  parts[1] = launch_part(img, entry(img, "set"), sr, 1, sp, 16, 1, 1);
  uint64_t rp[2] = {(uint64_t)(uintptr_t)rig_buffer_host(counts), 5};
  parts[2] = (rig_part){.kind = RIG_WORK_FILL};
  parts[2].u.fill.fn = (uint64_t)(uintptr_t)record_ready;
  parts[2].u.fill.ready = true;
  parts[2].u.fill.params = rp;
  parts[2].u.fill.params_bytes = 16;
  rig_submission *s = make(d, parts, 3, 2);
  rig_buffer *slots[2] = {x, cb};
  rig_point pt;
  CU_ASSERT_EQUAL_FATAL(rig_submit(s, NULL, slots, NULL, 0, &pt, &err), RIG_OK);
  CU_ASSERT_FALSE(rig_point_reached(pt)); /* nothing arrived yet */
  CU_ASSERT_EQUAL(atomic_load(&ready_count), 0);
  atomic_store((_Atomic uint64_t *)((unsigned char *)rig_buffer_host(counts) + 256), 1);
  CU_ASSERT_EQUAL(rig_point_wait(pt, &err), RIG_OK);
  CU_ASSERT_EQUAL(*(uint64_t *)rig_buffer_host(x), 42);
  CU_ASSERT_EQUAL(atomic_load(&ready_count), 5);
  CU_ASSERT_EQUAL(atomic_load(&ready_saw), 42); /* ready ran after the launch */
  rig_submission_release(s);
  rig_buffer_release(cb);
  rig_buffer_release(counts);
  rig_buffer_release(x);
  rig_image_release(img);
  rig_image_release(himg);
}

/* ---- programs ------------------------------------------------------------------------------ */

static rig_program *load(const rig_desc *desc, rig_device *const *devs, size_t n) {
  rig_program *p = NULL;
  rig_error err;
  rig_status st = rig_program_load(desc, devs, n, NULL, &p, &err);
  if (st != RIG_OK) fprintf(stderr, "load: %s\n", err.message);
  CU_ASSERT_EQUAL_FATAL(st, RIG_OK);
  return p;
}

static void run(rig_program *p, rig_buffer *const *inputs, size_t ninputs) {
  size_t np;
  rig_point *points = rig_program_step_points(p, &np);
  CU_ASSERT_PTR_NOT_NULL_FATAL(points);
  rig_frame f = {inputs, ninputs, NULL, 0, points, np};
  rig_point ends[8];
  size_t nends = 0;
  rig_error err;
  rig_status st = rig_program_run(p, &f, NULL, 0, ends, &nends, &err);
  if (st != RIG_OK) fprintf(stderr, "run: %s\n", err.message);
  CU_ASSERT_EQUAL_FATAL(st, RIG_OK);
  for (size_t i = 0; i < nends; i++) CU_ASSERT_EQUAL(rig_point_wait(ends[i], &err), RIG_OK);
  free(points);
}

static rig_desc_part *desc_launch(rig_desc *d, rig_desc_submit *s, int64_t img, const char *fn,
                                  const void *params, size_t len, int64_t groups, int64_t threads) {
  rig_desc_part *part = rig_desc_submit_add_launch(d, s, img, fn, params, len,
                                                   rig_desc_fixed(groups), rig_desc_fixed(threads));
  CU_ASSERT_PTR_NOT_NULL_FATAL(part);
  return part;
}

/* The upstream GPU test through a description: two 256-word inputs of the
 * GPU, ids over 4x64 threads, twice over 256x1. */
static void test_the_upstream_gpu_test_runs_through_a_description(void) {
  GPU_OR_SKIP(g);
  const void *kb;
  size_t kl;
  kernels(&kb, &kl);
  rig_desc *d = rig_desc_create();
  rig_desc_add_device(d, rig_device_arch(g));
  int64_t img = rig_desc_add_image(d, 0, kb, kl);
  rig_desc_add_input(d, 0, 1024);
  rig_desc_add_input(d, 0, 1024);
  rig_desc_submit *s = rig_desc_add_submit(d, NULL, 0);
  int64_t a = rig_desc_submit_add_slot(d, s, rig_desc_slot_input(0));
  int64_t b = rig_desc_submit_add_slot(d, s, rig_desc_slot_input(1));
  uint64_t z[2] = {0, 0};
  rig_desc_part *p1 = desc_launch(d, s, img, "ids", z, 8, 4, 64);
  rig_desc_part_add_ref(d, p1, a, 0, RIG_USE_WRITE);
  rig_desc_part *p2 = desc_launch(d, s, img, "twice", z, 16, 256, 1);
  rig_desc_part_add_ref(d, p2, a, 0, RIG_USE_READ);
  rig_desc_part_add_ref(d, p2, b, 8, RIG_USE_WRITE);
  rig_program *p = load(d, &g, 1);
  rig_buffer *in[2] = {buffer(g, RIG_KIND_DEVICE, 1024), buffer(g, RIG_KIND_DEVICE, 1024)};
  run(p, in, 2);
  uint32_t got[256];
  read_words(in[0], got, 256);
  for (int k = 0; k < 256; k++) CU_ASSERT_EQUAL(got[k], 7u + 3u * (unsigned)k);
  read_words(in[1], got, 256);
  for (int k = 0; k < 256; k++) CU_ASSERT_EQUAL(got[k], 15u + 6u * (unsigned)k);
  rig_program_release(p);
  rig_buffer_release(in[0]);
  rig_buffer_release(in[1]);
  rig_desc_free(d);
}

/* host, cpu:0 and the GPU in one program: GPU memory of two copies that
 * ids fills and a loop of three trips adds 1 to, moved to a host input;
 * and a cpu step counting its runs in a cpu input. Four runs. */
static void test_a_program_mixes_host_cpu_and_cuda_with_two_copies_and_a_loop(void) {
  GPU_OR_SKIP(g);
  rig_device *cpu;
  rig_error err;
  CU_ASSERT_EQUAL_FATAL(rig_device_open("cpu:0", &cpu, &err), RIG_OK);
  const void *kb;
  size_t kl;
  kernels(&kb, &kl);
  size_t pl;
  const char *pkp = getenv("RIG_TEST_KERNELS");
  CU_ASSERT_PTR_NOT_NULL_FATAL(pkp);
  void *pk = rig_test_read_file(pkp, &pl);
  CU_ASSERT_PTR_NOT_NULL_FATAL(pk);
  rig_desc *d = rig_desc_create();
  rig_desc_add_device(d, rig_host_isa());
  char carch[48];
  snprintf(carch, sizeof carch, "cpu-%s", rig_host_isa());
  rig_desc_add_device(d, carch);
  rig_desc_add_device(d, rig_device_arch(g));
  int64_t gimg = rig_desc_add_image(d, 2, kb, kl);
  int64_t cimg = rig_desc_add_image(d, 1, pk, pl);
  rig_desc_add_input(d, 0, 1024);
  rig_desc_add_input(d, 1, 64);
  int64_t mem = rig_desc_add_alloc(d, 2, RIG_KIND_DEVICE, 1024, RIG_COPIES_TWO);
  uint64_t z[2] = {0, 0};
  rig_desc_submit *s = rig_desc_add_submit(d, NULL, 2);
  int64_t k = rig_desc_submit_add_slot(d, s, rig_desc_slot_memory(mem, 0, 1024));
  rig_desc_part_add_ref(d, desc_launch(d, s, gimg, "ids", z, 8, 4, 64), k, 0, RIG_USE_WRITE);
  rig_desc_step *loop = rig_desc_add_loop(d, NULL, rig_desc_fixed(3));
  s = rig_desc_add_submit(d, loop, 2);
  k = rig_desc_submit_add_slot(d, s, rig_desc_slot_memory(mem, 0, 1024));
  uint32_t ap[4] = {0, 0, 256, 1};
  rig_desc_part_add_ref(d, desc_launch(d, s, gimg, "add", ap, 16, 4, 64), k, 0, RIG_USE_WRITE);
  CU_ASSERT_PTR_NOT_NULL_FATAL(
      rig_desc_add_move(d, NULL, rig_desc_slot_memory(mem, 0, 1024), rig_desc_slot_input(0), 1024));
  s = rig_desc_add_submit(d, NULL, 1);
  k = rig_desc_submit_add_slot(d, s, rig_desc_slot_input(1));
  uint64_t one[2] = {0, 1}; /* kernels.c's add_u64: *p += v */
  rig_desc_part_add_ref(d, desc_launch(d, s, cimg, "add_u64", one, 16, 1, 1), k, 0, RIG_USE_WRITE);
  rig_device *devs[3] = {rig_host(), cpu, g};
  rig_program *p = load(d, devs, 3);
  rig_buffer *in[2] = {buffer(rig_host(), RIG_KIND_DEVICE, 1024), buffer(cpu, RIG_KIND_DEVICE, 64)};
  memset(rig_buffer_host(in[1]), 0, 64);
  for (int r = 0; r < 4; r++) {
    run(p, in, 2);
    const uint32_t *h = rig_buffer_host(in[0]);
    CU_ASSERT_EQUAL(rig_buffer_wait(in[0], RIG_ACCESS_READ, &err), RIG_OK);
    for (int i = 0; i < 256; i++) CU_ASSERT_EQUAL(h[i], 7u + 3u * (unsigned)i + 3u);
    CU_ASSERT_EQUAL(rig_buffer_wait(in[1], RIG_ACCESS_READ, &err), RIG_OK);
    CU_ASSERT_EQUAL(*(const uint64_t *)rig_buffer_host(in[1]), (uint64_t)r + 1);
  }
  rig_program_release(p);
  rig_buffer_release(in[0]);
  rig_buffer_release(in[1]);
  rig_desc_free(d);
  free(pk);
}

/* ---- another machine's GPU ------------------------------------------------------------ */

static void write_text(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  fputs(text, f);
  CU_ASSERT_EQUAL(fclose(f), 0);
}

/* mpirun -n 2 progrun JOB --quiet, which must succeed. */
static void run_job(const char *job) {
  const char *progrun = getenv("RIG_PROGRUN");
  CU_ASSERT_PTR_NOT_NULL_FATAL(progrun);
  char *argv[32];
  size_t k = rig_proc_mpiexec(argv, 2, false);
  argv[k++] = (char *)progrun;
  argv[k++] = (char *)job;
  argv[k++] = "--quiet";
  argv[k] = NULL;
  rig_proc p = rig_proc_run(argv, NULL, 120);
  if (p.code != 0) fprintf(stderr, "exit %d\n%s\n%s\n", p.code, p.out, p.err);
  CU_ASSERT_EQUAL(p.code, 0);
  rig_proc_free(&p);
}

/* Removes the files `names` (NULL-terminated) of dir, then dir. */
static void remove_dir(const char *dir, const char *const *names) {
  char path[512];
  for (size_t i = 0; names[i]; i++) {
    snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    unlink(path);
  }
  rmdir(dir);
}

/* mpirun -n 2 progrun job.json: machine 1's program runs ids then add of
 * the run's index on its GPU, three runs; its input, written back, holds
 * 7+3k+2. (Through the double in CI: each rank loads it.) */
static void test_a_program_on_a_gpu_of_another_machine_runs_under_mpirun(void) {
  GPU_OR_SKIP(g);
  const char *kpath = getenv(fake() ? "RIG_TEST_CUDA_KERNELS" : "RIG_TEST_CUDA_CUBIN");
  char dir[] = "/tmp/rig-cuda-XXXXXX";
  CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
  char path[512], text[4096];
  snprintf(path, sizeof path, "%s/host.json", dir);
  write_text(path, "{\"format\": 4, \"devices\": [\"x86_64\"], \"steps\": []}\n");
  snprintf(
      text, sizeof text,
      "{\"format\": 4, \"devices\": [\"%s\"],\n"
      " \"images\": [{\"device\": 0, \"binary\": {\"bytes\": {\"file\": \"%s\"}}}],\n"
      " \"inputs\": [{\"device\": 0, \"bytes\": 1024}], \"ints\": 1,\n"
      " \"steps\": [{\"Submit\": {\"device\": 0, \"parts\": [\n"
      "   {\"Launch\": {\"image\": 0, \"name\": \"ids\", \"params\": {\"bytes\": [{\"u64\": 0}]},\n"
      "     \"refs\": [{\"slot\": 0, \"at\": 0, \"use\": \"Write\"}],\n"
      "     \"groups\": [{\"Fixed\": 4}, {\"Fixed\": 1}, {\"Fixed\": 1}],\n"
      "     \"threads\": [{\"Fixed\": 64}, {\"Fixed\": 1}, {\"Fixed\": 1}]}},\n"
      "   {\"Launch\": {\"image\": 0, \"name\": \"add\",\n"
      "     \"params\": {\"bytes\": [{\"u64\": 0}, {\"u32\": 256}, {\"u32\": 0}],\n"
      "                \"holes\": [{\"at\": 12, \"width\": \"W32\", \"terms\": [[{\"Int\": 0}, "
      "1]]}]},\n"
      "     \"refs\": [{\"slot\": 0, \"at\": 0, \"use\": \"Write\"}],\n"
      "     \"groups\": [{\"Fixed\": 4}, {\"Fixed\": 1}, {\"Fixed\": 1}],\n"
      "     \"threads\": [{\"Fixed\": 64}, {\"Fixed\": 1}, {\"Fixed\": 1}]}}],\n"
      "   \"slots\": [{\"Input\": 0}]}}]}\n",
      rig_device_arch(g), kpath);
  snprintf(path, sizeof path, "%s/gpu.json", dir);
  write_text(path, text);
  snprintf(path, sizeof path, "%s/job.json", dir);
  write_text(
      path,
      "{\"runs\": 3, \"machines\": [{\"program\": \"host.json\"},\n"
      " {\"program\": \"gpu.json\", \"ints\": [\"run\"], \"outputs\": {\"0\": \"out.bin\"}}]}\n");
  run_job(path);
  snprintf(path, sizeof path, "%s/out.bin", dir);
  size_t n = 0;
  uint32_t *out = rig_test_read_file(path, &n);
  CU_ASSERT_PTR_NOT_NULL_FATAL(out);
  CU_ASSERT_EQUAL_FATAL(n, 1024);
  for (int k = 0; k < 256; k++) CU_ASSERT_EQUAL(out[k], 7u + 3u * (unsigned)k + 2u);
  free(out);
  const char *names[] = {"host.json", "gpu.json", "job.json", "out.bin", NULL};
  remove_dir(dir, names);
}

/* The pipeline of examples/ with its consumer on machine 1's GPU, over a
 * real rail: a CUDA Submit whose fill makes the stream wait for arrived
 * (rail_cuda.so), whose launches add the block into the sum and write the
 * acknowledgement, and whose Ready fill sends it in stream order. Two runs:
 * sum[i] = (0 + i) + (1 + i). */
static void test_a_gpu_program_follows_a_rail_from_another_machine(void) {
  GPU_OR_SKIP(g);
  const char *kpath = getenv(fake() ? "RIG_TEST_CUDA_KERNELS" : "RIG_TEST_CUDA_CUBIN");
  const char *bin = getenv("RIG_TEST_BINARY_DIR"), *rail = getenv("RIG_TEST_RAIL_CUDA");
  CU_ASSERT_PTR_NOT_NULL_FATAL(bin);
  CU_ASSERT_PTR_NOT_NULL_FATAL(rail);
  char dir[] = "/tmp/rig-cuda-XXXXXX";
  CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
  static char text[8192];
  char path[512];
  const char *wait_fill =
      "{\"Fill\": {\"fill\": %s,\n"
      "  \"params\": {\"bytes\": [{\"u64\": 0}, {\"u64\": 0}],\n"
      "   \"holes\": [{\"at\": 8, \"width\": \"W64\", \"terms\": [[{\"Int\": 0}, "
      "1]], \"add\": 1}]},\n"
      "  \"refs\": [{\"slot\": 2, \"at\": 0, \"use\": \"Unordered\"}]}}";
  char fill1[1024], fill2[1024];
  snprintf(fill1, sizeof fill1, wait_fill,
           "{\"Entry\": {\"image\": 0, \"name\": \"rail_cuda_wait_arrived\"}}");
  snprintf(fill2, sizeof fill2, wait_fill, "{\"Ready\": 1}");
  snprintf(
      text, sizeof text,
      "{\"format\": 4, \"devices\": [\"%s\", \"%s\"],\n"
      " \"memory\": [{\"Rail\": {\"rail\": 1, \"area\": \"Inbound\"}},\n"
      "  {\"Rail\": {\"rail\": 1, \"area\": \"Outbound\"}}, {\"Rail\": {\"rail\": 1, \"area\": "
      "\"Counts\"}}],\n"
      " \"images\": [{\"device\": 0, \"binary\": {\"bytes\": {\"file\": \"%s\"}}},\n"
      "  {\"device\": 1, \"binary\": {\"bytes\": {\"file\": \"%s\"}}}],\n"
      " \"inputs\": [{\"device\": 1, \"bytes\": 4096}], \"ints\": 1,\n"
      " \"steps\": [{\"Submit\": {\"device\": 1, \"parts\": [%s,\n"
      "  {\"Launch\": {\"image\": 1, \"name\": \"accumulate\",\n"
      "   \"params\": {\"bytes\": [{\"u64\": 0}, {\"u64\": 0}, {\"u32\": 512}, {\"u32\": 0}],\n"
      "    \"holes\": [{\"at\": 0, \"width\": \"W64\", \"terms\": [[{\"Int\": 0}, 4096]]}]},\n"
      "   \"refs\": [{\"slot\": 0, \"at\": 0, \"use\": \"Read\"}, {\"slot\": 3, \"at\": 8, "
      "\"use\": \"Write\"}],\n"
      "   \"groups\": [{\"Fixed\": 2}, {\"Fixed\": 1}, {\"Fixed\": 1}],\n"
      "   \"threads\": [{\"Fixed\": 256}, {\"Fixed\": 1}, {\"Fixed\": 1}]}},\n"
      "  {\"Launch\": {\"image\": 1, \"name\": \"set\",\n"
      "   \"params\": {\"bytes\": [{\"u64\": 0}, {\"u64\": 0}],\n"
      "    \"holes\": [{\"at\": 0, \"width\": \"W64\", \"terms\": [[{\"Int\": 0}, 256]]},\n"
      "     {\"at\": 8, \"width\": \"W64\", \"terms\": [[{\"Int\": 0}, 1]]}]},\n"
      "   \"refs\": [{\"slot\": 1, \"at\": 0, \"use\": \"Write\"}],\n"
      "   \"groups\": [{\"Fixed\": 1}, {\"Fixed\": 1}, {\"Fixed\": 1}],\n"
      "   \"threads\": [{\"Fixed\": 1}, {\"Fixed\": 1}, {\"Fixed\": 1}]}},\n"
      "  %s],\n"
      "  \"slots\": [{\"Memory\": {\"memory\": 0, \"offset\": 0, \"length\": 8192}},\n"
      "   {\"Memory\": {\"memory\": 1, \"offset\": 0, \"length\": 512}},\n"
      "   {\"Memory\": {\"memory\": 2, \"offset\": 0, \"length\": 384}}, {\"Input\": 0}]}}]}\n",
      rig_host_isa(), rig_device_arch(g), rail, kpath, fill1, fill2);
  snprintf(path, sizeof path, "%s/gpu.json", dir);
  write_text(path, text);
  snprintf(text, sizeof text,
           "{\"runs\": 2, \"machines\": [{\"program\": \"%s/examples/pipeline_produce.json\", "
           "\"ints\": [\"run\"]},\n"
           " {\"program\": \"gpu.json\", \"ints\": [\"run\"], \"outputs\": {\"0\": "
           "\"sum.bin\"}}],\n"
           " \"rails\": [{\"id\": 1, \"between\": [0, 1], \"send\": [{\"src\": 0, \"dst\": 0, "
           "\"length\": 4096}],\n"
           "  \"receive\": [{\"src\": 0, \"dst\": 0, \"length\": 8}]}]}\n",
           bin);
  snprintf(path, sizeof path, "%s/job.json", dir);
  write_text(path, text);
  run_job(path);
  snprintf(path, sizeof path, "%s/sum.bin", dir);
  size_t n = 0;
  uint64_t *sum = rig_test_read_file(path, &n);
  CU_ASSERT_PTR_NOT_NULL_FATAL(sum);
  CU_ASSERT_EQUAL_FATAL(n, 4096);
  for (uint64_t i = 0; i < 512; i++) CU_ASSERT_EQUAL(sum[i], 2 * i + 1);
  free(sum);
  const char *names[] = {"gpu.json", "job.json", "sum.bin", NULL};
  remove_dir(dir, names);
}

/* ---- two GPUs (the double's FAKECUDA_DEVICES=2; cuda-2gpu) ------------------------ */

static void test_two_gpus_without_peer_access_refuse_each_others_memory(void) {
  if (!gpu(__func__, 0)) return;
  rig_device *b = gpu(__func__, 1);
  if (!b) return;
  rig_device *a = gpu(__func__, 0);
  rig_buffer *m = buffer(a, RIG_KIND_DEVICE, 64), *v;
  rig_error err;
  int can = 0;
  if (fake() && getenv("FAKECUDA_PEER")) can = 1;
  rig_status st = rig_buffer_borrow(b, m, &v, &err);
  if (fake() && !can)
    RIG_ASSERT_ERROR(st, err, RIG_EREFUSED, "cuda:1 cannot reach memory of cuda:0: no peer access");
  if (st == RIG_OK) rig_buffer_release(v);
  /* Pinned memory of one is the other's to use. */
  rig_buffer *pm = buffer(a, RIG_KIND_PINNED, 64);
  CU_ASSERT_EQUAL(rig_buffer_borrow(b, pm, &v, &err), RIG_OK);
  rig_buffer_release(v);
  rig_buffer_release(pm);
  rig_buffer_release(m);
}

/* cuda:1 waits in its stream for a cpu:1 step that holds; cpu:1 is lost
 * before it lets go: the wait could never pass, so a waiter on cuda:1's
 * point learns that cuda:1 is lost with it instead of waiting for ever.
 * (On a second GPU and cpu:1: nothing else here uses them.) */
/* Reclaims until no more than `before` releases wait (30 s is a hang). */
static bool reclaimed_to(size_t before) {
  struct timespec t0, t;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (;;) {
    rig_reclaim();
    if (rig_reclaim_pending() <= before) return true;
    sched_yield();
    clock_gettime(CLOCK_MONOTONIC, &t);
    if (t.tv_sec - t0.tv_sec > 30) return false;
  }
}

static void test_a_gpu_waiting_on_a_lost_device_is_lost_with_it(void) {
  if (!gpu(__func__, 0)) return;
  rig_device *d = gpu(__func__, 1);
  if (!d) return;
  rig_device *cpu;
  rig_error err;
  CU_ASSERT_EQUAL_FATAL(rig_device_open("cpu:1", &cpu, &err), RIG_OK);
  static held h;
  held_make(&h, cpu, d);
  rig_point pc, pg;
  held_submit(&h, &pc, &pg);
  rig_device_lose(cpu, "a test lost it");
  atomic_store(&h.gate, 1);
  CU_ASSERT_EQUAL(rig_point_wait(pg, &err), RIG_ELOST);
  CU_ASSERT_STRING_EQUAL(err.message, "cuda:1 lost: it waits on cpu:1, which is lost");
  size_t before = rig_reclaim_pending();
  held_free(&h);
  /* cpu:1's kernel may still be running: what it uses waits for its thread
   * to leave. The GPU's wait never passes, so the GPU's work never runs:
   * its submission and memory go at once. */
  CU_ASSERT_TRUE(reclaimed_to(before));
}

/* A GPU lost while its stream still has work to run (here, behind a wait
 * on cpu:0's kernel): the work runs all the same, so its memory, its
 * module and its submission stay until the stream is past it. Loses a GPU
 * of its own: cuda-3gpu has one. */
static void test_a_lost_gpus_pending_work_keeps_its_memory_until_its_stream_is_past(void) {
  if (!gpu(__func__, 0)) return;
  rig_device *d = NULL;
  rig_error err;
  if (!fake() || rig_device_open("cuda:2", &d, &err) != RIG_OK) {
    rig_test_skip(__func__, "it loses a GPU of its own: cuda-3gpu, on the double, has one");
    return;
  }
  rig_device *cpu;
  CU_ASSERT_EQUAL_FATAL(rig_device_open("cpu:0", &cpu, &err), RIG_OK);
  uint64_t (*live)(const char *) = (uint64_t(*)(const char *))hook("fakecuda_live");
  CU_ASSERT_PTR_NOT_NULL_FATAL(live);
  uint64_t host0 = live("host_allocations"), modules0 = live("modules");
  static held h;
  held_make(&h, cpu, d);
  rig_point pc, pg;
  held_submit(&h, &pc, &pg);
  rig_device_lose(d, "a test lost it");
  size_t before = rig_reclaim_pending();
  held_free(&h);
  rig_reclaim();
  CU_ASSERT_EQUAL(live("host_allocations") - host0, 1);
  CU_ASSERT_EQUAL(live("modules") - modules0, 1);
  atomic_store(&h.gate, 1);
  CU_ASSERT_TRUE(reclaimed_to(before));
  CU_ASSERT_EQUAL(live("host_allocations"), host0);
  CU_ASSERT_EQUAL(live("modules"), modules0);
}

/* ---- devices that come and go -------------------------------------------------- */

/* A device of the test: its copies are handed over and wait until the test
 * moves its word (or a waiter sleeps on it); its word lives in a page of
 * its own, as a job's proxies' words live in the job's shared memory. */
typedef struct passing {
  _Atomic uint64_t *word;
  rig_device *dev;
  uint64_t last;
} passing;

static rig_status passing_alloc(void *st, rig_buffer_kind kind, uint64_t bytes, rig_mem_info *out,
                                rig_error *err) {
  (void)st, (void)kind, (void)bytes, (void)err;
  *out = (rig_mem_info){.address = 4096, .handle = 4096};
  return RIG_OK;
}

static void passing_free(void *st, const rig_mem_info *mem) {
  (void)st, (void)mem;
}

static rig_status passing_submit(void *st, const rig_work *w, rig_error *err) {
  (void)err;
  ((passing *)st)->last = w->value;
  return RIG_OK;
}

static void passing_sleep(void *st, uint64_t value, int64_t timeout_ns) {
  (void)timeout_ns;
  passing *p = st;
  if (atomic_load(p->word) < value) atomic_store(p->word, value);
}

static const rig_driver passing_driver = {
    .name = "passing",
    .alloc = passing_alloc,
    .free = passing_free,
    .submit = passing_submit,
    .sleep = passing_sleep,
};

/* A GPU's stream waits on devices that come and go (a job's proxies): each
 * one's word is registered for the GPU and given back once the device is
 * gone, however many there are; past 256 the waits were no longer made in
 * the stream, and the registrations of freed words were kept for ever. */
static void test_a_gpu_waits_in_its_stream_on_devices_that_come_and_go_past_256(void) {
  GPU_OR_SKIP(g);
  enum { DEVICES = 300 };
  uint64_t (*live)(const char *) = (uint64_t(*)(const char *))hook("fakecuda_live");
  unsigned char *pages = aligned_alloc(4096, (size_t)DEVICES * 4096); /* kept: words of the GPU's */
  CU_ASSERT_PTR_NOT_NULL_FATAL(pages);
  memset(pages, 0, (size_t)DEVICES * 4096);
  rig_buffer *gsrc = buffer(g, RIG_KIND_DEVICE, 64), *gdst = buffer(g, RIG_KIND_DEVICE, 64);
  uint64_t waits0 = count("cuStreamWaitValue64"), regs0 = live ? live("registrations") : 0;
  uint64_t most = 0;
  for (int k = 0; k < DEVICES; k++) {
    passing p = {.word = (_Atomic uint64_t *)(pages + (size_t)k * 4096)};
    rig_device_facts f = {.numa = -1, .runs_copies = true};
    snprintf(f.name, sizeof f.name, "passing:%d", k);
    snprintf(f.arch, sizeof f.arch, "passing");
    rig_error err;
    CU_ASSERT_EQUAL_FATAL(rig_device_register(&passing_driver, &p, &f, p.word, &p.dev, &err),
                          RIG_OK);
    uint32_t index = rig_device_index(p.dev);
    rig_buffer *a = buffer(p.dev, RIG_KIND_DEVICE, 64), *b = buffer(p.dev, RIG_KIND_DEVICE, 64);
    rig_point pp, pg;
    CU_ASSERT_EQUAL_FATAL(rig_buffer_copy_submit(a, 0, b, 0, 64, NULL, 0, &pp, &err), RIG_OK);
    CU_ASSERT_FALSE(rig_point_reached(pp));
    CU_ASSERT_EQUAL_FATAL(rig_buffer_copy_submit(gsrc, 0, gdst, 0, 64, &pp, 1, &pg, &err), RIG_OK);
    if (live && live("registrations") - regs0 > most) most = live("registrations") - regs0;
    atomic_store(p.word, p.last);
    rig_device_signal(p.dev);
    CU_ASSERT_EQUAL(rig_point_wait(pg, &err), RIG_OK);
    rig_buffer_release(a);
    rig_buffer_release(b);
    rig_device_unregister(p.dev);
    rig_reclaim();
    CU_ASSERT_PTR_NULL(rig_device_at(index)); /* gone */
  }
  /* Every wait in the stream, and at most the last device's word and the
   * one before it registered at once. */
  if (fake()) {
    CU_ASSERT_EQUAL(count("cuStreamWaitValue64") - waits0, DEVICES);
    CU_ASSERT(most <= 2);
  }
  rig_buffer_release(gsrc);
  rig_buffer_release(gdst);
}

/* ---- loss (last: the context stays lost) ------------------------------------------- */

static void test_an_illegal_address_loses_the_gpu_and_host_and_cpu_keep_working(void) {
  GPU_OR_SKIP(d);
  void (*fail_next)(int) = (void (*)(int))hook("fakecuda_fail_next_launch");
  if (!fail_next) {
    rig_test_skip(__func__, "needs the driver double to inject the fault");
    return;
  }
  rig_image *img = image(d);
  rig_buffer *a = buffer(d, RIG_KIND_DEVICE, 1024);
  rig_ref r[1] = {{0, 0, RIG_USE_WRITE}};
  uint64_t p[1] = {0};
  rig_part part = launch_part(img, entry(img, "ids"), r, 1, p, 8, 4, 64);
  rig_submission *s = make(d, &part, 1, 1);
  fail_next(700);
  rig_point pt;
  rig_error err;
  rig_status st = rig_submit(s, NULL, &a, NULL, 0, &pt, &err);
  if (st == RIG_OK) st = rig_point_wait(pt, &err);
  CU_ASSERT_EQUAL(st, RIG_ELOST);
  CU_ASSERT(strncmp(err.message, "cuda:0 lost: ", 13) == 0);
  CU_ASSERT(strstr(err.message, "CUDA_ERROR_ILLEGAL_ADDRESS") != NULL);
  CU_ASSERT(rig_device_is_lost(d, NULL));
  /* Later calls answer the loss. */
  rig_buffer *b;
  CU_ASSERT_EQUAL(rig_buffer_create(d, RIG_KIND_DEVICE, 64, &b, &err), RIG_ELOST);
  /* The host and cpu devices carry on. */
  rig_device *cpu;
  CU_ASSERT_EQUAL_FATAL(rig_device_open("cpu:0", &cpu, &err), RIG_OK);
  rig_buffer *h = buffer(rig_host(), RIG_KIND_DEVICE, 64), *c = buffer(cpu, RIG_KIND_DEVICE, 64);
  memset(rig_buffer_host(h), 7, 64);
  CU_ASSERT_EQUAL(rig_buffer_copy_submit(h, 0, c, 0, 64, NULL, 0, &pt, &err), RIG_OK);
  CU_ASSERT_EQUAL(rig_point_wait(pt, &err), RIG_OK);
  CU_ASSERT_EQUAL(memcmp(rig_buffer_host(c), rig_buffer_host(h), 64), 0);
  CU_ASSERT_FALSE(rig_device_is_lost(cpu, NULL));
  rig_buffer_release(h);
  rig_buffer_release(c);
  rig_submission_release(s);
  rig_buffer_release(a);
  rig_image_release(img);
}

void rig_test_register(void) {
  static CU_TestInfo tests[] = {
      {"a_gpu_is_a_device_with_its_arch_budget_and_bus_id",
       test_a_gpu_is_a_device_with_its_arch_budget_and_bus_id},
      {"gpus_are_ordered_by_pci_bus_id", test_gpus_are_ordered_by_pci_bus_id},
      {"a_gpu_past_the_last_is_no_such_device", test_a_gpu_past_the_last_is_no_such_device},
      {"an_image_that_is_not_the_gpus_is_refused_naming_the_call",
       test_an_image_that_is_not_the_gpus_is_refused_naming_the_call},
      {"a_missing_function_is_refused_by_name", test_a_missing_function_is_refused_by_name},
      {"copies_between_every_memory_kind_and_the_host_both_ways",
       test_copies_between_every_memory_kind_and_the_host_both_ways},
      {"an_allocation_past_the_budget_is_out_of_memory_and_loses_nothing",
       test_an_allocation_past_the_budget_is_out_of_memory_and_loses_nothing},
      {"two_kernels_in_one_submission_run_in_order",
       test_two_kernels_in_one_submission_run_in_order},
      {"launches_at_every_geometry_limit", test_launches_at_every_geometry_limit},
      {"a_graph_replays_1000_times_updating_only_the_node_that_changes",
       test_a_graph_replays_1000_times_updating_only_the_node_that_changes},
      {"a_gpu_step_follows_a_cpu_step_in_its_stream",
       test_a_gpu_step_follows_a_cpu_step_in_its_stream},
      {"a_gpu_step_follows_a_rails_arrived_and_signals_ready_in_stream_order",
       test_a_gpu_step_follows_a_rails_arrived_and_signals_ready_in_stream_order},
      {"the_upstream_gpu_test_runs_through_a_description",
       test_the_upstream_gpu_test_runs_through_a_description},
      {"a_program_mixes_host_cpu_and_cuda_with_two_copies_and_a_loop",
       test_a_program_mixes_host_cpu_and_cuda_with_two_copies_and_a_loop},
      {"a_program_on_a_gpu_of_another_machine_runs_under_mpirun",
       test_a_program_on_a_gpu_of_another_machine_runs_under_mpirun},
      {"a_gpu_program_follows_a_rail_from_another_machine",
       test_a_gpu_program_follows_a_rail_from_another_machine},
      {"two_gpus_without_peer_access_refuse_each_others_memory",
       test_two_gpus_without_peer_access_refuse_each_others_memory},
      {"a_gpu_waiting_on_a_lost_device_is_lost_with_it",
       test_a_gpu_waiting_on_a_lost_device_is_lost_with_it},
      {"a_lost_gpus_pending_work_keeps_its_memory_until_its_stream_is_past",
       test_a_lost_gpus_pending_work_keeps_its_memory_until_its_stream_is_past},
      {"a_gpu_waits_in_its_stream_on_devices_that_come_and_go_past_256",
       test_a_gpu_waits_in_its_stream_on_devices_that_come_and_go_past_256},
      {"an_illegal_address_loses_the_gpu_and_host_and_cpu_keep_working",
       test_an_illegal_address_loses_the_gpu_and_host_and_cpu_keep_working},
      CU_TEST_INFO_NULL,
  };
  rig_test_add_suite("cuda", tests);
}
