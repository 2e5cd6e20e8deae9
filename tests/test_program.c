/* Programs (rig_program.h; the seed's Rig_program's OCaml interface, docs/program.md): a model
 * of copies over random programs, holes and their sums, the ints, loops
 * and flags, what a run waits for, the frame and its refusals, step points
 * and ends, runs received from another process, threads, rails, and no
 * allocation per run. Ordering is observed through the polled driver, whose
 * queue runs only when a test drives it (or a wait drives it, unless gated)
 * and which logs every call. */
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "alloc_count.h"
#include "fixtures/program_kernels.h"
#include "polled.h"
#include "rig/rig_program.h"
#include "rig_test.h"
#include "wait.h"

/* ---- fixtures ------------------------------------------------------------- */

static void *kernels_bytes, *pk_bytes;
static size_t kernels_len, pk_len;

static void read_image(const char *var, void **bytes, size_t *len) {
  if (*bytes) return;
  const char *path = getenv(var);
  if (!path) fprintf(stderr, "%s is not set\n", var);
  CU_ASSERT_PTR_NOT_NULL_FATAL(path);
  *bytes = rig_test_read_file(path, len);
  CU_ASSERT_PTR_NOT_NULL_FATAL(*bytes);
}

/* kernels.so (add_u64, ...) as image of device dev; its index. */
static int64_t add_kernels(rig_desc *d, int64_t dev) {
  read_image("RIG_TEST_KERNELS", &kernels_bytes, &kernels_len);
  return rig_desc_add_image(d, dev, kernels_bytes, kernels_len);
}

/* program_kernels.so (pk_*) as image of device dev; its index. */
static int64_t add_pk(rig_desc *d, int64_t dev) {
  read_image("RIG_TEST_PROGRAM_KERNELS", &pk_bytes, &pk_len);
  return rig_desc_add_image(d, dev, pk_bytes, pk_len);
}

static const char *cpu_arch(void) {
  static char arch[48];
  snprintf(arch, sizeof arch, "cpu-%s", rig_host_isa());
  return arch;
}

static rig_device *cpu0(void) {
  rig_device *d = NULL;
  rig_error err;
  CU_ASSERT_EQUAL_FATAL(rig_device_open("cpu:0", &d, &err), RIG_OK);
  return d;
}

static rig_device *polled_dev(rig_polled **p, const char *arch, bool can_wait) {
  rig_device *d = NULL;
  rig_polled_options opt = {.arch = arch, .can_wait = can_wait};
  rig_error err;
  CU_ASSERT_EQUAL_FATAL(rig_polled_open(&opt, &d, p, &err), RIG_OK);
  return d;
}

/* A zeroed buffer of dev. */
static rig_buffer *buf(rig_device *dev, uint64_t bytes) {
  rig_buffer *b = NULL;
  rig_error err;
  rig_status st = rig_buffer_create(dev, RIG_KIND_DEVICE, bytes, &b, &err);
  if (st != RIG_OK) fprintf(stderr, "buffer: %s\n", err.message);
  CU_ASSERT_EQUAL_FATAL(st, RIG_OK);
  memset(rig_buffer_host(b), 0, bytes);
  return b;
}

static uint64_t *words(rig_buffer *b) {
  return rig_buffer_host(b);
}

static rig_desc *desc_of(size_t ndevices, ...) {
  rig_desc *d = rig_desc_create();
  CU_ASSERT_PTR_NOT_NULL_FATAL(d);
  va_list ap;
  va_start(ap, ndevices);
  for (size_t i = 0; i < ndevices; i++) rig_desc_add_device(d, va_arg(ap, const char *));
  va_end(ap);
  return d;
}

static rig_program *load_ok(const rig_desc *d, rig_device *const *devs, size_t n,
                            const rig_rails *rails) {
  rig_program *p = NULL;
  rig_error err = {0};
  rig_status st = rig_program_load(d, devs, n, rails, &p, &err);
  if (st != RIG_OK) fprintf(stderr, "load: %s: %s\n", rig_status_name(st), err.message);
  CU_ASSERT_EQUAL_FATAL(st, RIG_OK);
  return p;
}

/* A frame with its step points and room for the ends. */
typedef struct fr {
  rig_frame f;
  rig_point *points;
  size_t npoints;
  rig_point ends[8];
  size_t nends;
} fr;

static void fr_init(fr *x, rig_program *p, rig_buffer *const *inputs, size_t ninputs,
                    const int64_t *ints, size_t nints) {
  memset(x, 0, sizeof *x);
  x->points = rig_program_step_points(p, &x->npoints);
  CU_ASSERT_PTR_NOT_NULL_FATAL(x->points);
  CU_ASSERT_FATAL(rig_program_devices(p) <= 8);
  x->f = (rig_frame){inputs, ninputs, ints, nints, x->points, x->npoints};
}

static void fr_free(fr *x) {
  free(x->points);
  x->points = NULL;
}

static rig_status run_fr(rig_program *p, fr *x, const rig_point *waits, size_t nwaits,
                         rig_error *err) {
  return rig_program_run(p, &x->f, waits, nwaits, x->ends, &x->nends, err);
}

static void run_ok(rig_program *p, fr *x) {
  rig_error err = {0};
  rig_status st = run_fr(p, x, NULL, 0, &err);
  if (st != RIG_OK) fprintf(stderr, "run: %s: %s\n", rig_status_name(st), err.message);
  CU_ASSERT_EQUAL_FATAL(st, RIG_OK);
}

static void wait_ends(const fr *x) {
  for (size_t i = 0; i < x->nends; i++) CU_ASSERT_EQUAL(rig_point_wait(x->ends[i], NULL), RIG_OK);
}

/* ---- building steps ---------------------------------------------------------- */

static int64_t slot(rig_desc *d, rig_desc_submit *s, rig_desc_slot sl) {
  return rig_desc_submit_add_slot(d, s, sl);
}

/* A launch of `fn` of image `img`, one group of one thread, whose params
 * are `n` 64-bit words (w, or zeros when w is NULL). */
static rig_desc_part *launch(rig_desc *d, rig_desc_submit *s, int64_t img, const char *fn,
                             const uint64_t *w, size_t n) {
  uint64_t zeros[32] = {0};
  CU_ASSERT_FATAL(n <= 32);
  rig_desc_part *part = rig_desc_submit_add_launch(d, s, img, fn, w ? w : zeros, n * 8,
                                                   rig_desc_fixed(1), rig_desc_fixed(1));
  CU_ASSERT_PTR_NOT_NULL_FATAL(part);
  return part;
}

static void ref(rig_desc *d, rig_desc_part *part, int64_t sl, int64_t word, rig_use use) {
  CU_ASSERT_EQUAL_FATAL(rig_desc_part_add_ref(d, part, sl, 8 * word, use), 0);
}

/* A hole of one term (value times factor) in data. */
static void hole(rig_desc *d, rig_desc_data *data, int64_t at, rig_desc_width w, rig_desc_value v,
                 int64_t factor, int64_t add, int64_t shift) {
  rig_desc_hole *h = rig_desc_data_add_hole(d, data, at, w, add, shift);
  CU_ASSERT_PTR_NOT_NULL_FATAL(h);
  CU_ASSERT_EQUAL_FATAL(rig_desc_terms_add(d, &h->terms, v, factor), 0);
}

static rig_desc_value addr_v(int64_t memory, int64_t on) {
  return rig_desc_leaf_value(rig_desc_address(memory, on));
}

/* A Submit step on dev whose one launch, pk_set, stores `value` into word
 * `index` of slot `dst` after delay_us; its part, for holes on its value
 * (byte 16). */
static rig_desc_part *set_step(rig_desc *d, rig_desc_step *loop, int64_t dev, int64_t img,
                               rig_desc_slot dst, uint64_t index, uint64_t value,
                               uint64_t delay_us) {
  rig_desc_submit *s = rig_desc_add_submit(d, loop, dev);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  int64_t k = slot(d, s, dst);
  uint64_t w[4] = {0, index, value, delay_us};
  rig_desc_part *part = launch(d, s, img, "pk_set", w, 4);
  ref(d, part, k, 0, RIG_USE_WRITE);
  return part;
}

/* A Submit step on dev whose one launch, pk_count, adds 1 to the first
 * word of slot `dst`. */
static void count_step(rig_desc *d, rig_desc_step *loop, int64_t dev, int64_t img,
                       rig_desc_slot dst) {
  rig_desc_submit *s = rig_desc_add_submit(d, loop, dev);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  int64_t k = slot(d, s, dst);
  rig_desc_part *part = launch(d, s, img, "pk_count", NULL, 1);
  ref(d, part, k, 0, RIG_USE_WRITE);
}

static rig_desc_step *move_step(rig_desc *d, rig_desc_step *loop, rig_desc_slot src, int64_t src_at,
                                rig_desc_slot dst, int64_t dst_at, int64_t length) {
  rig_desc_step *m = rig_desc_add_move(d, loop, src, dst, length);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  if (src_at) rig_desc_terms_add(d, &m->u.move.src_offset, rig_desc_fixed(src_at), 1);
  if (dst_at) rig_desc_terms_add(d, &m->u.move.dst_offset, rig_desc_fixed(dst_at), 1);
  return m;
}

/* ---- runs in the background ----------------------------------------------------- */

typedef struct bg_run {
  rig_program *p;
  fr *x;
  _Atomic int done;
  rig_status st;
  rig_error err;
} bg_run;

static void *bg_main(void *arg) {
  bg_run *b = arg;
  b->st = run_fr(b->p, b->x, NULL, 0, &b->err);
  atomic_store(&b->done, 1);
  return NULL;
}

/* Whether *flag is set before the bound a hang reaches. */
static bool wait_done(_Atomic int *flag) {
  rig_wait w = rig_wait_begin(RIG_HANG_S);
  while (!atomic_load(flag) && rig_wait_more(&w)) {
  }
  return atomic_load(flag) != 0;
}

/* Drives the polled device one work at a time until the run in the
 * background is done (or the bound a hang reaches passes). */
static void drive_until_done(rig_polled *pd, bg_run *b) {
  rig_wait w = rig_wait_begin(RIG_HANG_S);
  while (!atomic_load(&b->done) && rig_wait_more(&w)) rig_polled_run(pd, 1);
}

/* ---- a model of copies ------------------------------------------------------ */

#define MODEL_MEMS  3
#define MODEL_WORDS 8

typedef enum op_kind { OP_FILL, OP_COPY, OP_MOVE } op_kind;

typedef struct op {
  op_kind kind;
  int dev;      /* fills and copies: 0 host, 1 cpu:0 */
  int src, dst; /* memories */
  int x, y, n;  /* words: source, destination, count */
  size_t submit;
} op;

typedef struct model {
  uint64_t mem[MODEL_MEMS][2][MODEL_WORDS];
  int copies[MODEL_MEMS];
} model;

static int copy_of(const model *m, int mem, int run) {
  return m->copies[mem] == 2 ? run % 2 : 0;
}

static void model_apply(model *m, const op *o, int run) {
  uint64_t *dst = m->mem[o->dst][copy_of(m, o->dst, run)];
  if (o->kind == OP_FILL) {
    dst[o->y] += 1;
    return;
  }
  uint64_t tmp[MODEL_WORDS];
  memcpy(tmp, m->mem[o->src][copy_of(m, o->src, run)] + o->x, (size_t)o->n * 8);
  memcpy(dst + o->y, tmp, (size_t)o->n * 8);
}

/* Random fills (pk_fill_count), kernel copies (pk_copy) and moves over three
 * memories of One or Two copies on the host and cpu:0, then a move of each
 * memory into the input: after each of three runs, the input holds the
 * model's memory, Two-copy memory indexed by the run's parity. */
static void test_random_programs_match_a_model_of_copies(void) {
  rig_device *devs[2] = {rig_host(), cpu0()};
  for (uint64_t seed = 1; seed <= 200; seed++) {
    rig_rng rng = {seed * 7919};
    rig_desc *d = desc_of(2, rig_host_isa(), cpu_arch());
    model m;
    memset(&m, 0, sizeof m);
    for (int i = 0; i < MODEL_MEMS; i++) {
      int dev = (int)rig_rng_below(&rng, 2);
      m.copies[i] = 1 + (int)rig_rng_below(&rng, 2);
      int64_t k = rig_desc_add_alloc(d, dev, RIG_KIND_DEVICE, 8 * MODEL_WORDS,
                                     m.copies[i] == 2 ? RIG_COPIES_TWO : RIG_COPIES_ONE);
      CU_ASSERT_EQUAL_FATAL(k, i);
      uint64_t init[MODEL_WORDS];
      for (int w = 0; w < MODEL_WORDS; w++) init[w] = rig_rng_below(&rng, 1000);
      rig_desc_data_set(d, &d->memory[k].u.alloc.init, init, sizeof init);
      memcpy(m.mem[i][0], init, sizeof init);
      memcpy(m.mem[i][1], init, sizeof init);
    }
    int64_t pimg[2] = {add_pk(d, 0), add_pk(d, 1)};
    rig_desc_add_input(d, 0, MODEL_MEMS * 8 * MODEL_WORDS);
    op ops[12];
    int nops = 1 + (int)rig_rng_below(&rng, 10);
    size_t submits = 0;
    bool cpu_ran = false;
    size_t last_cpu = 0;
    for (int i = 0; i < nops; i++) {
      op *o = &ops[i];
      o->kind = (op_kind)rig_rng_below(&rng, 3);
      o->dev = (int)rig_rng_below(&rng, 2);
      o->src = (int)rig_rng_below(&rng, MODEL_MEMS);
      o->dst = (o->src + 1 + (int)rig_rng_below(&rng, MODEL_MEMS - 1)) % MODEL_MEMS;
      o->n = 1 + (int)rig_rng_below(&rng, 4);
      o->x = (int)rig_rng_below(&rng, (uint64_t)(MODEL_WORDS - o->n + 1));
      o->y = (int)rig_rng_below(&rng, (uint64_t)(MODEL_WORDS - o->n + 1));
      if (o->kind == OP_MOVE) {
        move_step(d, NULL, rig_desc_slot_memory(o->src, 0, 64), 8 * o->x,
                  rig_desc_slot_memory(o->dst, 0, 64), 8 * o->y, 8 * o->n);
        continue;
      }
      o->submit = submits++;
      if (o->dev == 1) {
        cpu_ran = true;
        last_cpu = o->submit;
      }
      rig_desc_submit *s = rig_desc_add_submit(d, NULL, o->dev);
      if (o->kind == OP_FILL) {
        o->y = (int)rig_rng_below(&rng, MODEL_WORDS);
        int64_t k = slot(d, s, rig_desc_slot_memory(o->dst, 8 * o->y, 8));
        uint64_t zero = 0;
        rig_desc_part *part =
            rig_desc_submit_add_fill(d, s, rig_desc_entry(pimg[o->dev], "pk_fill_count"), &zero, 8);
        ref(d, part, k, 0, RIG_USE_WRITE);
      } else {
        int64_t a = slot(d, s, rig_desc_slot_memory(o->src, 8 * o->x, 8 * o->n));
        int64_t b = slot(d, s, rig_desc_slot_memory(o->dst, 8 * o->y, 8 * o->n));
        uint64_t w[3] = {0, 0, (uint64_t)o->n};
        rig_desc_part *part = launch(d, s, pimg[o->dev], "pk_copy", w, 3);
        ref(d, part, a, 0, RIG_USE_READ);
        ref(d, part, b, 1, RIG_USE_WRITE);
      }
    }
    for (int i = 0; i < MODEL_MEMS; i++)
      move_step(d, NULL, rig_desc_slot_memory(i, 0, 64), 0, rig_desc_slot_input(0), 64 * i, 64);
    rig_error err;
    rig_status checked = rig_desc_check(d, &err);
    if (checked != RIG_OK)
      fprintf(stderr, "seed %llu: %s\n", (unsigned long long)seed, err.message);
    CU_ASSERT_EQUAL_FATAL(checked, RIG_OK);
    rig_program *p = load_ok(d, devs, 2, NULL);
    rig_buffer *out = buf(rig_host(), MODEL_MEMS * 64);
    fr x;
    fr_init(&x, p, &out, 1, NULL, 0);
    CU_ASSERT_EQUAL(x.npoints, submits);
    for (int run = 0; run < 3; run++) {
      for (int i = 0; i < nops; i++) model_apply(&m, &ops[i], run);
      run_ok(p, &x);
      /* The host made the moves, and the cpu ran if a step was its. */
      CU_ASSERT_EQUAL(x.nends, cpu_ran ? 2u : 1u);
      CU_ASSERT_EQUAL(rig_point_device(x.ends[0]), rig_device_index(rig_host()));
      CU_ASSERT_EQUAL(x.ends[0], rig_device_last(rig_host()));
      if (cpu_ran && x.nends == 2) {
        CU_ASSERT_EQUAL(rig_point_device(x.ends[1]), rig_device_index(devs[1]));
        CU_ASSERT_EQUAL(x.ends[1], x.points[last_cpu]);
      }
      wait_ends(&x);
      for (int i = 0; i < MODEL_MEMS; i++) {
        const uint64_t *want = m.mem[i][copy_of(&m, i, run)];
        bool same = memcmp(words(out) + MODEL_WORDS * i, want, 64) == 0;
        CU_ASSERT(same);
        if (!same)
          fprintf(stderr, "seed %llu run %d memory %d (%d copies): word 0 %llu, want %llu\n",
                  (unsigned long long)seed, run, i, m.copies[i],
                  (unsigned long long)words(out)[MODEL_WORDS * i], (unsigned long long)want[0]);
      }
    }
    fr_free(&x);
    rig_program_release(p);
    rig_buffer_release(out);
    rig_desc_free(d);
  }
}

