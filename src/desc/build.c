/* Making descriptions in C: every add appends to one array of the
 * description, copying what it is given into the description's arena. */
#include <stdlib.h>
#include <string.h>

#include "desc_internal.h"

rig_desc *rig_desc_create(void) {
  rig_desc *d = calloc(1, sizeof *d);
  if (!d) return NULL;
  d->arena = rig_arena_create();
  if (!d->arena) {
    free(d);
    return NULL;
  }
  return d;
}

void rig_desc_free(rig_desc *d) {
  if (!d) return;
  rig_arena_free(d->arena);
  free(d);
}

rig_desc_string rig_desc_str(const char *s) {
  rig_desc_string r = {(const uint8_t *)s, s ? strlen(s) : 0};
  return r;
}

#define PUSH(d, items, n) rig_arena_push((d)->arena, &(items), &(n), sizeof *(items))

int64_t rig_desc_add_device(rig_desc *d, const char *arch) {
  rig_desc_string *s = PUSH(d, d->devices, d->ndevices);
  if (!s) return -1;
  bool ok = true;
  *s = rig_arena_string(d->arena, arch, strlen(arch), &ok);
  if (!ok) {
    d->ndevices--;
    return -1;
  }
  return (int64_t)d->ndevices - 1;
}

int64_t rig_desc_add_alloc(rig_desc *d, int64_t device, rig_buffer_kind kind, int64_t bytes,
                           rig_desc_copies copies) {
  rig_desc_memory *m = PUSH(d, d->memory, d->nmemory);
  if (!m) return -1;
  m->tag = RIG_MEMORY_ALLOC;
  m->u.alloc.device = device;
  m->u.alloc.kind = kind;
  m->u.alloc.bytes = bytes;
  m->u.alloc.copies = copies;
  return (int64_t)d->nmemory - 1;
}

int64_t rig_desc_add_rail(rig_desc *d, int64_t rail, rig_desc_area area) {
  rig_desc_memory *m = PUSH(d, d->memory, d->nmemory);
  if (!m) return -1;
  m->tag = RIG_MEMORY_RAIL;
  m->u.rail.rail = rail;
  m->u.rail.area = area;
  return (int64_t)d->nmemory - 1;
}

rig_status rig_desc_data_set(rig_desc *d, rig_desc_data *data, const void *bytes, size_t len) {
  bool ok = true;
  rig_desc_string s = rig_arena_string(d->arena, bytes, len, &ok);
  if (!ok) return RIG_ENOMEM;
  data->bytes = s;
  return RIG_OK;
}

int64_t rig_desc_add_image(rig_desc *d, int64_t device, const void *binary, size_t len) {
  rig_desc_image *im = PUSH(d, d->images, d->nimages);
  if (!im) return -1;
  im->device = device;
  if (rig_desc_data_set(d, &im->binary, binary, len) != RIG_OK) {
    d->nimages--;
    return -1;
  }
  return (int64_t)d->nimages - 1;
}

int64_t rig_desc_add_input(rig_desc *d, int64_t device, int64_t bytes) {
  rig_desc_input *in = PUSH(d, d->inputs, d->ninputs);
  if (!in) return -1;
  in->device = device;
  in->bytes = bytes;
  return (int64_t)d->ninputs - 1;
}

void rig_desc_set_ints(rig_desc *d, int64_t ints) {
  d->ints = ints;
}

rig_desc_data *rig_desc_memory_init(rig_desc *d, int64_t memory) {
  if (memory < 0 || (size_t)memory >= d->nmemory) return NULL;
  rig_desc_memory *m = &d->memory[memory];
  return m->tag == RIG_MEMORY_ALLOC ? &m->u.alloc.init : NULL;
}

rig_status rig_desc_memory_set_init(rig_desc *d, int64_t memory, const void *bytes, size_t len) {
  rig_desc_data *init = rig_desc_memory_init(d, memory);
  return init ? rig_desc_data_set(d, init, bytes, len) : RIG_EINVAL;
}

rig_desc_hole *rig_desc_data_add_hole(rig_desc *d, rig_desc_data *data, int64_t at,
                                      rig_desc_width width, int64_t add, int64_t shift) {
  rig_desc_hole *h = PUSH(d, data->holes, data->nholes);
  if (!h) return NULL;
  h->at = at;
  h->width = width;
  h->add = add;
  h->shift = shift;
  return h;
}

rig_status rig_desc_terms_add(rig_desc *d, rig_desc_terms *terms, rig_desc_value value,
                              int64_t factor) {
  if (value.tag == RIG_VALUE_LEAF && !rig_arena_own_leaf(d->arena, &value.u.leaf))
    return RIG_ENOMEM;
  rig_desc_term *t = PUSH(d, terms->items, terms->n);
  if (!t) return RIG_ENOMEM;
  t->value = value;
  t->factor = factor;
  return RIG_OK;
}

static rig_desc_steps *steps_of(rig_desc *d, rig_desc_step *loop) {
  return loop ? &loop->u.loop.body : &d->steps;
}

static rig_desc_step *add_step(rig_desc *d, rig_desc_step *loop, rig_desc_step_tag tag) {
  rig_desc_steps *steps = steps_of(d, loop);
  rig_desc_step *s = PUSH(d, steps->items, steps->n);
  if (s) s->tag = tag;
  return s;
}

rig_desc_submit *rig_desc_add_submit(rig_desc *d, rig_desc_step *loop, int64_t device) {
  rig_desc_step *s = add_step(d, loop, RIG_STEP_SUBMIT);
  if (!s) return NULL;
  s->u.submit.device = device;
  return &s->u.submit;
}

