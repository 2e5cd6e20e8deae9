/* JSON text back into a description (docs/format.md "JSON text form",
 * docs/json.md). jansson parses the text; this file walks the tree in the
 * schema's shape, allocating straight into the description's arena, and
 * keeps the JSON path of where it is in a fixed buffer so that every error
 * names its place. A failure unwinds with longjmp, as in the byte decoder
 * (desc_internal.h says why that is safe). */
#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "desc_internal.h"
#include "json_read.h"

/* Longer paths are shown as their start, "...", and their end, so that the
 * reason after them still fits the 512 bytes of a rig_error. */
#define PATH_SHOWN_HEAD 80
#define PATH_SHOWN_TAIL 200

/* ---- failing ------------------------------------------------------------ */

/* Appends n bytes of s to out (of size bytes, o used), cutting what does
 * not fit; returns the new length. */
static size_t put(char *out, size_t size, size_t o, const char *s, size_t n) {
  if (n > size - 1 - o) n = size - 1 - o;
  memcpy(out + o, s, n);
  out[o + n] = '\0';
  return o + n;
}

/* The path for a message into out; returns its length. */
static size_t show_path(const reader *r, char *out, size_t size) {
  if (r->plen == 0) return put(out, size, 0, "description", 11);
  if (r->plen <= PATH_SHOWN_HEAD + PATH_SHOWN_TAIL) return put(out, size, 0, r->path, r->plen);
  /* Cut at segment boundaries ('.') so no name is split. */
  const char *head_end = strchr(r->path + PATH_SHOWN_HEAD, '.');
  const char *tail = strchr(r->path + r->plen - PATH_SHOWN_TAIL, '.');
  if (!head_end || !tail || tail <= head_end) return put(out, size, 0, r->path, r->plen);
  size_t o = put(out, size, 0, r->path, (size_t)(head_end - r->path));
  o = put(out, size, o, "...", 3);
  return put(out, size, o, tail + 1, strlen(tail + 1));
}

/* "<path>: <reason>" into r->why, then unwinds to walk(). */
void jr_fail(reader *r, const char *fmt, ...) {
  size_t o = show_path(r, r->why, sizeof r->why);
  o = put(r->why, sizeof r->why, o, ": ", 2);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(r->why + o, sizeof r->why - o, fmt, ap);
  va_end(ap);
  longjmp(r->fail, 1);
}

void jr_fail_nomem(reader *r) {
  r->nomem = true;
  longjmp(r->fail, 1);
}

/* A string of the input for a message: quoted, control characters and
 * quotes escaped, cut at a character boundary when long. */
const char *jr_quote(const char *s, char *out, size_t size) {
  size_t o = 0, max = size - 8;
  out[o++] = '"';
  for (; *s && o < max; s++) {
    unsigned char ch = (unsigned char)*s;
    if (ch == '"' || ch == '\\') {
      out[o++] = '\\';
      out[o++] = (char)ch;
    } else if (ch < 0x20 || ch == 0x7f) {
      o += (size_t)snprintf(out + o, size - o, "\\x%02x", ch);
    } else {
      out[o++] = (char)ch;
    }
  }
  if (*s) {
    while (o > 1 && ((unsigned char)out[o - 1] & 0xC0) == 0x80) o--; /* continuation bytes */
    if (o > 1 && (unsigned char)out[o - 1] >= 0xC0) o--;             /* their lead byte */
    out[o++] = '.';
    out[o++] = '.';
    out[o++] = '.';
  }
  out[o++] = '"';
  out[o] = '\0';
  return out;
}

/* ---- the path ----------------------------------------------------------- */

__attribute__((format(printf, 2, 3))) static void path_add(reader *r, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(r->path + r->plen, PATH_ROOM - r->plen, fmt, ap);
  va_end(ap);
  /* A path too long for the buffer (it cannot be, with depth bounded)
   * keeps what fits. */
  if (n > 0) r->plen += (size_t)n < PATH_ROOM - r->plen ? (size_t)n : PATH_ROOM - 1 - r->plen;
}

size_t jr_path_key(reader *r, const char *key) {
  size_t mark = r->plen;
  path_add(r, r->plen ? ".%s" : "%s", key);
  return mark;
}

size_t jr_path_index(reader *r, size_t i) {
  size_t mark = r->plen;
  path_add(r, "[%zu]", i);
  return mark;
}

void jr_path_back(reader *r, size_t mark) {
  r->plen = mark;
  r->path[mark] = '\0';
}

/* ---- shapes ------------------------------------------------------------- */

/* An object with only the given fields (NULL-terminated). */
void jr_record(reader *r, json_t *j, const char *const *fields) {
  if (!json_is_object(j)) jr_fail(r, "not an object");
  const char *key;
  json_t *v;
  json_object_foreach(j, key, v) {
    const char *const *f = fields;
    while (*f && strcmp(*f, key) != 0) f++;
    char q[QUOTE_ROOM];
    if (!*f) jr_fail(r, "unknown field %s", jr_quote(key, q, sizeof q));
  }
}

json_t *jr_need(reader *r, json_t *obj, const char *key) {
  json_t *v = json_object_get(obj, key);
  if (!v) jr_fail(r, "missing field \"%s\"", key);
  return v;
}

