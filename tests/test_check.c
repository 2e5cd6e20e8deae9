/* rig_desc_check against docs/rules.md: a valid description passes; every
 * rule's message is exact; rules apply in their order and steps are numbered
 * in pre-order; extreme integers are refused with the right message and no
 * overflow; rails' sizes bound the views of their areas. Each refusal breaks
 * one rule of the valid base description below by changing one field. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rig/rig_desc.h"
#include "rig_test.h"

/* ---- checking ------------------------------------------------------------- */

static rig_status check_with(const rig_desc *d, bool with_rails, const rig_desc_rail_sizes *rails,
                             rig_error *err) {
  memset(err, 0, sizeof *err);
  return with_rails ? rig_desc_check_rails(d, rails, err) : rig_desc_check(d, err);
}

/* Checks d (freed after) and wants RIG_EINVAL with exactly `message`. */
#define EXPECT_REFUSED_BY(d, with_rails, rails, message)                                           \
  do {                                                                                             \
    rig_desc *d_ = (d);                                                                            \
    CU_ASSERT_PTR_NOT_NULL_FATAL(d_);                                                              \
    rig_error e_;                                                                                  \
    rig_status s_ = check_with(d_, (with_rails), (rails), &e_);                                    \
    RIG_ASSERT_ERROR(s_, e_, RIG_EINVAL, (message));                                               \
    rig_desc_free(d_);                                                                             \
  } while (0)

#define EXPECT_PASSES_BY(d, with_rails, rails)                                                     \
  do {                                                                                             \
    rig_desc *d_ = (d);                                                                            \
    CU_ASSERT_PTR_NOT_NULL_FATAL(d_);                                                              \
    rig_error e_;                                                                                  \
    rig_status s_ = check_with(d_, (with_rails), (rails), &e_);                                    \
    CU_ASSERT_EQUAL(s_, RIG_OK);                                                                   \
    if (s_ != RIG_OK) rig_test_mismatch(__FILE__, __LINE__, s_, e_.message, RIG_OK, "");           \
    rig_desc_free(d_);                                                                             \
  } while (0)

#define EXPECT_ERROR(d, message) EXPECT_REFUSED_BY(d, false, NULL, message)
#define EXPECT_ERRORF(d, ...)                                                                      \
  do {                                                                                             \
    char want_[RIG_ERROR_MESSAGE_MAX];                                                             \
    snprintf(want_, sizeof want_, __VA_ARGS__);                                                    \
    EXPECT_ERROR(d, want_);                                                                        \
  } while (0)
#define EXPECT_RAILS_ERROR(d, rails, message) EXPECT_REFUSED_BY(d, true, rails, message)

/* Passes rig_desc_check, and rig_desc_check_rails with no rails. */
#define EXPECT_OK(d)                                                                               \
  do {                                                                                             \
    rig_desc *o_ = (d);                                                                            \
    CU_ASSERT_PTR_NOT_NULL_FATAL(o_);                                                              \
    rig_error oe_;                                                                                 \
    rig_status os_ = check_with(o_, true, NULL, &oe_);                                             \
    CU_ASSERT_EQUAL(os_, RIG_OK);                                                                  \
    if (os_ != RIG_OK) rig_test_mismatch(__FILE__, __LINE__, os_, oe_.message, RIG_OK, "");        \
    EXPECT_PASSES_BY(o_, false, NULL);                                                             \
  } while (0)
#define EXPECT_RAILS_OK(d, rails) EXPECT_PASSES_BY(d, true, rails)

/* ---- the base description ------------------------------------------------- */

static const uint8_t zeros[4200];

/*   devices   0 "x86_64" (the host), 1 "cpu"
 *   ints      4
 *   memory 0  device 0, 64 bytes, One copy, init of 8 bytes:
 *               at 0 W64 Address {memory 2; on 0}
 *   memory 1  device 1, 128 bytes, Two copies, init of 16 bytes:
 *               at 0 W64 Handle 3; at 8 W32 Address {memory 1; on 1};
 *               at 12 W32 the same, shift 32
 *   memory 2  device 0, 32 bytes, One copy, no init
 *   memory 3  device 1, 16 bytes, One copy, no init
 *   image 0   device 0, 4 bytes, no hole
 *   image 1   device 1, 16 bytes: at 8 W64 Entry {image 0; "k"}
 *   input 0   device 0, 256 bytes
 *   step 0  Submit on 0
 *             slots  0 Memory (2, 0, 32); 1 Memory (0, 0, 64); 2 Input 0; 3 Ints
 *             fixed  (2, 0, 32) ReadWrite
 *             part 0 Words (2, 0, 8)
 *             part 1 Launch image 0 "k", 48 bytes of params: at 0 W64 Address
 *                    {memory 2; on 0}, at 8 W64 Handle 0, at 16 W32 Int 1 * 4;
 *                    refs slot 0 at 24 Read, slot 1 at 32 Write, slot 3 at 40
 *                    Unordered; groups 4, threads Int 2
 *             part 2 Fill Entry {image 0; "f"}, 16 bytes of params, no hole;
 *                    ref slot 2 at 0 Read
 *             part 3 Copy slot 2 at () -> slot 1 at Fixed 8, 16 bytes
 *   step 1  Loop trips Int 0, trip 3, flag (Memory (3, 0, 16), 4)
 *   step 2    Submit on 1
 *               slots  0 Memory (1, 0, 128); 1 Memory (3, 0, 16)
 *               fixed  (1, 0, 128) ReadWrite
 *               part 0 Launch image 1 "g", 16 bytes of params: at 0 W64
 *                      Address {memory 1; on 1}; ref slot 0 at 8 Write
 *               part 1 Copy slot 1 at Fixed 2 * 4 -> slot 0 at (), 8 bytes
 *   step 3    Loop trips Fixed 2, trip 2
 *   step 4      Move Ints at Int 2 * 8 -> Memory (3, 0, 16) at Fixed 8, 8 bytes
 *   step 5  Move Input 0 at Fixed 0 -> Memory (2, 0, 32) at Int 1 * 8, 8 bytes */

static void add_hole(rig_desc *d, rig_desc_data *data, int64_t at, rig_desc_width width,
                     int64_t shift, rig_desc_value value, int64_t factor) {
  rig_desc_hole *h = rig_desc_data_add_hole(d, data, at, width, 0, shift);
  CU_ASSERT_PTR_NOT_NULL_FATAL(h);
  CU_ASSERT_EQUAL_FATAL(rig_desc_terms_add(d, &h->terms, value, factor), RIG_OK);
}

static void add_leaf_hole(rig_desc *d, rig_desc_data *data, int64_t at, rig_desc_width width,
                          int64_t shift, rig_desc_leaf leaf) {
  add_hole(d, data, at, width, shift, rig_desc_leaf_value(leaf), 1);
}

static void add_term(rig_desc *d, rig_desc_terms *terms, rig_desc_value value, int64_t factor) {
  CU_ASSERT_EQUAL_FATAL(rig_desc_terms_add(d, terms, value, factor), RIG_OK);
}

/* Replaces an offset by one term. */
static void set_offset(rig_desc *d, rig_desc_terms *terms, rig_desc_value value, int64_t factor) {
  terms->n = 0;
  add_term(d, terms, value, factor);
}

static void set_fixed_offset(rig_desc *d, rig_desc_terms *terms, int64_t offset) {
  set_offset(d, terms, rig_desc_fixed(offset), 1);
}

static rig_desc *base(void) {
  rig_desc *d = rig_desc_create();
  CU_ASSERT_PTR_NOT_NULL_FATAL(d);
  rig_desc_add_device(d, "x86_64");
  rig_desc_add_device(d, "cpu");
  d->ints = 4;

  rig_desc_add_alloc(d, 0, RIG_KIND_DEVICE, 64, RIG_COPIES_ONE);
  rig_desc_add_alloc(d, 1, RIG_KIND_PINNED, 128, RIG_COPIES_TWO);
  rig_desc_add_alloc(d, 0, RIG_KIND_DEVICE, 32, RIG_COPIES_ONE);
  rig_desc_add_alloc(d, 1, RIG_KIND_MAPPED, 16, RIG_COPIES_ONE);
  rig_desc_data *init0 = &d->memory[0].u.alloc.init;
  rig_desc_data_set(d, init0, zeros, 8);
  add_leaf_hole(d, init0, 0, RIG_W64, 0, rig_desc_address(2, 0));
  rig_desc_data *init1 = &d->memory[1].u.alloc.init;
  rig_desc_data_set(d, init1, zeros, 16);
  add_leaf_hole(d, init1, 0, RIG_W64, 0, rig_desc_handle(3));
  add_leaf_hole(d, init1, 8, RIG_W32, 0, rig_desc_address(1, 1));
  add_leaf_hole(d, init1, 12, RIG_W32, 32, rig_desc_address(1, 1));

  rig_desc_add_image(d, 0, "\177ELF", 4);
  rig_desc_add_image(d, 1, zeros, 16);
  add_leaf_hole(d, &d->images[1].binary, 8, RIG_W64, 0, rig_desc_entry(0, "k"));

  rig_desc_add_input(d, 0, 256);

  /* step 0 */
  rig_desc_submit *s = rig_desc_add_submit(d, NULL, 0);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  rig_desc_submit_add_slot(d, s, rig_desc_slot_memory(2, 0, 32));
  rig_desc_submit_add_slot(d, s, rig_desc_slot_memory(0, 0, 64));
  rig_desc_submit_add_slot(d, s, rig_desc_slot_input(0));
  rig_desc_submit_add_slot(d, s, rig_desc_slot_ints());
  rig_desc_submit_add_fixed(d, s, rig_desc_view_of(2, 0, 32), RIG_ACCESS_READ_WRITE);
  rig_desc_submit_add_words(d, s, rig_desc_view_of(2, 0, 8));
  rig_desc_part *p =
      rig_desc_submit_add_launch(d, s, 0, "k", zeros, 48, rig_desc_fixed(4), rig_desc_int(2));
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  rig_desc_data *params = rig_desc_part_params(p);
  add_leaf_hole(d, params, 0, RIG_W64, 0, rig_desc_address(2, 0));
  add_leaf_hole(d, params, 8, RIG_W64, 0, rig_desc_handle(0));
  add_hole(d, params, 16, RIG_W32, 0, rig_desc_int(1), 4);
  rig_desc_part_add_ref(d, p, 0, 24, RIG_USE_READ);
  rig_desc_part_add_ref(d, p, 1, 32, RIG_USE_WRITE);
  rig_desc_part_add_ref(d, p, 3, 40, RIG_USE_UNORDERED);
  p = rig_desc_submit_add_fill(d, s, rig_desc_entry(0, "f"), zeros, 16);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  rig_desc_part_add_ref(d, p, 2, 0, RIG_USE_READ);
  p = rig_desc_submit_add_copy(d, s, 2, 1, 16);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  add_term(d, &p->u.copy.dst_offset, rig_desc_fixed(8), 1);

  /* step 1 */
  rig_desc_step *loop = rig_desc_add_loop(d, NULL, rig_desc_int(0));
  CU_ASSERT_PTR_NOT_NULL_FATAL(loop);
  rig_desc_loop_set_trip(loop, 3);
  rig_desc_loop_set_flag(loop, rig_desc_slot_memory(3, 0, 16), 4);

  /* step 2 */
  s = rig_desc_add_submit(d, loop, 1);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  rig_desc_submit_add_slot(d, s, rig_desc_slot_memory(1, 0, 128));
  rig_desc_submit_add_slot(d, s, rig_desc_slot_memory(3, 0, 16));
  rig_desc_submit_add_fixed(d, s, rig_desc_view_of(1, 0, 128), RIG_ACCESS_READ_WRITE);
  p = rig_desc_submit_add_launch(d, s, 1, "g", zeros, 16, rig_desc_fixed(1), rig_desc_fixed(1));
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  add_leaf_hole(d, rig_desc_part_params(p), 0, RIG_W64, 0, rig_desc_address(1, 1));
  rig_desc_part_add_ref(d, p, 0, 8, RIG_USE_WRITE);
  p = rig_desc_submit_add_copy(d, s, 1, 0, 8);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  add_term(d, &p->u.copy.src_offset, rig_desc_fixed(2), 4);

  /* step 3 */
  rig_desc_step *inner = rig_desc_add_loop(d, loop, rig_desc_fixed(2));
  CU_ASSERT_PTR_NOT_NULL_FATAL(inner);
  rig_desc_loop_set_trip(inner, 2);

  /* step 4 */
  rig_desc_step *mv =
      rig_desc_add_move(d, inner, rig_desc_slot_ints(), rig_desc_slot_memory(3, 0, 16), 8);
  CU_ASSERT_PTR_NOT_NULL_FATAL(mv);
  add_term(d, &mv->u.move.src_offset, rig_desc_int(2), 8);
  add_term(d, &mv->u.move.dst_offset, rig_desc_fixed(8), 1);

  /* step 5 */
  mv = rig_desc_add_move(d, NULL, rig_desc_slot_input(0), rig_desc_slot_memory(2, 0, 32), 8);
  CU_ASSERT_PTR_NOT_NULL_FATAL(mv);
  add_term(d, &mv->u.move.src_offset, rig_desc_fixed(0), 1);
  add_term(d, &mv->u.move.dst_offset, rig_desc_int(1), 8);
  return d;
}

/* Ways into the base. */
static rig_desc_memory *mem(rig_desc *d, int64_t m) {
  return &d->memory[m];
}
static rig_desc_data *init_of(rig_desc *d, int64_t m) {
  return &d->memory[m].u.alloc.init;
}
static rig_desc_data *binary_of(rig_desc *d, int64_t k) {
  return &d->images[k].binary;
}
static rig_desc_value *term_value(rig_desc_data *data, size_t hole) {
  return &data->holes[hole].terms.items[0].value;
}
static void set_term_leaf(rig_desc_data *data, size_t hole, rig_desc_leaf leaf) {
  *term_value(data, hole) = rig_desc_leaf_value(leaf);
}
static rig_desc_submit *submit0(rig_desc *d) {
  return &d->steps.items[0].u.submit;
}
static rig_desc_part *words0(rig_desc *d) {
  return &submit0(d)->parts[0];
}
static rig_desc_part *launch0(rig_desc *d) {
  return &submit0(d)->parts[1];
}
static rig_desc_data *params0(rig_desc *d) {
  return &launch0(d)->u.launch.params;
}
static rig_desc_part *fill0(rig_desc *d) {
  return &submit0(d)->parts[2];
}
static rig_desc_part *copy0(rig_desc *d) {
  return &submit0(d)->parts[3];
}
static rig_desc_step *loop1(rig_desc *d) {
  return &d->steps.items[1];
}
static rig_desc_submit *submit2(rig_desc *d) {
  return &loop1(d)->u.loop.body.items[0].u.submit;
}
static rig_desc_part *launch2(rig_desc *d) {
  return &submit2(d)->parts[0];
}
static rig_desc_part *copy2(rig_desc *d) {
  return &submit2(d)->parts[1];
}
static rig_desc_step *loop3(rig_desc *d) {
  return &loop1(d)->u.loop.body.items[1];
}
static rig_desc_step *move4(rig_desc *d) {
  return &loop3(d)->u.loop.body.items[0];
}
static rig_desc_step *move5(rig_desc *d) {
  return &d->steps.items[2];
}

