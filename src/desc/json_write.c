/* A description as JSON text (docs/format.md "JSON text form", docs/json.md):
 * a jansson tree whose objects hold the seed's fields in declaration order,
 * dumped with a 2-space indent. Fields whose value is empty are left out
 * (the reader gives them that value back), the top object's excepted. The
 * same description always gives the same text, so JSON -> bytes -> JSON is
 * the identity on text. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "base/array.h"
#include "desc_internal.h"

/* Bytes up to this many are written as hex, which people can read and
 * edit; longer ones as base64, a third shorter. */
#define HEX_MAX_BYTES 64

/* Any jansson call may fail for memory; the first failure is remembered
 * and the tree, however partial, is thrown away at the end. */
typedef struct jw {
  bool failed;
} jw;

static void set(jw *w, json_t *obj, const char *key, json_t *v) {
  /* jansson takes v in every case, freeing it on failure. */
  if (json_object_set_new_nocheck(obj, key, v) != 0) w->failed = true;
}

static void append(jw *w, json_t *arr, json_t *v) {
  if (json_array_append_new(arr, v) != 0) w->failed = true;
}

/* Sets key unless its value is empty (docs/json.md "Fields that may be
 * left out"): the reader gives an absent field its empty value. */
static json_t *obj1(jw *w, const char *key, json_t *v) {
  json_t *o = json_object();
  set(w, o, key, v);
  return o;
}

static json_t *jint(int64_t v) {
  return json_integer((json_int_t)v);
}

static json_t *hex_string(const uint8_t *b, size_t n) {
  static const char digits[] = "0123456789abcdef";
  if (n == 0) return json_string("");
  if (n > (SIZE_MAX - 1) / 2) return NULL;
  char *s = malloc(2 * n + 1);
  if (!s) return NULL;
  for (size_t i = 0; i < n; i++) {
    s[2 * i] = digits[b[i] >> 4];
    s[2 * i + 1] = digits[b[i] & 15];
  }
  json_t *j = json_stringn_nocheck(s, 2 * n);
  free(s);
  return j;
}

static json_t *base64_string(const uint8_t *b, size_t n) {
  static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  if (n > SIZE_MAX / 4 * 3 - 3) return NULL;
  size_t len = (n + 2) / 3 * 4;
  char *s = malloc(len + 1);
  if (!s) return NULL;
  size_t o = 0;
  for (size_t i = 0; i < n; i += 3) {
    uint32_t v = (uint32_t)b[i] << 16;
    if (i + 1 < n) v |= (uint32_t)b[i + 1] << 8;
    if (i + 2 < n) v |= b[i + 2];
    s[o++] = alphabet[(v >> 18) & 63];
    s[o++] = alphabet[(v >> 12) & 63];
    s[o++] = i + 1 < n ? alphabet[(v >> 6) & 63] : '=';
    s[o++] = i + 2 < n ? alphabet[v & 63] : '=';
  }
  json_t *j = json_stringn_nocheck(s, len);
  free(s);
  return j;
}

static json_t *bytes_json(jw *w, rig_desc_string s) {
  if (s.len <= HEX_MAX_BYTES) return hex_string(s.bytes, s.len);
  return obj1(w, "base64", base64_string(s.bytes, s.len));
}

/* A name is a JSON string when JSON can hold it as one: valid UTF-8 (which
 * json_stringn checks) without NUL; otherwise {"hex": ...}. */
static json_t *name_json(jw *w, rig_desc_string s) {
  if (s.len == 0) return json_string("");
  if (!memchr(s.bytes, 0, s.len)) {
    json_t *j = json_stringn((const char *)s.bytes, s.len);
    if (j) return j;
  }
  return obj1(w, "hex", hex_string(s.bytes, s.len));
}

static json_t *leaf_json(jw *w, const rig_desc_leaf *l) {
  json_t *o;
  switch (l->tag) {
    case RIG_LEAF_ADDRESS:
      o = json_object();
      set(w, o, "memory", jint(l->u.address.memory));
      set(w, o, "on", jint(l->u.address.on));
      return obj1(w, "Address", o);
    case RIG_LEAF_HANDLE:
      return obj1(w, "Handle", jint(l->u.handle));
    case RIG_LEAF_ENTRY:
      o = json_object();
      set(w, o, "image", jint(l->u.entry.image));
      set(w, o, "name", name_json(w, l->u.entry.name));
      return obj1(w, "Entry", o);
    case RIG_LEAF_READY:
      return obj1(w, "Ready", jint(l->u.ready));
  }
  return NULL; /* rig_desc_to_bytes refused it already */
}