/* ---- holes ------------------------------------------------------------------- */

static size_t count_lines(const char *log, const char *prefix) {
  size_t n = 0, len = strlen(prefix);
  for (const char *l = log; l && *l;) {
    if (strncmp(l, prefix, len) == 0) n++;
    const char *nl = strchr(l, '\n');
    l = nl ? nl + 1 : l + strlen(l);
  }
  return n;
}

/* Holes of every width, add and shift, in a launch's parameters (on the
 * host and on cpu:0) and in inits, each equal to ((value + add) >> shift)
 * masked to its width, ORed over the constant bits of its bytes. Each
 * launch's refs give the address of the memory as its device addresses it;
 * memory 1 and 3 have two copies, so their holes change with the run. */
static void test_holes_fill_with_addresses_handles_and_wrapping_sums(void) {
  rig_device *devs[2] = {rig_host(), cpu0()};
  rig_desc *d = desc_of(2, rig_host_isa(), cpu_arch());
  rig_desc_add_alloc(d, 0, RIG_KIND_DEVICE, 64, RIG_COPIES_ONE);
  rig_desc_add_alloc(d, 0, RIG_KIND_DEVICE, 64, RIG_COPIES_TWO);
  rig_desc_add_alloc(d, 0, RIG_KIND_DEVICE, 64, RIG_COPIES_ONE);
  rig_desc_add_alloc(d, 0, RIG_KIND_DEVICE, 64, RIG_COPIES_TWO);
  int64_t img0 = add_pk(d, 0), img1 = add_pk(d, 1);
  rig_desc_add_input(d, 0, 512);
  rig_desc_value handle0 = rig_desc_leaf_value(rig_desc_handle(0));
  rig_desc_value handle1 = rig_desc_leaf_value(rig_desc_handle(1));
  /* Memory 2's init: memory 0's address and handle. */
  uint8_t init2[32] = {0};
  memset(init2 + 24, 0x55, 8);
  rig_desc_data *i2 = &d->memory[2].u.alloc.init;
  rig_desc_data_set(d, i2, init2, sizeof init2);
  hole(d, i2, 0, RIG_W64, addr_v(0, 0), 1, 0, 0);
  hole(d, i2, 8, RIG_W32, addr_v(0, 0), 1, 0, 32);
  hole(d, i2, 12, RIG_W32, addr_v(0, 1), 1, 16, 0);
  hole(d, i2, 16, RIG_W64, handle0, 1, 0, 0);
  /* Memory 3's init: memory 1's, of the copy. */
  uint8_t init3[16] = {0};
  rig_desc_data *i3 = &d->memory[3].u.alloc.init;
  rig_desc_data_set(d, i3, init3, sizeof init3);
  hole(d, i3, 0, RIG_W64, addr_v(1, 0), 1, 0, 0);
  hole(d, i3, 8, RIG_W64, handle1, 1, 0, 0);
  /* Step 0, on the host: its parameters as received, into input bytes 0..127. */
  rig_desc_submit *s = rig_desc_add_submit(d, NULL, 0);
  rig_desc_submit_add_fixed(d, s, rig_desc_view_of(0, 0, 64), RIG_ACCESS_READ_WRITE);
  rig_desc_submit_add_fixed(d, s, rig_desc_view_of(1, 0, 64), RIG_ACCESS_READ_WRITE);
  int64_t out = slot(d, s, rig_desc_slot_input(0));
  int64_t k0 = slot(d, s, rig_desc_slot_memory(0, 0, 64));
  int64_t k1 = slot(d, s, rig_desc_slot_memory(1, 0, 64));
  uint64_t w[16] = {0};
  w[1] = 128;
  w[10] = UINT64_C(0xDEADBEEF00000000);
  w[15] = UINT64_C(0x0123456789ABCDEF);
  rig_desc_part *part = launch(d, s, img0, "pk_dump", w, 16);
  ref(d, part, out, 0, RIG_USE_WRITE);
  ref(d, part, k0, 2, RIG_USE_READ);
  ref(d, part, k1, 3, RIG_USE_READ);
  rig_desc_data *pp = rig_desc_part_params(part);
  hole(d, pp, 32, RIG_W64, addr_v(0, 0), 1, 0, 0);
  hole(d, pp, 40, RIG_W32, addr_v(0, 0), 1, 5, 0);
  hole(d, pp, 44, RIG_W32, addr_v(0, 0), 1, 0, 32);
  hole(d, pp, 48, RIG_W64, addr_v(0, 0), 1, 3, 4);
  hole(d, pp, 56, RIG_W64, handle0, 1, 0, 0);
  hole(d, pp, 64, RIG_W64, addr_v(1, 0), 1, 0, 0);
  hole(d, pp, 72, RIG_W64, handle1, 1, 0, 0);
  hole(d, pp, 80, RIG_W32, addr_v(0, 0), 2, -1, 1);
  hole(d, pp, 88, RIG_W64, rig_desc_fixed(-8), 1, 0, 0);
  hole(d, pp, 96, RIG_W32, rig_desc_fixed(-8), 1, 0, 32);
  hole(d, pp, 100, RIG_W32, rig_desc_fixed(RIG_INT_MAX), 1, 1, 32);
  hole(d, pp, 104, RIG_W64, rig_desc_fixed(INT64_C(1) << 61), 4, 7, 0);
  hole(d, pp, 112, RIG_W64, rig_desc_fixed(-8), 1, 0, 1);
  /* Step 1, on cpu:0: memory 0's address there, into input bytes 256..287. */
  s = rig_desc_add_submit(d, NULL, 1);
  rig_desc_submit_add_fixed(d, s, rig_desc_view_of(0, 0, 64), RIG_ACCESS_READ_WRITE);
  out = slot(d, s, rig_desc_slot_input(0));
  k0 = slot(d, s, rig_desc_slot_memory(0, 0, 64));
  uint64_t wc[4] = {256, 32, 0, 0};
  part = launch(d, s, img1, "pk_dump", wc, 4);
  ref(d, part, out, 0, RIG_USE_WRITE);
  ref(d, part, k0, 2, RIG_USE_READ);
  hole(d, rig_desc_part_params(part), 24, RIG_W64, addr_v(0, 1), 1, 0, 0);
  /* Memory 2 and 3, into input bytes 384.. and 448.. */
  move_step(d, NULL, rig_desc_slot_memory(2, 0, 64), 0, rig_desc_slot_input(0), 384, 32);
  move_step(d, NULL, rig_desc_slot_memory(3, 0, 64), 0, rig_desc_slot_input(0), 448, 16);
  rig_program *p = load_ok(d, devs, 2, NULL);
  rig_buffer *in = buf(rig_host(), 512);
  uint64_t *o = words(in), copy_address[3] = {0};
  fr x;
  fr_init(&x, p, &in, 1, NULL, 0);
  for (int run = 0; run < 3; run++) {
    memset(o, 0, 512);
    run_ok(p, &x);
    wait_ends(&x);
    uint64_t a0 = o[2], a1 = o[3];
    copy_address[run] = a1;
    CU_ASSERT(a0 != 0 && a1 != 0 && a0 != a1);
    CU_ASSERT_EQUAL(o[0], (uint64_t)(uintptr_t)o);
    CU_ASSERT_EQUAL(o[1], 128);
    CU_ASSERT_EQUAL(o[4], a0);
    CU_ASSERT_EQUAL(o[5] & 0xffffffffu, (a0 + 5) & 0xffffffffu);
    CU_ASSERT_EQUAL(o[5] >> 32, a0 >> 32);
    CU_ASSERT_EQUAL(o[6], (a0 + 3) >> 4);
    CU_ASSERT_EQUAL(o[7], a0); /* host memory's handle is its address */
    CU_ASSERT_EQUAL(o[8], a1);
    CU_ASSERT_EQUAL(o[9], a1);
    CU_ASSERT_EQUAL(o[10], UINT64_C(0xDEADBEEF00000000) | ((a0 - 1) & 0xffffffffu));
    CU_ASSERT_EQUAL(o[11], UINT64_C(0xFFFFFFFFFFFFFFF8));
    CU_ASSERT_EQUAL(o[12], UINT64_C(0xC0000000FFFFFFFF));
    CU_ASSERT_EQUAL(o[13], 7);
    CU_ASSERT_EQUAL(o[14], UINT64_C(0x7FFFFFFFFFFFFFFC));
    CU_ASSERT_EQUAL(o[15], UINT64_C(0x0123456789ABCDEF));
    /* On cpu:0. */
    CU_ASSERT_EQUAL(o[32], (uint64_t)(uintptr_t)o + 256);
    CU_ASSERT_EQUAL(o[33], 32);
    CU_ASSERT_EQUAL(o[34], a0);
    CU_ASSERT_EQUAL(o[35], a0);
    /* The inits. */
    CU_ASSERT_EQUAL(o[48], a0);
    CU_ASSERT_EQUAL(o[49], ((a0 + 16) & 0xffffffffu) << 32 | a0 >> 32);
    CU_ASSERT_EQUAL(o[50], a0);
    CU_ASSERT_EQUAL(o[51], UINT64_C(0x5555555555555555));
    CU_ASSERT_EQUAL(o[56], a1);
    CU_ASSERT_EQUAL(o[57], a1);
  }
  CU_ASSERT(copy_address[0] != copy_address[1]);
  CU_ASSERT_EQUAL(copy_address[0], copy_address[2]);
  fr_free(&x);
  rig_program_release(p);
  rig_buffer_release(in);
  rig_desc_free(d);
}

/* Int holes read the run's ints each run: the sum wraps modulo 2^63, the
 * high half of -8 is 0xFFFFFFFF, a W64 of a negative value with shift 0 has
 * bit 63 set; a value meeting set bits is refused at its step. */
static void test_int_holes_wrap_and_are_refilled_each_run(void) {
  rig_device *h = rig_host();
  rig_desc *d = desc_of(1, rig_host_isa());
  int64_t img = add_pk(d, 0);
  rig_desc_add_input(d, 0, 64);
  d->ints = 2;
  rig_desc_submit *s = rig_desc_add_submit(d, NULL, 0);
  int64_t out = slot(d, s, rig_desc_slot_input(0));
  uint64_t w[8] = {0, 64, 0, 0, 0, 0, 0, UINT64_C(0xFEEDFACE00000100)};
  rig_desc_part *part = launch(d, s, img, "pk_dump", w, 8);
  ref(d, part, out, 0, RIG_USE_WRITE);
  rig_desc_data *pp = rig_desc_part_params(part);
  hole(d, pp, 16, RIG_W32, rig_desc_int(0), 1, 0, 32);
  hole(d, pp, 20, RIG_W32, rig_desc_int(0), 1, 0, 0);
  hole(d, pp, 24, RIG_W64, rig_desc_int(0), 1, 0, 0);
  hole(d, pp, 32, RIG_W64, rig_desc_int(0), 1, 0, 1);
  hole(d, pp, 40, RIG_W64, rig_desc_int(1), 4, 7, 0);
  hole(d, pp, 48, RIG_W64, rig_desc_int(0), -1, 0, 0);
  hole(d, pp, 56, RIG_W32, rig_desc_int(0), 1, 8, 0);
  rig_program *p = load_ok(d, &h, 1, NULL);
  rig_buffer *in = buf(h, 64);
  uint64_t *o = words(in);
  static const struct {
    int64_t ints[2];
    uint64_t want[6];
  } cases[] = {
      {{-8, INT64_C(1) << 61},
       {UINT64_C(0xFFFFFFF8FFFFFFFF), UINT64_C(0xFFFFFFFFFFFFFFF8), UINT64_C(0x7FFFFFFFFFFFFFFC), 7,
        8, UINT64_C(0xFEEDFACE00000100)}},
      {{5, 3},
       {UINT64_C(0x0000000500000000), 5, 2, 19, UINT64_C(0xFFFFFFFFFFFFFFFB),
        UINT64_C(0xFEEDFACE0000010D)}},
      {{RIG_INT_MAX, -1},
       {UINT64_C(0xFFFFFFFF3FFFFFFF), UINT64_C(0x3FFFFFFFFFFFFFFF), UINT64_C(0x1FFFFFFFFFFFFFFF), 3,
        UINT64_C(0xC000000000000001), UINT64_C(0xFEEDFACE00000107)}},
  };
  fr x;
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    fr_init(&x, p, &in, 1, cases[c].ints, 2);
    memset(o, 0, 64);
    run_ok(p, &x);
    for (int i = 0; i < 6; i++) {
      CU_ASSERT_EQUAL(o[2 + i], cases[c].want[i]);
      if (o[2 + i] != cases[c].want[i])
        fprintf(stderr, "case %zu word %d: %016llx, want %016llx\n", c, 2 + i,
                (unsigned long long)o[2 + i], (unsigned long long)cases[c].want[i]);
    }
    fr_free(&x);
  }
  /* 0x100 - 8 + 8 meets the constant 0x100 under the hole at byte 56. */
  int64_t meets[2] = {0x100 - 8, 0};
  fr_init(&x, p, &in, 1, meets, 2);
  rig_error err = {0};
  RIG_ASSERT_ERROR(run_fr(p, &x, NULL, 0, &err), err, RIG_EINVAL,
                   "step 0's parameters: a hole at byte 56: its value meets set bits of its bytes");
  fr_free(&x);
  int64_t fine[2] = {1, 0};
  fr_init(&x, p, &in, 1, fine, 2);
  run_ok(p, &x);
  CU_ASSERT_EQUAL(o[7], UINT64_C(0xFEEDFACE00000109));
  fr_free(&x);
  rig_program_release(p);
  rig_buffer_release(in);
  rig_desc_free(d);
}

/* A Fixed value meeting set bits of its bytes is refused at load, in a
 * step's parameters and in an init, and the load releases what it made. */
