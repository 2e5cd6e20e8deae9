/* Preparing a Submit step at load: a core submission per copy of memory
 * the step needs (two when it names memory of two copies, passes the ints,
 * or holds a leaf of such memory), with its slots' views borrowed on the
 * step's device, its parameters with every hole known at load filled, and
 * the lists of what each run fills: holes, geometry and the offsets of
 * Copy parts that read an Int. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/assert.h"
#include "program_internal.h"

static bool leaf_of_two(const plocal *l, const rig_desc_value *v) {
  if (v->tag != RIG_VALUE_LEAF) return false;
  const rig_desc_leaf *leaf = &v->u.leaf;
  int64_t m = leaf->tag == RIG_LEAF_ADDRESS  ? leaf->u.address.memory
              : leaf->tag == RIG_LEAF_HANDLE ? leaf->u.handle
                                             : -1;
  return m >= 0 && l->mem[m].ncopies == 2;
}

static bool data_of_two(const plocal *l, const rig_desc_data *data) {
  for (size_t h = 0; h < data->nholes; h++)
    for (size_t t = 0; t < data->holes[h].terms.n; t++)
      if (leaf_of_two(l, &data->holes[h].terms.items[t].value)) return true;
  return false;
}

static bool needs_two(const plocal *l, const rig_desc_submit *sub) {
  for (size_t i = 0; i < sub->nslots; i++) {
    const rig_desc_slot *s = &sub->slots[i];
    if (s->tag == RIG_SLOT_INTS) return true;
    if (s->tag == RIG_SLOT_MEMORY && l->mem[s->u.memory.memory].ncopies == 2) return true;
  }
  for (size_t i = 0; i < sub->nfixed; i++)
    if (l->mem[sub->fixed[i].view.memory].ncopies == 2) return true;
  for (size_t i = 0; i < sub->nparts; i++) {
    const rig_desc_part *part = &sub->parts[i];
    if (part->tag == RIG_PART_WORDS && l->mem[part->u.words.memory].ncopies == 2) return true;
    const rig_desc_data *params = rig_program_part_params(part);
    if (params && data_of_two(l, params)) return true;
    if (part->tag == RIG_PART_LAUNCH) {
      for (int g = 0; g < 3; g++)
        if (leaf_of_two(l, &part->u.launch.groups[g]) || leaf_of_two(l, &part->u.launch.threads[g]))
          return true;
      if (leaf_of_two(l, &part->u.launch.shared)) return true;
    }
  }
  return false;
}

static rig_status grow_scratch(plocal *l, size_t n, rig_error *err) {
  if (n > l->scratch.n && !rig_array_resize(&l->scratch, n))
    return rig_error_set(err, RIG_ENOMEM, "out of memory loading a program");
  return RIG_OK;
}

/* A view of memory m (copy k) as device d's work addresses it. */
static rig_status view_on(rig_program *p, const rig_desc_view *v, int k, size_t d, rig_buffer **out,
                          rig_error *err) {
  rig_buffer *b;
  rig_status st = rig_program_borrow(p, v->memory, pmem_copy(p->local, v->memory, k), d, &b, err);
  if (st != RIG_OK) return st;
  return rig_buffer_view(b, (uint64_t)v->offset, (uint64_t)v->length, out, err);
}

/* A value known at load (Fixed or a leaf), for copy k. */
static rig_status load_value(rig_program *p, const rig_desc_value *v, int k, uint64_t *out,
                             rig_error *err) {
  if (v->tag == RIG_VALUE_FIXED) {
    *out = (uint64_t)v->u.fixed;
    return RIG_OK;
  }
  return rig_program_leaf(p, &v->u.leaf, k, out, err);
}

/* Params with every hole known at load filled; the others are noted (for
 * copy 0) in the step's per-run list. */
