/* make_corpus: writes the seed corpus of fuzz_desc into a directory: a dozen
 * descriptions made with the builder (empty, one of each step and part kind,
 * holes of every leaf, loops, loops nested to the limit, extreme integers),
 * each as bytes (NN-name.bin) and, where the JSON form writes it, as JSON
 * text (NN-name.json). All but 11-extremes pass rig_desc_check; that one is
 * ill-formed on purpose, so that the fuzzer starts from both kinds. One more
 * seed, 13-typed.json, is text as people write it (typed values for bytes,
 * empty fields left out), which the writer never writes; and 14-params.json
 * a launch's typed parameters.
 *
 * Usage: make_corpus DIR */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rig/rig_desc.h"

static const char *out_dir;
static int failures;

#define CHECK(cond)                                                                                \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      fprintf(stderr, "make_corpus: %s:%d: %s failed\n", __FILE__, __LINE__, #cond);               \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

static void write_file(const char *name, const char *ext, const void *bytes, size_t len) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s.%s", out_dir, name, ext);
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(bytes, 1, len, f) != len || fclose(f) != 0) {
    fprintf(stderr, "make_corpus: cannot write %s\n", path);
    exit(1);
  }
}

/* Writes d as NAME.bin and NAME.json, then frees it. */
static void emit(const char *name, rig_desc *d) {
  uint8_t *bytes = NULL;
  size_t len = 0;
  rig_error err;
  if (rig_desc_to_bytes(d, &bytes, &len, &err) != RIG_OK) {
    fprintf(stderr, "make_corpus: %s: %s\n", name, err.message);
    failures++;
  } else {
    write_file(name, "bin", bytes, len);
    free(bytes);
  }
  char *text = NULL;
  if (rig_desc_to_json(d, &text, &err) == RIG_OK) {
    write_file(name, "json", text, strlen(text));
    free(text);
  }
  rig_desc_free(d);
}

static rig_desc *new_desc(void) {
  rig_desc *d = rig_desc_create();
  CHECK(d);
  return d;
}

/* One host device, four memories of 4 KiB, an image with a function `k`,
 * an input of 64 bytes and 4 ints: what most seeds below build on. */
static rig_desc *base(void) {
  static const uint8_t binary[32] = {0x7f, 'E', 'L', 'F'};
  rig_desc *d = new_desc();
  CHECK(rig_desc_add_device(d, "x86_64") == 0);
  for (int i = 0; i < 4; i++)
    CHECK(rig_desc_add_alloc(d, 0, RIG_KIND_DEVICE, 4096, RIG_COPIES_ONE) == i);
  CHECK(rig_desc_add_image(d, 0, binary, sizeof binary) == 0);
  CHECK(rig_desc_add_input(d, 0, 64) == 0);
  d->ints = 4;
  return d;
}

static rig_desc *seed_empty(void) {
  return new_desc();
}

/* Devices, every memory kind and rail area, images and inputs; no steps. */
static rig_desc *seed_resources(void) {
  static const uint8_t init[16] = {1, 2, 3, 4};
  rig_desc *d = new_desc();
  CHECK(rig_desc_add_device(d, "x86_64") == 0);
  CHECK(rig_desc_add_device(d, "cpu-x86_64") == 1);
  CHECK(rig_desc_add_alloc(d, 0, RIG_KIND_DEVICE, 64, RIG_COPIES_ONE) == 0);
  CHECK(rig_desc_add_alloc(d, 1, RIG_KIND_PINNED, 128, RIG_COPIES_TWO) == 1);
  CHECK(rig_desc_add_alloc(d, 1, RIG_KIND_MAPPED, 16, RIG_COPIES_ONE) == 2);
  CHECK(rig_desc_data_set(d, &d->memory[2].u.alloc.init, init, sizeof init) == RIG_OK);
  CHECK(rig_desc_add_rail(d, 0, RIG_AREA_OUTBOUND) == 3);
  CHECK(rig_desc_add_rail(d, 0, RIG_AREA_INBOUND) == 4);
  CHECK(rig_desc_add_rail(d, 0, RIG_AREA_COUNTS) == 5);
  CHECK(rig_desc_add_image(d, 0,
                           "\x7f"
                           "ELF",
                           4) == 0);
  CHECK(rig_desc_add_image(d, 1, "", 0) == 1);
  CHECK(rig_desc_add_input(d, 0, 8) == 0);
  CHECK(rig_desc_add_input(d, 1, 0) == 1);
  d->ints = 2;
  return d;
}