static void test_a_fixed_value_meeting_set_bits_is_refused_at_load(void) {
  rig_device *h = rig_host();
  for (int meets = 0; meets < 2; meets++) {
    rig_desc *d = desc_of(1, rig_host_isa());
    int64_t img = add_pk(d, 0);
    rig_desc_submit *s = rig_desc_add_submit(d, NULL, 0);
    uint64_t w[2] = {0, 0x10};
    rig_desc_part *part = launch(d, s, img, "pk_keep", w, 2);
    hole(d, rig_desc_part_params(part), 8, RIG_W32, rig_desc_fixed(meets ? 0x30 : 0x20), 1, 0, 0);
    rig_program *p = NULL;
    rig_error err = {0};
    if (meets)
      RIG_ASSERT_ERROR(
          rig_program_load(d, &h, 1, NULL, &p, &err), err, RIG_EINVAL,
          "step 0's parameters: a hole at byte 8: its value meets set bits of its bytes");
    else
      CU_ASSERT_EQUAL(rig_program_load(d, &h, 1, NULL, &p, &err), RIG_OK);
    rig_program_release(p);
    rig_desc_free(d);
  }
  /* An init's Address of page-aligned memory, plus 1, meets a set bit 0. */
  rig_polled *pd;
  rig_device *dev = polled_dev(&pd, "polled", false);
  rig_desc *d = desc_of(1, "polled");
  rig_desc_add_alloc(d, 0, RIG_KIND_DEVICE, 64, RIG_COPIES_ONE);
  rig_desc_add_alloc(d, 0, RIG_KIND_DEVICE, 16, RIG_COPIES_ONE);
  uint8_t init[16] = {0};
  init[8] = 1;
  rig_desc_data *i1 = &d->memory[1].u.alloc.init;
  rig_desc_data_set(d, i1, init, sizeof init);
  hole(d, i1, 8, RIG_W64, addr_v(0, 0), 1, 1, 0);
  int64_t img = add_pk(d, 0);
  rig_desc_submit *s = rig_desc_add_submit(d, NULL, 0);
  rig_desc_submit_add_fixed(d, s, rig_desc_view_of(0, 0, 64), RIG_ACCESS_READ_WRITE);
  launch(d, s, img, "pk_keep", NULL, 2);
  rig_program *p = NULL;
  rig_error err = {0};
  RIG_ASSERT_ERROR(rig_program_load(d, &dev, 1, NULL, &p, &err), err, RIG_EINVAL,
                   "memory 1: a hole at byte 8: its value meets set bits of its bytes");
  CU_ASSERT_PTR_NULL(p);
  rig_reclaim();
  const char *log = rig_polled_log(pd);
  CU_ASSERT(count_lines(log, "alloc ") >= 2);
  CU_ASSERT_EQUAL(count_lines(log, "alloc "), count_lines(log, "free "));
  rig_desc_free(d);
}

/* ---- the ints ------------------------------------------------------------------ */

/* Step 0, on the host, stores int 0 + 2 into int 1 through an Ints slot;
 * step 1's launch on cpu:0 has int 1 groups, each counting once. */
static void test_host_code_computes_an_int_that_sets_a_later_launchs_groups(void) {
  rig_device *devs[2] = {rig_host(), cpu0()};
  rig_desc *d = desc_of(2, rig_host_isa(), cpu_arch());
  int64_t img0 = add_pk(d, 0), img1 = add_pk(d, 1);
  rig_desc_add_input(d, 1, 8);
  d->ints = 2;
  rig_desc_submit *s = rig_desc_add_submit(d, NULL, 0);
  int64_t k = slot(d, s, rig_desc_slot_ints());
  uint64_t w[2] = {8, 0};
  rig_desc_part *part = launch(d, s, img0, "pk_keep", w, 2);
  ref(d, part, k, 0, RIG_USE_WRITE);
  hole(d, rig_desc_part_params(part), 8, RIG_W64, rig_desc_int(0), 1, 2, 0);
  s = rig_desc_add_submit(d, NULL, 1);
  k = slot(d, s, rig_desc_slot_input(0));
  part = launch(d, s, img1, "pk_count", NULL, 1);
  ref(d, part, k, 0, RIG_USE_WRITE);
  part->u.launch.groups[0] = rig_desc_int(1);
  rig_program *p = load_ok(d, devs, 2, NULL);
  rig_buffer *counter = buf(devs[1], 8);
  uint64_t total = 0;
  for (int64_t i = 0; i < 4; i++) {
    int64_t ints[1] = {i * 3};
    fr x;
    fr_init(&x, p, &counter, 1, ints, 1);
    run_ok(p, &x);
    wait_ends(&x);
    total += (uint64_t)(i * 3 + 2);
    CU_ASSERT_EQUAL(words(counter)[0], total);
    fr_free(&x);
  }
  rig_program_release(p);
  rig_buffer_release(counter);
  rig_desc_free(d);
}

/* ---- loops -------------------------------------------------------------------- */

/* A loop of int 0 trips storing each trip into int 1; its body counts, and
 * a step after it stores int 1. */
static void test_a_loop_of_k_trips_runs_max_0_k_times_and_stores_its_last_trip(void) {
  rig_device *h = rig_host();
  rig_desc *d = desc_of(1, rig_host_isa());
  int64_t img = add_pk(d, 0);
  rig_desc_add_input(d, 0, 16);
  d->ints = 2;
  rig_desc_step *loop = rig_desc_add_loop(d, NULL, rig_desc_int(0));
  rig_desc_loop_set_trip(loop, 1);
  count_step(d, loop, 0, img, rig_desc_slot_input(0));
  rig_desc_part *part = set_step(d, NULL, 0, img, rig_desc_slot_input(0), 1, 0, 0);
  hole(d, rig_desc_part_params(part), 16, RIG_W64, rig_desc_int(1), 1, 0, 0);
  rig_program *p = load_ok(d, &h, 1, NULL);
  rig_buffer *in = buf(h, 16);
  uint64_t *o = words(in);
  for (int64_t k = -2; k <= 6; k++) {
    int64_t ints[2] = {k, 0};
    fr x;
    fr_init(&x, p, &in, 1, ints, 2);
    o[0] = 0;
    o[1] = 99; /* the step after the loop stores int 1 here */
    run_ok(p, &x);
    CU_ASSERT_EQUAL(o[0], (uint64_t)(k > 0 ? k : 0));
    CU_ASSERT_EQUAL(o[1], (uint64_t)(k > 1 ? k - 1 : 0));
    fr_free(&x);
  }
  rig_program_release(p);
  rig_buffer_release(in);
  rig_desc_free(d);
}

/* A loop of 10 trips whose flag is byte 8 of a cpu:0 input; its body, on
 * cpu:0, counts and then, after a pause, clears the flag: the loop reads the
 * flag once that work is done, and stops. A flag of 0 runs no trip. */
static void test_a_loop_whose_body_clears_its_flag_runs_once(void) {
  rig_device *devs[2] = {rig_host(), cpu0()};
  rig_desc *d = desc_of(2, rig_host_isa(), cpu_arch());
  int64_t img = add_pk(d, 1);
  rig_desc_add_input(d, 1, 16);
  rig_desc_step *loop = rig_desc_add_loop(d, NULL, rig_desc_fixed(10));
  rig_desc_loop_set_flag(loop, rig_desc_slot_input(0), 8);
  rig_desc_submit *s = rig_desc_add_submit(d, loop, 1);
  int64_t k = slot(d, s, rig_desc_slot_input(0));
  uint64_t w[3] = {0, 8, 3000};
  rig_desc_part *part = launch(d, s, img, "pk_clear_flag", w, 3);
  ref(d, part, k, 0, RIG_USE_WRITE);
  ref(d, part, k, 1, RIG_USE_WRITE);
  rig_program *p = load_ok(d, devs, 2, NULL);
  rig_buffer *in = buf(devs[1], 16);
  uint64_t *o = words(in);
  fr x;
  fr_init(&x, p, &in, 1, NULL, 0);
  for (int run = 0; run < 4; run++) {
    uint8_t flag = run == 3 ? 0 : 1;
    o[0] = 0;
    o[1] = flag;
    run_ok(p, &x);
    wait_ends(&x);
    CU_ASSERT_EQUAL(o[0], flag);
    CU_ASSERT_EQUAL(o[1], 0);
  }
  fr_free(&x);
  rig_program_release(p);
  rig_buffer_release(in);
  rig_desc_free(d);
}

/* A polled device gated so that only the test drives its queue; each loop
 * trip's launch, there, reads the ints and writes byte t of an array with
 * int 0, where the loop stores its trip: trip 1 is stored only once trip
 * 0's launch ran, so the bytes are 00 01, never 01 01. */
static void test_a_loop_stores_its_trip_once_the_work_that_reads_the_ints_is_done(void) {
  alarm(120);
  rig_polled *pd;
  rig_device *dev = polled_dev(&pd, "polled", false);
  rig_polled_gate(pd, true);
  rig_desc *d = desc_of(1, "polled");
  int64_t img = add_pk(d, 0);
  rig_desc_add_input(d, 0, 64);
  d->ints = 1;
  rig_desc_step *loop = rig_desc_add_loop(d, NULL, rig_desc_fixed(2));
  rig_desc_loop_set_trip(loop, 0);
  rig_desc_submit *s = rig_desc_add_submit(d, loop, 0);
  int64_t ki = slot(d, s, rig_desc_slot_ints());
  int64_t ko = slot(d, s, rig_desc_slot_input(0));
  rig_desc_part *part = launch(d, s, img, "pk_trip_byte", NULL, 3);
  ref(d, part, ki, 0, RIG_USE_READ);
  ref(d, part, ko, 2, RIG_USE_WRITE);
  rig_program *p = load_ok(d, &dev, 1, NULL);
  rig_buffer *out = buf(dev, 64);
  uint8_t *o = rig_buffer_host(out);
  memset(o + 8, 0xEE, 56);
  fr x;
  fr_init(&x, p, &out, 1, NULL, 0);
  bg_run b = {.p = p, .x = &x};
  pthread_t t;
  CU_ASSERT_EQUAL_FATAL(pthread_create(&t, NULL, bg_main, &b), 0);
  drive_until_done(pd, &b);
  CU_ASSERT_TRUE(atomic_load(&b.done));
  rig_polled_gate(pd, false);
  drive_until_done(pd, &b);
  pthread_join(t, NULL);
  CU_ASSERT_EQUAL(b.st, RIG_OK);
  rig_polled_run(pd, 100);
  CU_ASSERT_EQUAL(words(out)[0], 2);
  CU_ASSERT_EQUAL(o[8], 0);
  CU_ASSERT_EQUAL(o[9], 1);
  fr_free(&x);
  rig_program_release(p);
  rig_buffer_release(out);
  rig_desc_free(d);
  alarm(0);
}

/* A launch on cpu:0 writes int 0 = 42 after a pause, through an Ints slot;
 * a later host step's hole of int 0 reads 42, not the frame's 7. */
static void test_an_int_read_follows_the_work_that_writes_it(void) {
  rig_device *devs[2] = {rig_host(), cpu0()};
  rig_desc *d = desc_of(2, rig_host_isa(), cpu_arch());
  int64_t img0 = add_pk(d, 0), img1 = add_pk(d, 1);
  rig_desc_add_input(d, 0, 8);
  d->ints = 1;
  set_step(d, NULL, 1, img1, rig_desc_slot_ints(), 0, 42, 5000);
  rig_desc_part *part = set_step(d, NULL, 0, img0, rig_desc_slot_input(0), 0, 0, 0);
  hole(d, rig_desc_part_params(part), 16, RIG_W64, rig_desc_int(0), 1, 0, 0);
  rig_program *p = load_ok(d, devs, 2, NULL);
  rig_buffer *in = buf(rig_host(), 8);
  int64_t ints[1] = {7};
  fr x;
  fr_init(&x, p, &in, 1, ints, 1);
  for (int run = 0; run < 3; run++) {
    words(in)[0] = 0;
    run_ok(p, &x);
    CU_ASSERT_EQUAL(words(in)[0], 42);
    wait_ends(&x);
  }
  fr_free(&x);
  rig_program_release(p);
  rig_buffer_release(in);
  rig_desc_free(d);
}

/* ---- what a run waits for --------------------------------------------------------- */

/* Three runs of a program whose one step counts into memory of a gated
 * polled device: with two copies, run 2 waits for run 0's work on copy 0,
 * and returns once the test runs that work; with one copy, no run waits,
 * unless the step uses the ints, which always have two copies. */
static void test_two_copy_runs_wait_for_run_n_minus_2_and_one_copy_runs_do_not(void) {
  alarm(120);
  for (int variant = 0; variant < 3; variant++) {
    bool two = variant == 1, ints = variant == 2;
    rig_polled *pd;
    rig_device *dev = polled_dev(&pd, "polled", false);
    rig_polled_gate(pd, true);
    rig_desc *d = desc_of(1, "polled");
    rig_desc_add_alloc(d, 0, RIG_KIND_DEVICE, 64, two ? RIG_COPIES_TWO : RIG_COPIES_ONE);
    d->ints = ints ? 1 : 0;
    int64_t img = add_pk(d, 0);
    count_step(d, NULL, 0, img, ints ? rig_desc_slot_ints() : rig_desc_slot_memory(0, 0, 64));
    rig_program *p = load_ok(d, &dev, 1, NULL);
    fr x;
    fr_init(&x, p, NULL, 0, NULL, 0);
    for (int run = 0; run < 3; run++) {
      bg_run b = {.p = p, .x = &x};
      pthread_t t;
      CU_ASSERT_EQUAL_FATAL(pthread_create(&t, NULL, bg_main, &b), 0);
      if ((two || ints) && run == 2) {
        /* Run 2 waits: seen asleep on the device's point (the gate is
         * closed, nothing there runs), not done. */
        rig_wait w = rig_wait_begin(RIG_HANG_S);
        while (!atomic_load(&b.done) && rig_polled_sleepers(pd) == 0 && rig_wait_more(&w)) {
        }
        CU_ASSERT(rig_polled_sleepers(pd) > 0);
        CU_ASSERT_FALSE(atomic_load(&b.done));
        CU_ASSERT_EQUAL(rig_polled_queued(pd), 2);
        CU_ASSERT_EQUAL(rig_polled_run(pd, 1), 1); /* run 0's work */
      }
      CU_ASSERT_TRUE(wait_done(&b.done));
      if (!atomic_load(&b.done)) { /* unblock it, to join */
        rig_polled_gate(pd, false);
        drive_until_done(pd, &b);
      }
      pthread_join(t, NULL);
      CU_ASSERT_EQUAL(b.st, RIG_OK);
    }
    CU_ASSERT_EQUAL(rig_polled_queued(pd), two || ints ? 2u : 3u);
    rig_polled_gate(pd, false);
    rig_polled_run(pd, 100);
    fr_free(&x);
    rig_program_release(p);
    rig_desc_free(d);
  }
  alarm(0);
}

/* A program of a polled device A leaves an unreached point w. A run given
 * waits = {w}: the first submission of polled device B (which waits in its
 * queue) carries w, its second does not, and the move (made by the host, on
 * memory no step wrote) waits for w, which drives A forward. A run whose
 * first step is the host's also returns with w reached. */
