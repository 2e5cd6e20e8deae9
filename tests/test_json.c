/* The JSON text form of a description (docs/format.md "JSON text form",
 * docs/json.md): round trips through the bytes, the forms of bytes and
 * names, files, every reader message with its JSON path, and damaged text
 * that never crashes. JSON in this file is written with ' for " (see
 * jtext) to keep it readable as C strings. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "desc_gen.h"
#include "rig/rig_desc.h"
#include "rig_test.h"

/* ---- helpers -------------------------------------------------------------- */

static char *jtext(const char *src) {
  char *s = strdup(src);
  for (char *p = s; *p; p++)
    if (*p == '\'') *p = '"';
  return s;
}

static rig_status read_json(const char *src, const char *base_dir, rig_desc **d, rig_error *err) {
  char *s = jtext(src);
  rig_status st = rig_desc_of_json(s, strlen(s), base_dir, d, err);
  free(s);
  return st;
}

static char *to_json(const rig_desc *d) {
  char *text = NULL;
  rig_error err;
  CU_ASSERT_EQUAL_FATAL(rig_desc_to_json(d, &text, &err), RIG_OK);
  return text;
}

static uint8_t *to_bytes(const rig_desc *d, size_t *len) {
  uint8_t *b = NULL;
  rig_error err;
  CU_ASSERT_EQUAL_FATAL(rig_desc_to_bytes(d, &b, len, &err), RIG_OK);
  return b;
}

/* The description in text, which must read (no base directory). */
static rig_desc *read_text(const char *text) {
  rig_desc *d = NULL;
  rig_error err = {0};
  rig_status st = rig_desc_of_json(text, strlen(text), NULL, &d, &err);
  if (st != RIG_OK) fprintf(stderr, "unexpected: %s\n", err.message);
  CU_ASSERT_EQUAL_FATAL(st, RIG_OK);
  return d;
}

/* The description in src (JSON with ' for "), which must read. */
static rig_desc *must_read(const char *src) {
  char *s = jtext(src);
  rig_desc *d = read_text(s);
  free(s);
  return d;
}

static bool same_bytes(const rig_desc *a, const rig_desc *b) {
  size_t n1, n2;
  uint8_t *b1 = to_bytes(a, &n1), *b2 = to_bytes(b, &n2);
  bool same = n1 == n2 && memcmp(b1, b2, n1) == 0;
  free(b1);
  free(b2);
  return same;
}

static bool str_is(rig_desc_string s, const void *bytes, size_t len) {
  return s.len == len && (len == 0 || memcmp(s.bytes, bytes, len) == 0);
}

/* src must be refused with exactly this message, and give no description. */
#define EXPECT_ERROR(src, message)                                                                 \
  do {                                                                                             \
    rig_desc *d_ = NULL;                                                                           \
    rig_error err_ = {0};                                                                          \
    rig_status st_ = read_json((src), NULL, &d_, &err_);                                           \
    RIG_ASSERT_ERROR(st_, err_, RIG_EMALFORMED, (message));                                        \
    CU_ASSERT_PTR_NULL(d_);                                                                        \
    rig_desc_free(d_);                                                                             \
  } while (0)

/* A document with the given memory, images and steps, the rest empty. */
#define DOC(memory, images, steps)                                                                 \
  "{'devices': [], 'memory': " memory ", 'images': " images                                        \
  ", 'inputs': [], 'ints': 0, 'steps': " steps "}"
#define STEPS(steps) DOC("[]", "[]", steps)
#define IMAGE_BYTES(bytes)                                                                         \
  DOC("[]", "[{'device': 0, 'binary': {'bytes': " bytes ", 'holes': []}}]", "[]")
#define LAUNCH_BUT_IMAGE                                                                           \
  "'name': 'k', 'params': {'bytes': '', 'holes': []}, 'refs': [], "                                \
  "'groups': [{'Fixed': 1}, {'Fixed': 1}, {'Fixed': 1}], "                                         \
  "'threads': [{'Fixed': 1}, {'Fixed': 1}, {'Fixed': 1}], 'shared': {'Fixed': 0}"
#define SUBMIT(parts) "[{'Submit': {'device': 0, 'parts': " parts ", 'slots': [], 'fixed': []}}]"

/* One of every constructor: leaves, values, memory, slots, parts, steps. */
static rig_desc *sample(void) {
  rig_desc *d = rig_desc_create();
  rig_desc_add_device(d, "x86_64");
  int64_t m = rig_desc_add_alloc(d, 0, RIG_KIND_DEVICE, 64, RIG_COPIES_TWO);
  rig_desc_data_set(d, &d->memory[m].u.alloc.init, "\0\0\0\0\0\0\0\0", 8);
  rig_desc_hole *h = rig_desc_data_add_hole(d, &d->memory[m].u.alloc.init, 0, RIG_W64, 0, 0);
  rig_desc_terms_add(d, &h->terms, rig_desc_leaf_value(rig_desc_address(0, 0)), 1);
  rig_desc_terms_add(d, &h->terms, rig_desc_leaf_value(rig_desc_handle(0)), 2);
  rig_desc_add_rail(d, 3, RIG_AREA_COUNTS);
  uint8_t elf[80];
  for (size_t i = 0; i < sizeof elf; i++) elf[i] = (uint8_t)(i * 37);
  int64_t im = rig_desc_add_image(d, 0, elf, sizeof elf);
  h = rig_desc_data_add_hole(d, &d->images[im].binary, 8, RIG_W32, 1, 32);
  rig_desc_terms_add(d, &h->terms, rig_desc_leaf_value(rig_desc_entry(0, "k")), 1);
  rig_desc_add_input(d, 0, 16);
  d->ints = 2;
  rig_desc_step *loop = rig_desc_add_loop(d, NULL, rig_desc_int(0));
  rig_desc_loop_set_trip(loop, 1);
  rig_desc_loop_set_flag(loop, rig_desc_slot_memory(0, 0, 1), 0);
  rig_desc_submit *s = rig_desc_add_submit(d, loop, 0);
  rig_desc_submit_add_slot(d, s, rig_desc_slot_input(0));
  rig_desc_submit_add_slot(d, s, rig_desc_slot_ints());
  rig_desc_part *p = rig_desc_submit_add_launch(d, s, 0, "k", "\0\0\0\0\0\0\0\0", 8,
                                                rig_desc_fixed(4), rig_desc_int(1));
  h = rig_desc_data_add_hole(d, &p->u.launch.params, 0, RIG_W64, 0, 0);
  rig_desc_terms_add(d, &h->terms, rig_desc_int(1), 8);
  rig_desc_terms_add(d, &h->terms, rig_desc_leaf_value(rig_desc_ready(3)), 1);
  rig_desc_part_add_ref(d, p, 0, 0, RIG_USE_WRITE);
  p = rig_desc_submit_add_fill(d, s, rig_desc_ready(3), "\1\0\0\0", 4);
  rig_desc_part_add_ref(d, p, 1, 0, RIG_USE_UNORDERED);
  p = rig_desc_submit_add_copy(d, s, 0, 1, 8);
  rig_desc_terms_add(d, &p->u.copy.src_offset, rig_desc_fixed(8), 1);
  rig_desc_submit_add_words(d, s, rig_desc_view_of(0, 8, 8));
  rig_desc_submit_add_fixed(d, s, rig_desc_view_of(0, 0, 64), RIG_ACCESS_READ_WRITE);
  rig_desc_step *mv =
      rig_desc_add_move(d, NULL, rig_desc_slot_input(0), rig_desc_slot_memory(0, 0, 64), 8);
  rig_desc_terms_add(d, &mv->u.move.dst_offset, rig_desc_int(1), 8);
  return d;
}

/* ---- round trips ---------------------------------------------------------- */

/* A random description (loops 64 deep for every 50th i) whose first
 * device, if any, has an arch of random bytes in arch: NUL and invalid
 * UTF-8 often among them, so that names take both JSON forms. */
static rig_desc *random_desc(rig_rng *r, int i, uint8_t arch[12]) {
  rig_desc *d = rig_gen_desc(r, i % 50 == 0 ? RIG_DESC_MAX_DEPTH : 3);
  CU_ASSERT_PTR_NOT_NULL_FATAL(d);
  if (d->ndevices == 0) return d;
  size_t n = rig_rng_below(r, 12);
  for (size_t k = 0; k < n; k++)
    arch[k] = (uint8_t)(rig_rng_below(r, 2) ? 'a' + k : rig_rng_next(r));
  d->devices[0] = (rig_desc_string){arch, n};
  return d;
}

/* description -> JSON -> description gives the same bytes, for thousands of
 * random descriptions, ill-formed ones and loops 64 deep included. */
static void test_random_descriptions_round_trip_through_json_to_the_same_bytes(void) {
  rig_rng r = {42};
  for (int i = 0; i < 3000; i++) {
    uint8_t arch[12];
    rig_desc *d = random_desc(&r, i, arch);
    char *text = to_json(d);
    rig_desc *back = read_text(text);
    CU_ASSERT(same_bytes(d, back));
    free(text);
    rig_desc_free(back);
    rig_desc_free(d);
  }
}

/* JSON -> bytes -> JSON gives the same text: the writer's text is a
 * function of the bytes alone. */
