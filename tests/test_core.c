/* The core (docs/core.md): timelines and values, ordering by stamps, in-queue
 * and host waits, lifetime, loss, the worker pool, host images, and the cpu
 * devices' bounded queues. Ordering is observed through the polled driver,
 * whose queue runs only when a test drives it and which logs every call. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "alloc_count.h"
#include "core/provider.h"
#include "polled.h"
#include "rig/rig_core.h"
#include "rig_test.h"
#include "wait.h"

/* ---- fixtures ------------------------------------------------------------- */

static void *kernels_bytes;
static size_t kernels_len;

static rig_image *load_kernels(rig_device *dev) {
  if (!kernels_bytes) {
    const char *path = getenv("RIG_TEST_KERNELS");
    CU_ASSERT_PTR_NOT_NULL_FATAL(path);
    kernels_bytes = rig_test_read_file(path, &kernels_len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(kernels_bytes);
  }
  rig_image *img = NULL;
  rig_error err;
  rig_status st = rig_image_load(dev, kernels_bytes, kernels_len, &img, &err);
  if (st != RIG_OK) fprintf(stderr, "image: %s\n", err.message);
  CU_ASSERT_EQUAL_FATAL(st, RIG_OK);
  return img;
}

static rig_entry entry_of(rig_image *img, const char *name) {
  rig_entry e = {0};
  rig_error err;
  CU_ASSERT_EQUAL_FATAL(rig_image_entry(img, name, strlen(name), &e, &err), RIG_OK);
  return e;
}

static rig_device *open_dev(const char *name) {
  rig_device *d = NULL;
  rig_error err;
  CU_ASSERT_EQUAL_FATAL(rig_device_open(name, &d, &err), RIG_OK);
  return d;
}

static rig_device *polled(rig_polled **p, bool can_wait) {
  rig_device *d = NULL;
  rig_polled_options opt = {.can_wait = can_wait};
  rig_error err;
  CU_ASSERT_EQUAL_FATAL(rig_polled_open(&opt, &d, p, &err), RIG_OK);
  return d;
}

static rig_buffer *buffer(rig_device *d, uint64_t bytes) {
  rig_buffer *b = NULL;
  rig_error err;
  CU_ASSERT_EQUAL_FATAL(rig_buffer_create(d, RIG_KIND_DEVICE, bytes, &b, &err), RIG_OK);
  return b;
}

/* A launch of img's `fn` (one group of one thread) with params_bytes of
 * params and nrefs refs. */
static rig_part launch_part(rig_image *img, const char *fn, const void *params,
                            uint32_t params_bytes, const rig_ref *refs, size_t nrefs) {
  rig_part part = {.kind = RIG_WORK_LAUNCH};
  part.u.launch.image = img;
  part.u.launch.entry = entry_of(img, fn);
  part.u.launch.params = params;
  part.u.launch.params_bytes = params_bytes;
  part.u.launch.refs = refs;
  part.u.launch.nrefs = nrefs;
  for (int i = 0; i < 3; i++) part.u.launch.groups[i] = part.u.launch.threads[i] = 1;
  return part;
}

/* A submission on dev of one launch of `fn` whose params are two 64-bit
 * words, both refs (of uses u0, u1) to slots 0 and 1, or one when u1 < 0. */
static rig_submission *launch2(rig_device *dev, rig_image *img, const char *fn, int u0, int u1) {
  uint64_t params[2] = {0, 0};
  rig_ref refs[2] = {{0, 0, (rig_use)u0}, {1, 8, (rig_use)(u1 < 0 ? 0 : u1)}};
  size_t nrefs = u1 < 0 ? 1 : 2;
  rig_part part = launch_part(img, fn, params, sizeof params, refs, nrefs);
  rig_submission *s = NULL;
  rig_error err;
  rig_status st = rig_submission_make(dev, &part, 1, nrefs, NULL, 0, &s, &err);
  if (st != RIG_OK) fprintf(stderr, "make: %s\n", err.message);
  CU_ASSERT_EQUAL_FATAL(st, RIG_OK);
  return s;
}

/* Submits s with slots a (and b) and waits none; returns the point. */
static rig_point submit2(rig_submission *s, rig_buffer *a, rig_buffer *b) {
  rig_buffer *slots[2] = {a, b};
  rig_point p = 0;
  rig_error err;
  rig_status st = rig_submit(s, NULL, slots, NULL, 0, &p, &err);
  if (st != RIG_OK) fprintf(stderr, "submit: %s\n", err.message);
  CU_ASSERT_EQUAL_FATAL(st, RIG_OK);
  return p;
}

static uint64_t *host_words(rig_buffer *b) {
  return rig_buffer_host(b);
}

/* The line "submit <v> waits<...>" of a polled log. */
static bool logged(rig_polled *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool logged(rig_polled *p, const char *fmt, ...) {
  char line[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  bool found = rig_polled_log_find(p, line) >= 0;
  if (!found) fprintf(stderr, "not in the log: \"%s\"; the log:\n%s", line, rig_polled_log(p));
  return found;
}

/* ---- timelines ------------------------------------------------------------ */

static void test_values_run_1_to_n_per_device(void) {
  rig_polled *p;
  rig_device *d = polled(&p, false);
  rig_image *img = load_kernels(d);
  rig_buffer *a = buffer(d, 16);
  rig_submission *s = launch2(d, img, "noop", RIG_USE_READ, -1);
  for (uint64_t v = 1; v <= 20; v++) {
    rig_point pt = submit2(s, a, NULL);
    CU_ASSERT_EQUAL(rig_point_device(pt), rig_device_index(d));
    CU_ASSERT_EQUAL(rig_point_value(pt), v);
    CU_ASSERT_FALSE(rig_point_reached(pt));
  }
  CU_ASSERT_EQUAL(rig_polled_run(p, 100), 20);
  CU_ASSERT_TRUE(rig_point_reached(rig_point_make(rig_device_index(d), 20)));
  CU_ASSERT_FALSE(rig_point_reached(rig_point_make(rig_device_index(d), 21)));
  rig_submission_release(s);
  rig_buffer_release(a);
  rig_image_release(img);
}

static void test_host_work_is_done_when_submit_returns(void) {
  rig_device *h = rig_host();
  CU_ASSERT_STRING_EQUAL(rig_device_name(h), "host");
  CU_ASSERT_EQUAL(rig_device_index(h), 0);
  CU_ASSERT_TRUE(rig_device_facts_of(h)->synchronous);
  rig_image *img = load_kernels(h);
  rig_buffer *a = buffer(h, 16);
  rig_submission *s = launch2(h, img, "add_u64", RIG_USE_WRITE, -1);
  unsigned char block[64];
  CU_ASSERT_FATAL(rig_submission_block_bytes(s) <= sizeof block);
  rig_submission_block_init(s, block);
  ((uint64_t *)rig_block_params(s, block, 0))[1] = 5;
  rig_buffer *slots[1] = {a};
  rig_point pt;
  CU_ASSERT_EQUAL_FATAL(rig_submit(s, block, slots, NULL, 0, &pt, NULL), RIG_OK);
  CU_ASSERT_TRUE(rig_point_reached(pt));
  CU_ASSERT_EQUAL(host_words(a)[0], 5);
  rig_point next;
  CU_ASSERT_EQUAL_FATAL(rig_submit(s, block, slots, NULL, 0, &next, NULL), RIG_OK);
  CU_ASSERT_EQUAL(rig_point_value(next), rig_point_value(pt) + 1);
  CU_ASSERT_EQUAL(host_words(a)[0], 10);
  rig_submission_release(s);
  rig_buffer_release(a);
  rig_image_release(img);
}

static void test_the_sentinel_point_is_reached(void) {
  CU_ASSERT_TRUE(rig_point_reached(RIG_POINT_REACHED));
  CU_ASSERT_EQUAL(rig_point_wait(RIG_POINT_REACHED, NULL), RIG_OK);
  rig_point p = rig_point_make(3, 77);
  CU_ASSERT_EQUAL(rig_point_device(p), 3);
  CU_ASSERT_EQUAL(rig_point_value(p), 77);
}

static void test_a_fill_runs_once_per_submit(void) {
  rig_device *h = rig_host();
  rig_image *img = load_kernels(h);
  rig_buffer *count = buffer(h, 8);
  uint64_t params[1] = {0};
  rig_ref ref = {0, 0, RIG_USE_WRITE};
  rig_part part = {.kind = RIG_WORK_FILL};
  part.u.fill.fn = entry_of(img, "count_fill").value;
  part.u.fill.params = params;
  part.u.fill.params_bytes = 8;
  part.u.fill.refs = &ref;
  part.u.fill.nrefs = 1;
  rig_submission *s = NULL;
  CU_ASSERT_EQUAL_FATAL(rig_submission_make(h, &part, 1, 1, NULL, 0, &s, NULL), RIG_OK);
  for (int i = 0; i < 7; i++) submit2(s, count, NULL);
  CU_ASSERT_EQUAL(host_words(count)[0], 7);
  rig_submission_release(s);
  rig_buffer_release(count);
  rig_image_release(img);
}

/* ---- ordering ------------------------------------------------------------- */

/* Polled devices A, B (and C), each with the kernels loaded and its borrow
 * of one host memory of 16 bytes, m: most ordering tests' fixture. */
enum { A, B, C };

typedef struct sharing {
  size_t n;
  rig_polled *p[3];
  rig_device *dev[3];
  rig_image *img[3];
  rig_buffer *m, *view[3];
} sharing;

/* n devices (at most 3); device i can wait in its queue when can_wait[i]. */
static sharing sharing_open(size_t n, const bool *can_wait) {
  sharing s = {.n = n};
  for (size_t i = 0; i < n; i++) s.dev[i] = polled(&s.p[i], can_wait[i]);
  for (size_t i = 0; i < n; i++) s.img[i] = load_kernels(s.dev[i]);
  s.m = buffer(rig_host(), 16);
  for (size_t i = 0; i < n; i++)
    CU_ASSERT_EQUAL_FATAL(rig_buffer_borrow(s.dev[i], s.m, &s.view[i], NULL), RIG_OK);
  return s;
}

/* Releases the views, m and the images (the tests release their
 * submissions first). */
static void sharing_close(sharing *s) {
  for (size_t i = 0; i < s->n; i++) rig_buffer_release(s->view[i]);
  rig_buffer_release(s->m);
  for (size_t i = 0; i < s->n; i++) rig_image_release(s->img[i]);
}

/* A submission on device i of noop with one ref of use u, to slot 0. */
static rig_submission *noop_on(const sharing *s, int i, rig_use u) {
  return launch2(s->dev[i], s->img[i], "noop", u, -1);
}

/* A write on polled A, then a read on polled B (which waits in its queue):
 * B's work carries A's point. */
static void test_reads_of_another_devices_write_wait_for_it(void) {
  sharing s = sharing_open(2, (const bool[]){false, true});
  rig_submission *w = noop_on(&s, A, RIG_USE_WRITE);
  rig_submission *r = noop_on(&s, B, RIG_USE_READ);
  rig_point pw = submit2(w, s.view[A], NULL);
  rig_point pr = submit2(r, s.view[B], NULL);
  CU_ASSERT(logged(s.p[B], "submit %llu waits %s@%llu", (unsigned long long)rig_point_value(pr),
                   rig_device_name(s.dev[A]), (unsigned long long)rig_point_value(pw)));
  /* A second read on B follows the same write, and nothing of B's own. */
  rig_point pr2 = submit2(r, s.view[B], NULL);
  CU_ASSERT(logged(s.p[B], "submit %llu waits %s@%llu", (unsigned long long)rig_point_value(pr2),
                   rig_device_name(s.dev[A]), (unsigned long long)rig_point_value(pw)));
  /* Once the write is done, a read waits for nothing. */
  rig_polled_run(s.p[A], 10);
  rig_point pr3 = submit2(r, s.view[B], NULL);
  CU_ASSERT(logged(s.p[B], "submit %llu waits", (unsigned long long)rig_point_value(pr3)));
  rig_polled_run(s.p[B], 10);
  rig_submission_release(w);
  rig_submission_release(r);
  sharing_close(&s);
}

/* Reads on two devices do not order against each other; a write follows
 * both. */
static void test_writes_follow_every_other_devices_use(void) {
  sharing s = sharing_open(3, (const bool[]){true, true, true});
  rig_submission *ra = noop_on(&s, A, RIG_USE_READ);
  rig_submission *rb = noop_on(&s, B, RIG_USE_READ);
  rig_submission *wc = noop_on(&s, C, RIG_USE_WRITE);
  rig_point p1 = submit2(ra, s.view[A], NULL);
  rig_point p2 = submit2(rb, s.view[B], NULL);
  CU_ASSERT(logged(s.p[B], "submit %llu waits", (unsigned long long)rig_point_value(p2)));
  rig_point p3 = submit2(wc, s.view[C], NULL);
  CU_ASSERT(logged(s.p[C], "submit %llu waits %s@%llu %s@%llu",
                   (unsigned long long)rig_point_value(p3), rig_device_name(s.dev[A]),
                   (unsigned long long)rig_point_value(p1), rig_device_name(s.dev[B]),
                   (unsigned long long)rig_point_value(p2)));
  rig_polled_run(s.p[A], 9);
  rig_polled_run(s.p[B], 9);
  rig_polled_run(s.p[C], 9);
  rig_submission_release(ra);
  rig_submission_release(rb);
  rig_submission_release(wc);
  sharing_close(&s);
}

/* Two Unordered uses on two devices do not wait for each other, but a Read
 * or Write does wait for them, and they for a Write. */
static void test_unordered_uses_order_only_against_read_and_write(void) {
  sharing s = sharing_open(3, (const bool[]){true, true, true});
  rig_submission *ua = noop_on(&s, A, RIG_USE_UNORDERED);
  rig_submission *ub = noop_on(&s, B, RIG_USE_UNORDERED);
  rig_submission *rc = noop_on(&s, C, RIG_USE_READ);
  rig_submission *wc = noop_on(&s, C, RIG_USE_WRITE);
  rig_point w0 = submit2(wc, s.view[C], NULL);
  rig_point u1 = submit2(ua, s.view[A], NULL);
  CU_ASSERT(logged(s.p[A], "submit %llu waits %s@%llu", (unsigned long long)rig_point_value(u1),
                   rig_device_name(s.dev[C]), (unsigned long long)rig_point_value(w0)));
  rig_point u2 = submit2(ub, s.view[B], NULL);
  /* Not A's unordered use: only C's write. */
  CU_ASSERT(logged(s.p[B], "submit %llu waits %s@%llu", (unsigned long long)rig_point_value(u2),
                   rig_device_name(s.dev[C]), (unsigned long long)rig_point_value(w0)));
  rig_point r3 = submit2(rc, s.view[C], NULL);
  CU_ASSERT(logged(s.p[C], "submit %llu waits %s@%llu %s@%llu",
                   (unsigned long long)rig_point_value(r3), rig_device_name(s.dev[A]),
                   (unsigned long long)rig_point_value(u1), rig_device_name(s.dev[B]),
                   (unsigned long long)rig_point_value(u2)));
  rig_polled_run(s.p[C], 9);
  rig_polled_run(s.p[A], 9);
  rig_polled_run(s.p[B], 9);
  rig_polled_run(s.p[C], 9);
  rig_submission_release(ua);
  rig_submission_release(ub);
  rig_submission_release(rc);
  rig_submission_release(wc);
  sharing_close(&s);
}

/* A copy reads its source and writes its destination: it follows the
 * source's writes and the destination's reads. */
static void test_a_copy_waits_for_writes_of_its_source_and_reads_of_its_destination(void) {
  rig_polled *pa, *pb, *pc;
  rig_device *a = polled(&pa, true), *b = polled(&pb, true), *c = polled(&pc, true);
  rig_image *ia = load_kernels(a), *ib = load_kernels(b);
  rig_buffer *src = buffer(c, 64), *dst = buffer(c, 64), *sa, *db;
  rig_buffer_borrow(a, src, &sa, NULL);
  rig_buffer_borrow(b, dst, &db, NULL);
  rig_submission *w = launch2(a, ia, "noop", RIG_USE_WRITE, -1);
  rig_submission *r = launch2(b, ib, "noop", RIG_USE_READ, -1);
  rig_submission *wsrc_read = launch2(a, ia, "noop", RIG_USE_READ, -1);
  rig_point pw = submit2(w, sa, NULL);
  rig_point pr = submit2(r, db, NULL);
  /* polled memory has host pointers: the host runs the copy, after waiting
   * for a's write and b's read on the host (which drives their queues). */
  rig_point pc1;
  rig_error err;
  CU_ASSERT_EQUAL_FATAL(rig_buffer_copy_submit(src, 0, dst, 8, 16, NULL, 0, &pc1, &err), RIG_OK);
  CU_ASSERT_EQUAL(rig_point_device(pc1), 0);
  CU_ASSERT_TRUE(rig_point_reached(pw));
  CU_ASSERT_TRUE(rig_point_reached(pr));
  /* A read of the source by a does not wait for the copy (a read), a write
   * of the destination by b does. */
  rig_point pr2 = submit2(wsrc_read, sa, NULL);
  CU_ASSERT(logged(pa, "submit %llu waits", (unsigned long long)rig_point_value(pr2)));
  rig_polled_run(pa, 9);
  rig_polled_run(pb, 9);
  rig_submission_release(w);
  rig_submission_release(r);
  rig_submission_release(wsrc_read);
  rig_buffer_release(sa);
  rig_buffer_release(db);
  rig_buffer_release(src);
  rig_buffer_release(dst);
  rig_image_release(ia);
  rig_image_release(ib);
  (void)pc;
}

static void test_a_copy_moves_the_bytes(void) {
  rig_device *h = rig_host();
  rig_buffer *src = buffer(h, 64), *dst = buffer(h, 64);
  for (int i = 0; i < 64; i++) ((unsigned char *)rig_buffer_host(src))[i] = (unsigned char)i;
  rig_point p;
  CU_ASSERT_EQUAL_FATAL(rig_buffer_copy_submit(src, 4, dst, 32, 16, NULL, 0, &p, NULL), RIG_OK);
  CU_ASSERT_TRUE(rig_point_reached(p));
  unsigned char *d = rig_buffer_host(dst);
  for (int i = 0; i < 16; i++) CU_ASSERT_EQUAL(d[32 + i], 4 + i);
  CU_ASSERT_EQUAL(d[31], 0);
  CU_ASSERT_EQUAL(d[48], 0);
  rig_error err;
  RIG_ASSERT_ERROR(rig_buffer_copy_submit(src, 60, dst, 0, 8, NULL, 0, &p, &err), err, RIG_EINVAL,
                   "a copy's source of 8 bytes at 60 outside its 64 bytes");
  rig_buffer_release(src);
  rig_buffer_release(dst);
}

/* A polled queue that waits itself carries the producer's point; the
 * producer's later run releases it. */
static void test_in_queue_waits_carry_the_producers_point(void) {
  rig_device *cpu = open_dev("cpu:0");
  rig_polled *pb;
  rig_device *b = polled(&pb, true);
  rig_image *ic = load_kernels(cpu), *ib = load_kernels(b);
  rig_buffer *m = buffer(rig_host(), 16), *mc, *mb, *gate = buffer(rig_host(), 16), *gc;
  rig_buffer_borrow(cpu, m, &mc, NULL);
  rig_buffer_borrow(b, m, &mb, NULL);
  rig_buffer_borrow(cpu, gate, &gc, NULL);
  /* cpu:0 holds on a gate, so its point stays unreached. */
  rig_submission *w = launch2(cpu, ic, "hold", RIG_USE_READ, RIG_USE_WRITE);
  rig_submission *r = launch2(b, ib, "noop", RIG_USE_READ, -1);
  rig_point pw = submit2(w, gc, mc);
  rig_point pr = submit2(r, mb, NULL);
  CU_ASSERT(logged(pb, "submit %llu waits cpu:0@%llu", (unsigned long long)rig_point_value(pr),
                   (unsigned long long)rig_point_value(pw)));
  atomic_store((_Atomic uint64_t *)rig_buffer_host(gate), 1);
  CU_ASSERT_EQUAL(rig_polled_run(pb, 9), 1);
  CU_ASSERT_TRUE(rig_point_reached(pw));
  rig_submission_release(w);
  rig_submission_release(r);
  rig_buffer_release(mc);
  rig_buffer_release(mb);
  rig_buffer_release(gc);
  rig_buffer_release(m);
  rig_buffer_release(gate);
  rig_image_release(ic);
  rig_image_release(ib);
}

/* A device that cannot wait itself gets no waits: the host waited (and so
 * drove the producer) before the hand-over. */
static void test_waits_the_device_cannot_do_itself_happen_on_the_host(void) {
  sharing s = sharing_open(2, (const bool[]){false, false});
  rig_submission *w = noop_on(&s, A, RIG_USE_WRITE);
  rig_submission *r = noop_on(&s, B, RIG_USE_READ);
  rig_point pw = submit2(w, s.view[A], NULL);
  CU_ASSERT_FALSE(rig_point_reached(pw));
  rig_point pr = submit2(r, s.view[B], NULL);
  CU_ASSERT_TRUE(rig_point_reached(pw));
  CU_ASSERT(logged(s.p[A], "run %llu", (unsigned long long)rig_point_value(pw)));
  CU_ASSERT(logged(s.p[B], "submit %llu waits", (unsigned long long)rig_point_value(pr)));
  /* The given waits too. */
  rig_point pw2 = submit2(w, s.view[A], NULL);
  rig_buffer *slots[1] = {s.view[B]};
  rig_point pr2;
  CU_ASSERT_EQUAL(rig_submit(r, NULL, slots, &pw2, 1, &pr2, NULL), RIG_OK);
  CU_ASSERT_TRUE(rig_point_reached(pw2));
  rig_polled_run(s.p[B], 9);
  rig_submission_release(w);
  rig_submission_release(r);
  sharing_close(&s);
}

/* ---- the stamps model ----------------------------------------------------- */

/* Random submissions over two polled devices and three memories, each with
 * a random use: every logged in-queue wait equals what a simple model of
 * the stamps predicts, with reached points dropped. */
static void test_random_submissions_match_a_model_of_stamps(void) {
  for (uint64_t seed = 1; seed <= 40; seed++) {
    rig_rng rng = {seed};
    rig_polled *pp[2];
    rig_device *dev[2] = {polled(&pp[0], true), polled(&pp[1], true)};
    rig_image *img[2] = {load_kernels(dev[0]), load_kernels(dev[1])};
    rig_buffer *mem[3], *view[2][3];
    rig_submission *sub[2][3];
    for (int m = 0; m < 3; m++) mem[m] = buffer(rig_host(), 32);
    for (int d = 0; d < 2; d++) {
      for (int m = 0; m < 3; m++) rig_buffer_borrow(dev[d], mem[m], &view[d][m], NULL);
      for (int u = 0; u < 3; u++) sub[d][u] = launch2(dev[d], img[d], "noop", u, -1);
    }
    /* model[m][d][u]: the last value of device d's use u of memory m. */
    uint64_t model[3][2][3] = {{{0}}};
    for (int step = 0; step < 60; step++) {
      int d = (int)rig_rng_below(&rng, 2), m = (int)rig_rng_below(&rng, 3);
      int u = (int)rig_rng_below(&rng, 3);
      if (rig_rng_below(&rng, 5) == 0)
        rig_polled_run(pp[rig_rng_below(&rng, 2)], 1 + rig_rng_below(&rng, 3));
      int o = 1 - d;
      uint64_t r = model[m][o][RIG_USE_READ], w = model[m][o][RIG_USE_WRITE],
               un = model[m][o][RIG_USE_UNORDERED];
      uint64_t want = u == RIG_USE_READ    ? (w > un ? w : un)
                      : u == RIG_USE_WRITE ? (r > w ? (r > un ? r : un) : (w > un ? w : un))
                                           : (r > w ? r : w);
      bool expect_wait = want && !rig_point_reached(rig_point_make(rig_device_index(dev[o]), want));
      rig_point pt = submit2(sub[d][u], view[d][m], NULL);
      char line[160];
      if (expect_wait)
        snprintf(line, sizeof line, "submit %llu waits %s@%llu",
                 (unsigned long long)rig_point_value(pt), rig_device_name(dev[o]),
                 (unsigned long long)want);
      else
        snprintf(line, sizeof line, "submit %llu waits", (unsigned long long)rig_point_value(pt));
      bool ok = rig_polled_log_find(pp[d], line) >= 0;
      CU_ASSERT(ok);
      if (!ok) {
        fprintf(stderr, "seed %llu step %d: wanted \"%s\" in\n%s", (unsigned long long)seed, step,
                line, rig_polled_log(pp[d]));
        break;
      }
      model[m][d][u] = rig_point_value(pt);
    }
    for (int d = 0; d < 2; d++) {
      rig_polled_run(pp[d], 1000);
      rig_polled_run(pp[1 - d], 1000);
      for (int u = 0; u < 3; u++) rig_submission_release(sub[d][u]);
      for (int m = 0; m < 3; m++) rig_buffer_release(view[d][m]);
      rig_image_release(img[d]);
    }
    for (int m = 0; m < 3; m++) rig_buffer_release(mem[m]);
  }
}

typedef struct raiser {
  rig_submission *s;
  rig_buffer *b;
  int n;
  rig_point last;
} raiser;

static void *raise_many(void *arg) {
  raiser *r = arg;
  for (int i = 0; i < r->n; i++) r->last = submit2(r->s, r->b, NULL);
  return NULL;
}

/* Two threads raise one memory's stamps at once, each on its own device:
 * a later write follows each device's last point, the maximum. */
static void test_stamps_raised_from_two_threads_end_at_their_maxima(void) {
  sharing s = sharing_open(3, (const bool[]){true, true, true});
  raiser ra = {noop_on(&s, A, RIG_USE_READ), s.view[A], 2000, 0};
  raiser rb = {noop_on(&s, B, RIG_USE_READ), s.view[B], 2000, 0};
  pthread_t ta, tb;
  pthread_create(&ta, NULL, raise_many, &ra);
  pthread_create(&tb, NULL, raise_many, &rb);
  pthread_join(ta, NULL);
  pthread_join(tb, NULL);
  rig_submission *wc = noop_on(&s, C, RIG_USE_WRITE);
  rig_point pw = submit2(wc, s.view[C], NULL);
  CU_ASSERT_EQUAL(rig_point_value(ra.last), 2000);
  /* Which device's entry came first depends on the race; both are waited. */
  const char *a = rig_device_name(s.dev[A]), *b = rig_device_name(s.dev[B]);
  char ab[160], ba[160];
  snprintf(ab, sizeof ab, "submit %llu waits %s@2000 %s@2000",
           (unsigned long long)rig_point_value(pw), a, b);
  snprintf(ba, sizeof ba, "submit %llu waits %s@2000 %s@2000",
           (unsigned long long)rig_point_value(pw), b, a);
  CU_ASSERT(rig_polled_log_find(s.p[C], ab) >= 0 || rig_polled_log_find(s.p[C], ba) >= 0);
  rig_polled_run(s.p[A], 5000);
  rig_polled_run(s.p[B], 5000);
  rig_polled_run(s.p[C], 5000);
  rig_submission_release(ra.s);
  rig_submission_release(rb.s);
  rig_submission_release(wc);
  sharing_close(&s);
}

/* ---- lifetime ------------------------------------------------------------- */

static void test_memory_is_not_freed_before_the_word_passes_its_last_use(void) {
  rig_polled *p;
  rig_device *d = polled(&p, false);
  rig_image *img = load_kernels(d);
  rig_buffer *m = buffer(d, 96);
  rig_submission *s = launch2(d, img, "noop", RIG_USE_WRITE, -1);
  submit2(s, m, NULL);
  rig_buffer_release(m);
  rig_reclaim();
  CU_ASSERT(rig_polled_log_find(p, "free 96") < 0);
  CU_ASSERT(rig_reclaim_pending() > 0);
  rig_polled_run(p, 1);
  rig_reclaim();
  CU_ASSERT(logged(p, "free 96"));
  rig_submission_release(s);
  rig_image_release(img);
}

static void test_fixed_memory_lives_while_its_submission_exists(void) {
  rig_polled *p;
  rig_device *d = polled(&p, false);
  rig_buffer *m = buffer(d, 48);
  rig_buffer *slot = buffer(d, 8);
  rig_image *img = load_kernels(d);
  uint64_t params[2] = {0, 0};
  rig_ref ref = {0, 0, RIG_USE_READ};
  rig_part part = launch_part(img, "noop", params, 16, &ref, 1);
  rig_fixed fixed = {m, RIG_ACCESS_READ_WRITE};
  rig_submission *s = NULL;
  CU_ASSERT_EQUAL_FATAL(rig_submission_make(d, &part, 1, 1, &fixed, 1, &s, NULL), RIG_OK);
  CU_ASSERT_EQUAL(rig_submission_address(s, 0), rig_buffer_address(m));
  rig_buffer_release(m);
  rig_image_release(img); /* the submission keeps the image too */
  rig_reclaim();
  CU_ASSERT(rig_polled_log_find(p, "free 48") < 0);
  submit2(s, slot, NULL);
  rig_submission_release(s); /* its hand-over is not done yet */
  rig_reclaim();
  CU_ASSERT(rig_polled_log_find(p, "free 48") < 0);
  rig_polled_run(p, 1); /* the launch runs: its image was kept */
  rig_reclaim();
  CU_ASSERT(logged(p, "free 48"));
  rig_buffer_release(slot);
}

/* ---- loss ----------------------------------------------------------------- */

typedef struct waiter {
  rig_point p;
  rig_status st;
  rig_error err;
} waiter;

static void *wait_for(void *arg) {
  waiter *w = arg;
  w->st = rig_point_wait(w->p, &w->err);
  return NULL;
}

/* ---- a lost device's running kernel ------------------------------------------
 * A device declared lost may still run a kernel on a thread nobody can
 * stop: its image's code, its memory and its submission live until the
 * thread has left it, whatever the order they are released in. Each test
 * loses a cpu device of its own, which the suite's `core-loss` run gives
 * (RIG_CPU_DEVICES=4); the plain run skips them. */

typedef struct inside_kernel {
  rig_device *cpu;
  rig_image *img;
  rig_entry fn;
  rig_buffer *m;
  rig_submission *s;
  _Atomic uint64_t gate, inside, left;
} inside_kernel;

/* Waits, without a bet on time (RIG_HANG_S is a hang), until *flag is
 * set. */
static bool until_set(_Atomic uint64_t *flag) {
  rig_wait w = rig_wait_begin(RIG_HANG_S);
  while (!atomic_load(flag) && rig_wait_more(&w)) {
  }
  return atomic_load(flag) != 0;
}

/* Whether fn's code is mapped (its image loaded). */
static bool code_mapped(rig_entry fn) {
  Dl_info info;
  return dladdr((void *)(uintptr_t)fn.value, &info) != 0;
}

/* cpu:<n>'s hold_inside kernel, running: on the gate, its count in m. */
static bool kernel_inside(inside_kernel *k, const char *name, const char *test) {
  rig_error err;
  if (rig_device_open(name, &k->cpu, &err) != RIG_OK) {
    rig_test_skip(test, "it loses a cpu device of its own: the core-loss run has them");
    return false;
  }
  k->img = load_kernels(k->cpu);
  k->fn = entry_of(k->img, "hold_inside");
  k->m = buffer(k->cpu, 64);
  uint64_t params[4] = {0, (uint64_t)(uintptr_t)&k->gate, (uint64_t)(uintptr_t)&k->inside,
                        (uint64_t)(uintptr_t)&k->left};
  rig_ref refs[1] = {{0, 0, RIG_USE_WRITE}};
  rig_part part = launch_part(k->img, "hold_inside", params, sizeof params, refs, 1);
  CU_ASSERT_EQUAL_FATAL(rig_submission_make(k->cpu, &part, 1, 1, NULL, 0, &k->s, &err), RIG_OK);
  submit2(k->s, k->m, NULL);
  CU_ASSERT_TRUE_FATAL(until_set(&k->inside));
  rig_device_lose(k->cpu, "a test lost it");
  return true;
}

/* The gate opens after every release: the kernel runs on in code and
 * memory still there, counts and leaves; then they go. */
static void kernel_leaves(inside_kernel *k) {
  CU_ASSERT_TRUE(code_mapped(k->fn));
  atomic_store(&k->gate, 1);
  CU_ASSERT_TRUE_FATAL(until_set(&k->left));
  /* Its thread, leaving, releases what waited for it (rig_device_left). */
  rig_wait w = rig_wait_begin(RIG_HANG_S);
  while (code_mapped(k->fn) && rig_wait_more(&w)) {
  }
  CU_ASSERT_FALSE(code_mapped(k->fn));
}

static void test_a_lost_devices_running_kernel_keeps_its_submission_memory_and_image(void) {
  static inside_kernel k;
  if (!kernel_inside(&k, "cpu:2", __func__)) return;
  size_t before = rig_reclaim_pending();
  rig_submission_release(k.s);
  rig_buffer_release(k.m);
  rig_image_release(k.img);
  rig_reclaim();
  /* The submission (which keeps the image) and the memory wait. */
  CU_ASSERT_EQUAL(rig_reclaim_pending(), before + 2);
  kernel_leaves(&k);
  CU_ASSERT_EQUAL(rig_reclaim_pending(), before);
}

static void test_a_lost_devices_running_kernel_keeps_its_image_released_first(void) {
  static inside_kernel k;
  if (!kernel_inside(&k, "cpu:3", __func__)) return;
  size_t before = rig_reclaim_pending();
  rig_image_release(k.img);
  rig_buffer_release(k.m);
  rig_reclaim();
  CU_ASSERT_EQUAL(rig_reclaim_pending(), before + 1);
  rig_submission_release(k.s);
  CU_ASSERT_EQUAL(rig_reclaim_pending(), before + 2);
  kernel_leaves(&k);
  CU_ASSERT_EQUAL(rig_reclaim_pending(), before);
}

static void test_loss_happens_once_spreads_to_waiters_and_leaves_others_working(void) {
  rig_polled *p;
  rig_device *d = polled(&p, false);
  rig_polled_gate(p, true); /* waits do not drive it */
  rig_image *img = load_kernels(d);
  rig_buffer *m = buffer(d, 16);
  rig_submission *s = launch2(d, img, "noop", RIG_USE_WRITE, -1);
  rig_point pt = submit2(s, m, NULL);
  waiter w = {.p = pt};
  pthread_t t;
  pthread_create(&t, NULL, wait_for, &w);
  /* cpu:1's work that reads m waits on d's point in its queue. */
  rig_device *cpu = open_dev("cpu:1");
  rig_image *ic = load_kernels(cpu);
  rig_buffer *mc;
  CU_ASSERT_EQUAL_FATAL(rig_buffer_borrow(cpu, m, &mc, NULL), RIG_OK);
  rig_submission *r = launch2(cpu, ic, "noop", RIG_USE_READ, -1);
  rig_point pr = submit2(r, mc, NULL);
  /* The fault comes once both wait on d: the test's waiter and cpu:1's
   * queue thread, each seen asleep on d's points. */
  rig_wait until = rig_wait_begin(RIG_HANG_S);
  while (rig_polled_sleepers(p) < 2 && rig_wait_more(&until)) {
  }
  CU_ASSERT_EQUAL(rig_polled_sleepers(p), 2);
  rig_polled_fault(p, "a test fault");
  rig_polled_fault(p, "a second fault");
  pthread_join(t, NULL);
  char want[128];
  snprintf(want, sizeof want, "%s lost: a test fault", rig_device_name(d));
  RIG_ASSERT_ERROR(w.st, w.err, RIG_ELOST, want);
  rig_error err;
  CU_ASSERT_TRUE(rig_device_is_lost(d, &err));
  CU_ASSERT_STRING_EQUAL(err.message, want);
  /* Later calls on the device and its memory answer the loss. */
  rig_buffer *more = NULL;
  RIG_ASSERT_ERROR(rig_buffer_create(d, RIG_KIND_DEVICE, 8, &more, &err), err, RIG_ELOST, want);
  rig_buffer *slots[1] = {m};
  rig_point again;
  RIG_ASSERT_ERROR(rig_submit(s, NULL, slots, NULL, 0, &again, &err), err, RIG_ELOST, want);
  RIG_ASSERT_ERROR(rig_buffer_wait(m, RIG_ACCESS_READ, &err), err, RIG_ELOST, want);
  /* The work queued behind the lost point is released, not left hanging. */
  CU_ASSERT_EQUAL(rig_point_wait(pr, NULL), RIG_OK);
  /* Other devices carry on. */
  rig_buffer *h = buffer(cpu, 16), *x = buffer(cpu, 16);
  rig_submission *c2 = launch2(cpu, ic, "copy_u64", RIG_USE_READ, RIG_USE_WRITE);
  host_words(h)[0] = 99;
  CU_ASSERT_EQUAL(rig_point_wait(submit2(c2, h, x), NULL), RIG_OK);
  CU_ASSERT_EQUAL(host_words(x)[0], 99);
  rig_submission_release(c2);
  rig_submission_release(r);
  rig_submission_release(s);
  rig_buffer_release(h);
  rig_buffer_release(x);
  rig_buffer_release(mc);
  rig_buffer_release(m);
  rig_image_release(img);
  rig_image_release(ic);
}

static void test_a_submit_the_driver_refuses_takes_no_value(void) {
  rig_polled *p;
  rig_device *d = polled(&p, false);
  rig_image *img = load_kernels(d);
  rig_buffer *m = buffer(d, 16);
  rig_submission *s = launch2(d, img, "noop", RIG_USE_WRITE, -1);
  rig_point p1 = submit2(s, m, NULL);
  rig_polled_fail_next_submit(p, RIG_EREFUSED);
  rig_buffer *slots[1] = {m};
  rig_point p2;
  rig_error err;
  char want[96];
  snprintf(want, sizeof want, "%s: refused the submit", rig_device_name(d));
  RIG_ASSERT_ERROR(rig_submit(s, NULL, slots, NULL, 0, &p2, &err), err, RIG_EREFUSED, want);
  rig_point p3 = submit2(s, m, NULL);
  CU_ASSERT_EQUAL(rig_point_value(p3), rig_point_value(p1) + 1);
  rig_polled_refuse_room(p, true);
  rig_buffer *b;
  CU_ASSERT_EQUAL(rig_buffer_create(d, RIG_KIND_DEVICE, 8, &b, &err), RIG_ENOMEM);
  rig_polled_refuse_room(p, false);
  rig_polled_run(p, 9);
  rig_submission_release(s);
  rig_buffer_release(m);
  rig_image_release(img);
}

/* ---- submissions: what make and submit refuse ----------------------------- */

static void test_make_refuses_what_can_never_run(void) {
  rig_device *h = rig_host();
  rig_image *img = load_kernels(h);
  uint64_t params[2] = {0, 0};
  rig_ref ref = {0, 4, RIG_USE_READ};
  rig_part part = launch_part(img, "noop", params, 16, &ref, 1);
  rig_submission *s = NULL;
  rig_error err;
  RIG_ASSERT_ERROR(rig_submission_make(h, &part, 1, 1, NULL, 0, &s, &err), err, RIG_EINVAL,
                   "part 0: a ref at 4 outside its 16 bytes of parameters");
  ref.at = 0;
  ref.slot = 1;
  RIG_ASSERT_ERROR(rig_submission_make(h, &part, 1, 1, NULL, 0, &s, &err), err, RIG_EINVAL,
                   "part 0: a ref to slot 1 of 1");
  ref.slot = 0;
  part.u.launch.params_bytes = 6;
  RIG_ASSERT_ERROR(rig_submission_make(h, &part, 1, 1, NULL, 0, &s, &err), err, RIG_EINVAL,
                   "part 0: 6 bytes of parameters, not a whole number of 32-bit words up to 4096");
  rig_part words = {.kind = RIG_WORK_WORDS};
  words.u.words.side = (rig_side){0, -1};
  words.u.words.length = 8;
  RIG_ASSERT_ERROR(rig_submission_make(h, &words, 1, 1, NULL, 0, &s, &err), err, RIG_EINVAL,
                   "part 0: host runs no words");
  rig_buffer *m = buffer(h, 16), *ro;
  rig_buffer_read_only(m, &ro, NULL);
  rig_fixed fixed = {ro, RIG_ACCESS_READ_WRITE};
  part.u.launch.params_bytes = 16;
  RIG_ASSERT_ERROR(rig_submission_make(h, &part, 1, 1, &fixed, 1, &s, &err), err, RIG_EINVAL,
                   "fixed memory 0: read-only memory the work writes");
  rig_part copy = {.kind = RIG_WORK_COPY};
  copy.u.copy.src = (rig_side){0, -1};
  copy.u.copy.dst = (rig_side){-1, 0};
  copy.u.copy.length = 8;
  fixed.access = RIG_ACCESS_READ;
  RIG_ASSERT_ERROR(rig_submission_make(h, &copy, 1, 1, &fixed, 1, &s, &err), err, RIG_EINVAL,
                   "part 0: a copy's destination that writes read-only fixed memory 0");
  rig_buffer_release(ro);
  rig_buffer_release(m);
  rig_image_release(img);
}

static void test_submit_refuses_a_geometry_the_device_cannot_run(void) {
  rig_device *h = rig_host();
  rig_image *img = load_kernels(h);
  rig_buffer *a = buffer(h, 16);
  rig_submission *s = launch2(h, img, "noop", RIG_USE_READ, -1);
  unsigned char block[256];
  CU_ASSERT_FATAL(rig_submission_block_bytes(s) <= sizeof block);
  rig_submission_block_init(s, block);
  uint32_t *g = rig_block_geometry(s, block, 0);
  rig_buffer *slots[1] = {a};
  rig_point p;
  rig_error err;
  g[1] = 0;
  RIG_ASSERT_ERROR(rig_submit(s, block, slots, NULL, 0, &p, &err), err, RIG_EINVAL,
                   "part 0: groups (1, 0, 1) with a zero dimension");
  g[1] = 1;
  uint32_t max_shared = rig_device_facts_of(rig_host())->max_shared;
  g[6] = max_shared + 1;
  char want[128];
  snprintf(want, sizeof want, "part 0: %u bytes of shared memory, more than host's %u",
           max_shared + 1, max_shared);
  RIG_ASSERT_ERROR(rig_submit(s, block, slots, NULL, 0, &p, &err), err, RIG_EINVAL, want);
  g[6] = 0;
  rig_buffer *ro;
  rig_buffer_read_only(a, &ro, NULL);
  rig_submission *w = launch2(h, img, "noop", RIG_USE_WRITE, -1);
  slots[0] = ro;
  RIG_ASSERT_ERROR(rig_submit(w, NULL, slots, NULL, 0, &p, &err), err, RIG_EINVAL,
                   "slot 0: read-only memory the work writes");
  rig_device *cpu = open_dev("cpu:0");
  rig_buffer *other = buffer(cpu, 16);
  slots[0] = other;
  RIG_ASSERT_ERROR(rig_submit(s, NULL, slots, NULL, 0, &p, &err), err, RIG_EINVAL,
                   "slot 0: a buffer cpu:0 addresses, not host");
  rig_submission_release(s);
  rig_submission_release(w);
  rig_buffer_release(ro);
  rig_buffer_release(other);
  rig_buffer_release(a);
  rig_image_release(img);
}

/* ---- host launches and the pool ------------------------------------------- */

static rig_submission *launch_grid(rig_device *dev, rig_image *img, const char *fn, size_t nrefs,
                                   const uint32_t groups[3], uint32_t shared) {
  uint64_t params[3] = {0, 0, 0};
  rig_ref refs[3] = {{0, 0, RIG_USE_WRITE}, {1, 8, RIG_USE_WRITE}, {2, 16, RIG_USE_WRITE}};
  rig_part part = launch_part(img, fn, params, sizeof params, refs, nrefs);
  memcpy(part.u.launch.groups, groups, sizeof part.u.launch.groups);
  part.u.launch.shared = shared;
  rig_submission *s = NULL;
  CU_ASSERT_EQUAL_FATAL(rig_submission_make(dev, &part, 1, nrefs, NULL, 0, &s, NULL), RIG_OK);
  return s;
}

static void test_host_launches_run_every_group_once_with_its_indices(void) {
  rig_device *h = rig_host();
  rig_image *img = load_kernels(h);
  const uint32_t groups[3] = {7, 5, 3};
  rig_buffer *counts = buffer(h, 105 * 8), *workers = buffer(h, 105 * 8);
  rig_submission *s = launch_grid(h, img, "mark_groups", 2, groups, 0);
  rig_buffer *slots[2] = {counts, workers};
  rig_point p;
  CU_ASSERT_EQUAL_FATAL(rig_submit(s, NULL, slots, NULL, 0, &p, NULL), RIG_OK);
  uint64_t *c = rig_buffer_host(counts), *w = rig_buffer_host(workers);
  for (int k = 0; k < 105; k++) {
    CU_ASSERT_EQUAL(c[k], 1);
    CU_ASSERT(w[k] >= 1 && w[k] <= rig_device_facts_of(rig_host())->threads);
  }
  rig_submission_release(s);
  rig_buffer_release(counts);
  rig_buffer_release(workers);
  rig_image_release(img);
}

/* The pool's promise: the groups of one launch may run on several threads
 * at once. Each of the two groups of `meet` waits (at most 10 s) for the
 * other, so the launching thread cannot take both: they meet only when two
 * pool threads run them at the same time, which no load or timing can fake
 * or prevent. */
static void test_two_groups_of_a_host_launch_run_at_once_on_two_pool_threads(void) {
  unsigned threads = rig_device_facts_of(rig_host())->threads;
  if (threads < 2) {
    rig_test_skip("two groups of a host launch run at once on two pool threads",
                  "the pool has one thread here");
    return;
  }
  rig_device *h = rig_host();
  rig_image *img = load_kernels(h);
  const uint32_t groups[3] = {2, 1, 1};
  rig_buffer *arrived = buffer(h, 8), *met = buffer(h, 8), *workers = buffer(h, 2 * 8);
  uint64_t params[4] = {0, 2, 0, 0};
  rig_ref refs[3] = {{0, 0, RIG_USE_WRITE}, {1, 16, RIG_USE_WRITE}, {2, 24, RIG_USE_WRITE}};
  rig_part part = launch_part(img, "meet", params, sizeof params, refs, 3);
  memcpy(part.u.launch.groups, groups, sizeof groups);
  rig_submission *s = NULL;
  CU_ASSERT_EQUAL_FATAL(rig_submission_make(h, &part, 1, 3, NULL, 0, &s, NULL), RIG_OK);
  rig_buffer *slots[3] = {arrived, met, workers};
  rig_point p;
  CU_ASSERT_EQUAL_FATAL(rig_submit(s, NULL, slots, NULL, 0, &p, NULL), RIG_OK);
  /* Each group saw the other arrive, and two different threads ran them. */
  CU_ASSERT_EQUAL(host_words(met)[0], 2);
  const uint64_t *w = host_words(workers);
  CU_ASSERT(w[0] >= 1 && w[0] <= threads);
  CU_ASSERT(w[1] >= 1 && w[1] <= threads);
  CU_ASSERT_NOT_EQUAL(w[0], w[1]);
  rig_submission_release(s);
  rig_buffer_release(arrived);
  rig_buffer_release(met);
  rig_buffer_release(workers);
  rig_image_release(img);
}

static void test_shared_scratch_is_per_call(void) {
  rig_device *h = rig_host();
  rig_image *img = load_kernels(h);
  const uint32_t groups[3] = {16, 1, 1};
  rig_buffer *bad = buffer(h, 8);
  rig_submission *s = launch_grid(h, img, "shared_private", 1, groups, 256);
  rig_buffer *slots[1] = {bad};
  rig_point p;
  CU_ASSERT_EQUAL_FATAL(rig_submit(s, NULL, slots, NULL, 0, &p, NULL), RIG_OK);
  CU_ASSERT_EQUAL(host_words(bad)[0], 0);
  rig_submission_release(s);
  rig_buffer_release(bad);
  rig_image_release(img);
}

/* ---- no allocation on a submit -------------------------------------------- */

static void test_a_submit_that_does_not_wait_allocates_nothing(void) {
  if (!RIG_COUNTS_ALLOCATIONS) {
    rig_test_skip("a submit that does not wait allocates nothing", RIG_NO_ALLOC_COUNT);
    return;
  }
  rig_device *h = rig_host(), *cpu = open_dev("cpu:0");
  rig_image *ih = load_kernels(h), *ic = load_kernels(cpu);
  rig_buffer *a = buffer(h, 64), *b = buffer(h, 64), *ac, *bc;
  rig_buffer_borrow(cpu, a, &ac, NULL);
  rig_buffer_borrow(cpu, b, &bc, NULL);
  rig_submission *sh = launch2(h, ih, "copy_u64", RIG_USE_READ, RIG_USE_WRITE);
  rig_submission *sc = launch2(cpu, ic, "copy_u64", RIG_USE_READ, RIG_USE_WRITE);
  const uint32_t groups[3] = {8, 1, 1};
  rig_buffer *counts = buffer(h, 64), *workers = buffer(h, 64);
  rig_submission *grid = launch_grid(h, ih, "mark_groups", 2, groups, 64);
  rig_buffer *gslots[2] = {counts, workers};
  rig_point p;
  /* Warm up: first uses claim stamps and per-thread scratch. */
  submit2(sh, a, b);
  rig_point_wait(submit2(sc, ac, bc), NULL);
  rig_submit(grid, NULL, gslots, NULL, 0, &p, NULL);
  rig_alloc_reset();
  rig_alloc_counting(true);
  for (int i = 0; i < 100; i++) {
    submit2(sh, a, b);
    rig_submit(grid, NULL, gslots, NULL, 0, &p, NULL);
  }
  rig_alloc_counting(false);
  CU_ASSERT_EQUAL(rig_alloc_count(), 0);
  rig_point_wait(submit2(sc, ac, bc), NULL);
  rig_alloc_reset();
  rig_alloc_counting(true);
  for (int i = 0; i < 100; i++) p = submit2(sc, ac, bc);
  rig_alloc_counting(false);
  CU_ASSERT_EQUAL(rig_alloc_count(), 0);
  rig_point_wait(p, NULL);
  rig_submission_release(sh);
  rig_submission_release(sc);
  rig_submission_release(grid);
  rig_buffer_release(ac);
  rig_buffer_release(bc);
  rig_buffer_release(a);
  rig_buffer_release(b);
  rig_buffer_release(counts);
  rig_buffer_release(workers);
  rig_image_release(ih);
  rig_image_release(ic);
}

/* ---- images --------------------------------------------------------------- */

static void test_host_images_load_and_name_their_functions(void) {
  rig_device *h = rig_host();
  rig_image *img = load_kernels(h);
  rig_entry e = entry_of(img, "add_u64");
  CU_ASSERT(e.value != 0);
  CU_ASSERT_EQUAL(e.max_threads, 0);
  CU_ASSERT_PTR_EQUAL(rig_image_device(img), h);
  rig_error err;
  RIG_ASSERT_ERROR(rig_image_entry(img, "missing_fn", 10, &e, &err), err, RIG_EREFUSED,
                   "host: no function \"missing_fn\"");
  /* Two images of the same file are independent (RTLD_LOCAL). */
  rig_image *again = load_kernels(h);
  rig_image_release(again);
  CU_ASSERT(entry_of(img, "noop").value != 0);
  rig_image_release(img);
}

static void count_name(void *ctx, const char *name) {
  size_t *n = ctx;
  (*n)++;
  CU_ASSERT(strlen(name) > 0);
}

/* A host image's functions are read without loading it (progrun check):
 * what kernels.so exports is found, an image for another ISA or of no
 * ELF is refused saying why, and the bytes cut anywhere or with their
 * tables' offsets broken are refused or read within them, never past
 * (ASan would see a read past the copy, which is exactly as long). */
static void test_an_images_functions_are_read_within_its_bytes(void) {
  rig_image_release(load_kernels(rig_host())); /* kernels_bytes read */
  size_t n = 0;
  bool known = false;
  rig_error err;
  CU_ASSERT_EQUAL(
      rig_image_functions(rig_host_isa(), kernels_bytes, kernels_len, count_name, &n, &known, &err),
      RIG_OK);
  CU_ASSERT_TRUE(known);
  CU_ASSERT(n >= 10); /* add_u64, copy_u64, noop, pause_s, ... */
  CU_ASSERT_EQUAL(
      rig_image_functions("aarch64", kernels_bytes, kernels_len, count_name, &n, &known, &err),
      RIG_EREFUSED);
  CU_ASSERT_STRING_EQUAL(err.message, "an ELF shared object for x86_64, not aarch64");
  CU_ASSERT_EQUAL(rig_image_functions("x86_64", "int x;", 6, count_name, &n, &known, &err),
                  RIG_EREFUSED);
  CU_ASSERT_STRING_EQUAL(err.message, "not an ELF shared object (6 bytes: no ELF magic)");
  for (size_t cut = 0; cut < kernels_len; cut += cut < 4096 ? 1 : 97) {
    uint8_t *copy = malloc(cut ? cut : 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(copy);
    memcpy(copy, kernels_bytes, cut);
    rig_status st = rig_image_functions(rig_host_isa(), copy, cut, count_name, &n, &known, &err);
    CU_ASSERT(st == RIG_OK || st == RIG_EREFUSED);
    free(copy);
  }
  /* Every byte of the header and of the section table set to 0xff in
   * turn: offsets, sizes, counts and links that point anywhere. */
  uint8_t *bad = malloc(kernels_len);
  CU_ASSERT_PTR_NOT_NULL_FATAL(bad);
  uint64_t shoff = 0;
  uint16_t shnum = 0;
  memcpy(&shoff, (const uint8_t *)kernels_bytes + 0x28, sizeof shoff); /* Elf64_Ehdr.e_shoff */
  memcpy(&shnum, (const uint8_t *)kernels_bytes + 0x3c, sizeof shnum); /* e_shnum */
  CU_ASSERT_FATAL(shoff + (uint64_t)shnum * 64 <= kernels_len);
  for (size_t at = 0; at < shoff + (size_t)shnum * 64; at = at == 63 ? shoff : at + 1) {
    memcpy(bad, kernels_bytes, kernels_len);
    bad[at] = 0xff;
    rig_status st =
        rig_image_functions(rig_host_isa(), bad, kernels_len, count_name, &n, &known, &err);
    CU_ASSERT(st == RIG_OK || st == RIG_EREFUSED);
  }
  free(bad);
}

static void test_garbage_is_refused_with_the_loaders_reason(void) {
  rig_image *img = NULL;
  rig_error err;
  rig_status st = rig_image_load(rig_host(), "garbage!", 8, &img, &err);
  CU_ASSERT_EQUAL(st, RIG_EREFUSED);
  /* The loader's own reason follows the device's name. */
  CU_ASSERT(strncmp(err.message, "host: ", 6) == 0 && strlen(err.message) > 6);
  CU_ASSERT_PTR_NULL(strstr(err.message, "/proc/self/fd"));
  CU_ASSERT_PTR_NULL(img);
  rig_device *cpu = open_dev("cpu:1");
  st = rig_image_load(cpu, "", 0, &img, &err);
  CU_ASSERT_EQUAL(st, RIG_EREFUSED);
  CU_ASSERT(strncmp(err.message, "cpu:1: ", 7) == 0);
}

/* ---- devices -------------------------------------------------------------- */

static void test_devices_open_by_name_with_their_facts(void) {
  rig_device *c0 = open_dev("cpu:0"), *again = open_dev("cpu:0"), *c1 = open_dev("cpu:1");
  CU_ASSERT_PTR_EQUAL(c0, again);
  CU_ASSERT_PTR_NOT_EQUAL(c0, c1);
  char arch[64];
  snprintf(arch, sizeof arch, "cpu-%s", rig_host_isa());
  CU_ASSERT_STRING_EQUAL(rig_device_arch(c0), arch);
  CU_ASSERT_STRING_EQUAL(rig_device_arch(rig_host()), rig_host_isa());
  CU_ASSERT_FALSE(rig_device_facts_of(c0)->synchronous);
  CU_ASSERT_TRUE(rig_device_facts_of(c0)->maps_host);
  rig_device *d;
  rig_error err;
  RIG_ASSERT_ERROR(rig_device_open("cpu:2", &d, &err), err, RIG_EREFUSED,
                   "cpu:2: no such device (this machine has 2 cpu devices)");
  RIG_ASSERT_ERROR(rig_device_open("tpu:0", &d, &err), err, RIG_EREFUSED, "tpu:0: no such device");
}

static void test_buffers_view_borrow_and_read_only(void) {
  rig_device *h = rig_host(), *cpu = open_dev("cpu:0");
  rig_buffer *b = buffer(h, 4096), *v, *bc, *ro;
  rig_error err;
  CU_ASSERT_EQUAL_FATAL(rig_buffer_view(b, 64, 128, &v, &err), RIG_OK);
  CU_ASSERT_EQUAL(rig_buffer_length(v), 128);
  CU_ASSERT_EQUAL(rig_buffer_address(v), rig_buffer_address(b) + 64);
  CU_ASSERT_PTR_EQUAL(rig_buffer_host(v), (char *)rig_buffer_host(b) + 64);
  CU_ASSERT_TRUE(rig_buffer_same_memory(b, v));
  RIG_ASSERT_ERROR(rig_buffer_view(b, 4000, 128, &ro, &err), err, RIG_EINVAL,
                   "a view of 128 bytes at 4000 outside 4096 bytes");
  CU_ASSERT_EQUAL_FATAL(rig_buffer_borrow(cpu, v, &bc, &err), RIG_OK);
  CU_ASSERT_PTR_EQUAL(rig_buffer_device(bc), cpu);
  CU_ASSERT_PTR_EQUAL(rig_buffer_owner(bc), h);
  CU_ASSERT_EQUAL(rig_buffer_address(bc), rig_buffer_address(v));
  CU_ASSERT_EQUAL_FATAL(rig_buffer_read_only(b, &ro, &err), RIG_OK);
  CU_ASSERT_EQUAL(rig_buffer_access(ro), RIG_ACCESS_READ);
  CU_ASSERT_EQUAL((rig_buffer_address(b) & 4095), 0);
  rig_buffer_release(ro);
  rig_buffer_release(bc);
  rig_buffer_release(v);
  rig_buffer_release(b);
}

/* ---- cpu devices ---------------------------------------------------------- */

typedef struct filler {
  rig_submission *s;
  rig_buffer *count;
  int n;
  _Atomic int submitted;
  _Atomic pid_t tid;
  _Atomic bool finished;
} filler;

static void *fill_queue(void *arg) {
  filler *f = arg;
  atomic_store(&f->tid, rig_thread_self());
  for (int i = 0; i < f->n; i++) {
    submit2(f->s, f->count, NULL);
    atomic_fetch_add(&f->submitted, 1);
  }
  atomic_store(&f->finished, true);
  return NULL;
}

/* Whether the filler is stuck on a full queue: the queue's thread is
 * inside the first kernel, which holds it (so it takes no more entries,
 * frees no room and takes the queue's lock no more), and the filler sleeps
 * in a futex, which then can only be the wait for room. */
static bool stuck_on_full_queue(filler *f, _Atomic uint64_t *inside) {
  pid_t tid = atomic_load(&f->tid);
  return atomic_load(inside) && tid && rig_thread_asleep_in(0, tid, SYS_futex);
}

static void test_a_full_cpu_queue_blocks_then_drains(void) {
  rig_device *cpu = open_dev("cpu:1");
  rig_image *img = load_kernels(cpu);
  rig_buffer *count = buffer(cpu, 8);
  /* hold_inside says it is inside, waits on the gate and counts: the
   * count's use is Unordered, so that no ordering waits stand between the
   * submits. */
  static _Atomic uint64_t gate, inside, left;
  atomic_store(&gate, 0);
  atomic_store(&inside, 0);
  uint64_t params[4] = {0, (uint64_t)(uintptr_t)&gate, (uint64_t)(uintptr_t)&inside,
                        (uint64_t)(uintptr_t)&left};
  rig_ref refs[1] = {{0, 0, RIG_USE_UNORDERED}};
  rig_part part = launch_part(img, "hold_inside", params, sizeof params, refs, 1);
  rig_submission *s = NULL;
  CU_ASSERT_EQUAL_FATAL(rig_submission_make(cpu, &part, 1, 1, NULL, 0, &s, NULL), RIG_OK);
  /* Each entry is a few hundred bytes: 20000 of them overfill 1 MiB. */
  filler f = {.s = s, .count = count, .n = 20000};
  pthread_t t;
  pthread_create(&t, NULL, fill_queue, &f);
  rig_wait until = rig_wait_begin(RIG_HANG_S);
  while (!atomic_load(&f.finished) && !stuck_on_full_queue(&f, &inside) && rig_wait_more(&until)) {
  }
  /* It is stuck short of its count while the gate holds, having queued
   * some: a full queue made submit wait, not fail. */
  int seen = atomic_load(&f.submitted);
  CU_ASSERT_TRUE(stuck_on_full_queue(&f, &inside));
  CU_ASSERT(seen > 0);
  CU_ASSERT(seen < f.n);
  CU_ASSERT_EQUAL(host_words(count)[0], 0);
  atomic_store(&gate, 1);
  pthread_join(t, NULL);
  CU_ASSERT_EQUAL(atomic_load(&f.submitted), f.n);
  CU_ASSERT_EQUAL(rig_point_wait(rig_device_last(cpu), NULL), RIG_OK);
  CU_ASSERT_EQUAL(host_words(count)[0], (uint64_t)f.n);
  rig_submission_release(s);
  rig_buffer_release(count);
  rig_image_release(img);
}

static void test_cpu_work_runs_in_order_on_its_thread(void) {
  rig_device *cpu = open_dev("cpu:0");
  rig_image *img = load_kernels(cpu);
  rig_buffer *a = buffer(cpu, 8);
  rig_submission *s = launch2(cpu, img, "add_u64", RIG_USE_WRITE, -1);
  unsigned char block[64];
  rig_submission_block_init(s, block);
  ((uint64_t *)rig_block_params(s, block, 0))[1] = 3;
  rig_buffer *slots[1] = {a};
  rig_point p = 0;
  for (int i = 0; i < 1000; i++)
    CU_ASSERT_EQUAL(rig_submit(s, block, slots, NULL, 0, &p, NULL), RIG_OK);
  CU_ASSERT_EQUAL(rig_point_wait(p, NULL), RIG_OK);
  CU_ASSERT_EQUAL(host_words(a)[0], 3000);
  /* The host reading it waits for the cpu's writes first. */
  CU_ASSERT_EQUAL(rig_buffer_wait(a, RIG_ACCESS_READ, NULL), RIG_OK);
  rig_submission_release(s);
  rig_buffer_release(a);
  rig_image_release(img);
}

/* ---- the device table ------------------------------------------------------ */

static rig_status idle_submit(void *st, const rig_work *w, rig_error *err) {
  (void)st;
  (void)w;
  return rig_error_set(err, RIG_EREFUSED, "idle runs nothing");
}

/* A driver that runs nothing: its devices are only registered and given up. */
static const rig_driver idle_driver = {.name = "idle", .submit = idle_submit};

/* Every device of the loop has this word, past the stale point's value: a
 * newer device taken for the gone one would answer it reached. */
static _Atomic uint64_t idle_word = 5;

static rig_device *idle_device(void) {
  rig_device_facts f = {.numa = -1};
  snprintf(f.name, sizeof f.name, "idle");
  snprintf(f.arch, sizeof f.arch, "idle");
  rig_device *d = NULL;
  rig_error err;
  rig_status st = rig_device_register(&idle_driver, NULL, &f, &idle_word, &d, &err);
  if (st != RIG_OK) fprintf(stderr, "register: %s\n", err.message);
  return st == RIG_OK ? d : NULL;
}

/* A job's proxies come and go: places in the table are taken again, each
 * time with a new index, so that a process outlives 65536 of them and a
 * point of a gone device is refused, never taken for the newer one in its
 * place. */
static void test_device_places_are_taken_again_but_never_an_index(void) {
  rig_device *first = idle_device();
  CU_ASSERT_PTR_NOT_NULL_FATAL(first);
  uint32_t gone = rig_device_index(first);
  rig_point stale = rig_point_make(gone, 3);
  CU_ASSERT_TRUE(rig_point_reached(stale));
  rig_device_unregister(first);
  CU_ASSERT_PTR_NULL(rig_device_at(gone));
  char why[64];
  snprintf(why, sizeof why, "a point of no device (%u)", gone);
  size_t failed = 0, out_of_order = 0, in_its_place = 0;
  uint32_t last = gone;
  for (size_t k = 0; k < 3 * 65536 + 1000; k++) {
    rig_device *d = idle_device();
    if (!d) {
      failed++;
      continue;
    }
    uint32_t index = rig_device_index(d);
    out_of_order += index <= last;
    last = index;
    if (index % 65536 == gone % 65536) {
      in_its_place++;
      CU_ASSERT_PTR_EQUAL(rig_device_at(index), d);
      CU_ASSERT_PTR_NULL(rig_device_at(gone));
      CU_ASSERT_FALSE(rig_point_reached(stale));
      rig_error err;
      RIG_ASSERT_ERROR(rig_point_wait(stale, &err), err, RIG_EINVAL, why);
    }
    rig_device_unregister(d);
  }
  CU_ASSERT_EQUAL(failed, 0);
  CU_ASSERT_EQUAL(out_of_order, 0);
  CU_ASSERT(in_its_place >= 3);
  CU_ASSERT(last >= 3 * 65536);
  /* The host keeps its place and index throughout. */
  CU_ASSERT_PTR_EQUAL(rig_device_at(0), rig_host());
}

/* ---- providers -------------------------------------------------------------- */

static int old_counted;

static rig_status old_count(unsigned *n, rig_error *err) {
  (void)err;
  old_counted++;
  *n = 1;
  return RIG_OK;
}

static rig_status two(unsigned *n, rig_error *err) {
  (void)err;
  *n = 2;
  return RIG_OK;
}

static rig_status refuse_open(unsigned index, rig_device **out, rig_error *err) {
  (void)out;
  return rig_error_set(err, RIG_EREFUSED, "opening %u", index);
}

static const char *const fake_arch[] = {"fake-", NULL};

static const rig_provider fake_provider = {
    .abi = RIG_PROVIDER_ABI,
    .family = "fake",
    .arch_prefixes = fake_arch,
    .count = two,
    .open = refuse_open,
};

/* As built against another rig_driver.h: the core may read only its abi
 * and family (the rest would name "fake-" archs, and every other). */
static const rig_provider old_provider = {
    .abi = RIG_PROVIDER_ABI + 1,
    .family = "old",
    .arch_prefixes = fake_arch,
    .other_archs = true,
    .count = old_count,
    .open = refuse_open,
};

static void test_a_provider_of_another_abi_is_refused_saying_why(void) {
  const rig_provider *const table[] = {&old_provider, &fake_provider};
  rig_families fs;
  rig_families_start(&fs, table, 2);
  CU_ASSERT_EQUAL(old_counted, 0);
  char why[256];
  snprintf(why, sizeof why,
           "old: a provider of ABI %u, not librig's %u (build it against this rig_driver.h)",
           RIG_PROVIDER_ABI + 1, RIG_PROVIDER_ABI);
  unsigned n = 7;
  rig_error err;
  RIG_ASSERT_ERROR(rig_families_devices(&fs, 0, &n, &err), err, RIG_EREFUSED, why);
  CU_ASSERT_EQUAL(n, 0);
  rig_device *d = NULL;
  char open_why[320];
  snprintf(open_why, sizeof open_why, "old:0: no such device (%s)", why);
  RIG_ASSERT_ERROR(rig_families_open(&fs, "old:0", &d, &err), err, RIG_EREFUSED, open_why);
  CU_ASSERT_EQUAL(rig_families_of_arch(&fs, "fake-1"), 1);
  CU_ASSERT_EQUAL(rig_families_of_arch(&fs, "x86_64"), -1);
  /* The provider of this ABI beside it works. */
  CU_ASSERT_EQUAL(rig_families_devices(&fs, 1, &n, &err), RIG_OK);
  CU_ASSERT_EQUAL(n, 2);
  RIG_ASSERT_ERROR(rig_families_open(&fs, "fake:1", &d, &err), err, RIG_EREFUSED, "opening 1");
  RIG_ASSERT_ERROR(rig_families_open(&fs, "fake:2", &d, &err), err, RIG_EREFUSED,
                   "fake:2: no such device (this machine has 2 fake devices)");
}

/* What progrun's job-file check asks (launcher/progrun/cli_jobview.c):
 * which family a device's name and a description's arch are of, answered
 * by the providers, not spelled outside them. */
static void test_device_names_and_archs_name_their_family_by_the_providers(void) {
  int cpu = rig_family_of_device_name("cpu:1");
  CU_ASSERT_FATAL(cpu > 0);
  CU_ASSERT_STRING_EQUAL(rig_family_name((size_t)cpu), "cpu");
  CU_ASSERT_EQUAL(rig_family_of_device_name("host"), 0);
  CU_ASSERT_EQUAL(rig_family_of_device_name("cpu:123456789"), cpu);
  static const char *const not_names[] = {"host:0", "cpu:01", "cpu:",          "cpu:+1",
                                          "cpu:1x", "gpu:0",  "cpu:1234567890"};
  for (size_t i = 0; i < sizeof not_names / sizeof *not_names; i++)
    CU_ASSERT_EQUAL(rig_family_of_device_name(not_names[i]), -1);
  CU_ASSERT_EQUAL(rig_family_of_arch("cpu-x86_64"), cpu);
  CU_ASSERT_EQUAL(rig_family_of_arch(rig_host_isa()), 0);
  /* Another machine's ISA is a host's too. */
  CU_ASSERT_EQUAL(rig_family_of_arch("riscv64"), 0);
  int cuda = rig_family_of_device_name("cuda:0");
  if (cuda >= 0) CU_ASSERT_EQUAL(rig_family_of_arch("sm_90"), cuda);
}

void rig_test_register(void) {
  static CU_TestInfo timelines[] = {
      {"values run 1..n per device", test_values_run_1_to_n_per_device},
      {"host work is done when submit returns", test_host_work_is_done_when_submit_returns},
      {"the sentinel point is reached", test_the_sentinel_point_is_reached},
      {"a fill runs once per submit", test_a_fill_runs_once_per_submit},
      {"devices open by name with their facts", test_devices_open_by_name_with_their_facts},
      {"buffers view, borrow and read only", test_buffers_view_borrow_and_read_only},
      CU_TEST_INFO_NULL};
  static CU_TestInfo ordering[] = {
      {"reads of another device's write wait for it",
       test_reads_of_another_devices_write_wait_for_it},
      {"writes follow every other device's use", test_writes_follow_every_other_devices_use},
      {"unordered uses order only against read and write",
       test_unordered_uses_order_only_against_read_and_write},
      {"a copy waits for writes of its source and reads of its destination",
       test_a_copy_waits_for_writes_of_its_source_and_reads_of_its_destination},
      {"a copy moves the bytes", test_a_copy_moves_the_bytes},
      {"in-queue waits carry the producer's point", test_in_queue_waits_carry_the_producers_point},
      {"waits the device cannot do itself happen on the host",
       test_waits_the_device_cannot_do_itself_happen_on_the_host},
      {"random submissions match a model of stamps",
       test_random_submissions_match_a_model_of_stamps},
      {"stamps raised from two threads end at their maxima",
       test_stamps_raised_from_two_threads_end_at_their_maxima},
      CU_TEST_INFO_NULL};
  static CU_TestInfo lifetime[] = {
      {"memory is not freed before the word passes its last use",
       test_memory_is_not_freed_before_the_word_passes_its_last_use},
      {"fixed memory lives while its submission exists",
       test_fixed_memory_lives_while_its_submission_exists},
      {"loss happens once, spreads to waiters and leaves others working",
       test_loss_happens_once_spreads_to_waiters_and_leaves_others_working},
      {"a lost device's running kernel keeps its submission, memory and image",
       test_a_lost_devices_running_kernel_keeps_its_submission_memory_and_image},
      {"a lost device's running kernel keeps its image released first",
       test_a_lost_devices_running_kernel_keeps_its_image_released_first},
      {"a submit the driver refuses takes no value",
       test_a_submit_the_driver_refuses_takes_no_value},
      {"device places are taken again, but never an index",
       test_device_places_are_taken_again_but_never_an_index},
      CU_TEST_INFO_NULL};
  static CU_TestInfo submissions[] = {
      {"make refuses what can never run", test_make_refuses_what_can_never_run},
      {"submit refuses a geometry the device cannot run",
       test_submit_refuses_a_geometry_the_device_cannot_run},
      {"host launches run every group once with its indices",
       test_host_launches_run_every_group_once_with_its_indices},
      {"two groups of a host launch run at once on two pool threads",
       test_two_groups_of_a_host_launch_run_at_once_on_two_pool_threads},
      {"shared scratch is per call", test_shared_scratch_is_per_call},
      {"a submit that does not wait allocates nothing",
       test_a_submit_that_does_not_wait_allocates_nothing},
      {"host images load and name their functions", test_host_images_load_and_name_their_functions},
      {"an image's functions are read within its bytes",
       test_an_images_functions_are_read_within_its_bytes},
      {"garbage is refused with the loader's reason",
       test_garbage_is_refused_with_the_loaders_reason},
      {"a full cpu queue blocks then drains", test_a_full_cpu_queue_blocks_then_drains},
      {"cpu work runs in order on its thread", test_cpu_work_runs_in_order_on_its_thread},
      CU_TEST_INFO_NULL};
  rig_test_add_suite("core: timelines and devices", timelines);
  rig_test_add_suite("core: ordering", ordering);
  rig_test_add_suite("core: lifetime and loss", lifetime);
  static CU_TestInfo providers[] = {
      {"a provider of another ABI is refused, saying why",
       test_a_provider_of_another_abi_is_refused_saying_why},
      {"device names and archs name their family by the providers",
       test_device_names_and_archs_name_their_family_by_the_providers},
      CU_TEST_INFO_NULL};
  rig_test_add_suite("core: submissions, launches, images, queues", submissions);
  rig_test_add_suite("core: providers", providers);
}
