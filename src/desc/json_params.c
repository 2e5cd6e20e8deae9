/* A part's params written as a list of typed parameters (docs/json.md,
 * "Typed parameters"): each element a value, a ref or a hole in its place,
 * laid out as a C compiler lays out a struct of the same fields, so that
 * nobody counts offsets by hand. Only the reader knows this form: it makes
 * the same data and refs as the explicit form with those offsets, and the
 * writer writes that explicit form. */
#include <string.h>

#include "json_read.h"

#define PARAM_CHOICES                                                                              \
  "u8, u16, u32, u64, i8, i16, i32, i64, f32, f64, hex, pad, ref, int, leaf, hole"

/* The list as it is laid out so far: the first pass measures and makes the
 * holes and refs, the second (bytes not NULL) writes the values' bytes. */
typedef struct layout {
  uint8_t *bytes;
  size_t len, align; /* align: the largest of the elements' */
  rig_desc_data *params;
  rig_desc_ref **refs;
  size_t *nrefs;
} layout;

/* The offset of an element of `size` bytes aligned to `align`: the next
 * multiple of align, as in a struct. */
static size_t place(layout *l, size_t size, size_t align) {
  size_t at = (l->len + align - 1) / align * align;
  l->len = at + size;
  if (align > l->align) l->align = align;
  return at;
}

static size_t width_bytes(rig_desc_width w) {
  return w == RIG_W32 ? 4 : 8;
}

/* A hole of `width` at its place, its terms made by the caller. */
static rig_desc_hole *add_hole(reader *r, layout *l, rig_desc_width width) {
  size_t at = place(l, width_bytes(width), width_bytes(width));
  if (l->bytes) return NULL;
  rig_desc_data *p = l->params;
  rig_desc_hole *h = rig_arena_push(r->arena, &p->holes, &p->nholes, sizeof *h);
  if (!h) jr_fail_nomem(r);
  h->at = (int64_t)at;
  h->width = width;
  return h;
}

/* A hole whose one term is v, times 1. */
static void add_term_hole(reader *r, layout *l, rig_desc_width width, rig_desc_value v) {
  rig_desc_hole *h = add_hole(r, l, width);
  if (!h) return;
  rig_desc_term *t = rig_arena_push(r->arena, &h->terms.items, &h->terms.n, sizeof *t);
  if (!t) jr_fail_nomem(r);
  t->value = v;
  t->factor = 1;
}

/* A field the form computes may not be given. */
static void refuse_at(reader *r, json_t *obj) {
  if (json_is_object(obj) && json_object_get(obj, "at"))
    jr_fail(r, "\"at\" is computed from the place in the list (leave it out)");
}

/* {"ref": {"slot": k, "use": USE}}: an address, 8 bytes aligned to 8. */
static void read_ref(reader *r, json_t *j, void *out) {
  layout *l = out;
  refuse_at(r, j);
  jr_record(r, j, FIELDS("slot", "use"));
  rig_desc_ref ref = {0};
  jr_field(r, j, "slot", jr_read_int, &ref.slot);
  ref.use = jr_enum_field(r, j, "use", &jr_use_v);
  ref.at = (int64_t)place(l, 8, 8);
  if (l->bytes) return;
  rig_desc_ref *p = rig_arena_push(r->arena, l->refs, l->nrefs, sizeof *p);
  if (!p) jr_fail_nomem(r);
  *p = ref;
}

/* {"leaf": LEAF}: the leaf's 8 bytes (an Address, a Ready, ...). */
static void read_leaf(reader *r, json_t *j, void *out) {
  rig_desc_value v = {.tag = RIG_VALUE_LEAF};
  jr_read_leaf(r, j, &v.u.leaf);
  add_term_hole(r, out, RIG_W64, v);
}