/* The integers every extreme-value test tries. */
#define TWO_59 (INT64_C(1) << 59)
static const int64_t extremes[] = {
    RIG_INT_MAX,
    RIG_INT_MAX - 1,
    RIG_INT_MAX - 3,
    RIG_INT_MAX - 7,
    RIG_INT_MIN,
    RIG_INT_MIN + 1,
    -1,
    INT64_C(1) << 60,
    RIG_INT_MAX / 8 + 1,
};
#define NEXTREMES (sizeof extremes / sizeof extremes[0])

/* ---- valid descriptions ----------------------------------------------------- */

static void test_the_empty_description_passes(void) {
  EXPECT_OK(rig_desc_create());
}

static void test_the_base_description_passes(void) {
  EXPECT_OK(base());
}

static void test_the_base_description_passes_with_unknown_rails(void) {
  EXPECT_RAILS_OK(base(), NULL);
}

static void test_a_null_error_record_is_allowed(void) {
  rig_desc *d = base();
  CU_ASSERT_EQUAL(rig_desc_check(d, NULL), RIG_OK);
  d->ints = -1;
  CU_ASSERT_EQUAL(rig_desc_check(d, NULL), RIG_EINVAL);
  CU_ASSERT_EQUAL(rig_desc_check_rails(d, NULL, NULL), RIG_EINVAL);
  rig_desc_free(d);
}

static void test_a_fill_of_a_ready_leaf_passes_without_its_rail(void) {
  rig_desc *d = base();
  fill0(d)->u.fill.fill = rig_desc_ready(99);
  EXPECT_OK(d);
}

static void test_rail_memory_has_nothing_to_check_without_its_rail(void) {
  rig_desc *d = base();
  rig_desc_add_rail(d, 99, RIG_AREA_OUTBOUND);
  rig_desc_add_rail(d, -1, RIG_AREA_COUNTS);
  EXPECT_OK(d);
}

static void test_an_init_as_long_as_its_memory_passes(void) {
  rig_desc *d = base();
  rig_desc_data_set(d, init_of(d, 3), zeros, 16);
  EXPECT_OK(d);
}

static void test_a_w32_hole_at_the_last_word_passes(void) {
  rig_desc *d = base();
  init_of(d, 0)->holes[0].width = RIG_W32;
  init_of(d, 0)->holes[0].at = 4;
  EXPECT_OK(d);
}

static void test_a_shift_of_62_passes(void) {
  rig_desc *d = base();
  init_of(d, 0)->holes[0].shift = 62;
  EXPECT_OK(d);
}

static void test_an_input_of_zero_bytes_passes(void) {
  rig_desc *d = base();
  d->inputs[0].bytes = 0;
  EXPECT_OK(d);
}

static void test_an_entry_in_an_init_may_name_any_image(void) {
  rig_desc *d = base();
  set_term_leaf(init_of(d, 1), 0, rig_desc_entry(1, "k"));
  EXPECT_OK(d);
}

/* ---- 3. the ints ------------------------------------------------------------ */

static void test_negative_ints_are_refused(void) {
  rig_desc *d = base();
  d->ints = -1;
  EXPECT_ERROR(d, "-1 ints");
}

static void test_ints_past_2_to_the_59_are_refused(void) {
  rig_desc *d = base();
  d->ints = TWO_59 + 1;
  EXPECT_ERROR(d, "576460752303423489 ints");
}

static void test_ints_of_exactly_2_to_the_59_pass(void) {
  rig_desc *d = base();
  d->ints = TWO_59;
  EXPECT_OK(d);
}

static void test_zero_ints_pass_without_ints_named(void) {
  rig_desc *d = rig_desc_create();
  d->ints = 0;
  EXPECT_OK(d);
}

/* ---- 4. memory ---------------------------------------------------------------- */

static void test_memory_of_no_such_device_is_refused(void) {
  rig_desc *d = base();
  mem(d, 2)->u.alloc.device = 2;
  EXPECT_ERROR(d, "memory 2: device 2: no such device");
  d = base();
  mem(d, 0)->u.alloc.device = -1;
  EXPECT_ERROR(d, "memory 0: device -1: no such device");
}

static void test_memory_of_negative_bytes_is_refused(void) {
  rig_desc *d = base();
  mem(d, 2)->u.alloc.bytes = -1;
  EXPECT_ERROR(d, "memory 2: -1 bytes");
}

static void test_an_init_longer_than_its_memory_is_refused(void) {
  rig_desc *d = base();
  rig_desc_data_set(d, init_of(d, 3), zeros, 17);
  EXPECT_ERROR(d, "memory 3: 17 bytes of init in 16 bytes");
}

static void test_an_init_hole_outside_the_init_is_refused(void) {
  rig_desc *d = base();
  init_of(d, 0)->holes[0].at = 1;
  EXPECT_ERROR(d, "memory 0: a hole at 1 outside its 8 bytes");
  d = base();
  init_of(d, 0)->holes[0].at = -8;
  EXPECT_ERROR(d, "memory 0: a hole at -8 outside its 8 bytes");
  d = base();
  init_of(d, 1)->holes[2].at = 13; /* W32 in 16 bytes: 12 is the last */
  EXPECT_ERROR(d, "memory 1: a hole at 13 outside its 16 bytes");
}

/* A hole lies in its init's bytes, not in its memory's. */
static void test_a_hole_past_the_init_but_inside_the_memory_is_refused(void) {
  rig_desc *d = base();
  init_of(d, 0)->holes[0].at = 32;
  EXPECT_ERROR(d, "memory 0: a hole at 32 outside its 8 bytes");
}

static void test_an_init_hole_shift_outside_0_to_62_is_refused(void) {
  rig_desc *d = base();
  init_of(d, 0)->holes[0].shift = 63;
  EXPECT_ERROR(d, "memory 0: a hole's shift 63 outside 0 to 62");
  d = base();
  init_of(d, 1)->holes[1].shift = -1;
  EXPECT_ERROR(d, "memory 1: a hole's shift -1 outside 0 to 62");
}

static void test_an_init_term_that_is_no_leaf_is_refused(void) {
  rig_desc *d = base();
  *term_value(init_of(d, 0), 0) = rig_desc_fixed(0);
  EXPECT_ERROR(d, "memory 0: a hole's term is not a leaf");
  d = base();
  *term_value(init_of(d, 1), 1) = rig_desc_int(0);
  EXPECT_ERROR(d, "memory 1: a hole's term is not a leaf");
}

static void test_init_holes_sharing_a_byte_are_refused(void) {
  rig_desc *d = base();
  add_leaf_hole(d, init_of(d, 1), 4, RIG_W32, 0, rig_desc_handle(3));
  EXPECT_ERROR(d, "memory 1: holes at 0 and 4 share a byte");
}

/* The holes are sorted by `at` first: the pair reported is the first in
 * that order, the smaller `at` first, whatever the array order. */
static void test_init_holes_sharing_a_byte_are_reported_in_order_of_at(void) {
  rig_desc *d = base();
  add_leaf_hole(d, init_of(d, 1), 10, RIG_W32, 0, rig_desc_handle(3));
  EXPECT_ERROR(d, "memory 1: holes at 8 and 10 share a byte");
  d = base();
  add_leaf_hole(d, init_of(d, 1), 8, RIG_W32, 0, rig_desc_handle(3));
  EXPECT_ERROR(d, "memory 1: holes at 8 and 8 share a byte");
}

static void test_init_values_index_their_arrays(void) {
  rig_desc *d = base();
  set_term_leaf(init_of(d, 0), 0, rig_desc_address(4, 0));
  EXPECT_ERROR(d, "memory 0: memory 4: no such memory");
  d = base();
  set_term_leaf(init_of(d, 0), 0, rig_desc_address(2, 2));
  EXPECT_ERROR(d, "memory 0: device 2: no such device");
  d = base();
  set_term_leaf(init_of(d, 0), 0, rig_desc_address(2, -1));
  EXPECT_ERROR(d, "memory 0: device -1: no such device");
  d = base();
  set_term_leaf(init_of(d, 1), 0, rig_desc_handle(-1));
  EXPECT_ERROR(d, "memory 1: memory -1: no such memory");
  d = base();
  set_term_leaf(init_of(d, 1), 0, rig_desc_entry(2, "k"));
  EXPECT_ERROR(d, "memory 1: image 2: no such image");
}

static void test_memory_of_one_copy_naming_memory_of_two_is_refused(void) {
  rig_desc *d = base();
  set_term_leaf(init_of(d, 0), 0, rig_desc_address(1, 1));
  EXPECT_ERROR(d, "memory 0: of one copy, a hole names memory of two");
  d = base();
  set_term_leaf(init_of(d, 0), 0, rig_desc_handle(1));
  EXPECT_ERROR(d, "memory 0: of one copy, a hole names memory of two");
}

/* ---- 5. images ---------------------------------------------------------------- */

static void test_an_image_of_no_such_device_is_refused(void) {
  rig_desc *d = base();
  d->images[0].device = 2;
  EXPECT_ERROR(d, "image 0: device 2: no such device");
}

static void test_an_entry_naming_a_later_image_is_refused(void) {
  rig_desc *d = base();
  rig_desc_data_set(d, binary_of(d, 0), zeros, 8);
  add_leaf_hole(d, binary_of(d, 0), 0, RIG_W64, 0, rig_desc_entry(1, "g"));
  EXPECT_ERROR(d, "image 0: an Entry of image 1, not of an image before this one");
}

static void test_an_entry_naming_its_own_image_is_refused(void) {
  rig_desc *d = base();
  set_term_leaf(binary_of(d, 1), 0, rig_desc_entry(1, "k"));
  EXPECT_ERROR(d, "image 1: an Entry of image 1, not of an image before this one");
  d = base();
  set_term_leaf(binary_of(d, 1), 0, rig_desc_entry(-1, "k"));
  EXPECT_ERROR(d, "image 1: image -1: no such image");
}

static void test_image_holes_are_checked_as_holes(void) {
  rig_desc *d = base();
  binary_of(d, 1)->holes[0].at = 9;
  EXPECT_ERROR(d, "image 1: a hole at 9 outside its 16 bytes");
  d = base();
  binary_of(d, 1)->holes[0].shift = 63;
  EXPECT_ERROR(d, "image 1: a hole's shift 63 outside 0 to 62");
  d = base();
  *term_value(binary_of(d, 1), 0) = rig_desc_fixed(1);
  EXPECT_ERROR(d, "image 1: a hole's term is not a leaf");
  d = base();
  add_leaf_hole(d, binary_of(d, 1), 4, RIG_W64, 0, rig_desc_entry(0, "k"));
  EXPECT_ERROR(d, "image 1: holes at 4 and 8 share a byte");
  d = base();
  set_term_leaf(binary_of(d, 1), 0, rig_desc_address(4, 0));
  EXPECT_ERROR(d, "image 1: memory 4: no such memory");
}

static void test_an_image_hole_naming_memory_of_two_copies_is_refused(void) {
  rig_desc *d = base();
  set_term_leaf(binary_of(d, 1), 0, rig_desc_address(1, 1));
  EXPECT_ERROR(d, "image 1: a hole names memory of two copies");
  d = base();
  set_term_leaf(binary_of(d, 1), 0, rig_desc_handle(1));
  EXPECT_ERROR(d, "image 1: a hole names memory of two copies");
}

static void test_an_image_holding_an_address_is_refused(void) {
  rig_desc *d = base();
  set_term_leaf(binary_of(d, 1), 0, rig_desc_address(3, 1));
  EXPECT_ERROR(d, "image 1: a hole holds an Address");
}

static void test_an_image_holding_a_handle_is_refused(void) {
  rig_desc *d = base();
  set_term_leaf(binary_of(d, 1), 0, rig_desc_handle(3));
  EXPECT_ERROR(d, "image 1: a hole holds a Handle");
}

/* ---- 6. inputs ---------------------------------------------------------------- */

static void test_an_input_of_no_such_device_is_refused(void) {
  rig_desc *d = base();
  d->inputs[0].device = 2;
  EXPECT_ERROR(d, "input 0: device 2: no such device");
}

static void test_an_input_of_negative_bytes_is_refused(void) {
  rig_desc *d = base();
  d->inputs[0].bytes = -1;
  EXPECT_ERROR(d, "input 0: -1 bytes");
}

/* ---- 7. submit steps -------------------------------------------------------------- */

static void test_a_submit_on_no_such_device_is_refused(void) {
  rig_desc *d = base();
  submit0(d)->device = 2;
  EXPECT_ERROR(d, "step 0: device 2: no such device");
  d = base();
  submit2(d)->device = -1;
  EXPECT_ERROR(d, "step 2: device -1: no such device");
}

static void test_a_words_view_outside_its_memory_is_refused(void) {
  rig_desc *d = base();
  words0(d)->u.words = rig_desc_view_of(2, 30, 8);
  EXPECT_ERROR(d, "step 0: memory 2: a view of 8 bytes at 30 outside its 32 bytes");
  d = base();
  words0(d)->u.words = rig_desc_view_of(4, 0, 8);
  EXPECT_ERROR(d, "step 0: memory 4: no such memory");
}

static void test_a_fill_of_an_address_or_handle_is_refused(void) {
  rig_desc *d = base();
  fill0(d)->u.fill.fill = rig_desc_address(2, 0);
  EXPECT_ERROR(d, "step 0: a fill's leaf is an Address, not an Entry or a Ready");
  d = base();
  fill0(d)->u.fill.fill = rig_desc_handle(2);
  EXPECT_ERROR(d, "step 0: a fill's leaf is a Handle, not an Entry or a Ready");
}

static void test_a_fill_entry_of_no_such_image_is_refused(void) {
  rig_desc *d = base();
  fill0(d)->u.fill.fill = rig_desc_entry(2, "f");
  EXPECT_ERROR(d, "step 0: image 2: no such image");
}

