/* Programs of another machine, on the controller (docs/program.md, last
 * section): load checks the description here, sends it to the machine's
 * host as the binary of an image and resolves its function "run"; each run
 * is then one submission on that host of the run words, whose point is
 * reached once the run's work there is done. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "program_internal.h"

/* A launch's step and threads; its function's most is the head's threads. */
typedef struct rlaunch {
  int64_t step;
  const rig_desc_value *threads[3];
} rlaunch;

struct premote {
  rig_device *host;
  rig_image *image;
  uint64_t id;
  rig_buffer *words, *words_on;
  size_t nwords;
  rig_submission *sub;
  rig_buffer **slots, **slot_of; /* per input: its borrow on the host, and of what */
  rig_remote_input *in;
  rlaunch *launches;
  bool ints_written; /* a step writes the ints, any word */
  bool *trip_word;   /* per int: a loop stores its trip there */
  uint64_t runs;     /* handed over, for the trace */
};

/* What the threads check needs: the launches' threads, and which ints a
 * step may change. */
static void scan(premote *r, const rig_desc_steps *steps, int64_t *number, size_t *nl) {
  for (size_t i = 0; i < steps->n; i++) {
    const rig_desc_step *s = &steps->items[i];
    int64_t me = (*number)++;
    if (s->tag == RIG_STEP_LOOP) {
      if (s->u.loop.has_trip) r->trip_word[s->u.loop.trip] = true;
      scan(r, &s->u.loop.body, number, nl);
    } else if (s->tag == RIG_STEP_MOVE) {
      if (s->u.move.dst.tag == RIG_SLOT_INTS) r->ints_written = true;
    } else {
      const rig_desc_submit *sub = &s->u.submit;
      for (size_t j = 0; j < sub->nparts; j++) {
        const rig_desc_part *part = &sub->parts[j];
        size_t nrefs;
        const rig_desc_ref *refs = rig_program_part_refs(part, &nrefs);
        for (size_t k = 0; k < nrefs; k++)
          if (sub->slots[refs[k].slot].tag == RIG_SLOT_INTS && refs[k].use != RIG_USE_READ)
            r->ints_written = true;
        if (part->tag == RIG_PART_COPY && sub->slots[part->u.copy.dst].tag == RIG_SLOT_INTS)
          r->ints_written = true;
        if (part->tag == RIG_PART_LAUNCH) {
          rlaunch *l = &r->launches[(*nl)++];
          l->step = me;
          for (int t = 0; t < 3; t++) l->threads[t] = &part->u.launch.threads[t];
        }
      }
    }
  }
}

static rig_status entry(premote *r, const char *name, rig_entry *e, rig_error *err) {
  return rig_image_entry(r->image, name, strlen(name), e, err);
}

rig_status rig_program_load_remote(rig_program *p, rig_error *err) {
  const rig_desc *d = p->desc;
  premote *r = calloc(1, sizeof *r);
  if (!r) return rig_error_set(err, RIG_ENOMEM, "out of memory loading a program");
  p->remote = r;
  int machine = rig_device_facts_of(p->devices[0])->machine;
  r->host = rig_machine_host(machine);
  if (!r->host) return rig_error_set(err, RIG_EREFUSED, "machine %d has no host here", machine);
  int64_t *ids = calloc(p->ndevices ? p->ndevices : 1, sizeof *ids);
  if (!ids) return rig_error_set(err, RIG_ENOMEM, "out of memory loading a program");
  for (size_t i = 0; i < p->ndevices; i++)
    ids[i] = rig_device_facts_of(p->devices[i])->machine_device;
  uint8_t *bin;
  size_t len;
  rig_status st = rig_program_remote_binary(d, ids, p->ndevices, &bin, &len, err);
  free(ids);
  if (st != RIG_OK) return st;
  st = rig_image_load(r->host, bin, len, &r->image, err);
  free(bin);
  if (st != RIG_OK) return st;
  rig_entry e;
  if ((st = entry(r, "run", &e, err)) != RIG_OK) return st;
  r->id = e.value;

  size_t ni = d->ninputs;
  r->launches = calloc(p->nlaunches ? p->nlaunches : 1, sizeof *r->launches);
  r->trip_word = calloc(d->ints ? (size_t)d->ints : 1, sizeof *r->trip_word);
  r->slots = calloc(ni ? ni : 1, sizeof *r->slots);
  r->slot_of = calloc(ni ? ni : 1, sizeof *r->slot_of);
  r->in = calloc(ni ? ni : 1, sizeof *r->in);
  if (!r->launches || !r->trip_word || !r->slots || !r->slot_of || !r->in)
    return rig_error_set(err, RIG_ENOMEM, "out of memory loading a program");
  int64_t number = 0;
  size_t nl = 0;
  scan(r, &d->steps, &number, &nl);
  for (size_t i = 0; i < nl; i++) {
    char name[32];
    snprintf(name, sizeof name, "launch:%zu", i);
    if ((st = entry(r, name, &e, err)) != RIG_OK) return st;
    p->threads[i] = e.max_threads;
  }

  r->nwords = rig_program_run_words_count(ni, (size_t)d->ints);
  st = rig_buffer_create(rig_host(), RIG_KIND_PINNED, r->nwords * 8, &r->words, err);
  if (st == RIG_OK) st = rig_buffer_borrow(r->host, r->words, &r->words_on, err);
  if (st != RIG_OK) return st;
  rig_ref *uses = calloc(ni ? ni : 1, sizeof *uses);
  if (!uses) return rig_error_set(err, RIG_ENOMEM, "out of memory loading a program");
  for (size_t i = 0; i < ni; i++)
    uses[i] = (rig_ref){(uint32_t)i, 0, p->input_written[i] ? RIG_USE_WRITE : RIG_USE_READ};
  rig_part part = {.kind = RIG_WORK_WORDS};
  part.u.words.side = (rig_side){-1, 0};
  part.u.words.length = r->nwords * 8;
  part.u.words.uses = uses;
  part.u.words.nuses = ni;
  rig_fixed fixed = {r->words_on, RIG_ACCESS_READ};
  st = rig_submission_make(r->host, &part, 1, ni, &fixed, 1, &r->sub, err);
  free(uses);
  return st;
}