static rig_desc *seed_words(void) {
  rig_desc *d = base();
  rig_desc_submit *s = rig_desc_add_submit(d, NULL, 0);
  CHECK(s);
  CHECK(rig_desc_submit_add_words(d, s, rig_desc_view_of(0, 0, 4096)));
  return d;
}

static rig_desc *seed_fill(void) {
  static const uint8_t params[16] = {0};
  rig_desc *d = base();
  rig_desc_submit *s = rig_desc_add_submit(d, NULL, 0);
  CHECK(s);
  CHECK(rig_desc_submit_add_slot(d, s, rig_desc_slot_memory(1, 0, 4096)) == 0);
  rig_desc_part *p = rig_desc_submit_add_fill(d, s, rig_desc_entry(0, "fill"), params, 16);
  CHECK(p);
  CHECK(rig_desc_part_add_ref(d, p, 0, 0, RIG_USE_WRITE) == RIG_OK);
  rig_desc_hole *h = rig_desc_data_add_hole(d, rig_desc_part_params(p), 8, RIG_W64, 0, 0);
  CHECK(h);
  CHECK(rig_desc_terms_add(d, &h->terms, rig_desc_int(0), 8) == RIG_OK);
  return d;
}

static rig_desc *seed_copy(void) {
  rig_desc *d = base();
  rig_desc_submit *s = rig_desc_add_submit(d, NULL, 0);
  CHECK(s);
  CHECK(rig_desc_submit_add_slot(d, s, rig_desc_slot_memory(0, 0, 4096)) == 0);
  CHECK(rig_desc_submit_add_slot(d, s, rig_desc_slot_memory(1, 0, 4096)) == 1);
  rig_desc_part *p = rig_desc_submit_add_copy(d, s, 0, 1, 256);
  CHECK(p);
  CHECK(rig_desc_terms_add(d, &p->u.copy.src_offset, rig_desc_fixed(64), 2) == RIG_OK);
  CHECK(rig_desc_terms_add(d, &p->u.copy.dst_offset, rig_desc_int(1), 16) == RIG_OK);
  return d;
}

/* A launch whose params hold holes of every value kind, geometry read from
 * the ints, refs of each use, and a fixed view. */
static rig_desc *seed_launch(void) {
  static const uint8_t params[48] = {0};
  rig_desc *d = base();
  rig_desc_submit *s = rig_desc_add_submit(d, NULL, 0);
  CHECK(s);
  CHECK(rig_desc_submit_add_slot(d, s, rig_desc_slot_memory(0, 0, 4096)) == 0);
  CHECK(rig_desc_submit_add_slot(d, s, rig_desc_slot_input(0)) == 1);
  CHECK(rig_desc_submit_add_slot(d, s, rig_desc_slot_ints()) == 2);
  CHECK(rig_desc_submit_add_fixed(d, s, rig_desc_view_of(1, 0, 4096), RIG_ACCESS_READ_WRITE) ==
        RIG_OK);
  rig_desc_part *p = rig_desc_submit_add_launch(d, s, 0, "k", params, sizeof params,
                                                rig_desc_int(2), rig_desc_fixed(64));
  CHECK(p);
  p->u.launch.shared = rig_desc_fixed(1024);
  p->u.launch.threads[1] = rig_desc_int(3);
  CHECK(rig_desc_part_add_ref(d, p, 0, 0, RIG_USE_WRITE) == RIG_OK);
  CHECK(rig_desc_part_add_ref(d, p, 1, 8, RIG_USE_READ) == RIG_OK);
  CHECK(rig_desc_part_add_ref(d, p, 2, 16, RIG_USE_READ) == RIG_OK);
  rig_desc_data *params_data = rig_desc_part_params(p);
  rig_desc_hole *h = rig_desc_data_add_hole(d, params_data, 24, RIG_W64, 0, 0);
  CHECK(h);
  CHECK(rig_desc_terms_add(d, &h->terms, rig_desc_leaf_value(rig_desc_address(1, 0)), 1) == RIG_OK);
  h = rig_desc_data_add_hole(d, params_data, 32, RIG_W32, 5, 0);
  CHECK(h);
  CHECK(rig_desc_terms_add(d, &h->terms, rig_desc_int(0), 4) == RIG_OK);
  CHECK(rig_desc_terms_add(d, &h->terms, rig_desc_fixed(3), -1) == RIG_OK);
  h = rig_desc_data_add_hole(d, params_data, 36, RIG_W32, 0, 32);
  CHECK(h);
  CHECK(rig_desc_terms_add(d, &h->terms, rig_desc_int(1), 1) == RIG_OK);
  h = rig_desc_data_add_hole(d, params_data, 40, RIG_W64, 0, 0);
  CHECK(h);
  CHECK(rig_desc_terms_add(d, &h->terms, rig_desc_leaf_value(rig_desc_handle(0)), 1) == RIG_OK);
  return d;
}