static void test_fill_params_not_whole_words_up_to_4096_are_refused(void) {
  rig_desc *d = base();
  rig_desc_data_set(d, &fill0(d)->u.fill.params, zeros, 14);
  EXPECT_ERROR(d, "step 0: a fill's 14 bytes of parameters, not a whole number of 32-bit words up "
                  "to 4096");
  d = base();
  rig_desc_data_set(d, &fill0(d)->u.fill.params, zeros, 4100);
  EXPECT_ERROR(d, "step 0: a fill's 4100 bytes of parameters, not a whole number of 32-bit words "
                  "up to 4096");
}

static void test_params_of_exactly_4096_bytes_pass(void) {
  rig_desc *d = base();
  rig_desc_data_set(d, &fill0(d)->u.fill.params, zeros, 4096);
  rig_desc_data_set(d, params0(d), zeros, 4096);
  EXPECT_OK(d);
}

static void test_params_of_12_bytes_are_whole_words(void) {
  rig_desc *d = base();
  rig_desc_data_set(d, &fill0(d)->u.fill.params, zeros, 12);
  EXPECT_OK(d);
}

static void test_a_launch_of_no_such_image_is_refused(void) {
  rig_desc *d = base();
  launch0(d)->u.launch.image = 2;
  EXPECT_ERROR(d, "step 0: image 2: no such image");
  d = base();
  launch2(d)->u.launch.image = -1;
  EXPECT_ERROR(d, "step 2: image -1: no such image");
}

static void test_launch_params_not_whole_words_up_to_4096_are_refused(void) {
  rig_desc *d = base();
  rig_desc_data_set(d, params0(d), zeros, 50);
  EXPECT_ERROR(d, "step 0: image 0: 50 bytes of parameters, not a whole number of 32-bit words up "
                  "to 4096");
  d = base();
  rig_desc_data_set(d, params0(d), zeros, 4104);
  EXPECT_ERROR(d, "step 0: image 0: 4104 bytes of parameters, not a whole number of 32-bit words "
                  "up to 4096");
  d = base();
  rig_desc_data_set(d, &launch2(d)->u.launch.params, zeros, 18);
  EXPECT_ERROR(d, "step 2: image 1: 18 bytes of parameters, not a whole number of 32-bit words up "
                  "to 4096");
}

static void test_param_holes_are_checked_as_holes_of_the_steps_parameters(void) {
  rig_desc *d = base();
  params0(d)->holes[2].at = 45;
  EXPECT_ERROR(d, "step 0's parameters: a hole at 45 outside its 48 bytes");
  d = base();
  params0(d)->holes[1].shift = 63;
  EXPECT_ERROR(d, "step 0's parameters: a hole's shift 63 outside 0 to 62");
  d = base();
  add_hole(d, params0(d), 18, RIG_W32, 0, rig_desc_fixed(1), 1);
  EXPECT_ERROR(d, "step 0's parameters: holes at 16 and 18 share a byte");
  d = base();
  add_hole(d, &fill0(d)->u.fill.params, 8, RIG_W64, 0, rig_desc_int(4), 1);
  EXPECT_ERROR(d, "step 0's parameters: int 4: no such int");
  d = base();
  launch2(d)->u.launch.params.holes[0].at = 12;
  EXPECT_ERROR(d, "step 2's parameters: a hole at 12 outside its 16 bytes");
}

static void test_param_values_index_their_arrays(void) {
  rig_desc *d = base();
  *term_value(params0(d), 2) = rig_desc_int(4);
  EXPECT_ERROR(d, "step 0's parameters: int 4: no such int");
  d = base();
  *term_value(params0(d), 2) = rig_desc_int(-1);
  EXPECT_ERROR(d, "step 0's parameters: int -1: no such int");
  d = base();
  set_term_leaf(params0(d), 0, rig_desc_address(4, 0));
  EXPECT_ERROR(d, "step 0's parameters: memory 4: no such memory");
  d = base();
  set_term_leaf(params0(d), 0, rig_desc_address(2, 2));
  EXPECT_ERROR(d, "step 0's parameters: device 2: no such device");
  d = base();
  set_term_leaf(params0(d), 1, rig_desc_handle(4));
  EXPECT_ERROR(d, "step 0's parameters: memory 4: no such memory");
  d = base();
  set_term_leaf(params0(d), 1, rig_desc_entry(2, "k"));
  EXPECT_ERROR(d, "step 0's parameters: image 2: no such image");
}

static void test_params_may_hold_entries_ready_and_fixed_values(void) {
  rig_desc *d = base();
  set_term_leaf(params0(d), 1, rig_desc_entry(1, "g"));
  *term_value(params0(d), 2) = rig_desc_fixed(-5);
  add_leaf_hole(d, &fill0(d)->u.fill.params, 8, RIG_W64, 0, rig_desc_ready(3));
  EXPECT_OK(d);
}

static void test_geometry_values_index_their_arrays(void) {
  rig_desc *d = base();
  launch0(d)->u.launch.groups[1] = rig_desc_int(4);
  EXPECT_ERROR(d, "step 0: int 4: no such int");
  d = base();
  launch0(d)->u.launch.threads[2] = rig_desc_int(-1);
  EXPECT_ERROR(d, "step 0: int -1: no such int");
  d = base();
  launch0(d)->u.launch.shared = rig_desc_leaf_value(rig_desc_handle(4));
  EXPECT_ERROR(d, "step 0: memory 4: no such memory");
  d = base();
  launch0(d)->u.launch.groups[0] = rig_desc_leaf_value(rig_desc_address(2, 5));
  EXPECT_ERROR(d, "step 0: device 5: no such device");
  d = base();
  launch2(d)->u.launch.threads[0] = rig_desc_leaf_value(rig_desc_entry(2, "k"));
  EXPECT_ERROR(d, "step 2: image 2: no such image");
}

static void test_slot_views_are_checked(void) {
  rig_desc *d = base();
  submit0(d)->slots[0] = rig_desc_slot_memory(2, 0, 33);
  EXPECT_ERROR(d, "step 0: memory 2: a view of 33 bytes at 0 outside its 32 bytes");
  d = base();
  submit0(d)->slots[1] = rig_desc_slot_memory(4, 0, 64);
  EXPECT_ERROR(d, "step 0: memory 4: no such memory");
  d = base();
  submit2(d)->slots[1] = rig_desc_slot_memory(3, 8, 9);
  EXPECT_ERROR(d, "step 2: memory 3: a view of 9 bytes at 8 outside its 16 bytes");
}

static void test_an_input_slot_of_no_such_input_is_refused(void) {
  rig_desc *d = base();
  submit0(d)->slots[2] = rig_desc_slot_input(1);
  EXPECT_ERROR(d, "step 0: input 1: no such input");
  d = base();
  submit0(d)->slots[2] = rig_desc_slot_input(-1);
  EXPECT_ERROR(d, "step 0: input -1: no such input");
}

static void test_fixed_views_are_checked(void) {
  rig_desc *d = base();
  submit0(d)->fixed[0].view = rig_desc_view_of(2, 0, 40);
  EXPECT_ERROR(d, "step 0: memory 2: a view of 40 bytes at 0 outside its 32 bytes");
  d = base();
  submit0(d)->fixed[0].view = rig_desc_view_of(-1, 0, 32);
  EXPECT_ERROR(d, "step 0: memory -1: no such memory");
}

static void test_a_ref_of_no_such_slot_is_refused(void) {
  rig_desc *d = base();
  launch0(d)->u.launch.refs[0].slot = 4;
  EXPECT_ERROR(d, "step 0: slot 4: no such slot");
  d = base();
  fill0(d)->u.fill.refs[0].slot = -1;
  EXPECT_ERROR(d, "step 0: slot -1: no such slot");
}

static void test_a_copy_of_no_such_slot_is_refused(void) {
  rig_desc *d = base();
  copy0(d)->u.copy.src = 4;
  EXPECT_ERROR(d, "step 0: slot 4: no such slot");
  d = base();
  copy0(d)->u.copy.dst = -1;
  EXPECT_ERROR(d, "step 0: slot -1: no such slot");
  d = base();
  copy2(d)->u.copy.dst = 2;
  EXPECT_ERROR(d, "step 2: slot 2: no such slot");
}

static void test_a_slot_named_by_no_ref_or_copy_is_refused(void) {
  rig_desc *d = base();
  rig_desc_submit_add_slot(d, submit0(d), rig_desc_slot_memory(2, 0, 8));
  EXPECT_ERROR(d, "step 0: slot 4 is named by no ref or copy");
  d = base();
  rig_desc_submit_add_slot(d, submit2(d), rig_desc_slot_ints());
  EXPECT_ERROR(d, "step 2: slot 2 is named by no ref or copy");
}

static void test_an_unordered_slot_also_read_or_written_is_refused(void) {
  rig_desc *d = base();
  rig_desc_part_add_ref(d, fill0(d), 3, 8, RIG_USE_READ);
  EXPECT_ERROR(d, "step 0: slot 3 is named by an Unordered ref and by a Read or Write ref or a "
                  "copy");
  d = base();
  rig_desc_part_add_ref(d, fill0(d), 3, 8, RIG_USE_WRITE);
  EXPECT_ERROR(d, "step 0: slot 3 is named by an Unordered ref and by a Read or Write ref or a "
                  "copy");
}

static void test_an_unordered_slot_also_copied_is_refused(void) {
  rig_desc *d = base();
  copy0(d)->u.copy.src = 3; /* the ints, 32 bytes: 16 from 0 fit */
  EXPECT_ERROR(d, "step 0: slot 3 is named by an Unordered ref and by a Read or Write ref or a "
                  "copy");
}

static void test_two_unordered_refs_of_one_slot_pass(void) {
  rig_desc *d = base();
  rig_desc_part_add_ref(d, fill0(d), 3, 8, RIG_USE_UNORDERED);
  EXPECT_OK(d);
}

static void test_a_ref_outside_its_params_is_refused(void) {
  rig_desc *d = base();
  launch0(d)->u.launch.refs[2].at = 48;
  EXPECT_ERROR(d, "step 0: a ref at 48 outside its 48 bytes of parameters");
  d = base();
  launch0(d)->u.launch.refs[2].at = 44;
  EXPECT_ERROR(d, "step 0: a ref at 44 outside its 48 bytes of parameters");
  d = base();
  launch0(d)->u.launch.refs[0].at = -8;
  EXPECT_ERROR(d, "step 0: a ref at -8 outside its 48 bytes of parameters");
  d = base();
  fill0(d)->u.fill.refs[0].at = 12;
  EXPECT_ERROR(d, "step 0: a ref at 12 outside its 16 bytes of parameters");
}

static void test_a_ref_not_at_a_multiple_of_8_is_refused(void) {
  rig_desc *d = base();
  launch0(d)->u.launch.refs[1].at = 28;
  EXPECT_ERROR(d, "step 0: a ref at 28, not a multiple of 8");
  d = base();
  fill0(d)->u.fill.refs[0].at = 4;
  EXPECT_ERROR(d, "step 0: a ref at 4, not a multiple of 8");
}

static void test_a_ref_in_the_last_8_bytes_passes(void) {
  rig_desc *d = base();
  fill0(d)->u.fill.refs[0].at = 8;
  EXPECT_OK(d);
}

/* ---- 7. end pairs: copies ------------------------------------------------------- */

static void test_a_copy_of_negative_length_is_refused(void) {
  rig_desc *d = base();
  copy0(d)->u.copy.length = -1;
  EXPECT_ERROR(d, "step 0: a copy of -1 bytes");
}

static void test_a_copy_offset_naming_a_leaf_is_refused(void) {
  rig_desc *d = base();
  add_term(d, &copy0(d)->u.copy.src_offset, rig_desc_leaf_value(rig_desc_handle(0)), 1);
  EXPECT_ERROR(d, "step 0: a copy's source offset names a leaf");
  d = base();
  set_offset(d, &copy0(d)->u.copy.dst_offset, rig_desc_leaf_value(rig_desc_entry(0, "f")), 1);
  EXPECT_ERROR(d, "step 0: a copy's destination offset names a leaf");
}

static void test_a_copy_offset_of_no_such_int_is_refused(void) {
  rig_desc *d = base();
  set_offset(d, &copy0(d)->u.copy.dst_offset, rig_desc_int(4), 8);
  EXPECT_ERROR(d, "step 0: int 4: no such int");
}

static void test_a_copy_offset_past_an_int_is_refused(void) {
  rig_desc *d = base();
  set_offset(d, &copy0(d)->u.copy.dst_offset, rig_desc_fixed(RIG_INT_MAX), 2);
  EXPECT_ERROR(d, "step 0: a copy's destination offset past an int");
  d = base();
  add_term(d, &copy0(d)->u.copy.src_offset, rig_desc_fixed(RIG_INT_MAX), 1);
  add_term(d, &copy0(d)->u.copy.src_offset, rig_desc_fixed(1), 1);
  EXPECT_ERROR(d, "step 0: a copy's source offset past an int");
}

static void test_a_negative_copy_offset_is_refused(void) {
  rig_desc *d = base();
  add_term(d, &copy0(d)->u.copy.src_offset, rig_desc_fixed(-8), 1);
  EXPECT_ERROR(d, "step 0: a copy's source at -8, a negative offset");
  d = base();
  set_offset(d, &copy0(d)->u.copy.dst_offset, rig_desc_fixed(4), -1);
  EXPECT_ERROR(d, "step 0: a copy's destination at -4, a negative offset");
}

static void test_a_copy_end_outside_its_slot_is_refused(void) {
  rig_desc *d = base();
  set_fixed_offset(d, &copy0(d)->u.copy.dst_offset, 56);
  EXPECT_ERROR(d, "step 0: a copy's destination of 16 bytes at 56 outside its 64 bytes");
  d = base();
  copy0(d)->u.copy.src = 0; /* memory 2, 32 bytes */
  add_term(d, &copy0(d)->u.copy.src_offset, rig_desc_fixed(24), 1);
  EXPECT_ERROR(d, "step 0: a copy's source of 16 bytes at 24 outside its 32 bytes");
  d = base();
  set_fixed_offset(d, &copy2(d)->u.copy.src_offset, 9);
  EXPECT_ERROR(d, "step 2: a copy's source of 8 bytes at 9 outside its 16 bytes");
}

static void test_a_copy_end_at_its_slots_last_bytes_passes(void) {
  rig_desc *d = base();
  set_fixed_offset(d, &copy0(d)->u.copy.dst_offset, 48);
  EXPECT_OK(d);
}

/* An Input's length is known only at run. */
static void test_a_copy_end_far_into_an_input_passes(void) {
  rig_desc *d = base();
  add_term(d, &copy0(d)->u.copy.src_offset, rig_desc_fixed(INT64_C(1) << 40), 1);
  EXPECT_OK(d);
}

