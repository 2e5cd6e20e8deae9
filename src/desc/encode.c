/* A description as bytes of format version 4 (docs/format.md): INTs of 8
 * little-endian bytes, TAGs of one byte, counted strings and arrays. */
#include "base/array.h"
#include "codec_internal.h"
#include "desc_internal.h"

typedef struct writer {
  rig_array buf;   /* uint8_t */
  bool failed;     /* out of memory */
  const char *bad; /* a description that cannot be written: why */
} writer;

static void put_raw(writer *w, const void *p, size_t n) {
  if (!w->failed && !rig_array_append(&w->buf, p, n)) w->failed = true;
}

static void put_int(writer *w, int64_t v) {
  if (!rig_int_fits(v)) w->bad = "an integer of more than 63 bits";
  uint8_t b[8];
  uint64_t u = (uint64_t)v;
  for (int i = 0; i < 8; i++) b[i] = (uint8_t)(u >> (8 * i));
  put_raw(w, b, 8);
}

/* A tag of a constructor the enum does not have would not decode. */
static void put_enum(writer *w, unsigned t, unsigned count) {
  if (t >= count) w->bad = "a constructor outside its type";
  uint8_t b = (uint8_t)t;
  put_raw(w, &b, 1);
}

static void put_tag(writer *w, unsigned t) {
  uint8_t b = (uint8_t)t;
  put_raw(w, &b, 1);
}

static void put_count(writer *w, size_t n) {
  put_int(w, (int64_t)n);
}

static void put_string(writer *w, rig_desc_string s) {
  put_count(w, s.len);
  put_raw(w, s.bytes, s.len);
}

static void put_leaf(writer *w, const rig_desc_leaf *l) {
  put_enum(w, l->tag, 4);
  switch (l->tag) {
    case RIG_LEAF_ADDRESS:
      put_int(w, l->u.address.memory);
      put_int(w, l->u.address.on);
      break;
    case RIG_LEAF_HANDLE:
      put_int(w, l->u.handle);
      break;
    case RIG_LEAF_ENTRY:
      put_int(w, l->u.entry.image);
      put_string(w, l->u.entry.name);
      break;
    case RIG_LEAF_READY:
      put_int(w, l->u.ready);
      break;
  }
}

static void put_value(writer *w, const rig_desc_value *v) {
  put_enum(w, v->tag, 3);
  switch (v->tag) {
    case RIG_VALUE_FIXED:
      put_int(w, v->u.fixed);
      break;
    case RIG_VALUE_INT:
      put_int(w, v->u.int_index);
      break;
    case RIG_VALUE_LEAF:
      put_leaf(w, &v->u.leaf);
      break;
  }
}

/* In leaf data each term is a bare leaf; in value data a value. */
static void put_data(writer *w, const rig_desc_data *d, bool leaves) {
  put_string(w, d->bytes);
  put_count(w, d->nholes);
  for (size_t i = 0; i < d->nholes; i++) {
    const rig_desc_hole *h = &d->holes[i];
    put_int(w, h->at);
    put_enum(w, h->width, 2);
    put_count(w, h->terms.n);
    for (size_t j = 0; j < h->terms.n; j++) {
      const rig_desc_term *t = &h->terms.items[j];
      if (leaves) {
        if (t->value.tag != RIG_VALUE_LEAF)
          w->bad = "a leaf data's hole has a term that is not a leaf";
        put_leaf(w, &t->value.u.leaf);
      } else {
        put_value(w, &t->value);
      }
      put_int(w, t->factor);
    }
    put_int(w, h->add);
    put_int(w, h->shift);
  }
}

static void put_terms(writer *w, const rig_desc_terms *t) {
  put_count(w, t->n);
  for (size_t i = 0; i < t->n; i++) {
    put_value(w, &t->items[i].value);
    put_int(w, t->items[i].factor);
  }
}

static void put_view(writer *w, const rig_desc_view *v) {
  put_int(w, v->memory);
  put_int(w, v->offset);
  put_int(w, v->length);
}

static void put_slot(writer *w, const rig_desc_slot *s) {
  put_enum(w, s->tag, 3);
  if (s->tag == RIG_SLOT_MEMORY) put_view(w, &s->u.memory);
  if (s->tag == RIG_SLOT_INPUT) put_int(w, s->u.input);
}

static void put_refs(writer *w, const rig_desc_ref *refs, size_t n) {
  put_count(w, n);
  for (size_t i = 0; i < n; i++) {
    put_int(w, refs[i].slot);
    put_int(w, refs[i].at);
    put_enum(w, refs[i].use, 3);
  }
}