static void test_waits_are_followed_by_each_devices_first_submission_and_each_move(void) {
  alarm(120);
  rig_polled *pa, *pb;
  rig_device *a = polled_dev(&pa, "polled", false), *b = polled_dev(&pb, "polled", true);
  rig_desc *da = desc_of(1, "polled");
  rig_desc_add_alloc(da, 0, RIG_KIND_DEVICE, 64, RIG_COPIES_ONE);
  count_step(da, NULL, 0, add_pk(da, 0), rig_desc_slot_memory(0, 0, 64));
  rig_program *pa_prog = load_ok(da, &a, 1, NULL);
  fr xa;
  fr_init(&xa, pa_prog, NULL, 0, NULL, 0);
  run_ok(pa_prog, &xa);
  rig_point w = xa.ends[0];
  CU_ASSERT_EQUAL(xa.nends, 1);
  CU_ASSERT_FALSE(rig_point_reached(w));

  rig_device *devs[2] = {rig_host(), b};
  rig_desc *d = desc_of(2, rig_host_isa(), "polled");
  for (int i = 0; i < 3; i++) rig_desc_add_alloc(d, 1, RIG_KIND_DEVICE, 64, RIG_COPIES_ONE);
  int64_t img = add_pk(d, 1);
  count_step(d, NULL, 1, img, rig_desc_slot_memory(0, 0, 64));
  count_step(d, NULL, 1, img, rig_desc_slot_memory(0, 0, 64));
  move_step(d, NULL, rig_desc_slot_memory(1, 0, 64), 0, rig_desc_slot_memory(2, 0, 64), 0, 64);
  rig_program *p = load_ok(d, devs, 2, NULL);
  rig_polled_log_clear(pb);
  fr x;
  fr_init(&x, p, NULL, 0, NULL, 0);
  rig_error err = {0};
  CU_ASSERT_EQUAL(run_fr(p, &x, &w, 1, &err), RIG_OK);
  CU_ASSERT_TRUE(rig_point_reached(w));
  char line[128];
  snprintf(line, sizeof line, "submit %llu waits %s@%llu",
           (unsigned long long)rig_point_value(x.points[0]), rig_device_name(a),
           (unsigned long long)rig_point_value(w));
  CU_ASSERT(rig_polled_log_find(pb, line) >= 0);
  snprintf(line, sizeof line, "submit %llu waits",
           (unsigned long long)rig_point_value(x.points[1]));
  CU_ASSERT(rig_polled_log_find(pb, line) >= 0);
  if (rig_polled_log_find(pb, line) < 0) fprintf(stderr, "the log:\n%s", rig_polled_log(pb));
  CU_ASSERT_EQUAL(x.nends, 2);
  CU_ASSERT_EQUAL(rig_point_device(x.ends[0]), rig_device_index(rig_host()));
  CU_ASSERT_EQUAL(x.ends[1], x.points[1]);
  CU_ASSERT_EQUAL(rig_polled_run(pb, 10), 2);
  fr_free(&x);
  rig_program_release(p);
  rig_desc_free(d);

  run_ok(pa_prog, &xa);
  w = xa.ends[0];
  CU_ASSERT_FALSE(rig_point_reached(w));
  rig_device *h = rig_host();
  d = desc_of(1, rig_host_isa());
  rig_desc_add_alloc(d, 0, RIG_KIND_DEVICE, 64, RIG_COPIES_ONE);
  count_step(d, NULL, 0, add_pk(d, 0), rig_desc_slot_memory(0, 0, 64));
  p = load_ok(d, &h, 1, NULL);
  fr_init(&x, p, NULL, 0, NULL, 0);
  CU_ASSERT_EQUAL(run_fr(p, &x, &w, 1, &err), RIG_OK);
  CU_ASSERT_TRUE(rig_point_reached(w));
  fr_free(&x);
  rig_program_release(p);
  rig_desc_free(d);
  fr_free(&xa);
  rig_program_release(pa_prog);
  rig_desc_free(da);
  alarm(0);
}

/* ---- load's refusals --------------------------------------------------------------- */

static void assert_load_refused(const rig_desc *d, rig_device *const *devs, size_t n,
                                const rig_rails *rails, rig_status code, const char *message) {
  rig_program *p = NULL;
  rig_error err = {0};
  RIG_ASSERT_ERROR(rig_program_load(d, devs, n, rails, &p, &err), err, code, message);
  CU_ASSERT_PTR_NULL(p);
  if (p) rig_program_release(p);
}

static void test_load_refuses_devices_that_do_not_fit_the_description(void) {
  rig_device *devs[2] = {rig_host(), cpu0()};
  rig_desc *d = desc_of(1, rig_host_isa());
  assert_load_refused(d, devs, 2, NULL, RIG_EINVAL, "2 devices for a program of 1");
  assert_load_refused(d, devs, 0, NULL, RIG_EINVAL, "0 devices for a program of 1");
  rig_desc_free(d);
  char want[160];
  d = desc_of(2, rig_host_isa(), "nope");
  snprintf(want, sizeof want, "device 1: cpu:0 is \"%s\", not \"nope\"", cpu_arch());
  assert_load_refused(d, devs, 2, NULL, RIG_EINVAL, want);
  rig_desc_free(d);
  d = desc_of(1, cpu_arch());
  snprintf(want, sizeof want, "device 0: host is \"%s\", not \"%s\"", rig_host_isa(), cpu_arch());
  assert_load_refused(d, devs, 1, NULL, RIG_EINVAL, want);
  rig_desc_free(d);
  rig_test_skip("load refuses devices that do not fit the description",
                "`devices of several machines` needs devices of another machine, which only an "
                "MPI job's proxies give; the distributed suites check it");
}

static const rig_rail_end *only_rail_5(void *ctx, int64_t id) {
  return id == 5 ? ctx : NULL;
}

static void test_load_refuses_a_rail_this_machine_does_not_give(void) {
  rig_device *h = rig_host();
  rig_desc *d = desc_of(1, rig_host_isa());
  rig_desc_add_rail(d, 7, RIG_AREA_COUNTS);
  assert_load_refused(d, &h, 1, NULL, RIG_EINVAL, "no rail 7 on this machine");
  rig_desc_free(d);
  /* A Ready leaf of rail 9 where the rails give only rail 5. */
  rig_buffer *counts = buf(h, RIG_RAIL_COUNTS_BYTES), *area = buf(h, 256);
  rig_rail_end end = {area, area, counts, NULL};
  rig_rails rails = {only_rail_5, &end};
  d = desc_of(1, rig_host_isa());
  rig_desc_submit *s = rig_desc_add_submit(d, NULL, 0);
  uint64_t w[2] = {0, 0};
  rig_desc_submit_add_fill(d, s, rig_desc_ready(9), w, sizeof w);
  assert_load_refused(d, &h, 1, &rails, RIG_EINVAL, "no rail 9 on this machine");
  assert_load_refused(d, &h, 1, NULL, RIG_EINVAL, "no rail 9 on this machine");
  rig_desc_free(d);
  rig_buffer_release(counts);
  rig_buffer_release(area);
}

/* A structural rule is refused before anything is made: the polled
 * device's log stays empty. */
static void test_load_refuses_a_broken_rule_before_it_makes_anything(void) {
  rig_polled *pd;
  rig_device *dev = polled_dev(&pd, "polled", false);
  rig_desc *d = desc_of(1, "polled");
  rig_desc_add_alloc(d, 0, RIG_KIND_DEVICE, 64, RIG_COPIES_ONE);
  add_pk(d, 0);
  d->ints = -1;
  rig_polled_log_clear(pd);
  assert_load_refused(d, &dev, 1, NULL, RIG_EINVAL, "-1 ints");
  d->ints = 0;
  count_step(d, NULL, 0, 0, rig_desc_slot_memory(0, 0, 128));
  assert_load_refused(d, &dev, 1, NULL, RIG_EINVAL,
                      "step 0: memory 0: a view of 128 bytes at 0 outside its 64 bytes");
  CU_ASSERT_STRING_EQUAL(rig_polled_log(pd), "");
  rig_desc_free(d);
}

static void test_load_refuses_a_function_an_image_does_not_have(void) {
  rig_device *devs[2] = {rig_host(), cpu0()};
  rig_desc *d = desc_of(2, rig_host_isa(), cpu_arch());
  int64_t img = add_pk(d, 0);
  rig_desc_submit *s = rig_desc_add_submit(d, NULL, 0);
  launch(d, s, img, "pk_absent", NULL, 1);
  assert_load_refused(d, devs, 2, NULL, RIG_EREFUSED,
                      "host: image 0 has no function \"pk_absent\"");
  rig_desc_free(d);
  d = desc_of(2, rig_host_isa(), cpu_arch());
  add_pk(d, 0);
  img = add_pk(d, 1);
  s = rig_desc_add_submit(d, NULL, 1);
  uint64_t w = 0;
  rig_desc_submit_add_fill(d, s, rig_desc_entry(img, "pk_absent_fill"), &w, 8);
  assert_load_refused(d, devs, 2, NULL, RIG_EREFUSED,
                      "cpu:0: image 1 has no function \"pk_absent_fill\"");
  rig_desc_free(d);
}

static void test_load_refuses_an_image_its_device_refuses(void) {
  rig_device *devs[2] = {rig_host(), cpu0()};
  for (int on = 0; on < 2; on++) {
    rig_desc *d = desc_of(2, rig_host_isa(), cpu_arch());
    static const char garbage[] = "not an image at all";
    rig_desc_add_image(d, on, garbage, sizeof garbage);
    rig_program *p = NULL;
    rig_error err = {0};
    CU_ASSERT_EQUAL(rig_program_load(d, devs, 2, NULL, &p, &err), RIG_EREFUSED);
    /* The device's name first, as every refusal, then the image. */
    char want[96];
    snprintf(want, sizeof want, "%s: image 0: ", rig_device_name(devs[on]));
    CU_ASSERT_NSTRING_EQUAL(err.message, want, strlen(want));
    CU_ASSERT_PTR_NULL(p);
    rig_desc_free(d);
  }
}

/* Two images of two binaries on one device, each launched by name. */
static void test_each_image_of_a_program_keeps_its_own_functions(void) {
  rig_device *h = rig_host();
  rig_desc *d = desc_of(1, rig_host_isa());
  rig_desc_add_input(d, 0, 16);
  int64_t k_img = add_kernels(d, 0), pk_img = add_pk(d, 0);
  rig_desc_submit *s = rig_desc_add_submit(d, NULL, 0);
  int64_t k = slot(d, s, rig_desc_slot_input(0));
  rig_desc_part *part = launch(d, s, k_img, "add_u64", NULL, 2);
  ref(d, part, k, 0, RIG_USE_WRITE);
  hole(d, rig_desc_part_params(part), 8, RIG_W64, rig_desc_fixed(3), 1, 0, 0);
  count_step(d, NULL, 0, pk_img, rig_desc_slot_input(0));
  rig_program *p = NULL;
  rig_error err = {0};
  rig_status st = rig_program_load(d, &h, 1, NULL, &p, &err);
  if (st != RIG_OK) fprintf(stderr, "load: %s\n", err.message);
  CU_ASSERT_EQUAL(st, RIG_OK);
  if (p) {
    rig_buffer *in = buf(h, 16);
    fr x;
    fr_init(&x, p, &in, 1, NULL, 0);
    run_ok(p, &x);
    CU_ASSERT_EQUAL(words(in)[0], 4);
    fr_free(&x);
    rig_program_release(p);
    rig_buffer_release(in);
  }
  rig_desc_free(d);
}

/* ---- what load refuses before it makes anything ---------------------------------------- */

#define MIB (UINT64_C(1) << 20)

/* A polled device (a budget of 1 GiB) refuses memory of parts each below
 * it, counting two copies twice and the images; the host refuses ints of
 * 2^59 words, held twice. Nothing is made. */
static void test_load_refuses_what_exceeds_a_devices_budget_before_it_makes_anything(void) {
  rig_polled *pd;
  rig_device *dev = polled_dev(&pd, "polled", false);
  char want[160];
  rig_desc *d = desc_of(1, "polled");
  for (int i = 0; i < 3; i++) rig_desc_add_alloc(d, 0, RIG_KIND_DEVICE, 400 * MIB, RIG_COPIES_ONE);
  snprintf(want, sizeof want, "out of memory: 1.172 GiB for %s, which has 1 GiB",
           rig_device_name(dev));
  assert_load_refused(d, &dev, 1, NULL, RIG_ENOMEM, want);
  rig_desc_free(d);
  d = desc_of(1, "polled");
  rig_desc_add_alloc(d, 0, RIG_KIND_DEVICE, 600 * MIB, RIG_COPIES_TWO);
  assert_load_refused(d, &dev, 1, NULL, RIG_ENOMEM, want);
  rig_desc_free(d);
  /* 100 bytes past the budget: in bytes, as both round to 1 GiB. */
  d = desc_of(1, "polled");
  rig_desc_add_alloc(d, 0, RIG_KIND_DEVICE, 1024 * MIB - 100, RIG_COPIES_ONE);
  static const char image[200] = "not an image";
  rig_desc_add_image(d, 0, image, sizeof image);
  snprintf(want, sizeof want, "out of memory: 1073741924 bytes for %s, which has 1073741824 bytes",
           rig_device_name(dev));
  assert_load_refused(d, &dev, 1, NULL, RIG_ENOMEM, want);
  rig_desc_free(d);
  CU_ASSERT_STRING_EQUAL(rig_polled_log(pd), "");
  /* The ints are the host's, whichever devices the program has. */
  d = desc_of(1, "polled");
  d->ints = INT64_C(1) << 59;
  rig_program *p = NULL;
  rig_error err = {0};
  CU_ASSERT_EQUAL(rig_program_load(d, &dev, 1, NULL, &p, &err), RIG_ENOMEM);
  const char *prefix = "out of memory: 8 EiB for host, which has ";
  CU_ASSERT_NSTRING_EQUAL(err.message, prefix, strlen(prefix));
  CU_ASSERT_PTR_NULL(p);
  rig_desc_free(d);
}

/* A host step whose one launch (pk_keep) has the geometry `set` makes:
 * step 2, after a step and a loop of zero trips. */
static rig_desc *geometry_program(const char *arch, void (*set)(rig_desc_part *)) {
  rig_desc *d = desc_of(1, arch);
  int64_t img = add_pk(d, 0);
  d->ints = 1;
  launch(d, rig_desc_add_submit(d, NULL, 0), img, "pk_keep", NULL, 2);
  rig_desc_step *loop = rig_desc_add_loop(d, NULL, rig_desc_fixed(0));
  rig_desc_submit *s = rig_desc_add_submit(d, loop, 0);
  launch(d, s, img, "pk_keep", NULL, 2);
  set(launch(d, s, img, "pk_keep", NULL, 2));
  return d;
}

static void groups_0_1_1(rig_desc_part *p) {
  p->u.launch.groups[0] = rig_desc_fixed(0);
}
static void threads_1_0_1(rig_desc_part *p) {
  p->u.launch.threads[1] = rig_desc_fixed(0);
}
static void groups_int_0_1(rig_desc_part *p) {
  p->u.launch.groups[0] = rig_desc_int(0);
  p->u.launch.groups[1] = rig_desc_fixed(0);
}
static void shared_past_the_device(rig_desc_part *p) {
  p->u.launch.shared = rig_desc_fixed(48 * 1024 + 1);
}
static void threads_65(rig_desc_part *p) {
  p->u.launch.threads[0] = rig_desc_fixed(65);
}
static void threads_int_65(rig_desc_part *p) {
  p->u.launch.threads[0] = rig_desc_int(0);
  p->u.launch.threads[2] = rig_desc_fixed(65);
}
static void threads_int_64(rig_desc_part *p) {
  p->u.launch.threads[0] = rig_desc_int(0);
  p->u.launch.threads[2] = rig_desc_fixed(64);
}
static void groups_2_40(rig_desc_part *p) {
  p->u.launch.groups[1] = rig_desc_fixed(INT64_C(1) << 40);
}
static void shared_minus_1(rig_desc_part *p) {
  p->u.launch.shared = rig_desc_fixed(-1);
}

/* Zero dimensions and shared memory past the device's, with or without an
 * Int beside them, are refused by the run's own rule, naming the step and
 * part, before anything is made. */
static void test_load_refuses_a_launch_geometry_that_every_run_refuses(void) {
  static const struct {
    void (*set)(rig_desc_part *);
    const char *message;
  } cases[] = {
      {groups_0_1_1, "step 2: part 1: groups (0, 1, 1) with a zero dimension"},
      {threads_1_0_1, "step 2: part 1: threads (1, 0, 1) with a zero dimension"},
      {groups_int_0_1, "step 2: part 1: groups (1, 0, 1) with a zero dimension"},
      {shared_past_the_device,
       "step 2: part 1: 49153 bytes of shared memory, more than polled:%u's 49152"},
  };
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    rig_polled *pd;
    rig_device *dev = polled_dev(&pd, "polled", false);
    unsigned n = 0;
    CU_ASSERT_EQUAL(sscanf(rig_device_name(dev), "polled:%u", &n), 1);
    char want[160];
    snprintf(want, sizeof want, cases[c].message, n);
    rig_desc *d = geometry_program("polled", cases[c].set);
    assert_load_refused(d, &dev, 1, NULL, RIG_EREFUSED, want);
    CU_ASSERT_STRING_EQUAL(rig_polled_log(pd), "");
    rig_desc_free(d);
  }
  rig_device *h = rig_host();
  rig_desc *d = geometry_program(rig_host_isa(), groups_0_1_1);
  assert_load_refused(d, &h, 1, NULL, RIG_EREFUSED,
                      "step 2: part 1: groups (0, 1, 1) with a zero dimension");
  rig_desc_free(d);
}