static void test_copy_ends_sharing_a_byte_are_refused(void) {
  rig_desc *d = base();
  copy0(d)->u.copy.src = 1; /* [0, 16) and [8, 24) of memory 0 */
  EXPECT_ERROR(d, "step 0: a copy's two ends share a byte");
}

static void test_copy_ends_in_two_slots_of_one_memory_share_by_view_offset(void) {
  rig_desc *d = base();
  int64_t k = rig_desc_submit_add_slot(d, submit0(d), rig_desc_slot_memory(0, 16, 16));
  copy0(d)->u.copy.src = k; /* [16, 32) and [8, 24) of memory 0 */
  EXPECT_ERROR(d, "step 0: a copy's two ends share a byte");
  d = base();
  k = rig_desc_submit_add_slot(d, submit0(d), rig_desc_slot_memory(0, 24, 16));
  copy0(d)->u.copy.src = k; /* [24, 40) and [8, 24): adjacent */
  EXPECT_OK(d);
}

static void test_copy_ends_of_one_input_in_two_slots_share(void) {
  rig_desc *d = base();
  int64_t k = rig_desc_submit_add_slot(d, submit0(d), rig_desc_slot_input(0));
  copy0(d)->u.copy.dst = k;
  copy0(d)->u.copy.dst_offset.n = 0;
  EXPECT_ERROR(d, "step 0: a copy's two ends share a byte");
}

/* ---- 7. end pairs: moves --------------------------------------------------------- */

static void test_a_move_of_negative_length_is_refused(void) {
  rig_desc *d = base();
  move5(d)->u.move.length = -1;
  EXPECT_ERROR(d, "step 5: a move of -1 bytes");
}

static void test_a_move_offset_naming_a_leaf_is_refused(void) {
  rig_desc *d = base();
  add_term(d, &move5(d)->u.move.src_offset, rig_desc_leaf_value(rig_desc_address(2, 0)), 1);
  EXPECT_ERROR(d, "step 5: a move's source offset names a leaf");
  d = base();
  add_term(d, &move4(d)->u.move.dst_offset, rig_desc_leaf_value(rig_desc_ready(0)), 1);
  EXPECT_ERROR(d, "step 4: a move's destination offset names a leaf");
}

static void test_a_move_offset_of_no_such_int_is_refused(void) {
  rig_desc *d = base();
  set_offset(d, &move4(d)->u.move.src_offset, rig_desc_int(4), 8);
  EXPECT_ERROR(d, "step 4: int 4: no such int");
  d = base();
  set_offset(d, &move5(d)->u.move.dst_offset, rig_desc_int(-1), 8);
  EXPECT_ERROR(d, "step 5: int -1: no such int");
}

static void test_a_constant_offset_whose_product_passes_an_int_is_refused(void) {
  static const struct {
    int64_t value, factor;
  } products[] = {
      {INT64_C(1) << 61, 2},      /* 2^62 */
      {RIG_INT_MIN, -1},          /* 2^62 */
      {RIG_INT_MIN, RIG_INT_MIN}, /* 2^124: past 64 bits too */
      {RIG_INT_MAX, RIG_INT_MAX}, {RIG_INT_MAX, -2}, {-(INT64_C(1) << 61) - 1, 2},
  };
  for (size_t i = 0; i < sizeof products / sizeof products[0]; i++) {
    rig_desc *d = base();
    set_offset(d, &move4(d)->u.move.dst_offset, rig_desc_fixed(products[i].value),
               products[i].factor);
    EXPECT_ERROR(d, "step 4: a move's destination offset past an int");
  }
}

static void test_a_constant_offset_whose_sum_passes_an_int_is_refused(void) {
  rig_desc *d = base();
  set_fixed_offset(d, &move4(d)->u.move.dst_offset, RIG_INT_MAX);
  add_term(d, &move4(d)->u.move.dst_offset, rig_desc_fixed(1), 1);
  EXPECT_ERROR(d, "step 4: a move's destination offset past an int");
  d = base();
  set_fixed_offset(d, &move4(d)->u.move.dst_offset, RIG_INT_MIN);
  add_term(d, &move4(d)->u.move.dst_offset, rig_desc_fixed(-1), 1);
  EXPECT_ERROR(d, "step 4: a move's destination offset past an int");
  /* A partial sum past an int is refused though the whole sum comes back. */
  d = base();
  set_fixed_offset(d, &move4(d)->u.move.dst_offset, RIG_INT_MAX);
  add_term(d, &move4(d)->u.move.dst_offset, rig_desc_fixed(1), 1);
  add_term(d, &move4(d)->u.move.dst_offset, rig_desc_fixed(-RIG_INT_MAX), 1);
  EXPECT_ERROR(d, "step 4: a move's destination offset past an int");
  d = base();
  set_fixed_offset(d, &move5(d)->u.move.src_offset, RIG_INT_MAX);
  add_term(d, &move5(d)->u.move.src_offset, rig_desc_fixed(RIG_INT_MAX), 1);
  EXPECT_ERROR(d, "step 5: a move's source offset past an int");
}

static void test_a_constant_offset_at_the_ints_edges_is_exact(void) {
  rig_desc *d = base();
  set_offset(d, &move4(d)->u.move.dst_offset, rig_desc_fixed(-(INT64_C(1) << 61)), 2);
  EXPECT_ERROR(d, "step 4: a move's destination at -4611686018427387904, a negative offset");
  d = base();
  set_fixed_offset(d, &move4(d)->u.move.dst_offset, RIG_INT_MAX);
  add_term(d, &move4(d)->u.move.dst_offset, rig_desc_fixed(RIG_INT_MIN), 1);
  EXPECT_ERROR(d, "step 4: a move's destination at -1, a negative offset");
  d = base();
  set_fixed_offset(d, &move4(d)->u.move.dst_offset, RIG_INT_MAX);
  add_term(d, &move4(d)->u.move.dst_offset, rig_desc_fixed(-RIG_INT_MAX + 8), 1);
  EXPECT_OK(d); /* 8 */
}

static void test_a_negative_move_offset_is_refused(void) {
  rig_desc *d = base();
  set_fixed_offset(d, &move4(d)->u.move.dst_offset, -1);
  EXPECT_ERROR(d, "step 4: a move's destination at -1, a negative offset");
  d = base();
  set_fixed_offset(d, &move5(d)->u.move.src_offset, -16);
  EXPECT_ERROR(d, "step 5: a move's source at -16, a negative offset");
}

static void test_a_move_end_outside_a_memory_view_is_refused(void) {
  rig_desc *d = base();
  set_fixed_offset(d, &move4(d)->u.move.dst_offset, 9);
  EXPECT_ERROR(d, "step 4: a move's destination of 8 bytes at 9 outside its 16 bytes");
}

static void test_a_move_end_outside_the_ints_is_refused(void) {
  rig_desc *d = base();
  move5(d)->u.move.src = rig_desc_slot_ints();
  set_fixed_offset(d, &move5(d)->u.move.src_offset, 32);
  EXPECT_ERROR(d, "step 5: a move's source of 8 bytes at 32 outside its 32 bytes");
  d = base();
  move5(d)->u.move.src = rig_desc_slot_ints();
  set_fixed_offset(d, &move5(d)->u.move.src_offset, 24);
  EXPECT_OK(d);
}

static void test_a_move_end_far_into_an_input_passes(void) {
  rig_desc *d = base();
  set_fixed_offset(d, &move5(d)->u.move.src_offset, RIG_INT_MAX);
  EXPECT_OK(d);
}

/* The ints' known length is 8 * ints, exactly, even at 2^59 ints. */
static void test_the_ints_of_2_to_the_59_words_hold_2_to_the_62_bytes(void) {
  rig_desc *d = base();
  d->ints = TWO_59;
  move5(d)->u.move.src = rig_desc_slot_ints();
  set_fixed_offset(d, &move5(d)->u.move.src_offset, RIG_INT_MAX - 7);
  EXPECT_OK(d);
  d = base();
  d->ints = TWO_59;
  move5(d)->u.move.src = rig_desc_slot_ints();
  set_fixed_offset(d, &move5(d)->u.move.src_offset, RIG_INT_MAX);
  EXPECT_ERROR(d, "step 5: a move's source of 8 bytes at 4611686018427387903 outside its "
                  "4611686018427387904 bytes");
}

/* Moves with both offsets constant: which ends share a byte. */
static rig_desc *move_between(rig_desc_slot src, int64_t src_offset, rig_desc_slot dst,
                              int64_t dst_offset, int64_t length) {
  rig_desc *d = base();
  rig_desc_step *mv = move5(d);
  mv->u.move.src = src;
  mv->u.move.dst = dst;
  mv->u.move.length = length;
  set_fixed_offset(d, &mv->u.move.src_offset, src_offset);
  set_fixed_offset(d, &mv->u.move.dst_offset, dst_offset);
  return d;
}

static void test_move_ends_in_one_memory_sharing_a_byte_are_refused(void) {
  EXPECT_ERROR(
      move_between(rig_desc_slot_memory(2, 0, 16), 0, rig_desc_slot_memory(2, 4, 16), 0, 8),
      "step 5: a move's two ends share a byte");
  EXPECT_ERROR(
      move_between(rig_desc_slot_memory(2, 0, 16), 4, rig_desc_slot_memory(2, 8, 16), 0, 8),
      "step 5: a move's two ends share a byte");
  EXPECT_ERROR(
      move_between(rig_desc_slot_memory(2, 8, 16), 0, rig_desc_slot_memory(2, 0, 16), 8, 1),
      "step 5: a move's two ends share a byte");
}

static void test_move_ends_both_in_the_ints_sharing_a_byte_are_refused(void) {
  EXPECT_ERROR(move_between(rig_desc_slot_ints(), 0, rig_desc_slot_ints(), 4, 8),
               "step 5: a move's two ends share a byte");
}

static void test_move_ends_in_one_input_sharing_a_byte_are_refused(void) {
  EXPECT_ERROR(move_between(rig_desc_slot_input(0), 0, rig_desc_slot_input(0), 0, 8),
               "step 5: a move's two ends share a byte");
}

static void test_adjacent_move_ends_pass(void) {
  EXPECT_OK(move_between(rig_desc_slot_memory(2, 0, 16), 0, rig_desc_slot_memory(2, 8, 16), 0, 8));
  EXPECT_OK(move_between(rig_desc_slot_memory(2, 8, 16), 0, rig_desc_slot_memory(2, 0, 16), 0, 8));
  EXPECT_OK(move_between(rig_desc_slot_ints(), 0, rig_desc_slot_ints(), 8, 8));
  EXPECT_OK(move_between(rig_desc_slot_input(0), 16, rig_desc_slot_input(0), 8, 8));
}

static void test_move_ends_of_different_buffers_pass(void) {
  EXPECT_OK(move_between(rig_desc_slot_memory(0, 0, 16), 0, rig_desc_slot_memory(2, 0, 16), 0, 8));
  EXPECT_OK(move_between(rig_desc_slot_input(0), 0, rig_desc_slot_ints(), 0, 8));
  rig_desc *d = move_between(rig_desc_slot_input(0), 0, rig_desc_slot_input(1), 0, 8);
  rig_desc_add_input(d, 0, 8);
  EXPECT_OK(d);
}

static void test_zero_length_move_ends_share_nothing(void) {
  EXPECT_OK(move_between(rig_desc_slot_memory(2, 0, 16), 0, rig_desc_slot_memory(2, 0, 16), 0, 0));
  EXPECT_OK(move_between(rig_desc_slot_input(0), 4, rig_desc_slot_input(0), 4, 0));
}

static void test_move_ends_whose_offsets_read_an_int_are_not_compared(void) {
  rig_desc *d = move_between(rig_desc_slot_ints(), 0, rig_desc_slot_ints(), 0, 8);
  set_offset(d, &move5(d)->u.move.src_offset, rig_desc_int(0), 8);
  EXPECT_OK(d);
  d = move_between(rig_desc_slot_memory(2, 0, 16), 0, rig_desc_slot_memory(2, 0, 16), 0, 8);
  set_offset(d, &move5(d)->u.move.dst_offset, rig_desc_int(1), 8);
  EXPECT_OK(d);
}

/* ---- 7. loops ------------------------------------------------------------------ */

static void test_loop_trips_values_index_their_arrays(void) {
  rig_desc *d = base();
  loop1(d)->u.loop.trips = rig_desc_int(4);
  EXPECT_ERROR(d, "step 1: int 4: no such int");
  d = base();
  loop3(d)->u.loop.trips = rig_desc_leaf_value(rig_desc_handle(4));
  EXPECT_ERROR(d, "step 3: memory 4: no such memory");
  d = base();
  loop1(d)->u.loop.trips = rig_desc_leaf_value(rig_desc_entry(2, "k"));
  EXPECT_ERROR(d, "step 1: image 2: no such image");
}

static void test_loop_trips_holding_an_address_are_refused(void) {
  rig_desc *d = base();
  loop1(d)->u.loop.trips = rig_desc_leaf_value(rig_desc_address(3, 1));
  EXPECT_ERROR(d, "step 1: trips hold an Address");
}

static void test_loop_trips_holding_a_handle_of_memory_the_flag_names_whole_pass(void) {
  rig_desc *d = base();
  loop1(d)->u.loop.trips = rig_desc_leaf_value(rig_desc_handle(3));
  EXPECT_OK(d);
}

static void test_loop_trips_holding_a_handle_the_flag_does_not_name_whole_are_refused(void) {
  rig_desc *d = base();
  loop1(d)->u.loop.trips = rig_desc_leaf_value(rig_desc_handle(2));
  EXPECT_ERROR(d, "step 1: trips hold a Handle of memory 2, which the flag does not name whole");
  d = base();
  loop1(d)->u.loop.trips = rig_desc_leaf_value(rig_desc_handle(3));
  loop1(d)->u.loop.flag_slot = rig_desc_slot_memory(3, 0, 8);
  EXPECT_ERROR(d, "step 1: trips hold a Handle of memory 3, which the flag does not name whole");
  d = base();
  loop1(d)->u.loop.trips = rig_desc_leaf_value(rig_desc_handle(3));
  loop1(d)->u.loop.flag_slot = rig_desc_slot_input(0);
  EXPECT_ERROR(d, "step 1: trips hold a Handle of memory 3, which the flag does not name whole");
  d = base(); /* no flag */
  loop3(d)->u.loop.trips = rig_desc_leaf_value(rig_desc_handle(3));
  EXPECT_ERROR(d, "step 3: trips hold a Handle of memory 3, which the flag does not name whole");
}

