/* The rules a description must follow without devices (docs/rules.md, rules 3
 * to 8; docs/rules.md gives each message). One pass over memory, images and
 * inputs, one over the steps for the structural rules, and one over the
 * steps for the order rules, with per-step sets of named, named-whole and
 * fixed-whole memory kept as stamps per memory, so the check is linear in
 * the description's size (but for sorting each data's holes). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/array.h"
#include "desc_internal.h"

/* The bytes of a rail's Counts area, fixed by the format (rig_rail.h's
 * RIG_RAIL_COUNTS_BYTES; the rails suite checks that the two agree). */
#define COUNTS_AREA_BYTES 384

/* Where a broken rule is: named in its message, but formatted only when a
 * rule is broken, since formatting it at every step cost more than the
 * checks themselves. */
typedef enum where_kind {
  WHERE_NONE,   /* "" */
  WHERE_MEMORY, /* "memory 3" */
  WHERE_IMAGE,  /* "image 0" */
  WHERE_INPUT,  /* "input 1" */
  WHERE_STEP,   /* "step 5" */
  WHERE_PARAMS, /* "step 5's parameters" */
} where_kind;

typedef struct checker {
  const rig_desc *d;
  rig_error *err;
  where_kind where; /* with where_at: "memory 3", "step 5", ... (fail) */
  int64_t where_at;
  int64_t *size;   /* each memory's bytes, -1 when unknown (a rail area) */
  uint64_t *named; /* stamps: the serial of the last Submit that named it */
  uint64_t *whole;
  uint64_t *fixed;
  uint64_t serial;
  rig_array slot_use; /* unsigned char, scratch per submit: how its slots are named */
  rig_array spans;    /* span, scratch per data: its holes' bytes, sorted */
  int64_t step;       /* the next step's number, in pre-order */
} checker;

enum { USE_RW = 1, USE_UNORDERED = 2 };

static void at(checker *c, where_kind where, int64_t i) {
  c->where = where;
  c->where_at = i;
}

/* Every check returns RIG_OK or the code of the rig_error it filled: a
 * broken rule is RIG_EINVAL named at c->where, scratch memory that cannot
 * be had RIG_ENOMEM. */
