/* The readable listing of a description (rig_desc_listing), which
 * `progrun dump` prints and Python's Description.dump returns: every
 * field, one thing a line, nested by indentation, steps numbered in
 * pre-order as the checker's messages number them. The layout is stable
 * (tests and scripts read it); docs/cli.md shows it. */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>

#include <stdlib.h>

#include "rig/rig_desc.h"

/* Data bytes up to this many are listed whole; longer ones (an image's code)
 * by their start and a digest, so the listing stays readable. */
#define DUMP_BYTES_WHOLE 256
#define DUMP_BYTES_HEAD  32
#define DUMP_BYTES_LINE  32

static const char *plural(int64_t n, const char *one, const char *many) {
  return n == 1 ? one : many;
}

static void indent(FILE *f, int depth) {
  fprintf(f, "%*s", 2 * depth, "");
}

static void hex(FILE *f, const uint8_t *b, size_t n) {
  for (size_t i = 0; i < n; i++) fprintf(f, "%02x", b[i]);
}

/* A string in double quotes when it is printable ASCII with no quote or
 * backslash (so that it reads back unambiguously), else 0x and its hex;
 * `bare` drops the quotes of a non-empty string without spaces. */
static void str(FILE *f, rig_desc_string s, bool bare) {
  bool printable = true, spaces = false;
  for (size_t i = 0; i < s.len; i++) {
    uint8_t c = s.bytes[i];
    if (c < 0x20 || c > 0x7e || c == '"' || c == '\\') printable = false;
    if (c == ' ') spaces = true;
  }
  if (s.len == 0) {
    fputs("\"\"", f);
  } else if (!printable) {
    fputs("0x", f);
    hex(f, s.bytes, s.len);
  } else if (bare && !spaces) {
    fprintf(f, "%.*s", (int)s.len, (const char *)s.bytes);
  } else {
    fprintf(f, "\"%.*s\"", (int)s.len, (const char *)s.bytes);
  }
}

static void leaf(FILE *f, const rig_desc_leaf *l) {
  switch (l->tag) {
    case RIG_LEAF_ADDRESS:
      fprintf(f, "Address(memory %" PRId64 ", on %" PRId64 ")", l->u.address.memory,
              l->u.address.on);
      return;
    case RIG_LEAF_HANDLE:
      fprintf(f, "Handle(memory %" PRId64 ")", l->u.handle);
      return;
    case RIG_LEAF_ENTRY:
      fprintf(f, "Entry(image %" PRId64 ", ", l->u.entry.image);
      str(f, l->u.entry.name, false);
      fputc(')', f);
      return;
    case RIG_LEAF_READY:
      fprintf(f, "Ready(rail %" PRId64 ")", l->u.ready);
      return;
  }
  fprintf(f, "leaf?%d", (int)l->tag);
}

static void value(FILE *f, const rig_desc_value *v) {
  switch (v->tag) {
    case RIG_VALUE_FIXED:
      fprintf(f, "Fixed(%" PRId64 ")", v->u.fixed);
      return;
    case RIG_VALUE_INT:
      fprintf(f, "Int(%" PRId64 ")", v->u.int_index);
      return;
    case RIG_VALUE_LEAF:
      /* A Leaf value reads as its leaf: Fixed and Int are named apart. */
      leaf(f, &v->u.leaf);
      return;
  }
  fprintf(f, "value?%d", (int)v->tag);
}

/* Terms as value*factor, in the seed's (value, factor) order. */
static void terms(FILE *f, const rig_desc_terms *t, const char *sep) {
  for (size_t i = 0; i < t->n; i++) {
    if (i) fputs(sep, f);
    value(f, &t->items[i].value);
    fprintf(f, "*%" PRId64, t->items[i].factor);
  }
}

static void offset(FILE *f, const rig_desc_terms *t) {
  fputs("+[", f);
  terms(f, t, ", ");
  fputc(']', f);
}

static void view(FILE *f, const rig_desc_view *v) {
  fprintf(f, "memory %" PRId64 ", offset %" PRId64 ", length %" PRId64, v->memory, v->offset,
          v->length);
}