static rig_status load_params(rig_program *p, pstep *s, size_t part, const rig_desc_data *params,
                              int k, unsigned char *bytes, rig_error *err) {
  char what[48];
  snprintf(what, sizeof what, "step %lld's parameters", (long long)s->number);
  plocal *l = p->local;
  memcpy(bytes, params->bytes.bytes, params->bytes.len);
  for (size_t h = 0; h < params->nholes; h++) {
    const rig_desc_hole *hole = &params->holes[h];
    rig_status st = grow_scratch(l, hole->terms.n + 1, err);
    if (st != RIG_OK) return st;
    if (rig_program_terms_read_int(&hole->terms)) {
      if (k == 0) s->holes[s->nholes++] = (phole){part, hole};
      continue;
    }
    for (size_t t = 0; t < hole->terms.n; t++) {
      if ((st = load_value(p, &hole->terms.items[t].value, k, &plocal_scratch(l)[t], err)) !=
          RIG_OK)
        return st;
    }
    st = rig_program_fill_hole(bytes, params->bytes.bytes, hole, plocal_scratch(l), what, err);
    if (st != RIG_OK) return st;
  }
  return RIG_OK;
}

static size_t count_holes(const rig_desc_submit *sub) {
  size_t n = 0;
  for (size_t i = 0; i < sub->nparts; i++) {
    const rig_desc_data *params = rig_program_part_params(&sub->parts[i]);
    if (params) n += params->nholes;
  }
  return n;
}

static rig_status launch_part(rig_program *p, pstep *s, size_t i, const rig_desc_part *dp, int k,
                              rig_part *part, unsigned char *params, rig_error *err) {
  int64_t img = dp->u.launch.image;
  rig_image *image = p->local->images[img];
  part->kind = RIG_WORK_LAUNCH;
  part->u.launch.image = image;
  rig_status st = rig_program_entry(p, img, &dp->u.launch.name, p->devices[s->device],
                                    &part->u.launch.entry, err);
  if (st != RIG_OK) return st;
  if (k == 0) p->threads[p->nlaunches++] = part->u.launch.entry.max_threads;
  st = load_params(p, s, i, &dp->u.launch.params, k, params, err);
  if (st != RIG_OK) return st;
  part->u.launch.params = params;
  part->u.launch.params_bytes = (uint32_t)dp->u.launch.params.bytes.len;
  const rig_desc_value *geo[7] = {&dp->u.launch.groups[0],  &dp->u.launch.groups[1],
                                  &dp->u.launch.groups[2],  &dp->u.launch.threads[0],
                                  &dp->u.launch.threads[1], &dp->u.launch.threads[2],
                                  &dp->u.launch.shared};
  for (int w = 0; w < 7 && k == 0; w++)
    if (geo[w]->tag == RIG_VALUE_INT) s->geoms[s->ngeoms++] = (pgeom){i, w, geo[w]};
  uint32_t g[7];
  st = rig_program_load_geometry(p, k, p->devices[s->device], s->number, i, dp,
                                 part->u.launch.entry.max_threads, g, err);
  if (st != RIG_OK) return st;
  memcpy(part->u.launch.groups, g, 3 * sizeof *g);
  memcpy(part->u.launch.threads, g + 3, 3 * sizeof *g);
  part->u.launch.shared = g[6];
  return RIG_OK;
}

static rig_status fill_part(rig_program *p, pstep *s, size_t i, const rig_desc_part *dp, int k,
                            rig_part *part, unsigned char *params, rig_error *err) {
  part->kind = RIG_WORK_FILL;
  part->u.fill.ready = dp->u.fill.fill.tag == RIG_LEAF_READY;
  if (dp->u.fill.fill.tag == RIG_LEAF_ENTRY)
    part->u.fill.image = p->local->images[dp->u.fill.fill.u.entry.image];
  rig_status st = rig_program_leaf(p, &dp->u.fill.fill, k, &part->u.fill.fn, err);
  if (st != RIG_OK) return st;
  if ((st = load_params(p, s, i, &dp->u.fill.params, k, params, err)) != RIG_OK) return st;
  part->u.fill.params = params;
  part->u.fill.params_bytes = (uint32_t)dp->u.fill.params.bytes.len;
  return RIG_OK;
}