/* Constant threads past its function's 64 are refused once the function
 * is known (its image loaded), and what load made is released; an Int
 * beside constants within it loads. */
static void test_load_refuses_constant_threads_past_its_functions_limit(void) {
  rig_polled *pd;
  rig_polled_options opt = {.arch = "polled", .max_threads = 64};
  rig_device *dev = NULL;
  rig_error err;
  CU_ASSERT_EQUAL_FATAL(rig_polled_open(&opt, &dev, &pd, &err), RIG_OK);
  rig_desc *d = geometry_program("polled", threads_65);
  rig_desc_add_alloc(d, 0, RIG_KIND_DEVICE, 64, RIG_COPIES_ONE);
  assert_load_refused(d, &dev, 1, NULL, RIG_EREFUSED,
                      "step 2: part 1: threads (65, 1, 1), more than its function's 64");
  rig_desc_free(d);
  d = geometry_program("polled", threads_int_65);
  assert_load_refused(d, &dev, 1, NULL, RIG_EREFUSED,
                      "step 2: part 1: threads (1, 1, 65), more than its function's 64");
  rig_desc_free(d);
  rig_reclaim();
  const char *log = rig_polled_log(pd);
  CU_ASSERT_EQUAL(count_lines(log, "alloc "), 1);
  CU_ASSERT_EQUAL(count_lines(log, "free "), 1);
  d = geometry_program("polled", threads_int_64);
  rig_program *p = load_ok(d, &dev, 1, NULL);
  rig_program_release(p);
  rig_desc_free(d);
}

/* A constant size past 32 bits is a refusal of the step before anything
 * is made; a Handle's value, known once its memory is made, is refused
 * then, and what load made is released. */
static void test_load_refuses_constant_geometry_past_32_bits(void) {
  rig_polled *pd;
  rig_device *dev = polled_dev(&pd, "polled", false);
  rig_desc *d = geometry_program("polled", groups_2_40);
  rig_desc_add_alloc(d, 0, RIG_KIND_DEVICE, 64, RIG_COPIES_ONE);
  assert_load_refused(
      d, &dev, 1, NULL, RIG_EREFUSED,
      "step 2: part 1: a launch's groups of 1099511627776, outside 0 to 4294967295");
  rig_desc_free(d);
  d = geometry_program("polled", shared_minus_1);
  assert_load_refused(d, &dev, 1, NULL, RIG_EREFUSED,
                      "step 2: part 1: a launch's shared memory of -1, outside 0 to 4294967295");
  rig_desc_free(d);
  CU_ASSERT_STRING_EQUAL(rig_polled_log(pd), "");
  /* Threads of a Handle of the memory the step names whole: an address of
   * page-aligned host memory, past 32 bits. */
  d = desc_of(1, "polled");
  rig_desc_add_alloc(d, 0, RIG_KIND_DEVICE, 64, RIG_COPIES_ONE);
  int64_t img = add_pk(d, 0);
  rig_desc_submit *s = rig_desc_add_submit(d, NULL, 0);
  int64_t k = slot(d, s, rig_desc_slot_memory(0, 0, 64));
  rig_desc_part *part = launch(d, s, img, "pk_keep", NULL, 2);
  ref(d, part, k, 0, RIG_USE_READ);
  part->u.launch.threads[0] = rig_desc_leaf_value(rig_desc_handle(0));
  rig_program *p = NULL;
  rig_error err = {0};
  CU_ASSERT_EQUAL(rig_program_load(d, &dev, 1, NULL, &p, &err), RIG_EREFUSED);
  const char *prefix = "step 0: part 0: a launch's threads of ";
  CU_ASSERT_NSTRING_EQUAL(err.message, prefix, strlen(prefix));
  CU_ASSERT_PTR_NULL(p);
  rig_reclaim();
  const char *log = rig_polled_log(pd);
  CU_ASSERT_EQUAL(count_lines(log, "alloc "), 1);
  CU_ASSERT_EQUAL(count_lines(log, "free "), 1);
  rig_desc_free(d);
}

/* ---- the frame ------------------------------------------------------------------------ */

static void assert_run_refused(rig_program *p, fr *x, const char *message) {
  rig_error err = {0};
  x->nends = 99;
  RIG_ASSERT_ERROR(run_fr(p, x, NULL, 0, &err), err, RIG_EINVAL, message);
  CU_ASSERT_EQUAL(x->nends, 0);
}

/* A host step stores 5 into input 0: each refused frame leaves it as it
 * was (77). */
static void test_a_frame_that_does_not_fit_is_refused_before_any_step(void) {
  rig_device *h = rig_host(), *c = cpu0();
  rig_desc *d = desc_of(1, rig_host_isa());
  rig_desc_add_input(d, 0, 64);
  d->ints = 2;
  set_step(d, NULL, 0, add_pk(d, 0), rig_desc_slot_input(0), 0, 5, 0);
  rig_program *p = load_ok(d, &h, 1, NULL);
  rig_buffer *in = buf(h, 64), *in63 = buf(h, 63), *in65 = buf(h, 65), *on_cpu = buf(c, 64);
  rig_buffer *ro = NULL;
  CU_ASSERT_EQUAL_FATAL(rig_buffer_read_only(in, &ro, NULL), RIG_OK);
  rig_buffer *all[5] = {in, in63, in65, on_cpu, ro};
  for (int i = 0; i < 5; i++) words(all[i])[0] = 77;
  fr x;
  rig_buffer *two[2] = {in, in};
  fr_init(&x, p, two, 0, NULL, 0);
  assert_run_refused(p, &x, "0 inputs for a program of 1");
  x.f.ninputs = 2;
  assert_run_refused(p, &x, "2 inputs for a program of 1");
  x.f.ninputs = 1;
  x.f.inputs = &on_cpu;
  assert_run_refused(p, &x, "input 0: a buffer of cpu:0, not host");
  x.f.inputs = &in63;
  assert_run_refused(p, &x, "input 0: 63 bytes, fewer than 64");
  x.f.inputs = &ro;
  assert_run_refused(p, &x, "input 0: read-only memory the run writes");
  x.f.inputs = &in;
  int64_t ints[3] = {1, 2, 3};
  x.f.ints = ints;
  x.f.nints = 3;
  assert_run_refused(p, &x, "3 ints for a program of 2");
  x.f.nints = 2;
  x.f.nstep_points = 0;
  assert_run_refused(p, &x, "0 step points for a program of 1 Submit steps");
  rig_point more[2];
  x.f.step_points = more;
  x.f.nstep_points = 2;
  assert_run_refused(p, &x, "2 step points for a program of 1 Submit steps");
  for (int i = 0; i < 5; i++) CU_ASSERT_EQUAL(words(all[i])[0], 77);
  /* 65 bytes is fine, and so is a read-only input the run only reads. */
  x.f.step_points = x.points;
  x.f.nstep_points = x.npoints;
  x.f.inputs = &in65;
  run_ok(p, &x);
  CU_ASSERT_EQUAL(words(in65)[0], 5);
  fr_free(&x);
  rig_program_release(p);
  rig_desc_free(d);
  d = desc_of(1, rig_host_isa());
  rig_desc_add_input(d, 0, 8);
  rig_desc_add_input(d, 0, 8);
  rig_desc_submit *s = rig_desc_add_submit(d, NULL, 0);
  int64_t ks = slot(d, s, rig_desc_slot_input(0)), kd = slot(d, s, rig_desc_slot_input(1));
  uint64_t w[3] = {0, 0, 1};
  rig_desc_part *part = launch(d, s, add_pk(d, 0), "pk_copy", w, 3);
  ref(d, part, ks, 0, RIG_USE_READ);
  ref(d, part, kd, 1, RIG_USE_WRITE);
  p = load_ok(d, &h, 1, NULL);
  rig_buffer *pair[2] = {ro, in63};
  fr_init(&x, p, pair, 2, NULL, 0);
  run_ok(p, &x);
  CU_ASSERT_EQUAL(words(in63)[0], 77);
  pair[0] = in63;
  pair[1] = ro;
  assert_run_refused(p, &x, "input 1: read-only memory the run writes");
  fr_free(&x);
  rig_program_release(p);
  rig_desc_free(d);
  for (int i = 0; i < 5; i++) rig_buffer_release(all[i]);
}

/* What pk_swap_frame reads (program_kernels.c has the same). */
typedef struct pk_swap_ctl {
  rig_buffer **inputs;
  rig_buffer *replacement;
  uint64_t index;
  int64_t *ints;
  int64_t new_int;
  uint64_t calls;
} pk_swap_ctl;

/* Step 0, host code, changes the caller's inputs and ints arrays during the
 * run; step 1, on cpu:0 after a pause, stores int 0 into input 0; after the
 * run returns the caller changes them again: the run uses what it read
 * before its first step. */
static void test_a_change_to_the_frame_during_or_after_a_run_changes_nothing_in_it(void) {
  rig_device *devs[2] = {rig_host(), cpu0()};
  rig_buffer *orig = buf(devs[1], 8), *repl = buf(devs[1], 8), *later = buf(devs[1], 8);
  rig_buffer *inputs[1] = {orig};
  int64_t ints[1] = {5};
  pk_swap_ctl ctl = {inputs, repl, 0, ints, 99, 0};
  rig_desc *d = desc_of(2, rig_host_isa(), cpu_arch());
  rig_desc_add_input(d, 1, 8);
  d->ints = 1;
  int64_t img0 = add_pk(d, 0), img1 = add_pk(d, 1);
  rig_desc_submit *s = rig_desc_add_submit(d, NULL, 0);
  uint64_t w[1] = {(uint64_t)(uintptr_t)&ctl};
  launch(d, s, img0, "pk_swap_frame", w, 1);
  rig_desc_part *part = set_step(d, NULL, 1, img1, rig_desc_slot_input(0), 0, 0, 20000);
  hole(d, rig_desc_part_params(part), 16, RIG_W64, rig_desc_int(0), 1, 0, 0);
  rig_program *p = load_ok(d, devs, 2, NULL);
  fr x;
  fr_init(&x, p, inputs, 1, ints, 1);
  run_ok(p, &x);
  CU_ASSERT_EQUAL(ctl.calls, 1);
  CU_ASSERT_PTR_EQUAL(inputs[0], repl);
  inputs[0] = later;
  ints[0] = 1234;
  wait_ends(&x);
  CU_ASSERT_EQUAL(words(orig)[0], 5);
  CU_ASSERT_EQUAL(words(repl)[0], 0);
  CU_ASSERT_EQUAL(words(later)[0], 0);
  fr_free(&x);
  rig_program_release(p);
  rig_desc_free(d);
  rig_buffer_release(orig);
  rig_buffer_release(repl);
  rig_buffer_release(later);
}

/* ---- runs of one program, offsets, errors at a step, release ----------------------------- */

typedef struct turns {
  rig_program *p;
  rig_buffer *in;
  rig_status st;
} turns;

static void *turns_main(void *arg) {
  turns *t = arg;
  fr x;
  fr_init(&x, t->p, &t->in, 1, NULL, 0);
  for (int i = 0; i < 20 && t->st == RIG_OK; i++) t->st = run_fr(t->p, &x, NULL, 0, NULL);
  fr_free(&x);
  return NULL;
}

/* Two threads run one program 20 times each; its host step (a fill) reads
 * a word, pauses, and writes it plus one: runs take turns, so no count is
 * lost. */
static void test_runs_of_one_program_from_two_threads_take_turns(void) {
  alarm(120);
  rig_device *h = rig_host();
  rig_desc *d = desc_of(1, rig_host_isa());
  rig_desc_add_input(d, 0, 8);
  rig_desc_submit *s = rig_desc_add_submit(d, NULL, 0);
  int64_t k = slot(d, s, rig_desc_slot_input(0));
  uint64_t w[2] = {0, 200};
  /* A fill: the host runs it on the calling thread, as it would a launch of
   * one group (whose per-thread scratch the core keeps past the thread). */
  rig_desc_part *part =
      rig_desc_submit_add_fill(d, s, rig_desc_entry(add_pk(d, 0), "pk_fill_bump"), w, sizeof w);
  ref(d, part, k, 0, RIG_USE_WRITE);
  rig_program *p = load_ok(d, &h, 1, NULL);
  rig_buffer *in = buf(h, 8);
  turns t[2] = {{p, in, RIG_OK}, {p, in, RIG_OK}};
  pthread_t th[2];
  for (int i = 0; i < 2; i++)
    CU_ASSERT_EQUAL_FATAL(pthread_create(&th[i], NULL, turns_main, &t[i]), 0);
  for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
  CU_ASSERT_EQUAL(t[0].st, RIG_OK);
  CU_ASSERT_EQUAL(t[1].st, RIG_OK);
  CU_ASSERT_EQUAL(words(in)[0], 40);
  rig_program_release(p);
  rig_buffer_release(in);
  rig_desc_free(d);
  alarm(0);
}

/* In a loop of 4 trips storing its trip into int 0, a Copy part and a Move
 * whose offsets read int 0 reverse 4 words. */
static void test_copy_and_move_offsets_move_with_the_loops_trips(void) {
  rig_device *h = rig_host();
  rig_desc *d = desc_of(1, rig_host_isa());
  rig_desc_add_alloc(d, 0, RIG_KIND_DEVICE, 32, RIG_COPIES_ONE);
  uint64_t init[4] = {10, 11, 12, 13};
  rig_desc_data_set(d, &d->memory[0].u.alloc.init, init, sizeof init);
  for (int i = 0; i < 3; i++) rig_desc_add_input(d, 0, 32);
  d->ints = 1;
  rig_desc_step *loop = rig_desc_add_loop(d, NULL, rig_desc_fixed(4));
  rig_desc_loop_set_trip(loop, 0);
  rig_desc_submit *s = rig_desc_add_submit(d, loop, 0);
  slot(d, s, rig_desc_slot_input(0));
  slot(d, s, rig_desc_slot_input(1));
  rig_desc_part *c = rig_desc_submit_add_copy(d, s, 0, 1, 8);
  rig_desc_terms_add(d, &c->u.copy.src_offset, rig_desc_int(0), 8);
  rig_desc_terms_add(d, &c->u.copy.dst_offset, rig_desc_int(0), -8);
  rig_desc_terms_add(d, &c->u.copy.dst_offset, rig_desc_fixed(3), 8);
  rig_desc_step *m =
      move_step(d, loop, rig_desc_slot_memory(0, 0, 32), 0, rig_desc_slot_input(2), 0, 8);
  rig_desc_terms_add(d, &m->u.move.src_offset, rig_desc_int(0), 8);
  rig_desc_terms_add(d, &m->u.move.dst_offset, rig_desc_int(0), -8);
  rig_desc_terms_add(d, &m->u.move.dst_offset, rig_desc_fixed(24), 1);
  rig_program *p = load_ok(d, &h, 1, NULL);
  rig_buffer *in[3] = {buf(h, 32), buf(h, 32), buf(h, 32)};
  for (int i = 0; i < 4; i++) words(in[0])[i] = (uint64_t)i + 1;
  fr x;
  fr_init(&x, p, in, 3, NULL, 0);
  run_ok(p, &x);
  for (int i = 0; i < 4; i++) {
    CU_ASSERT_EQUAL(words(in[1])[i], (uint64_t)(4 - i));
    CU_ASSERT_EQUAL(words(in[2])[i], (uint64_t)(13 - i));
  }
  fr_free(&x);
  rig_program_release(p);
  for (int i = 0; i < 3; i++) rig_buffer_release(in[i]);
  rig_desc_free(d);
}

/* Step 0 stores 5; step 1 is a move whose source offset is 8 * int 0, a
 * loop's flag lies at byte 70 of a 64-byte input, a launch has int 0
 * groups: each refusal at its step leaves step 0's work done. */
