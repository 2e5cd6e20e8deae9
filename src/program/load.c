/* Loading a program (docs/program.md "What load makes"): the rules that need
 * devices and rails, then every rule of the description, before anything
 * is made; then the ints, the memory, the images (holes filled), a
 * submission per Submit step and copy, and every init, written last. A
 * failure releases everything made. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/bytes.h"
#include "program_internal.h"

/* ---- the rules that need devices and rails -------------------------------- */

static bool same_arch(const rig_desc_string *want, const char *have) {
  return strlen(have) == want->len && memcmp(have, want->bytes, want->len) == 0;
}

static rig_status check_devices(const rig_desc *d, rig_device *const *devices, size_t n,
                                rig_error *err) {
  if (n != d->ndevices)
    return rig_error_set(err, RIG_EINVAL, "%zu devices for a program of %zu", n, d->ndevices);
  for (size_t i = 0; i < n; i++) {
    if (!devices[i]) return rig_error_set(err, RIG_EINVAL, "device %zu: no device", i);
    if (!same_arch(&d->devices[i], rig_device_arch(devices[i])))
      return rig_error_set(err, RIG_EINVAL, "device %zu: %s is \"%s\", not \"%.*s\"", i,
                           rig_device_name(devices[i]), rig_device_arch(devices[i]),
                           (int)(d->devices[i].len > 64 ? 64 : d->devices[i].len),
                           (const char *)d->devices[i].bytes);
  }
  for (size_t i = 1; i < n; i++)
    if (rig_device_facts_of(devices[i])->machine != rig_device_facts_of(devices[0])->machine)
      return rig_error_set(err, RIG_EINVAL, "devices of several machines");
  return RIG_OK;
}

static bool has_rail(const rig_rails *rails, int64_t id) {
  return rails && rails->lookup && rails->lookup(rails->ctx, id);
}

static rig_status check_leaf_rail(const rig_rails *rails, const rig_desc_leaf *l, rig_error *err) {
  if (l->tag == RIG_LEAF_READY && !has_rail(rails, l->u.ready))
    return rig_error_set(err, RIG_EINVAL, "no rail %lld on this machine", (long long)l->u.ready);
  return RIG_OK;
}

static rig_status check_value_rail(const rig_rails *rails, const rig_desc_value *v,
                                   rig_error *err) {
  return v->tag == RIG_VALUE_LEAF ? check_leaf_rail(rails, &v->u.leaf, err) : RIG_OK;
}

static rig_status check_data_rails(const rig_rails *rails, const rig_desc_data *data,
                                   rig_error *err) {
  rig_status st = RIG_OK;
  for (size_t h = 0; st == RIG_OK && h < data->nholes; h++)
    for (size_t t = 0; st == RIG_OK && t < data->holes[h].terms.n; t++)
      st = check_value_rail(rails, &data->holes[h].terms.items[t].value, err);
  return st;
}

static rig_status check_part_rails(const rig_rails *rails, const rig_desc_part *p, rig_error *err) {
  rig_status st = RIG_OK;
  if (p->tag == RIG_PART_FILL) st = check_leaf_rail(rails, &p->u.fill.fill, err);
  const rig_desc_data *params = rig_program_part_params(p);
  if (st == RIG_OK && params) st = check_data_rails(rails, params, err);
  if (p->tag == RIG_PART_LAUNCH) {
    for (int g = 0; st == RIG_OK && g < 3; g++)
      st = check_value_rail(rails, &p->u.launch.groups[g], err);
    for (int g = 0; st == RIG_OK && g < 3; g++)
      st = check_value_rail(rails, &p->u.launch.threads[g], err);
    if (st == RIG_OK) st = check_value_rail(rails, &p->u.launch.shared, err);
  }
  return st;
}