static void test_a_loop_trip_of_no_such_int_is_refused(void) {
  rig_desc *d = base();
  loop1(d)->u.loop.trip = 4;
  EXPECT_ERROR(d, "step 1: int 4: no such int");
  d = base();
  loop3(d)->u.loop.trip = -1;
  EXPECT_ERROR(d, "step 3: int -1: no such int");
}

static void test_a_loop_trip_is_not_checked_without_has_trip(void) {
  rig_desc *d = base();
  loop3(d)->u.loop.has_trip = false;
  loop3(d)->u.loop.trip = 99;
  EXPECT_OK(d);
}

static void test_a_loop_flag_slot_is_checked_as_a_slot(void) {
  rig_desc *d = base();
  loop1(d)->u.loop.flag_slot = rig_desc_slot_memory(4, 0, 16);
  EXPECT_ERROR(d, "step 1: memory 4: no such memory");
  d = base();
  loop1(d)->u.loop.flag_slot = rig_desc_slot_memory(3, 8, 16);
  EXPECT_ERROR(d, "step 1: memory 3: a view of 16 bytes at 8 outside its 16 bytes");
  d = base();
  loop1(d)->u.loop.flag_slot = rig_desc_slot_input(1);
  EXPECT_ERROR(d, "step 1: input 1: no such input");
}

static void test_a_flag_in_a_zero_length_view_is_refused(void) {
  rig_desc *d = base();
  loop1(d)->u.loop.flag_slot = rig_desc_slot_memory(3, 4, 0);
  loop1(d)->u.loop.flag_at = 0;
  EXPECT_ERROR(d, "step 1: memory 3: a flag of no byte");
}

static void test_a_flag_outside_its_view_is_refused(void) {
  rig_desc *d = base();
  loop1(d)->u.loop.flag_at = -1;
  EXPECT_ERROR(d, "step 1: a flag at -1 outside its 16 bytes");
  d = base();
  loop1(d)->u.loop.flag_at = 16;
  EXPECT_ERROR(d, "step 1: a flag at 16 outside its 16 bytes");
  d = base();
  loop1(d)->u.loop.flag_slot = rig_desc_slot_memory(3, 8, 8);
  loop1(d)->u.loop.flag_at = 8;
  EXPECT_ERROR(d, "step 1: a flag at 8 outside its 8 bytes");
}

static void test_a_flag_at_the_last_byte_passes(void) {
  rig_desc *d = base();
  loop1(d)->u.loop.flag_at = 15;
  EXPECT_OK(d);
}

static void test_a_flag_outside_the_ints_is_refused(void) {
  rig_desc *d = base();
  loop1(d)->u.loop.flag_slot = rig_desc_slot_ints();
  loop1(d)->u.loop.flag_at = 32;
  EXPECT_ERROR(d, "step 1: a flag at 32 outside its 32 bytes");
  d = base();
  loop1(d)->u.loop.flag_slot = rig_desc_slot_ints();
  loop1(d)->u.loop.flag_at = 31;
  EXPECT_OK(d);
}

static void test_a_flag_on_an_input_is_checked_only_for_a_negative_at(void) {
  rig_desc *d = base();
  loop1(d)->u.loop.flag_slot = rig_desc_slot_input(0);
  loop1(d)->u.loop.flag_at = RIG_INT_MAX;
  EXPECT_OK(d);
  d = base();
  loop1(d)->u.loop.flag_slot = rig_desc_slot_input(0);
  loop1(d)->u.loop.flag_at = -1;
  EXPECT_ERROR(d, "step 1: a flag at -1 outside its slot");
}

static void test_a_flag_is_not_checked_without_has_flag(void) {
  rig_desc *d = base();
  loop1(d)->u.loop.has_flag = false;
  loop1(d)->u.loop.flag_at = -1;
  EXPECT_OK(d);
}

static rig_desc *nested(int depth) {
  rig_desc *d = rig_desc_create();
  rig_desc_add_device(d, "x86_64");
  d->ints = 1;
  rig_desc_step *l = NULL;
  for (int i = 0; i < depth; i++) l = rig_desc_add_loop(d, l, rig_desc_fixed(1));
  rig_desc_add_move(d, l, rig_desc_slot_ints(), rig_desc_slot_ints(), 0);
  return d;
}

static void test_steps_nested_64_deep_pass(void) {
  EXPECT_OK(nested(RIG_DESC_MAX_DEPTH));
}

static void test_steps_nested_65_deep_are_refused(void) {
  EXPECT_ERROR(nested(RIG_DESC_MAX_DEPTH + 1), "step 64: steps nested deeper than 64");
  EXPECT_ERROR(nested(RIG_DESC_MAX_DEPTH + 10), "step 64: steps nested deeper than 64");
}

/* ---- 8. the order rules ---------------------------------------------------------- */

static void test_an_address_on_another_device_than_its_steps_is_refused(void) {
  rig_desc *d = base();
  set_term_leaf(params0(d), 0, rig_desc_address(2, 1));
  EXPECT_ERROR(d, "step 0: an Address of memory 2 on device 1, not the step's device 0");
  d = base();
  set_term_leaf(&launch2(d)->u.launch.params, 0, rig_desc_address(1, 0));
  EXPECT_ERROR(d, "step 2: an Address of memory 1 on device 0, not the step's device 1");
}

static void test_an_address_of_memory_named_whole_only_in_a_slot_is_refused(void) {
  rig_desc *d = base();
  set_term_leaf(params0(d), 0, rig_desc_address(0, 0));
  EXPECT_ERROR(d, "step 0: an Address of memory 0 that the step does not fix whole");
}

static void test_an_address_of_memory_fixed_but_not_whole_is_refused(void) {
  rig_desc *d = base();
  submit0(d)->fixed[0].view = rig_desc_view_of(2, 0, 16);
  EXPECT_ERROR(d, "step 0: an Address of memory 2 that the step does not fix whole");
  d = base();
  submit0(d)->fixed[0].view = rig_desc_view_of(2, 8, 24);
  EXPECT_ERROR(d, "step 0: an Address of memory 2 that the step does not fix whole");
}

static void test_an_address_of_memory_another_step_fixes_is_refused(void) {
  rig_desc *d = base();
  set_term_leaf(&launch2(d)->u.launch.params, 0, rig_desc_address(2, 1));
  EXPECT_ERROR(d, "step 2: an Address of memory 2 that the step does not fix whole");
}

static void test_addresses_in_fill_params_and_geometry_follow_the_order_rules(void) {
  rig_desc *d = base();
  add_leaf_hole(d, &fill0(d)->u.fill.params, 8, RIG_W64, 0, rig_desc_address(0, 0));
  EXPECT_ERROR(d, "step 0: an Address of memory 0 that the step does not fix whole");
  d = base();
  launch0(d)->u.launch.shared = rig_desc_leaf_value(rig_desc_address(0, 0));
  EXPECT_ERROR(d, "step 0: an Address of memory 0 that the step does not fix whole");
  d = base();
  launch0(d)->u.launch.groups[2] = rig_desc_leaf_value(rig_desc_address(2, 1));
  EXPECT_ERROR(d, "step 0: an Address of memory 2 on device 1, not the step's device 0");
  d = base();
  launch0(d)->u.launch.shared = rig_desc_leaf_value(rig_desc_address(2, 0));
  add_leaf_hole(d, &fill0(d)->u.fill.params, 8, RIG_W64, 0, rig_desc_address(2, 0));
  EXPECT_OK(d);
}

static void test_a_handle_of_memory_not_named_whole_is_refused(void) {
  rig_desc *d = base();
  set_term_leaf(params0(d), 1, rig_desc_handle(3));
  EXPECT_ERROR(d, "step 0: a Handle of memory 3 that the step does not name whole");
  d = base();
  submit0(d)->slots[1] = rig_desc_slot_memory(0, 0, 32);
  EXPECT_ERROR(d, "step 0: a Handle of memory 0 that the step does not name whole");
  d = base();
  launch0(d)->u.launch.threads[1] = rig_desc_leaf_value(rig_desc_handle(1));
  EXPECT_ERROR(d, "step 0: a Handle of memory 1 that the step does not name whole");
}

static void test_a_handle_of_memory_named_whole_by_words_or_fixed_passes(void) {
  rig_desc *d = base();
  words0(d)->u.words = rig_desc_view_of(3, 0, 16);
  set_term_leaf(params0(d), 1, rig_desc_handle(3));
  EXPECT_OK(d);
  d = base();
  submit0(d)->slots[1] = rig_desc_slot_memory(0, 0, 32);
  rig_desc_submit_add_fixed(d, submit0(d), rig_desc_view_of(0, 0, 64), RIG_ACCESS_READ);
  EXPECT_OK(d);
}

static void test_a_step_naming_memory_whose_init_holds_other_memory_names_it_whole(void) {
  rig_desc *d = base();
  submit2(d)->slots[1] = rig_desc_slot_memory(3, 0, 8);
  set_fixed_offset(d, &copy2(d)->u.copy.src_offset, 0);
  EXPECT_ERROR(d, "step 2: names memory 1, whose init holds memory 3, but not memory 3 whole");
  d = base();
  rig_desc_submit *s = rig_desc_add_submit(d, NULL, 0); /* step 6 */
  rig_desc_submit_add_slot(d, s, rig_desc_slot_memory(0, 8, 8));
  rig_desc_part *p = rig_desc_submit_add_fill(d, s, rig_desc_entry(0, "f"), zeros, 8);
  rig_desc_part_add_ref(d, p, 0, 0, RIG_USE_READ);
  EXPECT_ERROR(d, "step 6: names memory 0, whose init holds memory 2, but not memory 2 whole");
}

static void test_a_move_naming_memory_whose_init_holds_other_memory_passes(void) {
  rig_desc *d = base();
  move5(d)->u.move.dst = rig_desc_slot_memory(0, 0, 16);
  EXPECT_OK(d);
}

static void test_an_init_address_no_step_on_its_device_fixes_whole_is_refused(void) {
  rig_desc *d = base();
  set_term_leaf(init_of(d, 0), 0, rig_desc_address(2, 1));
  EXPECT_ERROR(d, "memory 0: an Address of memory 2 on device 1, which no step on device 1 fixes "
                  "whole");
  d = base(); /* step 2 only names memory 1 whole now */
  set_term_leaf(&launch2(d)->u.launch.params, 0, rig_desc_handle(1));
  submit2(d)->fixed[0].view = rig_desc_view_of(1, 0, 64);
  EXPECT_ERROR(d, "memory 1: an Address of memory 1 on device 1, which no step on device 1 fixes "
                  "whole");
}

/* ---- step numbering ------------------------------------------------------------- */

static void test_steps_are_numbered_in_pre_order(void) {
  rig_desc *d = rig_desc_create();
  rig_desc_add_device(d, "x86_64");
  rig_desc_step *l = rig_desc_add_loop(d, NULL, rig_desc_fixed(1));
  rig_desc_add_submit(d, l, 0);
  rig_desc_add_submit(d, l, 0);
  rig_desc_add_submit(d, NULL, 9);
  EXPECT_ERROR(d, "step 3: device 9: no such device");
}

static void test_loop_body_steps_are_numbered_after_their_loop(void) {
  rig_desc *d = base();
  move4(d)->u.move.length = -2;
  EXPECT_ERROR(d, "step 4: a move of -2 bytes");
  d = base();
  *term_value(&launch2(d)->u.launch.params, 0) = rig_desc_int(7);
  EXPECT_ERROR(d, "step 2's parameters: int 7: no such int");
}

/* ---- the order of the rules ------------------------------------------------------- */

static void test_ints_are_checked_before_memory(void) {
  rig_desc *d = base();
  d->ints = -1;
  mem(d, 0)->u.alloc.device = 9;
  EXPECT_ERROR(d, "-1 ints");
}

static void test_memory_is_checked_in_order_before_images(void) {
  rig_desc *d = base();
  mem(d, 2)->u.alloc.device = 9;
  mem(d, 0)->u.alloc.bytes = -1;
  d->images[0].device = 9;
  EXPECT_ERROR(d, "memory 0: -1 bytes");
}

static void test_images_are_checked_before_inputs(void) {
  rig_desc *d = base();
  d->images[1].device = 9;
  d->inputs[0].bytes = -1;
  EXPECT_ERROR(d, "image 1: device 9: no such device");
}

static void test_inputs_are_checked_before_steps(void) {
  rig_desc *d = base();
  d->inputs[0].device = 9;
  submit0(d)->device = 9;
  EXPECT_ERROR(d, "input 0: device 9: no such device");
}

static void test_a_later_structural_rule_comes_before_an_earlier_order_rule(void) {
  rig_desc *d = base();
  set_term_leaf(params0(d), 1, rig_desc_handle(3)); /* order rule, step 0 */
  move5(d)->u.move.length = -1;                     /* structural, step 5 */
  EXPECT_ERROR(d, "step 5: a move of -1 bytes");
  d = base();
  loop1(d)->u.loop.trips = rig_desc_leaf_value(rig_desc_handle(2)); /* step 1 */
  set_term_leaf(params0(d), 0, rig_desc_address(0, 0));             /* order rule, step 0 */
  EXPECT_ERROR(d, "step 1: trips hold a Handle of memory 2, which the flag does not name whole");
}

static void test_steps_are_checked_in_order(void) {
  rig_desc *d = base();
  move4(d)->u.move.length = -1;
  submit2(d)->device = 9;
  move5(d)->u.move.length = -1;
  EXPECT_ERROR(d, "step 2: device 9: no such device");
}

static void test_step_order_rules_come_before_init_addresses(void) {
  rig_desc *d = base();
  set_term_leaf(init_of(d, 0), 0, rig_desc_address(2, 1));
  set_term_leaf(&launch2(d)->u.launch.params, 0, rig_desc_address(3, 1));
  EXPECT_ERROR(d, "step 2: an Address of memory 3 that the step does not fix whole");
}

static void test_an_address_on_the_wrong_device_is_reported_before_fixing(void) {
  rig_desc *d = base();
  set_term_leaf(params0(d), 0, rig_desc_address(0, 1));
  EXPECT_ERROR(d, "step 0: an Address of memory 0 on device 1, not the step's device 0");
}

