/* A device's executor (executor.h): two threads. The runner takes the
 * device's hand-overs in value order and runs them; work already done (a
 * host run) it reports at once, the rest it passes to the completer, which
 * waits for each hand-over's ends and reports it, in order. With the
 * express path the runner reads its device's ring in this process's own
 * memory, in value order with the frames the control thread queues, and
 * reports by a store into the controller's timeline of the device. */
#include "executor.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/assert.h"
#include "base/clock.h"
#include "base/env.h"
#include "base/sync.h"
#include "express.h"
#include "express_messages.h"
#include "failure.h"
#include "far_copy.h"
#include "job_state.h"
#include "route/route.h"

void rig_handover_free(handover *h) {
  free(h->payload);
  free(h->ends);
  free(h);
}

/* ---- running a hand-over ----------------------------------------------------------------- */

/* Memory `id`, if n bytes at `offset` lie inside it. */
static rig_status memory_range(executor *e, uint64_t id, uint64_t offset, uint64_t n,
                               rig_buffer **b, rig_error *err) {
  *b = rig_holdings_get(e->held, id).buffer;
  if (!*b) return rig_error_set(err, RIG_EREFUSED, "no memory %llu", (unsigned long long)id);
  if (offset > rig_buffer_length(*b) || n > rig_buffer_length(*b) - offset)
    return rig_error_set(err, RIG_EREFUSED, "%llu bytes at %llu past memory %llu",
                         (unsigned long long)n, (unsigned long long)offset, (unsigned long long)id);
  return RIG_OK;
}

static rig_status run_words(executor *e, handover *h, rig_error *err) {
  if (!h->ends) h->ends = calloc(RUN_ENDS, sizeof *h->ends);
  if (!h->ends) return rig_error_set(err, RIG_ENOMEM, "out of memory for a run");
  return rig_program_run_received(h->payload, h->f.h.payload, rig_holdings_program,
                                  rig_holdings_buffer, e->held, NULL, 0, h->ends, &h->nends, err);
}

static rig_status copy_in(executor *e, const handover *h, rig_error *err) {
  /* The core stages host bytes where the host does not address memory. */
  const frame_copy_in *c = &h->f.copy_in;
  rig_buffer *b;
  rig_status st = memory_range(e, c->memory, c->offset, h->f.h.payload, &b, err);
  return st == RIG_OK ? rig_buffer_write(b, c->offset, h->payload, h->f.h.payload, err) : st;
}

rig_status rig_executor_read_out(executor *e, const handover *h, unsigned char **bytes,
                                 rig_error *err) {
  /* The range first: a length past the memory is refused, not tried. */
  const frame_copy_out *c = &h->f.copy_out;
  rig_buffer *b;
  rig_status st = memory_range(e, c->memory, c->offset, c->length, &b, err);
  if (st != RIG_OK) return st;
  if (!(*bytes = malloc(c->length ? c->length : 1)))
    return rig_error_set(err, RIG_ENOMEM, "out of memory for a copy");
  st = rig_buffer_read(b, c->offset, *bytes, c->length, err);
  if (st != RIG_OK) free(*bytes);
  return st;
}

static rig_status copy_between(executor *e, handover *h, rig_error *err) {
  const frame_copy *c = &h->f.copy;
  rig_buffer *src = rig_holdings_get(e->held, c->src).buffer;
  rig_buffer *dst = rig_holdings_get(e->held, c->dst).buffer;
  if (!src || !dst) return rig_error_set(err, RIG_EREFUSED, "no memory for a copy");
  h->ends = calloc(1, sizeof *h->ends);
  if (!h->ends) return rig_error_set(err, RIG_ENOMEM, "out of memory for a copy");
  h->nends = 1;
  return rig_buffer_copy_submit(src, c->src_offset, dst, c->dst_offset, c->length, NULL, 0,
                                &h->ends[0], err);
}

/* A copy from the ring (checked): the copy, then (EX_IN) its bytes. */
static rig_status ring_copy(executor *e, const handover *h, rig_error *err) {
  ex_copy c;
  memcpy(&c, h->payload, sizeof c);
  rig_buffer *b;
  rig_status st = memory_range(e, c.memory, c.offset, c.length, &b, err);
  if (st != RIG_OK) return st;
  if (h->f.h.kind == EX_IN)
    return rig_buffer_write(b, c.offset, h->payload + sizeof c, c.length, err);
  return rig_far_copy(e->job->express, h->f.h.kind == EX_IN_FAR, b, c.offset, c.address, c.length,
                      err);
}

/* A slot of the ring is memory the controller's process writes, and so
 * input as a frame is: its length must fit the slot and its kind, its
 * copy's length the bytes it carries. */