static void test_a_step_refused_at_run_leaves_the_earlier_steps_work_done(void) {
  rig_device *h = rig_host();
  rig_desc *d = desc_of(1, rig_host_isa());
  rig_desc_add_alloc(d, 0, RIG_KIND_DEVICE, 64, RIG_COPIES_ONE);
  rig_desc_add_input(d, 0, 64);
  d->ints = 1;
  int64_t img = add_pk(d, 0);
  set_step(d, NULL, 0, img, rig_desc_slot_input(0), 0, 5, 0);
  rig_desc_step *m =
      move_step(d, NULL, rig_desc_slot_memory(0, 0, 64), 0, rig_desc_slot_input(0), 8, 8);
  rig_desc_terms_add(d, &m->u.move.src_offset, rig_desc_int(0), 8);
  rig_desc_step *loop = rig_desc_add_loop(d, NULL, rig_desc_fixed(1));
  rig_desc_loop_set_flag(loop, rig_desc_slot_input(0), 70);
  rig_desc_submit *s = rig_desc_add_submit(d, NULL, 0);
  int64_t k = slot(d, s, rig_desc_slot_input(0));
  rig_desc_part *part = launch(d, s, img, "pk_count", NULL, 1);
  ref(d, part, k, 0, RIG_USE_WRITE);
  part->u.launch.groups[0] = rig_desc_int(0);
  rig_program *p = load_ok(d, &h, 1, NULL);
  rig_buffer *in64 = buf(h, 64), *in80 = buf(h, 80);
  fr x;
  int64_t ints[1] = {8};
  fr_init(&x, p, &in64, 1, ints, 1);
  rig_error err = {0};
  RIG_ASSERT_ERROR(run_fr(p, &x, NULL, 0, &err), err, RIG_EINVAL,
                   "step 1: a move's source of 8 bytes at 64 outside its 64 bytes");
  CU_ASSERT_EQUAL(words(in64)[0], 5);
  ints[0] = RIG_INT_MAX / 4;
  words(in64)[0] = 0;
  RIG_ASSERT_ERROR(run_fr(p, &x, NULL, 0, &err), err, RIG_EINVAL,
                   "step 1: a move's source offset past an int");
  CU_ASSERT_EQUAL(words(in64)[0], 5);
  ints[0] = 0;
  words(in64)[0] = 0;
  RIG_ASSERT_ERROR(run_fr(p, &x, NULL, 0, &err), err, RIG_EINVAL,
                   "step 2: a flag at 70 outside its 64 bytes");
  CU_ASSERT_EQUAL(words(in64)[0], 5);
  /* On 80 bytes the flag (0) stops the loop; then 0 groups. */
  x.f.inputs = &in80;
  CU_ASSERT_EQUAL(run_fr(p, &x, NULL, 0, &err), RIG_EINVAL);
  CU_ASSERT_NSTRING_EQUAL(err.message, "step 3: ", 8);
  CU_ASSERT_EQUAL(words(in80)[0], 5);
  ints[0] = 2;
  run_ok(p, &x);
  CU_ASSERT_EQUAL(words(in80)[0], 7);
  fr_free(&x);
  rig_program_release(p);
  rig_buffer_release(in64);
  rig_buffer_release(in80);
  rig_desc_free(d);
}

/* A run leaves a launch queued on a polled device; the program's memory
 * there is freed only after that work ran (its image still loaded). */
static void test_a_released_programs_memory_returns_after_the_work_of_its_last_run(void) {
  alarm(120);
  rig_polled *pd;
  rig_device *dev = polled_dev(&pd, "polled", false);
  rig_desc *d = desc_of(1, "polled");
  rig_desc_add_alloc(d, 0, RIG_KIND_DEVICE, 96, RIG_COPIES_ONE);
  count_step(d, NULL, 0, add_pk(d, 0), rig_desc_slot_memory(0, 0, 96));
  rig_program *p = load_ok(d, &dev, 1, NULL);
  fr x;
  fr_init(&x, p, NULL, 0, NULL, 0);
  run_ok(p, &x);
  CU_ASSERT_FALSE(rig_point_reached(x.ends[0]));
  char ran[64];
  snprintf(ran, sizeof ran, "run %llu", (unsigned long long)rig_point_value(x.ends[0]));
  rig_program_release(p);
  rig_wait w = rig_wait_begin(RIG_HANG_S);
  while (rig_polled_log_find(pd, "free 96") < 0 && rig_wait_more(&w)) {
    rig_polled_run(pd, 1);
    rig_reclaim();
  }
  long r = rig_polled_log_find(pd, ran), f = rig_polled_log_find(pd, "free 96");
  CU_ASSERT(r >= 0 && f > r);
  if (!(r >= 0 && f > r)) fprintf(stderr, "the log:\n%s", rig_polled_log(pd));
  fr_free(&x);
  rig_desc_free(d);
  alarm(0);
}

/* ---- step points and ends ----------------------------------------------------------- */

/* Steps: 0 on cpu:0; a loop of int 0 trips (1) whose body is 2 on cpu:0 and
 * 3 on the host; 4 on cpu:0: four Submit steps, the body's counted once. */
static void test_step_points_hold_each_steps_last_point_and_reached_for_unreached_steps(void) {
  rig_device *h = rig_host(), *c = cpu0();
  rig_device *devs[2] = {h, c};
  rig_desc *d = desc_of(2, rig_host_isa(), cpu_arch());
  rig_desc_add_alloc(d, 1, RIG_KIND_DEVICE, 64, RIG_COPIES_ONE);
  rig_desc_add_alloc(d, 0, RIG_KIND_DEVICE, 64, RIG_COPIES_ONE);
  int64_t img0 = add_pk(d, 0), img1 = add_pk(d, 1);
  d->ints = 1;
  count_step(d, NULL, 1, img1, rig_desc_slot_memory(0, 0, 64));
  rig_desc_step *loop = rig_desc_add_loop(d, NULL, rig_desc_int(0));
  count_step(d, loop, 1, img1, rig_desc_slot_memory(0, 0, 64));
  count_step(d, loop, 0, img0, rig_desc_slot_memory(1, 0, 64));
  count_step(d, NULL, 1, img1, rig_desc_slot_memory(0, 0, 64));
  rig_program *p = load_ok(d, devs, 2, NULL);
  CU_ASSERT_EQUAL(rig_program_submits(p), 4);
  int64_t ints[1] = {3};
  fr x;
  fr_init(&x, p, NULL, 0, ints, 1);
  CU_ASSERT_EQUAL_FATAL(x.npoints, 4);
  for (size_t i = 0; i < 4; i++) CU_ASSERT_EQUAL(x.points[i], RIG_POINT_REACHED);
  CU_ASSERT_TRUE(rig_point_reached(x.points[0]));
  run_ok(p, &x);
  uint32_t ci = rig_device_index(c), hi = rig_device_index(h);
  uint64_t v = rig_point_value(x.points[0]);
  CU_ASSERT_EQUAL(rig_point_device(x.points[0]), ci);
  CU_ASSERT_EQUAL(x.points[1], rig_point_make(ci, v + 3));
  CU_ASSERT_EQUAL(rig_point_device(x.points[2]), hi);
  CU_ASSERT_EQUAL(x.points[2], rig_device_last(h));
  CU_ASSERT_EQUAL(x.points[3], rig_point_make(ci, v + 4));
  CU_ASSERT_EQUAL(x.nends, 2);
  CU_ASSERT_EQUAL(x.ends[0], x.points[2]);
  CU_ASSERT_EQUAL(x.ends[1], x.points[3]);
  wait_ends(&x);
  /* No trip: the body's elements hold the reached host point again. */
  ints[0] = 0;
  run_ok(p, &x);
  v = rig_point_value(x.points[0]);
  CU_ASSERT_EQUAL(rig_point_device(x.points[0]), ci);
  CU_ASSERT_EQUAL(x.points[1], RIG_POINT_REACHED);
  CU_ASSERT_EQUAL(x.points[2], RIG_POINT_REACHED);
  CU_ASSERT_EQUAL(x.points[3], rig_point_make(ci, v + 1));
  CU_ASSERT_EQUAL(x.nends, 1);
  CU_ASSERT_EQUAL(x.ends[0], x.points[3]);
  wait_ends(&x);
  fr_free(&x);
  rig_program_release(p);
  rig_desc_free(d);
}

/* Step 0, on cpu:0, stores 31 into memory 0 after a pause; a move (made by
 * the host: cpu memory is host memory) copies it to the input, another
 * between the two cpu:0 memories. The host's moves count in the ends only
 * when the host is one of the program's devices, and are done at return. */
static void test_a_move_counts_in_the_ends_of_the_device_that_made_it(void) {
  rig_device *h = rig_host(), *c = cpu0();
  for (int with_host = 0; with_host < 2; with_host++) {
    rig_device *devs[2] = {h, c};
    int64_t ci = with_host;
    rig_desc *d = with_host ? desc_of(2, rig_host_isa(), cpu_arch()) : desc_of(1, cpu_arch());
    rig_desc_add_alloc(d, ci, RIG_KIND_DEVICE, 64, RIG_COPIES_ONE);
    rig_desc_add_alloc(d, ci, RIG_KIND_DEVICE, 64, RIG_COPIES_ONE);
    rig_desc_add_input(d, ci, 64);
    set_step(d, NULL, ci, add_pk(d, ci), rig_desc_slot_memory(0, 0, 64), 0, 31, 5000);
    move_step(d, NULL, rig_desc_slot_memory(0, 0, 64), 0, rig_desc_slot_input(0), 0, 64);
    move_step(d, NULL, rig_desc_slot_memory(0, 0, 64), 0, rig_desc_slot_memory(1, 0, 64), 8, 8);
    rig_program *p = load_ok(d, with_host ? devs : devs + 1, with_host ? 2 : 1, NULL);
    rig_buffer *in = buf(c, 64);
    fr x;
    fr_init(&x, p, &in, 1, NULL, 0);
    run_ok(p, &x);
    CU_ASSERT_EQUAL(words(in)[0], 31);
    if (with_host) {
      CU_ASSERT_EQUAL(x.nends, 2);
      CU_ASSERT_EQUAL(rig_point_device(x.ends[0]), rig_device_index(h));
      CU_ASSERT_EQUAL(x.ends[0], rig_device_last(h));
      CU_ASSERT_EQUAL(x.ends[1], x.points[0]);
    } else {
      CU_ASSERT_EQUAL(x.nends, 1);
      CU_ASSERT_EQUAL(x.ends[0], x.points[0]);
    }
    wait_ends(&x);
    fr_free(&x);
    rig_program_release(p);
    rig_buffer_release(in);
    rig_desc_free(d);
  }
}

/* Host code, given the program and its frame in a host buffer it reads
 * through a ref, runs the program from inside its own run. */
static void test_a_run_from_inside_its_own_run_is_refused(void) {
  alarm(120);
  rig_device *h = rig_host();
  rig_desc *d = desc_of(1, rig_host_isa());
  rig_desc_add_input(d, 0, sizeof(pk_reenter_ctl));
  rig_desc_submit *s = rig_desc_add_submit(d, NULL, 0);
  int64_t k = slot(d, s, rig_desc_slot_input(0));
  rig_desc_part *part = launch(d, s, add_pk(d, 0), "pk_reenter", NULL, 1);
  ref(d, part, k, 0, RIG_USE_WRITE);
  rig_program *p = load_ok(d, &h, 1, NULL);
  rig_buffer *in = buf(h, sizeof(pk_reenter_ctl));
  pk_reenter_ctl *ctl = rig_buffer_host(in);
  fr x;
  fr_init(&x, p, &in, 1, NULL, 0);
  ctl->run = rig_program_run;
  ctl->program = p;
  ctl->frame = &x.f;
  ctl->status = RIG_OK;
  run_ok(p, &x);
  CU_ASSERT_EQUAL(ctl->calls, 1);
  RIG_ASSERT_ERROR(ctl->status, ctl->err, RIG_EINVAL, "a run of a program from inside its own run");
  run_ok(p, &x); /* and the program still runs */
  CU_ASSERT_EQUAL(ctl->calls, 2);
  fr_free(&x);
  rig_program_release(p);
  rig_buffer_release(in);
  rig_desc_free(d);
  alarm(0);
}

/* A run of pk_reenter_all on dev (input 0 on dev holds its control), the
 * run's frame in *x. */
static rig_program *reenter_all_program(rig_device *dev, uint32_t groups, rig_buffer **in, fr *x,
                                        pk_reenter_all_ctl **ctl) {
  rig_desc *d = desc_of(1, dev == rig_host() ? rig_host_isa() : cpu_arch());
  rig_desc_add_input(d, 0, sizeof(pk_reenter_all_ctl));
  rig_desc_submit *s = rig_desc_add_submit(d, NULL, 0);
  int64_t k = slot(d, s, rig_desc_slot_input(0));
  rig_desc_part *part = launch(d, s, add_pk(d, 0), "pk_reenter_all", NULL, 1);
  part->u.launch.groups[0] = rig_desc_fixed(groups);
  ref(d, part, k, 0, RIG_USE_WRITE);
  rig_program *p = load_ok(d, &dev, 1, NULL);
  rig_desc_free(d);
  *in = buf(dev, sizeof(pk_reenter_all_ctl));
  *ctl = rig_buffer_host(*in);
  fr_init(x, p, in, 1, NULL, 0);
  (*ctl)->run = rig_program_run;
  (*ctl)->program = p;
  (*ctl)->frame = &x->f;
  return p;
}

/* A host launch of 64 groups whose groups on pool workers run the program
 * (the caller's group waiting for them, so that one does), and a cpu:0
 * launch whose group runs it after the run returned: every such run is
 * refused, none blocks. */
static void test_a_run_from_a_thread_that_works_for_the_run_is_refused(void) {
  alarm(120); /* the deadlock this refuses would hang the suite */
  if (rig_device_facts_of(rig_host())->threads < 2) {
    rig_test_skip("a run from a thread that works for the run is refused",
                  "the host has no pool worker besides the caller");
  } else {
    rig_buffer *in;
    fr x;
    pk_reenter_all_ctl *ctl;
    rig_program *p = reenter_all_program(rig_host(), 64, &in, &x, &ctl);
    ctl->limit = 64;
    ctl->wait_for_worker = 1;
    run_ok(p, &x);
    CU_ASSERT(atomic_load(&ctl->worker_tried));
    CU_ASSERT(atomic_load(&ctl->tried) >= 1);
    CU_ASSERT_EQUAL(atomic_load(&ctl->refused), atomic_load(&ctl->tried));
    fr_free(&x);
    rig_program_release(p);
    rig_buffer_release(in);
  }
  rig_buffer *in;
  fr x;
  pk_reenter_all_ctl *ctl;
  rig_program *p = reenter_all_program(cpu0(), 1, &in, &x, &ctl);
  ctl->limit = 1;
  run_ok(p, &x);
  wait_ends(&x);
  CU_ASSERT_EQUAL(atomic_load(&ctl->tried), 1);
  CU_ASSERT_EQUAL(atomic_load(&ctl->refused), 1);
  fr_free(&x);
  rig_program_release(p);
  rig_buffer_release(in);
  alarm(0);
}

/* ---- no allocation per run ------------------------------------------------------------ */

/* Host and cpu:0 steps, a loop storing its trip that an Int hole reads,
 * memory of two copies and a move: after a warm-up, 100 runs allocate
 * nothing. */