static void test_memory_rules_apply_in_their_order(void) {
  rig_desc *d = base();
  mem(d, 0)->u.alloc.device = 9;
  mem(d, 0)->u.alloc.bytes = -1;
  EXPECT_ERROR(d, "memory 0: device 9: no such device");
  d = base();
  mem(d, 0)->u.alloc.bytes = -4; /* also shorter than its init */
  EXPECT_ERROR(d, "memory 0: -4 bytes");
  d = base();
  mem(d, 0)->u.alloc.bytes = 4;
  init_of(d, 0)->holes[0].shift = 63;
  EXPECT_ERROR(d, "memory 0: 8 bytes of init in 4 bytes");
  d = base();
  init_of(d, 0)->holes[0].at = 4;
  init_of(d, 0)->holes[0].shift = 63;
  EXPECT_ERROR(d, "memory 0: a hole at 4 outside its 8 bytes");
  d = base();
  init_of(d, 0)->holes[0].shift = 63;
  set_term_leaf(init_of(d, 0), 0, rig_desc_address(9, 0));
  EXPECT_ERROR(d, "memory 0: a hole's shift 63 outside 0 to 62");
  d = base();
  set_term_leaf(init_of(d, 0), 0, rig_desc_address(9, 9));
  EXPECT_ERROR(d, "memory 0: memory 9: no such memory");
}

/* Each hole's own rules come before the sharing of bytes between holes. */
static void test_hole_rules_come_before_holes_sharing_a_byte(void) {
  rig_desc *d = base();
  add_leaf_hole(d, init_of(d, 1), 4, RIG_W32, 0, rig_desc_handle(3));
  init_of(d, 1)->holes[2].shift = 63;
  EXPECT_ERROR(d, "memory 1: a hole's shift 63 outside 0 to 62");
}

static void test_holes_sharing_a_byte_come_before_one_copy_naming_two(void) {
  rig_desc *d = base();
  add_leaf_hole(d, init_of(d, 0), 4, RIG_W32, 0, rig_desc_handle(1));
  EXPECT_ERROR(d, "memory 0: holes at 0 and 4 share a byte");
}

static void test_image_rules_apply_in_their_order(void) {
  rig_desc *d = base();
  d->images[1].device = 9;
  set_term_leaf(binary_of(d, 1), 0, rig_desc_entry(1, "k"));
  EXPECT_ERROR(d, "image 1: device 9: no such device");
  d = base();
  add_leaf_hole(d, binary_of(d, 1), 0, RIG_W64, 0, rig_desc_address(0, 0));
  set_term_leaf(binary_of(d, 1), 0, rig_desc_entry(1, "k"));
  EXPECT_ERROR(d, "image 1: an Entry of image 1, not of an image before this one");
  d = base();
  add_leaf_hole(d, binary_of(d, 1), 0, RIG_W64, 0, rig_desc_address(0, 0));
  set_term_leaf(binary_of(d, 1), 0, rig_desc_handle(1));
  EXPECT_ERROR(d, "image 1: a hole names memory of two copies");
}

static void test_submit_rules_apply_in_their_order(void) {
  rig_desc *d = base();
  submit0(d)->device = 9;
  words0(d)->u.words = rig_desc_view_of(9, 0, 8);
  EXPECT_ERROR(d, "step 0: device 9: no such device");
  d = base(); /* parts in order */
  words0(d)->u.words = rig_desc_view_of(9, 0, 8);
  launch0(d)->u.launch.image = 9;
  EXPECT_ERROR(d, "step 0: memory 9: no such memory");
  d = base(); /* parts before slots */
  launch0(d)->u.launch.image = 9;
  submit0(d)->slots[0] = rig_desc_slot_memory(9, 0, 8);
  EXPECT_ERROR(d, "step 0: image 9: no such image");
  d = base(); /* slots before fixed */
  submit0(d)->slots[2] = rig_desc_slot_input(5);
  submit0(d)->fixed[0].view = rig_desc_view_of(9, 0, 8);
  EXPECT_ERROR(d, "step 0: input 5: no such input");
  d = base(); /* fixed before refs */
  submit0(d)->fixed[0].view = rig_desc_view_of(9, 0, 8);
  launch0(d)->u.launch.refs[0].slot = 9;
  EXPECT_ERROR(d, "step 0: memory 9: no such memory");
  d = base(); /* refs' slots before unnamed slots */
  rig_desc_submit_add_slot(d, submit0(d), rig_desc_slot_ints());
  copy0(d)->u.copy.dst = 9;
  EXPECT_ERROR(d, "step 0: slot 9: no such slot");
  d = base(); /* unnamed slots before refs' at */
  rig_desc_submit_add_slot(d, submit0(d), rig_desc_slot_ints());
  fill0(d)->u.fill.refs[0].at = 4;
  EXPECT_ERROR(d, "step 0: slot 4 is named by no ref or copy");
  d = base(); /* refs' at before copies */
  fill0(d)->u.fill.refs[0].at = 4;
  copy0(d)->u.copy.length = -1;
  EXPECT_ERROR(d, "step 0: a ref at 4, not a multiple of 8");
  d = base(); /* the at's place before its multiple of 8 */
  launch0(d)->u.launch.refs[2].at = 44;
  EXPECT_ERROR(d, "step 0: a ref at 44 outside its 48 bytes of parameters");
}

static void test_launch_and_fill_rules_apply_in_their_order(void) {
  rig_desc *d = base();
  launch0(d)->u.launch.image = 9;
  rig_desc_data_set(d, params0(d), zeros, 50);
  EXPECT_ERROR(d, "step 0: image 9: no such image");
  d = base();
  rig_desc_data_set(d, params0(d), zeros, 50);
  params0(d)->holes[0].shift = 63;
  EXPECT_ERROR(d, "step 0: image 0: 50 bytes of parameters, not a whole number of 32-bit words up "
                  "to 4096");
  d = base();
  *term_value(params0(d), 2) = rig_desc_int(9);
  launch0(d)->u.launch.groups[0] = rig_desc_int(8);
  EXPECT_ERROR(d, "step 0's parameters: int 9: no such int");
  d = base();
  fill0(d)->u.fill.fill = rig_desc_address(9, 9);
  EXPECT_ERROR(d, "step 0: a fill's leaf is an Address, not an Entry or a Ready");
  d = base();
  fill0(d)->u.fill.fill = rig_desc_entry(9, "f");
  rig_desc_data_set(d, &fill0(d)->u.fill.params, zeros, 6);
  EXPECT_ERROR(d, "step 0: image 9: no such image");
  d = base();
  rig_desc_data_set(d, &fill0(d)->u.fill.params, zeros, 6);
  add_hole(d, &fill0(d)->u.fill.params, 0, RIG_W32, 0, rig_desc_int(9), 1);
  EXPECT_ERROR(d, "step 0: a fill's 6 bytes of parameters, not a whole number of 32-bit words up "
                  "to 4096");
}

static void test_end_pair_rules_apply_in_their_order(void) {
  rig_desc *d = base();
  move4(d)->u.move.length = -1;
  add_term(d, &move4(d)->u.move.dst_offset, rig_desc_leaf_value(rig_desc_handle(3)), 1);
  EXPECT_ERROR(d, "step 4: a move of -1 bytes");
  d = base();
  add_term(d, &move4(d)->u.move.src_offset, rig_desc_leaf_value(rig_desc_handle(3)), 1);
  add_term(d, &move4(d)->u.move.dst_offset, rig_desc_leaf_value(rig_desc_handle(3)), 1);
  EXPECT_ERROR(d, "step 4: a move's source offset names a leaf");
  d = base();
  set_fixed_offset(d, &move5(d)->u.move.src_offset, -1);
  set_fixed_offset(d, &move5(d)->u.move.dst_offset, -2);
  EXPECT_ERROR(d, "step 5: a move's source at -1, a negative offset");
  d = base(); /* an end outside its slot, before the ends share a byte */
  copy0(d)->u.copy.src = 1;
  set_fixed_offset(d, &copy0(d)->u.copy.dst_offset, 56);
  EXPECT_ERROR(d, "step 0: a copy's destination of 16 bytes at 56 outside its 64 bytes");
}

static void test_move_slots_come_before_its_ends(void) {
  rig_desc *d = base();
  move5(d)->u.move.src = rig_desc_slot_input(5);
  move5(d)->u.move.dst = rig_desc_slot_memory(9, 0, 8);
  EXPECT_ERROR(d, "step 5: input 5: no such input");
  d = base();
  move5(d)->u.move.dst = rig_desc_slot_memory(9, 0, 8);
  move5(d)->u.move.length = -1;
  EXPECT_ERROR(d, "step 5: memory 9: no such memory");
}

static void test_loop_rules_apply_in_their_order(void) {
  rig_desc *d = base();
  loop1(d)->u.loop.trips = rig_desc_leaf_value(rig_desc_address(3, 1));
  loop1(d)->u.loop.trip = 9;
  EXPECT_ERROR(d, "step 1: trips hold an Address");
  d = base();
  loop1(d)->u.loop.trip = 9;
  loop1(d)->u.loop.flag_slot = rig_desc_slot_memory(9, 0, 8);
  EXPECT_ERROR(d, "step 1: int 9: no such int");
  d = base();
  loop1(d)->u.loop.flag_slot = rig_desc_slot_memory(3, 0, 8);
  loop1(d)->u.loop.flag_at = 8;
  submit2(d)->device = 9;
  EXPECT_ERROR(d, "step 1: a flag at 8 outside its 8 bytes");
}

/* ---- extreme values -------------------------------------------------------------- */

static void test_extreme_ints_are_refused_but_2_to_the_59(void) {
  for (size_t i = 0; i < NEXTREMES; i++) {
    rig_desc *d = base();
    d->ints = extremes[i];
    if (extremes[i] == TWO_59)
      EXPECT_OK(d);
    else
      EXPECT_ERRORF(d, "%" PRId64 " ints", extremes[i]);
  }
}

static void test_extreme_hole_ats_are_refused(void) {
  for (size_t i = 0; i < NEXTREMES; i++) {
    int64_t v = extremes[i];
    rig_desc *d = base();
    init_of(d, 0)->holes[0].at = v;
    EXPECT_ERRORF(d, "memory 0: a hole at %" PRId64 " outside its 8 bytes", v);
    d = base();
    binary_of(d, 1)->holes[0].at = v;
    EXPECT_ERRORF(d, "image 1: a hole at %" PRId64 " outside its 16 bytes", v);
    d = base();
    params0(d)->holes[2].at = v; /* W32 */
    EXPECT_ERRORF(d, "step 0's parameters: a hole at %" PRId64 " outside its 48 bytes", v);
  }
}

static void test_extreme_hole_shifts_are_refused(void) {
  for (size_t i = 0; i < NEXTREMES; i++) {
    rig_desc *d = base();
    init_of(d, 0)->holes[0].shift = extremes[i];
    EXPECT_ERRORF(d, "memory 0: a hole's shift %" PRId64 " outside 0 to 62", extremes[i]);
  }
}

static void test_extreme_view_offsets_are_refused(void) {
  for (size_t i = 0; i < NEXTREMES; i++) {
    int64_t v = extremes[i];
    rig_desc *d = base();
    submit0(d)->slots[1] = rig_desc_slot_memory(0, v, 8);
    EXPECT_ERRORF(d, "step 0: memory 0: a view of 8 bytes at %" PRId64 " outside its 64 bytes", v);
    d = base();
    words0(d)->u.words = rig_desc_view_of(2, v, 0);
    EXPECT_ERRORF(d, "step 0: memory 2: a view of 0 bytes at %" PRId64 " outside its 32 bytes", v);
    d = base();
    loop1(d)->u.loop.flag_slot = rig_desc_slot_memory(3, v, 1);
    EXPECT_ERRORF(d, "step 1: memory 3: a view of 1 bytes at %" PRId64 " outside its 16 bytes", v);
  }
}

static void test_extreme_view_lengths_are_refused(void) {
  for (size_t i = 0; i < NEXTREMES; i++) {
    int64_t v = extremes[i];
    rig_desc *d = base();
    submit0(d)->slots[1] = rig_desc_slot_memory(0, 0, v);
    EXPECT_ERRORF(d, "step 0: memory 0: a view of %" PRId64 " bytes at 0 outside its 64 bytes", v);
    d = base();
    submit0(d)->fixed[0].view = rig_desc_view_of(2, 8, v);
    EXPECT_ERRORF(d, "step 0: memory 2: a view of %" PRId64 " bytes at 8 outside its 32 bytes", v);
    d = base();
    move4(d)->u.move.dst = rig_desc_slot_memory(3, v, v);
    EXPECT_ERRORF(
        d, "step 4: memory 3: a view of %" PRId64 " bytes at %" PRId64 " outside its 16 bytes", v,
        v);
  }
}

/* Views of memory of 2^62 - 1 bytes: the largest fit, one byte more does
 * not, computed without a sum that overflows. */
static rig_desc *huge_view(int64_t offset, int64_t length) {
  rig_desc *d = rig_desc_create();
  rig_desc_add_device(d, "x86_64");
  rig_desc_add_alloc(d, 0, RIG_KIND_DEVICE, RIG_INT_MAX, RIG_COPIES_ONE);
  rig_desc_submit *s = rig_desc_add_submit(d, NULL, 0);
  rig_desc_submit_add_words(d, s, rig_desc_view_of(0, offset, length));
  return d;
}

static void test_views_of_the_largest_memory_are_exact(void) {
  EXPECT_OK(huge_view(0, RIG_INT_MAX));
  EXPECT_OK(huge_view(RIG_INT_MAX, 0));
  EXPECT_OK(huge_view(RIG_INT_MAX - 7, 7));
  EXPECT_OK(huge_view(TWO_59, RIG_INT_MAX - TWO_59));
  EXPECT_ERROR(huge_view(1, RIG_INT_MAX),
               "step 0: memory 0: a view of 4611686018427387903 bytes at 1 outside its "
               "4611686018427387903 bytes");
  EXPECT_ERROR(huge_view(RIG_INT_MAX, 1),
               "step 0: memory 0: a view of 1 bytes at 4611686018427387903 outside its "
               "4611686018427387903 bytes");
  EXPECT_ERROR(huge_view(RIG_INT_MAX, RIG_INT_MAX),
               "step 0: memory 0: a view of 4611686018427387903 bytes at 4611686018427387903 "
               "outside its 4611686018427387903 bytes");
  EXPECT_ERROR(huge_view(RIG_INT_MIN, RIG_INT_MAX),
               "step 0: memory 0: a view of 4611686018427387903 bytes at -4611686018427387904 "
               "outside its 4611686018427387903 bytes");
  EXPECT_ERROR(huge_view(-1, 0), "step 0: memory 0: a view of 0 bytes at -1 outside its "
                                 "4611686018427387903 bytes");
  EXPECT_ERROR(huge_view(0, RIG_INT_MIN),
               "step 0: memory 0: a view of -4611686018427387904 bytes at 0 outside its "
               "4611686018427387903 bytes");
}