static rig_desc *seed_move(void) {
  rig_desc *d = base();
  rig_desc_step *m =
      rig_desc_add_move(d, NULL, rig_desc_slot_ints(), rig_desc_slot_memory(2, 0, 4096), 32);
  CHECK(m);
  CHECK(rig_desc_terms_add(d, &m->u.move.dst_offset, rig_desc_int(0), 8) == RIG_OK);
  m = rig_desc_add_move(d, NULL, rig_desc_slot_input(0), rig_desc_slot_memory(3, 64, 64), 64);
  CHECK(m);
  CHECK(rig_desc_add_move(d, NULL, rig_desc_slot_memory(0, 0, 128),
                          rig_desc_slot_memory(0, 128, 128), 128));
  return d;
}

/* Loops: one counted by an int with a trip word, one ended by a flag. */
static rig_desc *seed_loops(void) {
  rig_desc *d = base();
  rig_desc_step *loop = rig_desc_add_loop(d, NULL, rig_desc_int(0));
  CHECK(loop);
  rig_desc_loop_set_trip(loop, 1);
  rig_desc_submit *s = rig_desc_add_submit(d, loop, 0);
  CHECK(s);
  CHECK(rig_desc_submit_add_words(d, s, rig_desc_view_of(0, 0, 64)));
  CHECK(
      rig_desc_add_move(d, loop, rig_desc_slot_memory(0, 0, 8), rig_desc_slot_memory(1, 0, 8), 8));
  loop = rig_desc_add_loop(d, NULL, rig_desc_fixed(1000));
  CHECK(loop);
  rig_desc_loop_set_flag(loop, rig_desc_slot_memory(2, 0, 4096), 8);
  s = rig_desc_add_submit(d, loop, 0);
  CHECK(s);
  CHECK(rig_desc_submit_add_words(d, s, rig_desc_view_of(2, 0, 4096)));
  return d;
}

/* Loops nested RIG_DESC_MAX_DEPTH deep, the deepest the bytes hold. */
static rig_desc *seed_deep_loops(void) {
  rig_desc *d = base();
  rig_desc_step *loop = NULL;
  for (int depth = 0; depth < RIG_DESC_MAX_DEPTH; depth++) {
    loop = rig_desc_add_loop(d, loop, rig_desc_fixed(2));
    CHECK(loop);
  }
  rig_desc_submit *s = rig_desc_add_submit(d, loop, 0);
  CHECK(s);
  CHECK(rig_desc_submit_add_words(d, s, rig_desc_view_of(0, 0, 8)));
  return d;
}

/* Holes in an image's binary and in memory inits, of every leaf. */
static rig_desc *seed_holes(void) {
  static const uint8_t zeros[64] = {0};
  rig_desc *d = base();
  CHECK(rig_desc_add_image(d, 0, zeros, sizeof zeros) == 1);
  rig_desc_hole *h = rig_desc_data_add_hole(d, &d->images[1].binary, 0, RIG_W64, 0, 0);
  CHECK(h);
  CHECK(rig_desc_terms_add(d, &h->terms, rig_desc_leaf_value(rig_desc_entry(0, "k")), 1) == RIG_OK);
  h = rig_desc_data_add_hole(d, &d->images[1].binary, 8, RIG_W64, 0, 0);
  CHECK(h);
  CHECK(rig_desc_terms_add(d, &h->terms, rig_desc_leaf_value(rig_desc_ready(0)), 1) == RIG_OK);
  rig_desc_data *init = &d->memory[3].u.alloc.init;
  CHECK(rig_desc_data_set(d, init, zeros, sizeof zeros) == RIG_OK);
  h = rig_desc_data_add_hole(d, init, 0, RIG_W64, 0, 0);
  CHECK(h);
  CHECK(rig_desc_terms_add(d, &h->terms, rig_desc_leaf_value(rig_desc_address(0, 0)), 1) == RIG_OK);
  h = rig_desc_data_add_hole(d, init, 8, RIG_W32, 16, 3);
  CHECK(h);
  CHECK(rig_desc_terms_add(d, &h->terms, rig_desc_leaf_value(rig_desc_handle(1)), 2) == RIG_OK);
  h = rig_desc_data_add_hole(d, init, 16, RIG_W64, 7, 0);
  CHECK(h);
  rig_desc_submit *s = rig_desc_add_submit(d, NULL, 0);
  CHECK(s);
  CHECK(rig_desc_submit_add_words(d, s, rig_desc_view_of(3, 0, 4096)));
  CHECK(rig_desc_submit_add_fixed(d, s, rig_desc_view_of(0, 0, 4096), RIG_ACCESS_READ) == RIG_OK);
  CHECK(rig_desc_submit_add_fixed(d, s, rig_desc_view_of(1, 0, 4096), RIG_ACCESS_READ) == RIG_OK);
  return d;
}