/* A Copy part; its offsets, when they read an Int, come with each run
 * (the step's run_offsets). */
static void copy_part(pstep *s, size_t i, const rig_desc_part *dp, int k, rig_part *part) {
  part->kind = RIG_WORK_COPY;
  part->u.copy.src = (rig_side){(int32_t)dp->u.copy.src, -1};
  part->u.copy.dst = (rig_side){(int32_t)dp->u.copy.dst, -1};
  part->u.copy.length = (uint64_t)dp->u.copy.length;
  bool runs = rig_program_terms_read_int(&dp->u.copy.src_offset) ||
              rig_program_terms_read_int(&dp->u.copy.dst_offset);
  if (runs) {
    if (k == 0) s->run_offsets[s->nrun_offsets++] = i;
    return; /* offsets come with each run */
  }
  /* Constant offsets: the checker computed them exactly already. */
  const rig_desc_terms *t[2] = {&dp->u.copy.src_offset, &dp->u.copy.dst_offset};
  uint64_t off[2];
  for (int e = 0; e < 2; e++) {
    int64_t sum = 0;
    for (size_t j = 0; j < t[e]->n; j++)
      sum += t[e]->items[j].value.u.fixed * t[e]->items[j].factor;
    off[e] = (uint64_t)sum;
  }
  part->u.copy.src_offset = off[0];
  part->u.copy.dst_offset = off[1];
}

/* What rig_submission_make takes for one preparation, made here and given
 * back once the submission is made (it keeps its own). */
typedef struct making {
  size_t nparts;
  rig_part *parts;
  unsigned char **params; /* each part's parameter bytes */
  rig_fixed *fixed;       /* the step's fixed views, then each Words part's */
  size_t nfixed;
} making;

static rig_status out_of_memory(rig_error *err) {
  return rig_error_set(err, RIG_ENOMEM, "out of memory preparing a step");
}

static rig_status making_start(making *m, const rig_desc_submit *sub, pprep *pp, rig_error *err) {
  size_t nwords = 0;
  for (size_t i = 0; i < sub->nparts; i++) nwords += sub->parts[i].tag == RIG_PART_WORDS;
  m->nparts = sub->nparts;
  m->nfixed = sub->nfixed + nwords;
  m->parts = calloc(sub->nparts ? sub->nparts : 1, sizeof *m->parts);
  m->params = calloc(sub->nparts ? sub->nparts : 1, sizeof *m->params);
  m->fixed = calloc(m->nfixed ? m->nfixed : 1, sizeof *m->fixed);
  pp->slots = calloc(sub->nslots ? sub->nslots : 1, sizeof *pp->slots);
  return m->parts && m->params && m->fixed && pp->slots ? RIG_OK : out_of_memory(err);
}

static void making_end(making *m) {
  for (size_t i = 0; m->fixed && i < m->nfixed; i++) rig_buffer_release(m->fixed[i].buffer);
  for (size_t i = 0; m->parts && m->params && i < m->nparts; i++) {
    free(m->params[i]);
    if (m->parts[i].kind == RIG_WORK_FILL) free((void *)m->parts[i].u.fill.refs);
    if (m->parts[i].kind == RIG_WORK_LAUNCH) free((void *)m->parts[i].u.launch.refs);
  }
  free(m->parts);
  free(m->params);
  free(m->fixed);
}

/* The step's fixed memory and Memory and Ints slots, as views of memory
 * copy k borrowed on the step's device. */