static void test_extreme_memory_and_input_bytes(void) {
  for (size_t i = 0; i < NEXTREMES; i++) {
    int64_t v = extremes[i];
    rig_desc *d = base();
    d->inputs[0].bytes = v;
    if (v < 0)
      EXPECT_ERRORF(d, "input 0: %" PRId64 " bytes", v);
    else
      EXPECT_OK(d);
    d = base();
    mem(d, 3)->u.alloc.bytes = v;
    if (v < 0)
      EXPECT_ERRORF(d, "memory 3: %" PRId64 " bytes", v);
    else /* its views (3, 0, 16) no longer name it whole */
      EXPECT_ERROR(d, "step 2: names memory 1, whose init holds memory 3, but not memory 3 whole");
  }
}

static void test_extreme_ref_ats_are_refused(void) {
  for (size_t i = 0; i < NEXTREMES; i++) {
    rig_desc *d = base();
    launch0(d)->u.launch.refs[0].at = extremes[i];
    EXPECT_ERRORF(d, "step 0: a ref at %" PRId64 " outside its 48 bytes of parameters",
                  extremes[i]);
  }
}

static void test_extreme_flag_ats_are_refused_where_the_length_is_known(void) {
  for (size_t i = 0; i < NEXTREMES; i++) {
    int64_t v = extremes[i];
    rig_desc *d = base();
    loop1(d)->u.loop.flag_at = v;
    EXPECT_ERRORF(d, "step 1: a flag at %" PRId64 " outside its 16 bytes", v);
    d = base();
    loop1(d)->u.loop.flag_slot = rig_desc_slot_ints();
    loop1(d)->u.loop.flag_at = v;
    EXPECT_ERRORF(d, "step 1: a flag at %" PRId64 " outside its 32 bytes", v);
    d = base();
    loop1(d)->u.loop.flag_slot = rig_desc_slot_input(0);
    loop1(d)->u.loop.flag_at = v;
    if (v < 0)
      EXPECT_ERRORF(d, "step 1: a flag at %" PRId64 " outside its slot", v);
    else
      EXPECT_OK(d);
  }
}

static void test_extreme_move_offsets_and_lengths(void) {
  for (size_t i = 0; i < NEXTREMES; i++) {
    int64_t v = extremes[i];
    rig_desc *d = base();
    set_fixed_offset(d, &move4(d)->u.move.dst_offset, v);
    if (v < 0)
      EXPECT_ERRORF(d, "step 4: a move's destination at %" PRId64 ", a negative offset", v);
    else
      EXPECT_ERRORF(
          d, "step 4: a move's destination of 8 bytes at %" PRId64 " outside its 16 bytes", v);
    d = base();
    move4(d)->u.move.length = v;
    if (v < 0)
      EXPECT_ERRORF(d, "step 4: a move of %" PRId64 " bytes", v);
    else
      EXPECT_ERRORF(
          d, "step 4: a move's destination of %" PRId64 " bytes at 8 outside its 16 bytes", v);
    d = base();
    set_offset(d, &move4(d)->u.move.dst_offset, rig_desc_fixed(1), v);
    if (v < 0)
      EXPECT_ERRORF(d, "step 4: a move's destination at %" PRId64 ", a negative offset", v);
    else
      EXPECT_ERRORF(
          d, "step 4: a move's destination of 8 bytes at %" PRId64 " outside its 16 bytes", v);
  }
}

static void test_extreme_fixed_trips_pass(void) {
  for (size_t i = 0; i < NEXTREMES; i++) {
    rig_desc *d = base();
    loop3(d)->u.loop.trips = rig_desc_fixed(extremes[i]);
    EXPECT_OK(d);
  }
}

/* ---- rails ------------------------------------------------------------------------ */

typedef struct rail_sizes {
  int64_t rail, outbound, inbound;
} rail_sizes;

/* Sizes of rail `rail` only; -1 (unknown) for any other rail, and for
 * Counts, whose 384 bytes the checker knows without asking. */
static int64_t area_bytes(void *ctx, int64_t rail, rig_desc_area area) {
  const rail_sizes *r = ctx;
  if (rail != r->rail) return -1;
  if (area == RIG_AREA_OUTBOUND) return r->outbound;
  if (area == RIG_AREA_INBOUND) return r->inbound;
  return -1;
}

static rail_sizes rail7 = {7, 100, 200};
static const rig_desc_rail_sizes rails7 = {area_bytes, &rail7};

/* memory 0 Outbound, 1 Inbound, 2 Counts of rail 7; memory 3 Outbound of
 * rail 8; one Submit step with one Words view. */
static rig_desc *rail_view(int64_t m, int64_t offset, int64_t length) {
  rig_desc *d = rig_desc_create();
  rig_desc_add_device(d, "x86_64");
  rig_desc_add_rail(d, 7, RIG_AREA_OUTBOUND);
  rig_desc_add_rail(d, 7, RIG_AREA_INBOUND);
  rig_desc_add_rail(d, 7, RIG_AREA_COUNTS);
  rig_desc_add_rail(d, 8, RIG_AREA_OUTBOUND);
  rig_desc_submit *s = rig_desc_add_submit(d, NULL, 0);
  rig_desc_submit_add_words(d, s, rig_desc_view_of(m, offset, length));
  return d;
}

static void test_views_inside_given_rail_areas_pass(void) {
  EXPECT_RAILS_OK(rail_view(0, 0, 100), &rails7);
  EXPECT_RAILS_OK(rail_view(0, 100, 0), &rails7);
  EXPECT_RAILS_OK(rail_view(1, 0, 200), &rails7);
  EXPECT_RAILS_OK(rail_view(1, 150, 50), &rails7);
  EXPECT_RAILS_OK(rail_view(2, 0, 384), &rails7);
}

static void test_a_view_past_a_given_rail_area_is_refused(void) {
  EXPECT_RAILS_ERROR(rail_view(0, 0, 101), &rails7,
                     "step 0: memory 0: a view of 101 bytes at 0 outside its 100 bytes");
  EXPECT_RAILS_ERROR(rail_view(0, 99, 2), &rails7,
                     "step 0: memory 0: a view of 2 bytes at 99 outside its 100 bytes");
  EXPECT_RAILS_ERROR(rail_view(1, 150, 51), &rails7,
                     "step 0: memory 1: a view of 51 bytes at 150 outside its 200 bytes");
  EXPECT_RAILS_ERROR(rail_view(1, RIG_INT_MAX, RIG_INT_MAX), &rails7,
                     "step 0: memory 1: a view of 4611686018427387903 bytes at "
                     "4611686018427387903 outside its 200 bytes");
}

static void test_a_counts_area_is_always_384_bytes(void) {
  const char *want = "step 0: memory 2: a view of 8 bytes at 380 outside its 384 bytes";
  EXPECT_RAILS_ERROR(rail_view(2, 380, 8), &rails7, want);
  EXPECT_RAILS_ERROR(rail_view(2, 380, 8), NULL, want);
  EXPECT_ERROR(rail_view(2, 380, 8), want);
  EXPECT_OK(rail_view(2, 376, 8));
  EXPECT_RAILS_ERROR(rail_view(2, 0, 385), NULL,
                     "step 0: memory 2: a view of 385 bytes at 0 outside its 384 bytes");
}

static void test_an_unknown_rail_area_is_checked_only_for_signs(void) {
  EXPECT_OK(rail_view(0, 0, RIG_INT_MAX));
  EXPECT_OK(rail_view(1, RIG_INT_MAX, RIG_INT_MAX));
  EXPECT_RAILS_OK(rail_view(3, 1000, 1000), &rails7);
  EXPECT_RAILS_ERROR(rail_view(0, -1, 8), NULL,
                     "step 0: memory 0: a view of 8 bytes at -1 outside its area");
  EXPECT_ERROR(rail_view(1, 0, -1), "step 0: memory 1: a view of -1 bytes at 0 outside its area");
  EXPECT_RAILS_ERROR(rail_view(3, RIG_INT_MIN, 8), &rails7,
                     "step 0: memory 3: a view of 8 bytes at -4611686018427387904 outside its "
                     "area");
}

static void test_extreme_views_of_an_unknown_rail_area(void) {
  for (size_t i = 0; i < NEXTREMES; i++) {
    int64_t v = extremes[i];
    if (v < 0) {
      EXPECT_ERRORF(rail_view(0, v, 8),
                    "step 0: memory 0: a view of 8 bytes at %" PRId64 " outside its area", v);
      EXPECT_ERRORF(rail_view(0, 8, v),
                    "step 0: memory 0: a view of %" PRId64 " bytes at 8 outside its area", v);
    } else {
      EXPECT_OK(rail_view(0, v, v));
    }
  }
}

/* A step with an Address and a Handle of Outbound, fixing (0, 16) of it. */
static rig_desc *rail_address(void) {
  rig_desc *d = rig_desc_create();
  rig_desc_add_device(d, "x86_64");
  rig_desc_add_rail(d, 7, RIG_AREA_OUTBOUND);
  rig_desc_add_image(d, 0, "\177ELF", 4);
  rig_desc_submit *s = rig_desc_add_submit(d, NULL, 0);
  rig_desc_submit_add_slot(d, s, rig_desc_slot_memory(0, 0, 16));
  rig_desc_submit_add_fixed(d, s, rig_desc_view_of(0, 0, 16), RIG_ACCESS_READ_WRITE);
  rig_desc_part *p =
      rig_desc_submit_add_launch(d, s, 0, "k", zeros, 24, rig_desc_fixed(1), rig_desc_fixed(1));
  add_leaf_hole(d, rig_desc_part_params(p), 0, RIG_W64, 0, rig_desc_address(0, 0));
  add_leaf_hole(d, rig_desc_part_params(p), 8, RIG_W64, 0, rig_desc_handle(0));
  rig_desc_part_add_ref(d, p, 0, 16, RIG_USE_WRITE);
  return d;
}

static void test_a_view_at_0_names_a_rail_area_of_unknown_size_whole(void) {
  EXPECT_OK(rail_address());
}

static void test_a_view_at_0_short_of_a_given_rail_area_does_not_name_it_whole(void) {
  EXPECT_RAILS_ERROR(rail_address(), &rails7,
                     "step 0: an Address of memory 0 that the step does not fix whole");
  rail_sizes exact = {7, 16, 200};
  rig_desc_rail_sizes rails = {area_bytes, &exact};
  EXPECT_RAILS_OK(rail_address(), &rails);
}

/* ---- size ------------------------------------------------------------------------- */

/* 100 000 Submit steps over 1 000 memories, each step fixing its memory
 * whole and passing its Address; only finishing is checked (no timing). */