static void slot(FILE *f, const rig_desc_slot *s) {
  switch (s->tag) {
    case RIG_SLOT_MEMORY:
      fputs("Memory(", f);
      view(f, &s->u.memory);
      fputc(')', f);
      return;
    case RIG_SLOT_INPUT:
      fprintf(f, "Input(%" PRId64 ")", s->u.input);
      return;
    case RIG_SLOT_INTS:
      fputs("Ints", f);
      return;
  }
  fprintf(f, "slot?%d", (int)s->tag);
}

/* FNV-1a, 64 bits: a digest that tells long bytes apart in a listing. */
static uint64_t fnv1a(const uint8_t *b, size_t n) {
  uint64_t h = UINT64_C(0xcbf29ce484222325);
  for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * UINT64_C(0x100000001b3);
  return h;
}

static void bytes(FILE *f, int depth, rig_desc_string s) {
  if (s.len == 0) return;
  indent(f, depth);
  fputs("bytes: ", f);
  if (s.len > DUMP_BYTES_WHOLE) {
    hex(f, s.bytes, DUMP_BYTES_HEAD);
    fprintf(f, "... (%zu bytes, fnv1a-64 %016" PRIx64 ")\n", s.len, fnv1a(s.bytes, s.len));
    return;
  }
  for (size_t at = 0; at < s.len; at += DUMP_BYTES_LINE) {
    if (at) fprintf(f, "%*s", 2 * depth + 7, "");
    size_t n = s.len - at < DUMP_BYTES_LINE ? s.len - at : DUMP_BYTES_LINE;
    hex(f, s.bytes + at, n);
    fputc('\n', f);
  }
}

static void hole(FILE *f, int depth, const rig_desc_hole *h) {
  indent(f, depth);
  fprintf(f, "hole at %" PRId64 " %s = ", h->at, rig_desc_width_name(h->width));
  terms(f, &h->terms, " + ");
  fprintf(f, "%s%" PRId64 " >> %" PRId64 "\n", h->terms.n ? " + " : "", h->add, h->shift);
}

/* The data's bytes and holes, one level below its owner's line. */
static void data_body(FILE *f, int depth, const rig_desc_data *d) {
  bytes(f, depth, d->bytes);
  for (size_t i = 0; i < d->nholes; i++) hole(f, depth, &d->holes[i]);
}

static void data_summary(FILE *f, const rig_desc_data *d) {
  fprintf(f, "%zu %s, %zu %s", d->bytes.len, plural((int64_t)d->bytes.len, "byte", "bytes"),
          d->nholes, plural((int64_t)d->nholes, "hole", "holes"));
}

static void refs(FILE *f, int depth, const rig_desc_ref *r, size_t n) {
  for (size_t i = 0; i < n; i++) {
    indent(f, depth);
    fprintf(f, "ref slot %" PRId64 " at %" PRId64 " %s\n", r[i].slot, r[i].at,
            rig_desc_use_name(r[i].use));
  }
}

static void triple(FILE *f, const rig_desc_value v[3]) {
  fputc('(', f);
  for (int i = 0; i < 3; i++) {
    if (i) fputs(", ", f);
    value(f, &v[i]);
  }
  fputc(')', f);
}