static rig_status views(rig_program *p, const pstep *s, int k, making *m, pprep *pp,
                        rig_error *err) {
  const rig_desc_submit *sub = &s->d->u.submit;
  rig_status st = RIG_OK;
  for (size_t i = 0; st == RIG_OK && i < sub->nfixed; i++) {
    m->fixed[i].access = sub->fixed[i].access;
    st = view_on(p, &sub->fixed[i].view, k, s->device, &m->fixed[i].buffer, err);
  }
  for (size_t i = 0; st == RIG_OK && i < sub->nslots; i++) {
    const rig_desc_slot *slot = &sub->slots[i];
    if (slot->tag == RIG_SLOT_MEMORY)
      st = view_on(p, &slot->u.memory, k, s->device, &pp->slots[i], err);
    else if (slot->tag == RIG_SLOT_INTS)
      st = rig_program_borrow(p, (int64_t)p->local->nmem, k, s->device, &pp->slots[i], err);
  }
  return st;
}

/* A fill's or launch's refs: the description's are the core's, field for
 * field. */
static rig_status part_refs(const rig_desc_part *dp, rig_part *part, rig_error *err) {
  size_t nrefs;
  const rig_desc_ref *refs = rig_program_part_refs(dp, &nrefs);
  rig_ref *cr = malloc((nrefs ? nrefs : 1) * sizeof *cr);
  if (!cr) return out_of_memory(err);
  for (size_t r = 0; r < nrefs; r++)
    cr[r] = (rig_ref){(uint32_t)refs[r].slot, (uint32_t)refs[r].at, refs[r].use};
  if (dp->tag == RIG_PART_FILL) {
    part->u.fill.refs = cr;
    part->u.fill.nrefs = nrefs;
  } else {
    part->u.launch.refs = cr;
    part->u.launch.nrefs = nrefs;
  }
  return RIG_OK;
}

/* Part i for memory copy k; a Words part's memory is fixed memory
 * (*words: the next place for it). */
static rig_status one_part(rig_program *p, pstep *s, size_t i, int k, making *m, size_t *words,
                           rig_error *err) {
  const rig_desc_part *dp = &s->d->u.submit.parts[i];
  const rig_desc_data *dparams = rig_program_part_params(dp);
  size_t plen = dparams ? dparams->bytes.len : 0;
  if (!(m->params[i] = malloc(plen ? plen : 1))) return out_of_memory(err);
  rig_part *part = &m->parts[i];
  rig_status st = RIG_OK;
  switch (dp->tag) {
    case RIG_PART_WORDS:
      rig_assert(*words < m->nfixed);
      part->kind = RIG_WORK_WORDS;
      part->u.words.side = (rig_side){-1, (int32_t)*words};
      part->u.words.length = (uint64_t)dp->u.words.length;
      m->fixed[*words].access = RIG_ACCESS_READ;
      st = view_on(p, &dp->u.words, k, s->device, &m->fixed[(*words)++].buffer, err);
      break;
    case RIG_PART_FILL:
      st = fill_part(p, s, i, dp, k, part, m->params[i], err);
      break;
    case RIG_PART_COPY:
      copy_part(s, i, dp, k, part);
      break;
    case RIG_PART_LAUNCH:
      st = launch_part(p, s, i, dp, k, part, m->params[i], err);
      break;
  }
  if (st == RIG_OK && dparams) st = part_refs(dp, part, err);
  return st;
}

/* A name as messages show it: at most 64 bytes, printable ASCII. */
static void shown_name(rig_desc_string n, char out[72]) {
  size_t k = n.len < 64 ? n.len : 64;
  for (size_t i = 0; i < k; i++) out[i] = n.bytes[i] >= 32 && n.bytes[i] < 127 ? n.bytes[i] : '?';
  out[k] = '\0';
}

/* What messages call each part of the step (a fault's handler names the
 * kernel running): "step 3: kernel \"saxpy\"". */