static rig_status check_steps_rails(const rig_rails *rails, const rig_desc_steps *steps,
                                    rig_error *err) {
  rig_status st = RIG_OK;
  for (size_t i = 0; st == RIG_OK && i < steps->n; i++) {
    const rig_desc_step *s = &steps->items[i];
    if (s->tag == RIG_STEP_LOOP) {
      st = check_value_rail(rails, &s->u.loop.trips, err);
      if (st == RIG_OK) st = check_steps_rails(rails, &s->u.loop.body, err);
    } else if (s->tag == RIG_STEP_SUBMIT) {
      for (size_t j = 0; st == RIG_OK && j < s->u.submit.nparts; j++)
        st = check_part_rails(rails, &s->u.submit.parts[j], err);
    }
  }
  return st;
}

static rig_status check_rails(const rig_desc *d, const rig_rails *rails, rig_error *err) {
  rig_status st = RIG_OK;
  for (size_t m = 0; st == RIG_OK && m < d->nmemory; m++) {
    const rig_desc_memory *mem = &d->memory[m];
    if (mem->tag == RIG_MEMORY_RAIL && !has_rail(rails, mem->u.rail.rail))
      st = rig_error_set(err, RIG_EINVAL, "no rail %lld on this machine",
                         (long long)mem->u.rail.rail);
    else if (mem->tag == RIG_MEMORY_ALLOC)
      st = check_data_rails(rails, &mem->u.alloc.init, err);
  }
  for (size_t k = 0; st == RIG_OK && k < d->nimages; k++)
    st = check_data_rails(rails, &d->images[k].binary, err);
  return st == RIG_OK ? check_steps_rails(rails, &d->steps, err) : st;
}

static rig_buffer *area_of(const rig_rail_end *end, rig_desc_area area) {
  return area == RIG_AREA_OUTBOUND  ? end->outbound
         : area == RIG_AREA_INBOUND ? end->inbound
                                    : end->counts;
}

static int64_t area_bytes(void *ctx, int64_t rail, rig_desc_area area) {
  const rig_rails *rails = ctx;
  const rig_rail_end *end = rails->lookup(rails->ctx, rail);
  rig_buffer *b = end ? area_of(end, area) : NULL;
  return b ? (int64_t)rig_buffer_length(b) : -1;
}

/* ---- what load will make, before it makes anything --------------------------- */