static rig_status check_slot(const handover *h, rig_error *err) {
  uint32_t len = h->f.h.payload, kind = h->f.h.kind;
  unsigned long long v = (unsigned long long)h->f.h.value;
  const char *why = NULL;
  ex_copy c;
  switch (kind) {
    case EX_WORDS:
      break;
    case EX_IN:
      if (len < sizeof c || len > EX_SLOT_BYTES) break;
      memcpy(&c, h->payload, sizeof c);
      if (c.length != len - sizeof c)
        return rig_error_set(err, RIG_EREFUSED,
                             "device %u: hand-over %llu from the ring: a copy of %llu bytes in a "
                             "slot of %u",
                             h->f.h.device, v, (unsigned long long)c.length, len);
      break;
    case EX_IN_FAR:
    case EX_OUT_FAR:
      if (len != sizeof c) why = "not a far copy's";
      break;
    case EX_DONE:
      if (len != 0) why = "a mark carries none";
      break;
    default:
      return rig_error_set(err, RIG_EREFUSED, "device %u: hand-over %llu from the ring: kind %u",
                           h->f.h.device, v, kind);
  }
  if (len > EX_SLOT_BYTES)
    why = "more than a slot holds";
  else if (kind == EX_IN && len < sizeof c)
    why = "too few for a copy";
  if (!why) return RIG_OK;
  return rig_error_set(err, RIG_EREFUSED, "device %u: hand-over %llu from the ring: %u bytes, %s",
                       h->f.h.device, v, len, why);
}

/* A slot of the ring, checked: its kinds are the ring's (express.h). */
static rig_status run_slot(executor *e, handover *h, rig_error *err) {
  rig_status st = check_slot(h, err);
  if (st != RIG_OK) return st;
  switch (h->f.h.kind) {
    case EX_WORDS:
      return run_words(e, h, err);
    case EX_DONE:
      return RIG_OK; /* the controller copied */
    default:         /* EX_IN, EX_IN_FAR, EX_OUT_FAR (check_slot) */
      return ring_copy(e, h, err);
  }
}

/* A frame of the control protocol: its kinds are the protocol's. */
static rig_status run_frame(executor *e, handover *h, rig_error *err) {
  switch (h->f.h.kind) {
    case F_WORDS:
      return run_words(e, h, err);
    case F_COPY_IN:
      return copy_in(e, h, err);
    case F_COPY_OUT:
      return e->route->copy_out(e, h, err);
    case F_COPY:
      return copy_between(e, h, err);
  }
  return rig_error_set(err, RIG_EREFUSED, "a hand-over of kind %u", h->f.h.kind);
}

static rig_status run_handover(executor *e, handover *h, rig_error *err) {
  return h->from_ring ? run_slot(e, h, err) : run_frame(e, h, err);
}

static bool all_reached(const handover *h) {
  for (size_t i = 0; i < h->nends; i++)
    if (!rig_point_reached(h->ends[i])) return false;
  return true;
}

/* Reports the work of h done (its ends reached), as the route does. */
static void report(executor *e, const handover *h) {
  /* Its ends are reached: a trace stamps its steps so before the report
   * leaves, never after the controller has it. */
  rig_trace_reached(h->ends, h->nends);
  uint64_t v = h->f.h.value;
  /* Reports go in value order (the runner takes them so, the completer
   * keeps it). */
  rig_assert(v > e->reported);
  e->reported = v;
  e->route->report(e, h, v);
}

/* A ring's hand-over handed to the completer: the copy keeps its ends. */
static handover *keep_ring_handover(const handover *h) {
  handover *c = calloc(1, sizeof *c);
  if (c) c->ends = calloc(h->nends ? h->nends : 1, sizeof *c->ends);
  if (!c || !c->ends) {
    free(c);
    return NULL;
  }
  c->f = h->f;
  c->f.h.payload = 0;
  memcpy(c->ends, h->ends, h->nends * sizeof *c->ends);
  c->nends = h->nends;
  return c;
}

/* ---- taking hand-overs in value order ------------------------------------------------------ */

/* Whether the queue's head is the next value. One past it has waited a
 * second for its predecessor, which never came by the ring: the job fails
 * (a broken protocol), and it is taken all the same. Under the queue's
 * lock. */
static bool head_is_next(const queue_link *head, void *ctx) {
  executor *e = ctx;
  uint64_t v = ((const handover *)head)->f.h.value;
  if (v > e->expect) {
    double now = rig_now_s();
    if (!e->ahead_since) e->ahead_since = now;
    if (now - e->ahead_since <= e->route->late_s()) return false;
    e->missing = e->expect;
  }
  e->popped++;
  e->ahead_since = 0;
  if (v >= e->expect) e->expect = v + 1;
  return true;
}

/* The next value's hand-over if it is there, by frame or in the ring. */
handover *rig_executor_peek(executor *e) {
  if (atomic_load_explicit(&e->pushed, memory_order_acquire) != e->popped) {
    handover *h = (handover *)rig_queue_take_if(&e->work, head_is_next, e);
    if (e->missing) {
      rig_error err;
      rig_error_set(&err, RIG_EJOB, "device %u: hand-over %llu never came", e->device,
                    (unsigned long long)e->missing);
      rig_job_fail_here(e->job, &err);
      e->missing = 0;
    }
    if (h) return h;
  }
  const ex_slot *s = rig_express_peek(e->ring, e->expect);
  if (!s) return NULL;
  handover *h = &e->from_ring;
  /* The ring gives the next value only (rig_express_peek). */
  rig_assert(atomic_load_explicit(&s->value, memory_order_relaxed) == e->expect);
  h->f =
      (frame){.h = {.kind = s->kind, .device = e->device, .value = e->expect, .payload = s->len}};
  h->payload = (unsigned char *)s->bytes;
  h->ends = e->ring_ends;
  h->nends = 0;
  h->from_ring = true;
  e->expect++;
  return h;
}