/* The field `key` of a record, read by fn with the path ending in it. */
void jr_field(reader *r, json_t *obj, const char *key, read_fn *fn, void *out) {
  json_t *v = jr_need(r, obj, key);
  size_t mark = jr_path_key(r, key);
  fn(r, v, out);
  jr_path_back(r, mark);
}

/* Element i of an array, read by fn with the path ending in [i]. */
void jr_element(reader *r, json_t *arr, size_t i, read_fn *fn, void *out) {
  size_t mark = jr_path_index(r, i);
  fn(r, json_array_get(arr, i), out);
  jr_path_back(r, mark);
}

/* An array of exactly n elements (a tuple). */
static void tuple(reader *r, json_t *j, size_t n) {
  if (!json_is_array(j)) jr_fail(r, "not an array");
  if (json_array_size(j) != n) jr_fail(r, "%zu elements, not %zu", json_array_size(j), n);
}

/* The elements of an array, each read by fn into zeroed room in the arena;
 * NULL for none, as the byte decoder leaves empty arrays. */
static void *array(reader *r, json_t *j, size_t *n, size_t elem, read_fn *fn) {
  if (!json_is_array(j)) jr_fail(r, "not an array");
  *n = json_array_size(j);
  if (*n == 0) return NULL;
  unsigned char *items = rig_arena_array(r->arena, *n, elem);
  if (!items) jr_fail_nomem(r);
  memset(items, 0, *n * elem);
  for (size_t i = 0; i < *n; i++) jr_element(r, j, i, fn, items + i * elem);
  return items;
}

static void *array_field(reader *r, json_t *obj, const char *key, size_t *n, size_t elem,
                         read_fn *fn) {
  json_t *v = jr_need(r, obj, key);
  size_t mark = jr_path_key(r, key);
  void *items = array(r, v, n, elem, fn);
  jr_path_back(r, mark);
  return items;
}

/* A field that may be left out (docs/json.md "Fields that may be left
 * out"): read by fn when present; when absent, out keeps the zeroed value
 * it has, which is the field's empty value. */
void jr_opt_field(reader *r, json_t *obj, const char *key, read_fn *fn, void *out) {
  if (json_object_get(obj, key)) jr_field(r, obj, key, fn, out);
}

/* An array field that may be left out, for no elements. */
static void *opt_array_field(reader *r, json_t *obj, const char *key, size_t *n, size_t elem,
                             read_fn *fn) {
  if (json_object_get(obj, key)) return array_field(r, obj, key, n, elem, fn);
  *n = 0;
  return NULL;
}

void jr_read_int(reader *r, json_t *j, void *out) {
  if (json_is_real(j)) jr_fail(r, "a real number, not an integer");
  if (!json_is_integer(j)) jr_fail(r, "not an integer");
  json_int_t v = json_integer_value(j);
  if (!rig_int_fits((int64_t)v)) jr_fail(r, "an integer of more than 63 bits");
  *(int64_t *)out = (int64_t)v;
}

__attribute__((noreturn)) static void fail_variant(reader *r, const variant *v, const char *name,
                                                   size_t keys) {
  char list[160] = "";
  size_t o = 0;
  for (unsigned i = 0; i < v->count; i++)
    o += (size_t)snprintf(list + o, sizeof list - o, "%s%s", i ? ", " : "", v->names[i]);
  char q[QUOTE_ROOM];
  if (name) jr_fail(r, "%s is not %s (%s)", jr_quote(name, q, sizeof q), v->what, list);
  if (keys != 1) jr_fail(r, "an object of %zu keys, not %s (%s)", keys, v->what, list);
  jr_fail(r, "not %s (%s)", v->what, list);
}

/* The constructor's index. A constructor with arguments is {"Name": ARG}:
 * *arg is ARG and the path ends in ".Name" until jr_path_back(*mark). One
 * without is the string "Name": *arg is NULL. */
static unsigned get_variant(reader *r, json_t *j, const variant *v, json_t **arg, size_t *mark) {
  const char *name;
  *arg = NULL;
  *mark = r->plen;
  if (json_is_string(j)) {
    name = json_string_value(j);
  } else if (json_is_object(j) && json_object_size(j) == 1) {
    void *it = json_object_iter(j);
    name = json_object_iter_key(it);
    *arg = json_object_iter_value(it);
  } else {
    fail_variant(r, v, NULL, json_is_object(j) ? json_object_size(j) : 1);
  }
  for (unsigned i = 0; i < v->count; i++) {
    if (strcmp(v->names[i], name) != 0) continue;
    bool nullary = (v->nullary >> i) & 1;
    if (nullary && *arg) jr_fail(r, "\"%s\" takes no arguments", name);
    if (!nullary && !*arg) jr_fail(r, "\"%s\" without its arguments", name);
    if (*arg) *mark = jr_path_key(r, name);
    return i;
  }
  fail_variant(r, v, name, 1);
}

/* An enumeration: constructors without arguments only. */
static unsigned get_enum(reader *r, json_t *j, const variant *v) {
  json_t *arg;
  size_t mark;
  return get_variant(r, j, v, &arg, &mark);
}

unsigned jr_enum_field(reader *r, json_t *obj, const char *key, const variant *v) {
  json_t *j = jr_need(r, obj, key);
  size_t mark = jr_path_key(r, key);
  unsigned i = get_enum(r, j, v);
  jr_path_back(r, mark);
  return i;
}