static void label_parts(const pstep *s, rig_submission *sub) {
  const rig_desc_submit *d = &s->d->u.submit;
  for (size_t i = 0; i < d->nparts; i++) {
    const rig_desc_part *dp = &d->parts[i];
    char label[RIG_PART_LABEL_MAX], name[72];
    if (dp->tag == RIG_PART_LAUNCH) {
      shown_name(dp->u.launch.name, name);
      snprintf(label, sizeof label, "step %lld: kernel \"%s\"", (long long)s->number, name);
    } else if (dp->tag == RIG_PART_FILL && dp->u.fill.fill.tag == RIG_LEAF_ENTRY) {
      shown_name(dp->u.fill.fill.u.entry.name, name);
      snprintf(label, sizeof label, "step %lld: fill \"%s\"", (long long)s->number, name);
    } else {
      snprintf(label, sizeof label, "step %lld: part %zu", (long long)s->number, i);
    }
    rig_submission_label(sub, i, label);
  }
}

/* The core submission of what is made, and its blocks. */
static rig_status submission(rig_program *p, const pstep *s, making *m, pprep *pp, rig_error *err) {
  const rig_desc_submit *sub = &s->d->u.submit;
  rig_status st = rig_submission_make(p->devices[s->device], m->parts, m->nparts, sub->nslots,
                                      m->fixed, m->nfixed, &pp->sub, err);
  if (st != RIG_OK && st != RIG_ENOMEM && st != RIG_ELOST) {
    /* A submission the device will not make is its refusal, whatever
     * code the core gave. */
    rig_error_prefix(err, "step %lld", (long long)s->number);
    return rig_program_refused(err);
  }
  if (st != RIG_OK) return st;
  label_parts(s, pp->sub);
  size_t n = rig_submission_block_bytes(pp->sub);
  pp->base = malloc(n ? n : 8);
  pp->block = malloc(n ? n : 8);
  if (!pp->base || !pp->block) return out_of_memory(err);
  rig_submission_block_init(pp->sub, pp->base);
  memcpy(pp->block, pp->base, n);
  return RIG_OK;
}

/* The step's preparation for memory copy k (s->prep[k]). */
static rig_status prepare_for_copy(rig_program *p, pstep *s, int k, rig_error *err) {
  const rig_desc_submit *sub = &s->d->u.submit;
  pprep *pp = &s->prep[k];
  making m = {0};
  rig_status st = making_start(&m, sub, pp, err);
  if (st == RIG_OK) st = views(p, s, k, &m, pp, err);
  size_t words = sub->nfixed;
  for (size_t i = 0; st == RIG_OK && i < sub->nparts; i++)
    st = one_part(p, s, i, k, &m, &words, err);
  if (st == RIG_OK) st = submission(p, s, &m, pp, err);
  making_end(&m);
  return st;
}

rig_status rig_program_prepare(rig_program *p, size_t i, rig_error *err) {
  plocal *l = p->local;
  pstep *s = &l->steps[i];
  const rig_desc_submit *sub = &s->d->u.submit;
  size_t nparts = sub->nparts ? sub->nparts : 1;
  s->holes = calloc(count_holes(sub) + 1, sizeof *s->holes);
  s->geoms = calloc(7 * nparts, sizeof *s->geoms);
  s->run_offsets = calloc(nparts, sizeof *s->run_offsets);
  if (!s->holes || !s->geoms || !s->run_offsets)
    return rig_error_set(err, RIG_ENOMEM, "out of memory preparing a step");
  for (size_t j = 0; j < sub->nparts; j++) {
    const rig_desc_part *dp = &sub->parts[j];
    if (dp->tag == RIG_PART_COPY) {
      rig_status st = grow_scratch(l, dp->u.copy.src_offset.n + dp->u.copy.dst_offset.n + 1, err);
      if (st != RIG_OK) return st;
    }
  }
  int n = needs_two(l, sub) ? 2 : 1;
  for (int k = 0; k < n; k++) {
    s->nprep = k + 1; /* so that a failure releases what was made */
    rig_status st = prepare_for_copy(p, s, k, err);
    if (st != RIG_OK) return st;
  }
  s->reads_ints = s->nholes || s->ngeoms || s->nrun_offsets;
  return RIG_OK;
}