static json_t *value_json(jw *w, const rig_desc_value *v) {
  switch (v->tag) {
    case RIG_VALUE_FIXED:
      return obj1(w, "Fixed", jint(v->u.fixed));
    case RIG_VALUE_INT:
      return obj1(w, "Int", jint(v->u.int_index));
    case RIG_VALUE_LEAF:
      return obj1(w, "Leaf", leaf_json(w, &v->u.leaf));
  }
  return NULL;
}

/* In a leaf data each term's value is the bare leaf, as in the bytes. */
static json_t *terms_json(jw *w, const rig_desc_terms *t, bool leaves) {
  json_t *arr = json_array();
  for (size_t i = 0; i < t->n; i++) {
    const rig_desc_term *term = &t->items[i];
    json_t *pair = json_array();
    append(w, pair, leaves ? leaf_json(w, &term->value.u.leaf) : value_json(w, &term->value));
    append(w, pair, jint(term->factor));
    append(w, arr, pair);
  }
  return arr;
}

static bool data_empty(const rig_desc_data *d) {
  return d->bytes.len == 0 && d->nholes == 0;
}

/* A hole or a data leaves out its empty fields (docs/json.md "Fields that
 * may be left out"); a data's bytes are always written. */
static json_t *data_json(jw *w, const rig_desc_data *d, bool leaves) {
  json_t *o = json_object();
  set(w, o, "bytes", bytes_json(w, d->bytes));
  if (d->nholes == 0) return o;
  json_t *holes = json_array();
  for (size_t i = 0; i < d->nholes; i++) {
    const rig_desc_hole *h = &d->holes[i];
    json_t *hj = json_object();
    set(w, hj, "at", jint(h->at));
    set(w, hj, "width", json_string(rig_desc_width_name(h->width)));
    if (h->terms.n) set(w, hj, "terms", terms_json(w, &h->terms, leaves));
    if (h->add) set(w, hj, "add", jint(h->add));
    if (h->shift) set(w, hj, "shift", jint(h->shift));
    append(w, holes, hj);
  }
  set(w, o, "holes", holes);
  return o;
}

/* A data field, left out when empty (no bytes, no holes). */
static void set_data(jw *w, json_t *o, const char *key, const rig_desc_data *d, bool leaves) {
  if (!data_empty(d)) set(w, o, key, data_json(w, d, leaves));
}

/* An offset's terms, left out when there are none. */
static void set_terms(jw *w, json_t *o, const char *key, const rig_desc_terms *t) {
  if (t->n) set(w, o, key, terms_json(w, t, false));
}

static json_t *view_json(jw *w, const rig_desc_view *v) {
  json_t *o = json_object();
  set(w, o, "memory", jint(v->memory));
  set(w, o, "offset", jint(v->offset));
  set(w, o, "length", jint(v->length));
  return o;
}

static json_t *slot_json(jw *w, const rig_desc_slot *s) {
  switch (s->tag) {
    case RIG_SLOT_MEMORY:
      return obj1(w, "Memory", view_json(w, &s->u.memory));
    case RIG_SLOT_INPUT:
      return obj1(w, "Input", jint(s->u.input));
    case RIG_SLOT_INTS:
      return json_string("Ints");
  }
  return NULL;
}

static json_t *refs_json(jw *w, const rig_desc_ref *refs, size_t n) {
  json_t *arr = json_array();
  for (size_t i = 0; i < n; i++) {
    json_t *o = json_object();
    set(w, o, "slot", jint(refs[i].slot));
    set(w, o, "at", jint(refs[i].at));
    set(w, o, "use", json_string(rig_desc_use_name(refs[i].use)));
    append(w, arr, o);
  }
  return arr;
}

static json_t *values3_json(jw *w, const rig_desc_value v[3]) {
  json_t *arr = json_array();
  for (int i = 0; i < 3; i++) append(w, arr, value_json(w, &v[i]));
  return arr;
}