/* A little of everything, in sequence and inside a loop. */
static rig_desc *seed_mixed(void) {
  static const uint8_t params[16] = {0};
  rig_desc *d = base();
  rig_desc_step *loop = rig_desc_add_loop(d, NULL, rig_desc_fixed(3));
  CHECK(loop);
  for (int i = 0; i < 3; i++) {
    rig_desc_submit *s = rig_desc_add_submit(d, i == 1 ? loop : NULL, 0);
    CHECK(s);
    CHECK(rig_desc_submit_add_slot(d, s, rig_desc_slot_memory(i, 0, 4096)) == 0);
    rig_desc_part *p = rig_desc_submit_add_launch(d, s, 0, "k", params, sizeof params,
                                                  rig_desc_fixed(1), rig_desc_fixed(32));
    CHECK(p);
    CHECK(rig_desc_part_add_ref(d, p, 0, 0, i == 2 ? RIG_USE_UNORDERED : RIG_USE_WRITE) == RIG_OK);
    CHECK(rig_desc_add_move(d, loop, rig_desc_slot_memory(i, 0, 16),
                            rig_desc_slot_memory(3, 16 * i, 16), 16));
  }
  return d;
}

/* Ill-formed on purpose: extreme integers, negative indices, views past
 * their memory, an unnamed slot. */
static rig_desc *seed_extremes(void) {
  static const uint8_t params[12] = {0};
  rig_desc *d = base();
  CHECK(rig_desc_add_alloc(d, -1, RIG_KIND_PINNED, RIG_INT_MAX, RIG_COPIES_TWO) == 4);
  CHECK(rig_desc_add_input(d, 7, RIG_INT_MIN) == 1);
  d->ints = RIG_INT_MAX;
  rig_desc_submit *s = rig_desc_add_submit(d, NULL, RIG_INT_MAX);
  CHECK(s);
  CHECK(rig_desc_submit_add_slot(d, s, rig_desc_slot_memory(0, RIG_INT_MAX, RIG_INT_MAX)) == 0);
  CHECK(rig_desc_submit_add_slot(d, s, rig_desc_slot_input(-5)) == 1);
  rig_desc_part *p = rig_desc_submit_add_launch(d, s, 9, "", params, sizeof params,
                                                rig_desc_fixed(RIG_INT_MIN), rig_desc_int(-1));
  CHECK(p);
  CHECK(rig_desc_part_add_ref(d, p, 3, 4, RIG_USE_READ) == RIG_OK);
  rig_desc_hole *h =
      rig_desc_data_add_hole(d, rig_desc_part_params(p), RIG_INT_MAX, RIG_W64, RIG_INT_MIN, 63);
  CHECK(h);
  CHECK(rig_desc_terms_add(d, &h->terms, rig_desc_fixed(RIG_INT_MAX), RIG_INT_MAX) == RIG_OK);
  CHECK(rig_desc_add_move(d, NULL, rig_desc_slot_ints(), rig_desc_slot_ints(), -1));
  return d;
}

/* Strings of any byte: NUL, bytes that are not UTF-8, a long name. */
static rig_desc *seed_strings(void) {
  static const uint8_t odd[] = {'a', 0, 0xff, 0xfe, '"', '\\', '\n', 0x80};
  char long_name[300];
  memset(long_name, 'n', sizeof long_name - 1);
  long_name[sizeof long_name - 1] = '\0';
  rig_desc *d = base();
  /* The builder takes C strings; point the arch at static bytes instead (the
   * description never frees them). */
  d->devices[0].bytes = odd;
  d->devices[0].len = sizeof odd;
  rig_desc_submit *s = rig_desc_add_submit(d, NULL, 0);
  CHECK(s);
  CHECK(rig_desc_submit_add_slot(d, s, rig_desc_slot_memory(0, 0, 4096)) == 0);
  rig_desc_part *p = rig_desc_submit_add_launch(d, s, 0, long_name, odd, sizeof odd,
                                                rig_desc_fixed(1), rig_desc_fixed(1));
  CHECK(p);
  CHECK(rig_desc_part_add_ref(d, p, 0, 0, RIG_USE_READ) == RIG_OK);
  return d;
}