static void put_part(writer *w, const rig_desc_part *p) {
  put_enum(w, p->tag, 4);
  switch (p->tag) {
    case RIG_PART_WORDS:
      put_view(w, &p->u.words);
      break;
    case RIG_PART_FILL:
      put_leaf(w, &p->u.fill.fill);
      put_data(w, &p->u.fill.params, false);
      put_refs(w, p->u.fill.refs, p->u.fill.nrefs);
      break;
    case RIG_PART_COPY:
      put_int(w, p->u.copy.src);
      put_terms(w, &p->u.copy.src_offset);
      put_int(w, p->u.copy.dst);
      put_terms(w, &p->u.copy.dst_offset);
      put_int(w, p->u.copy.length);
      break;
    case RIG_PART_LAUNCH:
      put_int(w, p->u.launch.image);
      put_string(w, p->u.launch.name);
      put_data(w, &p->u.launch.params, false);
      put_refs(w, p->u.launch.refs, p->u.launch.nrefs);
      for (int i = 0; i < 3; i++) put_value(w, &p->u.launch.groups[i]);
      for (int i = 0; i < 3; i++) put_value(w, &p->u.launch.threads[i]);
      put_value(w, &p->u.launch.shared);
      break;
  }
}

static void put_steps(writer *w, const rig_desc_steps *steps, int depth);

static void put_step(writer *w, const rig_desc_step *s, int depth) {
  put_enum(w, s->tag, 3);
  switch (s->tag) {
    case RIG_STEP_SUBMIT: {
      const rig_desc_submit *sub = &s->u.submit;
      put_int(w, sub->device);
      put_count(w, sub->nparts);
      for (size_t i = 0; i < sub->nparts; i++) put_part(w, &sub->parts[i]);
      put_count(w, sub->nslots);
      for (size_t i = 0; i < sub->nslots; i++) put_slot(w, &sub->slots[i]);
      put_count(w, sub->nfixed);
      for (size_t i = 0; i < sub->nfixed; i++) {
        put_view(w, &sub->fixed[i].view);
        put_enum(w, sub->fixed[i].access, 2);
      }
      break;
    }
    case RIG_STEP_MOVE:
      put_slot(w, &s->u.move.src);
      put_terms(w, &s->u.move.src_offset);
      put_slot(w, &s->u.move.dst);
      put_terms(w, &s->u.move.dst_offset);
      put_int(w, s->u.move.length);
      break;
    case RIG_STEP_LOOP:
      put_value(w, &s->u.loop.trips);
      put_tag(w, s->u.loop.has_trip);
      if (s->u.loop.has_trip) put_int(w, s->u.loop.trip);
      put_tag(w, s->u.loop.has_flag);
      if (s->u.loop.has_flag) {
        put_slot(w, &s->u.loop.flag_slot);
        put_int(w, s->u.loop.flag_at);
      }
      if (depth >= RIG_DESC_MAX_DEPTH)
        w->bad = "steps nested deeper than 64";
      else
        put_steps(w, &s->u.loop.body, depth + 1);
      break;
  }
}

static void put_steps(writer *w, const rig_desc_steps *steps, int depth) {
  put_count(w, steps->n);
  for (size_t i = 0; i < steps->n && !w->bad; i++) put_step(w, &steps->items[i], depth);
}

rig_status rig_desc_to_bytes(const rig_desc *d, uint8_t **bytes, size_t *len, rig_error *err) {
  writer w = {RIG_ARRAY_INIT(uint8_t, 0), false, NULL};
  put_raw(&w, RIG_DESC_MAGIC, RIG_DESC_MAGIC_LEN);
  put_int(&w, RIG_DESC_FORMAT_VERSION);
  put_count(&w, d->ndevices);
  for (size_t i = 0; i < d->ndevices; i++) put_string(&w, d->devices[i]);
  put_count(&w, d->nmemory);
  for (size_t i = 0; i < d->nmemory; i++) {
    const rig_desc_memory *m = &d->memory[i];
    put_enum(&w, m->tag, 2);
    if (m->tag == RIG_MEMORY_ALLOC) {
      put_int(&w, m->u.alloc.device);
      put_enum(&w, m->u.alloc.kind, 3);
      put_int(&w, m->u.alloc.bytes);
      put_data(&w, &m->u.alloc.init, true);
      put_enum(&w, m->u.alloc.copies, 2);
    } else {
      put_int(&w, m->u.rail.rail);
      put_enum(&w, m->u.rail.area, 3);
    }
  }
  put_count(&w, d->nimages);
  for (size_t i = 0; i < d->nimages; i++) {
    put_int(&w, d->images[i].device);
    put_data(&w, &d->images[i].binary, true);
  }
  put_count(&w, d->ninputs);
  for (size_t i = 0; i < d->ninputs; i++) {
    put_int(&w, d->inputs[i].device);
    put_int(&w, d->inputs[i].bytes);
  }
  put_int(&w, d->ints);
  put_steps(&w, &d->steps, 0);
  if (w.bad || w.failed) {
    rig_array_free(&w.buf);
    if (w.bad) return rig_error_set(err, RIG_EINVAL, "%s", w.bad);
    return rig_error_set(err, RIG_ENOMEM, "out of memory writing a program description");
  }
  *len = w.buf.n;
  *bytes = rig_array_take(&w.buf);
  return RIG_OK;
}