static json_t *part_json(jw *w, const rig_desc_part *p) {
  json_t *o = json_object();
  switch (p->tag) {
    case RIG_PART_WORDS:
      json_decref(o);
      return obj1(w, "Words", view_json(w, &p->u.words));
    case RIG_PART_FILL:
      set(w, o, "fill", leaf_json(w, &p->u.fill.fill));
      set_data(w, o, "params", &p->u.fill.params, false);
      if (p->u.fill.nrefs) set(w, o, "refs", refs_json(w, p->u.fill.refs, p->u.fill.nrefs));
      return obj1(w, "Fill", o);
    case RIG_PART_COPY:
      set(w, o, "src", jint(p->u.copy.src));
      set_terms(w, o, "src_offset", &p->u.copy.src_offset);
      set(w, o, "dst", jint(p->u.copy.dst));
      set_terms(w, o, "dst_offset", &p->u.copy.dst_offset);
      set(w, o, "length", jint(p->u.copy.length));
      return obj1(w, "Copy", o);
    case RIG_PART_LAUNCH:
      set(w, o, "image", jint(p->u.launch.image));
      set(w, o, "name", name_json(w, p->u.launch.name));
      set_data(w, o, "params", &p->u.launch.params, false);
      if (p->u.launch.nrefs) set(w, o, "refs", refs_json(w, p->u.launch.refs, p->u.launch.nrefs));
      set(w, o, "groups", values3_json(w, p->u.launch.groups));
      set(w, o, "threads", values3_json(w, p->u.launch.threads));
      if (p->u.launch.shared.tag != RIG_VALUE_FIXED || p->u.launch.shared.u.fixed != 0)
        set(w, o, "shared", value_json(w, &p->u.launch.shared));
      return obj1(w, "Launch", o);
  }
  json_decref(o);
  return NULL;
}

static json_t *submit_json(jw *w, const rig_desc_submit *s) {
  json_t *o = json_object();
  set(w, o, "device", jint(s->device));
  if (s->nparts) {
    json_t *parts = json_array();
    for (size_t i = 0; i < s->nparts; i++) append(w, parts, part_json(w, &s->parts[i]));
    set(w, o, "parts", parts);
  }
  if (s->nslots) {
    json_t *slots = json_array();
    for (size_t i = 0; i < s->nslots; i++) append(w, slots, slot_json(w, &s->slots[i]));
    set(w, o, "slots", slots);
  }
  if (s->nfixed) {
    json_t *fixed = json_array();
    for (size_t i = 0; i < s->nfixed; i++) {
      json_t *pair = json_array();
      append(w, pair, view_json(w, &s->fixed[i].view));
      append(w, pair, json_string(rig_desc_access_name(s->fixed[i].access)));
      append(w, fixed, pair);
    }
    set(w, o, "fixed", fixed);
  }
  return obj1(w, "Submit", o);
}

static json_t *steps_json(jw *w, const rig_desc_steps *steps);

static json_t *step_json(jw *w, const rig_desc_step *s) {
  json_t *o;
  switch (s->tag) {
    case RIG_STEP_SUBMIT:
      return submit_json(w, &s->u.submit);
    case RIG_STEP_MOVE:
      o = json_object();
      set(w, o, "src", slot_json(w, &s->u.move.src));
      set_terms(w, o, "src_offset", &s->u.move.src_offset);
      set(w, o, "dst", slot_json(w, &s->u.move.dst));
      set_terms(w, o, "dst_offset", &s->u.move.dst_offset);
      set(w, o, "length", jint(s->u.move.length));
      return obj1(w, "Move", o);
    case RIG_STEP_LOOP: {
      o = json_object();
      set(w, o, "trips", value_json(w, &s->u.loop.trips));
      /* An absent trip or flag reads as null, an absent body as []. */
      if (s->u.loop.has_trip) set(w, o, "trip", jint(s->u.loop.trip));
      if (s->u.loop.has_flag) {
        json_t *flag = json_array();
        append(w, flag, slot_json(w, &s->u.loop.flag_slot));
        append(w, flag, jint(s->u.loop.flag_at));
        set(w, o, "flag", flag);
      }
      /* Depth is bounded: rig_desc_to_bytes refused loops deeper than 64. */
      if (s->u.loop.body.n) set(w, o, "body", steps_json(w, &s->u.loop.body));
      return obj1(w, "Loop", o);
    }
  }
  return NULL;
}