/* Hand-written JSON: typed values of every type and hex in a launch's params
 * and a memory's init, and the fields docs/json.md lets be left out left
 * out. It must read; written as text, not through the writer. */
static const char typed_text[] =
    "{\"devices\": [\"x86_64\"],\n"
    " \"memory\": [{\"Alloc\": {\"device\": 0, \"kind\": \"Device\", \"bytes\": 64,\n"
    "   \"copies\": \"One\", \"init\": {\"bytes\": [{\"f32\": 1.5}, {\"i32\": -1}]}}}],\n"
    " \"images\": [{\"device\": 0, \"binary\": {\"bytes\": [{\"hex\": \"7f454c46\"}]}}],\n"
    " \"steps\": [{\"Submit\": {\"device\": 0, \"parts\": [{\"Launch\": {\n"
    "   \"image\": 0, \"name\": \"k\",\n"
    "   \"params\": {\"bytes\": [{\"u8\": 255}, {\"u16\": 65535}, {\"u32\": 1024},\n"
    "     {\"u64\": 9223372036854775807}, {\"i8\": -128}, {\"i16\": -2}, {\"i32\": -3},\n"
    "     {\"i64\": -4}, {\"f32\": 2}, {\"f64\": -0.5}, {\"hex\": \"00ff\"}],\n"
    "     \"holes\": [{\"at\": 0, \"width\": \"W64\",\n"
    "       \"terms\": [[{\"Leaf\": {\"Address\": {\"memory\": 0, \"on\": 0}}}, 1]]}]},\n"
    "   \"groups\": [{\"Fixed\": 1}, {\"Fixed\": 1}, {\"Fixed\": 1}],\n"
    "   \"threads\": [{\"Fixed\": 1}, {\"Fixed\": 1}, {\"Fixed\": 1}]}}]}},\n"
    "   {\"Loop\": {\"trips\": {\"Fixed\": 2}}}]}\n";

/* Hand-written JSON: a launch's params as a list of typed parameters
 * (docs/json.md, "Typed parameters"), each kind once, laid out as a C
 * struct by the reader. */
static const char params_text[] =
    "{\"devices\": [\"x86_64\"], \"inputs\": [{\"device\": 0, \"bytes\": 8}], \"ints\": 1,\n"
    " \"images\": [{\"device\": 0, \"binary\": {\"bytes\": \"7f454c46\"}}],\n"
    " \"steps\": [{\"Submit\": {\"device\": 0, \"slots\": [{\"Input\": 0}],\n"
    "   \"parts\": [{\"Launch\": {\"image\": 0, \"name\": \"k\",\n"
    "   \"params\": [{\"u8\": 1}, {\"ref\": {\"slot\": 0, \"use\": \"Read\"}},\n"
    "     {\"int\": 0, \"width\": \"W32\"}, {\"leaf\": {\"Ready\": 1}}, {\"pad\": 3},\n"
    "     {\"hole\": {\"width\": \"W64\", \"terms\": [[{\"Int\": 0}, 8]], \"add\": 1}},\n"
    "     {\"hex\": \"00ff\"}, {\"f64\": 0.5}],\n"
    "   \"groups\": [{\"Fixed\": 1}, {\"Fixed\": 1}, {\"Fixed\": 1}],\n"
    "   \"threads\": [{\"Fixed\": 1}, {\"Fixed\": 1}, {\"Fixed\": 1}]}}]}}]}\n";

/* Text as people write it, NAME.json: it must read. */
static void emit_text(const char *name, const char *text) {
  rig_desc *d = NULL;
  rig_error err;
  if (rig_desc_of_json(text, strlen(text), NULL, &d, &err) != RIG_OK) {
    fprintf(stderr, "make_corpus: %s: %s\n", name, err.message);
    failures++;
    return;
  }
  rig_desc_free(d);
  write_file(name, "json", text, strlen(text));
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: make_corpus DIR\n");
    return 2;
  }
  out_dir = argv[1];
  emit("00-empty", seed_empty());
  emit("01-resources", seed_resources());
  emit("02-words", seed_words());
  emit("03-fill", seed_fill());
  emit("04-copy", seed_copy());
  emit("05-launch", seed_launch());
  emit("06-move", seed_move());
  emit("07-loops", seed_loops());
  emit("08-deep-loops", seed_deep_loops());
  emit("09-holes", seed_holes());
  emit("10-mixed", seed_mixed());
  emit("11-extremes", seed_extremes());
  emit("12-strings", seed_strings());
  emit_text("13-typed", typed_text);
  emit_text("14-params", params_text);
  return failures ? 1 : 0;
}
