/* Running a program (docs/program.md "Run"): the frame checked before any step;
 * copy n mod 2 once run n - 2's work on it is done; the frame's ints
 * written and its inputs snapshotted; then each step in order: Submit with
 * its per-run holes, geometry and offsets, Move as an exact copy, Loop with
 * its trips and flag. A run allocates nothing once it has seen its inputs. */
#include <stdio.h>
#include <string.h>

#include "program_internal.h"

typedef struct run {
  rig_program *p;
  plocal *l;
  int k;
  const rig_point *waits;
  size_t nwaits;
  rig_point *step_points;
  int64_t *ints;    /* copy k of the ints, host memory */
  rig_trace *trace; /* the sink, NULL when not tracing */
  uint64_t index;   /* the run's, for the trace */
} run;

/* ---- the frame ------------------------------------------------------------ */

static rig_status borrow_input(rig_program *p, size_t i, size_t d, rig_buffer *in, rig_error *err) {
  plocal *l = p->local;
  size_t at = i * p->ndevices + d;
  if (l->in_borrow_of[at] == in) return RIG_OK;
  rig_buffer *b;
  if (rig_buffer_borrow(p->devices[d], in, &b, err) != RIG_OK)
    return rig_error_set(err, RIG_EINVAL, "input %zu: %s cannot borrow it", i,
                         rig_device_name(p->devices[d]));
  rig_buffer_release(l->in_borrow[at]);
  rig_buffer_release(l->in_borrow_of[at]);
  l->in_borrow[at] = b;
  l->in_borrow_of[at] = rig_buffer_retain(in);
  return RIG_OK;
}

rig_status rig_program_check_frame(const rig_program *p, const rig_frame *f, rig_error *err) {
  const rig_desc *d = p->desc;
  if (f->ninputs != d->ninputs)
    return rig_error_set(err, RIG_EINVAL, "%zu inputs for a program of %zu", f->ninputs,
                         d->ninputs);
  if (f->nints > (uint64_t)d->ints)
    return rig_error_set(err, RIG_EINVAL, "%zu ints for a program of %lld", f->nints,
                         (long long)d->ints);
  if (f->nstep_points != p->nsubmits)
    return rig_error_set(err, RIG_EINVAL, "%zu step points for a program of %zu Submit steps",
                         f->nstep_points, p->nsubmits);
  for (size_t i = 0; i < d->ninputs; i++) {
    rig_buffer *in = f->inputs[i];
    rig_device *want = p->devices[d->inputs[i].device];
    if (!in) return rig_error_set(err, RIG_EINVAL, "input %zu: no buffer", i);
    if (rig_buffer_device(in) != want)
      return rig_error_set(err, RIG_EINVAL, "input %zu: a buffer of %s, not %s", i,
                           rig_device_name(rig_buffer_device(in)), rig_device_name(want));
    if (rig_buffer_length(in) < (uint64_t)d->inputs[i].bytes)
      return rig_error_set(err, RIG_EINVAL, "input %zu: %llu bytes, fewer than %lld", i,
                           (unsigned long long)rig_buffer_length(in),
                           (long long)d->inputs[i].bytes);
    if (p->input_written[i] && rig_buffer_access(in) == RIG_ACCESS_READ)
      return rig_error_set(err, RIG_EINVAL, "input %zu: read-only memory the run writes", i);
  }
  return RIG_OK;
}

/* The frame, and each input's borrow on every device that names it. */
static rig_status check_frame(rig_program *p, const rig_frame *f, rig_error *err) {
  const plocal *l = p->local;
  rig_status st = rig_program_check_frame(p, f, err);
  for (size_t i = 0; st == RIG_OK && i < p->desc->ninputs; i++)
    for (size_t dev = 0; st == RIG_OK && dev < p->ndevices; dev++)
      if (l->input_named[i * p->ndevices + dev]) st = borrow_input(p, i, dev, f->inputs[i], err);
  return st;
}

/* ---- values read per run ---------------------------------------------------- */

/* Reading the ints waits for the device work that wrote them. */
static rig_status ints_for_reading(run *r, rig_error *err) {
  return rig_buffer_wait(r->l->ints[r->k], RIG_ACCESS_READ, err);
}