rig_desc_step *rig_desc_add_move(rig_desc *d, rig_desc_step *loop, rig_desc_slot src,
                                 rig_desc_slot dst, int64_t length) {
  rig_desc_step *s = add_step(d, loop, RIG_STEP_MOVE);
  if (!s) return NULL;
  s->u.move.src = src;
  s->u.move.dst = dst;
  s->u.move.length = length;
  return s;
}

rig_desc_step *rig_desc_add_loop(rig_desc *d, rig_desc_step *loop, rig_desc_value trips) {
  if (trips.tag == RIG_VALUE_LEAF && !rig_arena_own_leaf(d->arena, &trips.u.leaf)) return NULL;
  rig_desc_step *s = add_step(d, loop, RIG_STEP_LOOP);
  if (!s) return NULL;
  s->u.loop.trips = trips;
  return s;
}

void rig_desc_loop_set_trip(rig_desc_step *loop, int64_t trip) {
  loop->u.loop.has_trip = true;
  loop->u.loop.trip = trip;
}

void rig_desc_loop_set_flag(rig_desc_step *loop, rig_desc_slot slot, int64_t at) {
  loop->u.loop.has_flag = true;
  loop->u.loop.flag_slot = slot;
  loop->u.loop.flag_at = at;
}

int64_t rig_desc_submit_add_slot(rig_desc *d, rig_desc_submit *s, rig_desc_slot slot) {
  rig_desc_slot *p = PUSH(d, s->slots, s->nslots);
  if (!p) return -1;
  *p = slot;
  return (int64_t)s->nslots - 1;
}

rig_status rig_desc_submit_add_fixed(rig_desc *d, rig_desc_submit *s, rig_desc_view view,
                                     rig_access access) {
  rig_desc_fixed_view *f = PUSH(d, s->fixed, s->nfixed);
  if (!f) return RIG_ENOMEM;
  f->view = view;
  f->access = access;
  return RIG_OK;
}

rig_desc_part *rig_desc_submit_add_words(rig_desc *d, rig_desc_submit *s, rig_desc_view view) {
  rig_desc_part *p = PUSH(d, s->parts, s->nparts);
  if (!p) return NULL;
  p->tag = RIG_PART_WORDS;
  p->u.words = view;
  return p;
}

rig_desc_part *rig_desc_submit_add_fill(rig_desc *d, rig_desc_submit *s, rig_desc_leaf fill,
                                        const void *params, size_t len) {
  if (!rig_arena_own_leaf(d->arena, &fill)) return NULL;
  rig_desc_part *p = PUSH(d, s->parts, s->nparts);
  if (!p) return NULL;
  p->tag = RIG_PART_FILL;
  p->u.fill.fill = fill;
  if (rig_desc_data_set(d, &p->u.fill.params, params, len) != RIG_OK) {
    s->nparts--;
    return NULL;
  }
  return p;
}

rig_desc_part *rig_desc_submit_add_copy(rig_desc *d, rig_desc_submit *s, int64_t src, int64_t dst,
                                        int64_t length) {
  rig_desc_part *p = PUSH(d, s->parts, s->nparts);
  if (!p) return NULL;
  p->tag = RIG_PART_COPY;
  p->u.copy.src = src;
  p->u.copy.dst = dst;
  p->u.copy.length = length;
  return p;
}

rig_desc_part *rig_desc_submit_add_launch(rig_desc *d, rig_desc_submit *s, int64_t image,
                                          const char *name, const void *params, size_t len,
                                          rig_desc_value groups, rig_desc_value threads) {
  if (groups.tag == RIG_VALUE_LEAF && !rig_arena_own_leaf(d->arena, &groups.u.leaf)) return NULL;
  if (threads.tag == RIG_VALUE_LEAF && !rig_arena_own_leaf(d->arena, &threads.u.leaf)) return NULL;
  rig_desc_part *p = PUSH(d, s->parts, s->nparts);
  if (!p) return NULL;
  p->tag = RIG_PART_LAUNCH;
  p->u.launch.image = image;
  bool ok = true;
  p->u.launch.name = rig_arena_string(d->arena, name, strlen(name), &ok);
  if (!ok || rig_desc_data_set(d, &p->u.launch.params, params, len) != RIG_OK) {
    s->nparts--;
    return NULL;
  }
  p->u.launch.groups[0] = groups;
  p->u.launch.groups[1] = rig_desc_fixed(1);
  p->u.launch.groups[2] = rig_desc_fixed(1);
  p->u.launch.threads[0] = threads;
  p->u.launch.threads[1] = rig_desc_fixed(1);
  p->u.launch.threads[2] = rig_desc_fixed(1);
  p->u.launch.shared = rig_desc_fixed(0);
  return p;
}

rig_status rig_desc_part_add_ref(rig_desc *d, rig_desc_part *part, int64_t slot, int64_t at,
                                 rig_desc_use use) {
  rig_desc_ref *r;
  if (part->tag == RIG_PART_FILL)
    r = PUSH(d, part->u.fill.refs, part->u.fill.nrefs);
  else if (part->tag == RIG_PART_LAUNCH)
    r = PUSH(d, part->u.launch.refs, part->u.launch.nrefs);
  else
    return RIG_EINVAL; /* only fills and launches have refs */
  if (!r) return RIG_ENOMEM;
  r->slot = slot;
  r->at = at;
  r->use = use;
  return RIG_OK;
}

rig_desc_data *rig_desc_part_params(rig_desc_part *part) {
  if (part->tag == RIG_PART_FILL) return &part->u.fill.params;
  if (part->tag == RIG_PART_LAUNCH) return &part->u.launch.params;
  return NULL;
}