static uint64_t add_sat(uint64_t a, uint64_t b) {
  return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* Index of the first of devices[0..n) that is dev; n if none. */
static size_t first_of(rig_device *const *devices, size_t n, const rig_device *dev) {
  for (size_t i = 0; i < n; i++)
    if (devices[i] == dev) return i;
  return n;
}

/* What load makes on each device (its memory, one or two copies; its
 * images; on the host, the two copies of the ints), within each device's
 * budget: a program too big for its machine is refused whole, rather than
 * made until the machine runs out. */
static rig_status check_budget(const rig_desc *d, rig_device *const *devices, size_t n,
                               rig_error *err) {
  /* Entry n: the host, when the program has no device of it. */
  uint64_t *total = calloc(n + 1, sizeof *total);
  if (!total) return rig_error_set(err, RIG_ENOMEM, "out of memory loading a program");
  rig_device *host = rig_host();
  size_t h = first_of(devices, n, host);
  uint64_t ints = (uint64_t)d->ints * 8;
  total[h] = add_sat(total[h], add_sat(add_sat(ints, ints), 8));
  for (size_t m = 0; m < d->nmemory; m++) {
    const rig_desc_memory *mem = &d->memory[m];
    if (mem->tag != RIG_MEMORY_ALLOC) continue; /* a rail's areas are made already */
    size_t i = first_of(devices, n, devices[mem->u.alloc.device]);
    uint64_t b = (uint64_t)mem->u.alloc.bytes;
    total[i] = add_sat(total[i], mem->u.alloc.copies == RIG_COPIES_TWO ? add_sat(b, b) : b);
  }
  for (size_t k = 0; k < d->nimages; k++) {
    size_t i = first_of(devices, n, devices[d->images[k].device]);
    total[i] = add_sat(total[i], d->images[k].binary.bytes.len);
  }
  rig_status st = RIG_OK;
  for (size_t i = 0; st == RIG_OK && i <= n; i++) {
    const rig_device *dev = i < n ? devices[i] : host;
    uint64_t budget = rig_device_facts_of(dev)->budget;
    if (!budget || total[i] <= budget) continue; /* 0: a budget the device does not know */
    char want[32], has[32];
    rig_say_bytes(total[i], want, sizeof want);
    rig_say_bytes(budget, has, sizeof has);
    if (strcmp(want, has) == 0) {
      snprintf(want, sizeof want, "%llu bytes", (unsigned long long)total[i]);
      snprintf(has, sizeof has, "%llu bytes", (unsigned long long)budget);
    }
    st = rig_error_set(err, RIG_ENOMEM, "out of memory: %s for %s, which has %s", want,
                       rig_device_name(dev), has);
  }
  free(total);
  return st;
}

/* The launch geometry no run changes, by the rule each run applies:
 * refused here rather than by every run, before anything is made. Its
 * function's thread limit is known once its image is loaded
 * (rig_program_prepare checks it then). */
static rig_status check_geometry(const rig_desc_steps *steps, rig_device *const *devices,
                                 int64_t *number, rig_error *err) {
  for (size_t j = 0; j < steps->n; j++) {
    const rig_desc_step *s = &steps->items[j];
    int64_t me = (*number)++;
    if (s->tag == RIG_STEP_LOOP) {
      rig_status st = check_geometry(&s->u.loop.body, devices, number, err);
      if (st != RIG_OK) return st;
    } else if (s->tag == RIG_STEP_SUBMIT) {
      const rig_desc_submit *sub = &s->u.submit;
      for (size_t i = 0; i < sub->nparts; i++) {
        if (sub->parts[i].tag != RIG_PART_LAUNCH) continue;
        uint32_t g[7];
        rig_status st = rig_program_load_geometry(NULL, 0, devices[sub->device], me, i,
                                                  &sub->parts[i], 0, g, err);
        if (st != RIG_OK) return st;
      }
    }
  }
  return RIG_OK;
}

/* ---- what every program has ------------------------------------------------ */

/* Counts the Submit steps and the launches, and notes the inputs a step
 * writes. */
static void count_steps(rig_program *p, const rig_desc_steps *steps) {
  for (size_t j = 0; j < steps->n; j++) {
    const rig_desc_step *s = &steps->items[j];
    if (s->tag == RIG_STEP_SUBMIT) {
      const rig_desc_submit *sub = &s->u.submit;
      p->nsubmits++;
      for (size_t k = 0; k < sub->nparts; k++) {
        const rig_desc_part *part = &sub->parts[k];
        size_t nrefs;
        const rig_desc_ref *refs = rig_program_part_refs(part, &nrefs);
        for (size_t r = 0; r < nrefs; r++) {
          const rig_desc_slot *slot = &sub->slots[refs[r].slot];
          if (slot->tag == RIG_SLOT_INPUT && refs[r].use != RIG_USE_READ)
            p->input_written[slot->u.input] = true;
        }
        if (part->tag == RIG_PART_COPY) {
          const rig_desc_slot *dst = &sub->slots[part->u.copy.dst];
          if (dst->tag == RIG_SLOT_INPUT) p->input_written[dst->u.input] = true;
        }
        if (part->tag == RIG_PART_LAUNCH) p->nlaunches++;
      }
    } else if (s->tag == RIG_STEP_MOVE) {
      if (s->u.move.dst.tag == RIG_SLOT_INPUT) p->input_written[s->u.move.dst.u.input] = true;
    } else {
      count_steps(p, &s->u.loop.body);
    }
  }
}

static rig_status make_head(rig_program *p, rig_device *const *devices, rig_error *err) {
  const rig_desc *d = p->desc;
  p->devices = calloc(p->ndevices ? p->ndevices : 1, sizeof *p->devices);
  p->input_written = calloc(d->ninputs ? d->ninputs : 1, sizeof *p->input_written);
  if (!p->devices || !p->input_written)
    return rig_error_set(err, RIG_ENOMEM, "out of memory loading a program");
  for (size_t i = 0; i < p->ndevices; i++) p->devices[i] = devices[i];
  count_steps(p, &d->steps);
  p->threads = calloc(p->nlaunches ? p->nlaunches : 1, sizeof *p->threads);
  if (!p->threads) return rig_error_set(err, RIG_ENOMEM, "out of memory loading a program");
  return RIG_OK;
}

/* ---- a program of this machine ---------------------------------------------- */

/* Numbers the steps in pre-order and notes what runs pass to devices;
 * *terms: the most terms a move's offsets need, and one. */
static void number_steps(rig_program *p, const rig_desc_steps *steps, size_t *i, size_t *submits,
                         size_t *terms) {
  plocal *l = p->local;
  for (size_t j = 0; j < steps->n; j++) {
    const rig_desc_step *s = &steps->items[j];
    pstep *ps = &l->steps[*i];
    ps->d = s;
    ps->number = (int64_t)*i;
    (*i)++;
    if (s->tag == RIG_STEP_SUBMIT) {
      ps->submit_index = (*submits)++;
      ps->device = (size_t)s->u.submit.device;
      for (size_t k = 0; k < s->u.submit.nslots; k++) {
        const rig_desc_slot *slot = &s->u.submit.slots[k];
        if (slot->tag == RIG_SLOT_INTS) l->ints_named = true;
        if (slot->tag == RIG_SLOT_INPUT)
          l->input_named[(size_t)slot->u.input * p->ndevices + ps->device] = true;
      }
    } else if (s->tag == RIG_STEP_MOVE) {
      if (s->u.move.src.tag == RIG_SLOT_INTS || s->u.move.dst.tag == RIG_SLOT_INTS)
        l->ints_named = true;
      size_t n = s->u.move.src_offset.n > s->u.move.dst_offset.n ? s->u.move.src_offset.n
                                                                 : s->u.move.dst_offset.n;
      if (n + 1 > *terms) *terms = n + 1;
    } else {
      number_steps(p, &s->u.loop.body, i, submits, terms);
    }
    ps->end = *i;
  }
}

/* The local part's arrays, and the steps numbered. */
static rig_status make_local(rig_program *p, rig_error *err) {
  const rig_desc *d = p->desc;
  plocal *l = calloc(1, sizeof *l);
  if (!l) return rig_error_set(err, RIG_ENOMEM, "out of memory loading a program");
  rig_array_init(&l->scratch, sizeof(uint64_t), 0);
  p->local = l;
  size_t nd = p->ndevices ? p->ndevices : 1, ni = d->ninputs ? d->ninputs : 1;
  l->nmem = d->nmemory;
  l->mem = calloc(d->nmemory ? d->nmemory : 1, sizeof *l->mem);
  l->images = calloc(d->nimages ? d->nimages : 1, sizeof *l->images);
  l->borrows = calloc((d->nmemory + 1) * 2 * nd, sizeof *l->borrows);
  l->last = calloc(nd, sizeof *l->last);
  l->ran = calloc(nd, sizeof *l->ran);
  l->snap = calloc(ni, sizeof *l->snap);
  l->in_borrow = calloc(ni * nd, sizeof *l->in_borrow);
  l->in_borrow_of = calloc(ni * nd, sizeof *l->in_borrow_of);
  l->input_named = calloc(ni * nd, sizeof *l->input_named);
  l->nsteps = rig_desc_count_steps(d);
  l->steps = calloc(l->nsteps ? l->nsteps : 1, sizeof *l->steps);
  if (!l->mem || !l->images || !l->borrows || !l->last || !l->ran || !l->snap || !l->in_borrow ||
      !l->in_borrow_of || !l->input_named || !l->steps)
    return rig_error_set(err, RIG_ENOMEM, "out of memory loading a program");
  size_t i = 0, submits = 0, terms = 1;
  number_steps(p, &d->steps, &i, &submits, &terms);
  /* Room for the terms of the moves' offsets; steps grow it as prepared. */
  if (!rig_array_resize(&l->scratch, terms))
    return rig_error_set(err, RIG_ENOMEM, "out of memory loading a program");
  return RIG_OK;
}

static rig_status make_memory(rig_program *p, const rig_rails *rails, rig_error *err) {
  const rig_desc *d = p->desc;
  for (size_t m = 0; m < d->nmemory; m++) {
    const rig_desc_memory *mem = &d->memory[m];
    pmem *pm = &p->local->mem[m];
    if (mem->tag == RIG_MEMORY_RAIL) {
      rig_buffer *area = area_of(rails->lookup(rails->ctx, mem->u.rail.rail), mem->u.rail.area);
      pm->copy[0] = rig_buffer_retain(area);
      pm->ncopies = 1;
      continue;
    }
    pm->ncopies = mem->u.alloc.copies == RIG_COPIES_TWO ? 2 : 1;
    for (int k = 0; k < pm->ncopies; k++) {
      rig_status st = rig_buffer_create(p->devices[mem->u.alloc.device], mem->u.alloc.kind,
                                        (uint64_t)mem->u.alloc.bytes, &pm->copy[k], err);
      if (st != RIG_OK) return rig_error_prefix(err, "memory %zu", m);
    }
  }
  return RIG_OK;
}

/* The bytes of a leaf data with every hole filled for copy k. */
static rig_status fill_leaf_data(rig_program *p, const rig_desc_data *data, int k,
                                 unsigned char *bytes, const char *what, rig_error *err) {
  memcpy(bytes, data->bytes.bytes, data->bytes.len);
  rig_status st = RIG_OK;
  for (size_t h = 0; st == RIG_OK && h < data->nholes; h++) {
    const rig_desc_hole *hole = &data->holes[h];
    uint64_t *vals = malloc((hole->terms.n ? hole->terms.n : 1) * sizeof *vals);
    if (!vals) return rig_error_set(err, RIG_ENOMEM, "out of memory filling %s", what);
    for (size_t t = 0; st == RIG_OK && t < hole->terms.n; t++)
      st = rig_program_leaf(p, &hole->terms.items[t].value.u.leaf, k, &vals[t], err);
    if (st == RIG_OK) st = rig_program_fill_hole(bytes, data->bytes.bytes, hole, vals, what, err);
    free(vals);
  }
  return st;
}

static rig_status load_images(rig_program *p, rig_error *err) {
  const rig_desc *d = p->desc;
  for (size_t i = 0; i < d->nimages; i++) {
    const rig_desc_image *im = &d->images[i];
    size_t len = im->binary.bytes.len;
    unsigned char *bytes = malloc(len ? len : 1);
    if (!bytes) return rig_error_set(err, RIG_ENOMEM, "out of memory loading image %zu", i);
    char what[32];
    snprintf(what, sizeof what, "image %zu", i);
    rig_status st = fill_leaf_data(p, &im->binary, 0, bytes, what, err);
    /* The driver's reason names the device, not the image: the image
     * goes after the device's name, which a refusal starts with. */
    rig_device *dev = p->devices[im->device];
    if (st == RIG_OK &&
        (st = rig_image_load(dev, bytes, len, &p->local->images[i], err)) != RIG_OK && err) {
      const char *name = rig_device_name(dev);
      size_t n = strlen(name);
      if (strncmp(err->message, name, n) == 0 && strncmp(err->message + n, ": ", 2) == 0) {
        char rest[RIG_ERROR_MESSAGE_MAX];
        snprintf(rest, sizeof rest, "%s", err->message + n + 2);
        rig_error_set(err, err->code, "%s: %s: %s", name, what, rest);
      } else {
        rig_error_prefix(err, "%s", what);
      }
    }
    free(bytes);
    if (st != RIG_OK) return st;
  }
  return RIG_OK;
}

/* Each init written to every copy of its memory, after their earlier uses. */
static rig_status write_inits(rig_program *p, rig_error *err) {
  const rig_desc *d = p->desc;
  for (size_t m = 0; m < d->nmemory; m++) {
    const rig_desc_memory *mem = &d->memory[m];
    if (mem->tag != RIG_MEMORY_ALLOC || mem->u.alloc.init.bytes.len == 0) continue;
    const rig_desc_data *init = &mem->u.alloc.init;
    unsigned char *bytes = malloc(init->bytes.len);
    if (!bytes) return rig_error_set(err, RIG_ENOMEM, "out of memory writing memory %zu", m);
    char what[32];
    snprintf(what, sizeof what, "memory %zu", m);
    const pmem *pm = &p->local->mem[m];
    rig_status st = RIG_OK;
    for (int k = 0; st == RIG_OK && k < pm->ncopies; k++) {
      st = fill_leaf_data(p, init, k, bytes, what, err);
      if (st == RIG_OK) st = rig_buffer_write(pm->copy[k], 0, bytes, init->bytes.len, err);
    }
    free(bytes);
    if (st != RIG_OK) return st;
  }
  return RIG_OK;
}

static rig_status load_local(rig_program *p, const rig_rails *rails, rig_error *err) {
  rig_status st = make_local(p, err);
  if (st != RIG_OK) return st;
  plocal *l = p->local;
  if (rails) l->rails = *rails;
  for (int k = 0; k < 2; k++) {
    uint64_t bytes = (uint64_t)p->desc->ints * 8;
    st = rig_buffer_create(rig_host(), RIG_KIND_PINNED, bytes ? bytes : 8, &l->ints[k], err);
    if (st != RIG_OK) return st;
  }
  st = rig_buffer_create(rig_host(), RIG_KIND_PINNED, 8, &l->stage, err);
  if (st != RIG_OK) return st;
  if ((st = make_memory(p, rails, err)) != RIG_OK) return st;
  if ((st = load_images(p, err)) != RIG_OK) return st;
  p->nlaunches = 0; /* counted again as the launches are prepared */
  for (size_t i = 0; i < l->nsteps; i++)
    if (l->steps[i].d->tag == RIG_STEP_SUBMIT && (st = rig_program_prepare(p, i, err)) != RIG_OK)
      return st;
  return write_inits(p, err);
}

rig_status rig_program_load(const rig_desc *desc, rig_device *const *devices, size_t ndevices,
                            const rig_rails *rails, rig_program **out, rig_error *err) {
  rig_status st = rig_environment_check(err);
  if (st != RIG_OK) return st;
  st = check_devices(desc, devices, ndevices, err);
  if (st != RIG_OK) return st;
  /* Devices of another machine: the agent there has the rails. */
  bool remote = ndevices && rig_device_facts_of(devices[0])->machine != 0;
  if (remote && rails && rails->lookup)
    return rig_error_set(err, RIG_EINVAL, "rails given for devices of another machine");
  if (!remote && (st = check_rails(desc, rails, err)) != RIG_OK) return st;
  rig_desc_rail_sizes sizes = {area_bytes, (void *)rails};
  st = rig_desc_check_rails(desc, !remote && rails && rails->lookup ? &sizes : NULL, err);
  if (st != RIG_OK) return st;
  if (!remote) {
    /* The agent checks a program of another machine against its devices. */
    int64_t number = 0;
    if ((st = check_budget(desc, devices, ndevices, err)) != RIG_OK ||
        (st = check_geometry(&desc->steps, devices, &number, err)) != RIG_OK)
      return st;
  }
  rig_program *p = calloc(1, sizeof *p);
  if (!p) return rig_error_set(err, RIG_ENOMEM, "out of memory loading a program");
  p->desc = rig_desc_copy(desc);
  if (!p->desc) {
    uint8_t *bytes = NULL;
    size_t len;
    st = rig_desc_to_bytes(desc, &bytes, &len, err);
    free(bytes);
    if (st == RIG_OK) st = rig_error_set(err, RIG_ENOMEM, "out of memory loading a program");
    free(p);
    return st;
  }
  pthread_mutex_init(&p->run_lock, NULL);
  pthread_mutex_init(&p->recv_lock, NULL);
  p->kind = remote ? PKIND_REMOTE : PKIND_LOCAL;
  p->ndevices = ndevices;
  st = make_head(p, devices, err);
  if (st == RIG_OK) st = remote ? rig_program_load_remote(p, err) : load_local(p, rails, err);
  if (st == RIG_OK) {
    *out = p;
    return RIG_OK;
  }
  rig_program_free(p);
  return st;
}

/* after (n points): the last work of the program's devices, which its
 * images outlive (none: they go now). */
static void free_local(plocal *l, const rig_desc *d, size_t ndevices, const rig_point *after,
                       size_t n) {
  if (!l) return;
  for (size_t i = 0; l->steps && i < l->nsteps; i++) {
    pstep *s = &l->steps[i];
    for (int k = 0; k < s->nprep; k++) {
      pprep *pp = &s->prep[k];
      rig_submission_release(pp->sub);
      const rig_desc_submit *sub = &s->d->u.submit;
      for (size_t j = 0; pp->slots && j < sub->nslots; j++)
        if (sub->slots[j].tag == RIG_SLOT_MEMORY) rig_buffer_release(pp->slots[j]);
      free(pp->slots);
      free(pp->base);
      free(pp->block);
    }
    free(s->holes);
    free(s->geoms);
    free(s->run_offsets);
  }
  for (size_t i = 0; l->in_borrow && l->in_borrow_of && i < d->ninputs * ndevices; i++) {
    rig_buffer_release(l->in_borrow[i]);
    rig_buffer_release(l->in_borrow_of[i]);
  }
  for (size_t i = 0; l->borrows && i < (d->nmemory + 1) * 2 * ndevices; i++)
    rig_buffer_release(l->borrows[i]);
  for (size_t m = 0; l->mem && m < d->nmemory; m++)
    for (int k = 0; k < 2; k++) rig_buffer_release(l->mem[m].copy[k]);
  for (size_t i = 0; l->images && i < d->nimages; i++)
    rig_image_release_after(l->images[i], after, n);
  for (int k = 0; k < 2; k++) rig_buffer_release(l->ints[k]);
  rig_buffer_release(l->stage);
  free(l->steps);
  rig_array_free(&l->scratch);
  free(l->mem);
  free(l->images);
  free(l->borrows);
  free(l->last);
  free(l->ran);
  free(l->snap);
  free(l->in_borrow);
  free(l->in_borrow_of);
  free(l->input_named);
  free(l);
}

/* Called only once the description is the program's: the parts' sizes are
 * its. */
static void free_after(rig_program *p, const rig_point *after, size_t n) {
  size_t ni = p->desc->ninputs;
  rig_program_free_received(p->received, ni);
  if (p->kind == PKIND_REMOTE)
    rig_program_free_remote(p->remote, ni);
  else
    free_local(p->local, p->desc, p->ndevices, after, n);
  free(p->devices);
  free(p->threads);
  free(p->input_written);
  rig_desc_free(p->desc);
  pthread_mutex_destroy(&p->run_lock);
  pthread_mutex_destroy(&p->recv_lock);
  free(p);
}

void rig_program_free(rig_program *p) {
  free_after(p, NULL, 0);
}

void rig_program_release(rig_program *p) {
  if (!p) return;
  /* Memory returns through the core once its last use is reached, and each
   * submission keeps the image it launches; but an Entry may stand in any
   * work's parameters, so the images go once the last run's work is past
   * (never waited for here: a kernel that does not end, on a device lost
   * with the job, must not hold the caller). A program of another machine
   * waits for its runs there, which end with the job. */
  pthread_mutex_lock(&p->run_lock);
  rig_point *after = calloc(p->ndevices + 1, sizeof *after);
  for (size_t d = 0; d < p->ndevices; d++) {
    rig_point last = rig_device_last(p->devices[d]);
    if (p->kind == PKIND_REMOTE || !after) rig_point_wait(last, NULL);
    if (after) after[d] = last;
  }
  pthread_mutex_unlock(&p->run_lock);
  free_after(p, after, after ? p->ndevices : 0);
  free(after);
}

size_t rig_program_devices(const rig_program *p) {
  return p->ndevices;
}
size_t rig_program_submits(const rig_program *p) {
  return p->nsubmits;
}
const rig_desc *rig_program_desc(const rig_program *p) {
  return p->desc;
}

size_t rig_program_threads(const rig_program *p, uint32_t *out, size_t n) {
  for (size_t i = 0; i < p->nlaunches && i < n; i++) out[i] = p->threads[i];
  return p->nlaunches;
}

rig_point *rig_program_step_points(const rig_program *p, size_t *n) {
  rig_point *pts = calloc(p->nsubmits ? p->nsubmits : 1, sizeof *pts);
  if (pts) *n = p->nsubmits;
  return pts;
}