static rig_status run_value(run *r, const rig_desc_value *v, uint64_t *out, rig_error *err) {
  switch (v->tag) {
    case RIG_VALUE_FIXED:
      *out = (uint64_t)v->u.fixed;
      return RIG_OK;
    case RIG_VALUE_INT:
      *out = (uint64_t)r->ints[v->u.int_index];
      return RIG_OK;
    case RIG_VALUE_LEAF:
      return rig_program_leaf(r->p, &v->u.leaf, r->k, out, err);
  }
  return RIG_OK;
}

static rig_status terms_values(run *r, const rig_desc_terms *t, rig_error *err) {
  for (size_t i = 0; i < t->n; i++) {
    rig_status st = run_value(r, &t->items[i].value, &plocal_scratch(r->l)[i], err);
    if (st != RIG_OK) return st;
  }
  return RIG_OK;
}

/* A copy's or a move's end: its exact offset, inside a buffer of len bytes. */
static rig_status run_offset(run *r, const pstep *s, const rig_desc_terms *t, int64_t length,
                             uint64_t len, const char *kind, const char *end, uint64_t *out,
                             rig_error *err) {
  rig_status st = terms_values(r, t, err);
  if (st != RIG_OK) return st;
  int64_t o;
  if (!rig_program_offset(t, (const int64_t *)plocal_scratch(r->l), &o))
    return rig_error_set(err, RIG_EINVAL, "step %lld: %s's %s offset past an int",
                         (long long)s->number, kind, end);
  if (o < 0 || (uint64_t)o > len || (uint64_t)length > len - (uint64_t)o)
    return rig_error_set(
        err, RIG_EINVAL, "step %lld: %s's %s of %lld bytes at %lld outside its %llu bytes",
        (long long)s->number, kind, end, (long long)length, (long long)o, (unsigned long long)len);
  *out = (uint64_t)o;
  return RIG_OK;
}

/* ---- steps ------------------------------------------------------------------- */

static void ran_on(run *r, size_t d, rig_point pt) {
  r->l->last[d] = pt;
  r->l->ran[d] = true;
}

static rig_status run_submit(run *r, pstep *s, rig_error *err) {
  rig_program *p = r->p;
  plocal *l = r->l;
  const rig_desc_submit *sub = &s->d->u.submit;
  pprep *pp = &s->prep[s->nprep == 2 ? r->k : 0];
  rig_status st;
  if (s->reads_ints && (st = ints_for_reading(r, err)) != RIG_OK) return st;
  char what[48] = "";
  for (size_t h = 0; h < s->nholes; h++) {
    const rig_desc_hole *hole = s->holes[h].hole;
    size_t part = s->holes[h].part;
    unsigned char *bytes = rig_block_params(pp->sub, pp->block, part);
    const unsigned char *base = rig_block_params(pp->sub, pp->base, part);
    size_t n = hole->width == RIG_W32 ? 4 : 8;
    memcpy(bytes + hole->at, base + hole->at, n); /* last run's value out */
    for (size_t t = 0; t < hole->terms.n; t++)
      if ((st = run_value(r, &hole->terms.items[t].value, &plocal_scratch(l)[t], err)) != RIG_OK)
        return st;
    if (rig_program_fill_hole(bytes, base, hole, plocal_scratch(l), what, NULL) != RIG_OK) {
      snprintf(what, sizeof what, "step %lld's parameters", (long long)s->number);
      return rig_program_fill_hole(bytes, base, hole, plocal_scratch(l), what, err);
    }
  }
  for (size_t g = 0; g < s->ngeoms; g++) {
    uint64_t v;
    if ((st = run_value(r, s->geoms[g].value, &v, err)) != RIG_OK) return st;
    if ((st = rig_program_geometry(s->number, s->geoms[g].part, s->geoms[g].which, v, RIG_EINVAL,
                                   err)) != RIG_OK)
      return st;
    rig_block_geometry(pp->sub, pp->block, s->geoms[g].part)[s->geoms[g].which] = (uint32_t)v;
  }
  for (size_t i = 0; i < sub->nslots; i++)
    if (sub->slots[i].tag == RIG_SLOT_INPUT)
      pp->slots[i] = l->in_borrow[(size_t)sub->slots[i].u.input * p->ndevices + s->device];
  for (size_t c = 0; c < s->nrun_offsets; c++) {
    const rig_desc_part *dp = &sub->parts[s->run_offsets[c]];
    uint64_t *o = rig_block_offsets(pp->sub, pp->block, s->run_offsets[c]);
    uint64_t slen = rig_buffer_length(pp->slots[dp->u.copy.src]);
    uint64_t dlen = rig_buffer_length(pp->slots[dp->u.copy.dst]);
    if ((st = run_offset(r, s, &dp->u.copy.src_offset, dp->u.copy.length, slen, "a copy", "source",
                         &o[0], err)) != RIG_OK ||
        (st = run_offset(r, s, &dp->u.copy.dst_offset, dp->u.copy.length, dlen, "a copy",
                         "destination", &o[1], err)) != RIG_OK)
      return st;
  }
  /* A device's first submission in the run follows `waits`. */
  bool first = !l->ran[s->device];
  rig_point pt;
  const rig_point *w = first ? r->waits : NULL;
  size_t nw = first ? r->nwaits : 0;
  /* Tracing costs an untraced step this one test. */
  if (!r->trace) {
    st = rig_submit(pp->sub, pp->block, pp->slots, w, nw, &pt, err);
  } else {
    uint64_t begin = rig_trace_now();
    st = rig_submit(pp->sub, pp->block, pp->slots, w, nw, &pt, err);
    if (st == RIG_OK)
      rig_program_trace_step(r->trace, RIG_TRACE_STEP, p->devices[s->device], s->number, r->index,
                             begin, pt);
  }
  if (st != RIG_OK) return rig_error_prefix(err, "step %lld", (long long)s->number);
  r->step_points[s->submit_index] = pt;
  ran_on(r, s->device, pt);
  return RIG_OK;
}