static void test_json_through_bytes_and_back_is_the_same_text(void) {
  rig_rng r = {1234};
  for (int i = 0; i < 3000; i++) {
    uint8_t arch[12];
    rig_desc *d = random_desc(&r, i, arch);
    char *text = to_json(d);
    rig_desc *x = read_text(text), *y = NULL;
    size_t n;
    uint8_t *b = to_bytes(x, &n);
    CU_ASSERT_EQUAL_FATAL(rig_desc_of_bytes(b, n, &y, NULL), RIG_OK);
    char *again = to_json(y);
    CU_ASSERT_STRING_EQUAL(again, text);
    free(again);
    free(b);
    free(text);
    rig_desc_free(x);
    rig_desc_free(y);
    rig_desc_free(d);
  }
}

static void test_empty_description_is_this_text(void) {
  rig_desc *d = rig_desc_create();
  char *text = to_json(d);
  CU_ASSERT_STRING_EQUAL(text, "{\n"
                               "  \"format\": 4,\n"
                               "  \"devices\": [],\n"
                               "  \"memory\": [],\n"
                               "  \"images\": [],\n"
                               "  \"inputs\": [],\n"
                               "  \"ints\": 0,\n"
                               "  \"steps\": []\n"
                               "}\n");
  free(text);
  rig_desc_free(d);
}

/* The complete example of docs/json.md (examples/scale.json, listed there)
 * is the writer's own text but for its image's bytes, which it names by
 * their file: with the file's name put back for its bytes, it reads, and
 * writes back unchanged. */
static void test_docs_complete_example_is_the_writers_text_but_for_its_file(void) {
  static const char file[] = "{\"file\": \"kernels/scale.so\"}", bytes[] = "\"7f454c46\"";
  char path[4096];
  size_t len;
  char *raw =
      rig_test_read_file(rig_test_source_path("examples/scale.json", path, sizeof path), &len);
  CU_ASSERT_PTR_NOT_NULL_FATAL(raw);
  char *text = strndup(raw, len);
  free(raw);
  char *at = strstr(text, file);
  CU_ASSERT_PTR_NOT_NULL_FATAL(at);
  CU_ASSERT_PTR_NULL(strstr(at + 1, file)); /* one image, named once */
  char *writer = malloc(len + 1);
  CU_ASSERT_PTR_NOT_NULL_FATAL(writer);
  snprintf(writer, len + 1, "%.*s%s%s", (int)(at - text), text, bytes, at + strlen(file));
  rig_desc *d = read_text(writer);
  char *again = to_json(d);
  CU_ASSERT_STRING_EQUAL(again, writer);
  CU_ASSERT_EQUAL(rig_desc_check(d, NULL), RIG_OK);
  free(again);
  rig_desc_free(d);
  free(writer);
  free(text);
}

/* ---- reading a hand-written text ------------------------------------------ */

static const char example[] =
    "{'devices': ['x86_64'],\n"
    " 'memory': [{'Alloc': {'device': 0, 'kind': 'Pinned', 'bytes': 64, 'copies': 'Two',\n"
    "                       'init': {'bytes': '00000000000000FF', 'holes': [\n"
    "                         {'at': 0, 'width': 'W32', 'add': 4, 'shift': 0,\n"
    "                          'terms': [[{'Address': {'memory': 0, 'on': 0}}, 1]]}]}}},\n"
    "            {'Rail': {'rail': 7, 'area': 'Inbound'}}],\n"
    " 'images': [{'device': 0, 'binary': {'bytes': {'base64': 'f0VMRg=='}, 'holes': []}}],\n"
    " 'inputs': [{'device': 0, 'bytes': 16}],\n"
    " 'ints': 1,\n"
    " 'steps': [\n"
    "   {'Loop': {'trips': {'Fixed': 3}, 'trip': 0, 'flag': null, 'body': [\n"
    "     {'Submit': {'device': 0, 'slots': ['Ints', {'Input': 0}],\n"
    "                 'fixed': [[{'memory': 0, 'offset': 0, 'length': 64}, 'Read']],\n"
    "                 'parts': [{'Launch': {'image': 0, 'name': 'scale',\n"
    "                   'params': {'bytes': {'hex': '0000000000000000'}, 'holes': [\n"
    "                     {'at': 0, 'width': 'W64', 'add': 0, 'shift': 0,\n"
    "                      'terms': [[{'Int': 0}, 8], [{'Leaf': {'Handle': 0}}, 1]]}]},\n"
    "                   'refs': [{'slot': 1, 'at': 0, 'use': 'Read'}],\n"
    "                   'groups': [{'Int': 0}, {'Fixed': 1}, {'Fixed': 1}],\n"
    "                   'threads': [{'Fixed': 64}, {'Fixed': 1}, {'Fixed': 1}],\n"
    "                   'shared': {'Fixed': 0}}}]}}]}},\n"
    "   {'Move': {'src': {'Memory': {'memory': 0, 'offset': 8, 'length': 8}},\n"
    "             'src_offset': [], 'dst': 'Ints', 'dst_offset': [[{'Fixed': 1}, 0]],\n"
    "             'length': 8}}]}\n";

static void test_hand_written_example_reads_to_its_fields(void) {
  rig_desc *d = must_read(example);
  CU_ASSERT_EQUAL(d->ndevices, 1);
  CU_ASSERT(str_is(d->devices[0], "x86_64", 6));
  CU_ASSERT_EQUAL_FATAL(d->nmemory, 2);
  const rig_desc_memory *m = &d->memory[0];
  CU_ASSERT_EQUAL(m->tag, RIG_MEMORY_ALLOC);
  CU_ASSERT_EQUAL(m->u.alloc.kind, RIG_KIND_PINNED);
  CU_ASSERT_EQUAL(m->u.alloc.bytes, 64);
  CU_ASSERT_EQUAL(m->u.alloc.copies, RIG_COPIES_TWO);
  CU_ASSERT(str_is(m->u.alloc.init.bytes, "\0\0\0\0\0\0\0\xff", 8));
  CU_ASSERT_EQUAL_FATAL(m->u.alloc.init.nholes, 1);
  const rig_desc_hole *h = &m->u.alloc.init.holes[0];
  CU_ASSERT_EQUAL(h->width, RIG_W32);
  CU_ASSERT_EQUAL(h->add, 4);
  CU_ASSERT_EQUAL_FATAL(h->terms.n, 1);
  CU_ASSERT_EQUAL(h->terms.items[0].value.tag, RIG_VALUE_LEAF);
  CU_ASSERT_EQUAL(h->terms.items[0].value.u.leaf.tag, RIG_LEAF_ADDRESS);
  CU_ASSERT_EQUAL(d->memory[1].tag, RIG_MEMORY_RAIL);
  CU_ASSERT_EQUAL(d->memory[1].u.rail.rail, 7);
  CU_ASSERT_EQUAL(d->memory[1].u.rail.area, RIG_AREA_INBOUND);
  CU_ASSERT(str_is(d->images[0].binary.bytes, "\177ELF", 4));
  CU_ASSERT_EQUAL(d->inputs[0].bytes, 16);
  CU_ASSERT_EQUAL(d->ints, 1);
  CU_ASSERT_EQUAL_FATAL(d->steps.n, 2);
  const rig_desc_step *loop = &d->steps.items[0];
  CU_ASSERT_EQUAL_FATAL(loop->tag, RIG_STEP_LOOP);
  CU_ASSERT_EQUAL(loop->u.loop.trips.u.fixed, 3);
  CU_ASSERT(loop->u.loop.has_trip && loop->u.loop.trip == 0);
  CU_ASSERT(!loop->u.loop.has_flag);
  const rig_desc_submit *s = &loop->u.loop.body.items[0].u.submit;
  CU_ASSERT_EQUAL(s->slots[0].tag, RIG_SLOT_INTS);
  CU_ASSERT_EQUAL(s->slots[1].u.input, 0);
  CU_ASSERT_EQUAL(s->fixed[0].access, RIG_ACCESS_READ);
  const rig_desc_part *p = &s->parts[0];
  CU_ASSERT_EQUAL_FATAL(p->tag, RIG_PART_LAUNCH);
  CU_ASSERT(str_is(p->u.launch.name, "scale", 5));
  CU_ASSERT_EQUAL(p->u.launch.params.bytes.len, 8);
  const rig_desc_terms *t = &p->u.launch.params.holes[0].terms;
  CU_ASSERT(t->items[0].value.tag == RIG_VALUE_INT && t->items[0].factor == 8);
  CU_ASSERT(t->items[1].value.u.leaf.tag == RIG_LEAF_HANDLE);
  CU_ASSERT_EQUAL(p->u.launch.refs[0].slot, 1);
  CU_ASSERT_EQUAL(p->u.launch.groups[0].tag, RIG_VALUE_INT);
  CU_ASSERT_EQUAL(p->u.launch.threads[0].u.fixed, 64);
  const rig_desc_step *mv = &d->steps.items[1];
  CU_ASSERT_EQUAL(mv->u.move.src.u.memory.offset, 8);
  CU_ASSERT_EQUAL(mv->u.move.dst.tag, RIG_SLOT_INTS);
  CU_ASSERT_EQUAL(mv->u.move.src_offset.n, 0);
  CU_ASSERT_EQUAL(mv->u.move.dst_offset.items[0].value.u.fixed, 1);
  rig_desc_free(d);
}

