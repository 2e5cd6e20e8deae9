/* The bytes of a description (docs/format.md): round trips, every decoder
 * message with its byte offset, and damage that never crashes. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "desc_gen.h"
#include "rig/rig_desc.h"
#include "rig_test.h"

/* ---- helpers -------------------------------------------------------------- */

static uint8_t *encode(const rig_desc *d, size_t *len) {
  uint8_t *b = NULL;
  rig_error err;
  rig_status st = rig_desc_to_bytes(d, &b, len, &err);
  CU_ASSERT_EQUAL_FATAL(st, RIG_OK);
  return b;
}

/* A byte buffer the tests build by hand, INT by INT. */
typedef struct buf {
  uint8_t b[4096];
  size_t n;
} buf;

static void raw(buf *b, const void *p, size_t n) {
  memcpy(b->b + b->n, p, n);
  b->n += n;
}
static void i64(buf *b, int64_t v) {
  uint64_t u = (uint64_t)v;
  for (int i = 0; i < 8; i++) b->b[b->n++] = (uint8_t)(u >> (8 * i));
}
static void tag(buf *b, uint8_t t) {
  b->b[b->n++] = t;
}
static void header(buf *b) {
  raw(b, "rig.program\n", 12);
  i64(b, 4);
}

static rig_status decode(const buf *b, rig_error *err) {
  rig_desc *d = NULL;
  rig_status st = rig_desc_of_bytes(b->b, b->n, &d, err);
  rig_desc_free(d);
  return st;
}

/* A small well-formed description with one of each thing. */
static rig_desc *sample(void) {
  rig_desc *d = rig_desc_create();
  rig_desc_add_device(d, "x86_64");
  int64_t m = rig_desc_add_alloc(d, 0, RIG_KIND_DEVICE, 64, RIG_COPIES_TWO);
  rig_desc_data_set(d, &d->memory[m].u.alloc.init, "\0\0\0\0\0\0\0\0", 8);
  rig_desc_hole *h = rig_desc_data_add_hole(d, &d->memory[m].u.alloc.init, 0, RIG_W64, 0, 0);
  rig_desc_terms_add(d, &h->terms, rig_desc_leaf_value(rig_desc_address(0, 0)), 1);
  rig_desc_add_image(d, 0, "\177ELF", 4);
  rig_desc_add_input(d, 0, 16);
  d->ints = 2;
  rig_desc_step *loop = rig_desc_add_loop(d, NULL, rig_desc_int(0));
  rig_desc_loop_set_trip(loop, 1);
  rig_desc_submit *s = rig_desc_add_submit(d, loop, 0);
  rig_desc_submit_add_slot(d, s, rig_desc_slot_input(0));
  rig_desc_part *p = rig_desc_submit_add_launch(d, s, 0, "k", "\0\0\0\0\0\0\0\0", 8,
                                                rig_desc_fixed(4), rig_desc_fixed(1));
  rig_desc_part_add_ref(d, p, 0, 0, RIG_USE_WRITE);
  rig_desc_submit_add_fixed(d, s, rig_desc_view_of(0, 0, 64), RIG_ACCESS_READ_WRITE);
  rig_desc_step *mv =
      rig_desc_add_move(d, NULL, rig_desc_slot_input(0), rig_desc_slot_memory(0, 0, 64), 8);
  rig_desc_terms_add(d, &mv->u.move.dst_offset, rig_desc_int(1), 8);
  return d;
}

/* ---- round trips ---------------------------------------------------------- */

/* bytes -> description -> bytes is the identity, for thousands of random
 * descriptions, ill-formed ones included. */
static void test_random_descriptions_round_trip_through_bytes(void) {
  rig_rng r = {42};
  for (int i = 0; i < 4000; i++) {
    rig_desc *d = rig_gen_desc(&r, i % 50 == 0 ? RIG_DESC_MAX_DEPTH : 4);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    size_t n1, n2;
    uint8_t *b1 = encode(d, &n1);
    rig_desc *back = NULL;
    rig_error err;
    rig_status st = rig_desc_of_bytes(b1, n1, &back, &err);
    CU_ASSERT_EQUAL_FATAL(st, RIG_OK);
    uint8_t *b2 = encode(back, &n2);
    CU_ASSERT_EQUAL(n1, n2);
    CU_ASSERT(n1 == n2 && memcmp(b1, b2, n1) == 0);
    free(b1);
    free(b2);
    rig_desc_free(back);
    rig_desc_free(d);
  }
}

