/* Bytes of format version 4 back into a description (docs/format.md). The
 * reader keeps a cursor, never reads past the end, and never allocates more
 * than a constant times the input: every count is at most the bytes left,
 * since each element takes at least one byte. A failure unwinds with
 * longjmp (desc_internal.h says why that is safe). */
#include <inttypes.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec_internal.h"
#include "desc_internal.h"

typedef struct reader {
  const uint8_t *p;
  size_t len, pos;
  rig_desc_arena *arena;
  jmp_buf fail;
  size_t fail_pos;
  char why[160];
  bool nomem;
} reader;

__attribute__((noreturn, format(printf, 3, 4))) static void fail(reader *r, size_t pos,
                                                                 const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(r->why, sizeof r->why, fmt, ap);
  va_end(ap);
  r->fail_pos = pos;
  longjmp(r->fail, 1);
}

__attribute__((noreturn)) static void fail_nomem(reader *r) {
  r->nomem = true;
  longjmp(r->fail, 1);
}

static inline int64_t get_int(reader *r) {
  if (r->len - r->pos < 8) fail(r, r->pos, "an integer past the end");
  /* One load, not eight: the integers are most of what is read. */
  uint64_t u;
  memcpy(&u, r->p + r->pos, 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  u = __builtin_bswap64(u); /* the format is little-endian */
#endif
  int64_t v = (int64_t)u;
  if (!rig_int_fits(v)) fail(r, r->pos, "an integer of more than 63 bits");
  r->pos += 8;
  return v;
}

static unsigned get_tag(reader *r, const char *what, unsigned count) {
  if (r->pos >= r->len) fail(r, r->pos, "a tag past the end");
  unsigned t = r->p[r->pos++];
  if (t >= count) fail(r, r->pos, "%s of tag %u", what, t);
  return t;
}

static size_t get_count(reader *r) {
  int64_t n = get_int(r);
  if (n < 0 || (uint64_t)n > r->len - r->pos) fail(r, r->pos, "a count of %" PRId64, n);
  return (size_t)n;
}

static bool get_option(reader *r) {
  return get_tag(r, "an option", 2) == 1;
}

static void *get_array(reader *r, size_t *n, size_t elem) {
  *n = get_count(r);
  if (*n == 0) return NULL;
  void *items = rig_arena_array(r->arena, *n, elem);
  if (!items) fail_nomem(r);
  return items;
}

static rig_desc_string get_string(reader *r) {
  size_t n = get_count(r);
  bool ok = true;
  rig_desc_string s = rig_arena_string(r->arena, r->p + r->pos, n, &ok);
  if (!ok) fail_nomem(r);
  r->pos += n;
  return s;
}

static void get_leaf(reader *r, rig_desc_leaf *l) {
  l->tag = get_tag(r, "a leaf", 4);
  switch (l->tag) {
    case RIG_LEAF_ADDRESS:
      l->u.address.memory = get_int(r);
      l->u.address.on = get_int(r);
      break;
    case RIG_LEAF_HANDLE:
      l->u.handle = get_int(r);
      break;
    case RIG_LEAF_ENTRY:
      l->u.entry.image = get_int(r);
      l->u.entry.name = get_string(r);
      break;
    case RIG_LEAF_READY:
      l->u.ready = get_int(r);
      break;
  }
}

static void get_value(reader *r, rig_desc_value *v) {
  v->tag = get_tag(r, "a value", 3);
  switch (v->tag) {
    case RIG_VALUE_FIXED:
      v->u.fixed = get_int(r);
      break;
    case RIG_VALUE_INT:
      v->u.int_index = get_int(r);
      break;
    case RIG_VALUE_LEAF:
      get_leaf(r, &v->u.leaf);
      break;
  }
}

static void get_data(reader *r, rig_desc_data *d, bool leaves) {
  d->bytes = get_string(r);
  d->holes = get_array(r, &d->nholes, sizeof *d->holes);
  for (size_t i = 0; i < d->nholes; i++) {
    rig_desc_hole *h = &d->holes[i];
    h->at = get_int(r);
    h->width = get_tag(r, "a width", 2);
    h->terms.items = get_array(r, &h->terms.n, sizeof *h->terms.items);
    for (size_t j = 0; j < h->terms.n; j++) {
      rig_desc_term *t = &h->terms.items[j];
      if (leaves) {
        t->value.tag = RIG_VALUE_LEAF;
        get_leaf(r, &t->value.u.leaf);
      } else {
        get_value(r, &t->value);
      }
      t->factor = get_int(r);
    }
    h->add = get_int(r);
    h->shift = get_int(r);
  }
}

static void get_terms(reader *r, rig_desc_terms *t) {
  t->items = get_array(r, &t->n, sizeof *t->items);
  for (size_t i = 0; i < t->n; i++) {
    get_value(r, &t->items[i].value);
    t->items[i].factor = get_int(r);
  }
}

static void get_view(reader *r, rig_desc_view *v) {
  v->memory = get_int(r);
  v->offset = get_int(r);
  v->length = get_int(r);
}

static void get_slot(reader *r, rig_desc_slot *s) {
  memset(s, 0, sizeof *s);
  s->tag = get_tag(r, "a slot", 3);
  if (s->tag == RIG_SLOT_MEMORY) get_view(r, &s->u.memory);
  if (s->tag == RIG_SLOT_INPUT) s->u.input = get_int(r);
}

static rig_desc_ref *get_refs(reader *r, size_t *n) {
  rig_desc_ref *refs = get_array(r, n, sizeof *refs);
  for (size_t i = 0; i < *n; i++) {
    refs[i].slot = get_int(r);
    refs[i].at = get_int(r);
    refs[i].use = get_tag(r, "a use", 3);
  }
  return refs;
}

static void get_part(reader *r, rig_desc_part *p) {
  p->tag = get_tag(r, "a part", 4);
  switch (p->tag) {
    case RIG_PART_WORDS:
      get_view(r, &p->u.words);
      break;
    case RIG_PART_FILL:
      get_leaf(r, &p->u.fill.fill);
      get_data(r, &p->u.fill.params, false);
      p->u.fill.refs = get_refs(r, &p->u.fill.nrefs);
      break;
    case RIG_PART_COPY:
      p->u.copy.src = get_int(r);
      get_terms(r, &p->u.copy.src_offset);
      p->u.copy.dst = get_int(r);
      get_terms(r, &p->u.copy.dst_offset);
      p->u.copy.length = get_int(r);
      break;
    case RIG_PART_LAUNCH:
      p->u.launch.image = get_int(r);
      p->u.launch.name = get_string(r);
      get_data(r, &p->u.launch.params, false);
      p->u.launch.refs = get_refs(r, &p->u.launch.nrefs);
      for (int i = 0; i < 3; i++) get_value(r, &p->u.launch.groups[i]);
      for (int i = 0; i < 3; i++) get_value(r, &p->u.launch.threads[i]);
      get_value(r, &p->u.launch.shared);
      break;
  }
}

static void get_steps(reader *r, rig_desc_steps *steps, int depth);

static void get_step(reader *r, rig_desc_step *s, int depth) {
  s->tag = get_tag(r, "a step", 3);
  switch (s->tag) {
    case RIG_STEP_SUBMIT: {
      rig_desc_submit *sub = &s->u.submit;
      sub->device = get_int(r);
      sub->parts = get_array(r, &sub->nparts, sizeof *sub->parts);
      for (size_t i = 0; i < sub->nparts; i++) get_part(r, &sub->parts[i]);
      sub->slots = get_array(r, &sub->nslots, sizeof *sub->slots);
      for (size_t i = 0; i < sub->nslots; i++) get_slot(r, &sub->slots[i]);
      sub->fixed = get_array(r, &sub->nfixed, sizeof *sub->fixed);
      for (size_t i = 0; i < sub->nfixed; i++) {
        get_view(r, &sub->fixed[i].view);
        sub->fixed[i].access = get_tag(r, "an access", 2);
      }
      break;
    }
    case RIG_STEP_MOVE:
      get_slot(r, &s->u.move.src);
      get_terms(r, &s->u.move.src_offset);
      get_slot(r, &s->u.move.dst);
      get_terms(r, &s->u.move.dst_offset);
      s->u.move.length = get_int(r);
      break;
    case RIG_STEP_LOOP:
      get_value(r, &s->u.loop.trips);
      s->u.loop.has_trip = get_option(r);
      s->u.loop.trip = s->u.loop.has_trip ? get_int(r) : 0;
      s->u.loop.has_flag = get_option(r);
      if (s->u.loop.has_flag) {
        get_slot(r, &s->u.loop.flag_slot);
        s->u.loop.flag_at = get_int(r);
      } else {
        memset(&s->u.loop.flag_slot, 0, sizeof s->u.loop.flag_slot);
        s->u.loop.flag_at = 0;
      }
      if (depth >= RIG_DESC_MAX_DEPTH)
        fail(r, r->pos, "steps nested deeper than %d", RIG_DESC_MAX_DEPTH);
      get_steps(r, &s->u.loop.body, depth + 1);
      break;
  }
}

static void get_steps(reader *r, rig_desc_steps *steps, int depth) {
  steps->items = get_array(r, &steps->n, sizeof *steps->items);
  for (size_t i = 0; i < steps->n; i++) get_step(r, &steps->items[i], depth);
}

bool rig_desc_is_bytes(const void *bytes, size_t len) {
  return len >= RIG_DESC_MAGIC_LEN && memcmp(bytes, RIG_DESC_MAGIC, RIG_DESC_MAGIC_LEN) == 0;
}

static void get_desc(reader *r, rig_desc *d) {
  d->devices = get_array(r, &d->ndevices, sizeof *d->devices);
  for (size_t i = 0; i < d->ndevices; i++) d->devices[i] = get_string(r);
  d->memory = get_array(r, &d->nmemory, sizeof *d->memory);
  for (size_t i = 0; i < d->nmemory; i++) {
    rig_desc_memory *m = &d->memory[i];
    m->tag = get_tag(r, "a memory", 2);
    if (m->tag == RIG_MEMORY_ALLOC) {
      m->u.alloc.device = get_int(r);
      m->u.alloc.kind = get_tag(r, "a memory kind", 3);
      m->u.alloc.bytes = get_int(r);
      get_data(r, &m->u.alloc.init, true);
      m->u.alloc.copies = get_tag(r, "copies", 2);
    } else {
      m->u.rail.rail = get_int(r);
      m->u.rail.area = get_tag(r, "an area", 3);
    }
  }
  d->images = get_array(r, &d->nimages, sizeof *d->images);
  for (size_t i = 0; i < d->nimages; i++) {
    d->images[i].device = get_int(r);
    get_data(r, &d->images[i].binary, true);
  }
  d->inputs = get_array(r, &d->ninputs, sizeof *d->inputs);
  for (size_t i = 0; i < d->ninputs; i++) {
    d->inputs[i].device = get_int(r);
    d->inputs[i].bytes = get_int(r);
  }
  d->ints = get_int(r);
  get_steps(r, &d->steps, 0);
}

rig_status rig_desc_of_bytes(const void *bytes, size_t len, rig_desc **out, rig_error *err) {
  if (!rig_desc_is_bytes(bytes, len))
    return rig_error_set(err, RIG_EMALFORMED, "not a program description");
  rig_desc *d = rig_desc_create();
  if (!d) return rig_error_set(err, RIG_ENOMEM, "out of memory decoding a program description");
  reader *r = malloc(sizeof *r);
  if (!r) {
    rig_desc_free(d);
    return rig_error_set(err, RIG_ENOMEM, "out of memory decoding a program description");
  }
  r->p = bytes;
  r->len = len;
  r->pos = RIG_DESC_MAGIC_LEN;
  r->arena = d->arena;
  r->nomem = false;
  rig_status st = RIG_OK;
  /* The stages decide how a failure reads: 0 the version, 1 the body. */
  volatile int stage = 0;
  if (setjmp(r->fail)) {
    if (r->nomem)
      st = rig_error_set(err, RIG_ENOMEM, "out of memory decoding a program description");
    else if (stage == 0)
      st = rig_error_set(err, RIG_EMALFORMED, "%s", r->why);
    else
      st = rig_error_set(err, RIG_EMALFORMED, "a malformed program description at byte %zu: %s",
                         r->fail_pos, r->why);
    goto done;
  }
  int64_t version = get_int(r);
  if (version != RIG_DESC_FORMAT_VERSION) {
    st = rig_error_set(err, RIG_EMALFORMED,
                       "a program description of format version %" PRId64 ", not %d", version,
                       RIG_DESC_FORMAT_VERSION);
    goto done;
  }
  stage = 1;
  get_desc(r, d);
  if (r->pos != len)
    st = rig_error_set(err, RIG_EMALFORMED, "%zu bytes after a program description", len - r->pos);
done:
  free(r);
  if (st != RIG_OK) {
    rig_desc_free(d);
    return st;
  }
  *out = d;
  return RIG_OK;
}

rig_desc *rig_desc_copy(const rig_desc *d) {
  uint8_t *bytes;
  size_t len;
  if (rig_desc_to_bytes(d, &bytes, &len, NULL) != RIG_OK) return NULL;
  rig_desc *c = NULL;
  rig_desc_of_bytes(bytes, len, &c, NULL);
  free(bytes);
  return c;
}