static void part(FILE *f, int depth, size_t i, const rig_desc_part *p) {
  indent(f, depth);
  fprintf(f, "%zu ", i);
  switch (p->tag) {
    case RIG_PART_WORDS:
      fputs("Words ", f);
      view(f, &p->u.words);
      fputc('\n', f);
      return;
    case RIG_PART_FILL:
      fputs("Fill ", f);
      leaf(f, &p->u.fill.fill);
      fputs(", params ", f);
      data_summary(f, &p->u.fill.params);
      fprintf(f, ", %zu %s\n", p->u.fill.nrefs, plural((int64_t)p->u.fill.nrefs, "ref", "refs"));
      data_body(f, depth + 1, &p->u.fill.params);
      refs(f, depth + 1, p->u.fill.refs, p->u.fill.nrefs);
      return;
    case RIG_PART_COPY:
      fprintf(f, "Copy slot %" PRId64 " ", p->u.copy.src);
      offset(f, &p->u.copy.src_offset);
      fprintf(f, " -> slot %" PRId64 " ", p->u.copy.dst);
      offset(f, &p->u.copy.dst_offset);
      fprintf(f, " length %" PRId64 "\n", p->u.copy.length);
      return;
    case RIG_PART_LAUNCH:
      fprintf(f, "Launch image %" PRId64 " ", p->u.launch.image);
      str(f, p->u.launch.name, false);
      fputs(", params ", f);
      data_summary(f, &p->u.launch.params);
      fprintf(f, ", %zu %s\n", p->u.launch.nrefs,
              plural((int64_t)p->u.launch.nrefs, "ref", "refs"));
      /* The geometry on a line of its own keeps the part's line short. */
      indent(f, depth + 1);
      fputs("groups ", f);
      triple(f, p->u.launch.groups);
      fputs(", threads ", f);
      triple(f, p->u.launch.threads);
      fputs(", shared ", f);
      value(f, &p->u.launch.shared);
      fputc('\n', f);
      data_body(f, depth + 1, &p->u.launch.params);
      refs(f, depth + 1, p->u.launch.refs, p->u.launch.nrefs);
      return;
  }
  fprintf(f, "part?%d\n", (int)p->tag);
}

/* A section's title, and "(none)" under it when it is empty, so that every
 * section is always there to find. */
static bool section(FILE *f, int depth, const char *title, size_t n) {
  indent(f, depth);
  fprintf(f, "%s:\n", title);
  if (n == 0) {
    indent(f, depth + 1);
    fputs("(none)\n", f);
  }
  return n > 0;
}

static void submit(FILE *f, int depth, const rig_desc_submit *s) {
  fprintf(f, "Submit on device %" PRId64 "\n", s->device);
  if (section(f, depth, "parts", s->nparts))
    for (size_t i = 0; i < s->nparts; i++) part(f, depth + 1, i, &s->parts[i]);
  if (section(f, depth, "slots", s->nslots))
    for (size_t i = 0; i < s->nslots; i++) {
      indent(f, depth + 1);
      fprintf(f, "%zu ", i);
      slot(f, &s->slots[i]);
      fputc('\n', f);
    }
  if (section(f, depth, "fixed", s->nfixed))
    for (size_t i = 0; i < s->nfixed; i++) {
      indent(f, depth + 1);
      view(f, &s->fixed[i].view);
      fprintf(f, ", %s\n", rig_desc_access_name(s->fixed[i].access));
    }
}

static void steps(FILE *f, int depth, const rig_desc_steps *ss, size_t *number) {
  for (size_t i = 0; i < ss->n; i++) {
    const rig_desc_step *s = &ss->items[i];
    indent(f, depth);
    fprintf(f, "step %zu: ", (*number)++);
    switch (s->tag) {
      case RIG_STEP_SUBMIT:
        submit(f, depth + 1, &s->u.submit);
        break;
      case RIG_STEP_MOVE:
        fputs("Move ", f);
        slot(f, &s->u.move.src);
        fputc(' ', f);
        offset(f, &s->u.move.src_offset);
        fputs(" -> ", f);
        slot(f, &s->u.move.dst);
        fputc(' ', f);
        offset(f, &s->u.move.dst_offset);
        fprintf(f, " length %" PRId64 "\n", s->u.move.length);
        break;
      case RIG_STEP_LOOP:
        fputs("Loop trips ", f);
        value(f, &s->u.loop.trips);
        if (s->u.loop.has_trip)
          fprintf(f, ", trip int %" PRId64, s->u.loop.trip);
        else
          fputs(", trip none", f);
        if (s->u.loop.has_flag) {
          fputs(", flag ", f);
          slot(f, &s->u.loop.flag_slot);
          fprintf(f, " at %" PRId64, s->u.loop.flag_at);
        } else {
          fputs(", flag none", f);
        }
        fprintf(f, ", body %zu %s\n", s->u.loop.body.n,
                plural((int64_t)s->u.loop.body.n, "step", "steps"));
        steps(f, depth + 1, &s->u.loop.body, number);
        break;
      default:
        fprintf(f, "step?%d\n", (int)s->tag);
        break;
    }
  }
}