/* A decoded description holds the same values that were written. */
static void test_decoded_fields_equal_the_written_ones(void) {
  rig_desc *d = sample();
  size_t n;
  uint8_t *b = encode(d, &n);
  rig_desc *x = NULL;
  CU_ASSERT_EQUAL_FATAL(rig_desc_of_bytes(b, n, &x, NULL), RIG_OK);
  CU_ASSERT_EQUAL(x->ndevices, 1);
  CU_ASSERT(x->devices[0].len == 6 && memcmp(x->devices[0].bytes, "x86_64", 6) == 0);
  CU_ASSERT_EQUAL(x->memory[0].u.alloc.copies, RIG_COPIES_TWO);
  CU_ASSERT_EQUAL(x->memory[0].u.alloc.init.holes[0].terms.items[0].value.u.leaf.tag,
                  RIG_LEAF_ADDRESS);
  CU_ASSERT_EQUAL(x->ints, 2);
  CU_ASSERT_EQUAL(x->steps.n, 2);
  CU_ASSERT_EQUAL(x->steps.items[0].tag, RIG_STEP_LOOP);
  CU_ASSERT_EQUAL(x->steps.items[0].u.loop.trip, 1);
  const rig_desc_part *p = &x->steps.items[0].u.loop.body.items[0].u.submit.parts[0];
  CU_ASSERT_EQUAL(p->tag, RIG_PART_LAUNCH);
  CU_ASSERT_EQUAL(p->u.launch.groups[0].u.fixed, 4);
  CU_ASSERT_EQUAL(p->u.launch.refs[0].use, RIG_USE_WRITE);
  CU_ASSERT_EQUAL(x->steps.items[1].u.move.dst_offset.items[0].factor, 8);
  CU_ASSERT_EQUAL(rig_desc_count_submits(x), 1);
  CU_ASSERT_EQUAL(rig_desc_count_steps(x), 3);
  free(b);
  rig_desc_free(x);
  rig_desc_free(d);
}

/* The empty description is the magic, the version and six zero counts. */
static void test_empty_description_is_magic_version_and_zero_counts(void) {
  rig_desc *d = rig_desc_create();
  size_t n;
  uint8_t *b = encode(d, &n);
  buf want = {.n = 0};
  header(&want);
  for (int i = 0; i < 6; i++) i64(&want, 0);
  CU_ASSERT_EQUAL(n, want.n);
  CU_ASSERT(n == want.n && memcmp(b, want.b, n) == 0);
  free(b);
  rig_desc_free(d);
}

/* A copy is equal to its original, and independent of it. */
static void test_copy_is_equal_and_independent(void) {
  rig_desc *d = sample();
  rig_desc *c = rig_desc_copy(d);
  CU_ASSERT_PTR_NOT_NULL_FATAL(c);
  size_t n1, n2;
  uint8_t *b1 = encode(d, &n1), *b2 = encode(c, &n2);
  CU_ASSERT(n1 == n2 && memcmp(b1, b2, n1) == 0);
  rig_desc_free(d);
  CU_ASSERT_EQUAL(c->ints, 2); /* still readable after the original is gone */
  free(b1);
  free(b2);
  rig_desc_free(c);
}

/* A description of megabytes, whose arena outgrows malloc's chunks into
 * mapped ones (its steps' array and a 3 MiB init each take a chunk of
 * their own), decodes to the same bytes, and its copy outlives it. */