/* The buffer of a slot in this run, and where the slot starts in it. */
static rig_buffer *slot_buffer(run *r, const rig_desc_slot *slot, uint64_t *base, uint64_t *len) {
  rig_program *p = r->p;
  plocal *l = r->l;
  rig_buffer *b;
  switch (slot->tag) {
    case RIG_SLOT_MEMORY:
      b = l->mem[slot->u.memory.memory].copy[pmem_copy(l, slot->u.memory.memory, r->k)];
      *base = (uint64_t)slot->u.memory.offset;
      *len = (uint64_t)slot->u.memory.length;
      return b;
    case RIG_SLOT_INPUT:
      b = l->snap[slot->u.input];
      break;
    default:
      b = l->ints[r->k];
      *base = 0;
      *len = (uint64_t)p->desc->ints * 8;
      return b;
  }
  *base = 0;
  *len = rig_buffer_length(b);
  return b;
}

static rig_status run_move(run *r, pstep *s, rig_error *err) {
  rig_program *p = r->p;
  const rig_desc_step *d = s->d;
  rig_status st;
  if ((rig_program_terms_read_int(&d->u.move.src_offset) ||
       rig_program_terms_read_int(&d->u.move.dst_offset)) &&
      (st = ints_for_reading(r, err)) != RIG_OK)
    return st;
  uint64_t sbase, slen, dbase, dlen, so, doff;
  rig_buffer *src = slot_buffer(r, &d->u.move.src, &sbase, &slen);
  rig_buffer *dst = slot_buffer(r, &d->u.move.dst, &dbase, &dlen);
  if ((st = run_offset(r, s, &d->u.move.src_offset, d->u.move.length, slen, "a move", "source", &so,
                       err)) != RIG_OK ||
      (st = run_offset(r, s, &d->u.move.dst_offset, d->u.move.length, dlen, "a move", "destination",
                       &doff, err)) != RIG_OK)
    return st;
  rig_point pt;
  uint64_t begin = r->trace ? rig_trace_now() : 0;
  st = rig_buffer_copy_submit(src, sbase + so, dst, dbase + doff, (uint64_t)d->u.move.length,
                              r->waits, r->nwaits, &pt, err);
  if (st != RIG_OK) return rig_error_prefix(err, "step %lld", (long long)s->number);
  if (r->trace) {
    /* The device that copies: the step's track. */
    rig_device *by = rig_device_at(rig_point_device(pt));
    if (by) rig_program_trace_step(r->trace, RIG_TRACE_STEP, by, s->number, r->index, begin, pt);
  }
  for (size_t i = 0; i < p->ndevices; i++)
    if (rig_device_index(p->devices[i]) == rig_point_device(pt)) {
      ran_on(r, i, pt);
      return RIG_OK;
    }
  /* A copy by a device outside the program's is done at its step. */
  st = rig_point_wait(pt, err);
  return st == RIG_OK ? RIG_OK : rig_error_prefix(err, "step %lld", (long long)s->number);
}