__attribute__((format(printf, 2, 3))) static rig_status fail(checker *c, const char *fmt, ...) {
  char msg[RIG_ERROR_MESSAGE_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  static const char *const names[] = {
      [WHERE_MEMORY] = "memory", [WHERE_IMAGE] = "image", [WHERE_INPUT] = "input",
      [WHERE_STEP] = "step",     [WHERE_PARAMS] = "step",
  };
  if (c->where == WHERE_NONE) return rig_error_set(c->err, RIG_EINVAL, "%s", msg);
  return rig_error_set(c->err, RIG_EINVAL, "%s %" PRId64 "%s: %s", names[c->where], c->where_at,
                       c->where == WHERE_PARAMS ? "'s parameters" : "", msg);
}

static rig_status fail_nomem(checker *c) {
  return rig_error_set(c->err, RIG_ENOMEM, "out of memory checking a description");
}

/* Returns the status of a check that failed. */
#define TRY(x)                                                                                     \
  do {                                                                                             \
    rig_status try_status_ = (x);                                                                  \
    if (try_status_ != RIG_OK) return try_status_;                                                 \
  } while (0)

static bool in_range(int64_t i, size_t n) {
  return i >= 0 && (uint64_t)i < n;
}

static int64_t width_bytes(rig_desc_width w) {
  return w == RIG_W32 ? 4 : 8;
}

/* ---- values and leaves ---------------------------------------------------- */

static rig_status check_memory_index(checker *c, int64_t m) {
  return in_range(m, c->d->nmemory) ? RIG_OK : fail(c, "memory %" PRId64 ": no such memory", m);
}

static rig_status check_device_index(checker *c, int64_t dev) {
  return in_range(dev, c->d->ndevices) ? RIG_OK
                                       : fail(c, "device %" PRId64 ": no such device", dev);
}

/* `images` is how many images an Entry may name: all of them, or those
 * before the image whose binary holds it. */
static rig_status check_leaf(checker *c, const rig_desc_leaf *l, size_t images) {
  switch (l->tag) {
    case RIG_LEAF_ADDRESS:
      TRY(check_memory_index(c, l->u.address.memory));
      return check_device_index(c, l->u.address.on);
    case RIG_LEAF_HANDLE:
      return check_memory_index(c, l->u.handle);
    case RIG_LEAF_ENTRY:
      if (in_range(l->u.entry.image, images)) return RIG_OK;
      /* In an image's binary the image exists but is not an earlier one:
       * "image 1: image 1: no such image" would read as a doubled prefix. */
      if (in_range(l->u.entry.image, c->d->nimages))
        return fail(c, "an Entry of image %" PRId64 ", not of an image before this one",
                    l->u.entry.image);
      return fail(c, "image %" PRId64 ": no such image", l->u.entry.image);
    case RIG_LEAF_READY:
      return RIG_OK; /* the rail is checked at load */
  }
  return fail(c, "a leaf of tag %d", (int)l->tag);
}

static rig_status check_int_index(checker *c, int64_t i) {
  return in_range(i, (size_t)c->d->ints) ? RIG_OK : fail(c, "int %" PRId64 ": no such int", i);
}

static rig_status check_value(checker *c, const rig_desc_value *v) {
  switch (v->tag) {
    case RIG_VALUE_FIXED:
      return RIG_OK;
    case RIG_VALUE_INT:
      return check_int_index(c, v->u.int_index);
    case RIG_VALUE_LEAF:
      return check_leaf(c, &v->u.leaf, c->d->nimages);
  }
  return fail(c, "a value of tag %d", (int)v->tag);
}

/* ---- holes ---------------------------------------------------------------- */

typedef struct span {
  int64_t at, end;
} span;

static int span_cmp(const void *a, const void *b) {
  const span *x = a, *y = b;
  return (x->at > y->at) - (x->at < y->at);
}

/* The holes of a data, `where` already naming it. In a leaf data every
 * term is a leaf, and an Entry names one of `images` images. */
static rig_status check_holes(checker *c, const rig_desc_data *data, bool leaves, size_t images) {
  int64_t len = (int64_t)data->bytes.len;
  for (size_t i = 0; i < data->nholes; i++) {
    const rig_desc_hole *h = &data->holes[i];
    int64_t wb = width_bytes(h->width);
    if (h->at < 0 || len < wb || h->at > len - wb)
      return fail(c, "a hole at %" PRId64 " outside its %" PRId64 " bytes", h->at, len);
    if (h->shift < 0 || h->shift > 62)
      return fail(c, "a hole's shift %" PRId64 " outside 0 to 62", h->shift);
    for (size_t j = 0; j < h->terms.n; j++) {
      const rig_desc_value *v = &h->terms.items[j].value;
      if (leaves) {
        if (v->tag != RIG_VALUE_LEAF) return fail(c, "a hole's term is not a leaf");
        TRY(check_leaf(c, &v->u.leaf, images));
      } else {
        TRY(check_value(c, v));
      }
    }
  }
  if (data->nholes < 2) return RIG_OK;
  if (!rig_array_resize(&c->spans, data->nholes)) return fail_nomem(c);
  span *spans = c->spans.items;
  for (size_t i = 0; i < data->nholes; i++) {
    spans[i].at = data->holes[i].at;
    spans[i].end = data->holes[i].at + width_bytes(data->holes[i].width);
  }
  qsort(spans, data->nholes, sizeof *spans, span_cmp);
  /* Holes are at most 8 bytes wide, so the one reaching furthest so far is
   * the one a later hole may share a byte with. */
  size_t far = 0;
  for (size_t i = 1; i < data->nholes; i++) {
    if (spans[i].at < spans[far].end)
      return fail(c, "holes at %" PRId64 " and %" PRId64 " share a byte", spans[far].at,
                  spans[i].at);
    if (spans[i].end > spans[far].end) far = i;
  }
  return RIG_OK;
}

static bool names_two_copy_memory(const checker *c, const rig_desc_leaf *l) {
  int64_t m = l->tag == RIG_LEAF_ADDRESS  ? l->u.address.memory
              : l->tag == RIG_LEAF_HANDLE ? l->u.handle
                                          : -1;
  if (m < 0) return false;
  const rig_desc_memory *mem = &c->d->memory[m];
  return mem->tag == RIG_MEMORY_ALLOC && mem->u.alloc.copies == RIG_COPIES_TWO;
}

/* ---- memory, images, inputs (rules 4 to 6) -------------------------------- */

static rig_status check_memory(checker *c, size_t i) {
  const rig_desc_memory *m = &c->d->memory[i];
  at(c, WHERE_MEMORY, (int64_t)i);
  if (m->tag != RIG_MEMORY_ALLOC) return RIG_OK;
  TRY(check_device_index(c, m->u.alloc.device));
  int64_t bytes = m->u.alloc.bytes;
  if (bytes < 0) return fail(c, "%" PRId64 " bytes", bytes);
  const rig_desc_data *init = &m->u.alloc.init;
  if ((uint64_t)init->bytes.len > (uint64_t)bytes)
    return fail(c, "%zu bytes of init in %" PRId64 " bytes", init->bytes.len, bytes);
  TRY(check_holes(c, init, true, c->d->nimages));
  if (m->u.alloc.copies == RIG_COPIES_ONE)
    for (size_t h = 0; h < init->nholes; h++)
      for (size_t t = 0; t < init->holes[h].terms.n; t++)
        if (names_two_copy_memory(c, &init->holes[h].terms.items[t].value.u.leaf))
          return fail(c, "of one copy, a hole names memory of two");
  return RIG_OK;
}

static rig_status check_image(checker *c, size_t k) {
  const rig_desc_image *im = &c->d->images[k];
  at(c, WHERE_IMAGE, (int64_t)k);
  TRY(check_device_index(c, im->device));
  TRY(check_holes(c, &im->binary, true, k));
  const rig_desc_data *b = &im->binary;
  for (size_t h = 0; h < b->nholes; h++)
    for (size_t t = 0; t < b->holes[h].terms.n; t++)
      if (names_two_copy_memory(c, &b->holes[h].terms.items[t].value.u.leaf))
        return fail(c, "a hole names memory of two copies");
  for (size_t h = 0; h < b->nholes; h++)
    for (size_t t = 0; t < b->holes[h].terms.n; t++) {
      rig_desc_leaf_tag tag = b->holes[h].terms.items[t].value.u.leaf.tag;
      if (tag == RIG_LEAF_ADDRESS) return fail(c, "a hole holds an Address");
      if (tag == RIG_LEAF_HANDLE) return fail(c, "a hole holds a Handle");
    }
  return RIG_OK;
}

static rig_status check_input(checker *c, size_t i) {
  const rig_desc_input *in = &c->d->inputs[i];
  at(c, WHERE_INPUT, (int64_t)i);
  TRY(check_device_index(c, in->device));
  if (in->bytes < 0) return fail(c, "%" PRId64 " bytes", in->bytes);
  return RIG_OK;
}

/* ---- views and slots ------------------------------------------------------ */

static rig_status check_view(checker *c, const rig_desc_view *v) {
  TRY(check_memory_index(c, v->memory));
  int64_t size = c->size[v->memory];
  if (size < 0) {
    if (v->offset < 0 || v->length < 0)
      return fail(c,
                  "memory %" PRId64 ": a view of %" PRId64 " bytes at %" PRId64 " outside its area",
                  v->memory, v->length, v->offset);
    return RIG_OK;
  }
  if (v->offset < 0 || v->length < 0 || v->offset > size || v->length > size - v->offset)
    return fail(c,
                "memory %" PRId64 ": a view of %" PRId64 " bytes at %" PRId64
                " outside its %" PRId64 " bytes",
                v->memory, v->length, v->offset, size);
  return RIG_OK;
}

static bool view_is_whole(const checker *c, const rig_desc_view *v) {
  int64_t size = c->size[v->memory];
  return v->offset == 0 && (size < 0 || v->length == size);
}

static rig_status check_slot(checker *c, const rig_desc_slot *s) {
  switch (s->tag) {
    case RIG_SLOT_MEMORY:
      return check_view(c, &s->u.memory);
    case RIG_SLOT_INPUT:
      return in_range(s->u.input, c->d->ninputs)
                 ? RIG_OK
                 : fail(c, "input %" PRId64 ": no such input", s->u.input);
    case RIG_SLOT_INTS:
      return RIG_OK;
  }
  return fail(c, "a slot of tag %d", (int)s->tag);
}

/* The bytes of a slot that load knows, or -1. */
static int64_t slot_length(const checker *c, const rig_desc_slot *s) {
  if (s->tag == RIG_SLOT_MEMORY) return s->u.memory.length;
  if (s->tag == RIG_SLOT_INTS) return 8 * c->d->ints;
  return -1;
}

/* ---- copies and moves ----------------------------------------------------- */

/* An offset's terms: no leaf, Int indices in range; *constant is set when
 * every term is Fixed, with the exact sum in *sum (false: past an int). */
static rig_status check_offset(checker *c, const rig_desc_terms *t, const char *kind,
                               const char *end, bool *constant, bool *exact, int64_t *sum) {
  *constant = true;
  *exact = true;
  *sum = 0;
  for (size_t i = 0; i < t->n; i++) {
    const rig_desc_value *v = &t->items[i].value;
    if (v->tag == RIG_VALUE_LEAF) return fail(c, "%s's %s offset names a leaf", kind, end);
    if (v->tag == RIG_VALUE_INT) {
      TRY(check_int_index(c, v->u.int_index));
      *constant = false;
    }
  }
  if (!*constant) return RIG_OK;
  for (size_t i = 0; i < t->n; i++) {
    int64_t p;
    if (__builtin_mul_overflow(t->items[i].value.u.fixed, t->items[i].factor, &p) ||
        !rig_int_fits(p) || __builtin_add_overflow(*sum, p, sum) || !rig_int_fits(*sum)) {
      *exact = false;
      return RIG_OK;
    }
  }
  return RIG_OK;
}

typedef struct end_of {
  const rig_desc_slot *slot;
  bool constant;
  int64_t offset;
} end_of;

static rig_status check_end(checker *c, const rig_desc_slot *slot, const rig_desc_terms *terms,
                            int64_t length, const char *kind, const char *end, end_of *out) {
  bool exact;
  out->slot = slot;
  TRY(check_offset(c, terms, kind, end, &out->constant, &exact, &out->offset));
  if (!out->constant) return RIG_OK;
  if (!exact) return fail(c, "%s's %s offset past an int", kind, end);
  int64_t o = out->offset;
  if (o < 0) return fail(c, "%s's %s at %" PRId64 ", a negative offset", kind, end, o);
  int64_t len = slot_length(c, slot);
  if (len >= 0 && (o > len || length > len - o))
    return fail(c, "%s's %s of %" PRId64 " bytes at %" PRId64 " outside its %" PRId64 " bytes",
                kind, end, length, o, len);
  return RIG_OK;
}

/* Whether the two ends are of one buffer. */
static bool same_buffer(const rig_desc_slot *a, const rig_desc_slot *b) {
  if (a->tag != b->tag) return false;
  if (a->tag == RIG_SLOT_MEMORY) return a->u.memory.memory == b->u.memory.memory;
  if (a->tag == RIG_SLOT_INPUT) return a->u.input == b->u.input;
  return true;
}

static int64_t buffer_start(const end_of *e) {
  int64_t base = e->slot->tag == RIG_SLOT_MEMORY ? e->slot->u.memory.offset : 0;
  return base + e->offset; /* both checked inside their memory: no overflow */
}

static rig_status check_pair(checker *c, const char *kind, const rig_desc_slot *src,
                             const rig_desc_terms *src_offset, const rig_desc_slot *dst,
                             const rig_desc_terms *dst_offset, int64_t length) {
  if (length < 0) return fail(c, "%s of %" PRId64 " bytes", kind, length);
  end_of a, b;
  TRY(check_end(c, src, src_offset, length, kind, "source", &a));
  TRY(check_end(c, dst, dst_offset, length, kind, "destination", &b));
  if (a.constant && b.constant && length > 0 && same_buffer(src, dst)) {
    int64_t x = buffer_start(&a), y = buffer_start(&b);
    /* Ranges [x, x+length) and [y, y+length) meet iff |x - y| < length. */
    if ((x <= y && y - x < length) || (y < x && x - y < length))
      return fail(c, "%s's two ends share a byte", kind);
  }
  return RIG_OK;
}

/* ---- steps (rule 7) ------------------------------------------------------- */

/* The parameters of a fill (image < 0) or of a launch of an image. */
static rig_status check_params(checker *c, int64_t s, const rig_desc_data *params, int64_t image) {
  size_t n = params->bytes.len;
  if (n % 4 != 0 || n > RIG_DESC_MAX_PARAMS) {
    char what[48] = "a fill's ";
    if (image >= 0) snprintf(what, sizeof what, "image %" PRId64 ": ", image);
    return fail(c, "%s%zu bytes of parameters, not a whole number of 32-bit words up to 4096", what,
                n);
  }
  at(c, WHERE_PARAMS, s);
  TRY(check_holes(c, params, false, c->d->nimages));
  at(c, WHERE_STEP, s);
  return RIG_OK;
}

static bool part_refs(const rig_desc_part *p, const rig_desc_ref **refs, size_t *n,
                      const rig_desc_data **params) {
  if (p->tag == RIG_PART_FILL) {
    *refs = p->u.fill.refs;
    *n = p->u.fill.nrefs;
    *params = &p->u.fill.params;
    return true;
  }
  if (p->tag == RIG_PART_LAUNCH) {
    *refs = p->u.launch.refs;
    *n = p->u.launch.nrefs;
    *params = &p->u.launch.params;
    return true;
  }
  return false;
}

static rig_status check_slot_index(checker *c, int64_t k, size_t nslots) {
  return in_range(k, nslots) ? RIG_OK : fail(c, "slot %" PRId64 ": no such slot", k);
}

/* A part's own rules (a Copy part's come with its slots, check_copies). */
static rig_status check_part(checker *c, int64_t s, const rig_desc_part *p) {
  switch (p->tag) {
    case RIG_PART_WORDS:
      return check_view(c, &p->u.words);
    case RIG_PART_FILL: {
      rig_desc_leaf_tag t = p->u.fill.fill.tag;
      if (t == RIG_LEAF_ADDRESS || t == RIG_LEAF_HANDLE)
        return fail(c, "a fill's leaf is %s, not an Entry or a Ready",
                    t == RIG_LEAF_ADDRESS ? "an Address" : "a Handle");
      TRY(check_leaf(c, &p->u.fill.fill, c->d->nimages));
      return check_params(c, s, &p->u.fill.params, -1);
    }
    case RIG_PART_LAUNCH: {
      int64_t k = p->u.launch.image;
      if (!in_range(k, c->d->nimages)) return fail(c, "image %" PRId64 ": no such image", k);
      TRY(check_params(c, s, &p->u.launch.params, k));
      for (int g = 0; g < 3; g++) TRY(check_value(c, &p->u.launch.groups[g]));
      for (int g = 0; g < 3; g++) TRY(check_value(c, &p->u.launch.threads[g]));
      return check_value(c, &p->u.launch.shared);
    }
    case RIG_PART_COPY:
      break;
  }
  return RIG_OK;
}

/* Every slot is named by a ref or a copy, and not both by an Unordered ref
 * and by anything else. */
static rig_status check_slot_uses(checker *c, const rig_desc_submit *sub) {
  if (!rig_array_resize(&c->slot_use, sub->nslots)) return fail_nomem(c);
  unsigned char *use = c->slot_use.items;
  if (sub->nslots) memset(use, 0, sub->nslots);
  for (size_t i = 0; i < sub->nparts; i++) {
    const rig_desc_part *p = &sub->parts[i];
    const rig_desc_ref *refs;
    const rig_desc_data *params;
    size_t n;
    if (part_refs(p, &refs, &n, &params)) {
      for (size_t r = 0; r < n; r++) {
        TRY(check_slot_index(c, refs[r].slot, sub->nslots));
        use[refs[r].slot] |= refs[r].use == RIG_USE_UNORDERED ? USE_UNORDERED : USE_RW;
      }
    } else if (p->tag == RIG_PART_COPY) {
      TRY(check_slot_index(c, p->u.copy.src, sub->nslots));
      TRY(check_slot_index(c, p->u.copy.dst, sub->nslots));
      use[p->u.copy.src] |= USE_RW;
      use[p->u.copy.dst] |= USE_RW;
    }
  }
  for (size_t k = 0; k < sub->nslots; k++)
    if (!use[k]) return fail(c, "slot %zu is named by no ref or copy", k);
  for (size_t k = 0; k < sub->nslots; k++)
    if (use[k] == (USE_RW | USE_UNORDERED))
      return fail(c, "slot %zu is named by an Unordered ref and by a Read or Write ref or a copy",
                  k);
  return RIG_OK;
}

/* Each ref is 8 aligned bytes inside its parameters. */
static rig_status check_ref_places(checker *c, const rig_desc_submit *sub) {
  for (size_t i = 0; i < sub->nparts; i++) {
    const rig_desc_ref *refs;
    const rig_desc_data *params;
    size_t n;
    if (!part_refs(&sub->parts[i], &refs, &n, &params)) continue;
    int64_t plen = (int64_t)params->bytes.len;
    for (size_t r = 0; r < n; r++) {
      int64_t at = refs[r].at;
      if (at < 0 || plen < 8 || at > plen - 8)
        return fail(c, "a ref at %" PRId64 " outside its %" PRId64 " bytes of parameters", at,
                    plen);
      if (at % 8 != 0) return fail(c, "a ref at %" PRId64 ", not a multiple of 8", at);
    }
  }
  return RIG_OK;
}

/* Each Copy part's ranges fit its slots. */
static rig_status check_copies(checker *c, const rig_desc_submit *sub) {
  for (size_t i = 0; i < sub->nparts; i++) {
    const rig_desc_part *p = &sub->parts[i];
    if (p->tag != RIG_PART_COPY) continue;
    TRY(check_pair(c, "a copy", &sub->slots[p->u.copy.src], &p->u.copy.src_offset,
                   &sub->slots[p->u.copy.dst], &p->u.copy.dst_offset, p->u.copy.length));
  }
  return RIG_OK;
}

static rig_status check_submit(checker *c, int64_t s, const rig_desc_submit *sub) {
  TRY(check_device_index(c, sub->device));
  for (size_t i = 0; i < sub->nparts; i++) TRY(check_part(c, s, &sub->parts[i]));
  for (size_t i = 0; i < sub->nslots; i++) TRY(check_slot(c, &sub->slots[i]));
  for (size_t i = 0; i < sub->nfixed; i++) TRY(check_view(c, &sub->fixed[i].view));
  TRY(check_slot_uses(c, sub));
  TRY(check_ref_places(c, sub));
  return check_copies(c, sub);
}

static rig_status check_steps(checker *c, const rig_desc_steps *steps, int depth);

static rig_status check_loop(checker *c, const rig_desc_step *st, int depth) {
  const rig_desc_value *trips = &st->u.loop.trips;
  TRY(check_value(c, trips));
  if (trips->tag == RIG_VALUE_LEAF && trips->u.leaf.tag == RIG_LEAF_ADDRESS)
    return fail(c, "trips hold an Address");
  if (trips->tag == RIG_VALUE_LEAF && trips->u.leaf.tag == RIG_LEAF_HANDLE) {
    int64_t m = trips->u.leaf.u.handle;
    const rig_desc_slot *f = &st->u.loop.flag_slot;
    bool whole = st->u.loop.has_flag && f->tag == RIG_SLOT_MEMORY && f->u.memory.memory == m &&
                 in_range(m, c->d->nmemory) && view_is_whole(c, &f->u.memory);
    if (!whole)
      return fail(
          c, "trips hold a Handle of memory %" PRId64 ", which the flag does not name whole", m);
  }
  if (st->u.loop.has_trip) TRY(check_int_index(c, st->u.loop.trip));
  if (st->u.loop.has_flag) {
    const rig_desc_slot *f = &st->u.loop.flag_slot;
    TRY(check_slot(c, f));
    if (f->tag == RIG_SLOT_MEMORY && f->u.memory.length == 0)
      return fail(c, "memory %" PRId64 ": a flag of no byte", f->u.memory.memory);
    int64_t at = st->u.loop.flag_at, len = slot_length(c, f);
    if (len < 0 && at < 0) return fail(c, "a flag at %" PRId64 " outside its slot", at);
    if (len >= 0 && (at < 0 || at >= len))
      return fail(c, "a flag at %" PRId64 " outside its %" PRId64 " bytes", at, len);
  }
  if (depth >= RIG_DESC_MAX_DEPTH)
    return fail(c, "steps nested deeper than %d", RIG_DESC_MAX_DEPTH);
  return check_steps(c, &st->u.loop.body, depth + 1);
}

static rig_status check_steps(checker *c, const rig_desc_steps *steps, int depth) {
  for (size_t i = 0; i < steps->n; i++) {
    const rig_desc_step *st = &steps->items[i];
    int64_t s = c->step++;
    at(c, WHERE_STEP, s);
    switch (st->tag) {
      case RIG_STEP_SUBMIT:
        TRY(check_submit(c, s, &st->u.submit));
        break;
      case RIG_STEP_MOVE:
        TRY(check_slot(c, &st->u.move.src));
        TRY(check_slot(c, &st->u.move.dst));
        TRY(check_pair(c, "a move", &st->u.move.src, &st->u.move.src_offset, &st->u.move.dst,
                       &st->u.move.dst_offset, st->u.move.length));
        break;
      case RIG_STEP_LOOP:
        TRY(check_loop(c, st, depth));
        break;
    }
  }
  return RIG_OK;
}

/* ---- the order rules (rule 8) --------------------------------------------- */

/* For the init rules: each memory's init references to other memory, as
 * lists (CSR), and the (memory, device) pairs some step fixes whole. */
typedef struct order {
  size_t *ref_start; /* nmemory + 1 */
  int64_t *refs;
  bool *needs_fix;    /* an init Address on some device names it */
  rig_array fixed_on; /* uint64_t, sorted pairs memory * ndevices + device */
} order;

static void mark(checker *c, const rig_desc_view *v, bool is_fixed) {
  c->named[v->memory] = c->serial;
  if (!view_is_whole(c, v)) return;
  c->whole[v->memory] = c->serial;
  if (is_fixed) c->fixed[v->memory] = c->serial;
}

static rig_status check_escape(checker *c, const rig_desc_value *v, int64_t device) {
  if (v->tag != RIG_VALUE_LEAF) return RIG_OK;
  const rig_desc_leaf *l = &v->u.leaf;
  if (l->tag == RIG_LEAF_ADDRESS) {
    int64_t m = l->u.address.memory;
    if (l->u.address.on != device)
      return fail(c,
                  "an Address of memory %" PRId64 " on device %" PRId64
                  ", not the step's device %" PRId64,
                  m, l->u.address.on, device);
    if (c->fixed[m] != c->serial)
      return fail(c, "an Address of memory %" PRId64 " that the step does not fix whole", m);
  } else if (l->tag == RIG_LEAF_HANDLE) {
    int64_t m = l->u.handle;
    if (c->whole[m] != c->serial)
      return fail(c, "a Handle of memory %" PRId64 " that the step does not name whole", m);
  }
  return RIG_OK;
}

static rig_status check_data_escapes(checker *c, const rig_desc_data *params, int64_t device) {
  for (size_t h = 0; h < params->nholes; h++)
    for (size_t t = 0; t < params->holes[h].terms.n; t++)
      TRY(check_escape(c, &params->holes[h].terms.items[t].value, device));
  return RIG_OK;
}

static rig_status check_init_refs(checker *c, const order *o, int64_t m) {
  if (c->named[m] == c->serial + 1) return RIG_OK; /* already checked in this step */
  for (size_t r = o->ref_start[m]; r < o->ref_start[m + 1]; r++) {
    int64_t n = o->refs[r];
    if (c->whole[n] != c->serial)
      return fail(c,
                  "names memory %" PRId64 ", whose init holds memory %" PRId64
                  ", but not memory %" PRId64 " whole",
                  m, n, n);
  }
  return RIG_OK;
}

static rig_status add_fixed_on(checker *c, order *o, int64_t m, int64_t device) {
  if (!o->needs_fix[m]) return RIG_OK;
  uint64_t pair = (uint64_t)m * c->d->ndevices + (uint64_t)device;
  if (!rig_array_push(&o->fixed_on, &pair)) return fail_nomem(c);
  return RIG_OK;
}

static rig_status order_submit(checker *c, order *o, const rig_desc_submit *sub) {
  c->serial += 2; /* serial + 1 marks memory whose init references were checked */
  for (size_t i = 0; i < sub->nparts; i++)
    if (sub->parts[i].tag == RIG_PART_WORDS) mark(c, &sub->parts[i].u.words, false);
  for (size_t i = 0; i < sub->nslots; i++)
    if (sub->slots[i].tag == RIG_SLOT_MEMORY) mark(c, &sub->slots[i].u.memory, false);
  for (size_t i = 0; i < sub->nfixed; i++) mark(c, &sub->fixed[i].view, true);

  for (size_t i = 0; i < sub->nparts; i++) {
    const rig_desc_part *p = &sub->parts[i];
    if (p->tag == RIG_PART_FILL) TRY(check_data_escapes(c, &p->u.fill.params, sub->device));
    if (p->tag != RIG_PART_LAUNCH) continue;
    TRY(check_data_escapes(c, &p->u.launch.params, sub->device));
    for (int g = 0; g < 3; g++) TRY(check_escape(c, &p->u.launch.groups[g], sub->device));
    for (int g = 0; g < 3; g++) TRY(check_escape(c, &p->u.launch.threads[g], sub->device));
    TRY(check_escape(c, &p->u.launch.shared, sub->device));
  }

  /* Each memory the step names, in the order of its views, once. */
  for (size_t i = 0; i < sub->nparts; i++)
    if (sub->parts[i].tag == RIG_PART_WORDS) {
      int64_t m = sub->parts[i].u.words.memory;
      TRY(check_init_refs(c, o, m));
      c->named[m] = c->serial + 1;
    }
  for (size_t i = 0; i < sub->nslots; i++)
    if (sub->slots[i].tag == RIG_SLOT_MEMORY) {
      int64_t m = sub->slots[i].u.memory.memory;
      TRY(check_init_refs(c, o, m));
      c->named[m] = c->serial + 1;
    }
  for (size_t i = 0; i < sub->nfixed; i++) {
    int64_t m = sub->fixed[i].view.memory;
    TRY(check_init_refs(c, o, m));
    c->named[m] = c->serial + 1;
    if (c->fixed[m] == c->serial) TRY(add_fixed_on(c, o, m, sub->device));
  }
  return RIG_OK;
}

static rig_status order_steps(checker *c, order *o, const rig_desc_steps *steps) {
  for (size_t i = 0; i < steps->n; i++) {
    const rig_desc_step *st = &steps->items[i];
    int64_t s = c->step++;
    at(c, WHERE_STEP, s);
    if (st->tag == RIG_STEP_SUBMIT) TRY(order_submit(c, o, &st->u.submit));
    if (st->tag == RIG_STEP_LOOP) TRY(order_steps(c, o, &st->u.loop.body));
  }
  return RIG_OK;
}

static int u64_cmp(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

static rig_status build_init_refs(checker *c, order *o) {
  const rig_desc *d = c->d;
  o->ref_start = calloc(d->nmemory + 1, sizeof *o->ref_start);
  o->needs_fix = calloc(d->nmemory ? d->nmemory : 1, sizeof *o->needs_fix);
  if (!o->ref_start || !o->needs_fix) return fail_nomem(c);
  size_t total = 0;
  for (int pass = 0; pass < 2; pass++) {
    total = 0;
    for (size_t m = 0; m < d->nmemory; m++) {
      if (pass == 0) o->ref_start[m] = total;
      const rig_desc_memory *mem = &d->memory[m];
      if (mem->tag != RIG_MEMORY_ALLOC) continue;
      const rig_desc_data *init = &mem->u.alloc.init;
      for (size_t h = 0; h < init->nholes; h++)
        for (size_t t = 0; t < init->holes[h].terms.n; t++) {
          const rig_desc_leaf *l = &init->holes[h].terms.items[t].value.u.leaf;
          int64_t n = l->tag == RIG_LEAF_ADDRESS  ? l->u.address.memory
                      : l->tag == RIG_LEAF_HANDLE ? l->u.handle
                                                  : -1;
          if (l->tag == RIG_LEAF_ADDRESS) o->needs_fix[n] = true;
          if (n < 0 || (size_t)n == m) continue;
          if (pass == 1) o->refs[total] = n;
          total++;
        }
    }
    if (pass == 0) {
      o->ref_start[d->nmemory] = total;
      o->refs = malloc((total ? total : 1) * sizeof *o->refs);
      if (!o->refs) return fail_nomem(c);
    }
  }
  return RIG_OK;
}

static rig_status check_order(checker *c) {
  const rig_desc *d = c->d;
  order o = {.fixed_on = RIG_ARRAY_INIT(uint64_t, 0)};
  rig_status st = build_init_refs(c, &o);
  c->step = 0;
  if (st == RIG_OK) st = order_steps(c, &o, &d->steps);
  const uint64_t *fixed_on = o.fixed_on.items;
  size_t nfixed_on = o.fixed_on.n;
  if (st == RIG_OK && nfixed_on) qsort(o.fixed_on.items, nfixed_on, sizeof *fixed_on, u64_cmp);
  for (size_t i = 0; st == RIG_OK && i < d->nmemory; i++) {
    const rig_desc_memory *mem = &d->memory[i];
    if (mem->tag != RIG_MEMORY_ALLOC) continue;
    at(c, WHERE_MEMORY, (int64_t)i);
    const rig_desc_data *init = &mem->u.alloc.init;
    for (size_t h = 0; st == RIG_OK && h < init->nholes; h++)
      for (size_t t = 0; st == RIG_OK && t < init->holes[h].terms.n; t++) {
        const rig_desc_leaf *l = &init->holes[h].terms.items[t].value.u.leaf;
        if (l->tag != RIG_LEAF_ADDRESS) continue;
        int64_t n = l->u.address.memory, dev = l->u.address.on;
        uint64_t key = (uint64_t)n * d->ndevices + (uint64_t)dev;
        if (!nfixed_on || !bsearch(&key, fixed_on, nfixed_on, sizeof key, u64_cmp))
          st = fail(c,
                    "an Address of memory %" PRId64 " on device %" PRId64
                    ", which no step on device %" PRId64 " fixes whole",
                    n, dev, dev);
      }
  }
  free(o.ref_start);
  free(o.refs);
  free(o.needs_fix);
  rig_array_free(&o.fixed_on);
  return st;
}

/* ---- the whole check ------------------------------------------------------ */

static rig_status check_all(checker *c) {
  const rig_desc *d = c->d;
  if (d->ints < 0 || d->ints > (INT64_C(1) << 59)) return fail(c, "%" PRId64 " ints", d->ints);
  for (size_t i = 0; i < d->nmemory; i++) TRY(check_memory(c, i));
  for (size_t k = 0; k < d->nimages; k++) TRY(check_image(c, k));
  for (size_t i = 0; i < d->ninputs; i++) TRY(check_input(c, i));
  c->step = 0;
  TRY(check_steps(c, &d->steps, 0));
  return check_order(c);
}

static int64_t area_size(const rig_desc_rail_sizes *rails, const rig_desc_memory *m) {
  if (m->u.rail.area == RIG_AREA_COUNTS) return COUNTS_AREA_BYTES;
  if (!rails || !rails->area_bytes) return -1;
  return rails->area_bytes(rails->ctx, m->u.rail.rail, m->u.rail.area);
}

rig_status rig_desc_check_rails(const rig_desc *d, const rig_desc_rail_sizes *rails,
                                rig_error *err) {
  checker c = {.d = d,
               .err = err,
               .slot_use = RIG_ARRAY_INIT(unsigned char, 0),
               .spans = RIG_ARRAY_INIT(span, 0)};
  size_t n = d->nmemory ? d->nmemory : 1;
  c.size = malloc(n * sizeof *c.size);
  c.named = calloc(n, sizeof *c.named);
  c.whole = calloc(n, sizeof *c.whole);
  c.fixed = calloc(n, sizeof *c.fixed);
  rig_status st;
  if (c.size && c.named && c.whole && c.fixed) {
    for (size_t i = 0; i < d->nmemory; i++) {
      const rig_desc_memory *m = &d->memory[i];
      c.size[i] = m->tag == RIG_MEMORY_ALLOC ? m->u.alloc.bytes : area_size(rails, m);
    }
    st = check_all(&c);
  } else {
    st = fail_nomem(&c);
  }
  free(c.size);
  free(c.named);
  free(c.whole);
  free(c.fixed);
  rig_array_free(&c.slot_use);
  rig_array_free(&c.spans);
  return st;
}

rig_status rig_desc_check(const rig_desc *d, rig_error *err) {
  return rig_desc_check_rails(d, NULL, err);
}