static json_t *steps_json(jw *w, const rig_desc_steps *steps) {
  json_t *arr = json_array();
  for (size_t i = 0; i < steps->n; i++) append(w, arr, step_json(w, &steps->items[i]));
  return arr;
}

static json_t *memory_json(jw *w, const rig_desc_memory *m) {
  json_t *o = json_object();
  if (m->tag == RIG_MEMORY_RAIL) {
    set(w, o, "rail", jint(m->u.rail.rail));
    set(w, o, "area", json_string(rig_desc_area_name(m->u.rail.area)));
    return obj1(w, "Rail", o);
  }
  set(w, o, "device", jint(m->u.alloc.device));
  set(w, o, "kind", json_string(rig_desc_kind_name(m->u.alloc.kind)));
  set(w, o, "bytes", jint(m->u.alloc.bytes));
  set_data(w, o, "init", &m->u.alloc.init, true);
  set(w, o, "copies", json_string(rig_desc_copies_name(m->u.alloc.copies)));
  return obj1(w, "Alloc", o);
}

static json_t *desc_json(jw *w, const rig_desc *d) {
  json_t *root = json_object();
  set(w, root, "format", jint(RIG_DESC_FORMAT_VERSION));
  json_t *arr = json_array();
  for (size_t i = 0; i < d->ndevices; i++) append(w, arr, name_json(w, d->devices[i]));
  set(w, root, "devices", arr);
  arr = json_array();
  for (size_t i = 0; i < d->nmemory; i++) append(w, arr, memory_json(w, &d->memory[i]));
  set(w, root, "memory", arr);
  arr = json_array();
  for (size_t i = 0; i < d->nimages; i++) {
    json_t *o = json_object();
    set(w, o, "device", jint(d->images[i].device));
    set(w, o, "binary", data_json(w, &d->images[i].binary, true));
    append(w, arr, o);
  }
  set(w, root, "images", arr);
  arr = json_array();
  for (size_t i = 0; i < d->ninputs; i++) {
    json_t *o = json_object();
    set(w, o, "device", jint(d->inputs[i].device));
    set(w, o, "bytes", jint(d->inputs[i].bytes));
    append(w, arr, o);
  }
  set(w, root, "inputs", arr);
  set(w, root, "ints", jint(d->ints));
  set(w, root, "steps", steps_json(w, &d->steps));
  return root;
}

/* The text grows in a buffer of our own (a char array), so the caller frees
 * it with free() whatever allocator jansson was given; each piece leaves
 * room for the end's newline and NUL. */
static int text_put(const char *s, size_t n, void *data) {
  rig_array *t = data;
  if (n > SIZE_MAX - 2 || !rig_array_reserve(t, n + 2)) return -1;
  rig_array_append(t, s, n);
  return 0;
}

rig_status rig_desc_to_json(const rig_desc *d, char **text, rig_error *err) {
  /* The JSON form holds exactly what the bytes hold, so it refuses what
   * rig_desc_to_bytes refuses, with the same message; after that every
   * enumeration is in range and loops nest at most 64 deep. */
  uint8_t *bytes = NULL;
  size_t len = 0;
  rig_status st = rig_desc_to_bytes(d, &bytes, &len, err);
  if (st != RIG_OK) return st;
  free(bytes);

  jw w = {false};
  json_t *root = desc_json(&w, d);
  rig_array t = RIG_ARRAY_INIT(char, 0);
  if (!root || w.failed ||
      json_dump_callback(root, text_put, &t, JSON_INDENT(2) | JSON_PRESERVE_ORDER) != 0) {
    json_decref(root);
    rig_array_free(&t);
    return rig_error_set(err, RIG_ENOMEM, "out of memory writing a program description as JSON");
  }
  json_decref(root);
  /* text_put left room for these two: no allocation fails here. */
  if (!rig_array_append(&t, "\n", 2)) {
    rig_array_free(&t);
    return rig_error_set(err, RIG_ENOMEM, "out of memory writing a program description as JSON");
  }
  *text = rig_array_take(&t);
  return RIG_OK;
}