static void test_a_run_allocates_nothing(void) {
  if (!RIG_COUNTS_ALLOCATIONS) {
    rig_test_skip("a run allocates nothing", RIG_NO_ALLOC_COUNT);
    return;
  }
  rig_device *devs[2] = {rig_host(), cpu0()};
  rig_desc *d = desc_of(2, rig_host_isa(), cpu_arch());
  rig_desc_add_alloc(d, 1, RIG_KIND_DEVICE, 64, RIG_COPIES_TWO);
  rig_desc_add_alloc(d, 0, RIG_KIND_DEVICE, 64, RIG_COPIES_ONE);
  rig_desc_add_input(d, 0, 64);
  d->ints = 2;
  int64_t img0 = add_pk(d, 0), img1 = add_pk(d, 1);
  count_step(d, NULL, 0, img0, rig_desc_slot_input(0));
  count_step(d, NULL, 1, img1, rig_desc_slot_memory(0, 0, 64));
  rig_desc_step *loop = rig_desc_add_loop(d, NULL, rig_desc_int(0));
  rig_desc_loop_set_trip(loop, 1);
  rig_desc_part *part = set_step(d, loop, 0, img0, rig_desc_slot_input(0), 1, 0, 0);
  hole(d, rig_desc_part_params(part), 16, RIG_W64, rig_desc_int(1), 1, 0, 0);
  count_step(d, loop, 1, img1, rig_desc_slot_memory(0, 0, 64));
  move_step(d, NULL, rig_desc_slot_memory(0, 0, 64), 0, rig_desc_slot_memory(1, 0, 64), 0, 64);
  rig_program *p = load_ok(d, devs, 2, NULL);
  rig_buffer *in = buf(rig_host(), 64);
  int64_t ints[1] = {3};
  fr x;
  fr_init(&x, p, &in, 1, ints, 1);
  for (int i = 0; i < 4; i++) run_ok(p, &x);
  rig_alloc_reset();
  rig_alloc_counting(true);
  rig_status st = RIG_OK;
  for (int i = 0; i < 100 && st == RIG_OK; i++) st = run_fr(p, &x, NULL, 0, NULL);
  rig_alloc_counting(false);
  CU_ASSERT_EQUAL(st, RIG_OK);
  CU_ASSERT_EQUAL(rig_alloc_count(), 0);
  wait_ends(&x);
  CU_ASSERT_EQUAL(words(in)[0], 104);
  CU_ASSERT_EQUAL(words(in)[1], 2);
  /* The count sees the library's allocations. */
  size_t n = 0;
  rig_alloc_reset();
  rig_alloc_counting(true);
  rig_point *fresh = rig_program_step_points(p, &n);
  rig_alloc_counting(false);
  CU_ASSERT(rig_alloc_count() >= 1);
  free(fresh);
  fr_free(&x);
  rig_program_release(p);
  rig_buffer_release(in);
  rig_desc_free(d);
}

/* ---- tracing ---------------------------------------------------------------------------- */

/* A host step, a cpu:0 step and a move, traced: each run records its
 * start and its 3 steps (their times in order: begin, submitted, reached),
 * allocates nothing, and a full trace counts what it drops. */
static void test_a_traced_run_records_each_step_and_allocates_nothing(void) {
  rig_device *devs[2] = {rig_host(), cpu0()};
  rig_desc *d = desc_of(2, rig_host_isa(), cpu_arch());
  rig_desc_add_alloc(d, 1, RIG_KIND_DEVICE, 64, RIG_COPIES_ONE);
  rig_desc_add_input(d, 0, 64);
  int64_t img0 = add_pk(d, 0), img1 = add_pk(d, 1);
  count_step(d, NULL, 0, img0, rig_desc_slot_input(0));
  count_step(d, NULL, 1, img1, rig_desc_slot_memory(0, 0, 64));
  move_step(d, NULL, rig_desc_slot_memory(0, 0, 64), 0, rig_desc_slot_input(0), 0, 8);
  rig_program *p = load_ok(d, devs, 2, NULL);
  rig_buffer *in = buf(rig_host(), 64);
  fr x;
  fr_init(&x, p, &in, 1, NULL, 0);
  run_ok(p, &x); /* untraced */
  rig_trace *t = NULL;
  CU_ASSERT_EQUAL_FATAL(rig_trace_make(40, &t, NULL), RIG_OK);
  rig_trace_set(t);
  rig_alloc_reset();
  rig_alloc_counting(true);
  rig_status st = RIG_OK;
  for (int i = 0; i < 10 && st == RIG_OK; i++) st = run_fr(p, &x, NULL, 0, NULL);
  rig_alloc_counting(false);
  CU_ASSERT_EQUAL(st, RIG_OK);
  if (RIG_COUNTS_ALLOCATIONS) CU_ASSERT_EQUAL(rig_alloc_count(), 0);
  run_ok(p, &x); /* past the 40 events: its 4 are dropped */
  rig_trace_set(NULL);
  wait_ends(&x);
  CU_ASSERT(rig_trace_settle(t, 10000));
  CU_ASSERT_EQUAL(rig_trace_count(t), 40);
  CU_ASSERT_EQUAL(rig_trace_dropped(t), 4);
  CU_ASSERT_EQUAL(rig_trace_tracks(t), 2);
  const rig_trace_event *e = rig_trace_events(t);
  for (size_t i = 0; i < 40; i++) {
    uint64_t run = 1 + i / 4;
    CU_ASSERT_EQUAL(e[i].run, run);
    if (i % 4 == 0) {
      CU_ASSERT_EQUAL(e[i].kind, RIG_TRACE_RUN);
      continue;
    }
    CU_ASSERT_EQUAL(e[i].kind, RIG_TRACE_STEP);
    CU_ASSERT_EQUAL(e[i].step, (int64_t)(i % 4 - 1));
    CU_ASSERT(e[i].begin_ns <= e[i].submitted_ns && e[i].submitted_ns <= e[i].reached_ns);
    CU_ASSERT(i < 4 || e[i].begin_ns >= e[i - 4].begin_ns);
  }
  CU_ASSERT_STRING_EQUAL(rig_trace_track(t, e[1].track), "host");
  CU_ASSERT_STRING_EQUAL(rig_trace_track(t, e[2].track), rig_device_name(cpu0()));
  rig_trace_free(t);
  fr_free(&x);
  rig_program_release(p);
  rig_buffer_release(in);
  rig_desc_free(d);
}

/* A host step's work is done when its submit returns: its reach is
 * stamped then (the submit's end), not when the observer polls. */
static void test_a_traced_host_step_is_reached_when_its_submit_returns(void) {
  rig_device *dev = rig_host();
  rig_desc *d = desc_of(1, rig_host_isa());
  rig_desc_add_input(d, 0, 64);
  count_step(d, NULL, 0, add_pk(d, 0), rig_desc_slot_input(0));
  rig_program *p = load_ok(d, &dev, 1, NULL);
  rig_buffer *in = buf(dev, 64);
  fr x;
  fr_init(&x, p, &in, 1, NULL, 0);
  rig_trace *t = NULL;
  CU_ASSERT_EQUAL_FATAL(rig_trace_make(64, &t, NULL), RIG_OK);
  rig_trace_set(t);
  for (int i = 0; i < 20; i++) run_ok(p, &x);
  rig_trace_set(NULL);
  CU_ASSERT(rig_trace_settle(t, 10000));
  CU_ASSERT_EQUAL_FATAL(rig_trace_count(t), 40);
  const rig_trace_event *e = rig_trace_events(t);
  for (size_t i = 1; i < 40; i += 2) {
    CU_ASSERT_EQUAL(e[i].kind, RIG_TRACE_STEP);
    CU_ASSERT_EQUAL(e[i].reached_ns, e[i].submitted_ns);
  }
  rig_trace_free(t);
  fr_free(&x);
  rig_program_release(p);
  rig_buffer_release(in);
  rig_desc_free(d);
}

/* rig_trace_reached stamps the steps at or before the points it is given
 * at once (the observer cannot: the gated device's work waits), and the
 * observer's later sight of them keeps that earlier stamp. */
static void test_a_point_said_reached_stamps_its_steps_and_the_earliest_stamp_stays(void) {
  rig_polled *pd;
  rig_device *dev = polled_dev(&pd, "polled", false);
  rig_polled_gate(pd, true);
  rig_desc *d = desc_of(1, "polled");
  rig_desc_add_alloc(d, 0, RIG_KIND_DEVICE, 64, RIG_COPIES_ONE);
  int64_t img = add_pk(d, 0);
  count_step(d, NULL, 0, img, rig_desc_slot_memory(0, 0, 64));
  count_step(d, NULL, 0, img, rig_desc_slot_memory(0, 0, 64));
  rig_program *p = load_ok(d, &dev, 1, NULL);
  fr x;
  fr_init(&x, p, NULL, 0, NULL, 0);
  rig_trace *t = NULL;
  CU_ASSERT_EQUAL_FATAL(rig_trace_make(8, &t, NULL), RIG_OK);
  rig_trace_set(t);
  run_ok(p, &x);
  CU_ASSERT_EQUAL_FATAL(x.nends, 1);
  CU_ASSERT_FALSE(rig_point_reached(x.ends[0]));
  rig_point other = rig_point_make(rig_device_index(rig_host()), 1);
  rig_trace_reached(&other, 1); /* another device's: stamps nothing */
  uint64_t before = rig_trace_now();
  rig_trace_reached(x.ends, 1);
  uint64_t after = rig_trace_now();
  const rig_trace_event *e = rig_trace_events(t);
  CU_ASSERT_EQUAL_FATAL(rig_trace_count(t), 3);
  uint64_t stamped[2];
  for (size_t i = 1; i < 3; i++) {
    stamped[i - 1] = __atomic_load_n(&e[i].reached_ns, __ATOMIC_RELAXED);
    CU_ASSERT(stamped[i - 1] >= before && stamped[i - 1] <= after);
  }
  rig_polled_gate(pd, false);
  rig_polled_run(pd, 100);
  wait_ends(&x);
  rig_trace_set(NULL);
  CU_ASSERT(rig_trace_settle(t, 10000));
  CU_ASSERT_EQUAL(e[1].reached_ns, stamped[0]);
  CU_ASSERT_EQUAL(e[2].reached_ns, stamped[1]);
  rig_trace_free(t);
  fr_free(&x);
  rig_program_release(p);
  rig_desc_free(d);
}

/* A trace's bytes decode back to its events; bytes another encode did not
 * make are refused, saying why. */
static void test_a_malformed_trace_is_refused_with_its_reason(void) {
  rig_trace *t = NULL, *back = NULL;
  CU_ASSERT_EQUAL_FATAL(rig_trace_make(8, &t, NULL), RIG_OK);
  uint8_t *bytes = NULL;
  size_t len = 0;
  CU_ASSERT_EQUAL_FATAL(rig_trace_encode(t, &bytes, &len, NULL), RIG_OK);
  CU_ASSERT_EQUAL(rig_trace_decode(bytes, len, 8, &back, NULL), RIG_OK);
  CU_ASSERT_EQUAL(rig_trace_count(back), 0);
  rig_trace_free(back);
  rig_error err;
  RIG_ASSERT_ERROR(rig_trace_decode(bytes, 4, 8, &back, &err), err, RIG_EINVAL,
                   "a malformed trace: 4 bytes");
  uint8_t *longer = calloc(1, len + 48);
  memcpy(longer, bytes, len);
  char want[96];
  snprintf(want, sizeof want, "a malformed trace: %zu bytes, not %zu", len + 48, len);
  RIG_ASSERT_ERROR(rig_trace_decode(longer, len + 48, 8, &back, &err), err, RIG_EINVAL, want);
  /* One event of an unknown kind, its count in the head (after the magic
   * and two words). */
  uint64_t one = 1;
  memcpy(longer + 16, &one, 8);
  uint32_t kind = 9;
  memcpy(longer + len, &kind, 4);
  RIG_ASSERT_ERROR(rig_trace_decode(longer, len + 48, 8, &back, &err), err, RIG_EINVAL,
                   "a malformed trace: an event of kind 9");
  RIG_ASSERT_ERROR(rig_trace_decode(longer, len + 48, 0, &back, &err), err, RIG_EINVAL,
                   "a malformed trace: 1 events, more than 0");
  longer[0] = 'X';
  RIG_ASSERT_ERROR(rig_trace_decode(longer, len, 8, &back, &err), err, RIG_EINVAL,
                   "a malformed trace: no magic");
  free(longer);
  free(bytes);
  rig_trace_free(t);
}

/* ---- programs another process sent ------------------------------------------------------ */

/* Ids 10 and 11 are the host and cpu:0. */
static rig_device *device_of_id(void *ctx, int64_t id) {
  (void)ctx;
  return id == 10 ? rig_host() : id == 11 ? cpu0() : NULL;
}

static void assert_received_refused(const void *bytes, size_t len, const char *message) {
  rig_program *p = NULL;
  rig_error err = {0};
  RIG_ASSERT_ERROR(rig_program_load_received(bytes, len, device_of_id, NULL, NULL, &p, &err), err,
                   RIG_EREFUSED, message);
  CU_ASSERT_PTR_NULL(p);
}

static uint8_t *remote_binary(const rig_desc *d, const int64_t *ids, size_t nids, size_t *len) {
  uint8_t *b = NULL;
  rig_error err;
  CU_ASSERT_EQUAL_FATAL(rig_program_remote_binary(d, ids, nids, &b, len, &err), RIG_OK);
  return b;
}

static void test_load_received_refuses_bytes_and_descriptions_it_cannot_load(void) {
  assert_received_refused("garbage!", 8, "not a program another process loads");
  assert_received_refused("rig.remote\nabc", 14,
                          "a malformed program at byte 11: an integer past the end");
  rig_desc *d = desc_of(1, rig_host_isa());
  d->ints = 1;
  size_t len;
  int64_t ids[2] = {99, 10};
  uint8_t *b = remote_binary(d, ids, 1, &len);
  assert_received_refused(b, len, "no device 99 on this machine");
  free(b);
  int64_t two[2] = {10, 11};
  b = remote_binary(d, two, 2, &len);
  assert_received_refused(b, len, "2 devices for a program of 1");
  free(b);
  /* A description cut short. */
  b = remote_binary(d, ids + 1, 1, &len);
  rig_program *p = NULL;
  rig_error err = {0};
  CU_ASSERT_EQUAL(rig_program_load_received(b, len - 1, device_of_id, NULL, NULL, &p, &err),
                  RIG_EREFUSED);
  CU_ASSERT_NSTRING_EQUAL(err.message, "a malformed program", strlen("a malformed program"));
  free(b);
  /* A broken rule is a refusal: another process made the bytes. */
  d->ints = -1;
  b = remote_binary(d, ids + 1, 1, &len);
  assert_received_refused(b, len, "-1 ints");
  free(b);
  rig_desc_free(d);
}

typedef struct recv_ctx {
  rig_program *p;
  uint64_t id, region_id;
  rig_buffer *region;
} recv_ctx;

static rig_program *program_of(void *ctx, uint64_t id) {
  recv_ctx *c = ctx;
  return id == c->id ? c->p : NULL;
}

static rig_buffer *region_of(void *ctx, uint64_t id) {
  recv_ctx *c = ctx;
  return id == c->region_id ? c->region : NULL;
}

static rig_status run_words(recv_ctx *c, const uint64_t *w, size_t len, rig_error *err) {
  rig_point ends[2];
  size_t nends = 9;
  rig_status st =
      rig_program_run_received(w, len, program_of, region_of, c, NULL, 0, ends, &nends, err);
  for (size_t i = 0; st == RIG_OK && i < nends; i++)
    CU_ASSERT_EQUAL(rig_point_wait(ends[i], NULL), RIG_OK);
  return st;
}

static void assert_words_refused(recv_ctx *c, const uint64_t *w, size_t len, const char *message) {
  rig_error err = {0};
  RIG_ASSERT_ERROR(run_words(c, w, len, &err), err, RIG_EREFUSED, message);
}

/* A program of the host and cpu:0, with memory of two copies, a loop, a
 * move and negative ints: sent as a remote binary and run from run words,
 * it writes the same bytes as the same description loaded and run here. */