static void test_format_is_optional_and_fields_are_in_any_order(void) {
  rig_desc *d = must_read("{'steps': [], 'ints': 5, 'inputs': [], 'images': [], 'memory': [], "
                          "'devices': [], 'format': 4}");
  CU_ASSERT_EQUAL(d->ints, 5);
  rig_desc_free(d);
  d = must_read(STEPS("[]"));
  CU_ASSERT_EQUAL(d->steps.n, 0);
  rig_desc_free(d);
}

/* ---- bytes and names ------------------------------------------------------ */

static void expect_image_bytes(const char *bytes_json, const void *want, size_t len) {
  char src[512];
  snprintf(src, sizeof src, IMAGE_BYTES("%s"), bytes_json);
  rig_desc *d = must_read(src);
  CU_ASSERT(str_is(d->images[0].binary.bytes, want, len));
  rig_desc_free(d);
}

static void test_bytes_read_from_hex_either_case_hex_objects_and_base64(void) {
  expect_image_bytes("'00ff7fAb'", "\0\xff\x7f\xab", 4);
  expect_image_bytes("'DEADBEEF'", "\xde\xad\xbe\xef", 4);
  expect_image_bytes("''", "", 0);
  expect_image_bytes("{'hex': 'c0Fe'}", "\xc0\xfe", 2);
  expect_image_bytes("{'hex': ''}", "", 0);
  expect_image_bytes("{'base64': ''}", "", 0);
  expect_image_bytes("{'base64': 'YQ=='}", "a", 1);
  expect_image_bytes("{'base64': 'YWI='}", "ab", 2);
  expect_image_bytes("{'base64': 'YWJj'}", "abc", 3);
  expect_image_bytes("{'base64': '+/+/AA=='}", "\xfb\xff\xbf\0", 4);
}

static void test_bytes_up_to_64_are_hex_and_longer_are_base64(void) {
  uint8_t b[65];
  for (size_t i = 0; i < sizeof b; i++) b[i] = (uint8_t)(0xA0 + i);
  rig_desc *d = rig_desc_create();
  rig_desc_add_image(d, 0, b, 64);
  rig_desc_add_image(d, 0, b, 65);
  rig_desc_add_image(d, 0, "\x01\xAB", 2);
  char *text = to_json(d);
  char want[256] = "\"bytes\": \"";
  for (size_t i = 0; i < 64; i++) snprintf(want + strlen(want), 3, "%02x", b[i]);
  CU_ASSERT_PTR_NOT_NULL(strstr(text, want));
  CU_ASSERT_PTR_NOT_NULL(strstr(text, "\"bytes\": {\n          \"base64\": \"oKGio"));
  CU_ASSERT_PTR_NOT_NULL(strstr(text, "\"bytes\": \"01ab\""));
  rig_desc *back = read_text(text);
  CU_ASSERT(str_is(back->images[1].binary.bytes, b, 65));
  rig_desc_free(back);
  free(text);
  rig_desc_free(d);
}

/* A name JSON cannot hold as a string (a NUL, bytes that are not UTF-8) is
 * written as {"hex": ...} and reads back the same. */
static void test_names_with_nul_or_invalid_utf8_round_trip_as_hex(void) {
  rig_desc *d = rig_desc_create();
  rig_desc_add_device(d, "x86_64");
  rig_desc_add_device(d, "\xc3\xa9t\xc3\xa9"); /* "été": valid UTF-8, a string */
  rig_desc_submit *s = rig_desc_add_submit(d, NULL, 0);
  rig_desc_submit_add_launch(d, s, 0, "\xff\xfe", "", 0, rig_desc_fixed(1), rig_desc_fixed(1));
  /* A NUL inside a device's arch: set the bytes directly. */
  static const uint8_t with_nul[] = {'a', 0, 'b'};
  d->devices[0].bytes = with_nul;
  d->devices[0].len = 3;
  char *text = to_json(d);
  CU_ASSERT_PTR_NOT_NULL(strstr(text, "\"hex\": \"610062\""));
  CU_ASSERT_PTR_NOT_NULL(strstr(text, "\"hex\": \"fffe\""));
  CU_ASSERT_PTR_NOT_NULL(strstr(text, "\"\xc3\xa9t\xc3\xa9\""));
  rig_desc *back = read_text(text);
  CU_ASSERT(str_is(back->devices[0], "a\0b", 3));
  CU_ASSERT(str_is(back->devices[1], "\xc3\xa9t\xc3\xa9", 5));
  CU_ASSERT(str_is(back->steps.items[0].u.submit.parts[0].u.launch.name, "\xff\xfe", 2));
  rig_desc_free(back);
  free(text);
  rig_desc_free(d);
  /* Either form reads wherever a name goes. */
  d = must_read(DOC("[]", "[]",
                    SUBMIT("[{'Fill': {'fill': {'Entry': {'image': 0, 'name': "
                           "{'hex': '6B00'}}}, 'params': {'bytes': '', 'holes': "
                           "[]}, 'refs': []}}]")));
  CU_ASSERT(str_is(d->steps.items[0].u.submit.parts[0].u.fill.fill.u.entry.name, "k\0", 2));
  rig_desc_free(d);
}

/* ---- files ---------------------------------------------------------------- */

static void make_temp_dir(char *dir, size_t size) {
  snprintf(dir, size, "/tmp/rig-json-XXXXXX");
  CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
}

static void write_file(const char *dir, const char *name, const void *bytes, size_t len) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "wb");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  CU_ASSERT_EQUAL(fwrite(bytes, 1, len, f), len);
  fclose(f);
}

static void remove_file(const char *dir, const char *name) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  unlink(path);
}

static void test_file_bytes_are_read_relative_to_base_dir(void) {
  char dir[64];
  make_temp_dir(dir, sizeof dir);
  write_file(dir, "kernel.bin", "\177ELF\0\1", 6);
  write_file(dir, "empty.bin", "", 0);
  rig_desc *d = NULL;
  rig_error err = {0};
  rig_status st = read_json(
      DOC("[{'Alloc': {'device': 0, 'kind': 'Device', 'bytes': 8, 'copies': 'One', "
          "'init': {'bytes': {'file': 'empty.bin'}, 'holes': []}}}]",
          "[{'device': 0, 'binary': {'bytes': {'file': 'kernel.bin'}, 'holes': []}}]", "[]"),
      dir, &d, &err);
  CU_ASSERT_EQUAL_FATAL(st, RIG_OK);
  CU_ASSERT(str_is(d->images[0].binary.bytes, "\177ELF\0\1", 6));
  CU_ASSERT(str_is(d->memory[0].u.alloc.init.bytes, "", 0));
  rig_desc_free(d);
  /* An absolute path is read as it is. */
  char src[512];
  snprintf(src, sizeof src, IMAGE_BYTES("{'file': '%s/kernel.bin'}"), dir);
  d = NULL;
  CU_ASSERT_EQUAL(read_json(src, "/nonexistent", &d, &err), RIG_OK);
  CU_ASSERT(d && str_is(d->images[0].binary.bytes, "\177ELF\0\1", 6));
  rig_desc_free(d);
  remove_file(dir, "kernel.bin");
  remove_file(dir, "empty.bin");
  rmdir(dir);
}

static void test_files_are_refused_without_a_base_dir(void) {
  EXPECT_ERROR(IMAGE_BYTES("{'file': 'kernel.bin'}"),
               "images[0].binary.bytes.file: \"kernel.bin\": files are not read here (no base "
               "directory)");
}

static void test_a_missing_file_is_named_with_its_path(void) {
  char dir[64];
  make_temp_dir(dir, sizeof dir);
  rig_desc *d = NULL;
  rig_error err = {0};
  rig_status st = read_json(IMAGE_BYTES("{'file': 'missing.bin'}"), dir, &d, &err);
  char want[256];
  snprintf(want, sizeof want,
           "images[0].binary.bytes.file: cannot read \"%s/missing.bin\": No such file or directory",
           dir);
  RIG_ASSERT_ERROR(st, err, RIG_EMALFORMED, want);
  st = read_json(IMAGE_BYTES("{'file': '.'}"), dir, &d, &err);
  snprintf(want, sizeof want,
           "images[0].binary.bytes.file: cannot read \"%s/.\": not a regular file", dir);
  RIG_ASSERT_ERROR(st, err, RIG_EMALFORMED, want);
  CU_ASSERT_PTR_NULL(d);
  rmdir(dir);
}

/* ---- messages ------------------------------------------------------------- */

static void test_parse_errors_give_line_and_column(void) {
  EXPECT_ERROR("{'ints': 0,\n 'steps': [}", "JSON line 2 column 12: unexpected token near '}'");
  EXPECT_ERROR("", "JSON line 1 column 0: unexpected token near end of file");
  EXPECT_ERROR("{'ints': 0, 'ints': 1}",
               "JSON line 1 column 18: duplicate object key near '\"ints\"'");
  EXPECT_ERROR("{} x", "JSON line 1 column 4: end of file expected near 'x'");
  EXPECT_ERROR(
      "{'devices': ['a\\u0000b']}",
      "JSON line 1 column 23: a string holds \\u0000 (write such bytes as {\"hex\": ...})");
}