/* {"hole": {"width": W, "terms": [...], "add": n, "shift": s}}: any hole. */
static void read_hole(reader *r, json_t *j, void *out) {
  refuse_at(r, j);
  jr_record(r, j, FIELDS("width", "terms", "add", "shift"));
  rig_desc_hole h = {.width = jr_enum_field(r, j, "width", &jr_width_v)};
  jr_opt_field(r, j, "terms", jr_read_terms, &h.terms);
  jr_opt_field(r, j, "add", jr_read_int, &h.add);
  jr_opt_field(r, j, "shift", jr_read_int, &h.shift);
  rig_desc_hole *p = add_hole(r, out, h.width);
  if (p) {
    h.at = p->at;
    *p = h;
  }
}

/* {"pad": n}: n zero bytes, where the element before ends. */
static void read_pad(reader *r, json_t *j, void *out) {
  int64_t n;
  jr_read_int(r, j, &n);
  if (n < 0 || n > RIG_DESC_MAX_PARAMS)
    jr_fail(r, "%lld bytes of padding, not 0 to %d", (long long)n, RIG_DESC_MAX_PARAMS);
  place(out, (size_t)n, 1);
}

/* {"int": i, "width": W}: int i of the run's frame, in its width. */
static void read_int_hole(reader *r, json_t *j, layout *l) {
  jr_record(r, j, FIELDS("int", "width"));
  rig_desc_value v = {.tag = RIG_VALUE_INT};
  jr_field(r, j, "int", jr_read_int, &v.u.int_index);
  add_term_hole(r, l, jr_enum_field(r, j, "width", &jr_width_v), v);
}

static const struct {
  const char *key;
  read_fn *fn;
} kinds[] = {{"ref", read_ref}, {"leaf", read_leaf}, {"hole", read_hole}, {"pad", read_pad}};

static const char *const values[] = {"u8",  "u16", "u32", "u64", "i8",  "i16",
                                     "i32", "i64", "f32", "f64", "hex", NULL};

/* One element, at the path's [i]: a typed value aligned to its size (hex
 * to 1), or a kind of the list's own. */
static void read_param(reader *r, json_t *j, void *out) {
  layout *l = out;
  if (json_is_object(j) && json_object_get(j, "int")) {
    read_int_hole(r, j, l);
    return;
  }
  if (!json_is_object(j) || json_object_size(j) != 1)
    jr_fail(r, "not a typed parameter (an object of one key: " PARAM_CHOICES ")");
  void *it = json_object_iter(j);
  const char *key = json_object_iter_key(it);
  for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
    if (strcmp(key, kinds[k].key) != 0) continue;
    jr_field(r, j, key, kinds[k].fn, l);
    return;
  }
  for (const char *const *v = values; *v; v++) {
    if (strcmp(key, *v) != 0) continue;
    size_t size = jr_typed_value(r, j, NULL);
    size_t at = place(l, size, key[0] == 'h' ? 1 : size);
    if (l->bytes) jr_typed_value(r, j, l->bytes + at);
    return;
  }
  char q[QUOTE_ROOM];
  jr_fail(r, "%s is not a typed parameter (" PARAM_CHOICES ")", jr_quote(key, q, sizeof q));
}

/* The list laid out: its length rounded up to its largest alignment, as a
 * struct's size is, so that a kernel copying its struct reads no byte past
 * the parameters. */
static void lay_out(reader *r, json_t *list, layout *l) {
  l->len = 0;
  l->align = 1;
  for (size_t i = 0; i < json_array_size(list); i++) jr_element(r, list, i, read_param, l);
  l->len = (l->len + l->align - 1) / l->align * l->align;
}

void jr_read_params(reader *r, json_t *list, rig_desc_data *params, rig_desc_ref **refs,
                    size_t *nrefs) {
  layout l = {NULL, 0, 1, params, refs, nrefs};
  lay_out(r, list, &l);
  /* Zeroed: the padding, and the holes' and refs' bytes. */
  l.bytes = rig_arena_alloc(r->arena, l.len ? l.len : 1, true);
  if (!l.bytes) jr_fail_nomem(r);
  size_t len = l.len;
  lay_out(r, list, &l);
  params->bytes = (rig_desc_string){l.bytes, len};
}