static void test_a_description_of_100000_steps_passes(void) {
  enum { MEMORIES = 1000, STEPS = 100000 };
  rig_desc *d = rig_desc_create();
  rig_desc_add_device(d, "x86_64");
  d->ints = 1;
  rig_desc_add_image(d, 0, "\177ELF", 4);
  for (int64_t m = 0; m < MEMORIES; m++) {
    rig_desc_add_alloc(d, 0, RIG_KIND_DEVICE, 64, RIG_COPIES_ONE);
    rig_desc_data_set(d, init_of(d, m), zeros, 8);
    add_leaf_hole(d, init_of(d, m), 0, RIG_W64, 0, rig_desc_address(m, 0));
  }
  rig_desc_loop_set_trip(rig_desc_add_loop(d, NULL, rig_desc_int(0)), 0);
  for (int64_t i = 0; i < STEPS; i++) {
    int64_t m = i % MEMORIES;
    rig_desc_step *loop = &d->steps.items[0]; /* moves as the top level grows */
    rig_desc_submit *s = rig_desc_add_submit(d, i % 2 ? loop : NULL, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    rig_desc_submit_add_slot(d, s, rig_desc_slot_memory(m, 0, 64));
    rig_desc_submit_add_fixed(d, s, rig_desc_view_of(m, 0, 64), RIG_ACCESS_READ_WRITE);
    rig_desc_part *p =
        rig_desc_submit_add_launch(d, s, 0, "k", zeros, 16, rig_desc_fixed(1), rig_desc_fixed(1));
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    add_leaf_hole(d, rig_desc_part_params(p), 0, RIG_W64, 0, rig_desc_address(m, 0));
    rig_desc_part_add_ref(d, p, 0, 8, RIG_USE_WRITE);
  }
  EXPECT_OK(d);
}

/* ---- registration -------------------------------------------------------------- */

void rig_test_register(void) {
  static CU_TestInfo valid[] = {
      {"the empty description passes", test_the_empty_description_passes},
      {"the base description passes", test_the_base_description_passes},
      {"the base description passes with unknown rails",
       test_the_base_description_passes_with_unknown_rails},
      {"a NULL error record is allowed", test_a_null_error_record_is_allowed},
      {"a fill of a Ready leaf passes without its rail",
       test_a_fill_of_a_ready_leaf_passes_without_its_rail},
      {"rail memory has nothing to check without its rail",
       test_rail_memory_has_nothing_to_check_without_its_rail},
      {"an init as long as its memory passes", test_an_init_as_long_as_its_memory_passes},
      {"a W32 hole at the last word passes", test_a_w32_hole_at_the_last_word_passes},
      {"a shift of 62 passes", test_a_shift_of_62_passes},
      {"an input of zero bytes passes", test_an_input_of_zero_bytes_passes},
      {"an Entry in an init may name any image", test_an_entry_in_an_init_may_name_any_image},
      CU_TEST_INFO_NULL};
  static CU_TestInfo ints[] = {
      {"negative ints are refused", test_negative_ints_are_refused},
      {"ints past 2^59 are refused", test_ints_past_2_to_the_59_are_refused},
      {"ints of exactly 2^59 pass", test_ints_of_exactly_2_to_the_59_pass},
      {"zero ints pass", test_zero_ints_pass_without_ints_named},
      CU_TEST_INFO_NULL};
  static CU_TestInfo memory[] = {
      {"memory of no such device is refused", test_memory_of_no_such_device_is_refused},
      {"memory of negative bytes is refused", test_memory_of_negative_bytes_is_refused},
      {"an init longer than its memory is refused", test_an_init_longer_than_its_memory_is_refused},
      {"an init hole outside the init is refused", test_an_init_hole_outside_the_init_is_refused},
      {"a hole past the init but inside the memory is refused",
       test_a_hole_past_the_init_but_inside_the_memory_is_refused},
      {"an init hole shift outside 0 to 62 is refused",
       test_an_init_hole_shift_outside_0_to_62_is_refused},
      {"an init term that is no leaf is refused", test_an_init_term_that_is_no_leaf_is_refused},
      {"init holes sharing a byte are refused", test_init_holes_sharing_a_byte_are_refused},
      {"init holes sharing a byte are reported in order of at",
       test_init_holes_sharing_a_byte_are_reported_in_order_of_at},
      {"init values index their arrays", test_init_values_index_their_arrays},
      {"memory of one copy naming memory of two is refused",
       test_memory_of_one_copy_naming_memory_of_two_is_refused},
      CU_TEST_INFO_NULL};
  static CU_TestInfo images[] = {
      {"an image of no such device is refused", test_an_image_of_no_such_device_is_refused},
      {"an Entry naming a later image is refused", test_an_entry_naming_a_later_image_is_refused},
      {"an Entry naming its own image is refused", test_an_entry_naming_its_own_image_is_refused},
      {"image holes are checked as holes", test_image_holes_are_checked_as_holes},
      {"an image hole naming memory of two copies is refused",
       test_an_image_hole_naming_memory_of_two_copies_is_refused},
      {"an image holding an Address is refused", test_an_image_holding_an_address_is_refused},
      {"an image holding a Handle is refused", test_an_image_holding_a_handle_is_refused},
      CU_TEST_INFO_NULL};
  static CU_TestInfo inputs[] = {
      {"an input of no such device is refused", test_an_input_of_no_such_device_is_refused},
      {"an input of negative bytes is refused", test_an_input_of_negative_bytes_is_refused},
      CU_TEST_INFO_NULL};
  static CU_TestInfo submits[] = {
      {"a submit on no such device is refused", test_a_submit_on_no_such_device_is_refused},
      {"a Words view outside its memory is refused",
       test_a_words_view_outside_its_memory_is_refused},
      {"a fill of an Address or Handle is refused", test_a_fill_of_an_address_or_handle_is_refused},
      {"a fill Entry of no such image is refused", test_a_fill_entry_of_no_such_image_is_refused},
      {"fill params not whole words up to 4096 are refused",
       test_fill_params_not_whole_words_up_to_4096_are_refused},
      {"params of exactly 4096 bytes pass", test_params_of_exactly_4096_bytes_pass},
      {"params of 12 bytes are whole words", test_params_of_12_bytes_are_whole_words},
      {"a launch of no such image is refused", test_a_launch_of_no_such_image_is_refused},
      {"launch params not whole words up to 4096 are refused",
       test_launch_params_not_whole_words_up_to_4096_are_refused},
      {"param holes are checked as holes of the step's parameters",
       test_param_holes_are_checked_as_holes_of_the_steps_parameters},
      {"param values index their arrays", test_param_values_index_their_arrays},
      {"params may hold Entries, Ready and Fixed values",
       test_params_may_hold_entries_ready_and_fixed_values},
      {"geometry values index their arrays", test_geometry_values_index_their_arrays},
      {"slot views are checked", test_slot_views_are_checked},
      {"an Input slot of no such input is refused", test_an_input_slot_of_no_such_input_is_refused},
      {"fixed views are checked", test_fixed_views_are_checked},
      {"a ref of no such slot is refused", test_a_ref_of_no_such_slot_is_refused},
      {"a copy of no such slot is refused", test_a_copy_of_no_such_slot_is_refused},
      {"a slot named by no ref or copy is refused", test_a_slot_named_by_no_ref_or_copy_is_refused},
      {"an Unordered slot also read or written is refused",
       test_an_unordered_slot_also_read_or_written_is_refused},
      {"an Unordered slot also copied is refused", test_an_unordered_slot_also_copied_is_refused},
      {"two Unordered refs of one slot pass", test_two_unordered_refs_of_one_slot_pass},
      {"a ref outside its params is refused", test_a_ref_outside_its_params_is_refused},
      {"a ref not at a multiple of 8 is refused", test_a_ref_not_at_a_multiple_of_8_is_refused},
      {"a ref in the last 8 bytes passes", test_a_ref_in_the_last_8_bytes_passes},
      CU_TEST_INFO_NULL};
  static CU_TestInfo copies[] = {
      {"a copy of negative length is refused", test_a_copy_of_negative_length_is_refused},
      {"a copy offset naming a leaf is refused", test_a_copy_offset_naming_a_leaf_is_refused},
      {"a copy offset of no such int is refused", test_a_copy_offset_of_no_such_int_is_refused},
      {"a copy offset past an int is refused", test_a_copy_offset_past_an_int_is_refused},
      {"a negative copy offset is refused", test_a_negative_copy_offset_is_refused},
      {"a copy end outside its slot is refused", test_a_copy_end_outside_its_slot_is_refused},
      {"a copy end at its slot's last bytes passes",
       test_a_copy_end_at_its_slots_last_bytes_passes},
      {"a copy end far into an input passes", test_a_copy_end_far_into_an_input_passes},
      {"copy ends sharing a byte are refused", test_copy_ends_sharing_a_byte_are_refused},
      {"copy ends in two slots of one memory share by view offset",
       test_copy_ends_in_two_slots_of_one_memory_share_by_view_offset},
      {"copy ends of one input in two slots share", test_copy_ends_of_one_input_in_two_slots_share},
      CU_TEST_INFO_NULL};
  static CU_TestInfo moves[] = {
      {"a move of negative length is refused", test_a_move_of_negative_length_is_refused},
      {"a move offset naming a leaf is refused", test_a_move_offset_naming_a_leaf_is_refused},
      {"a move offset of no such int is refused", test_a_move_offset_of_no_such_int_is_refused},
      {"a constant offset whose product passes an int is refused",
       test_a_constant_offset_whose_product_passes_an_int_is_refused},
      {"a constant offset whose sum passes an int is refused",
       test_a_constant_offset_whose_sum_passes_an_int_is_refused},
      {"a constant offset at the int's edges is exact",
       test_a_constant_offset_at_the_ints_edges_is_exact},
      {"a negative move offset is refused", test_a_negative_move_offset_is_refused},
      {"a move end outside a memory view is refused",
       test_a_move_end_outside_a_memory_view_is_refused},
      {"a move end outside the ints is refused", test_a_move_end_outside_the_ints_is_refused},
      {"a move end far into an input passes", test_a_move_end_far_into_an_input_passes},
      {"the ints of 2^59 words hold 2^62 bytes",
       test_the_ints_of_2_to_the_59_words_hold_2_to_the_62_bytes},
      {"move ends in one memory sharing a byte are refused",
       test_move_ends_in_one_memory_sharing_a_byte_are_refused},
      {"move ends both in the ints sharing a byte are refused",
       test_move_ends_both_in_the_ints_sharing_a_byte_are_refused},
      {"move ends in one input sharing a byte are refused",
       test_move_ends_in_one_input_sharing_a_byte_are_refused},
      {"adjacent move ends pass", test_adjacent_move_ends_pass},
      {"move ends of different buffers pass", test_move_ends_of_different_buffers_pass},
      {"zero-length move ends share nothing", test_zero_length_move_ends_share_nothing},
      {"move ends whose offsets read an Int are not compared",
       test_move_ends_whose_offsets_read_an_int_are_not_compared},
      CU_TEST_INFO_NULL};
  static CU_TestInfo loops[] = {
      {"loop trips values index their arrays", test_loop_trips_values_index_their_arrays},
      {"loop trips holding an Address are refused", test_loop_trips_holding_an_address_are_refused},
      {"loop trips holding a Handle of memory the flag names whole pass",
       test_loop_trips_holding_a_handle_of_memory_the_flag_names_whole_pass},
      {"loop trips holding a Handle the flag does not name whole are refused",
       test_loop_trips_holding_a_handle_the_flag_does_not_name_whole_are_refused},
      {"a loop trip of no such int is refused", test_a_loop_trip_of_no_such_int_is_refused},
      {"a loop trip is not checked without has_trip",
       test_a_loop_trip_is_not_checked_without_has_trip},
      {"a loop flag slot is checked as a slot", test_a_loop_flag_slot_is_checked_as_a_slot},
      {"a flag in a zero-length view is refused", test_a_flag_in_a_zero_length_view_is_refused},
      {"a flag outside its view is refused", test_a_flag_outside_its_view_is_refused},
      {"a flag at the last byte passes", test_a_flag_at_the_last_byte_passes},
      {"a flag outside the ints is refused", test_a_flag_outside_the_ints_is_refused},
      {"a flag on an input is checked only for a negative at",
       test_a_flag_on_an_input_is_checked_only_for_a_negative_at},
      {"a flag is not checked without has_flag", test_a_flag_is_not_checked_without_has_flag},
      {"steps nested 64 deep pass", test_steps_nested_64_deep_pass},
      {"steps nested 65 deep are refused", test_steps_nested_65_deep_are_refused},
      CU_TEST_INFO_NULL};
  static CU_TestInfo order[] = {
      {"an Address on another device than its step's is refused",
       test_an_address_on_another_device_than_its_steps_is_refused},
      {"an Address of memory named whole only in a slot is refused",
       test_an_address_of_memory_named_whole_only_in_a_slot_is_refused},
      {"an Address of memory fixed but not whole is refused",
       test_an_address_of_memory_fixed_but_not_whole_is_refused},
      {"an Address of memory another step fixes is refused",
       test_an_address_of_memory_another_step_fixes_is_refused},
      {"Addresses in fill params and geometry follow the order rules",
       test_addresses_in_fill_params_and_geometry_follow_the_order_rules},
      {"a Handle of memory not named whole is refused",
       test_a_handle_of_memory_not_named_whole_is_refused},
      {"a Handle of memory named whole by Words or fixed passes",
       test_a_handle_of_memory_named_whole_by_words_or_fixed_passes},
      {"a step naming memory whose init holds other memory names it whole",
       test_a_step_naming_memory_whose_init_holds_other_memory_names_it_whole},
      {"a move naming memory whose init holds other memory passes",
       test_a_move_naming_memory_whose_init_holds_other_memory_passes},
      {"an init Address no step on its device fixes whole is refused",
       test_an_init_address_no_step_on_its_device_fixes_whole_is_refused},
      CU_TEST_INFO_NULL};
  static CU_TestInfo numbering[] = {
      {"steps are numbered in pre-order", test_steps_are_numbered_in_pre_order},
      {"loop body steps are numbered after their loop",
       test_loop_body_steps_are_numbered_after_their_loop},
      CU_TEST_INFO_NULL};
  static CU_TestInfo rule_order[] = {
      {"ints are checked before memory", test_ints_are_checked_before_memory},
      {"memory is checked in order before images", test_memory_is_checked_in_order_before_images},
      {"images are checked before inputs", test_images_are_checked_before_inputs},
      {"inputs are checked before steps", test_inputs_are_checked_before_steps},
      {"a later structural rule comes before an earlier order rule",
       test_a_later_structural_rule_comes_before_an_earlier_order_rule},
      {"steps are checked in order", test_steps_are_checked_in_order},
      {"step order rules come before init Addresses",
       test_step_order_rules_come_before_init_addresses},
      {"an Address on the wrong device is reported before fixing",
       test_an_address_on_the_wrong_device_is_reported_before_fixing},
      {"memory rules apply in their order", test_memory_rules_apply_in_their_order},
      {"hole rules come before holes sharing a byte",
       test_hole_rules_come_before_holes_sharing_a_byte},
      {"holes sharing a byte come before one copy naming two",
       test_holes_sharing_a_byte_come_before_one_copy_naming_two},
      {"image rules apply in their order", test_image_rules_apply_in_their_order},
      {"submit rules apply in their order", test_submit_rules_apply_in_their_order},
      {"launch and fill rules apply in their order",
       test_launch_and_fill_rules_apply_in_their_order},
      {"end pair rules apply in their order", test_end_pair_rules_apply_in_their_order},
      {"move slots come before its ends", test_move_slots_come_before_its_ends},
      {"loop rules apply in their order", test_loop_rules_apply_in_their_order},
      CU_TEST_INFO_NULL};
  static CU_TestInfo extreme[] = {
      {"extreme ints are refused but 2^59", test_extreme_ints_are_refused_but_2_to_the_59},
      {"extreme hole ats are refused", test_extreme_hole_ats_are_refused},
      {"extreme hole shifts are refused", test_extreme_hole_shifts_are_refused},
      {"extreme view offsets are refused", test_extreme_view_offsets_are_refused},
      {"extreme view lengths are refused", test_extreme_view_lengths_are_refused},
      {"views of the largest memory are exact", test_views_of_the_largest_memory_are_exact},
      {"extreme memory and input bytes", test_extreme_memory_and_input_bytes},
      {"extreme ref ats are refused", test_extreme_ref_ats_are_refused},
      {"extreme flag ats are refused where the length is known",
       test_extreme_flag_ats_are_refused_where_the_length_is_known},
      {"extreme move offsets and lengths", test_extreme_move_offsets_and_lengths},
      {"extreme Fixed trips pass", test_extreme_fixed_trips_pass},
      CU_TEST_INFO_NULL};
  static CU_TestInfo rails[] = {
      {"views inside given rail areas pass", test_views_inside_given_rail_areas_pass},
      {"a view past a given rail area is refused", test_a_view_past_a_given_rail_area_is_refused},
      {"a Counts area is always 384 bytes", test_a_counts_area_is_always_384_bytes},
      {"an unknown rail area is checked only for signs",
       test_an_unknown_rail_area_is_checked_only_for_signs},
      {"extreme views of an unknown rail area", test_extreme_views_of_an_unknown_rail_area},
      {"a view at 0 names a rail area of unknown size whole",
       test_a_view_at_0_names_a_rail_area_of_unknown_size_whole},
      {"a view at 0 short of a given rail area does not name it whole",
       test_a_view_at_0_short_of_a_given_rail_area_does_not_name_it_whole},
      CU_TEST_INFO_NULL};
  static CU_TestInfo size[] = {
      {"a description of 100000 steps passes", test_a_description_of_100000_steps_passes},
      CU_TEST_INFO_NULL};
  rig_test_add_suite("check: valid descriptions", valid);
  rig_test_add_suite("check: 3. ints", ints);
  rig_test_add_suite("check: 4. memory", memory);
  rig_test_add_suite("check: 5. images", images);
  rig_test_add_suite("check: 6. inputs", inputs);
  rig_test_add_suite("check: 7. submit steps", submits);
  rig_test_add_suite("check: 7. copies", copies);
  rig_test_add_suite("check: 7. moves", moves);
  rig_test_add_suite("check: 7. loops", loops);
  rig_test_add_suite("check: 8. order rules", order);
  rig_test_add_suite("check: step numbering", numbering);
  rig_test_add_suite("check: order of the rules", rule_order);
  rig_test_add_suite("check: extreme values", extreme);
  rig_test_add_suite("check: rails", rails);
  rig_test_add_suite("check: size", size);
}