static void test_a_received_program_runs_as_the_same_program_loaded_here(void) {
  rig_device *devs[2] = {rig_host(), cpu0()};
  rig_desc *d = desc_of(2, rig_host_isa(), cpu_arch());
  rig_desc_add_alloc(d, 1, RIG_KIND_DEVICE, 64, RIG_COPIES_TWO);
  rig_desc_add_input(d, 0, 64);
  d->ints = 2;
  int64_t img0 = add_pk(d, 0), img1 = add_pk(d, 1);
  rig_desc_part *part = set_step(d, NULL, 1, img1, rig_desc_slot_memory(0, 0, 64), 0, 0, 1000);
  hole(d, rig_desc_part_params(part), 16, RIG_W64, rig_desc_int(0), 3, 1, 0);
  rig_desc_step *loop = rig_desc_add_loop(d, NULL, rig_desc_int(1));
  count_step(d, loop, 0, img0, rig_desc_slot_input(0));
  move_step(d, NULL, rig_desc_slot_memory(0, 0, 64), 0, rig_desc_slot_input(0), 8, 8);
  part = set_step(d, NULL, 0, img0, rig_desc_slot_input(0), 2, 0, 0);
  hole(d, rig_desc_part_params(part), 16, RIG_W64, rig_desc_int(0), -1, 0, 0);
  int64_t ints[2] = {-5, 3};
  rig_program *p = load_ok(d, devs, 2, NULL);
  rig_buffer *here = buf(devs[0], 64);
  fr x;
  fr_init(&x, p, &here, 1, ints, 2);
  run_ok(p, &x);
  wait_ends(&x);
  CU_ASSERT_EQUAL(words(here)[0], 3);
  CU_ASSERT_EQUAL(words(here)[1], (uint64_t)-14);
  CU_ASSERT_EQUAL(words(here)[2], 5);
  fr_free(&x);
  rig_program_release(p);

  size_t len;
  int64_t ids[2] = {10, 11};
  uint8_t *b = remote_binary(d, ids, 2, &len);
  rig_program *q = NULL;
  rig_error err = {0};
  rig_status st = rig_program_load_received(b, len, device_of_id, NULL, NULL, &q, &err);
  if (st != RIG_OK) fprintf(stderr, "load_received: %s\n", err.message);
  CU_ASSERT_EQUAL_FATAL(st, RIG_OK);
  free(b);
  recv_ctx c = {q, 42, 7, buf(devs[0], 256)};
  size_t n = rig_program_run_words_count(1, 2);
  CU_ASSERT_EQUAL_FATAL(n, 7);
  uint64_t w[8];
  rig_remote_input in = {7, 64, 64};
  rig_program_run_words(42, &in, 1, ints, 2, 2, w);
  for (int run = 0; run < 2; run++) {
    memset(words(c.region), 0, 256);
    st = run_words(&c, w, n * 8, &err);
    if (st != RIG_OK) fprintf(stderr, "run_received: %s\n", err.message);
    CU_ASSERT_EQUAL(st, RIG_OK);
    CU_ASSERT_EQUAL(memcmp(words(c.region) + 8, words(here), 64), 0);
  }
  /* Run words that do not fit. */
  assert_words_refused(&c, w, 0, "a malformed run at byte 0: a word past the end");
  assert_words_refused(&c, w, 8 * n - 4, "a malformed run at byte 48: a word past the end");
  w[7] = 0;
  assert_words_refused(&c, w, 8 * n + 8, "a malformed run at byte 56: 8 bytes after the run");
  w[0] = 43;
  assert_words_refused(&c, w, 8 * n, "no program of this entry");
  w[0] = 42;
  w[1] = 8;
  assert_words_refused(&c, w, 8 * n, "no memory 8");
  w[1] = 7;
  w[2] = 200;
  assert_words_refused(&c, w, 8 * n, "64 bytes at 200 past memory 7");
  w[2] = 64;
  w[4] = 3;
  assert_words_refused(&c, w, 8 * n, "3 ints for a program of 2");
  /* A frame of fewer ints than the program's. */
  rig_program_run_words(42, &in, 1, ints, 1, 2, w);
  memset(words(c.region), 0, 256);
  CU_ASSERT_EQUAL(run_words(&c, w, 8 * n, &err), RIG_OK);
  CU_ASSERT_EQUAL(words(c.region)[9], (uint64_t)-14);
  CU_ASSERT_EQUAL(words(c.region)[10], 5);
  rig_program_release(q);
  rig_buffer_release(c.region);
  rig_buffer_release(here);
  rig_desc_free(d);
}

/* ---- threads and rails ------------------------------------------------------------------ */

/* Launches: step 0 (two), the loop's body (one on cpu:0 beside a fill, one
 * on the host), and a last step's: five, in step order, each 0 (host code
 * has no bound). */
static void test_threads_has_one_element_per_launch_in_step_order(void) {
  rig_device *devs[2] = {rig_host(), cpu0()};
  rig_desc *d = desc_of(2, rig_host_isa(), cpu_arch());
  int64_t img0 = add_pk(d, 0), img1 = add_pk(d, 1);
  rig_desc_submit *s = rig_desc_add_submit(d, NULL, 0);
  launch(d, s, img0, "pk_keep", NULL, 2);
  launch(d, s, img0, "pk_count", NULL, 1);
  rig_desc_step *loop = rig_desc_add_loop(d, NULL, rig_desc_fixed(0));
  s = rig_desc_add_submit(d, loop, 1);
  uint64_t zero = 0;
  rig_desc_submit_add_fill(d, s, rig_desc_entry(img1, "pk_fill_count"), &zero, 8);
  launch(d, s, img1, "pk_count", NULL, 1);
  s = rig_desc_add_submit(d, loop, 0);
  launch(d, s, img0, "pk_count", NULL, 1);
  s = rig_desc_add_submit(d, NULL, 1);
  launch(d, s, img1, "pk_keep", NULL, 2);
  rig_program *p = load_ok(d, devs, 2, NULL);
  uint32_t t[8];
  for (int i = 0; i < 8; i++) t[i] = 1000;
  CU_ASSERT_EQUAL(rig_program_threads(p, t, 2), 5);
  CU_ASSERT_EQUAL(t[0], 0);
  CU_ASSERT_EQUAL(t[1], 0);
  CU_ASSERT_EQUAL(t[2], 1000);
  CU_ASSERT_EQUAL(rig_program_threads(p, t, 8), 5);
  for (int i = 0; i < 5; i++) CU_ASSERT_EQUAL(t[i], 0);
  CU_ASSERT_EQUAL(t[5], 1000);
  rig_program_release(p);
  rig_desc_free(d);
  d = desc_of(1, rig_host_isa());
  s = rig_desc_add_submit(d, NULL, 0);
  rig_desc_submit_add_fill(d, s, rig_desc_entry(add_pk(d, 0), "pk_fill_count"), &zero, 8);
  p = load_ok(d, devs, 1, NULL);
  CU_ASSERT_EQUAL(rig_program_threads(p, t, 8), 0);
  rig_program_release(p);
  rig_desc_free(d);
}

static struct {
  _Atomic int calls;
  void *counts;
  uint64_t count;
} ready_seen;

static void record_ready(void *counts, uint64_t count) {
  ready_seen.counts = counts;
  ready_seen.count = count;
  atomic_fetch_add(&ready_seen.calls, 1);
}

/* Rail 5's end is three host buffers and a ready function that records its
 * arguments. Step 0 is a fill of Ready 5 whose params are the address of
 * the Counts memory and int 0 + 1; step 1 dumps the addresses of the three
 * areas as the program's Rail memory has them. */
static void test_a_ready_fill_calls_ready_with_its_two_words_and_rail_memory_is_the_ends(void) {
  rig_device *h = rig_host();
  rig_buffer *counts = buf(h, RIG_RAIL_COUNTS_BYTES), *outbound = buf(h, 256),
             *inbound = buf(h, 512);
  rig_rail_end end = {outbound, inbound, counts, record_ready};
  rig_rails rails = {only_rail_5, &end};
  rig_desc *d = desc_of(1, rig_host_isa());
  rig_desc_add_rail(d, 5, RIG_AREA_COUNTS);
  rig_desc_add_rail(d, 5, RIG_AREA_OUTBOUND);
  rig_desc_add_rail(d, 5, RIG_AREA_INBOUND);
  rig_desc_add_input(d, 0, 64);
  d->ints = 1;
  int64_t img = add_pk(d, 0);
  rig_desc_submit *s = rig_desc_add_submit(d, NULL, 0);
  rig_desc_submit_add_fixed(d, s, rig_desc_view_of(0, 0, RIG_RAIL_COUNTS_BYTES),
                            RIG_ACCESS_READ_WRITE);
  rig_desc_submit_add_fixed(d, s, rig_desc_view_of(1, 0, 256), RIG_ACCESS_READ);
  uint64_t two[2] = {0, 0};
  rig_desc_part *part = rig_desc_submit_add_fill(d, s, rig_desc_ready(5), two, sizeof two);
  hole(d, rig_desc_part_params(part), 0, RIG_W64, addr_v(0, 0), 1, 0, 0);
  hole(d, rig_desc_part_params(part), 8, RIG_W64, rig_desc_int(0), 1, 1, 0);
  s = rig_desc_add_submit(d, NULL, 0);
  rig_desc_submit_add_fixed(d, s, rig_desc_view_of(0, 0, RIG_RAIL_COUNTS_BYTES),
                            RIG_ACCESS_READ_WRITE);
  rig_desc_submit_add_fixed(d, s, rig_desc_view_of(1, 0, 256), RIG_ACCESS_READ_WRITE);
  rig_desc_submit_add_fixed(d, s, rig_desc_view_of(2, 0, 512), RIG_ACCESS_READ_WRITE);
  int64_t k = slot(d, s, rig_desc_slot_input(0));
  uint64_t w[6] = {0, 48};
  part = launch(d, s, img, "pk_dump", w, 6);
  ref(d, part, k, 0, RIG_USE_WRITE);
  for (int m = 0; m < 3; m++)
    hole(d, rig_desc_part_params(part), 16 + 8 * m, RIG_W64, addr_v(m, 0), 1, 0, 0);
  hole(d, rig_desc_part_params(part), 40, RIG_W64, rig_desc_leaf_value(rig_desc_handle(0)), 1, 0,
       0);
  rig_program *p = load_ok(d, &h, 1, &rails);
  rig_buffer *in = buf(h, 64);
  atomic_store(&ready_seen.calls, 0);
  for (int64_t run = 0; run < 2; run++) {
    int64_t ints[1] = {6 + run};
    fr x;
    fr_init(&x, p, &in, 1, ints, 1);
    run_ok(p, &x);
    CU_ASSERT_EQUAL(atomic_load(&ready_seen.calls), run + 1);
    CU_ASSERT_PTR_EQUAL(ready_seen.counts, rig_buffer_host(counts));
    CU_ASSERT_EQUAL((uint64_t)(uintptr_t)ready_seen.counts, rig_buffer_address(counts));
    CU_ASSERT_EQUAL(ready_seen.count, (uint64_t)(7 + run));
    CU_ASSERT_EQUAL(words(in)[2], rig_buffer_address(counts));
    CU_ASSERT_EQUAL(words(in)[3], rig_buffer_address(outbound));
    CU_ASSERT_EQUAL(words(in)[4], rig_buffer_address(inbound));
    CU_ASSERT_EQUAL(words(in)[5], rig_buffer_handle(counts));
    fr_free(&x);
  }
  rig_program_release(p);
  rig_desc_free(d);
  rig_buffer_release(in);
  rig_buffer_release(counts);
  rig_buffer_release(outbound);
  rig_buffer_release(inbound);
}

void rig_test_register(void) {
  static CU_TestInfo laws[] = {
      {"random programs match a model of copies", test_random_programs_match_a_model_of_copies},
      {"holes fill with addresses, handles and wrapping sums",
       test_holes_fill_with_addresses_handles_and_wrapping_sums},
      {"int holes wrap and are refilled each run", test_int_holes_wrap_and_are_refilled_each_run},
      {"a fixed value meeting set bits is refused at load",
       test_a_fixed_value_meeting_set_bits_is_refused_at_load},
      {"host code computes an int that sets a later launch's groups",
       test_host_code_computes_an_int_that_sets_a_later_launchs_groups},
      {"a loop of k trips runs max(0, k) times and stores its last trip",
       test_a_loop_of_k_trips_runs_max_0_k_times_and_stores_its_last_trip},
      {"a loop whose body clears its flag runs once",
       test_a_loop_whose_body_clears_its_flag_runs_once},
      {"a loop stores its trip once the work that reads the ints is done",
       test_a_loop_stores_its_trip_once_the_work_that_reads_the_ints_is_done},
      {"an int read follows the work that writes it",
       test_an_int_read_follows_the_work_that_writes_it},
      CU_TEST_INFO_NULL};
  static CU_TestInfo order[] = {
      {"two-copy runs wait for run n - 2, the ints included, and one-copy runs do not",
       test_two_copy_runs_wait_for_run_n_minus_2_and_one_copy_runs_do_not},
      {"waits are followed by each device's first submission and each move",
       test_waits_are_followed_by_each_devices_first_submission_and_each_move},
      CU_TEST_INFO_NULL};
  static CU_TestInfo refusals[] = {
      {"load refuses devices that do not fit the description",
       test_load_refuses_devices_that_do_not_fit_the_description},
      {"load refuses a rail this machine does not give",
       test_load_refuses_a_rail_this_machine_does_not_give},
      {"load refuses a broken rule before it makes anything",
       test_load_refuses_a_broken_rule_before_it_makes_anything},
      {"load refuses a function an image does not have",
       test_load_refuses_a_function_an_image_does_not_have},
      {"load refuses an image its device refuses", test_load_refuses_an_image_its_device_refuses},
      {"load refuses what exceeds a device's budget before it makes anything",
       test_load_refuses_what_exceeds_a_devices_budget_before_it_makes_anything},
      {"load refuses a launch geometry that every run refuses",
       test_load_refuses_a_launch_geometry_that_every_run_refuses},
      {"load refuses constant threads past its function's limit",
       test_load_refuses_constant_threads_past_its_functions_limit},
      {"load refuses constant geometry past 32 bits",
       test_load_refuses_constant_geometry_past_32_bits},
      {"each image of a program keeps its own functions",
       test_each_image_of_a_program_keeps_its_own_functions},
      {"a frame that does not fit is refused before any step",
       test_a_frame_that_does_not_fit_is_refused_before_any_step},
      {"a change to the frame during or after a run changes nothing in it",
       test_a_change_to_the_frame_during_or_after_a_run_changes_nothing_in_it},
      CU_TEST_INFO_NULL};
  static CU_TestInfo runs[] = {
      {"runs of one program from two threads take turns",
       test_runs_of_one_program_from_two_threads_take_turns},
      {"copy and move offsets move with the loop's trips",
       test_copy_and_move_offsets_move_with_the_loops_trips},
      {"a step refused at run leaves the earlier steps' work done",
       test_a_step_refused_at_run_leaves_the_earlier_steps_work_done},
      {"a released program's memory returns after the work of its last run",
       test_a_released_programs_memory_returns_after_the_work_of_its_last_run},
      {"step points hold each step's last point and reached for unreached steps",
       test_step_points_hold_each_steps_last_point_and_reached_for_unreached_steps},
      {"a move counts in the ends of the device that made it",
       test_a_move_counts_in_the_ends_of_the_device_that_made_it},
      {"a run from inside its own run is refused", test_a_run_from_inside_its_own_run_is_refused},
      {"a run from a thread that works for the run is refused",
       test_a_run_from_a_thread_that_works_for_the_run_is_refused},
      {"a run allocates nothing", test_a_run_allocates_nothing},
      {"a traced run records each step and allocates nothing",
       test_a_traced_run_records_each_step_and_allocates_nothing},
      {"a traced host step is reached when its submit returns",
       test_a_traced_host_step_is_reached_when_its_submit_returns},
      {"a point said reached stamps its steps and the earliest stamp stays",
       test_a_point_said_reached_stamps_its_steps_and_the_earliest_stamp_stays},
      {"a malformed trace is refused with its reason",
       test_a_malformed_trace_is_refused_with_its_reason},
      CU_TEST_INFO_NULL};
  static CU_TestInfo received[] = {
      {"load_received refuses bytes and descriptions it cannot load",
       test_load_received_refuses_bytes_and_descriptions_it_cannot_load},
      {"a received program runs as the same program loaded here",
       test_a_received_program_runs_as_the_same_program_loaded_here},
      {"threads has one element per launch in step order",
       test_threads_has_one_element_per_launch_in_step_order},
      {"a ready fill calls ready with its two words and rail memory is the end's",
       test_a_ready_fill_calls_ready_with_its_two_words_and_rail_memory_is_the_ends},
      CU_TEST_INFO_NULL};
  rig_test_add_suite("program: laws", laws);
  rig_test_add_suite("program: order", order);
  rig_test_add_suite("program: refusals and the frame", refusals);
  rig_test_add_suite("program: step points, ends and runs", runs);
  rig_test_add_suite("program: received programs, threads and rails", received);
}