static void test_root_must_be_an_object(void) {
  EXPECT_ERROR("[]", "description: not an object");
  EXPECT_ERROR("42", "description: not an object");
}

static void test_missing_fields_are_named_with_their_path(void) {
  EXPECT_ERROR(DOC("[{'Alloc': {'device': 0, 'bytes': 8, 'copies': 'One'}}]", "[]", "[]"),
               "memory[0].Alloc: missing field \"kind\"");
  EXPECT_ERROR(DOC("[]", "[{'device': 0, 'binary': {'holes': []}}]", "[]"),
               "images[0].binary: missing field \"bytes\"");
  EXPECT_ERROR(STEPS("[{'Move': {'src': 'Ints', 'src_offset': [], 'dst': 'Ints', "
                     "'dst_offset': []}}, 'x']"),
               "steps[0].Move: missing field \"length\"");
  EXPECT_ERROR(STEPS(SUBMIT("[{'Words': {'memory': 0, 'offset': 0, 'length': 8}}, "
                            "{'Launch': {" LAUNCH_BUT_IMAGE "}}]")),
               "steps[0].Submit.parts[1].Launch: missing field \"image\"");
  EXPECT_ERROR(STEPS("[{'Loop': {'trip': null, 'flag': null, 'body': []}}]"),
               "steps[0].Loop: missing field \"trips\"");
}

static void test_unknown_fields_are_refused(void) {
  EXPECT_ERROR("{'devices': [], 'memory': [], 'images': [], 'inputs': [], 'ints': 0, "
               "'steps': [], 'extra': 1}",
               "description: unknown field \"extra\"");
  EXPECT_ERROR(DOC("[{'Rail': {'rail': 0, 'area': 'Counts', 'size': 384}}]", "[]", "[]"),
               "memory[0].Rail: unknown field \"size\"");
  EXPECT_ERROR(IMAGE_BYTES("{'hexa': '00'}"), "images[0].binary.bytes: unknown field \"hexa\"");
}

static void test_wrong_types_are_refused(void) {
  EXPECT_ERROR("{'devices': {}, 'memory': [], 'images': [], 'inputs': [], 'ints': 0, "
               "'steps': []}",
               "devices: not an array");
  EXPECT_ERROR("{'devices': [1], 'memory': [], 'images': [], 'inputs': [], 'ints': 0, "
               "'steps': []}",
               "devices[0]: not a name (a string or {\"hex\": ...})");
  EXPECT_ERROR("{'devices': [], 'memory': [], 'images': [], 'inputs': [], 'ints': '3', "
               "'steps': []}",
               "ints: not an integer");
  EXPECT_ERROR(DOC("[]", "[{'device': 0, 'binary': []}]", "[]"), "images[0].binary: not an object");
  EXPECT_ERROR(IMAGE_BYTES("7"), "images[0].binary.bytes: not bytes (a hex string, an array of "
                                 "typed values, or {\"hex\": ...}, {\"base64\": ...} or "
                                 "{\"file\": ...})");
  EXPECT_ERROR(STEPS("[{'Move': {'src': 'Ints', 'src_offset': [[{'Fixed': 1}, 2, 3]], "
                     "'dst': 'Ints', 'dst_offset': [], 'length': 8}}]"),
               "steps[0].Move.src_offset[0]: 3 elements, not 2");
  EXPECT_ERROR(STEPS("[{'Loop': {'trips': {'Fixed': 1}, 'trip': 'x', 'flag': null, "
                     "'body': []}}]"),
               "steps[0].Loop.trip: not an integer or null");
  EXPECT_ERROR(STEPS("[{'Loop': {'trips': {'Fixed': 1}, 'trip': null, 'flag': ['Ints', true], "
                     "'body': []}}]"),
               "steps[0].Loop.flag[1]: not an integer");
}

static void test_bad_constructors_are_named_with_the_choices(void) {
  EXPECT_ERROR(DOC("[{'Rail': {'rail': 0, 'area': 'Counts'}}, "
                   "{'Alloc': {'device': 0, 'kind': 'Big', 'bytes': 8, 'copies': 'One', "
                   "'init': {'bytes': '', 'holes': []}}}]",
                   "[]", "[]"),
               "memory[1].Alloc.kind: \"Big\" is not a memory kind (Device, Pinned, Mapped)");
  EXPECT_ERROR(STEPS("[{'Jump': {}}]"), "steps[0]: \"Jump\" is not a step (Submit, Move, Loop)");
  EXPECT_ERROR(STEPS("[{'Move': {}, 'Loop': {}}]"),
               "steps[0]: an object of 2 keys, not a step (Submit, Move, Loop)");
  EXPECT_ERROR(STEPS("[3]"), "steps[0]: not a step (Submit, Move, Loop)");
  EXPECT_ERROR(STEPS("['Move']"), "steps[0]: \"Move\" without its arguments");
  EXPECT_ERROR(STEPS("[{'Move': {'src': {'Ints': 0}, 'src_offset': [], 'dst': 'Ints', "
                     "'dst_offset': [], 'length': 8}}]"),
               "steps[0].Move.src: \"Ints\" takes no arguments");
  EXPECT_ERROR(STEPS("[{'Submit': {'device': 0, 'parts': [], 'slots': [], 'fixed': "
                     "[[{'memory': 0, 'offset': 0, 'length': 8}, 'Write']]}}]"),
               "steps[0].Submit.fixed[0][1]: \"Write\" is not an access (Read, Read_write)");
}

static void test_integers_must_fit_63_bits(void) {
  rig_desc *d = must_read("{'devices': [], 'memory': [], 'images': [], 'inputs': [], "
                          "'ints': 4611686018427387903, 'steps': [{'Loop': {'trips': "
                          "{'Fixed': -4611686018427387904}, 'trip': null, 'flag': null, "
                          "'body': []}}]}");
  CU_ASSERT_EQUAL(d->ints, RIG_INT_MAX);
  CU_ASSERT_EQUAL(d->steps.items[0].u.loop.trips.u.fixed, RIG_INT_MIN);
  rig_desc_free(d);
  EXPECT_ERROR("{'devices': [], 'memory': [], 'images': [], 'inputs': [], "
               "'ints': 4611686018427387904, 'steps': []}",
               "ints: an integer of more than 63 bits");
  EXPECT_ERROR(STEPS("[{'Loop': {'trips': {'Fixed': -4611686018427387905}, 'trip': null, "
                     "'flag': null, 'body': []}}]"),
               "steps[0].Loop.trips.Fixed: an integer of more than 63 bits");
  EXPECT_ERROR("{'devices': [], 'memory': [], 'images': [], 'inputs': [], "
               "'ints': 9223372036854775808, 'steps': []}",
               "JSON line 1 column 85: too big integer near '9223372036854775808'");
}

static void test_real_numbers_are_not_integers(void) {
  EXPECT_ERROR("{'devices': [], 'memory': [], 'images': [], 'inputs': [], 'ints': 1.0, "
               "'steps': []}",
               "ints: a real number, not an integer");
  EXPECT_ERROR("{'format': 4e0, 'devices': [], 'memory': [], 'images': [], 'inputs': [], "
               "'ints': 1, 'steps': []}",
               "format: a real number, not an integer");
}

static void test_bad_hex_is_refused(void) {
  EXPECT_ERROR(IMAGE_BYTES("'0g'"), "images[0].binary.bytes: not hex");
  EXPECT_ERROR(IMAGE_BYTES("'0x00'"), "images[0].binary.bytes: not hex");
  EXPECT_ERROR(IMAGE_BYTES("'abc'"), "images[0].binary.bytes: an odd number of hex digits");
  EXPECT_ERROR(IMAGE_BYTES("{'hex': ' 00'}"),
               "images[0].binary.bytes.hex: an odd number of hex digits");
  EXPECT_ERROR(IMAGE_BYTES("{'hex': '0 00'}"), "images[0].binary.bytes.hex: not hex");
  EXPECT_ERROR(IMAGE_BYTES("{'hex': 0}"), "images[0].binary.bytes.hex: not a string");
}

static void test_bad_base64_is_refused(void) {
  /* "YW\\nJ" is a JSON string with a line feed in it. */
  static const char *const bad[] = {"YQ",   "YQ=",    "Y===", "====", "YQ==YQ==", "Y=Q=", "YR==",
                                    "YWJ=", "YW\\nJ", "YW-j", "YW_j", "YWJj ",    "=YWJ"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    char src[512];
    snprintf(src, sizeof src, IMAGE_BYTES("{'base64': '%s'}"), bad[i]);
    EXPECT_ERROR(src, "images[0].binary.bytes.base64: not base64");
  }
}

static void test_format_other_than_4_is_refused(void) {
  EXPECT_ERROR("{'format': 3, 'devices': [], 'memory': [], 'images': [], 'inputs': [], "
               "'ints': 0, 'steps': []}",
               "format: a program description of format version 3, not 4");
  /* The version is judged before fields another version may have. */
  EXPECT_ERROR("{'format': 5, 'programs': []}",
               "format: a program description of format version 5, not 4");
  EXPECT_ERROR("{'format': '4', 'devices': [], 'memory': [], 'images': [], 'inputs': [], "
               "'ints': 0, 'steps': []}",
               "format: not an integer");
}