/* ---- bytes and names ---------------------------------------------------- */

static int hex_digit(unsigned char ch) {
  if (ch >= '0' && ch <= '9') return ch - '0';
  if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
  if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
  return -1;
}

/* The bytes of a hex string into out, or only checked when out is NULL;
 * their count. */
static size_t hex_into(reader *r, json_t *j, uint8_t *out) {
  if (!json_is_string(j)) jr_fail(r, "not a string");
  const unsigned char *s = (const unsigned char *)json_string_value(j);
  size_t n = json_string_length(j);
  if (n % 2) jr_fail(r, "an odd number of hex digits");
  for (size_t i = 0; i < n / 2; i++) {
    int hi = hex_digit(s[2 * i]), lo = hex_digit(s[2 * i + 1]);
    if (hi < 0 || lo < 0) jr_fail(r, "not hex");
    if (out) out[i] = (uint8_t)(hi << 4 | lo);
  }
  return n / 2;
}

static rig_desc_string get_hex(reader *r, json_t *j) {
  size_t n = hex_into(r, j, NULL);
  uint8_t *b = rig_arena_alloc(r->arena, n ? n : 1, false);
  if (!b) jr_fail_nomem(r);
  hex_into(r, j, b);
  return (rig_desc_string){b, n};
}

static int base64_digit(unsigned char ch) {
  if (ch >= 'A' && ch <= 'Z') return ch - 'A';
  if (ch >= 'a' && ch <= 'z') return ch - 'a' + 26;
  if (ch >= '0' && ch <= '9') return ch - '0' + 52;
  if (ch == '+') return 62;
  if (ch == '/') return 63;
  return -1;
}

/* Strict: groups of four, '=' only to pad the last, and the padded group's
 * unused bits zero, so that each byte string has exactly one text. */
static rig_desc_string get_base64(reader *r, json_t *j) {
  if (!json_is_string(j)) jr_fail(r, "not a string");
  const unsigned char *s = (const unsigned char *)json_string_value(j);
  size_t n = json_string_length(j);
  if (n % 4) jr_fail(r, "not base64");
  size_t pad = 0;
  if (n && s[n - 1] == '=') pad = s[n - 2] == '=' ? 2 : 1;
  size_t len = n / 4 * 3 - pad;
  uint8_t *b = rig_arena_alloc(r->arena, len ? len : 1, false);
  if (!b) jr_fail_nomem(r);
  size_t o = 0;
  for (size_t i = 0; i < n; i += 4) {
    bool last = i + 4 == n;
    uint32_t v = 0;
    for (size_t k = 0; k < 4; k++) {
      int d = last && k >= 4 - pad ? 0 : base64_digit(s[i + k]);
      if (d < 0) jr_fail(r, "not base64");
      v = v << 6 | (uint32_t)d;
    }
    if (last && ((pad == 1 && (v & 0xFF)) || (pad == 2 && (v & 0xFFFF)))) jr_fail(r, "not base64");
    b[o++] = (uint8_t)(v >> 16);
    if (!last || pad < 2) b[o++] = (uint8_t)(v >> 8);
    if (!last || pad < 1) b[o++] = (uint8_t)v;
  }
  return (rig_desc_string){b, len};
}

/* The most a description's files hold, each and all together: as much as
 * progrun reads of a description's bytes (docs/json.md, "Bytes"), so that
 * a description never takes more to hold than its bytes form may. */
#define FILE_MOST      ((uint64_t)1 << 30)
#define FILE_MOST_TEXT "1 GiB"

/* Opens a regular file for reading without waiting: a FIFO no process
 * writes would block open() for ever, and its bytes are no file's. An
 * errno, or 0 with *fd and *st set; a file not regular is EINVAL. */