static void test_a_description_of_megabytes_round_trips(void) {
  enum { STEPS = 20000, INIT = 3 << 20 };
  rig_desc *d = rig_desc_create();
  CU_ASSERT_PTR_NOT_NULL_FATAL(d);
  CU_ASSERT_EQUAL_FATAL(rig_desc_add_device(d, "x86_64"), 0);
  uint8_t *init = calloc(INIT, 1);
  CU_ASSERT_PTR_NOT_NULL_FATAL(init);
  init[INIT - 1] = 7;
  int64_t m = rig_desc_add_alloc(d, 0, RIG_KIND_DEVICE, INIT, RIG_COPIES_ONE);
  CU_ASSERT_EQUAL_FATAL(rig_desc_data_set(d, &d->memory[m].u.alloc.init, init, INIT), RIG_OK);
  free(init);
  CU_ASSERT_EQUAL_FATAL(rig_desc_add_image(d, 0, "\177ELF", 4), 0);
  for (int i = 0; i < STEPS; i++) {
    rig_desc_submit *s = rig_desc_add_submit(d, NULL, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT_EQUAL_FATAL(rig_desc_submit_add_slot(d, s, rig_desc_slot_memory(m, 0, 64)), 0);
    rig_desc_part *p = rig_desc_submit_add_launch(d, s, 0, "k", "\0\0\0\0\0\0\0\0", 8,
                                                  rig_desc_fixed(i), rig_desc_fixed(1));
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    CU_ASSERT_EQUAL_FATAL(rig_desc_part_add_ref(d, p, 0, 0, RIG_USE_WRITE), 0);
  }
  size_t n1, n2;
  uint8_t *b1 = encode(d, &n1);
  rig_desc_free(d);
  rig_desc *back = NULL;
  rig_error err;
  CU_ASSERT_EQUAL_FATAL(rig_desc_of_bytes(b1, n1, &back, &err), RIG_OK);
  rig_desc *c = rig_desc_copy(back);
  CU_ASSERT_PTR_NOT_NULL_FATAL(c);
  rig_desc_free(back);
  CU_ASSERT_EQUAL(rig_desc_check(c, &err), RIG_OK);
  CU_ASSERT_EQUAL(c->memory[m].u.alloc.init.bytes.bytes[INIT - 1], 7);
  CU_ASSERT_EQUAL(c->steps.n, STEPS);
  CU_ASSERT_EQUAL(c->steps.items[STEPS - 1].u.submit.parts[0].u.launch.groups[0].u.fixed,
                  STEPS - 1);
  uint8_t *b2 = encode(c, &n2);
  CU_ASSERT(n1 == n2 && memcmp(b1, b2, n1) == 0);
  free(b1);
  free(b2);
  rig_desc_free(c);
}

/* ---- what cannot be written ----------------------------------------------- */

static void test_writing_refuses_loops_deeper_than_64(void) {
  rig_desc *d = rig_desc_create();
  rig_desc_step *l = NULL;
  for (int i = 0; i < RIG_DESC_MAX_DEPTH + 1; i++) l = rig_desc_add_loop(d, l, rig_desc_fixed(1));
  uint8_t *b = NULL;
  size_t n;
  rig_error err;
  rig_status st = rig_desc_to_bytes(d, &b, &n, &err);
  RIG_ASSERT_ERROR(st, err, RIG_EINVAL, "steps nested deeper than 64");
  CU_ASSERT_PTR_NULL(b);
  rig_desc_free(d);
}

static void test_writing_accepts_loops_exactly_64_deep(void) {
  rig_desc *d = rig_desc_create();
  rig_desc_step *l = NULL;
  for (int i = 0; i < RIG_DESC_MAX_DEPTH; i++) l = rig_desc_add_loop(d, l, rig_desc_fixed(1));
  size_t n;
  uint8_t *b = encode(d, &n);
  rig_desc *x = NULL;
  CU_ASSERT_EQUAL(rig_desc_of_bytes(b, n, &x, NULL), RIG_OK);
  rig_desc_free(x);
  free(b);
  rig_desc_free(d);
}

static void test_writing_refuses_an_integer_of_64_bits(void) {
  rig_desc *d = rig_desc_create();
  d->ints = INT64_MAX;
  uint8_t *b = NULL;
  size_t n;
  rig_error err;
  RIG_ASSERT_ERROR(rig_desc_to_bytes(d, &b, &n, &err), err, RIG_EINVAL,
                   "an integer of more than 63 bits");
  rig_desc_free(d);
}

static void test_writing_refuses_a_leaf_data_term_that_is_no_leaf(void) {
  rig_desc *d = rig_desc_create();
  int64_t m = rig_desc_add_alloc(d, 0, RIG_KIND_DEVICE, 8, RIG_COPIES_ONE);
  rig_desc_hole *h = rig_desc_data_add_hole(d, &d->memory[m].u.alloc.init, 0, RIG_W32, 0, 0);
  rig_desc_terms_add(d, &h->terms, rig_desc_fixed(3), 1);
  uint8_t *b = NULL;
  size_t n;
  rig_error err;
  RIG_ASSERT_ERROR(rig_desc_to_bytes(d, &b, &n, &err), err, RIG_EINVAL,
                   "a leaf data's hole has a term that is not a leaf");
  rig_desc_free(d);
}

/* ---- decoder messages ----------------------------------------------------- */

static void expect(const buf *b, const char *message) {
  rig_error err;
  rig_status st = decode(b, &err);
  RIG_ASSERT_ERROR(st, err, RIG_EMALFORMED, message);
}

static void test_short_or_foreign_start_is_not_a_description(void) {
  buf b = {.n = 0};
  expect(&b, "not a program description");
  raw(&b, "rig.program", 11);
  expect(&b, "not a program description");
  b.n = 0;
  raw(&b, "rig.programX", 12);
  i64(&b, 4);
  expect(&b, "not a program description");
  b.n = 0;
  raw(&b, "{\"devices\":[]}", 14);
  expect(&b, "not a program description");
}

static void test_unreadable_version_gives_its_bare_reason(void) {
  buf b = {.n = 0};
  raw(&b, "rig.program\n", 12);
  raw(&b, "\4\0\0", 3);
  expect(&b, "an integer past the end");
  b.n = 12;
  i64(&b, INT64_MAX);
  expect(&b, "an integer of more than 63 bits");
}

static void test_version_2_names_both_versions(void) {
  buf b = {.n = 0};
  raw(&b, "rig.program\n", 12);
  i64(&b, 2);
  for (int i = 0; i < 6; i++) i64(&b, 0);
  expect(&b, "a program description of format version 2, not 4");
  b.n = 12;
  i64(&b, 5);
  expect(&b, "a program description of format version 5, not 4");
}

static void test_bytes_after_a_description_are_counted(void) {
  buf b = {.n = 0};
  header(&b);
  for (int i = 0; i < 6; i++) i64(&b, 0);
  tag(&b, 0);
  tag(&b, 0);
  tag(&b, 0);
  expect(&b, "3 bytes after a program description");
}

static void test_integer_past_the_end_at_its_first_byte(void) {
  buf b = {.n = 0};
  header(&b);
  i64(&b, 0); /* devices */
  raw(&b, "\0\0\0", 3);
  expect(&b, "a malformed program description at byte 28: an integer past the end");
}

static void test_integer_of_64_bits_stays_at_its_first_byte(void) {
  buf b = {.n = 0};
  header(&b);
  i64(&b, 0);
  i64(&b, INT64_C(1) << 62); /* bit 62 set, bit 63 clear */
  expect(&b, "a malformed program description at byte 28: an integer of more than 63 bits");
  b.n = 28;
  i64(&b, INT64_MIN);
  expect(&b, "a malformed program description at byte 28: an integer of more than 63 bits");
}

static void test_count_beyond_the_bytes_left(void) {
  buf b = {.n = 0};
  header(&b);
  i64(&b, 1); /* one device, whose string claims 100 bytes */
  i64(&b, 100);
  raw(&b, "x86_64", 6);
  expect(&b, "a malformed program description at byte 36: a count of 100");
  b.n = 20;
  i64(&b, -1);
  expect(&b, "a malformed program description at byte 28: a count of -1");
}

/* One message per tag of each kind, the cursor after the tag. */
static void test_unknown_tags_name_what_they_are(void) {
  buf b = {.n = 0};
  header(&b);
  i64(&b, 0);
  i64(&b, 1);
  tag(&b, 2);
  expect(&b, "a malformed program description at byte 37: a memory of tag 2");

  b.n = 36;
  tag(&b, 0);
  i64(&b, 0);
  tag(&b, 3);
  expect(&b, "a malformed program description at byte 46: a memory kind of tag 3");

  b.n = 45;
  tag(&b, 0);
  i64(&b, 8);
  i64(&b, 0); /* init bytes */
  i64(&b, 1); /* one hole */
  i64(&b, 0);
  tag(&b, 2);
  expect(&b, "a malformed program description at byte 79: a width of tag 2");

  b.n = 78;
  tag(&b, 0);
  i64(&b, 1); /* one term */
  tag(&b, 4);
  expect(&b, "a malformed program description at byte 88: a leaf of tag 4");

  b.n = 45;
  tag(&b, 0);
  i64(&b, 8);
  i64(&b, 0);
  i64(&b, 0);
  tag(&b, 2);
  expect(&b, "a malformed program description at byte 71: copies of tag 2");

  b.n = 36;
  tag(&b, 1);
  i64(&b, 0);
  tag(&b, 3);
  expect(&b, "a malformed program description at byte 46: an area of tag 3");
}

/* Prefix of a description with no devices, memory, images, inputs, ints 0,
 * and one step. */
static void one_step(buf *b) {
  b->n = 0;
  header(b);
  for (int i = 0; i < 4; i++) i64(b, 0);
  i64(b, 0); /* ints */
  i64(b, 1); /* one step */
}

static void test_unknown_step_part_slot_value_use_access_option_tags(void) {
  buf b;
  one_step(&b); /* ends at byte 68 */
  tag(&b, 3);
  expect(&b, "a malformed program description at byte 69: a step of tag 3");

  one_step(&b);
  tag(&b, 0);
  i64(&b, 0);
  i64(&b, 1);
  tag(&b, 4);
  expect(&b, "a malformed program description at byte 86: a part of tag 4");

  one_step(&b);
  tag(&b, 0);
  i64(&b, 0);
  i64(&b, 0);
  i64(&b, 1);
  tag(&b, 3);
  expect(&b, "a malformed program description at byte 94: a slot of tag 3");

  one_step(&b);
  tag(&b, 0);
  i64(&b, 0);
  i64(&b, 0);
  i64(&b, 0);
  i64(&b, 1);
  i64(&b, 0);
  i64(&b, 0);
  i64(&b, 0);
  tag(&b, 2);
  expect(&b, "a malformed program description at byte 126: an access of tag 2");

  one_step(&b);
  tag(&b, 2);
  tag(&b, 3);
  expect(&b, "a malformed program description at byte 70: a value of tag 3");

  one_step(&b);
  tag(&b, 2);
  tag(&b, 0);
  i64(&b, 1);
  tag(&b, 2);
  expect(&b, "a malformed program description at byte 79: an option of tag 2");

  one_step(&b); /* a fill with one ref of use 3 */
  tag(&b, 0);
  i64(&b, 0);
  i64(&b, 1);
  tag(&b, 1);
  tag(&b, 3);
  i64(&b, 0);
  i64(&b, 0);
  i64(&b, 0);
  i64(&b, 1);
  i64(&b, 0);
  i64(&b, 0);
  tag(&b, 3);
  expect(&b, "a malformed program description at byte 136: a use of tag 3");
}

static void test_tag_past_the_end(void) {
  buf b;
  one_step(&b);
  tag(&b, 2); /* a loop whose trips' tag is missing */
  expect(&b, "a malformed program description at byte 69: a tag past the end");
}

/* Loops 64 deep decode; the 65th is refused where its body starts. */
static void test_steps_nested_deeper_than_64_are_refused(void) {
  buf b = {.n = 0};
  header(&b);
  for (int i = 0; i < 5; i++) i64(&b, 0);
  size_t body_at = 0;
  for (int i = 0; i <= RIG_DESC_MAX_DEPTH; i++) {
    i64(&b, 1);
    tag(&b, 2);
    tag(&b, 0);
    i64(&b, 1);
    tag(&b, 0);
    tag(&b, 0);
    body_at = b.n;
  }
  i64(&b, 0);
  char want[128];
  snprintf(want, sizeof want,
           "a malformed program description at byte %zu: steps nested deeper than 64", body_at);
  expect(&b, want);
}

/* ---- damage --------------------------------------------------------------- */

static void damage(rig_desc *d) {
  size_t n;
  uint8_t *b = encode(d, &n);
  uint8_t *copy = malloc(n);
  int decoded = 0, refused = 0;
  for (size_t cut = 0; cut < n; cut++) {
    /* A fresh allocation of exactly `cut` bytes, so ASan sees any read past it. */
    uint8_t *prefix = malloc(cut ? cut : 1);
    memcpy(prefix, b, cut);
    rig_desc *x = NULL;
    rig_error err;
    rig_status st = rig_desc_of_bytes(prefix, cut, &x, &err);
    CU_ASSERT(st == RIG_EMALFORMED);
    CU_ASSERT(x == NULL);
    refused++;
    free(prefix);
  }
  static const uint8_t changes[] = {0x00, 0x01, 0x02, 0x03, 0x04, 0x07, 0x40, 0x80, 0xC0, 0xFF};
  for (size_t i = 0; i < n; i++) {
    for (size_t c = 0; c < sizeof changes; c++) {
      memcpy(copy, b, n);
      if (copy[i] == changes[c]) continue;
      copy[i] = changes[c];
      rig_desc *x = NULL;
      rig_error err = {0};
      rig_status st = rig_desc_of_bytes(copy, n, &x, &err);
      CU_ASSERT(st == RIG_OK || st == RIG_EMALFORMED);
      if (st == RIG_OK) {
        decoded++;
        /* What decodes writes back to the same bytes. */
        size_t m;
        uint8_t *again = encode(x, &m);
        CU_ASSERT(m == n && memcmp(again, copy, n) == 0);
        free(again);
      } else {
        CU_ASSERT(err.message[0] != '\0');
      }
      rig_desc_free(x);
    }
  }
  CU_ASSERT(decoded > 0);
  CU_ASSERT(refused > 0);
  free(copy);
  free(b);
}

static void test_every_cut_and_byte_change_of_a_sample_is_clean(void) {
  rig_desc *d = sample();
  damage(d);
  rig_desc_free(d);
}

static void test_every_cut_and_byte_change_of_random_descriptions_is_clean(void) {
  rig_rng r = {7};
  int done = 0;
  while (done < 6) {
    rig_desc *d = rig_gen_desc(&r, 3);
    if (d->steps.n > 0 && d->nmemory > 0) {
      damage(d);
      done++;
    }
    rig_desc_free(d);
  }
}

/* The builder's status calls: RIG_OK, and RIG_EINVAL for a ref on a part
 * that holds none, the description left as it was. */
static void test_builder_refuses_a_ref_on_a_copy_part(void) {
  rig_desc *d = rig_desc_create();
  CU_ASSERT_PTR_NOT_NULL_FATAL(d);
  rig_desc_submit *s = rig_desc_add_submit(d, NULL, 0);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  rig_desc_part *c = rig_desc_submit_add_copy(d, s, 0, 0, 8);
  CU_ASSERT_PTR_NOT_NULL_FATAL(c);
  CU_ASSERT_EQUAL(rig_desc_part_add_ref(d, c, 0, 0, RIG_USE_READ), RIG_EINVAL);
  CU_ASSERT_EQUAL(rig_desc_terms_add(d, &c->u.copy.src_offset, rig_desc_fixed(8), 1), RIG_OK);
  CU_ASSERT_EQUAL(rig_desc_submit_add_fixed(d, s, rig_desc_view_of(0, 0, 8), RIG_ACCESS_READ),
                  RIG_OK);
  rig_desc_part *f = rig_desc_submit_add_fill(d, s, rig_desc_ready(0), NULL, 0);
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  CU_ASSERT_EQUAL(rig_desc_data_set(d, rig_desc_part_params(f), "\0\0\0\0\0\0\0\0", 8), RIG_OK);
  CU_ASSERT_EQUAL(rig_desc_part_add_ref(d, f, 0, 0, RIG_USE_WRITE), RIG_OK);
  CU_ASSERT_EQUAL(f->u.fill.nrefs, 1);
  CU_ASSERT_EQUAL(s->nparts, 2);
  rig_desc_free(d);
}

/* The setters of a description's ints and of a memory's init: what they
 * set is what the bytes carry; a memory that is no Alloc (a rail's, or
 * none) has no init, and setting one is RIG_EINVAL. */
static void test_builder_sets_the_ints_and_a_memorys_init(void) {
  rig_desc *d = rig_desc_create();
  CU_ASSERT_PTR_NOT_NULL_FATAL(d);
  rig_desc_add_device(d, "x86_64");
  int64_t m = rig_desc_add_alloc(d, 0, RIG_KIND_DEVICE, 8, RIG_COPIES_ONE);
  int64_t rail = rig_desc_add_rail(d, 1, RIG_AREA_COUNTS);
  rig_desc_set_ints(d, 3);
  CU_ASSERT_EQUAL(rig_desc_memory_set_init(d, m, "\1\2\3\4", 4), RIG_OK);
  rig_desc_data *init = rig_desc_memory_init(d, m);
  CU_ASSERT_PTR_NOT_NULL_FATAL(init);
  CU_ASSERT_PTR_NOT_NULL(rig_desc_data_add_hole(d, init, 0, RIG_W32, 7, 0));
  CU_ASSERT_PTR_NULL(rig_desc_memory_init(d, rail));
  CU_ASSERT_PTR_NULL(rig_desc_memory_init(d, 2));
  CU_ASSERT_PTR_NULL(rig_desc_memory_init(d, -1));
  CU_ASSERT_EQUAL(rig_desc_memory_set_init(d, rail, "x", 1), RIG_EINVAL);
  uint8_t *bytes = NULL;
  size_t len = 0;
  rig_error err;
  CU_ASSERT_EQUAL_FATAL(rig_desc_to_bytes(d, &bytes, &len, &err), RIG_OK);
  rig_desc *back = NULL;
  CU_ASSERT_EQUAL_FATAL(rig_desc_of_bytes(bytes, len, &back, &err), RIG_OK);
  CU_ASSERT_EQUAL(back->ints, 3);
  CU_ASSERT_EQUAL(back->memory[m].u.alloc.init.bytes.len, 4);
  CU_ASSERT(memcmp(back->memory[m].u.alloc.init.bytes.bytes, "\1\2\3\4", 4) == 0);
  CU_ASSERT_EQUAL(back->memory[m].u.alloc.init.nholes, 1);
  CU_ASSERT_EQUAL(back->memory[m].u.alloc.init.holes[0].add, 7);
  free(bytes);
  rig_desc_free(back);
  rig_desc_free(d);
}

/* Huge counts never allocate beyond the input: a 1 GiB string count on 40
 * bytes is refused, not attempted. */
static void test_counts_never_allocate_past_the_input(void) {
  buf b = {.n = 0};
  header(&b);
  i64(&b, INT64_C(1) << 30);
  expect(&b, "a malformed program description at byte 28: a count of 1073741824");
}

void rig_test_register(void) {
  static CU_TestInfo round_trip[] = {
      {"random descriptions round trip through bytes",
       test_random_descriptions_round_trip_through_bytes},
      {"decoded fields equal the written ones", test_decoded_fields_equal_the_written_ones},
      {"empty description is magic, version and zero counts",
       test_empty_description_is_magic_version_and_zero_counts},
      {"copy is equal and independent", test_copy_is_equal_and_independent},
      {"a description of megabytes round trips", test_a_description_of_megabytes_round_trips},
      {"writing refuses loops deeper than 64", test_writing_refuses_loops_deeper_than_64},
      {"writing accepts loops exactly 64 deep", test_writing_accepts_loops_exactly_64_deep},
      {"writing refuses an integer of 64 bits", test_writing_refuses_an_integer_of_64_bits},
      {"writing refuses a leaf data term that is no leaf",
       test_writing_refuses_a_leaf_data_term_that_is_no_leaf},
      {"builder refuses a ref on a copy part", test_builder_refuses_a_ref_on_a_copy_part},
      {"builder sets the ints and a memory's init", test_builder_sets_the_ints_and_a_memorys_init},
      CU_TEST_INFO_NULL};
  static CU_TestInfo messages[] = {
      {"short or foreign start is not a description",
       test_short_or_foreign_start_is_not_a_description},
      {"unreadable version gives its bare reason", test_unreadable_version_gives_its_bare_reason},
      {"version 2 names both versions", test_version_2_names_both_versions},
      {"bytes after a description are counted", test_bytes_after_a_description_are_counted},
      {"integer past the end at its first byte", test_integer_past_the_end_at_its_first_byte},
      {"integer of 64 bits stays at its first byte",
       test_integer_of_64_bits_stays_at_its_first_byte},
      {"count beyond the bytes left", test_count_beyond_the_bytes_left},
      {"unknown tags name what they are", test_unknown_tags_name_what_they_are},
      {"unknown step, part, slot, value, use, access, option tags",
       test_unknown_step_part_slot_value_use_access_option_tags},
      {"tag past the end", test_tag_past_the_end},
      {"steps nested deeper than 64 are refused", test_steps_nested_deeper_than_64_are_refused},
      {"counts never allocate past the input", test_counts_never_allocate_past_the_input},
      CU_TEST_INFO_NULL};
  static CU_TestInfo damaged[] = {{"every cut and byte change of a sample is clean",
                                   test_every_cut_and_byte_change_of_a_sample_is_clean},
                                  {"every cut and byte change of random descriptions is clean",
                                   test_every_cut_and_byte_change_of_random_descriptions_is_clean},
                                  CU_TEST_INFO_NULL};
  rig_test_add_suite("codec: round trip", round_trip);
  rig_test_add_suite("codec: decoder messages", messages);
  rig_test_add_suite("codec: damage", damaged);
}