/* Nested loops as text: `depth` loops, the innermost with an empty body. */
static char *nested_loops(int depth) {
  static const char open[] = "{'Loop': {'trips': {'Fixed': 1}, 'trip': null, 'flag': null, "
                             "'body': [";
  size_t room = 256 + (size_t)depth * (sizeof open + 8);
  char *s = malloc(room);
  size_t o = (size_t)snprintf(s, room,
                              "{'devices': [], 'memory': [], 'images': [], "
                              "'inputs': [], 'ints': 0, 'steps': [");
  for (int i = 0; i < depth; i++) o += (size_t)snprintf(s + o, room - o, "%s", open);
  for (int i = 0; i < depth; i++) o += (size_t)snprintf(s + o, room - o, "]}}");
  snprintf(s + o, room - o, "]}");
  return s;
}

static void test_loops_64_deep_read_and_65_are_refused(void) {
  char *s = nested_loops(RIG_DESC_MAX_DEPTH);
  rig_desc *d = must_read(s);
  free(s);
  rig_desc_free(d);
  /* The path is long: it is shown as its start, "...", and its end. */
  char want[512] = "steps[0]";
  for (int i = 0; i < 6; i++) strcat(want, ".Loop.body[0]");
  strcat(want, "...body[0]");
  for (int i = 0; i < 14; i++) strcat(want, ".Loop.body[0]");
  strcat(want, ".Loop.body: steps nested deeper than 64");
  s = nested_loops(RIG_DESC_MAX_DEPTH + 1);
  EXPECT_ERROR(s, want);
  free(s);
}

/* ---- typed values --------------------------------------------------------- */

static void test_typed_values_pack_little_endian_in_order_without_padding(void) {
  expect_image_bytes("[]", "", 0);
  expect_image_bytes("[{'u8': 7}, {'u16': 258}, {'u32': 16909060}, {'u64': 1024}]",
                     "\x07"
                     "\x02\x01"
                     "\x04\x03\x02\x01"
                     "\x00\x04\0\0\0\0\0\0",
                     15);
  expect_image_bytes("[{'i8': -1}, {'i16': -2}, {'i32': -3}, {'i64': -4}]",
                     "\xff"
                     "\xfe\xff"
                     "\xfd\xff\xff\xff"
                     "\xfc\xff\xff\xff\xff\xff\xff\xff",
                     15);
  /* Floats from reals or integers; 2.0f is 0x40000000, -0.5 is 0xbfe0000000000000. */
  expect_image_bytes("[{'f32': 2.0}, {'f32': 2}, {'f64': -0.5}, {'f64': 1e0}]",
                     "\0\0\0\x40"
                     "\0\0\0\x40"
                     "\0\0\0\0\0\0\xe0\xbf"
                     "\0\0\0\0\0\0\xf0\x3f",
                     24);
  expect_image_bytes("[{'hex': '00fF'}, {'u8': 1}, {'hex': ''}, {'u8': 2}]", "\0\xff\x01\x02", 4);
}

static void test_typed_values_reach_each_end_of_their_range(void) {
  expect_image_bytes("[{'u8': 255}, {'u8': 0}, {'u16': 65535}, {'u32': 4294967295}]",
                     "\xff\0\xff\xff\xff\xff\xff\xff", 8);
  expect_image_bytes("[{'u64': 9223372036854775807}]", "\xff\xff\xff\xff\xff\xff\xff\x7f", 8);
  expect_image_bytes("[{'i8': -128}, {'i8': 127}, {'i16': -32768}, {'i32': -2147483648}]",
                     "\x80\x7f\0\x80\0\0\0\x80", 8);
  expect_image_bytes("[{'i64': -9223372036854775808}]", "\0\0\0\0\0\0\0\x80", 8);
  /* The largest float, 0x7f7fffff. */
  expect_image_bytes("[{'f32': 3.4028234663852886e38}]", "\xff\xff\x7f\x7f", 4);
}

#define LAUNCH_PARAMS(bytes)                                                                       \
  STEPS(SUBMIT("[{'Launch': {'image': 0, 'name': 'k', 'params': {'bytes': " bytes "}, "            \
               "'groups': [{'Fixed': 1}, {'Fixed': 1}, {'Fixed': 1}], "                            \
               "'threads': [{'Fixed': 1}, {'Fixed': 1}, {'Fixed': 1}]}}]"))
#define PARAMS_PATH "steps[0].Submit.parts[0].Launch.params.bytes"