/* A lost wake costs the 100 ms. */
bool rig_executor_sleep_on_bell(executor *e, uint32_t bell, handover **h) {
  atomic_store(&e->ring->sleeping, 1);
  atomic_thread_fence(memory_order_seq_cst);
  if ((*h = rig_executor_peek(e)) || atomic_load(&e->stopping)) {
    atomic_store(&e->ring->sleeping, 0);
    return true;
  }
  rig_futex_wait_shared(&e->ring->bell, bell, 100000000L);
  atomic_store(&e->ring->sleeping, 0);
  return atomic_load(&e->ring->bell) != bell;
}

/* ---- the threads ---------------------------------------------------------------------------- */

static void *runner_main(void *arg) {
  executor *e = arg;
  handover *h;
  while ((h = e->route->next(e))) {
    rig_error err;
    if (!atomic_load(&e->job->failed) && run_handover(e, h, &err) != RIG_OK)
      rig_job_fail_here(e->job, &err);
    if (!h->from_ring) rig_queue_finished(&e->work);
    /* Work already done (a host run) is reported now, when nothing before
     * it waits in the completer: a hand-off less. */
    if (!atomic_load(&e->job->failed) && all_reached(h) && rig_queue_idle(&e->done)) {
      report(e, h);
      if (!h->from_ring) rig_handover_free(h);
      continue;
    }
    if (h->from_ring && !(h = keep_ring_handover(h))) {
      rig_job_fail_with(e->job, true, "out of memory for a run");
      continue;
    }
    rig_queue_push(&e->done, &h->link); /* in order, also when it failed */
  }
  return NULL;
}

static void *completer_main(void *arg) {
  executor *e = arg;
  handover *h;
  while ((h = (handover *)rig_queue_take(&e->done))) {
    rig_error err;
    bool ok = !atomic_load(&e->job->failed);
    /* A device lost fails the job at once, whatever the others still run. */
    if (ok && rig_points_wait(h->ends, h->nends, &err) != RIG_OK) {
      rig_job_fail_here(e->job, &err);
      ok = false;
    }
    if (ok) report(e, h);
    rig_handover_free(h);
    rig_queue_finished(&e->done);
  }
  return NULL;
}

rig_status rig_executor_start(rig_job *job, holdings *table, uint32_t device, executor **out,
                              rig_error *err) {
  executor *e = calloc(1, sizeof *e);
  if (!e) return rig_error_set(err, RIG_ENOMEM, "machine %d: out of memory", job->rank);
  e->job = job;
  e->held = table;
  e->device = device;
  e->poll = rig_env_get()->job_poll;
  /* The route, chosen once (route/route.h): by frames the work queue
   * alone; else the device's ring too, and (by memory) the controller's
   * timeline. */
  e->route = job->express->route;
  rig_status st = e->route->executor_start(e, err);
  if (st != RIG_OK) {
    free(e);
    return st;
  }
  e->expect = 1;
  rig_queue_init(&e->work);
  rig_queue_init(&e->done);
  bool runner = pthread_create(&e->runner, NULL, runner_main, e) == 0;
  if (runner && pthread_create(&e->completer, NULL, completer_main, e) == 0) {
    *out = e;
    return RIG_OK;
  }
  if (runner) {
    /* The runner is idle: nothing was queued yet. */
    rig_queue_stop(&e->work);
    atomic_store(&e->stopping, true);
    e->route->wake(e);
    pthread_join(e->runner, NULL);
  }
  rig_queue_destroy(&e->work);
  rig_queue_destroy(&e->done);
  free(e);
  return rig_error_set(err, RIG_ESYS, "machine %d: cannot start a device's executor", job->rank);
}

void rig_executor_push(executor *e, handover *h) {
  rig_queue_push(&e->work, &h->link);
  e->route->queued(e);
}

void rig_executor_drain(executor *e) {
  rig_queue_drain(&e->work);
  rig_queue_drain(&e->done);
}

void rig_executor_stop(executor *e) {
  rig_executor_stop_within(e, -1);
}

bool rig_executor_stop_within(executor *e, double grace) {
  rig_queue_stop(&e->work);
  atomic_store(&e->stopping, true);
  e->route->wake(e);
  rig_queue_stop(&e->done);
  if (grace < 0) {
    pthread_join(e->runner, NULL);
    pthread_join(e->completer, NULL);
  } else {
    bool runner = rig_join_within(e->runner, grace);
    bool completer = rig_join_within(e->completer, runner ? grace : 0);
    if (!runner || !completer) return false;
  }
  rig_queue_destroy(&e->work);
  rig_queue_destroy(&e->done);
  free(e);
  return true;
}