static rig_status run_steps(run *r, size_t from, size_t to, rig_error *err);

/* The flag byte, once the work that wrote it is done; 0 stops the loop. */
static rig_status read_flag(run *r, pstep *s, unsigned char *flag, rig_error *err) {
  const rig_desc_step *d = s->d;
  uint64_t base, len;
  rig_buffer *b = slot_buffer(r, &d->u.loop.flag_slot, &base, &len);
  int64_t at = d->u.loop.flag_at;
  if (at < 0 || (uint64_t)at >= len)
    return rig_error_set(err, RIG_EINVAL, "step %lld: a flag at %lld outside its %llu bytes",
                         (long long)s->number, (long long)at, (unsigned long long)len);
  rig_status st;
  if (rig_buffer_host(b)) {
    st = rig_buffer_read(b, base + (uint64_t)at, flag, 1, err);
  } else {
    /* rig_buffer_read would make a staging buffer for each read, and a run
     * allocates nothing: the byte comes through the stage made at load. */
    rig_point pt;
    st = rig_buffer_wait(b, RIG_ACCESS_READ, err);
    if (st == RIG_OK)
      st = rig_buffer_copy_submit(b, base + (uint64_t)at, r->l->stage, 0, 1, NULL, 0, &pt, err);
    if (st == RIG_OK) st = rig_point_wait(pt, err);
    if (st == RIG_OK) *flag = *(unsigned char *)rig_buffer_host(r->l->stage);
  }
  return st == RIG_OK ? RIG_OK : rig_error_prefix(err, "step %lld", (long long)s->number);
}

static rig_status run_loop(run *r, size_t i, rig_error *err) {
  pstep *s = &r->l->steps[i];
  const rig_desc_step *d = s->d;
  rig_status st;
  uint64_t trips;
  if (d->u.loop.trips.tag == RIG_VALUE_INT && (st = ints_for_reading(r, err)) != RIG_OK) return st;
  if ((st = run_value(r, &d->u.loop.trips, &trips, err)) != RIG_OK) return st;
  for (int64_t t = 0; t < (int64_t)trips; t++) {
    if (d->u.loop.has_flag) {
      unsigned char flag = 0;
      if ((st = read_flag(r, s, &flag, err)) != RIG_OK) return st;
      if (!flag) break;
    }
    if (d->u.loop.has_trip) {
      /* Stored once the run's earlier work that uses the ints is done. */
      st = rig_buffer_wait(r->l->ints[r->k], RIG_ACCESS_READ_WRITE, err);
      if (st != RIG_OK) return rig_error_prefix(err, "step %lld", (long long)s->number);
      r->ints[d->u.loop.trip] = t;
    }
    if ((st = run_steps(r, i + 1, s->end, err)) != RIG_OK) return st;
  }
  return RIG_OK;
}

static rig_status run_steps(run *r, size_t from, size_t to, rig_error *err) {
  for (size_t i = from; i < to;) {
    pstep *s = &r->l->steps[i];
    rig_status st = RIG_OK;
    switch (s->d->tag) {
      case RIG_STEP_SUBMIT:
        st = run_submit(r, s, err);
        i++;
        break;
      case RIG_STEP_MOVE:
        st = run_move(r, s, err);
        i++;
        break;
      case RIG_STEP_LOOP:
        st = run_loop(r, i, err);
        i = s->end;
        break;
    }
    if (st != RIG_OK) return st;
  }
  return RIG_OK;
}