static void memory(FILE *f, size_t i, const rig_desc_memory *m) {
  indent(f, 1);
  fprintf(f, "%zu ", i);
  switch (m->tag) {
    case RIG_MEMORY_ALLOC:
      fprintf(f, "Alloc device %" PRId64 ", %s, %" PRId64 " %s, %s %s\n", m->u.alloc.device,
              rig_desc_kind_name(m->u.alloc.kind), m->u.alloc.bytes,
              plural(m->u.alloc.bytes, "byte", "bytes"), rig_desc_copies_name(m->u.alloc.copies),
              m->u.alloc.copies == RIG_COPIES_ONE ? "copy" : "copies");
      indent(f, 2);
      fputs("init: ", f);
      data_summary(f, &m->u.alloc.init);
      fputc('\n', f);
      data_body(f, 3, &m->u.alloc.init);
      return;
    case RIG_MEMORY_RAIL:
      fprintf(f, "Rail rail %" PRId64 ", %s\n", m->u.rail.rail, rig_desc_area_name(m->u.rail.area));
      return;
  }
  fprintf(f, "memory?%d\n", (int)m->tag);
}

static void list_desc(FILE *f, const rig_desc *d) {
  size_t nsteps = rig_desc_count_steps(d);
  fprintf(f, "program: %zu %s, %zu memory, %zu %s, %zu %s, %" PRId64 " %s, %zu %s\n", d->ndevices,
          plural((int64_t)d->ndevices, "device", "devices"), d->nmemory, d->nimages,
          plural((int64_t)d->nimages, "image", "images"), d->ninputs,
          plural((int64_t)d->ninputs, "input", "inputs"), d->ints, plural(d->ints, "int", "ints"),
          nsteps, plural((int64_t)nsteps, "step", "steps"));
  if (section(f, 0, "devices", d->ndevices))
    for (size_t i = 0; i < d->ndevices; i++) {
      indent(f, 1);
      fprintf(f, "%zu ", i);
      str(f, d->devices[i], true);
      fputc('\n', f);
    }
  if (section(f, 0, "memory", d->nmemory))
    for (size_t i = 0; i < d->nmemory; i++) memory(f, i, &d->memory[i]);
  if (section(f, 0, "images", d->nimages))
    for (size_t i = 0; i < d->nimages; i++) {
      indent(f, 1);
      fprintf(f, "%zu device %" PRId64 ", ", i, d->images[i].device);
      data_summary(f, &d->images[i].binary);
      fputc('\n', f);
      data_body(f, 2, &d->images[i].binary);
    }
  if (section(f, 0, "inputs", d->ninputs))
    for (size_t i = 0; i < d->ninputs; i++) {
      indent(f, 1);
      fprintf(f, "%zu device %" PRId64 ", %" PRId64 " %s\n", i, d->inputs[i].device,
              d->inputs[i].bytes, plural(d->inputs[i].bytes, "byte", "bytes"));
    }
  size_t number = 0;
  if (section(f, 0, "steps", d->steps.n)) steps(f, 1, &d->steps, &number);
}

rig_status rig_desc_listing(const rig_desc *d, char **text, rig_error *err) {
  char *buf = NULL;
  size_t len = 0;
  *text = NULL;
  FILE *f = open_memstream(&buf, &len);
  if (!f) return rig_error_set(err, RIG_ENOMEM, "out of memory for a description's listing");
  list_desc(f, d);
  bool bad = ferror(f) != 0;
  if (fclose(f) != 0 || bad) {
    free(buf);
    return rig_error_set(err, RIG_ENOMEM, "out of memory for a description's listing");
  }
  *text = buf;
  return RIG_OK;
}