static int open_regular(const char *full, int *fd, struct stat *st) {
  *fd = open(full, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (*fd < 0) return errno;
  int e = fstat(*fd, st) != 0 ? errno : !S_ISREG(st->st_mode) ? EINVAL : 0;
  if (e) {
    close(*fd);
    *fd = -1;
  }
  return e;
}

/* Reads exactly len bytes of fd into b, and finds nothing after them. */
static const char *read_exactly(int fd, uint8_t *b, size_t len) {
  size_t n = 0;
  for (;;) {
    uint8_t more;
    ssize_t got = n < len ? read(fd, b + n, len - n) : read(fd, &more, 1);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return "a read failed";
    if (got == 0) return n == len ? NULL : "it changed while read";
    if (n == len) return "it changed while read";
    n += (size_t)got;
  }
}

/* {"file": PATH}: the whole file, PATH relative to base_dir, within
 * FILE_MOST (with the files read before it); it holds nothing when it
 * fails (desc_internal.h). */
static rig_desc_string get_file(reader *r, json_t *j) {
  if (!json_is_string(j)) jr_fail(r, "not a string");
  const char *name = json_string_value(j);
  char q[QUOTE_ROOM];
  if (!r->base_dir)
    jr_fail(r, "%s: files are not read here (no base directory)", jr_quote(name, q, sizeof q));
  char *full = NULL;
  if (name[0] == '/') {
    full = strdup(name);
  } else if (asprintf(&full, "%s/%s", r->base_dir, name) < 0) {
    full = NULL;
  }
  if (!full) jr_fail_nomem(r);
  char shown[PATH_SHOWN_TAIL];
  jr_quote(full, shown, sizeof shown);
  int fd = -1;
  struct stat st;
  int error = open_regular(full, &fd, &st);
  free(full);
  char ebuf[128];
  if (error == EINVAL) jr_fail(r, "cannot read %s: not a regular file", shown);
  if (error) jr_fail(r, "cannot read %s: %s", shown, strerror_r(error, ebuf, sizeof ebuf));
  uint64_t size = (uint64_t)st.st_size;
  if (size > FILE_MOST - r->file_bytes) {
    close(fd);
    if (size > FILE_MOST)
      jr_fail(r,
              "cannot read %s: %" PRIu64 " bytes, more than the %s a description's file may hold",
              shown, size, FILE_MOST_TEXT);
    jr_fail(r, "cannot read %s: its %" PRIu64 " bytes take the description's files past %s", shown,
            size, FILE_MOST_TEXT);
  }
  size_t len = (size_t)size;
  uint8_t *b = rig_arena_alloc(r->arena, len ? len : 1, false);
  const char *problem = b ? read_exactly(fd, b, len) : "too large to hold in memory";
  close(fd);
  if (problem) jr_fail(r, "cannot read %s: %s", shown, problem);
  r->file_bytes += size;
  return (rig_desc_string){b, len};
}

/* ---- typed values ------------------------------------------------------- */

/* The types of a typed value, {"u32": 7}: unsigned, signed and floating
 * kinds, written little-endian in `size` bytes. */
typedef struct typed {
  const char *name;
  const char *a; /* its article: "a u8", "an i8" */
  char kind;     /* 'u', 'i' or 'f' */
  unsigned size;
} typed;

static const typed typeds[] = {
    {"u8", "a", 'u', 1},   {"u16", "a", 'u', 2},  {"u32", "a", 'u', 4},  {"u64", "a", 'u', 8},
    {"i8", "an", 'i', 1},  {"i16", "an", 'i', 2}, {"i32", "an", 'i', 4}, {"i64", "an", 'i', 8},
    {"f32", "an", 'f', 4}, {"f64", "an", 'f', 8},
};
#define NTYPEDS       (sizeof typeds / sizeof *typeds)
#define TYPED_CHOICES "u8, u16, u32, u64, i8, i16, i32, i64, f32, f64, hex"

static void put_le(uint8_t *out, uint64_t v, unsigned size) {
  for (unsigned k = 0; k < size; k++) out[k] = (uint8_t)(v >> (8 * k));
}

/* An integer of type t (v the JSON value) as its bits. jansson holds
 * integers of 64 bits signed, so a u64 reaches 2^63 - 1 here. */
static uint64_t typed_int(reader *r, json_t *v, const typed *t) {
  if (json_is_real(v)) jr_fail(r, "a real number, not %s %s", t->a, t->name);
  if (!json_is_integer(v)) jr_fail(r, "not %s %s (an integer)", t->a, t->name);
  json_int_t x = json_integer_value(v);
  unsigned bits = 8 * t->size;
  bool fits = t->kind == 'u' ? x >= 0 && (bits == 64 || (uint64_t)x >> bits == 0)
                             : bits == 64 || (x >= -((json_int_t)1 << (bits - 1)) &&
                                              x < ((json_int_t)1 << (bits - 1)));
  if (!fits) jr_fail(r, "%lld does not fit %s %s", (long long)x, t->a, t->name);
  return (uint64_t)x;
}

/* A float of type t (a JSON real or integer) as its IEEE 754 bits. */
static uint64_t typed_float(reader *r, json_t *v, const typed *t) {
  if (!json_is_number(v)) jr_fail(r, "not %s %s (a number)", t->a, t->name);
  double x = json_number_value(v);
  if (t->size == 8) {
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    return bits;
  }
  if (fabs(x) > FLT_MAX) {
    if (json_is_integer(v))
      jr_fail(r, "%lld does not fit %s %s", (long long)json_integer_value(v), t->a, t->name);
    jr_fail(r, "%g does not fit %s %s", x, t->a, t->name);
  }
  float f = (float)x;
  uint32_t bits;
  memcpy(&bits, &f, sizeof bits);
  return bits;
}

/* One typed value, {"u32": 7} or {"hex": "00ff"}, into out (or only
 * checked when out is NULL); its count of bytes. */
size_t jr_typed_value(reader *r, json_t *j, uint8_t *out) {
  if (!json_is_object(j) || json_object_size(j) != 1)
    jr_fail(r, "not a typed value (an object of one key: " TYPED_CHOICES ")");
  void *it = json_object_iter(j);
  const char *key = json_object_iter_key(it);
  json_t *v = json_object_iter_value(it);
  if (strcmp(key, "hex") == 0) {
    size_t mark = jr_path_key(r, key);
    size_t n = hex_into(r, v, out);
    jr_path_back(r, mark);
    return n;
  }
  for (size_t i = 0; i < NTYPEDS; i++) {
    const typed *t = &typeds[i];
    if (strcmp(key, t->name) != 0) continue;
    uint64_t bits = t->kind == 'f' ? typed_float(r, v, t) : typed_int(r, v, t);
    if (out) put_le(out, bits, t->size);
    return t->size;
  }
  char q[QUOTE_ROOM];
  jr_fail(r, "%s is not a type (" TYPED_CHOICES ")", jr_quote(key, q, sizeof q));
}

/* An array of typed values: each checked and counted, then packed in
 * order, so the bytes are allocated once and no larger than the text. */
static rig_desc_string get_typed(reader *r, json_t *j) {
  size_t n = json_array_size(j), len = 0;
  for (size_t i = 0; i < n; i++) {
    size_t mark = jr_path_index(r, i);
    len += jr_typed_value(r, json_array_get(j, i), NULL);
    jr_path_back(r, mark);
  }
  uint8_t *b = rig_arena_alloc(r->arena, len ? len : 1, false);
  if (!b) jr_fail_nomem(r);
  size_t o = 0;
  for (size_t i = 0; i < n; i++) o += jr_typed_value(r, json_array_get(j, i), b + o);
  return (rig_desc_string){b, len};
}

/* BYTES: a hex string, an array of typed values, or an object of exactly
 * one of hex, base64, file. */
static void read_bytes(reader *r, json_t *j, void *out) {
  rig_desc_string *s = out;
  if (json_is_string(j)) {
    *s = get_hex(r, j);
    return;
  }
  if (json_is_array(j)) {
    *s = get_typed(r, j);
    return;
  }
  if (!json_is_object(j) || json_object_size(j) != 1)
    jr_fail(r, "not bytes (a hex string, an array of typed values, or {\"hex\": ...}, "
               "{\"base64\": ...} or {\"file\": ...})");
  jr_record(r, j, FIELDS("hex", "base64", "file"));
  void *it = json_object_iter(j);
  const char *key = json_object_iter_key(it);
  size_t mark = jr_path_key(r, key);
  json_t *v = json_object_iter_value(it);
  *s = key[0] == 'h' ? get_hex(r, v) : key[0] == 'b' ? get_base64(r, v) : get_file(r, v);
  jr_path_back(r, mark);
}

static void read_hex(reader *r, json_t *j, void *out) {
  *(rig_desc_string *)out = get_hex(r, j);
}

/* A name: a JSON string, or {"hex": ...} for bytes a JSON string cannot
 * hold (NUL, invalid UTF-8). */
static void read_name(reader *r, json_t *j, void *out) {
  rig_desc_string *s = out;
  if (json_is_string(j)) {
    bool ok = true;
    *s = rig_arena_string(r->arena, json_string_value(j), json_string_length(j), &ok);
    if (!ok) jr_fail_nomem(r);
    return;
  }
  if (!json_is_object(j)) jr_fail(r, "not a name (a string or {\"hex\": ...})");
  jr_record(r, j, FIELDS("hex"));
  jr_field(r, j, "hex", read_hex, s);
}

/* ---- the description's types -------------------------------------------- */

static const variant leaf_v = {"a leaf", NAMES("Address", "Handle", "Entry", "Ready"), 4, 0};

void jr_read_leaf(reader *r, json_t *j, void *out) {
  rig_desc_leaf *l = out;
  json_t *a;
  size_t mark;
  l->tag = get_variant(r, j, &leaf_v, &a, &mark);
  switch (l->tag) {
    case RIG_LEAF_ADDRESS:
      jr_record(r, a, FIELDS("memory", "on"));
      jr_field(r, a, "memory", jr_read_int, &l->u.address.memory);
      jr_field(r, a, "on", jr_read_int, &l->u.address.on);
      break;
    case RIG_LEAF_HANDLE:
      jr_read_int(r, a, &l->u.handle);
      break;
    case RIG_LEAF_ENTRY:
      jr_record(r, a, FIELDS("image", "name"));
      jr_field(r, a, "image", jr_read_int, &l->u.entry.image);
      jr_field(r, a, "name", read_name, &l->u.entry.name);
      break;
    case RIG_LEAF_READY:
      jr_read_int(r, a, &l->u.ready);
      break;
  }
  jr_path_back(r, mark);
}

static const variant value_v = {"a value", NAMES("Fixed", "Int", "Leaf"), 3, 0};

static void read_value(reader *r, json_t *j, void *out) {
  rig_desc_value *v = out;
  json_t *a;
  size_t mark;
  v->tag = get_variant(r, j, &value_v, &a, &mark);
  if (v->tag == RIG_VALUE_FIXED) jr_read_int(r, a, &v->u.fixed);
  if (v->tag == RIG_VALUE_INT) jr_read_int(r, a, &v->u.int_index);
  if (v->tag == RIG_VALUE_LEAF) jr_read_leaf(r, a, &v->u.leaf);
  jr_path_back(r, mark);
}

/* In a leaf data a term's value is the bare leaf. */
static void read_leaf_value(reader *r, json_t *j, void *out) {
  rig_desc_value *v = out;
  v->tag = RIG_VALUE_LEAF;
  jr_read_leaf(r, j, &v->u.leaf);
}

/* [VALUE, factor], or [LEAF, factor] while r->leaves. */
static void read_term(reader *r, json_t *j, void *out) {
  rig_desc_term *t = out;
  tuple(r, j, 2);
  jr_element(r, j, 0, r->leaves ? read_leaf_value : read_value, &t->value);
  jr_element(r, j, 1, jr_read_int, &t->factor);
}

void jr_read_terms(reader *r, json_t *j, void *out) {
  rig_desc_terms *t = out;
  t->items = array(r, j, &t->n, sizeof *t->items, read_term);
}

const variant jr_width_v = {"a width", NAMES("W32", "W64"), 2, 3};

static void read_hole(reader *r, json_t *j, void *out) {
  rig_desc_hole *h = out;
  jr_record(r, j, FIELDS("at", "width", "terms", "add", "shift"));
  jr_field(r, j, "at", jr_read_int, &h->at);
  h->width = jr_enum_field(r, j, "width", &jr_width_v);
  jr_opt_field(r, j, "terms", jr_read_terms, &h->terms);
  jr_opt_field(r, j, "add", jr_read_int, &h->add);
  jr_opt_field(r, j, "shift", jr_read_int, &h->shift);
}

static void read_data(reader *r, json_t *j, rig_desc_data *d, bool leaves) {
  jr_record(r, j, FIELDS("bytes", "holes"));
  jr_field(r, j, "bytes", read_bytes, &d->bytes);
  r->leaves = leaves;
  d->holes = opt_array_field(r, j, "holes", &d->nholes, sizeof *d->holes, read_hole);
  r->leaves = false; /* the offsets of copies and moves are of values */
}

static void read_leaf_data(reader *r, json_t *j, void *out) {
  read_data(r, j, out, true);
}

static void read_value_data(reader *r, json_t *j, void *out) {
  read_data(r, j, out, false);
}

static void read_view(reader *r, json_t *j, void *out) {
  rig_desc_view *v = out;
  jr_record(r, j, FIELDS("memory", "offset", "length"));
  jr_field(r, j, "memory", jr_read_int, &v->memory);
  jr_field(r, j, "offset", jr_read_int, &v->offset);
  jr_field(r, j, "length", jr_read_int, &v->length);
}

static const variant slot_v = {"a slot", NAMES("Memory", "Input", "Ints"), 3, 1u << RIG_SLOT_INTS};

static void read_slot(reader *r, json_t *j, void *out) {
  rig_desc_slot *s = out;
  json_t *a;
  size_t mark;
  s->tag = get_variant(r, j, &slot_v, &a, &mark);
  if (s->tag == RIG_SLOT_MEMORY) read_view(r, a, &s->u.memory);
  if (s->tag == RIG_SLOT_INPUT) jr_read_int(r, a, &s->u.input);
  jr_path_back(r, mark);
}

const variant jr_use_v = {"a use", NAMES("Read", "Write", "Unordered"), 3, 7};

static void read_ref(reader *r, json_t *j, void *out) {
  rig_desc_ref *ref = out;
  jr_record(r, j, FIELDS("slot", "at", "use"));
  jr_field(r, j, "slot", jr_read_int, &ref->slot);
  jr_field(r, j, "at", jr_read_int, &ref->at);
  ref->use = jr_enum_field(r, j, "use", &jr_use_v);
}

/* A fill's or launch's params and refs: a data and its refs beside it, or
 * a list of typed parameters holding each ref in its place (json_params.c). */
static rig_desc_ref *read_params(reader *r, json_t *part, rig_desc_data *params, size_t *nrefs) {
  json_t *list = json_object_get(part, "params");
  if (!json_is_array(list)) {
    jr_opt_field(r, part, "params", read_value_data, params);
    return opt_array_field(r, part, "refs", nrefs, sizeof(rig_desc_ref), read_ref);
  }
  if (json_object_get(part, "refs"))
    jr_fail(r, "\"refs\" beside params written as a list (write each ref in its place there)");
  rig_desc_ref *refs = NULL;
  size_t mark = jr_path_key(r, "params");
  jr_read_params(r, list, params, &refs, nrefs);
  jr_path_back(r, mark);
  return refs;
}

/* [V, V, V] of a launch's groups or threads. */
static void read_values3(reader *r, json_t *j, void *out) {
  rig_desc_value *v = out;
  tuple(r, j, 3);
  for (size_t i = 0; i < 3; i++) jr_element(r, j, i, read_value, &v[i]);
}

static const variant part_v = {"a part", NAMES("Words", "Fill", "Copy", "Launch"), 4, 0};

static void read_part(reader *r, json_t *j, void *out) {
  rig_desc_part *p = out;
  json_t *a;
  size_t mark;
  p->tag = get_variant(r, j, &part_v, &a, &mark);
  switch (p->tag) {
    case RIG_PART_WORDS:
      read_view(r, a, &p->u.words);
      break;
    case RIG_PART_FILL:
      jr_record(r, a, FIELDS("fill", "params", "refs"));
      jr_field(r, a, "fill", jr_read_leaf, &p->u.fill.fill);
      p->u.fill.refs = read_params(r, a, &p->u.fill.params, &p->u.fill.nrefs);
      break;
    case RIG_PART_COPY:
      jr_record(r, a, FIELDS("src", "src_offset", "dst", "dst_offset", "length"));
      jr_field(r, a, "src", jr_read_int, &p->u.copy.src);
      jr_opt_field(r, a, "src_offset", jr_read_terms, &p->u.copy.src_offset);
      jr_field(r, a, "dst", jr_read_int, &p->u.copy.dst);
      jr_opt_field(r, a, "dst_offset", jr_read_terms, &p->u.copy.dst_offset);
      jr_field(r, a, "length", jr_read_int, &p->u.copy.length);
      break;
    case RIG_PART_LAUNCH:
      jr_record(r, a, FIELDS("image", "name", "params", "refs", "groups", "threads", "shared"));
      jr_field(r, a, "image", jr_read_int, &p->u.launch.image);
      jr_field(r, a, "name", read_name, &p->u.launch.name);
      p->u.launch.refs = read_params(r, a, &p->u.launch.params, &p->u.launch.nrefs);
      jr_field(r, a, "groups", read_values3, p->u.launch.groups);
      jr_field(r, a, "threads", read_values3, p->u.launch.threads);
      jr_opt_field(r, a, "shared", read_value, &p->u.launch.shared);
      break;
  }
  jr_path_back(r, mark);
}

static const variant access_v = {"an access", NAMES("Read", "Read_write"), 2, 3};

static void read_access(reader *r, json_t *j, void *out) {
  *(rig_access *)out = get_enum(r, j, &access_v);
}

/* [VIEW, ACCESS] of a submit's fixed memory. */
static void read_fixed(reader *r, json_t *j, void *out) {
  rig_desc_fixed_view *f = out;
  tuple(r, j, 2);
  jr_element(r, j, 0, read_view, &f->view);
  jr_element(r, j, 1, read_access, &f->access);
}

static void read_submit(reader *r, json_t *j, rig_desc_submit *s) {
  jr_record(r, j, FIELDS("device", "parts", "slots", "fixed"));
  jr_field(r, j, "device", jr_read_int, &s->device);
  s->parts = opt_array_field(r, j, "parts", &s->nparts, sizeof *s->parts, read_part);
  s->slots = opt_array_field(r, j, "slots", &s->nslots, sizeof *s->slots, read_slot);
  s->fixed = opt_array_field(r, j, "fixed", &s->nfixed, sizeof *s->fixed, read_fixed);
}

static void read_trip(reader *r, json_t *j, void *out) {
  rig_desc_step *s = out;
  s->u.loop.has_trip = !json_is_null(j);
  if (!s->u.loop.has_trip) return;
  if (!json_is_number(j)) jr_fail(r, "not an integer or null");
  jr_read_int(r, j, &s->u.loop.trip);
}

static void read_flag(reader *r, json_t *j, void *out) {
  rig_desc_step *s = out;
  s->u.loop.has_flag = !json_is_null(j);
  if (!s->u.loop.has_flag) return;
  if (!json_is_array(j)) jr_fail(r, "not [slot, at] or null");
  tuple(r, j, 2);
  jr_element(r, j, 0, read_slot, &s->u.loop.flag_slot);
  jr_element(r, j, 1, jr_read_int, &s->u.loop.flag_at);
}

static void read_step(reader *r, json_t *j, void *out);

static void read_body(reader *r, json_t *j, void *out) {
  rig_desc_steps *body = out;
  /* As the byte codec: a loop inside 64 others may not have a body. */
  if (r->depth >= RIG_DESC_MAX_DEPTH) jr_fail(r, "steps nested deeper than %d", RIG_DESC_MAX_DEPTH);
  r->depth++;
  body->items = array(r, j, &body->n, sizeof *body->items, read_step);
  r->depth--;
}

static const variant step_v = {"a step", NAMES("Submit", "Move", "Loop"), 3, 0};

static void read_step(reader *r, json_t *j, void *out) {
  rig_desc_step *s = out;
  json_t *a;
  size_t mark;
  s->tag = get_variant(r, j, &step_v, &a, &mark);
  switch (s->tag) {
    case RIG_STEP_SUBMIT:
      read_submit(r, a, &s->u.submit);
      break;
    case RIG_STEP_MOVE:
      jr_record(r, a, FIELDS("src", "src_offset", "dst", "dst_offset", "length"));
      jr_field(r, a, "src", read_slot, &s->u.move.src);
      jr_opt_field(r, a, "src_offset", jr_read_terms, &s->u.move.src_offset);
      jr_field(r, a, "dst", read_slot, &s->u.move.dst);
      jr_opt_field(r, a, "dst_offset", jr_read_terms, &s->u.move.dst_offset);
      jr_field(r, a, "length", jr_read_int, &s->u.move.length);
      break;
    case RIG_STEP_LOOP:
      jr_record(r, a, FIELDS("trips", "trip", "flag", "body"));
      jr_field(r, a, "trips", read_value, &s->u.loop.trips);
      jr_opt_field(r, a, "trip", read_trip, s);
      jr_opt_field(r, a, "flag", read_flag, s);
      if (json_object_get(a, "body"))
        jr_field(r, a, "body", read_body, &s->u.loop.body);
      else if (r->depth >= RIG_DESC_MAX_DEPTH) /* as read_body: even an empty body */
        jr_fail(r, "steps nested deeper than %d", RIG_DESC_MAX_DEPTH);
      break;
  }
  jr_path_back(r, mark);
}

static const variant kind_v = {"a memory kind", NAMES("Device", "Pinned", "Mapped"), 3, 7};
static const variant copies_v = {"copies", NAMES("One", "Two"), 2, 3};
static const variant area_v = {"an area", NAMES("Outbound", "Inbound", "Counts"), 3, 7};
static const variant memory_v = {"a memory", NAMES("Alloc", "Rail"), 2, 0};

static void read_memory(reader *r, json_t *j, void *out) {
  rig_desc_memory *m = out;
  json_t *a;
  size_t mark;
  m->tag = get_variant(r, j, &memory_v, &a, &mark);
  if (m->tag == RIG_MEMORY_ALLOC) {
    jr_record(r, a, FIELDS("device", "kind", "bytes", "init", "copies"));
    jr_field(r, a, "device", jr_read_int, &m->u.alloc.device);
    m->u.alloc.kind = jr_enum_field(r, a, "kind", &kind_v);
    jr_field(r, a, "bytes", jr_read_int, &m->u.alloc.bytes);
    jr_opt_field(r, a, "init", read_leaf_data, &m->u.alloc.init);
    m->u.alloc.copies = jr_enum_field(r, a, "copies", &copies_v);
  } else {
    jr_record(r, a, FIELDS("rail", "area"));
    jr_field(r, a, "rail", jr_read_int, &m->u.rail.rail);
    m->u.rail.area = jr_enum_field(r, a, "area", &area_v);
  }
  jr_path_back(r, mark);
}

static void read_image(reader *r, json_t *j, void *out) {
  rig_desc_image *im = out;
  jr_record(r, j, FIELDS("device", "binary"));
  jr_field(r, j, "device", jr_read_int, &im->device);
  jr_field(r, j, "binary", read_leaf_data, &im->binary);
}

static void read_input(reader *r, json_t *j, void *out) {
  rig_desc_input *in = out;
  jr_record(r, j, FIELDS("device", "bytes"));
  jr_field(r, j, "device", jr_read_int, &in->device);
  jr_field(r, j, "bytes", jr_read_int, &in->bytes);
}

static const char *const top_fields[] = {"format", "devices", "memory", "images",
                                         "inputs", "ints",    "steps",  NULL};

static void read_format(reader *r, json_t *j, void *out) {
  (void)out;
  int64_t v;
  jr_read_int(r, j, &v);
  if (v != RIG_DESC_FORMAT_VERSION)
    jr_fail(r, "a program description of format version %" PRId64 ", not %d", v,
            RIG_DESC_FORMAT_VERSION);
}

static void read_desc(reader *r, json_t *j, rig_desc *d) {
  if (!json_is_object(j)) jr_fail(r, "not an object");
  /* The version first: another version's fields would read as unknown. */
  if (json_object_get(j, "format")) jr_field(r, j, "format", read_format, NULL);
  jr_record(r, j, top_fields);
  d->devices = opt_array_field(r, j, "devices", &d->ndevices, sizeof *d->devices, read_name);
  d->memory = opt_array_field(r, j, "memory", &d->nmemory, sizeof *d->memory, read_memory);
  d->images = opt_array_field(r, j, "images", &d->nimages, sizeof *d->images, read_image);
  d->inputs = opt_array_field(r, j, "inputs", &d->ninputs, sizeof *d->inputs, read_input);
  jr_opt_field(r, j, "ints", jr_read_int, &d->ints);
  d->steps.items = opt_array_field(r, j, "steps", &d->steps.n, sizeof *d->steps.items, read_step);
}

/* The reader's one setjmp (desc_internal.h), in a function of its own. */
static rig_status walk(reader *r, json_t *root, rig_desc *d, rig_error *err) {
  if (setjmp(r->fail))
    return r->nomem ? rig_error_set(err, RIG_ENOMEM,
                                    "out of memory reading a program description's JSON")
                    : rig_error_set(err, RIG_EMALFORMED, "%s", r->why);
  read_desc(r, root, d);
  return RIG_OK;
}

rig_status rig_desc_of_json(const char *text, size_t len, const char *base_dir, rig_desc **out,
                            rig_error *err) {
  json_error_t jerr;
  /* Any root parses, so that the walk names what is wrong with it. */
  json_t *root =
      json_loadb(text ? text : "", text ? len : 0, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &jerr);
  if (!root) {
    if (json_error_code(&jerr) == json_error_out_of_memory)
      return rig_error_set(err, RIG_ENOMEM, "out of memory reading a program description's JSON");
    /* jansson's own words for this one name its flag; say what to do. */
    const char *why = json_error_code(&jerr) == json_error_null_character
                          ? "a string holds \\u0000 (write such bytes as {\"hex\": ...})"
                          : jerr.text;
    return rig_error_set(err, RIG_EMALFORMED, "JSON line %d column %d: %s", jerr.line, jerr.column,
                         why);
  }
  rig_desc *d = rig_desc_create();
  rig_status st = RIG_OK;
  if (!d) {
    st = rig_error_set(err, RIG_ENOMEM, "out of memory reading a program description's JSON");
  } else {
    reader r;
    r.arena = d->arena;
    r.base_dir = base_dir;
    r.nomem = false;
    r.leaves = false;
    r.depth = 0;
    r.file_bytes = 0;
    r.plen = 0;
    r.path[0] = '\0';
    st = walk(&r, root, d, err);
  }
  json_decref(root);
  if (st != RIG_OK) {
    rig_desc_free(d);
    return st;
  }
  *out = d;
  return RIG_OK;
}