void rig_program_free_remote(premote *r, size_t ninputs) {
  if (!r) return;
  for (size_t i = 0; r->slots && r->slot_of && i < ninputs; i++) {
    rig_buffer_release(r->slots[i]);
    rig_buffer_release(r->slot_of[i]);
  }
  rig_submission_release(r->sub);
  rig_buffer_release(r->words_on);
  rig_buffer_release(r->words);
  rig_image_release(r->image);
  free(r->launches);
  free(r->trip_word);
  free(r->in);
  free(r->slots);
  free(r->slot_of);
  free(r);
}

/* The launches whose threads are known here: each size a constant or a
 * frame int no step may change, one at least such an int. */
static rig_status check_threads(rig_program *p, const rig_frame *f, rig_error *err) {
  premote *r = p->remote;
  for (size_t i = 0; i < p->nlaunches; i++) {
    const rlaunch *l = &r->launches[i];
    uint32_t max = p->threads[i];
    if (!max) continue;
    bool known = true, any_int = false;
    uint64_t t[3];
    for (int k = 0; k < 3 && known; k++) {
      const rig_desc_value *v = l->threads[k];
      if (v->tag == RIG_VALUE_FIXED) {
        t[k] = (uint64_t)v->u.fixed;
      } else if (v->tag == RIG_VALUE_INT && (size_t)v->u.int_index < f->nints && !r->ints_written &&
                 !r->trip_word[v->u.int_index]) {
        t[k] = (uint64_t)f->ints[v->u.int_index];
        any_int = true;
      } else {
        known = false;
      }
    }
    if (!known || !any_int) continue;
    /* Sizes past 32 bits are the agent's to refuse; here only the exact
     * product. A zero size makes it 0 (the agent refuses the zero); else
     * it only grows, so it stops once past max, where no product wraps. */
    bool over = false;
    if (t[0] && t[1] && t[2])
      for (uint64_t n = 1, k = 0; k < 3 && !over; n *= t[k], k++)
        over = t[k] > max || n * t[k] > max;
    if (over)
      return rig_error_set(err, RIG_EINVAL,
                           "step %lld: a launch of (%llu, %llu, %llu) threads per group, more "
                           "than its function's %u",
                           (long long)l->step, (unsigned long long)t[0], (unsigned long long)t[1],
                           (unsigned long long)t[2], max);
  }
  return RIG_OK;
}

rig_status rig_program_run_remote(rig_program *p, const rig_frame *f, const rig_point *waits,
                                  size_t nwaits, rig_point *ends, size_t *nends, rig_error *err) {
  premote *r = p->remote;
  const rig_desc *d = p->desc;
  rig_status st = rig_program_check_frame(p, f, err);
  if (st != RIG_OK) return st;
  for (size_t i = 0; i < d->ninputs; i++) {
    rig_buffer *in = f->inputs[i];
    if (r->slot_of[i] != in) {
      rig_buffer *b;
      if (rig_buffer_borrow(r->host, in, &b, err) != RIG_OK)
        return rig_error_set(err, RIG_EINVAL, "input %zu: %s cannot borrow it", i,
                             rig_device_name(r->host));
      rig_buffer_release(r->slots[i]);
      rig_buffer_release(r->slot_of[i]);
      r->slots[i] = b;
      r->slot_of[i] = rig_buffer_retain(in);
    }
    r->in[i] =
        (rig_remote_input){rig_buffer_handle(in), rig_buffer_offset(in), rig_buffer_length(in)};
  }
  if ((st = check_threads(p, f, err)) != RIG_OK) return st;
  /* The hand-over carries the words' bytes: the buffer is free again once
   * rig_submit returns, and runs take turns. */
  rig_program_run_words(r->id, r->in, d->ninputs, f->ints, f->nints, (size_t)d->ints,
                        rig_buffer_host(r->words));
  rig_point pt;
  rig_trace *trace = atomic_load_explicit(&rig_program_tracing, memory_order_relaxed);
  uint64_t begin = trace ? rig_trace_now() : 0;
  st = rig_submit(r->sub, NULL, r->slots, waits, nwaits, &pt, err);
  if (st != RIG_OK) return st;
  if (trace) rig_program_trace_step(trace, RIG_TRACE_HANDOVER, r->host, -1, r->runs, begin, pt);
  r->runs++;
  for (size_t i = 0; i < f->nstep_points; i++) f->step_points[i] = pt;
  ends[0] = pt;
  *nends = 1;
  return RIG_OK;
}