/* ---- the run ------------------------------------------------------------------ */

static rig_status run_locked(rig_program *p, const rig_frame *f, const rig_point *waits,
                             size_t nwaits, rig_point *ends, size_t *nends, rig_error *err) {
  plocal *l = p->local;
  rig_status st = check_frame(p, f, err);
  if (st != RIG_OK) return st;
  uint64_t index = l->runs++;
  int k = (int)(index % 2);
  /* The one test of tracing a run pays when it is off. */
  rig_trace *trace = atomic_load_explicit(&rig_program_tracing, memory_order_relaxed);
  if (trace) rig_program_trace_run(trace, index);
  /* Run n - 2's work on this copy is done first. */
  for (size_t m = 0; m < l->nmem; m++)
    if (l->mem[m].ncopies == 2 &&
        (st = rig_buffer_wait(l->mem[m].copy[k], RIG_ACCESS_READ_WRITE, err)) != RIG_OK)
      return st;
  /* The ints are stamped only by steps that pass them to a device. */
  if (l->ints_named && (st = rig_buffer_wait(l->ints[k], RIG_ACCESS_READ_WRITE, err)) != RIG_OK)
    return st;
  run r = {p, l, k, waits, nwaits, f->step_points, rig_buffer_host(l->ints[k]), trace, index};
  if (f->nints) memcpy(r.ints, f->ints, f->nints * sizeof *f->ints);
  for (size_t i = 0; i < f->ninputs; i++) l->snap[i] = rig_buffer_retain(f->inputs[i]);
  for (size_t i = 0; i < f->nstep_points; i++) f->step_points[i] = RIG_POINT_REACHED;
  for (size_t d = 0; d < p->ndevices; d++) l->ran[d] = false;
  st = run_steps(&r, 0, l->nsteps, err);
  size_t n = 0;
  for (size_t d = 0; d < p->ndevices; d++)
    if (l->ran[d]) ends[n++] = l->last[d];
  *nends = n;
  for (size_t i = 0; i < f->ninputs; i++) {
    rig_buffer_release(l->snap[i]);
    l->snap[i] = NULL;
  }
  return st;
}

/* Whether s is one of p's prepared submissions. */
static bool prepared_by(const rig_program *p, const rig_submission *s) {
  if (p->kind != PKIND_LOCAL) return false; /* its work runs on another machine */
  const plocal *l = p->local;
  for (size_t i = 0; i < l->nsteps; i++)
    for (int k = 0; k < l->steps[i].nprep; k++)
      if (l->steps[i].prep[k].sub == s) return true;
  return false;
}

/* Whether this thread runs the work of one of p's steps (a pool worker
 * taking a launch's groups, a cpu device's thread), even after the run
 * that submitted it returned. */
static bool works_for(const rig_program *p) {
  for (const rig_working *w = rig_working_now(); w; w = w->outer)
    if (prepared_by(p, w->sub)) return true;
  return false;
}

rig_status rig_program_run(rig_program *p, const rig_frame *f, const rig_point *waits,
                           size_t nwaits, rig_point *ends, size_t *nends, rig_error *err) {
  *nends = 0;
  /* Only this thread can have made itself the runner: a run from inside
   * its own run is refused rather than deadlocked on the lock. A thread
   * that works for the run would deadlock too, its run waiting for the
   * lock while the runner waits for its work. */
  if ((atomic_load_explicit(&p->active, memory_order_relaxed) &&
       pthread_equal(p->runner, pthread_self())) ||
      (rig_working_now() && works_for(p)))
    return rig_error_set(err, RIG_EINVAL, "a run of a program from inside its own run");
  pthread_mutex_lock(&p->run_lock);
  p->runner = pthread_self();
  /* Relaxed: only this thread compares runner with itself. */
  atomic_store_explicit(&p->active, true, memory_order_relaxed);
  rig_status st = p->kind == PKIND_REMOTE
                      ? rig_program_run_remote(p, f, waits, nwaits, ends, nends, err)
                      : run_locked(p, f, waits, nwaits, ends, nends, err);
  atomic_store_explicit(&p->active, false, memory_order_relaxed);
  pthread_mutex_unlock(&p->run_lock);
  return st;
}