static void test_each_out_of_range_typed_value_is_refused_with_its_path(void) {
  static const char *const cases[][2] = {
      {"{'u8': 256}", "256 does not fit a u8"},
      {"{'u8': -1}", "-1 does not fit a u8"},
      {"{'u16': 65536}", "65536 does not fit a u16"},
      {"{'u32': 4294967296}", "4294967296 does not fit a u32"},
      {"{'u64': -1}", "-1 does not fit a u64"},
      {"{'i8': 128}", "128 does not fit an i8"},
      {"{'i8': -129}", "-129 does not fit an i8"},
      {"{'i16': 32768}", "32768 does not fit an i16"},
      {"{'i16': -32769}", "-32769 does not fit an i16"},
      {"{'i32': 2147483648}", "2147483648 does not fit an i32"},
      {"{'i32': -2147483649}", "-2147483649 does not fit an i32"},
      {"{'f32': 1e39}", "1e+39 does not fit an f32"},
      {"{'f32': -3.5e38}", "-3.5e+38 does not fit an f32"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    char src[1024], want[256];
    snprintf(src, sizeof src, LAUNCH_PARAMS("[{'u8': 0}, {'hex': '00'}, %s]"), cases[i][0]);
    snprintf(want, sizeof want, PARAMS_PATH "[2]: %s", cases[i][1]);
    EXPECT_ERROR(src, want);
  }
}

static void test_typed_values_of_the_wrong_shape_are_refused_with_their_path(void) {
  EXPECT_ERROR(LAUNCH_PARAMS("[{'u8': 7.0}]"), PARAMS_PATH "[0]: a real number, not a u8");
  EXPECT_ERROR(LAUNCH_PARAMS("[{'i64': 1e3}]"), PARAMS_PATH "[0]: a real number, not an i64");
  EXPECT_ERROR(LAUNCH_PARAMS("[{'u32': '7'}]"), PARAMS_PATH "[0]: not a u32 (an integer)");
  EXPECT_ERROR(LAUNCH_PARAMS("[{'f32': null}]"), PARAMS_PATH "[0]: not an f32 (a number)");
  EXPECT_ERROR(LAUNCH_PARAMS("[{'u8': 1}, {'u128': 1}]"),
               PARAMS_PATH "[1]: \"u128\" is not a type (u8, u16, u32, u64, i8, i16, i32, i64, "
                           "f32, f64, hex)");
  EXPECT_ERROR(LAUNCH_PARAMS("[7]"), PARAMS_PATH "[0]: not a typed value (an object of one key: "
                                                 "u8, u16, u32, u64, i8, i16, i32, i64, f32, "
                                                 "f64, hex)");
  EXPECT_ERROR(LAUNCH_PARAMS("[{'u8': 1, 'u16': 2}]"),
               PARAMS_PATH "[0]: not a typed value (an object of one key: u8, u16, u32, u64, i8, "
                           "i16, i32, i64, f32, f64, hex)");
  EXPECT_ERROR(LAUNCH_PARAMS("[{'hex': '0g'}]"), PARAMS_PATH "[0].hex: not hex");
  EXPECT_ERROR(DOC("[{'Alloc': {'device': 0, 'kind': 'Device', 'bytes': 8, 'copies': 'One', "
                   "'init': {'bytes': [{'u8': 1}, {'hex': 'abc'}]}}}]",
                   "[]", "[]"),
               "memory[0].Alloc.init.bytes[1].hex: an odd number of hex digits");
  /* The first wrong value is named, whatever comes after it. */
  EXPECT_ERROR(LAUNCH_PARAMS("[{'u8': 300}, 7]"), PARAMS_PATH "[0]: 300 does not fit a u8");
}

/* Typed and hex forms of the same bytes are one description: the same
 * bytes in params, init and an image's binary. */
static void test_typed_and_hex_forms_of_the_same_bytes_are_one_description(void) {
#define FORMS(params, init, binary)                                                                \
  DOC("[{'Alloc': {'device': 0, 'kind': 'Device', 'bytes': 8, 'copies': 'One', "                   \
      "'init': {'bytes': " init "}}}]",                                                            \
      "[{'device': 0, 'binary': {'bytes': " binary "}}]",                                          \
      SUBMIT("[{'Launch': {'image': 0, 'name': 'k', 'params': {'bytes': " params "}, "             \
             "'groups': [{'Fixed': 1}, {'Fixed': 1}, {'Fixed': 1}], "                              \
             "'threads': [{'Fixed': 1}, {'Fixed': 1}, {'Fixed': 1}]}}]"))
  rig_desc *hex = must_read(FORMS("'000000000000000000000000000000000000004000040000'",
                                  "'0000c03f00000000'", "'7f454c46'"));
  rig_desc *typed =
      must_read(FORMS("[{'u64': 0}, {'u64': 0}, {'f32': 2.0}, {'u32': 1024}]",
                      "[{'f32': 1.5}, {'i32': 0}]", "[{'hex': '7f'}, {'u8': 69}, {'u16': 17996}]"));
  CU_ASSERT(same_bytes(hex, typed));
  char *a = to_json(hex), *b = to_json(typed);
  CU_ASSERT_STRING_EQUAL(a, b); /* and the writer writes them as hex */
  CU_ASSERT_PTR_NOT_NULL(strstr(b, "\"bytes\": \"0000c03f00000000\""));
  free(a);
  free(b);
  rig_desc_free(hex);
  rig_desc_free(typed);
#undef FORMS
}

/* ---- typed parameters ----------------------------------------------------- */

/* A launch of image 0 whose params are `params` (a list: typed parameters),
 * its submit's slots two inputs. */
#define TYPED_LAUNCH(params)                                                                       \
  STEPS("[{'Submit': {'device': 0, 'slots': [{'Input': 0}, {'Input': 1}], 'parts': "               \
        "[{'Launch': {'image': 0, 'name': 'k', 'params': " params ", "                             \
        "'groups': [{'Fixed': 1}, {'Fixed': 1}, {'Fixed': 1}], "                                   \
        "'threads': [{'Fixed': 1}, {'Fixed': 1}, {'Fixed': 1}]}}]}}]")
#define TYPED_PATH "steps[0].Submit.parts[0].Launch"

/* The launch part of a description made by TYPED_LAUNCH. */
static const rig_desc_part *typed_part(const rig_desc *d) {
  return &d->steps.items[0].u.submit.parts[0];
}

/* Both texts read, to the same bytes. */
static void expect_same(const char *typed, const char *explicit_form) {
  rig_desc *a = must_read(typed), *b = must_read(explicit_form);
  CU_ASSERT(same_bytes(a, b));
  rig_desc_free(a);
  rig_desc_free(b);
}

/* Each element at the next multiple of its size, and the whole rounded up
 * to the largest: struct {uint8_t a; uint32_t b; uint16_t c; uint64_t d;
 * float e;} has b at 4, c at 8, d at 16, e at 24 and a size of 32. */
static void test_typed_params_lay_out_as_a_c_struct_of_their_types(void) {
  expect_same(TYPED_LAUNCH("[{'u8': 1}, {'u32': 2}, {'u16': 3}, {'u64': 4}, {'f32': 2.0}]"),
              TYPED_LAUNCH("{'bytes': '01000000020000000300000000000000"
                           "04000000000000000000004000000000'}"));
  /* Bytes of hex align to 1, as a char array does. */
  expect_same(TYPED_LAUNCH("[{'hex': 'aabbcc'}, {'u8': 1}, {'u32': 2}]"),
              TYPED_LAUNCH("{'bytes': 'aabbcc0102000000'}"));
}

/* {"ref": ...} is 8 bytes at a multiple of 8, and a ref whose `at` is
 * that place. */
static void test_a_ref_in_typed_params_is_a_ref_at_its_place(void) {
  rig_desc *d = must_read(TYPED_LAUNCH("[{'u32': 7}, {'ref': {'slot': 1, 'use': 'Write'}}, "
                                       "{'ref': {'slot': 0, 'use': 'Unordered'}}]"));
  const rig_desc_part *p = typed_part(d);
  CU_ASSERT(
      str_is(p->u.launch.params.bytes, "\7\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 24));
  CU_ASSERT_EQUAL(p->u.launch.params.nholes, 0);
  CU_ASSERT_EQUAL_FATAL(p->u.launch.nrefs, 2);
  CU_ASSERT(p->u.launch.refs[0].slot == 1 && p->u.launch.refs[0].at == 8 &&
            p->u.launch.refs[0].use == RIG_USE_WRITE);
  CU_ASSERT(p->u.launch.refs[1].slot == 0 && p->u.launch.refs[1].at == 16 &&
            p->u.launch.refs[1].use == RIG_USE_UNORDERED);
  rig_desc_free(d);
}

/* {"int": i, "width": W} is a hole of W reading int i, times 1, at a
 * multiple of its width. */
static void test_an_int_in_typed_params_is_a_hole_of_its_width_at_its_place(void) {
  expect_same(TYPED_LAUNCH("[{'u8': 1}, {'int': 0, 'width': 'W32'}, {'int': 1, 'width': 'W64'}]"),
              TYPED_LAUNCH("{'bytes': '01000000000000000000000000000000', 'holes': ["
                           "{'at': 4, 'width': 'W32', 'terms': [[{'Int': 0}, 1]]}, "
                           "{'at': 8, 'width': 'W64', 'terms': [[{'Int': 1}, 1]]}]}"));
}

/* {"leaf": LEAF} is a W64 hole of the leaf; {"hole": ...} any hole, at
 * its place. */
static void test_a_leaf_and_a_hole_in_typed_params_are_holes_at_their_place(void) {
  expect_same(TYPED_LAUNCH("[{'u32': 5}, {'leaf': {'Ready': 3}}, "
                           "{'hole': {'width': 'W32', 'terms': [[{'Int': 0}, 8]], 'add': 2, "
                           "'shift': 1}}]"),
              TYPED_LAUNCH("{'bytes': '050000000000000000000000000000000000000000000000', "
                           "'holes': [{'at': 8, 'width': 'W64', "
                           "'terms': [[{'Leaf': {'Ready': 3}}, 1]]}, "
                           "{'at': 16, 'width': 'W32', 'terms': [[{'Int': 0}, 8]], 'add': 2, "
                           "'shift': 1}]}"));
}

/* {"pad": n} is n zero bytes where the element before ends, aligned to
 * nothing: a struct's explicit padding, or a tail to whole words. */
static void test_pad_adds_zero_bytes_where_the_element_before_ends(void) {
  expect_same(TYPED_LAUNCH("[{'u8': 1}, {'pad': 2}, {'u8': 2}, {'pad': 0}]"),
              TYPED_LAUNCH("{'bytes': '01000002'}"));
}

/* A fill's params take the list as a launch's do. */
static void test_typed_params_serve_a_fill_as_a_launch(void) {
  expect_same(
      STEPS("[{'Submit': {'device': 0, 'slots': [{'Input': 0}], 'parts': [{'Fill': "
            "{'fill': {'Ready': 1}, 'params': [{'u32': 9}, {'ref': {'slot': 0, "
            "'use': 'Read'}}]}}]}}]"),
      STEPS("[{'Submit': {'device': 0, 'slots': [{'Input': 0}], 'parts': [{'Fill': "
            "{'fill': {'Ready': 1}, 'params': {'bytes': '09000000000000000000000000000000'}, "
            "'refs': [{'slot': 0, 'at': 8, 'use': 'Read'}]}}]}}]"));
}

/* The writer writes the explicit form whichever form was read: typed
 * params are the reader's, and dump --json round-trips unchanged. */
static void test_the_writer_writes_typed_params_in_the_explicit_form(void) {
  rig_desc *typed = must_read(TYPED_LAUNCH("[{'ref': {'slot': 0, 'use': 'Read'}}, "
                                           "{'int': 0, 'width': 'W32'}]"));
  rig_desc *plain = must_read(TYPED_LAUNCH("{'bytes': '00000000000000000000000000000000', "
                                           "'holes': [{'at': 8, 'width': 'W32', "
                                           "'terms': [[{'Int': 0}, 1]]}]}, "
                                           "'refs': [{'slot': 0, 'at': 0, 'use': 'Read'}]"));
  char *a = to_json(typed), *b = to_json(plain);
  CU_ASSERT_STRING_EQUAL(a, b);
  CU_ASSERT_PTR_NOT_NULL(strstr(a, "\"refs\": ["));
  free(a);
  free(b);
  rig_desc_free(typed);
  rig_desc_free(plain);
}

/* A list holds its refs: "refs" beside it is refused, naming the part. */
static void test_typed_params_refuse_refs_beside_them(void) {
  EXPECT_ERROR(STEPS("[{'Submit': {'device': 0, 'parts': [{'Launch': {'image': 0, 'name': 'k', "
                     "'params': [{'u32': 1}], 'refs': [], "
                     "'groups': [{'Fixed': 1}, {'Fixed': 1}, {'Fixed': 1}], "
                     "'threads': [{'Fixed': 1}, {'Fixed': 1}, {'Fixed': 1}]}}]}}]"),
               TYPED_PATH ": \"refs\" beside params written as a list (write each ref in its "
                          "place there)");
}

/* Every wrong element is named by its place in the list, and why. */
static void test_wrong_typed_params_are_named_by_their_place(void) {
#define CHOICES "u8, u16, u32, u64, i8, i16, i32, i64, f32, f64, hex, pad, ref, int, leaf, hole"
  static const char *const cases[][2] = {
      {"[7]", "params[0]: not a typed parameter (an object of one key: " CHOICES ")"},
      {"[{'u8': 1}, {'u8': 1, 'u16': 2}]",
       "params[1]: not a typed parameter (an object of one key: " CHOICES ")"},
      {"[{'u128': 1}]", "params[0]: \"u128\" is not a typed parameter (" CHOICES ")"},
      {"[{'u8': 300}]", "params[0]: 300 does not fit a u8"},
      {"[{'ref': {'slot': 0, 'at': 8, 'use': 'Read'}}]",
       "params[0].ref: \"at\" is computed from the place in the list (leave it out)"},
      {"[{'ref': {'slot': 0}}]", "params[0].ref: missing field \"use\""},
      {"[{'ref': {'slot': 0, 'use': 'Rd'}}]",
       "params[0].ref.use: \"Rd\" is not a use (Read, Write, Unordered)"},
      {"[{'ref': 0}]", "params[0].ref: not an object"},
      {"[{'int': 0}]", "params[0]: missing field \"width\""},
      {"[{'int': 'a', 'width': 'W32'}]", "params[0].int: not an integer"},
      {"[{'int': 0, 'width': 'W16'}]", "params[0].width: \"W16\" is not a width (W32, W64)"},
      {"[{'int': 0, 'width': 'W32', 'add': 1}]", "params[0]: unknown field \"add\""},
      {"[{'leaf': {'Int': 0}}]",
       "params[0].leaf: \"Int\" is not a leaf (Address, Handle, Entry, Ready)"},
      {"[{'hole': {'terms': []}}]", "params[0].hole: missing field \"width\""},
      {"[{'hole': {'at': 0, 'width': 'W64'}}]",
       "params[0].hole: \"at\" is computed from the place in the list (leave it out)"},
      {"[{'pad': 4097}]", "params[0].pad: 4097 bytes of padding, not 0 to 4096"},
      {"[{'pad': -1}]", "params[0].pad: -1 bytes of padding, not 0 to 4096"},
  };
#undef CHOICES
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    char src[1024], want[512];
    snprintf(src, sizeof src, TYPED_LAUNCH("%s"), cases[i][0]);
    snprintf(want, sizeof want, TYPED_PATH ".%s", cases[i][1]);
    EXPECT_ERROR(src, want);
  }
}

/* ---- fields that may be left out ------------------------------------------ */

static const char explicit_empties[] =
    "{'devices': [], 'memory': [{'Alloc': {'device': 0, 'kind': 'Device', 'bytes': 8, "
    "'copies': 'One', 'init': {'bytes': '', 'holes': []}}}], "
    "'images': [{'device': 0, 'binary': {'bytes': '00', 'holes': []}}], 'inputs': [], 'ints': 0, "
    "'steps': [{'Move': {'src': 'Ints', 'src_offset': [], 'dst': 'Ints', 'dst_offset': [], "
    "'length': 8}}, "
    "{'Loop': {'trips': {'Fixed': 2}, 'trip': null, 'flag': null, 'body': [{'Submit': {"
    "'device': 0, 'slots': [], 'fixed': [], 'parts': ["
    "{'Launch': {'image': 0, 'name': 'k', 'params': {'bytes': '0000', 'holes': ["
    "{'at': 0, 'width': 'W32', 'terms': [], 'add': 0, 'shift': 0}]}, 'refs': [], "
    "'groups': [{'Fixed': 1}, {'Fixed': 1}, {'Fixed': 1}], "
    "'threads': [{'Fixed': 1}, {'Fixed': 1}, {'Fixed': 1}], 'shared': {'Fixed': 0}}}, "
    "{'Fill': {'fill': {'Ready': 0}, 'params': {'bytes': '', 'holes': []}, 'refs': []}}, "
    "{'Copy': {'src': 0, 'src_offset': [], 'dst': 0, 'dst_offset': [], 'length': 4}}]}}]}}, "
    "{'Loop': {'trips': {'Fixed': 1}, 'trip': null, 'flag': null, 'body': []}}, "
    "{'Submit': {'device': 0, 'parts': [], 'slots': [], 'fixed': []}}]}";

static const char omitted_empties[] =
    "{'memory': [{'Alloc': {'device': 0, 'kind': 'Device', 'bytes': 8, 'copies': 'One'}}], "
    "'images': [{'device': 0, 'binary': {'bytes': '00'}}], "
    "'steps': [{'Move': {'src': 'Ints', 'dst': 'Ints', 'length': 8}}, "
    "{'Loop': {'trips': {'Fixed': 2}, 'body': [{'Submit': {'device': 0, 'parts': ["
    "{'Launch': {'image': 0, 'name': 'k', 'params': {'bytes': [{'u16': 0}], 'holes': ["
    "{'at': 0, 'width': 'W32'}]}, "
    "'groups': [{'Fixed': 1}, {'Fixed': 1}, {'Fixed': 1}], "
    "'threads': [{'Fixed': 1}, {'Fixed': 1}, {'Fixed': 1}]}}, "
    "{'Fill': {'fill': {'Ready': 0}}}, "
    "{'Copy': {'src': 0, 'dst': 0, 'length': 4}}]}}]}}, "
    "{'Loop': {'trips': {'Fixed': 1}}}, "
    "{'Submit': {'device': 0}}]}";

static void test_omitted_fields_equal_the_explicit_empty_ones(void) {
  rig_desc *full = must_read(explicit_empties), *brief = must_read(omitted_empties);
  CU_ASSERT(same_bytes(full, brief));
  const rig_desc_step *loop = &brief->steps.items[1];
  CU_ASSERT(!loop->u.loop.has_trip && !loop->u.loop.has_flag);
  const rig_desc_part *launch = &loop->u.loop.body.items[0].u.submit.parts[0];
  CU_ASSERT_EQUAL(launch->u.launch.shared.tag, RIG_VALUE_FIXED);
  CU_ASSERT_EQUAL(launch->u.launch.shared.u.fixed, 0);
  CU_ASSERT_EQUAL(launch->u.launch.nrefs, 0);
  CU_ASSERT_EQUAL(brief->memory[0].u.alloc.init.bytes.len, 0);
  CU_ASSERT_EQUAL(brief->memory[0].u.alloc.init.nholes, 0);
  rig_desc_free(full);
  rig_desc_free(brief);
  /* The top object's fields too. */
  rig_desc *none = must_read("{}"), *empty = rig_desc_create();
  CU_ASSERT(same_bytes(none, empty));
  rig_desc_free(none);
  rig_desc_free(empty);
}

/* The writer leaves out every empty field; its short form reads back to
 * the same bytes. */
static void test_writer_leaves_out_empty_fields_and_its_short_form_round_trips(void) {
  rig_desc *full = must_read(explicit_empties);
  char *text = to_json(full);
  static const char *const absent[] = {
      "\"holes\": []", "\"terms\": []", "\"add\": 0",     "\"shift\": 0",   "\"init\"",
      "\"refs\"",      "\"shared\"",    "\"src_offset\"", "\"dst_offset\"", "\"slots\"",
      "\"fixed\"",     "\"trip\"",      "\"flag\"",       "\"body\": []",   "\"parts\": []"};
  for (size_t i = 0; i < sizeof absent / sizeof *absent; i++) {
    if (strstr(text, absent[i])) fprintf(stderr, "the writer wrote %s\n", absent[i]);
    CU_ASSERT_PTR_NULL(strstr(text, absent[i]));
  }
  /* The fill's empty params are left out; the launch's are not. */
  const char *params = strstr(text, "\"params\"");
  CU_ASSERT(params && !strstr(params + 1, "\"params\""));
  /* The top object keeps its outline. */
  CU_ASSERT_PTR_NOT_NULL(strstr(text, "\"devices\": []"));
  CU_ASSERT_PTR_NOT_NULL(strstr(text, "\"inputs\": []"));
  rig_desc *back = read_text(text);
  CU_ASSERT(same_bytes(full, back));
  char *again = to_json(back);
  CU_ASSERT_STRING_EQUAL(again, text);
  free(again);
  rig_desc_free(back);
  free(text);
  rig_desc_free(full);
}

/* A loop inside 64 others is refused even when its body is left out, as the
 * bytes refuse it. */
static void test_a_loop_65_deep_is_refused_without_its_body(void) {
  char *s = nested_loops(RIG_DESC_MAX_DEPTH);
  /* The innermost loop's "'body': []" becomes a loop without a body. */
  char *inner = strstr(s, "'body': []");
  CU_ASSERT_PTR_NOT_NULL_FATAL(inner);
  size_t room = strlen(s) + 64;
  char *t = malloc(room);
  snprintf(t, room, "%.*s'body': [{'Loop': {'trips': {'Fixed': 1}}}]%s", (int)(inner - s), s,
           inner + strlen("'body': []"));
  char want[512] = "steps[0]";
  for (int i = 0; i < 6; i++) strcat(want, ".Loop.body[0]");
  strcat(want, "...Loop.body[0]");
  for (int i = 0; i < 14; i++) strcat(want, ".Loop.body[0]");
  strcat(want, ".Loop: steps nested deeper than 64");
  EXPECT_ERROR(t, want);
  free(t);
  free(s);
}

/* ---- what cannot be written ----------------------------------------------- */

static void expect_unwritable(rig_desc *d, const char *message) {
  char *text = NULL;
  rig_error err;
  rig_status st = rig_desc_to_json(d, &text, &err);
  RIG_ASSERT_ERROR(st, err, RIG_EINVAL, message);
  CU_ASSERT_PTR_NULL(text);
  rig_desc_free(d);
}

static void test_writing_refuses_what_the_bytes_refuse(void) {
  rig_desc *d = rig_desc_create();
  rig_desc_step *l = NULL;
  for (int i = 0; i < RIG_DESC_MAX_DEPTH + 1; i++) l = rig_desc_add_loop(d, l, rig_desc_fixed(1));
  expect_unwritable(d, "steps nested deeper than 64");

  d = rig_desc_create();
  d->ints = INT64_MAX;
  expect_unwritable(d, "an integer of more than 63 bits");

  d = rig_desc_create();
  int64_t m = rig_desc_add_alloc(d, 0, RIG_KIND_DEVICE, 8, RIG_COPIES_ONE);
  rig_desc_hole *h = rig_desc_data_add_hole(d, &d->memory[m].u.alloc.init, 0, RIG_W32, 0, 0);
  rig_desc_terms_add(d, &h->terms, rig_desc_fixed(3), 1);
  expect_unwritable(d, "a leaf data's hole has a term that is not a leaf");

  d = rig_desc_create();
  rig_desc_add_alloc(d, 0, (rig_buffer_kind)3, 8, RIG_COPIES_ONE);
  expect_unwritable(d, "a constructor outside its type");
}

/* ---- damage --------------------------------------------------------------- */

/* The text without the whitespace outside strings, so that every cut and
 * change below hits the structure. */
static char *compact(const char *text) {
  char *s = malloc(strlen(text) + 1);
  size_t o = 0;
  bool in_string = false;
  for (const char *p = text; *p; p++) {
    if (in_string) {
      if (*p == '\\')
        s[o++] = *p++;
      else if (*p == '"')
        in_string = false;
    } else if (*p == '"') {
      in_string = true;
    } else if (*p == ' ' || *p == '\n') {
      continue;
    }
    s[o++] = *p;
  }
  s[o] = '\0';
  return s;
}

static int clean(const char *text, size_t len) {
  /* A fresh allocation of exactly len bytes, so ASan sees any read past it. */
  char *copy = malloc(len ? len : 1);
  memcpy(copy, text, len);
  rig_desc *d = NULL;
  rig_error err = {0};
  rig_status st = rig_desc_of_json(copy, len, NULL, &d, &err);
  free(copy);
  CU_ASSERT(st == RIG_OK || st == RIG_EMALFORMED);
  if (st != RIG_OK) {
    CU_ASSERT(err.message[0] != '\0');
    CU_ASSERT_PTR_NULL(d);
    return 0;
  }
  /* What reads can be written, as JSON and as bytes. */
  char *again = NULL;
  CU_ASSERT_EQUAL(rig_desc_to_json(d, &again, NULL), RIG_OK);
  free(again);
  rig_desc_free(d);
  return 1;
}

static void test_every_deletion_and_some_changes_of_a_text_are_clean(void) {
  rig_desc *d = sample();
  char *pretty = to_json(d);
  char *text = compact(pretty);
  size_t n = strlen(text);
  /* Undamaged, the compact text is the same description. */
  rig_desc *back = read_text(text);
  CU_ASSERT(same_bytes(d, back));
  rig_desc_free(back);
  char *buf = malloc(n + 1);
  int read = 0, refused = 0;
  for (size_t i = 0; i < n; i++) {
    memcpy(buf, text, i);
    memcpy(buf + i, text + i + 1, n - i - 1);
    if (clean(buf, n - 1))
      read++;
    else
      refused++;
  }
  static const char changes[] = "\"{}[],:0-9.ezA=\\";
  for (size_t i = 0; i < n; i++) {
    for (const char *c = changes; *c; c++) {
      if (text[i] == *c) continue;
      memcpy(buf, text, n);
      buf[i] = *c;
      if (clean(buf, n))
        read++;
      else
        refused++;
    }
  }
  CU_ASSERT(read > 0);
  CU_ASSERT(refused > 0);
  free(buf);
  free(text);
  free(pretty);
  rig_desc_free(d);
}

void rig_test_register(void) {
  static CU_TestInfo round_trip[] = {
      {"random descriptions round trip through JSON to the same bytes",
       test_random_descriptions_round_trip_through_json_to_the_same_bytes},
      {"JSON through bytes and back is the same text",
       test_json_through_bytes_and_back_is_the_same_text},
      {"empty description is this text", test_empty_description_is_this_text},
      {"docs complete example is the writer's text but for its file",
       test_docs_complete_example_is_the_writers_text_but_for_its_file},
      {"writing refuses what the bytes refuse", test_writing_refuses_what_the_bytes_refuse},
      CU_TEST_INFO_NULL};
  static CU_TestInfo reading[] = {
      {"hand-written example reads to its fields", test_hand_written_example_reads_to_its_fields},
      {"format is optional and fields are in any order",
       test_format_is_optional_and_fields_are_in_any_order},
      {"bytes read from hex of either case, hex objects and base64",
       test_bytes_read_from_hex_either_case_hex_objects_and_base64},
      {"bytes up to 64 are hex and longer are base64",
       test_bytes_up_to_64_are_hex_and_longer_are_base64},
      {"names with NUL or invalid UTF-8 round trip as hex",
       test_names_with_nul_or_invalid_utf8_round_trip_as_hex},
      {"file bytes are read relative to base_dir", test_file_bytes_are_read_relative_to_base_dir},
      {"files are refused without a base_dir", test_files_are_refused_without_a_base_dir},
      {"a missing file is named with its path", test_a_missing_file_is_named_with_its_path},
      CU_TEST_INFO_NULL};
  static CU_TestInfo messages[] = {
      {"parse errors give line and column", test_parse_errors_give_line_and_column},
      {"root must be an object", test_root_must_be_an_object},
      {"missing fields are named with their path", test_missing_fields_are_named_with_their_path},
      {"unknown fields are refused", test_unknown_fields_are_refused},
      {"wrong types are refused", test_wrong_types_are_refused},
      {"bad constructors are named with the choices",
       test_bad_constructors_are_named_with_the_choices},
      {"integers must fit 63 bits", test_integers_must_fit_63_bits},
      {"real numbers are not integers", test_real_numbers_are_not_integers},
      {"bad hex is refused", test_bad_hex_is_refused},
      {"bad base64 is refused", test_bad_base64_is_refused},
      {"format other than 4 is refused", test_format_other_than_4_is_refused},
      {"loops 64 deep read and 65 are refused", test_loops_64_deep_read_and_65_are_refused},
      CU_TEST_INFO_NULL};
  static CU_TestInfo typed[] = {{"typed values pack little-endian in order without padding",
                                 test_typed_values_pack_little_endian_in_order_without_padding},
                                {"typed values reach each end of their range",
                                 test_typed_values_reach_each_end_of_their_range},
                                {"each out-of-range typed value is refused with its path",
                                 test_each_out_of_range_typed_value_is_refused_with_its_path},
                                {"typed values of the wrong shape are refused with their path",
                                 test_typed_values_of_the_wrong_shape_are_refused_with_their_path},
                                {"typed and hex forms of the same bytes are one description",
                                 test_typed_and_hex_forms_of_the_same_bytes_are_one_description},
                                CU_TEST_INFO_NULL};
  static CU_TestInfo params[] = {
      {"typed params lay out as a C struct of their types",
       test_typed_params_lay_out_as_a_c_struct_of_their_types},
      {"a ref in typed params is a ref at its place",
       test_a_ref_in_typed_params_is_a_ref_at_its_place},
      {"an int in typed params is a hole of its width at its place",
       test_an_int_in_typed_params_is_a_hole_of_its_width_at_its_place},
      {"a leaf and a hole in typed params are holes at their place",
       test_a_leaf_and_a_hole_in_typed_params_are_holes_at_their_place},
      {"pad adds zero bytes where the element before ends",
       test_pad_adds_zero_bytes_where_the_element_before_ends},
      {"typed params serve a fill as a launch", test_typed_params_serve_a_fill_as_a_launch},
      {"the writer writes typed params in the explicit form",
       test_the_writer_writes_typed_params_in_the_explicit_form},
      {"typed params refuse refs beside them", test_typed_params_refuse_refs_beside_them},
      {"wrong typed params are named by their place",
       test_wrong_typed_params_are_named_by_their_place},
      CU_TEST_INFO_NULL};
  static CU_TestInfo short_form[] = {
      {"omitted fields equal the explicit empty ones",
       test_omitted_fields_equal_the_explicit_empty_ones},
      {"writer leaves out empty fields and its short form round trips",
       test_writer_leaves_out_empty_fields_and_its_short_form_round_trips},
      {"a loop 65 deep is refused without its body",
       test_a_loop_65_deep_is_refused_without_its_body},
      CU_TEST_INFO_NULL};
  static CU_TestInfo damaged[] = {{"every deletion and some changes of a text are clean",
                                   test_every_deletion_and_some_changes_of_a_text_are_clean},
                                  CU_TEST_INFO_NULL};
  rig_test_add_suite("json: round trip", round_trip);
  rig_test_add_suite("json: reading", reading);
  rig_test_add_suite("json: messages", messages);
  rig_test_add_suite("json: typed values", typed);
  rig_test_add_suite("json: typed params", params);
  rig_test_add_suite("json: short form", short_form);
  rig_test_add_suite("json: damage", damaged);
}
